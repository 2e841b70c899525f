//! Bounded reports: the lists that grow with the capture's length (one entry per step, replay or
//! wait) are cut to their first [`DEFAULT_STEP_CAP`] entries unless `--detail full` is asked for,
//! and the lists that grow with the rank count (one entry per device or file) to the
//! [`DEFAULT_DEVICE_CAP`] devices that matter for each list (the ranks a verdict names, the
//! reference rank, then the largest and smallest by the list's own metric; never the first files
//! by name), with the per-rank distributions kept whole; tables and Markdown list fewer
//! ([`PEOPLE_CAPS`]).

//! Every total, share, distribution and verdict is computed before the cut, from every entry, so
//! only the listing is shorter; the report's `detail_capped` names each list cut, with how many
//! entries it had.

use super::Report;
use crate::registry::Analyses;
use serde::Serialize;
use std::collections::BTreeSet;

/// Entries kept per step-length list by default.
pub const DEFAULT_STEP_CAP: usize = 100;

crate::model::closed_set::closed_set! {
    /// How much per-step detail a report lists.
    #[derive(Default)]
    pub enum Detail {
        /// The first [`DEFAULT_STEP_CAP`] entries of each step-length list.
        #[default]
        Capped = "capped",
        /// Every entry.
        Full = "full",
    }
}

/// One list that was cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CappedList {
    /// Where the list is in the JSON report (`analyses.step_sync[0].steps`).
    pub list: String,
    pub listed: usize,
    pub total: usize,
}

/// Cuts the step-length lists of `a` to `cap` entries; returns the lists cut.
pub fn cap(a: &mut Analyses, cap: usize) -> Vec<CappedList> {
    let mut cut = Vec::new();
    let mut keep = |len: usize, path: &dyn Fn() -> String| -> usize {
        if len > cap {
            cut.push(CappedList {
                list: path(),
                listed: cap,
                total: len,
            });
        }
        len.min(cap)
    };
    for (i, b) in a.bubbles.iter_mut().enumerate() {
        let n = keep(b.steps.len(), &|| format!("analyses.bubbles[{i}].steps"));
        b.steps.truncate(n);
    }
    for (i, s) in a.step_sync.iter_mut().enumerate() {
        let n = keep(s.steps.len(), &|| format!("analyses.step_sync[{i}].steps"));
        s.steps.truncate(n);
    }
    for (i, m) in a.mtp.iter_mut().enumerate() {
        let n = keep(m.mem_wait_ns.len(), &|| {
            format!("analyses.mtp[{i}].mem_wait_ns")
        });
        m.mem_wait_ns.truncate(n);
        let n = keep(m.head_burst_ns.len(), &|| {
            format!("analyses.mtp[{i}].head_burst_ns")
        });
        m.head_burst_ns.truncate(n);
    }
    for (i, d) in a.communication_ops.devices.iter_mut().enumerate() {
        let n = keep(d.steps.len(), &|| {
            format!("analyses.communication_ops.devices[{i}].steps")
        });
        d.steps.truncate(n);
    }
    for (i, g) in a.graph_mode.files.iter_mut().enumerate() {
        let n = keep(g.per_replay.len(), &|| {
            format!("analyses.graph_mode.files[{i}].per_replay")
        });
        g.per_replay.truncate(n);
        let n = keep(g.steps.len(), &|| {
            format!("analyses.graph_mode.files[{i}].steps")
        });
        g.steps.truncate(n);
        for (k, q) in g.ops_in_graphs.graphs.iter_mut().enumerate() {
            let n = keep(q.ops.len(), &|| {
                format!("analyses.graph_mode.files[{i}].ops_in_graphs.graphs[{k}].ops")
            });
            q.ops.truncate(n);
        }
    }
    for (i, e) in a.efficiency.iter_mut().enumerate() {
        let n = keep(e.steps.len(), &|| format!("analyses.efficiency[{i}].steps"));
        e.steps.truncate(n);
    }
    if let Some(audit) = a.batch_audit.as_mut() {
        for (i, r) in audit.ranks.iter_mut().enumerate() {
            let n = keep(r.kv.len(), &|| {
                format!("analyses.batch_audit.ranks[{i}].kv")
            });
            r.kv.truncate(n);
        }
    }
    let checks = &mut a.vendor_agreement.checks;
    let total = checks.len();
    cap_checks(checks, cap * CHECKS_PER_STEP);
    if checks.len() < total {
        cut.push(CappedList {
            list: "analyses.vendor_agreement.checks".into(),
            listed: checks.len(),
            total,
        });
    }
    cut
}

/// The self-audit's checks per compared step (computing, communication, not overlapped, free).
const CHECKS_PER_STEP: usize = 4;

/// Keeps at most `per_device` of each device's self-audit checks (they grow with the steps
/// compared): its disagreeing checks first, then its first agreeing ones, in their order. The
/// audit's counts and verdict were computed from every check.
fn cap_checks(checks: &mut Vec<crate::contract::Check>, per_device: usize) {
    use std::collections::HashMap;
    if checks.len() <= per_device {
        return;
    }
    let mut bad: HashMap<crate::contract::DeviceRef, usize> = HashMap::new();
    for c in checks.iter().filter(|c| !c.agrees) {
        *bad.entry(c.device.clone()).or_default() += 1;
    }
    let mut kept: HashMap<crate::contract::DeviceRef, (usize, usize)> = HashMap::new();
    checks.retain(|c| {
        let room_good = per_device.saturating_sub(bad.get(&c.device).copied().unwrap_or(0));
        let k = kept.entry(c.device.clone()).or_default();
        let (n, room) = if c.agrees {
            (&mut k.1, room_good)
        } else {
            (&mut k.0, per_device)
        };
        *n += 1;
        *n <= room
    });
}

/// Devices listed per per-device list by default when a run has more (every total, share,
/// distribution and verdict still counts them all).
pub const DEFAULT_DEVICE_CAP: usize = 16;

/// How many devices a report for people lists past [`DEFAULT_DEVICE_CAP`]: lists of one row per
/// device keep `rows`, lists of one section per device keep `sections`.
#[derive(Debug, Clone, Copy)]
pub struct DeviceCaps {
    pub rows: usize,
    pub sections: usize,
    /// The vendor self-audit's checks kept (the largest differences first), after its devices
    /// are picked.
    pub checks: usize,
}

/// The table and Markdown reports of a run with more devices than [`DEFAULT_DEVICE_CAP`].
pub const PEOPLE_CAPS: DeviceCaps = DeviceCaps {
    rows: 6,
    sections: 3,
    checks: 6,
};

/// The files a verdict names (the reference rank, cross_rank's slowest and waited-for ranks, the
/// members the job's peer comparisons name), the first `cap` of them.
fn named_files(r: &Report, cap: usize) -> Vec<String> {
    let a = &r.analyses;
    let mut out: Vec<String> = Vec::new();
    let mut add = |f: &str| {
        if out.len() < cap && !f.is_empty() && !out.iter().any(|x| x == f) {
            out.push(f.to_string());
        }
    };
    for c in &a.cross_rank.cohorts {
        for s in c.slowest.iter().filter(|s| s.stands_out) {
            add(&s.file);
        }
        for w in c.waited_for.iter().filter(|w| w.stands_out) {
            add(&w.file);
        }
    }
    for c in a.layout.comparisons.iter().filter(|c| c.stands_out) {
        for s in c.slowest.iter().filter(|s| s.stands_out) {
            add(&s.file);
        }
        for w in c.waited_for.iter().filter(|w| w.stands_out) {
            add(&w.file);
        }
    }
    if let Some(first) = a
        .cross_rank
        .cohorts
        .iter()
        .flat_map(|c| &c.ranks)
        .filter(|x| x.device.rank >= 0)
        .min_by_key(|x| x.device.rank)
    {
        add(&first.device.file);
    }
    out
}

/// The files a list of `len` entries keeps: the named ones it has (at most half the cap), then
/// alternately the largest and the smallest by the list's own metric, up to `cap` files.
fn pick(named: &[String], entries: &[(String, f64)], cap: usize) -> BTreeSet<String> {
    let mut per_file: Vec<(String, f64)> = Vec::new();
    for (f, m) in entries {
        match per_file.iter_mut().find(|x| &x.0 == f) {
            Some(x) => x.1 = x.1.max(*m),
            None => per_file.push((f.clone(), *m)),
        }
    }
    let mut keep: BTreeSet<String> = BTreeSet::new();
    for f in named.iter().take(cap.div_ceil(2)) {
        if per_file.iter().any(|x| &x.0 == f) {
            keep.insert(f.clone());
        }
    }
    per_file.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let (mut hi, mut lo) = (0usize, per_file.len());
    while keep.len() < cap.min(per_file.len()) && hi < lo {
        if !keep.contains(&per_file[hi].0) {
            keep.insert(per_file[hi].0.clone());
        }
        hi += 1;
        if keep.len() < cap && hi < lo {
            lo -= 1;
            keep.insert(per_file[lo].0.clone());
        }
    }
    keep
}

/// Cuts every per-device list of `r` to the devices that matter for that list when the run has
/// more than `cap` files; returns the lists cut. `--detail full` skips it.
pub fn cap_devices(r: &mut Report, cap: usize) -> Vec<CappedList> {
    cap_devices_with(
        r,
        DeviceCaps {
            rows: cap,
            sections: cap,
            checks: usize::MAX,
        },
    )
}

/// [`cap_devices`] with one cap for row lists and one for lists of one section per device: per
/// list, the devices a verdict names, then the largest and smallest by that list's own metric
/// (idle for bubbles, free share for device time, mean step for cross_rank, ...), never the
/// first files by name. The kept entries are listed largest first.
pub fn cap_devices_with(r: &mut Report, caps: DeviceCaps) -> Vec<CappedList> {
    let files = r.summary.files.len().max(r.analyses.ranks.present.len());
    if files <= caps.rows.min(caps.sections) {
        return Vec::new();
    }
    let named = named_files(r, 4);
    let mut cut = Vec::new();
    macro_rules! by_file {
        ($list:expr, $name:expr, $cap:expr, |$x:ident| $file:expr, $metric:expr) => {{
            let total = $list.len();
            let entries: Vec<(String, f64)> = $list
                .iter()
                .map(|$x| (($file).to_string(), $metric as f64))
                .collect();
            let keep = pick(&named, &entries, $cap);
            let mut kept: Vec<(f64, usize)> = entries
                .iter()
                .enumerate()
                .filter(|(_, e)| keep.contains(&e.0))
                .map(|(i, e)| (e.1, i))
                .collect();
            kept.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let order: Vec<usize> = kept.into_iter().map(|k| k.1).collect();
            let mut items: Vec<Option<_>> =
                std::mem::take(&mut $list).into_iter().map(Some).collect();
            $list = order.iter().filter_map(|&i| items[i].take()).collect();
            if $list.len() < total {
                cut.push(CappedList {
                    list: $name.to_string(),
                    listed: $list.len(),
                    total,
                });
            }
        }};
    }
    let (rows, sections) = (caps.rows, caps.sections);
    let a = &mut r.analyses;
    by_file!(
        a.vendor_agreement.checks,
        "analyses.vendor_agreement.checks",
        rows,
        |x| &x.device.file,
        x.diff_pct_of_window.abs()
    );
    let checks = &mut a.vendor_agreement.checks;
    if checks.len() > caps.checks {
        let total = checks.len();
        checks.sort_by(|x, y| {
            y.diff_pct_of_window
                .abs()
                .total_cmp(&x.diff_pct_of_window.abs())
        });
        checks.truncate(caps.checks);
        merge_cut(
            &mut cut,
            "analyses.vendor_agreement.checks",
            caps.checks,
            total,
        );
    }
    by_file!(
        a.evidence,
        "analyses.evidence",
        rows,
        |x| &x.file,
        x.device_window_ns
    );
    by_file!(
        a.device_time,
        "analyses.device_time",
        rows,
        |x| &x.device.file,
        x.free_pct_of_window
    );
    by_file!(
        a.kernel_types,
        "analyses.kernel_types",
        sections,
        |x| &x.device.file,
        x.idle_pct_of_span
    );
    by_file!(
        a.kernel_types_complete_steps,
        "analyses.kernel_types_complete_steps",
        sections,
        |x| &x.device.file,
        x.idle_pct_of_span
    );
    by_file!(
        a.bubbles,
        "analyses.bubbles",
        sections,
        |x| &x.device.file,
        x.idle_ns
    );
    by_file!(
        a.dispatch,
        "analyses.dispatch",
        sections,
        |x| &x.device.file,
        x.host_bound.host_bound_ns
    );
    by_file!(
        a.step_sync,
        "analyses.step_sync",
        sections,
        |x| &x.device.file,
        x.notify_wait_total_ns
    );
    by_file!(
        a.mtp,
        "analyses.mtp",
        sections,
        |x| &x.device.file,
        x.mem_wait_total_ns
    );
    by_file!(
        a.top_events,
        "analyses.top_events",
        sections,
        |x| &x.device.file,
        x.subset_sum_ns
    );
    by_file!(
        a.op_types,
        "analyses.op_types",
        sections,
        |x| &x.device.file,
        x.sum_ns
    );
    by_file!(
        a.composition,
        "analyses.composition",
        sections,
        |x| &x.device.file,
        x.compute_ns
    );
    by_file!(
        a.communication,
        "analyses.communication",
        rows,
        |x| &x.device.file,
        x.comm_union_ns
    );
    by_file!(
        a.efficiency,
        "analyses.efficiency",
        sections,
        |x| &x.device.file,
        x.total.time_lost_ns
    );
    by_file!(
        a.communication_ops.devices,
        "analyses.communication_ops.devices",
        sections,
        |x| &x.device.file,
        x.total.times.wait_ns
    );
    by_file!(
        a.graph_mode.files,
        "analyses.graph_mode.files",
        sections,
        |x| &x.file,
        x.replay_pct_of_device_ns
    );
    by_file!(
        a.phases,
        "analyses.phases",
        sections,
        |x| &x.file,
        x.decode.total_ns
    );
    if let Some(b) = a.batch_audit.as_mut() {
        by_file!(
            b.ranks,
            "analyses.batch_audit.ranks",
            rows,
            |x| &x.file,
            x.replays
        );
    }
    by_file!(
        a.ranks.rows,
        "analyses.ranks.rows",
        rows,
        |x| x.files.first().map_or("", |f| f.as_str()),
        x.size_bytes
    );
    for (i, c) in a.cross_rank.cohorts.iter_mut().enumerate() {
        by_file!(
            c.ranks,
            format!("analyses.cross_rank.cohorts[{i}].ranks"),
            rows,
            |x| &x.device.file,
            x.step_mean_ns
        );
        for (list, len) in [
            ("clock.ranks", c.clock.ranks.len()),
            ("groups.groups", c.groups.groups.len()),
        ] {
            let keep = if len > CAPPED_ROWS {
                CAPPED_ROWS.min(rows)
            } else {
                len
            };
            if keep < len {
                cut.push(CappedList {
                    list: format!("analyses.cross_rank.cohorts[{i}].{list}"),
                    listed: keep,
                    total: len,
                });
            }
        }
        c.clock
            .ranks
            .truncate(if c.clock.ranks.len() > CAPPED_ROWS {
                CAPPED_ROWS.min(rows)
            } else {
                c.clock.ranks.len()
            });
        c.groups
            .groups
            .truncate(if c.groups.groups.len() > CAPPED_ROWS {
                CAPPED_ROWS.min(rows)
            } else {
                c.groups.groups.len()
            });
    }
    by_file!(
        r.summary.files,
        "summary.files",
        rows,
        |x| &x.path,
        x.size_bytes
    );
    by_file!(
        r.summary.device_streams,
        "summary.device_streams",
        sections,
        |x| &x.file,
        x.dur_ns_sum
    );
    cut
}

/// Records a list cut again: the first cut's total, the last count.
fn merge_cut(cut: &mut Vec<CappedList>, list: &str, listed: usize, total: usize) {
    match cut.iter_mut().find(|c| c.list == list) {
        Some(c) => c.listed = listed,
        None => cut.push(CappedList {
            list: list.to_string(),
            listed,
            total,
        }),
    }
}

/// Rows kept of the lists ranked by size (clock offsets, groups) in a capped report.
pub const CAPPED_ROWS: usize = 20;
