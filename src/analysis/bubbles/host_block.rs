//! `host_blocked` (docs/analyses/bubbles.md): a synchronous host call (`host_calls::blocks_host`)
//! holds the host for most of a device gap. Which call, the device task it waited for (or none:
//! it waited on work outside the trace), and the frames above it (the aten op and the Python
//! line that asked for the sync: `.item()`, `.cpu()`, `.tolist()`, `torch.cuda.synchronize`).

use super::sorted::Sorted;
use crate::analysis::devices::iv;
use crate::analysis::host_calls::is_runtime_api;
use crate::analysis::intervals::Iv;
use crate::model::hash::FxHashMap;
use crate::model::{Category, FileId, Tables};

/// A host returns from a synchronous call within this long of the device work it waited for
/// (the shared Kineto traces' sync calls return 4-22 µs after their last device task); a call
/// that returns later waited for something the trace does not show.
pub const SYNC_RETURN_NS: i64 = 100_000;

/// Frames kept above a blocking call.
const FRAMES: usize = 6;

/// The synchronous call that holds the host for the larger part of gap `(a, b)`: it overlaps at
/// least half of the gap and returns at most [`SYNC_RETURN_NS`] after the gap ends (a call that
/// outlives the gap waited for work after it: the device did not stop for it). The call with
/// the longest overlap wins; earliest on a tie.
pub(super) fn blocking_call(t: &Tables, syncs: &Sorted, (a, b): Iv) -> Option<u32> {
    let mut best: Option<(i64, u32)> = None;
    for (_, c) in syncs.overlapping(t, (a, b)) {
        let (s, e) = iv(t, c);
        if e > b.saturating_add(SYNC_RETURN_NS) {
            continue;
        }
        let o = e.min(b) - s.max(a);
        if 2 * o >= b - a && best.is_none_or(|x| o > x.0) {
            best = Some((o, c));
        }
    }
    best.map(|x| x.1)
}

/// The device task call `c` waited for, from `candidates` (the kernel whose end opened the
/// gap, the device's copies, waits and communication tasks inside the gap, and the tasks that
/// start from the gap's end on before the call returns): the one that
/// ended last by the time the call returned, when the call returned within
/// [`SYNC_RETURN_NS`] of its end. None: the call outlived every task of the device (it waited
/// for work outside the trace). A device record of the call itself (Kineto's `Stream Wait
/// Event` carries the call's correlation) is not a candidate.
pub(super) fn waited_for(t: &Tables, c: u32, candidates: impl Iterator<Item = u32>) -> Option<u32> {
    let ret = iv(t, c).1;
    let own = t.events.correlation_id.at(c as usize);
    candidates
        .filter(|&i| {
            iv(t, i).1 <= ret && (own < 0 || t.events.correlation_id.at(i as usize) != own)
        })
        .max_by_key(|&i| (iv(t, i).1, std::cmp::Reverse(i)))
        .filter(|&i| ret - iv(t, i).1 <= SYNC_RETURN_NS)
}

/// The frames above each of `calls`, innermost first (at most six): host ops, Python functions,
/// annotations and steps of the call's file on a thread of the same thread id (an Ascend CANN call's
/// thread has its Python thread's id) that enclose the call; runtime calls are skipped. One
/// pass over the events for all the calls.
pub(super) fn frames(t: &Tables, calls: &[u32]) -> Vec<Vec<String>> {
    let key = |i: usize| (t.event_file(i), t.threads.tid[t.events.thread[i].idx()]);
    let mut wanted: FxHashMap<(FileId, i64), Vec<usize>> = FxHashMap::default();
    for (k, &c) in calls.iter().enumerate() {
        wanted.entry(key(c as usize)).or_default().push(k);
    }
    // Per call: (start, end, event) of its enclosing frames.
    let mut found: Vec<Vec<(i64, i64, u32)>> = vec![Vec::new(); calls.len()];
    for i in 0..t.events.len() {
        if !matches!(
            t.events.category[i],
            Category::HostOp | Category::PythonFunction | Category::Annotation | Category::Step
        ) {
            continue;
        }
        let Some(ks) = wanted.get(&key(i)) else {
            continue;
        };
        let (s, e) = iv(t, i as u32);
        for &k in ks {
            let (cs, ce) = iv(t, calls[k]);
            if i as u32 != calls[k] && s <= cs && ce <= e && !is_runtime_api(t.event_name(i)) {
                found[k].push((s, e, i as u32));
            }
        }
    }
    found
        .into_iter()
        .map(|mut f| {
            // Innermost first: the latest start, then the earliest end.
            f.sort_unstable_by_key(|x| (std::cmp::Reverse(x.0), x.1, x.2));
            f.iter()
                .take(FRAMES)
                .map(|x| t.event_name(x.2 as usize).to_string())
                .collect()
        })
        .collect()
}
