//! Bounded reports: the lists that grow with the capture's length (one entry per step, replay or
//! wait) are cut to their first [`DEFAULT_STEP_CAP`] entries unless `--detail full` is asked for,
//! and the lists that grow with the rank count (one entry per device or file) to the
//! [`DEFAULT_DEVICE_CAP`] devices that matter (the reference rank, the ranks a verdict names, the
//! slowest, latest and idlest), with the per-rank distributions kept whole.
//! Every total, share, distribution and verdict is computed before the cut, from every entry, so
//! only the listing is shorter; the report's `detail_capped` names each list cut, with how many
//! entries it had.

use super::Report;
use crate::contract::RankSteps;
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
    if let Some(audit) = a.batch_audit.as_mut() {
        for (i, r) in audit.ranks.iter_mut().enumerate() {
            let n = keep(r.kv.len(), &|| {
                format!("analyses.batch_audit.ranks[{i}].kv")
            });
            r.kv.truncate(n);
        }
    }
    cut
}

/// Devices listed per per-device list by default when a run has more (every total, share,
/// distribution and verdict still counts them all).
pub const DEFAULT_DEVICE_CAP: usize = 16;

/// The files of the devices a capped report lists: the reference (lowest) rank, the ranks
/// named by a verdict (slowest, waited for), then the largest step times, the most collectives
/// entered last and the largest free shares, up to `cap`.
fn named_files(r: &Report, cap: usize) -> Vec<String> {
    let a = &r.analyses;
    let mut out: Vec<String> = Vec::new();
    let mut add = |f: &str| {
        if out.len() < cap && !f.is_empty() && !out.iter().any(|x| x == f) {
            out.push(f.to_string());
        }
    };
    for c in &a.cross_rank.cohorts {
        if let Some(first) = c
            .ranks
            .iter()
            .filter(|x| x.device.rank >= 0)
            .min_by_key(|x| x.device.rank)
        {
            add(&first.device.file);
        }
        if let Some(s) = &c.slowest {
            add(&s.file);
        }
        if let Some(w) = &c.waited_for {
            add(&w.file);
        }
    }
    for c in &a.cross_rank.cohorts {
        let mut by_step: Vec<&RankSteps> = c.ranks.iter().collect();
        by_step.sort_by(|x, y| y.step_mean_ns.total_cmp(&x.step_mean_ns));
        by_step.iter().take(4).for_each(|x| add(&x.device.file));
        let mut by_late: Vec<&RankSteps> = c
            .ranks
            .iter()
            .filter(|x| x.last_to_start_collectives > 0)
            .collect();
        by_late.sort_by_key(|x| std::cmp::Reverse(x.last_to_start_collectives));
        by_late.iter().take(4).for_each(|x| add(&x.device.file));
    }
    let mut by_free: Vec<_> = a.device_time.iter().collect();
    by_free.sort_by(|x, y| y.free_pct_of_window.total_cmp(&x.free_pct_of_window));
    by_free.iter().take(4).for_each(|x| add(&x.device.file));
    // Then the first files in input order, so the listing is full up to the cap.
    for f in &r.summary.files {
        add(&f.path);
    }
    out
}

/// Cuts every per-device list of `r` to the devices of [`named_files`] when the run has more
/// than `cap` files; returns the lists cut. `--detail full` skips it.
pub fn cap_devices(r: &mut Report, cap: usize) -> Vec<CappedList> {
    let files = r.summary.files.len();
    if files <= cap {
        return Vec::new();
    }
    let keep: BTreeSet<String> = named_files(r, cap).into_iter().collect();
    let mut cut = Vec::new();
    let mut retain = |name: String, total: usize, listed: usize| {
        if listed < total {
            cut.push(CappedList {
                list: name,
                listed,
                total,
            });
        }
    };
    macro_rules! by_file {
        ($list:expr, $name:expr, |$x:ident| $file:expr) => {{
            let total = $list.len();
            $list.retain(|$x| keep.contains($file));
            retain($name.to_string(), total, $list.len());
        }};
    }
    let a = &mut r.analyses;
    by_file!(
        a.vendor_agreement.checks,
        "analyses.vendor_agreement.checks",
        |x| &x.device.file
    );
    by_file!(a.evidence, "analyses.evidence", |x| &x.file);
    by_file!(a.device_time, "analyses.device_time", |x| &x.device.file);
    by_file!(a.kernel_types, "analyses.kernel_types", |x| &x.device.file);
    by_file!(
        a.kernel_types_complete_steps,
        "analyses.kernel_types_complete_steps",
        |x| &x.device.file
    );
    by_file!(a.bubbles, "analyses.bubbles", |x| &x.device.file);
    by_file!(a.dispatch, "analyses.dispatch", |x| &x.device.file);
    by_file!(a.step_sync, "analyses.step_sync", |x| &x.device.file);
    by_file!(a.mtp, "analyses.mtp", |x| &x.device.file);
    by_file!(a.top_events, "analyses.top_events", |x| &x.device.file);
    by_file!(a.op_types, "analyses.op_types", |x| &x.device.file);
    by_file!(a.composition, "analyses.composition", |x| &x.device.file);
    by_file!(a.communication, "analyses.communication", |x| &x
        .device
        .file);
    by_file!(
        a.communication_ops.devices,
        "analyses.communication_ops.devices",
        |x| &x.device.file
    );
    by_file!(a.graph_mode.files, "analyses.graph_mode.files", |x| &x.file);
    by_file!(a.phases, "analyses.phases", |x| &x.file);
    if let Some(b) = a.batch_audit.as_mut() {
        by_file!(b.ranks, "analyses.batch_audit.ranks", |x| &x.file);
    }
    by_file!(a.ranks.rows, "analyses.ranks.rows", |x| &x
        .files
        .iter()
        .find(|f| keep.contains(*f))
        .cloned()
        .unwrap_or_default());
    for (i, c) in a.cross_rank.cohorts.iter_mut().enumerate() {
        by_file!(
            c.ranks,
            format!("analyses.cross_rank.cohorts[{i}].ranks"),
            |x| &x.device.file
        );
        let total = c.clock.ranks.len();
        c.clock.ranks.truncate(CAPPED_ROWS);
        retain(
            format!("analyses.cross_rank.cohorts[{i}].clock.ranks"),
            total,
            c.clock.ranks.len(),
        );
        let total = c.groups.groups.len();
        c.groups.groups.truncate(CAPPED_ROWS);
        retain(
            format!("analyses.cross_rank.cohorts[{i}].groups.groups"),
            total,
            c.groups.groups.len(),
        );
    }
    by_file!(r.summary.files, "summary.files", |x| &x.path);
    by_file!(r.summary.device_streams, "summary.device_streams", |x| &x
        .file);
    cut
}

/// Rows kept of the lists ranked by size (clock offsets, groups) in a capped report.
pub const CAPPED_ROWS: usize = 20;
