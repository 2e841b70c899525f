//! Which device events are a replay: Kineto ties a replay's kernels, copies and sets to their
//! `cudaGraphLaunch` / `hipGraphLaunch` by correlation id (exact); Ascend cuts each graph's tasks
//! (by `Model Id`) into replays of the graph's task count and pairs them with the
//! `aclmdlRIExecuteAsync` calls in issue order, or, without model ids, takes the tasks that carry
//! a replay call's connection id (docs/analyses/graph_mode.md).

use super::calls::HostCalls;
use crate::analysis::devices::launches::NO_LAUNCH;
use crate::model::hash::{FxHashMap, FxHashSet};
use crate::model::{StrId, Tables};
use std::collections::BTreeMap;

/// One replay while it is built: its launch (or `NO_LAUNCH`), graph and device events by start.
pub struct Building {
    pub launch: u32,
    pub graph: i64,
    pub events: Vec<u32>,
}

/// Kineto: the device events carrying a graph launch's correlation id are its replay.
pub fn by_correlation(t: &Tables, hc: &HostCalls, dev_events: &[u32]) -> Vec<Building> {
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
pub fn by_model_id(t: &Tables, hc: &HostCalls, dev_events: &[u32]) -> Vec<Building> {
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
pub fn by_connection(
    t: &Tables,
    hc: &HostCalls,
    dev_events: &[u32],
    paired: &[Building],
) -> Vec<Building> {
    let used: FxHashSet<u32> = paired.iter().map(|r| r.launch).collect();
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
    // A replay's tasks follow each other: the last id's slot answers most lookups. Counted
    // first, each list is allocated at its size (they live to the end of the analysis; json1g:
    // 49,700 lists, 2 M tasks).
    let mut last: (i64, Option<usize>) = (-1, None);
    let mut slot_of = |i: u32| {
        if t.events.graph_id.at(i as usize) >= 0 {
            return None;
        }
        let c = t.events.connection_id.at(i as usize);
        if c != last.0 {
            last = (c, slot.get(&c).copied());
        }
        last.1
    };
    let mut counts = vec![0usize; out.len()];
    for &i in dev_events {
        if let Some(k) = slot_of(i) {
            counts[k] += 1;
        }
    }
    for (b, &n) in out.iter_mut().zip(&counts) {
        b.events.reserve_exact(n);
    }
    for &i in dev_events {
        if let Some(k) = slot_of(i) {
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
