//! Capture edges (`capture_edge`, docs/analyses/bubbles.md): the time the host window of a
//! device's file runs before the device's first busy instant (the capture opened before the
//! work arrived) and after its last (it closed after the work ended). Reported apart from the
//! idle inside the device window: the device window, the idle and the bound verdict's shares
//! start and end at the device's busy time, so the edges are never in them.

use super::host_side::HostSide;
use super::neighbour;
use crate::analysis::devices::{Device, iv};
use crate::analysis::dispatch::{Launch, launches, next_launch};
use crate::analysis::evidence::DEVICE_SLIVER_MAX_HOST_WINDOW_NS;
use crate::analysis::gallop::Gallop;
use crate::analysis::intervals::Iv;
use crate::contract::bubbles::{Cause, Gap};
use crate::model::{Category, Tables};

/// The edges of device `d` (busy from `window.0` to `window.1`) at least `min_gap_ns` long:
/// before its first busy instant (evidence: the host event that opens the host window; `launch`:
/// the call that launched the first task, `launch_lag_ns` after the window opened) and after its
/// last (evidence: the host event that closes it). None when the file has no host events, or
/// its host window is over an hour or misses the device window (clocks that cannot be compared).
pub(super) fn edges(
    t: &Tables,
    d: &Device,
    window: Iv,
    host: &HostSide,
    min_gap_ns: i64,
) -> Vec<Gap> {
    let (Some((first, last)), Some(h)) = (host.window, host.window_span(t)) else {
        return Vec::new();
    };
    if h.1 - h.0 > DEVICE_SLIVER_MAX_HOST_WINDOW_NS || h.0 >= window.1 || h.1 <= window.0 {
        return Vec::new();
    }
    // A capture in pieces observed only its pieces.
    let (lo, hi) = match (d.spans.first(), d.spans.last()) {
        (Some(f), Some(l)) if d.spans.len() >= 2 => (h.0.max(f.0), h.1.min(l.1)),
        _ => h,
    };
    let is_kernel = |&&i: &&u32| {
        matches!(
            t.events.category[i as usize],
            Category::ComputeKernel | Category::CommKernel
        )
    };
    let first_kernel = d
        .events
        .iter()
        .filter(is_kernel)
        .find(|&&i| iv(t, i).0 >= window.0);
    let last_kernel = d
        .events
        .iter()
        .rev()
        .filter(is_kernel)
        .find(|&&i| iv(t, i).1 <= window.1);
    let mut out = Vec::new();
    if window.0 - lo >= min_gap_ns.max(1) {
        let launch = next_launch(t, d, launches(t, d), &mut Gallop::default(), window.0);
        out.push(edge(t, (lo, window.0), first, (None, first_kernel), launch));
    }
    if hi - window.1 >= min_gap_ns.max(1) {
        out.push(edge(t, (window.1, hi), last, (last_kernel, None), None));
    }
    out
}

fn edge(
    t: &Tables,
    (a, b): Iv,
    host: u32,
    (before, after): (Option<&u32>, Option<&u32>),
    launch: Option<Launch>,
) -> Gap {
    Gap {
        start_ns: a,
        end_ns: b,
        dur_ns: b - a,
        cause: Cause::CaptureEdge,
        evidence: Some(neighbour(t, host)),
        before: before.map(|&i| neighbour(t, i)),
        after: after.map(|&i| neighbour(t, i)),
        launch: launch.map(|l| neighbour(t, l.call)),
        launch_lag_ns: launch.map(|l| l.at_ns - a),
        launch_op: None,
        host_block: None,
    }
}
