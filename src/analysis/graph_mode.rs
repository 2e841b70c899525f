//! Graph mode (docs/analyses/graph_mode.md): the graph replays each file's host issued, the device
//! work of each replay, the captures that recorded graphs, replays per step, and the ops inside the
//! replays. Kineto ties a replay's kernels, copies and sets to their `cudaGraphLaunch` /
//! `hipGraphLaunch` by correlation id (exact). Ascend has no replay record
//! (docs/formats/graph-mode.md): tasks of a graph carry its `Model Id`, every replay the same
//! one, so a graph's tasks are cut into replays of the graph's task count (the period of its
//! kernel-name sequence, or its task count over the replay calls when one graph is replayed)
//! and paired with the `aclmdlRIExecuteAsync` calls in issue order (one stream runs replays in
//! the order they were issued).

use super::cross_rank::step_windows;
use super::devices::launches::{NO_LAUNCH, launches};
use super::devices::{Device, iv};
use super::dispatch::flow_ops_above;
use super::families::family_of;
use super::host_calls::{Call, capture_windows, classify};
use super::intervals::{Iv, total, union};
use super::stats::{dur_stats, wide_sum};
pub use crate::contract::graph_mode::*;
use crate::model::hash::FxHashMap;
use crate::model::{Category, FileId, ProcessRole, StrId, Tables};
use crate::units::sum_ns;
use std::collections::BTreeMap;

/// The host calls of one file that graph mode reads, in time order.
#[derive(Default)]
struct HostCalls {
    graph_launches: Vec<u32>,
    launches: Vec<u32>,
    captures: Vec<(usize, Call)>,
    span: Option<(i64, i64)>,
}

/// One replay while it is built: its launch (or `NO_LAUNCH`), graph and device events by start.
struct Building {
    launch: u32,
    graph: i64,
    events: Vec<u32>,
}

/// Graph mode of every file of `t` that has graph launches, graph tasks or captures.
pub fn compute(t: &Tables, devices: &[Device], top_n: usize) -> GraphMode {
    let calls = host_calls(t);
    let windows = step_windows(t);
    let mut files = Vec::new();
    for (f, hc) in calls.iter().enumerate() {
        let devs: Vec<&Device> = devices.iter().filter(|d| d.file.idx() == f).collect();
        let graph_tasks = devs
            .iter()
            .flat_map(|d| d.events.iter())
            .any(|&i| t.events.graph_id.at(i as usize) >= 0);
        if hc.graph_launches.is_empty() && hc.captures.is_empty() && !graph_tasks {
            continue;
        }
        let mut dev_events: Vec<u32> = devs.iter().flat_map(|d| d.events.iter().copied()).collect();
        // Each device's events are by start already; several devices of one file are merged.
        if devs.len() > 1 {
            dev_events.sort_by_key(|&i| (t.events.ts_ns[i as usize], i));
        }
        let kineto = devs
            .iter()
            .any(|d| t.processes.role[d.process.idx()] == ProcessRole::KinetoDevice);
        let (mut replays, attribution) = if kineto {
            (by_correlation(t, hc, &dev_events), "correlation")
        } else {
            let mut r = by_model_id(t, hc, &dev_events);
            let linked = by_connection(t, hc, &dev_events, &r);
            let how = if r.is_empty() && !linked.is_empty() {
                "connection_id"
            } else {
                "model_id"
            };
            r.extend(linked);
            (r, how)
        };
        replays.sort_by_key(|r| (t.events.ts_ns[r.events[0] as usize], r.events[0]));
        let caps = captures_of(t, f, hc, calls.len());
        if hc.graph_launches.is_empty() && replays.is_empty() && caps.windows.is_empty() {
            continue;
        }
        let mut g = GraphFile {
            file: t.files.path[f].clone(),
            rank: t.files.rank[f],
            attribution: if replays.is_empty() {
                "none".into()
            } else {
                attribution.into()
            },
            graph_launches: hc.graph_launches.len() as u64,
            step_source: windows[f].source().as_str().into(),
            ..GraphFile::default()
        };
        g.capture_windows = caps.windows.len() as u64;
        g.capture_ns = sum_ns(caps.windows.iter().map(|w| w.1 - w.0));
        g.captured_launches = caps.launches.iter().map(|l| l.len() as u64).sum();
        g.captured_ops = top_counts(caps.ops.iter().flatten().map(|s| s.as_str()), top_n);
        fill_replays(t, &mut g, &replays, &windows[f], top_n, kineto);
        fill_steps(t, &mut g, &replays, &devs, &windows[f]);
        g.ops_in_graphs = ops_in_graphs(t, &replays, &caps, kineto, top_n);
        g.caveats = caveats(&g, &replays, attribution);
        files.push(g);
    }
    GraphMode { files }
}

/// Graph launches, launches and capture calls of every file, one pass over the events.
fn host_calls(t: &Tables) -> Vec<HostCalls> {
    let mut out: Vec<HostCalls> = (0..t.files.len()).map(|_| HostCalls::default()).collect();
    let mut memo: FxHashMap<StrId, Call> = FxHashMap::default();
    for i in 0..t.events.len() {
        let c = t.events.category[i];
        if c.is_device() || c == Category::VendorOverlap || t.event_is_device_side(i) {
            continue;
        }
        let h = &mut out[t.event_file(i).idx()];
        let (s, e) = (t.events.ts_ns[i], t.events.end_ns(i));
        h.span = Some(h.span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
        if c != Category::HostOp {
            continue;
        }
        let name = t.events.name[i];
        match *memo.entry(name).or_insert_with(|| classify(t.str(name))) {
            Call::GraphLaunch => h.graph_launches.push(i as u32),
            Call::Launch => h.launches.push(i as u32),
            c @ (Call::CaptureBegin | Call::CaptureEnd) => h.captures.push((i, c)),
            Call::Other => {}
        }
    }
    for h in &mut out {
        h.graph_launches
            .sort_by_key(|&i| (t.events.ts_ns[i as usize], i));
        h.launches.sort_by_key(|&i| (t.events.ts_ns[i as usize], i));
    }
    out
}

/// Kineto: the device events carrying a graph launch's correlation id are its replay.
fn by_correlation(t: &Tables, hc: &HostCalls, dev_events: &[u32]) -> Vec<Building> {
    let mut slot: FxHashMap<i64, usize> = FxHashMap::default();
    let mut out: Vec<Building> = Vec::new();
    for &l in &hc.graph_launches {
        let c = t.events.correlation_id.at(l as usize);
        if c >= 0 && !slot.contains_key(&c) {
            slot.insert(c, out.len());
            out.push(Building {
                launch: l,
                graph: -1,
                events: Vec::new(),
            });
        }
    }
    for &i in dev_events {
        let c = t.events.correlation_id.at(i as usize);
        if let Some(&k) = slot.get(&c) {
            let b = &mut out[k];
            b.events.push(i);
            let g = t.events.graph_id.at(i as usize);
            if g >= 0 {
                b.graph = g;
            }
        }
    }
    out.retain(|b| !b.events.is_empty());
    out
}

/// Ascend: each graph's tasks (by start) cut into replays of its task count, paired with the
/// replay calls in issue order.
fn by_model_id(t: &Tables, hc: &HostCalls, dev_events: &[u32]) -> Vec<Building> {
    let mut by_graph: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
    for &i in dev_events {
        let g = t.events.graph_id.at(i as usize);
        if g >= 0 {
            by_graph.entry(g).or_default().push(i);
        }
    }
    // The replay calls (aclmdlRIExecuteAsync) in issue order.
    let acl: Vec<u32> = hc
        .graph_launches
        .iter()
        .copied()
        .filter(|&l| t.str(t.events.name[l as usize]).contains("aclmdl"))
        .collect();
    let calls = acl.len();
    let single = by_graph.len() == 1;
    let mut out: Vec<Building> = Vec::new();
    for (g, events) in by_graph {
        let names: Vec<StrId> = events.iter().map(|&i| t.events.name[i as usize]).collect();
        let n = tasks_per_replay(&names, if single { calls } else { 0 });
        for chunk in events.chunks(n) {
            out.push(Building {
                launch: NO_LAUNCH,
                graph: g,
                events: chunk.to_vec(),
            });
        }
    }
    out.sort_by_key(|r| (t.events.ts_ns[r.events[0] as usize], r.events[0]));
    // One stream runs its replays in issue order: the k-th replay belongs to the next replay
    // call that began before it.
    let mut j = 0;
    for r in &mut out {
        let start = t.events.ts_ns[r.events[0] as usize];
        if j < acl.len() && t.events.ts_ns[acl[j] as usize] <= start {
            r.launch = acl[j];
            j += 1;
        }
    }
    out
}

/// Ascend without model ids (a CANN that writes none for captured graphs): the tasks that carry
/// the connection id of a replay call no model-id replay was paired with.
fn by_connection(
    t: &Tables,
    hc: &HostCalls,
    dev_events: &[u32],
    paired: &[Building],
) -> Vec<Building> {
    let used: crate::model::hash::FxHashSet<u32> = paired.iter().map(|r| r.launch).collect();
    let mut slot: FxHashMap<i64, usize> = FxHashMap::default();
    let mut out: Vec<Building> = Vec::new();
    for &l in &hc.graph_launches {
        let c = t.events.connection_id.at(l as usize);
        if c >= 0 && !used.contains(&l) && !slot.contains_key(&c) {
            slot.insert(c, out.len());
            out.push(Building {
                launch: l,
                graph: -1,
                events: Vec::new(),
            });
        }
    }
    if out.is_empty() {
        return out;
    }
    for &i in dev_events {
        if t.events.graph_id.at(i as usize) >= 0 {
            continue;
        }
        if let Some(&k) = slot.get(&t.events.connection_id.at(i as usize)) {
            out[k].events.push(i);
        }
    }
    out.retain(|b| !b.events.is_empty());
    out
}

/// The task count of one replay of a graph whose tasks are named `names`: the smallest period of
/// the sequence; when `calls` replay calls are known and one graph is replayed, the task count
/// over the calls if that is a whole multiple of the period (a graph may repeat a layer inside).
pub fn tasks_per_replay(names: &[StrId], calls: usize) -> usize {
    let n = names.len();
    if n == 0 {
        return 1;
    }
    // Prefix function (Knuth-Morris-Pratt): the smallest period is n - pi[n-1].
    let mut pi = vec![0usize; n];
    for i in 1..n {
        let mut k = pi[i - 1];
        while k > 0 && names[i] != names[k] {
            k = pi[k - 1];
        }
        if names[i] == names[k] {
            k += 1;
        }
        pi[i] = k;
    }
    let period = n - pi[n - 1];
    if calls > 0 && n.is_multiple_of(calls) && (n / calls).is_multiple_of(period) {
        n / calls
    } else {
        period
    }
}

/// The file's capture windows, the launches recorded in each and the ops that issued them.
struct Captures {
    windows: Vec<Iv>,
    launches: Vec<Vec<u32>>,
    ops: Vec<Vec<String>>,
}

fn captures_of(t: &Tables, f: usize, hc: &HostCalls, nf: usize) -> Captures {
    let mut spans = vec![None; nf];
    spans[f] = hc.span;
    let mut windows: Vec<Iv> = capture_windows(t, &hc.captures, &spans)
        .into_values()
        .flatten()
        .filter(|w| w.file == f)
        .map(|w| (w.start, w.end))
        .collect();
    windows.sort_unstable();
    let launches: Vec<Vec<u32>> = windows
        .iter()
        .map(|&(s, e)| {
            hc.launches
                .iter()
                .copied()
                .filter(|&l| {
                    let (a, b) = iv(t, l);
                    a >= s && b <= e
                })
                .collect()
        })
        .collect();
    let all: Vec<u32> = launches.iter().flatten().copied().collect();
    let names = enclosing_ops(t, &all);
    let mut k = 0;
    let ops = launches
        .iter()
        .map(|ls| {
            let v = names[k..k + ls.len()].to_vec();
            k += ls.len();
            v
        })
        .collect();
    Captures {
        windows,
        launches,
        ops,
    }
}

/// The innermost host op enclosing each call on its OS thread (same file and tid: torch_npu
/// writes a thread's framework ops and its CANN calls under two processes), not itself a
/// launch, replay or capture call, nor a `key=value` serving marker (`decode_actual_batch_size=4`
/// names a batch, not an op); the innermost Python frame when no op encloses it; by name, empty
/// when none.
fn enclosing_ops(t: &Tables, calls: &[u32]) -> Vec<String> {
    let mut out = enclosing_of(t, calls, Category::HostOp);
    let missing: Vec<usize> = (0..calls.len()).filter(|&k| out[k].is_empty()).collect();
    if !missing.is_empty() {
        let sub: Vec<u32> = missing.iter().map(|&k| calls[k]).collect();
        let frames = enclosing_of(t, &sub, Category::PythonFunction);
        for (k, f) in missing.into_iter().zip(frames) {
            out[k] = f;
        }
    }
    out
}

/// An op's (start, end, event row).
type Open = (i64, i64, u32);

/// `enclosing_ops` for the events of one category.
fn enclosing_of(t: &Tables, calls: &[u32], category: Category) -> Vec<String> {
    let key = |i: usize| {
        let th = t.events.thread[i];
        (t.event_file(i), t.threads.tid[th.idx()])
    };
    let mut by_thread: FxHashMap<(FileId, i64), Vec<usize>> = FxHashMap::default();
    for (k, &c) in calls.iter().enumerate() {
        by_thread.entry(key(c as usize)).or_default().push(k);
    }
    let mut ops: FxHashMap<(FileId, i64), Vec<Open>> = FxHashMap::default();
    let mut memo: FxHashMap<StrId, bool> = FxHashMap::default();
    for i in 0..t.events.len() {
        if t.events.category[i] != category || t.event_is_device_side(i) {
            continue;
        }
        let Some(list) = by_thread
            .get(&key(i))
            .map(|_| ops.entry(key(i)).or_default())
        else {
            continue;
        };
        let name = t.events.name[i];
        let op = |n: &str| classify(n) == Call::Other && !n.contains('=');
        if *memo.entry(name).or_insert_with(|| op(t.str(name))) {
            let (s, e) = iv(t, i as u32);
            list.push((s, e, i as u32));
        }
    }
    let mut out = vec![String::new(); calls.len()];
    for (th, mut ks) in by_thread {
        let Some(mut v) = ops.remove(&th) else {
            continue;
        };
        // By start, outer (longer) first; a stack sweep keeps the ops open at each call.
        v.sort_by_key(|x| (x.0, std::cmp::Reverse(x.1)));
        ks.sort_by_key(|&k| t.events.ts_ns[calls[k] as usize]);
        let mut stack: Vec<Open> = Vec::new();
        let mut j = 0;
        for k in ks {
            let (cs, ce) = iv(t, calls[k]);
            while j < v.len() && v[j].0 <= cs {
                while stack.last().is_some_and(|o| o.1 < v[j].0) {
                    stack.pop();
                }
                stack.push(v[j]);
                j += 1;
            }
            while stack.last().is_some_and(|o| o.1 < ce) {
                stack.pop();
            }
            if let Some(o) = stack.last() {
                out[k] = t.str(t.events.name[o.2 as usize]).to_string();
            }
        }
    }
    out
}

/// Counts per name, top N by count then name, and `(other)` for the rest.
fn top_counts<'a>(names: impl Iterator<Item = &'a str>, top_n: usize) -> Vec<NameCount> {
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

/// Counts, device time, per-replay rows and distributions.
fn fill_replays(
    t: &Tables,
    g: &mut GraphFile,
    replays: &[Building],
    w: &super::cross_rank::Windows,
    top_n: usize,
    kineto: bool,
) {
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
    for (r, by) in replays.iter().zip(issued) {
        let ivs: Vec<Iv> = r.events.iter().map(|&i| iv(t, i)).collect();
        let start = ivs[0].0;
        let end = ivs.iter().map(|x| x.1).max().unwrap_or(start);
        let busy = total(&union(ivs));
        g.replay_device_events += r.events.len() as u64;
        g.replay_device_ns = g.replay_device_ns.saturating_add(sum_ns(
            r.events.iter().map(|&i| t.events.dur_ns.at(i as usize)),
        ));
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
}

/// The host op that issued each replay: the innermost op enclosing its launch on the same OS
/// thread; on Ascend, when none does, the op a flow names (`dispatch::flow_ops_above`).
fn issuing_ops(t: &Tables, replays: &[Building], kineto: bool) -> Vec<String> {
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

/// Per step: replays by their launch's step; eager device work by its own launch's step (its
/// start when no launch is linked).
fn fill_steps(
    t: &Tables,
    g: &mut GraphFile,
    replays: &[Building],
    devs: &[&Device],
    w: &super::cross_rank::Windows,
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
    for r in replays {
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
        a.graph = a.graph.saturating_add(sum_ns(
            r.events.iter().map(|&i| t.events.dur_ns.at(i as usize)),
        ));
        let start = t.events.ts_ns[r.events[0] as usize];
        if let Some(e) = a.last_end {
            let gap = (start - e).max(0);
            a.gaps = a.gaps.saturating_add(gap);
            a.max_gap = a.max_gap.max(gap);
        }
        let end = r.events.iter().map(|&i| t.events.end_ns(i as usize)).max();
        a.last_end = end.max(a.last_end);
    }
    let mut eager_total = 0i64;
    for d in devs {
        let l = launches(t, d);
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
            if let Some(step) = w.step_at(at)
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

fn pct(a: i64, b: i64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 * 100.0 / b as f64
    }
}

/// Replay device time per op: Kineto by the capture of the same length (k-th task ↔ k-th
/// captured launch); Ascend by the capture-time launch a replayed task's connection id names;
/// else by kernel name.
fn ops_in_graphs(
    t: &Tables,
    replays: &[Building],
    caps: &Captures,
    kineto: bool,
    top_n: usize,
) -> OpsInGraphs {
    // Keyed by name id while the op is the kernel name (the common case: no string hashing per
    // event); by op string only for tasks a capture or connection names.
    let mut by_op: FxHashMap<&str, Vec<i64>> = FxHashMap::default();
    let mut by_name: FxHashMap<StrId, Vec<i64>> = FxHashMap::default();
    let mut all_by_name: FxHashMap<StrId, Vec<i64>> = FxHashMap::default();
    let mut matched = 0u64;
    let by_conn = if kineto {
        FxHashMap::default()
    } else {
        captured_by_connection(t, caps)
    };
    let mut source = "kernel_name";
    for r in replays {
        let cap = if kineto {
            capture_for(t, r, caps)
        } else {
            None
        };
        let hit = cap.is_some()
            || r.events
                .iter()
                .any(|&i| by_conn.contains_key(&connection(t, i)));
        matched += hit as u64;
        for (k, &i) in r.events.iter().enumerate() {
            let id = t.events.name[i as usize];
            let dur = t.events.dur_ns.at(i as usize);
            all_by_name.entry(id).or_default().push(dur);
            let op = match cap {
                Some(c) => Some(caps.ops[c][k].as_str()),
                None if by_conn.is_empty() => None,
                None => by_conn.get(&connection(t, i)).map(|s| s.as_str()),
            };
            match op {
                Some(op) => by_op.entry(op).or_default().push(dur),
                None => by_name.entry(id).or_default().push(dur),
            }
        }
    }
    for (id, d) in by_name {
        by_op.entry(t.str(id)).or_default().extend(d);
    }
    let mut families: FxHashMap<&str, Vec<i64>> = FxHashMap::default();
    for (id, d) in all_by_name {
        families.entry(family_of(t.str(id))).or_default().extend(d);
    }
    if matched > 0 {
        source = if kineto { "capture" } else { "connection_id" };
    }
    let denom = wide_sum(by_op.values().flatten().copied());
    let mut rows: Vec<_> = by_op
        .into_iter()
        .map(|(n, d)| {
            dur_stats(
                if n.is_empty() {
                    "(no op found)".into()
                } else {
                    n.to_string()
                },
                d,
                denom,
            )
        })
        .collect();
    rows.sort_by(|a, b| b.sum_ns.cmp(&a.sum_ns).then_with(|| a.name.cmp(&b.name)));
    let rest = rows.split_off(top_n.min(rows.len()));
    let mut fam: Vec<_> = families
        .into_iter()
        .map(|(n, d)| dur_stats(n.to_string(), d, denom))
        .collect();
    fam.sort_by(|a, b| b.sum_ns.cmp(&a.sum_ns).then_with(|| a.name.cmp(&b.name)));
    fam.truncate(top_n);
    OpsInGraphs {
        source: source.into(),
        replays_matched: matched,
        rows,
        other: (
            rest.len() as u64,
            rest.iter().map(|r| r.count).sum(),
            sum_ns(rest.iter().map(|r| r.sum_ns)),
        ),
        families: fam,
    }
}

fn connection(t: &Tables, i: u32) -> i64 {
    t.events.connection_id.at(i as usize)
}

/// Ascend: the op of each captured launch by its connection id.
fn captured_by_connection(t: &Tables, caps: &Captures) -> FxHashMap<i64, String> {
    let mut m = FxHashMap::default();
    for (ls, ops) in caps.launches.iter().zip(&caps.ops) {
        for (&l, op) in ls.iter().zip(ops) {
            let c = connection(t, l);
            if c >= 0 {
                m.insert(c, op.clone());
            }
        }
    }
    m
}

/// Kineto: the capture whose recorded launches match the replay's task count, the latest one
/// that began before the replay's launch (else the latest of that length).
fn capture_for(t: &Tables, r: &Building, caps: &Captures) -> Option<usize> {
    let n = r.events.len();
    let at = if r.launch != NO_LAUNCH {
        t.events.ts_ns[r.launch as usize]
    } else {
        t.events.ts_ns[r.events[0] as usize]
    };
    let same: Vec<usize> = (0..caps.launches.len())
        .filter(|&c| caps.launches[c].len() == n)
        .collect();
    same.iter()
        .rev()
        .find(|&&c| caps.windows[c].0 <= at)
        .or(same.last())
        .copied()
}

/// What the numbers cannot say.
fn caveats(g: &GraphFile, replays: &[Building], attribution: &str) -> Vec<String> {
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
