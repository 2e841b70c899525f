//! The dispatch section: the host-to-device launch chain per device.

use super::{Section, dev, pct, sec};
use crate::render::human_ns;
use crate::report::Report;

/// Per device: the launch chain's figures, the slowest launches into an empty queue, and the
/// host API calls by total time.
pub(super) fn dispatch(r: &Report, out: &mut Vec<Section>) {
    use crate::contract::Link;
    for d in &r.analyses.dispatch {
        let mut s = sec(
            format!("Dispatch: {}", dev(&d.device)),
            vec![
                "launch call",
                "op above it",
                "first task",
                "stream",
                "latency",
                "tasks",
            ],
        );
        for x in &d.slowest_empty_queue {
            s.rows.push(vec![
                x.call.clone(),
                x.op.clone().unwrap_or_else(|| "-".into()),
                x.task.clone(),
                x.stream.to_string(),
                human_ns(x.latency_ns),
                x.tasks.to_string(),
            ]);
        }
        if d.linked_tasks == 0 {
            s.notes.push(format!(
                "no launch links: none of the {} device tasks carries a connection id or correlation that a host call shares",
                d.tasks
            ));
            out.push(s);
            continue;
        }
        let link = match d.link {
            Link::ConnectionId => "CANN call by connection_id",
            Link::Correlation => "runtime call by correlation",
            Link::Flow => {
                "framework op by torch_to_npu flow (no CANN call of the file shares a task's connection id; latency from the op's start, host-bound gaps from the HostToDevice flow's launch time when there is one)"
            }
        };
        let l = &d.latency;
        s.notes.push(format!(
            "{} of {} tasks linked to their launcher ({link}); {} launch calls: latency p50 {}, p90 {}, p99 {}, max {}{}",
            d.linked_tasks,
            d.tasks,
            l.count,
            human_ns(l.p50_ns as i64),
            human_ns(l.p90_ns as i64),
            human_ns(l.p99_ns as i64),
            human_ns(l.max_ns),
            if l.negative > 0 {
                format!(" ({} calls start after their first task: clock offset)", l.negative)
            } else {
                String::new()
            }
        ));
        let q = &d.queue_depth;
        s.notes.push(format!(
            "queue depth at launch: p50 {:.0}, p90 {:.0}, max {} tasks; {} calls found the queue empty (listed above: the slowest of them)",
            q.p50, q.p90, q.max, q.empty_queue
        ));
        let h = &d.host_bound;
        s.notes.push(format!(
            "host-bound idle: {} of {} gaps, {} = {} of idle {}, began while the host had not yet launched the next task",
            h.host_bound_gaps,
            h.gaps,
            human_ns(h.host_bound_ns),
            pct(h.pct_of_idle),
            human_ns(h.idle_ns)
        ));
        out.push(s);
        let mut a = sec(
            format!("Host API calls: {}", dev(&d.device)),
            vec![
                "API",
                "calls",
                "total",
                "mean",
                "max",
                "share of host API time",
            ],
        );
        for x in &d.host_apis {
            a.rows.push(vec![
                x.name.clone(),
                x.count.to_string(),
                human_ns(x.sum_ns),
                human_ns(x.mean_ns as i64),
                human_ns(x.max_ns),
                pct(x.pct_of_total),
            ]);
        }
        let (names, calls, ns) = d.host_apis_other;
        if names > 0 {
            a.rows.push(vec![
                format!("other ({names} APIs)"),
                calls.to_string(),
                human_ns(ns),
                "-".into(),
                "-".into(),
                pct(crate::contract::percent_of(ns, d.host_api_total_ns)),
            ]);
        }
        if !a.rows.is_empty() {
            a.notes.push(format!(
                "denominator: all host API calls of the file, {}",
                human_ns(d.host_api_total_ns)
            ));
            out.push(a);
        }
    }
}
