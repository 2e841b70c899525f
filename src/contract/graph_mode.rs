//! The report contract of `analysis::graph_mode`: per input file, the graph replays the host
//! issued, the device work each replay ran, the captures that recorded graphs, the replays per
//! step and the ops inside the replays (docs/analyses/graph_mode.md). The computation lives in
//! `analysis/graph_mode.rs`.

use super::stats::DurStats;
use serde::{Deserialize, Serialize};

/// Graph mode of every input file (files without graph launches, graph tasks or captures are
/// left out).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GraphMode {
    pub files: Vec<GraphFile>,
}

/// One input file in graph mode.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GraphFile {
    pub file: String,
    /// -1 when unknown.
    pub rank: i32,
    /// How device events were tied to their replay: `correlation` (Kineto: every kernel, copy
    /// and set of a replay carries its graph launch's correlation id: exact), `model_id` (Ascend:
    /// tasks of graph `Model Id` cut into replays of the graph's task count, paired with the
    /// replay calls in issue order), or `none` (no device work of a replay in the file).
    pub attribution: String,
    /// Host calls that replay a graph: `cudaGraphLaunch`, `hipGraphLaunch`, `cuGraphLaunch`,
    /// `aclmdlRIExecuteAsync`, `aclmdlRIExecute`.
    pub graph_launches: u64,
    /// Replays with device work in the file.
    pub replays: u64,
    /// Graph launches whose device work is not in the file (issued before the device capture
    /// ended, or not linked).
    pub launches_without_device_work: u64,
    /// Replays whose launch is not in the file (issued before the host capture began).
    pub replays_without_launch: u64,
    /// Distinct graphs replayed (Ascend model ids; Kineto `graph id` when written, else 0).
    pub graphs: u64,
    /// Device events (kernels, collectives, copies, sets, waits) of the replays.
    pub replay_device_events: u64,
    /// Sum of their durations, ns.
    pub replay_device_ns: i64,
    /// Sum of the durations of the file's other device events (eager work), ns.
    pub eager_device_ns: i64,
    /// replay_device_ns / (replay_device_ns + eager_device_ns), percent.
    pub replay_pct_of_device_ns: f64,
    /// Stream-capture windows (BeginCapture .. EndCapture; `aclmdlRICaptureBegin` .. End).
    pub capture_windows: u64,
    /// Launch calls inside capture windows: recorded into a graph, not executed.
    pub captured_launches: u64,
    /// Time inside capture windows, ns.
    pub capture_ns: i64,
    /// The host ops whose launches were recorded during capture, by count (top N and `(other)`).
    pub captured_ops: Vec<NameCount>,
    /// Distributions over replays, ns: `span` (first device start to last device end), `busy`
    /// (union of the replay's device events), `gaps_inside` (span − busy), `gap_to_next` (this
    /// replay's last end to the next replay's first start, 0 when they overlap: the host's
    /// overhead between graph replays). `pct_of_total` is of the sum of spans.
    pub replay_stats: Vec<DurStats>,
    /// The host ops that issued the replays (innermost enclosing op of the launch), by count.
    pub issuing_ops: Vec<NameCount>,
    /// Every replay in time order (the first 100 unless `--detail full`: report::detail).
    pub per_replay: Vec<Replay>,
    /// Per step (ProfilerStep / Step Trace / forward scope) with a replay.
    pub steps: Vec<GraphStep>,
    /// Which step windows `steps` uses: `ProfilerStep`, `Step Trace`, `forward scopes`, `none`.
    pub step_source: String,
    /// Device time inside replays per op: by the op that launched each task during capture when
    /// the capture is in the file, else by kernel name.
    pub ops_in_graphs: OpsInGraphs,
    /// What the numbers cannot say, in words.
    pub caveats: Vec<String>,
}

/// A name and how often it occurred.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NameCount {
    pub name: String,
    pub count: u64,
}

/// One replay.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Replay {
    /// The replay call's start, ns (-1 when its launch is not in the file).
    pub launch_ns: i64,
    /// The graph (Ascend model id, Kineto graph id; -1 unknown).
    pub graph: i64,
    pub device_events: u64,
    pub start_ns: i64,
    pub end_ns: i64,
    pub busy_ns: i64,
    /// end − start − busy, ns.
    pub gaps_inside_ns: i64,
    /// To the next replay's first device start, ns (-1 for the last replay).
    pub gap_to_next_ns: i64,
    /// The step key of the replay's launch (ProfilerStep N), -1 outside every step.
    pub step: i64,
    /// The host op that issued it; empty when none was found.
    pub issued_by: String,
}

/// Replays of one step, by the step of each replay's launch; eager device work by the step of
/// its own launch (its start when no launch is linked).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GraphStep {
    pub step: i64,
    pub replays: u64,
    pub graph_device_ns: i64,
    pub eager_device_ns: i64,
    /// graph_device_ns / (graph + eager), percent.
    pub graph_pct: f64,
    /// Between consecutive replays of the step: sum and largest gap, ns.
    pub between_replay_gap_ns: i64,
    pub max_between_replay_gap_ns: i64,
}

/// Device time inside replays, per op.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OpsInGraphs {
    /// `capture` (the k-th task of a replay matched to the k-th launch recorded in a capture of
    /// the same length, Kineto), `connection_id` (Ascend: a replayed task keeps the connection id
    /// of its capture-time launch), or `kernel_name` (no capture in the file: grouped by name).
    pub source: String,
    /// Replays whose tasks were tied to captured launches (0 for `kernel_name`).
    pub replays_matched: u64,
    /// Top rows by time; `pct_of_total` is of replay_device_ns.
    pub rows: Vec<DurStats>,
    /// Rows beyond the top N: (rows, count, ns).
    pub other: (u64, u64, i64),
    /// Replay device time by kernel family (attention, matmul, ...), whatever the source.
    pub families: Vec<DurStats>,
}
