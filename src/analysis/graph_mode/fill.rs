//! The per-file numbers of graph mode: counts and the per-replay rows with their
//! distributions, the op that issued each replay, replays and device time per step, and the
//! caveats (docs/analyses/graph_mode.md).

use super::calls::enclosing_ops;
use super::replays::Building;
use super::{GraphFile, GraphStep, NameCount, Replay};
use crate::analysis::cross_rank::Windows;
use crate::analysis::devices::launches::{NO_LAUNCH, launches};
use crate::analysis::devices::{Device, iv};
use crate::analysis::dispatch::flow_ops_above;
use crate::analysis::gallop::Gallop;
use crate::analysis::intervals::union_total_by_start;
use crate::analysis::stats::{dur_stats, wide_sum};
use crate::model::Tables;
use crate::units::sum_ns;
use std::collections::BTreeMap;

/// Counts per name, top N by count then name, and `(other)` for the rest.
pub fn top_counts<'a>(names: impl Iterator<Item = &'a str>, top_n: usize) -> Vec<NameCount> {
    let mut m: BTreeMap<&str, u64> = BTreeMap::new();
    for n in names {
        *m.entry(if n.is_empty() { "(no op found)" } else { n })
            .or_default() += 1;
    }
    let mut v: Vec<NameCount> = m
        .into_iter()
        .map(|(name, count)| NameCount {
            name: name.to_string(),
            count,
        })
        .collect();
    v.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    if v.len() > top_n {
        let rest: u64 = v.split_off(top_n).iter().map(|x| x.count).sum();
        v.push(NameCount {
            name: "(other)".into(),
            count: rest,
        });
    }
    v
}

/// Counts, device time, per-replay rows (with the index of each replay's sequence in
/// `ops_in_graphs.graphs`) and distributions; gives each replay's device time (ns, the sum of
/// its events' durations) for [`fill_steps`].
pub fn fill_replays(
    t: &Tables,
    g: &mut GraphFile,
    replays: &[Building],
    seq_of: &[usize],
    w: &Windows,
    top_n: usize,
    kineto: bool,
) -> Vec<i64> {
    g.replays = replays.len() as u64;
    let paired = replays.iter().filter(|r| r.launch != NO_LAUNCH).count() as u64;
    g.replays_without_launch = g.replays - paired;
    g.launches_without_device_work = g.graph_launches.saturating_sub(paired);
    let mut graphs: Vec<i64> = replays
        .iter()
        .map(|r| r.graph)
        .filter(|&g| g >= 0)
        .collect();
    graphs.sort_unstable();
    graphs.dedup();
    g.graphs = graphs.len() as u64;
    let issued = issuing_ops(t, replays, kineto);
    g.issuing_ops = top_counts(issued.iter().map(|s| s.as_str()), top_n);
    let mut rows: Vec<Replay> = Vec::with_capacity(replays.len());
    let mut device_ns: Vec<i64> = Vec::with_capacity(replays.len());
    for ((r, by), &seq) in replays.iter().zip(issued).zip(seq_of) {
        let (start, end, busy) = span_and_busy(t, &r.events);
        g.replay_device_events += r.events.len() as u64;
        let ns = sum_ns(r.events.iter().map(|&i| t.events.dur_ns.at(i as usize)));
        device_ns.push(ns);
        g.replay_device_ns = g.replay_device_ns.saturating_add(ns);
        let launch_ns = (r.launch != NO_LAUNCH).then(|| t.events.ts_ns[r.launch as usize]);
        rows.push(Replay {
            launch_ns: launch_ns.unwrap_or(-1),
            graph: r.graph,
            device_events: r.events.len() as u64,
            start_ns: start,
            end_ns: end,
            busy_ns: busy,
            gaps_inside_ns: end - start - busy,
            gap_to_next_ns: -1,
            step: launch_ns.and_then(|ts| w.step_at(ts)).unwrap_or(-1),
            issued_by: by,
            sequence: seq as i64,
        });
    }
    for k in 1..rows.len() {
        rows[k - 1].gap_to_next_ns = (rows[k].start_ns - rows[k - 1].end_ns).max(0);
    }
    let spans: Vec<i64> = rows.iter().map(|r| r.end_ns - r.start_ns).collect();
    let denom = wide_sum(spans.iter().copied());
    let mut stats = Vec::new();
    if !rows.is_empty() {
        stats.push(dur_stats("span".into(), spans, denom));
        stats.push(dur_stats(
            "busy".into(),
            rows.iter().map(|r| r.busy_ns).collect(),
            denom,
        ));
        let inside = rows.iter().map(|r| r.gaps_inside_ns).collect();
        stats.push(dur_stats("gaps_inside".into(), inside, denom));
    }
    if rows.len() > 1 {
        let next = rows[..rows.len() - 1]
            .iter()
            .map(|r| r.gap_to_next_ns)
            .collect();
        stats.push(dur_stats("gap_to_next".into(), next, denom));
    }
    g.replay_stats = stats;
    g.per_replay = rows;
    device_ns
}

/// A replay's (first event's start, latest end, busy time: the length of its events' union; they
/// come by start).
fn span_and_busy(t: &Tables, events: &[u32]) -> (i64, i64, i64) {
    let ivs = events.iter().map(|&i| iv(t, i));
    let start = iv(t, events[0]).0;
    let end = ivs.clone().map(|x| x.1).max().unwrap_or(start);
    (start, end, union_total_by_start(ivs))
}

/// The host op that issued each replay: the innermost op enclosing its launch on the same OS
/// thread; on Ascend, when none does, the op a flow names (`dispatch::flow_ops_above`).
pub fn issuing_ops(t: &Tables, replays: &[Building], kineto: bool) -> Vec<String> {
    let with: Vec<(usize, u32)> = replays
        .iter()
        .enumerate()
        .filter(|(_, r)| r.launch != NO_LAUNCH)
        .map(|(k, r)| (k, r.launch))
        .collect();
    let mut out = vec![String::new(); replays.len()];
    let calls: Vec<u32> = with.iter().map(|x| x.1).collect();
    for ((k, _), name) in with.iter().zip(enclosing_ops(t, &calls)) {
        out[*k] = name;
    }
    if !kineto {
        let missing: Vec<(usize, u32)> = with
            .iter()
            .copied()
            .filter(|x| out[x.0].is_empty())
            .collect();
        let pairs: Vec<(u32, u32)> = missing
            .iter()
            .map(|&(k, l)| (replays[k].events[0], l))
            .collect();
        for ((k, l), op) in missing.iter().zip(flow_ops_above(t, &pairs)) {
            if let Some(o) = op.filter(|o| o != l) {
                out[*k] = t.str(t.events.name[o as usize]).to_string();
            }
        }
    }
    out
}

/// Per step: replays by their launch's step (each replay's span from its row in
/// `g.per_replay`, its device time from `device_ns`, both from [`fill_replays`]); eager device
/// work by its own launch's step (its start when no launch is linked).
pub fn fill_steps(
    t: &Tables,
    g: &mut GraphFile,
    replays: &[Building],
    device_ns: &[i64],
    devs: &[&Device],
    w: &Windows,
) {
    #[derive(Default)]
    struct Acc {
        replays: u64,
        graph: i64,
        eager: i64,
        last_end: Option<i64>,
        gaps: i64,
        max_gap: i64,
    }
    let mut in_replay = vec![false; t.events.len()];
    let mut acc: BTreeMap<i64, Acc> = BTreeMap::new();
    for ((r, row), &ns) in replays.iter().zip(&g.per_replay).zip(device_ns) {
        for &i in &r.events {
            in_replay[i as usize] = true;
        }
        let Some(step) = (r.launch != NO_LAUNCH)
            .then(|| w.step_at(t.events.ts_ns[r.launch as usize]))
            .flatten()
        else {
            continue;
        };
        let a = acc.entry(step).or_default();
        a.replays += 1;
        a.graph = a.graph.saturating_add(ns);
        if let Some(e) = a.last_end {
            let gap = (row.start_ns - e).max(0);
            a.gaps = a.gaps.saturating_add(gap);
            a.max_gap = a.max_gap.max(gap);
        }
        a.last_end = a.last_end.max(Some(row.end_ns));
    }
    let mut eager_total = 0i64;
    for d in devs {
        let l = launches(t, d);
        let mut cursor = Gallop::default();
        for (k, &i) in d.events.iter().enumerate() {
            if in_replay[i as usize] {
                continue;
            }
            let dur = t.events.dur_ns.at(i as usize);
            eager_total = i64::saturating_add(eager_total, dur);
            let at = match l.launch[k] {
                NO_LAUNCH => t.events.ts_ns[i as usize],
                c => t.events.ts_ns[c as usize],
            };
            if let Some(step) = w.step_near(&mut cursor, at)
                && let Some(a) = acc.get_mut(&step)
            {
                a.eager = a.eager.saturating_add(dur);
            }
        }
    }
    g.eager_device_ns = eager_total;
    let all = g.replay_device_ns.saturating_add(eager_total);
    g.replay_pct_of_device_ns = pct(g.replay_device_ns, all);
    g.steps = acc
        .into_iter()
        .map(|(step, a)| GraphStep {
            step,
            replays: a.replays,
            graph_device_ns: a.graph,
            eager_device_ns: a.eager,
            graph_pct: pct(a.graph, a.graph + a.eager),
            between_replay_gap_ns: a.gaps,
            max_between_replay_gap_ns: a.max_gap,
        })
        .collect();
}

pub fn pct(a: i64, b: i64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 * 100.0 / b as f64
    }
}

/// What the numbers cannot say.
pub fn caveats(g: &GraphFile, replays: &[Building], attribution: &str) -> Vec<String> {
    let mut v = Vec::new();
    if attribution == "model_id" && !replays.is_empty() {
        v.push("Ascend writes no replay record: a graph's tasks are cut into replays of the graph's task count and paired with the aclmdlRIExecuteAsync calls in issue order".to_string());
        // (tasks per full replay, replays with fewer) per graph.
        let mut per: BTreeMap<i64, (usize, usize)> = BTreeMap::new();
        for r in replays {
            let e = per.entry(r.graph).or_default();
            e.0 = e.0.max(r.events.len());
        }
        for r in replays {
            let e = per.get_mut(&r.graph).expect("every graph counted");
            e.1 += (r.events.len() < e.0) as usize;
        }
        for (graph, (full, short)) in per.into_iter().filter(|x| x.1.1 > 0) {
            v.push(format!(
                "graph {graph}: {short} replay(s) hold fewer than its {full} tasks (a capture edge cut them)"
            ));
        }
    }
    if attribution == "connection_id" {
        v.push("no task carries a graph's Model Id: a replay is the tasks that carry its aclmdlRIExecuteAsync call's connection id".to_string());
    }
    if g.launches_without_device_work > 0 {
        v.push(format!(
            "{} of {} graph launches have no device work in the file (issued as the device capture ended, or not linked)",
            g.launches_without_device_work, g.graph_launches
        ));
    }
    if g.replays_without_launch > 0 {
        v.push(format!(
            "{} replays have no launch in the file (issued before the host capture began)",
            g.replays_without_launch
        ));
    }
    if g.captured_launches > 0 && g.replays == 0 {
        v.push(format!(
            "a capture trace: {} launches were recorded into graphs, none executed here; device time comes from a replay trace",
            g.captured_launches
        ));
    }
    if g.replays > 0 && g.ops_in_graphs.source == "kernel_name" {
        v.push("no capture of the replayed graphs in this file: time inside graphs is by kernel name; profile the capture too (vLLM capture_torch_profiler, SGLang --enable-profile-cuda-graph) to see the ops".to_string());
    }
    v
}
