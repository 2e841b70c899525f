//! Idle inside each graph-mode decode step and per stream of a device.

use super::{BubbleOpts, StepIdle, StreamIdle};
use crate::analysis::devices::{Device, iv};
use crate::analysis::intervals::{self, Iv};
use crate::analysis::stats::pct;
use crate::model::Tables;

/// Idle inside each decode step (graph-replay steps of the device).
pub(super) fn step_idle(t: &Tables, d: &Device, gaps: &[Iv]) -> Vec<StepIdle> {
    let steps = crate::analysis::devices::decode_steps::segment(t, d);
    steps
        .iter()
        .enumerate()
        .map(|(k, st)| {
            let end = steps
                .heads(st)
                .iter()
                .map(|h| h.mem_wait_ts_ns + h.mem_wait_ns + h.burst_ns)
                .fold(st.replay_end_ns, i64::max);
            let start = st.first_kernel_ns;
            // Gaps are sorted and disjoint: visit only those that can meet [start, end).
            let first = gaps.partition_point(|&(_, b)| b <= start);
            let idle: i64 = gaps[first..]
                .iter()
                .take_while(|&&(a, _)| a < end)
                .map(|&(a, b)| (b.min(end) - a.max(start)).max(0))
                .sum();
            StepIdle {
                step: k as u64,
                start_ns: start,
                end_ns: end,
                idle_ns: idle,
                idle_pct_of_step: pct(idle, end - start),
            }
        })
        .collect()
}

pub(super) fn stream_idle(t: &Tables, d: &Device, o: &BubbleOpts) -> Vec<StreamIdle> {
    // Streams are few: a short list, looked up from the previous event's stream first. Device
    // events are sorted by start, so each stream's tasks arrive in start order.
    let mut by_stream: Vec<(i32, u64, intervals::RunningUnion)> = Vec::new();
    let mut last = usize::MAX;
    for &i in &d.events {
        let s = t.events.stream.at(i as usize);
        if by_stream.get(last).is_none_or(|x| x.0 != s) {
            last = by_stream.iter().position(|x| x.0 == s).unwrap_or_else(|| {
                by_stream.push((s, 0, intervals::RunningUnion::new(o.min_gap_ns)));
                by_stream.len() - 1
            });
        }
        let x = &mut by_stream[last];
        x.1 += 1;
        x.2.add(iv(t, i));
    }
    by_stream.sort_unstable_by_key(|x| x.0);
    by_stream
        .into_iter()
        .map(|(stream, tasks, u)| StreamIdle {
            stream,
            tasks,
            busy_ns: u.busy_ns(),
            idle_ns: u.idle_ns,
            gaps: u.gaps,
        })
        .collect()
}
