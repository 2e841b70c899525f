//! Bounded reports: the lists that grow with the capture's length (one entry per step, replay or
//! wait) are cut to their first [`DEFAULT_STEP_CAP`] entries unless `--detail full` is asked for.
//! Every total, share, distribution and verdict is computed before the cut, from every entry, so
//! only the listing is shorter; the report's `detail_capped` names each list cut, with how many
//! entries it had.

use crate::registry::Analyses;
use serde::Serialize;

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
