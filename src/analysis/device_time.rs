//! Device time breakdown per device, with the vendor's definitions (torch_npu Overlap Analysis /
//! step_trace_time.csv): Computing = union of compute kernels; Communication = union of collective
//! ops; Overlapped = their intersection; Communication(Not Overlapped) = Communication − Computing;
//! window ("Stage") = first start to last end of Computing ∪ Communication; Free = window − (Computing
//! ∪ Communication). A capture written in pieces with uncaptured time between them (legacy CANN
//! per-iteration timelines) has one window per piece, summed. When the same file carries the vendor's own Overlap Analysis, its totals are
//! reported beside ours with the relative difference.
//!
//! Async copies (`MEMCPY_ASYNC` tasks) are reported as msprof-analyze's cluster_time_summary
//! defines them: `async_copy_ns` = Σ task durations ("Memory"), `async_copy_not_overlapped_ns` =
//! copy time overlapped by neither computing nor communication, anywhere in the capture (also
//! outside the window, as msprof-analyze counts it), and `free_excluding_async_copy_ns` =
//! Free − that (its "Free"; it can subtract copy time that lies outside the window).

use super::devices::{AsyncCopy, Device, iv, windows};
use super::intervals::{self, Iv};
use super::stats::pct;
pub use crate::contract::device_time::*;
use crate::model::vendor_overlap::OVERLAP_KINDS;
use crate::model::{ProcessRole, Tables};

pub use super::devices::busy::busy_unions;

pub fn compute(t: &Tables, devices: &[Device]) -> Vec<DeviceTime> {
    devices.iter().filter_map(|d| one(t, d)).collect()
}

/// First start, last end, observed time, busy time and the length of `copies` (a union) inside
/// the busy time of `d`. A capture in one piece merges the busy union on the fly (a device can
/// have tens of millions of busy intervals); one in pieces stores it to cut it at the pieces.
fn busy_totals(t: &Tables, d: &Device, copies: &[Iv]) -> Option<(Iv, i64, i64, i64)> {
    let (compute, comm) = busy_unions(t, d);
    if d.spans.len() >= 2 {
        let busy = intervals::union_of(compute, comm);
        let window: i64 = windows(d, &busy).iter().map(|w| w.1 - w.0).sum();
        let copy_busy = intervals::intersect_total(copies, &busy);
        return Some((
            (busy.first()?.0, busy.last()?.1),
            window,
            intervals::total(&busy),
            copy_busy,
        ));
    }
    let (mut span, mut busy_ns): (Option<Iv>, i64) = (None, 0);
    let busy = intervals::merged(compute, comm).inspect(|x| {
        busy_ns += x.1 - x.0;
        span = Some((span.map_or(x.0, |s| s.0), x.1));
    });
    let copy_busy = intervals::intersect_total_iter(copies, busy);
    let span = span?;
    Some((span, span.1 - span.0, busy_ns, copy_busy))
}

fn one(t: &Tables, d: &Device) -> Option<DeviceTime> {
    let (compute, comm) = busy_unions(t, d);
    let is_copy = AsyncCopy::new(t);
    let copies: Vec<Iv> = d
        .events
        .iter()
        .filter(|&&i| is_copy.is(t, i as usize))
        .map(|&i| iv(t, i))
        .collect();
    let async_copy: i64 = copies.iter().map(|c| c.1 - c.0).sum();
    let copies = intervals::union(copies);
    // One window, or one per captured piece (time between pieces is not free: not observed).
    let ((start, end), window, busy_ns, copy_busy) = busy_totals(t, d, &copies)?;
    let computing = intervals::total(compute);
    let communication = intervals::total(comm);
    let overlapped = intervals::intersect_total(compute, comm);
    let not_overlapped = communication - overlapped;
    let free = window - busy_ns;
    let copy_not_overlapped = intervals::total(&copies) - copy_busy;
    let vendor = vendor(t, d).map(|(c, m, n, f)| VendorBreakdown {
        source: format!("Overlap Analysis process of {}", d.evidence.file),
        computing_ns: c,
        communication_ns: m,
        communication_not_overlapped_ns: n,
        free_ns: f,
        computing_diff_pct: pct(computing - c, c),
        communication_diff_pct: pct(communication - m, m),
        free_diff_pct: pct(free - f, f),
    });
    Some(DeviceTime {
        device: d.evidence.clone(),
        window_start_ns: start,
        window_end_ns: end,
        window_ns: window,
        computing_ns: computing,
        communication_ns: communication,
        overlapped_ns: overlapped,
        communication_not_overlapped_ns: not_overlapped,
        free_ns: free,
        async_copy_ns: async_copy,
        async_copy_not_overlapped_ns: copy_not_overlapped,
        free_excluding_async_copy_ns: free - copy_not_overlapped,
        computing_pct_of_window: pct(computing, window),
        communication_not_overlapped_pct_of_window: pct(not_overlapped, window),
        free_pct_of_window: pct(free, window),
        communication_source: d.comm_source,
        vendor,
    })
}

/// Sums of the vendor's Overlap Analysis rows (Computing, Communication, Communication(Not
/// Overlapped), Free) in the device's file, if it has any: its `Overlap Analysis` events, or the
/// vendor_overlap sums when the reader summed the rows instead.
fn vendor(t: &Tables, d: &Device) -> Option<(i64, i64, i64, i64)> {
    let mut sums = [0i64; 4];
    let mut seen = false;
    let v = &t.vendor_overlap;
    for r in (0..v.len()).filter(|&r| v.file[r] == d.file) {
        sums[v.kind[r] as usize] = sums[v.kind[r] as usize].saturating_add(v.dur_ns[r]);
        seen = true;
    }
    let kind_of_thread: Vec<Option<usize>> = (0..t.threads.len())
        .map(|th| {
            let p = t.threads.process[th];
            if t.processes.role[p.idx()] != ProcessRole::OverlapAnalysis
                || t.process_file(p) != d.file
            {
                return None;
            }
            let name = t.str(t.threads.name[th]);
            OVERLAP_KINDS.iter().position(|k| *k == name)
        })
        .collect();
    if kind_of_thread.iter().any(Option::is_some) {
        for i in 0..t.events.len() {
            if let Some(k) = kind_of_thread[t.events.thread[i].idx()] {
                sums[k] = sums[k].saturating_add(t.events.dur_ns.at(i));
                seen = true;
            }
        }
    }
    seen.then_some((sums[0], sums[1], sums[2], sums[3]))
}
