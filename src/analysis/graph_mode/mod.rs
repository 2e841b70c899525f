//! Graph mode (docs/analyses/graph_mode.md): the graph replays each file's host issued, the device
//! work of each replay, the captures that recorded graphs, replays per step, and the ops inside the
//! replays. Kineto ties a replay's kernels, copies and sets to their `cudaGraphLaunch` /
//! `hipGraphLaunch` by correlation id (exact). Ascend has no replay record
//! (docs/formats/graph-mode.md): tasks of a graph carry its `Model Id`, every replay the same
//! one, so a graph's tasks are cut into replays of the graph's task count (the period of its
//! kernel-name sequence, or its task count over the replay calls when one graph is replayed)
//! and paired with the `aclmdlRIExecuteAsync` calls in issue order (one stream runs replays in
//! the order they were issued).
//!
//! The ops inside replays come from the launches a capture recorded: each distinct replayed
//! sequence of device events is matched to a capture (connection ids, graph identity, or an
//! alignment that tolerates launches without a device event), in the file or, at the run's
//! finish ([`companions`]), in a capture trace beside it, or to the steps of an eager run
//! ([`eager`]).

mod align;
mod calls;
pub mod companions;
mod eager;
pub mod extract;
mod fill;
mod matching;
mod ops;
mod replays;
mod sequences;

use super::cross_rank::StepWindows;
use super::devices::Device;
pub use crate::contract::graph_mode::*;
use crate::model::{ProcessRole, Tables};
use extract::{GraphExtract, SeqMatch, Source, Strings};
use matching::Candidate;
pub use matching::{MIN_CAPTURE_AGREEMENT_PCT, MIN_EAGER_AGREEMENT_PCT};
pub use replays::tasks_per_replay;

/// Graph mode of every file of `t` that has graph launches, graph tasks or captures, and what
/// each file hands to the run's finish (an eager map's steps when its path is in `eager`).
pub fn compute(
    t: &Tables,
    devices: &[Device],
    windows: &StepWindows,
    top_n: usize,
    eager: &[String],
) -> (GraphMode, Vec<GraphExtract>) {
    let calls = calls::host_calls(t);
    let windows = windows.get();
    let mut files = Vec::new();
    let mut extracts = Vec::new();
    for (f, hc) in calls.iter().enumerate() {
        let devs: Vec<&Device> = devices.iter().filter(|d| d.file.idx() == f).collect();
        let mut x = GraphExtract {
            file: t.files.path[f].clone(),
            rank: t.files.rank[f],
            device_events: devs.iter().map(|d| d.events.len() as u64).sum(),
            ..GraphExtract::default()
        };
        let graph_tasks = devs
            .iter()
            .flat_map(|d| d.events.iter())
            .any(|&i| t.events.graph_id.at(i as usize) >= 0);
        if hc.graph_launches.is_empty() && hc.captures.is_empty() && !graph_tasks {
            if eager.contains(&x.file) {
                let mut s = Strings::default();
                x.eager = eager::steps(t, &devs, &windows[f], &mut s);
                x.strings = s.list;
            }
            extracts.push(x);
            continue;
        }
        let g = one_file(t, f, hc, &devs, &windows[f], top_n, &mut x);
        if let Some(g) = g {
            x.active = true;
            files.push(g);
        }
        extracts.push(x);
    }
    (GraphMode { files }, extracts)
}

/// Graph mode of file `f`, filling its extract; None when it has nothing to report.
fn one_file(
    t: &Tables,
    f: usize,
    hc: &calls::HostCalls,
    devs: &[&Device],
    w: &super::cross_rank::Windows,
    top_n: usize,
    x: &mut GraphExtract,
) -> Option<GraphFile> {
    // Each device's events are by start already; several devices of one file are merged (one
    // device's list is read where it is: a copy is 8 MB on json1g).
    let merged: Vec<u32>;
    let dev_events: &[u32] = match devs {
        [d] => &d.events,
        _ => {
            let mut v: Vec<u32> = devs.iter().flat_map(|d| d.events.iter().copied()).collect();
            v.sort_by_key(|&i| (t.events.ts_ns[i as usize], i));
            merged = v;
            &merged
        }
    };
    let kineto = devs
        .iter()
        .any(|d| t.processes.role[d.process.idx()] == ProcessRole::KinetoDevice);
    let (mut replays, attribution) = if kineto {
        (replays::by_correlation(t, hc, dev_events), "correlation")
    } else {
        let mut r = replays::by_model_id(t, hc, dev_events);
        let linked = replays::by_connection(t, hc, dev_events, &r);
        let how = if r.is_empty() && !linked.is_empty() {
            "connection_id"
        } else {
            "model_id"
        };
        r.extend(linked);
        (r, how)
    };
    replays.sort_by_key(|r| (t.events.ts_ns[r.events[0] as usize], r.events[0]));
    let mut s = Strings::default();
    let caps = calls::captures_of(t, f, hc, t.files.len(), &mut s);
    if hc.graph_launches.is_empty() && replays.is_empty() && caps.windows.is_empty() {
        return None;
    }
    let mut g = GraphFile {
        file: t.files.path[f].clone(),
        rank: t.files.rank[f],
        role: "replays".into(),
        attribution: if replays.is_empty() {
            "none".into()
        } else {
            attribution.into()
        },
        graph_launches: hc.graph_launches.len() as u64,
        step_source: w.source().as_str().into(),
        ..GraphFile::default()
    };
    g.capture_windows = caps.windows.len() as u64;
    g.capture_ns = crate::units::sum_ns(caps.windows.iter().map(|w| w.1 - w.0));
    g.captured_launches = caps.launches.iter().map(|l| l.len() as u64).sum();
    g.captured_ops = fill::top_counts(caps.ops.iter().flatten().map(|s| s.as_str()), top_n);
    let (seqs, seq_of) = sequences::sequences(t, &replays, &mut s);
    let device_ns = fill::fill_replays(t, &mut g, &replays, &seq_of, w, top_n, kineto);
    fill::fill_steps(t, &mut g, &replays, &device_ns, devs, w);
    let matches = match_in_file(&seqs, &caps.recorded, &g.file, kineto);
    g.ops_in_graphs = ops::ops_in_graphs(&seqs, &matches, &s, top_n);
    g.caveats = fill::caveats(&g, &replays, attribution);
    x.replay_pids = pids(t, &hc.graph_launches);
    x.capture_pids = caps.recorded.iter().map(|r| r.pid).collect();
    x.capture_pids.sort_unstable();
    x.capture_pids.dedup();
    x.graph_launches = g.graph_launches;
    x.replays = g.replays;
    x.capture_windows = g.capture_windows;
    x.captured_launches = g.captured_launches;
    x.captures = caps.recorded;
    if matches.iter().any(|m| m.source == Source::None) {
        x.sequences = seqs;
        x.matches = matches;
    }
    x.strings = s.list;
    Some(g)
}

/// The distinct OS process ids of `calls`.
fn pids(t: &Tables, calls: &[u32]) -> Vec<i64> {
    let mut v: Vec<i64> = calls.iter().map(|&c| calls::pid(t, c)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Each sequence matched to the file's own captures: by connection id (Ascend), else by
/// alignment.
fn match_in_file(
    seqs: &[extract::Sequence],
    caps: &[extract::Recorded],
    file: &str,
    kineto: bool,
) -> Vec<SeqMatch> {
    let index = if kineto {
        Default::default()
    } else {
        matching::conn_index(caps)
    };
    let cands: Vec<Candidate> = caps
        .iter()
        .map(|rec| Candidate {
            rec,
            file,
            own: true,
        })
        .collect();
    seqs.iter()
        .map(|q| {
            (!index.is_empty())
                .then(|| matching::by_connection(q, caps, &index, file))
                .flatten()
                .unwrap_or_else(|| matching::to_capture(q, &cands))
        })
        .collect()
}
