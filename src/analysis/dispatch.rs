//! The dispatch chain: which host call launched each device task, how long the task waited after
//! its launch call began (launch latency), how many launched tasks were still unfinished when the
//! call began (queue depth), and how much of the device's idle time the host caused (gaps whose
//! next task was launched after the gap began).
//!
//! Links: Ascend tasks carry the `connection_id` of the CANN API call that launched them (db
//! TASK.connectionId = CANN_API.connectionId; trace_view.json `args.connection_id` on both);
//! Kineto kernels carry the `correlation` of their runtime call (`cudaLaunchKernel`). The
//! PyTorch op above a launch is found only for the rows reported: on Ascend through the
//! `async_npu` / `torch_to_npu` flow that ends on the task, on Kineto as the innermost host op
//! enclosing the runtime call on its thread.

use super::devices::{Device, iv};
use super::gallop::Gallop;
use super::grouping::counting_sort;
use super::stats::{DurStats, dur_stats, pct, quantile};
pub use crate::contract::dispatch::*;
use crate::model::flows::FlowPhase;
use crate::model::hash::FxHashMap;
use crate::model::{Category, ProcessRole, Tables, ThreadId};
use std::collections::BinaryHeap;

pub use super::devices::launches::{Launch, Launches, NO_LAUNCH, launches};

pub fn compute(
    t: &Tables,
    devices: &[Device],
    min_gap_ns: i64,
    top_n: usize,
) -> Vec<DeviceDispatch> {
    devices
        .iter()
        .filter_map(|d| one(t, d, min_gap_ns, top_n))
        .collect()
}

/// One launch call: its index, its first task (index into Device::events) and task count.
struct Call {
    call: u32,
    first: usize,
    tasks: u64,
}

fn one(t: &Tables, d: &Device, min_gap_ns: i64, top_n: usize) -> Option<DeviceDispatch> {
    if d.events.is_empty() {
        return None;
    }
    let l = launches(t, d);
    let mut by_call: FxHashMap<u32, Call> = FxHashMap::default();
    // One entry per run of tasks of one call (a graph launch's tasks come in a row).
    for (k, n) in linked_runs(l) {
        let c = l.launch[k];
        // Device events are in start order: the first seen is the first task.
        by_call
            .entry(c)
            .or_insert(Call {
                call: c,
                first: k,
                tasks: 0,
            })
            .tasks += n as u64;
    }
    let linked_tasks = by_call.values().map(|c| c.tasks).sum();
    let mut calls: Vec<Call> = by_call.into_values().collect();
    calls.sort_unstable_by_key(|c| (t.events.ts_ns[c.call as usize], c.call));

    let depth = queue_depths(t, d, l, &calls);
    let latency: Vec<i64> = calls
        .iter()
        .map(|c| t.events.ts_ns[d.events[c.first] as usize] - t.events.ts_ns[c.call as usize])
        .collect();

    let host_bound = host_bound(t, d, l, min_gap_ns);
    let (host_apis, host_apis_other, host_api_total_ns) = host_apis(t, d, l.link, top_n);

    // The slowest calls among those that found the queue empty.
    let mut empty: Vec<usize> = (0..calls.len()).filter(|&k| depth[k] == 0).collect();
    empty.sort_unstable_by_key(|&k| {
        (
            std::cmp::Reverse(latency[k]),
            t.events.ts_ns[calls[k].call as usize],
        )
    });
    empty.truncate(top_n);
    let pairs: Vec<(u32, u32)> = empty
        .iter()
        .map(|&k| (d.events[calls[k].first], calls[k].call))
        .collect();
    let ops = ops_above(t, &pairs);
    let slowest_empty_queue = empty
        .iter()
        .zip(ops)
        .map(|(&k, op)| {
            let c = &calls[k];
            launch_row(
                t,
                d.events[c.first],
                c.call,
                op,
                latency[k],
                depth[k],
                c.tasks,
            )
        })
        .collect();

    Some(DeviceDispatch {
        device: d.evidence.clone(),
        link: l.link,
        tasks: d.events.len() as u64,
        linked_tasks,
        latency: latency_stats(&latency),
        queue_depth: depth_stats(&depth),
        slowest_empty_queue,
        host_bound,
        host_apis,
        host_apis_other,
        host_api_total_ns,
    })
}

/// The runs of tasks of one launch call: (first position, length), in order; tasks without
/// a known launch are left out. Read where needed, not stored (a device can have one run per
/// task, tens of millions).
fn linked_runs(l: &Launches) -> impl Iterator<Item = (usize, usize)> + '_ {
    runs(&l.launch).filter(|&(k, _)| l.launch[k] != NO_LAUNCH)
}

/// The runs of equal values of `v`: (start, length), in order.
fn runs(v: &[u32]) -> impl Iterator<Item = (usize, usize)> + '_ {
    v.chunk_by(|a, b| a == b).scan(0, |at, run| {
        let start = *at;
        *at += run.len();
        Some((start, run.len()))
    })
}

/// Queue depth at each call of `calls` (sorted by start): the tasks launched by earlier calls
/// that had not ended when it began. A sweep over the calls, with a min-heap of the ends of the
/// tasks launched so far; each call's tasks are found as its runs of positions, grouped by the
/// call's position by a counting sort (8 bytes per run, no comparison sort: a device can have
/// tens of millions of tasks, and a graph launch's tasks come in one run).
fn queue_depths(t: &Tables, d: &Device, l: &Launches, calls: &[Call]) -> Vec<i64> {
    let pos: FxHashMap<u32, u32> = calls
        .iter()
        .enumerate()
        .map(|(k, c)| (c.call, k as u32))
        .collect();
    // runs[first[p]..first[p + 1]]: the runs (start, length) of the tasks of calls[p].
    let pos = &pos;
    let (first, runs_of) = counting_sort(calls.len(), || {
        linked_runs(l).map(|(k, n)| (pos[&l.launch[k]] as usize, (k as u32, n as u32)))
    });
    let mut heap: BinaryHeap<std::cmp::Reverse<i64>> = BinaryHeap::new();
    let mut depth: Vec<i64> = Vec::with_capacity(calls.len());
    for (p, c) in calls.iter().enumerate() {
        let at = t.events.ts_ns[c.call as usize];
        while heap.peek().is_some_and(|e| e.0 <= at) {
            heap.pop();
        }
        depth.push(heap.len() as i64);
        for &(k, n) in &runs_of[first[p]..first[p + 1]] {
            let tasks = &d.events[k as usize..k as usize + n as usize];
            heap.extend(tasks.iter().map(|&i| std::cmp::Reverse(iv(t, i).1)));
        }
    }
    depth
}

fn launch_row(
    t: &Tables,
    task: u32,
    call: u32,
    op: Option<u32>,
    latency_ns: i64,
    queue_depth: i64,
    tasks: u64,
) -> LaunchRow {
    let (c, k) = (call as usize, task as usize);
    LaunchRow {
        call: t.event_name(c).to_string(),
        call_ts_ns: t.events.ts_ns[c],
        call_dur_ns: t.events.dur_ns.at(c),
        thread: t.thread_label(t.events.thread[c]),
        op: op.map(|o| t.event_name(o as usize).to_string()),
        task: t.event_name(k).to_string(),
        stream: t.events.stream.at(k),
        task_ts_ns: t.events.ts_ns[k],
        latency_ns,
        queue_depth,
        tasks,
    }
}

/// Sorted values with the quantile rule of every analysis, the mean, and the values.
struct Spread {
    sorted: Vec<i64>,
    mean: f64,
}

impl Spread {
    fn of(v: &[i64]) -> Spread {
        let mut sorted = v.to_vec();
        sorted.sort_unstable();
        let mean = if sorted.is_empty() {
            0.0
        } else {
            sorted.iter().sum::<i64>() as f64 / sorted.len() as f64
        };
        Spread { sorted, mean }
    }
    fn q(&self, x: f64) -> f64 {
        if self.sorted.is_empty() {
            0.0
        } else {
            quantile(&self.sorted, x)
        }
    }
    fn max(&self) -> i64 {
        self.sorted.last().copied().unwrap_or(0)
    }
    fn count(&self, f: impl Fn(i64) -> bool) -> u64 {
        self.sorted.iter().filter(|&&x| f(x)).count() as u64
    }
}

fn latency_stats(v: &[i64]) -> LatencyStats {
    let s = Spread::of(v);
    LatencyStats {
        count: s.sorted.len() as u64,
        p50_ns: s.q(0.5),
        p90_ns: s.q(0.9),
        p99_ns: s.q(0.99),
        max_ns: s.max(),
        mean_ns: s.mean,
        negative: s.count(|x| x < 0),
    }
}

fn depth_stats(v: &[i64]) -> DepthStats {
    let s = Spread::of(v);
    DepthStats {
        p50: s.q(0.5),
        p90: s.q(0.9),
        max: s.max(),
        mean: s.mean,
        empty_queue: s.count(|x| x == 0),
    }
}

/// For one gap `[a, b)` of `d`: the first device task starting at or after `b` and its launch
/// call, when the call is known. Searched from where `cursor` last ended: gaps asked in time
/// order each start next to the previous answer (a binary search over the whole list missed the
/// cache at every step).
pub fn next_launch(
    t: &Tables,
    d: &Device,
    l: &Launches,
    cursor: &mut Gallop,
    b: i64,
) -> Option<Launch> {
    let k = cursor.partition_point(&d.events, |&i| t.events.ts_ns[i as usize] < b);
    l.of(d, t, k)
}

fn host_bound(t: &Tables, d: &Device, l: &Launches, min_gap_ns: i64) -> HostBound {
    let gaps = super::devices::busy::device_gaps(t, d, min_gap_ns);
    let (mut n, mut ns) = (0, 0);
    let mut cursor = Gallop::default();
    for &(a, b) in &gaps {
        if next_launch(t, d, l, &mut cursor, b).is_some_and(|x| x.late(a)) {
            n += 1;
            ns += b - a;
        }
    }
    let idle: i64 = gaps.iter().map(|g| g.1 - g.0).sum();
    HostBound {
        gaps: gaps.len() as u64,
        idle_ns: idle,
        host_bound_gaps: n,
        host_bound_ns: ns,
        pct_of_idle: pct(ns, idle),
    }
}

/// Host API calls of the device's file by name: Ascend `CANN` calls (the level prefix before
/// `@` dropped, as msprof-analyze's cann_api_sum names them), Kineto runtime calls (events with
/// a correlation id). Returns the top_n by total, the rest (names, calls, ns), and the total.
fn host_apis(
    t: &Tables,
    d: &Device,
    link: Link,
    top_n: usize,
) -> (Vec<DurStats>, (u64, u64, i64), i64) {
    let mut by_name: FxHashMap<&str, Vec<i64>> = FxHashMap::default();
    for i in 0..t.events.len() {
        let p = t.event_process(i);
        if t.processes.file[p.idx()] != d.file || t.events.category[i] != Category::HostOp {
            continue;
        }
        let role = t.processes.role[p.idx()];
        let name = t.event_name(i);
        let name = match link {
            // Flow links with CANN calls: a file whose CANN calls share no task's connection
            // id (the 2024 trace_view.json of ascend-misc/mstt); its host APIs are still those.
            Link::ConnectionId | Link::Flow if role == ProcessRole::CannApi => {
                name.split_once('@').map_or(name, |x| x.1)
            }
            Link::Correlation
                if role == ProcessRole::Host && t.events.correlation_id.at(i) >= 0 =>
            {
                name
            }
            _ => continue,
        };
        by_name.entry(name).or_default().push(t.events.dur_ns.at(i));
    }
    let total = super::stats::wide_sum(by_name.values().flatten().copied());
    let mut rows: Vec<DurStats> = by_name
        .into_iter()
        .map(|(n, v)| dur_stats(n.to_string(), v, total))
        .collect();
    rows.sort_by(|a, b| b.sum_ns.cmp(&a.sum_ns).then_with(|| a.name.cmp(&b.name)));
    let rest = rows.split_off(top_n.min(rows.len()));
    let other = (
        rest.len() as u64,
        rest.iter().map(|r| r.count).sum(),
        crate::units::sum_ns(rest.iter().map(|r| r.sum_ns)),
    );
    (rows, other, super::stats::saturated(total))
}

/// The PyTorch op above each (task, launch call) pair: on Ascend the host end of a flow that
/// finishes on the task (`async_npu`, `torch_to_npu`), else the innermost host op enclosing the
/// call on its thread (Kineto). One pass over flows and one over events for the whole batch.
pub fn ops_above(t: &Tables, pairs: &[(u32, u32)]) -> Vec<Option<u32>> {
    above(t, pairs, true)
}

/// `ops_above` by flows only (no enclosing-op search): linear in events, for callers with one
/// pair per replay or launch rather than a top N.
pub fn flow_ops_above(t: &Tables, pairs: &[(u32, u32)]) -> Vec<Option<u32>> {
    above(t, pairs, false)
}

fn above(t: &Tables, pairs: &[(u32, u32)], enclose: bool) -> Vec<Option<u32>> {
    if pairs.is_empty() {
        return Vec::new();
    }
    // Flows that finish on a wanted task: (thread, ts) → flow id; then the starts of those ids.
    let want_finish: FxHashMap<(ThreadId, i64), usize> = pairs
        .iter()
        .enumerate()
        .map(|(k, &(task, _))| {
            (
                (
                    t.events.thread[task as usize],
                    t.events.ts_ns[task as usize],
                ),
                k,
            )
        })
        .collect();
    let f = &t.flows;
    let mut id_of: FxHashMap<u64, usize> = FxHashMap::default();
    for j in 0..f.len() {
        if f.phase[j] == FlowPhase::Finish
            && let Some(&k) = want_finish.get(&(f.thread[j], f.ts_ns[j]))
        {
            id_of.entry(f.id[j]).or_insert(k);
        }
    }
    // (thread, ts) of the host end of each pair, when a flow gives it.
    let mut start_of: Vec<Option<(ThreadId, i64)>> = vec![None; pairs.len()];
    if !id_of.is_empty() {
        for j in 0..f.len() {
            if f.phase[j] == FlowPhase::Start
                && let Some(&k) = id_of.get(&f.id[j])
            {
                start_of[k].get_or_insert((f.thread[j], f.ts_ns[j]));
            }
        }
    }
    // Best candidate so far per pair: (start, index), innermost = latest start.
    let mut best: Vec<Option<(i64, u32)>> = vec![None; pairs.len()];
    // Pairs a flow names, by the flow's host end; the others (enclosing search) by thread.
    let mut by_start: FxHashMap<(ThreadId, i64), Vec<usize>> = FxHashMap::default();
    // Per thread (by index): (call start, pair) sorted by start, so an op finds the calls that
    // start inside it by a search (from its thread's cursor) instead of testing every pair.
    let mut by_thread: Vec<Vec<(i64, usize)>> = vec![Vec::new(); t.threads.len()];
    // Threads some flow's host end is on: only their ops look `by_start` up.
    let mut flow_thread = vec![false; t.threads.len()];
    for (k, &(_, call)) in pairs.iter().enumerate() {
        // A flow that starts on the runtime call itself (Kineto's `ac2g`) names no op above it.
        let own = (
            t.events.thread[call as usize],
            t.events.ts_ns[call as usize],
        );
        let runtime = t.events.correlation_id.at(call as usize) >= 0;
        match start_of[k].filter(|&at| at != own || !runtime) {
            Some(at) => {
                flow_thread[at.0.idx()] = true;
                by_start.entry(at).or_default().push(k);
            }
            None if enclose => {
                by_thread[t.events.thread[call as usize].idx()].push((iv(t, call).0, k));
            }
            None => {}
        }
    }
    for v in by_thread.iter_mut() {
        v.sort_unstable();
    }
    let mut cursor = vec![Gallop::default(); t.threads.len()];
    for i in 0..t.events.len() {
        if t.events.category[i] != Category::HostOp {
            continue;
        }
        let th = t.events.thread[i];
        let enclosing = &by_thread[th.idx()];
        let flows = if flow_thread[th.idx()] {
            by_start.get(&(th, t.events.ts_ns[i]))
        } else {
            None
        };
        if flows.is_none() && enclosing.is_empty() {
            continue;
        }
        let (s, e) = iv(t, i as u32);
        for &k in flows.into_iter().flatten() {
            if best[k].is_none_or(|b| (s, i as u32) > b) {
                best[k] = Some((s, i as u32));
            }
        }
        // The calls that start inside [s, e]: searched from where this thread's last op's
        // search ended (a thread's ops come nearly in start order).
        let lo = cursor[th.idx()].partition_point(enclosing, |&(cs, _)| cs < s);
        let inside = enclosing[lo..].iter().take_while(|&&(cs, _)| cs <= e);
        for &(_, k) in inside {
            let (cs, ce) = iv(t, pairs[k].1);
            let hit =
                i as u32 != pairs[k].1 && s <= cs && e >= ce && t.events.correlation_id.at(i) < 0;
            if hit && best[k].is_none_or(|b| (s, i as u32) > b) {
                best[k] = Some((s, i as u32));
            }
        }
    }
    best.into_iter().map(|b| b.map(|x| x.1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs cover every position once, in order, each of one value and as long as it goes.
    #[test]
    fn runs_split_at_every_change_of_value() {
        let v = [7u32, 7, 7, NO_LAUNCH, 3, 7, 7, 3];
        let got: Vec<(usize, usize)> = runs(&v).collect();
        assert_eq!(got, vec![(0, 3), (3, 1), (4, 1), (5, 2), (7, 1)]);
        assert_eq!(runs(&[]).count(), 0);
        assert_eq!(runs(&[1]).collect::<Vec<_>>(), vec![(0, 1)]);
    }
}
