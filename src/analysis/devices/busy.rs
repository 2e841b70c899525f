//! The busy time of a device (compute ∪ communication unions, computed once and cached on the
//! device) and its gaps inside the observed windows: what device_time, bubbles and dispatch
//! share.

use super::{Device, iv, windows};
use crate::analysis::intervals::{self, Iv};
use crate::model::{Category, Tables};

/// Compute-kernel and communication unions of a device (computed once per device).
pub fn busy_unions<'d>(t: &Tables, d: &'d Device) -> &'d (Vec<Iv>, Vec<Iv>) {
    d.busy.get_or_init(|| unions(t, d))
}

/// The device's events and collectives come by start: merged as they come (a device can have
/// tens of millions of kernels; a sorted copy of json1g's 2 M was 32 MB at the run's peak).
fn unions(t: &Tables, d: &Device) -> (Vec<Iv>, Vec<Iv>) {
    let compute = d
        .events
        .iter()
        .filter(|&&i| t.events.category[i as usize] == Category::ComputeKernel)
        .map(|&i| iv(t, i));
    let comm = d.comm_ops.iter().map(|&i| iv(t, i));
    (
        intervals::union_by_start(compute),
        intervals::union_by_start(comm),
    )
}

/// The gaps ≥ `min_gap_ns` of `d`'s busy time inside its observed windows, sorted.
pub fn device_gaps(t: &Tables, d: &Device, min_gap_ns: i64) -> Vec<Iv> {
    busy_gaps(t, d, min_gap_ns).map_or_else(Vec::new, |b| b.gaps)
}

/// The busy time of a device (compute ∪ communication) as bubbles reads it.
pub(in crate::analysis) struct BusyGaps {
    /// First start to last end.
    pub window: Iv,
    /// Time inside the observed windows (the capture's pieces).
    pub observed_ns: i64,
    pub busy_ns: i64,
    /// Gaps ≥ min_gap inside the observed windows, sorted.
    pub gaps: Vec<Iv>,
}

/// A capture in one piece is merged on the fly (a device can have tens of millions of busy
/// intervals, and only the gaps are kept); one in pieces stores the union to cut it at them.
pub(in crate::analysis) fn busy_gaps(t: &Tables, d: &Device, min_gap_ns: i64) -> Option<BusyGaps> {
    let (compute, comm) = busy_unions(t, d);
    if d.spans.len() >= 2 {
        let busy = intervals::union_of(compute, comm);
        let observed = windows(d, &busy);
        return Some(BusyGaps {
            window: (busy.first()?.0, busy.last()?.1),
            observed_ns: observed.iter().map(|w| w.1 - w.0).sum(),
            busy_ns: intervals::total(&busy),
            gaps: gaps_in(&busy, &observed, min_gap_ns),
        });
    }
    let mut busy = intervals::merged(compute, comm);
    let first = busy.next()?;
    let (mut last, mut busy_ns, mut gaps) = (first, first.1 - first.0, Vec::new());
    for x in busy {
        busy_ns += x.1 - x.0;
        if x.0 - last.1 >= min_gap_ns {
            gaps.push((last.1, x.0));
        }
        last = x;
    }
    Some(BusyGaps {
        window: (first.0, last.1),
        observed_ns: last.1 - first.0,
        busy_ns,
        gaps,
    })
}

/// The gaps ≥ `min_gap_ns` of `busy` inside each observed window.
fn gaps_in(busy: &[Iv], observed: &[Iv], min_gap_ns: i64) -> Vec<Iv> {
    observed
        .iter()
        .flat_map(|&w| intervals::gaps(busy, w))
        .filter(|&(a, b)| b - a >= min_gap_ns)
        .collect()
}
