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
    /// What the file is to the run: `replays` (its own graph activity, the default), or a
    /// companion read only for the ops it names: `capture_companion` (a capture trace beside
    /// its replays: vLLM / SGLang `capture_traces/`, an ACLGraph capture profiled apart) or
    /// `eager_map` (an eager run of the same workload). A companion is left out of device
    /// time, bubbles, causes, the advisor and the verdict.
    #[serde(default)]
    pub role: String,
    /// For a replay file: its companions; for a companion: the replay files it serves.
    #[serde(default)]
    pub companions: Vec<String>,
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
    /// Index into `ops_in_graphs.graphs` (the replay's device-event sequence and its ops in
    /// order); -1 when not listed.
    #[serde(default = "minus_one")]
    pub sequence: i64,
}

fn minus_one() -> i64 {
    -1
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
    /// Where most matched device events got their op: `capture` (a replay's device events
    /// aligned to the launches recorded in the capture of its graph, in this file or a capture
    /// companion), `connection_id` (Ascend: a replayed task keeps the connection id of its
    /// capture-time launch), `eager_map` (aligned to an eager step of the same workload), or
    /// `kernel_name` (nothing matched: grouped by kernel name).
    pub source: String,
    /// Replays whose device events were tied to recorded launches (0 for `kernel_name`).
    pub replays_matched: u64,
    /// Replay device events tied to the op that launched them (summed over replays), and their
    /// share of `replay_device_events`, percent.
    #[serde(default)]
    pub matched_events: u64,
    #[serde(default)]
    pub matched_pct: f64,
    /// Their device time, ns, and its share of `replay_device_ns`, percent.
    #[serde(default)]
    pub matched_ns: i64,
    #[serde(default)]
    pub matched_ns_pct: f64,
    /// Top rows by time: an op for a matched event (the innermost host op around its recorded
    /// launch), else its kernel name; `count` = calls, `pct_of_total` is of replay_device_ns.
    pub rows: Vec<DurStats>,
    /// Rows beyond the top N: (rows, count, ns).
    pub other: (u64, u64, i64),
    /// Matched device time by the `nn.Module` around the recorded launch (Kineto Python
    /// stacks; events without one are not listed), top N; `pct_of_total` is of
    /// replay_device_ns.
    #[serde(default)]
    pub modules: Vec<DurStats>,
    /// Matched device time by the innermost Python frame outside torch around the recorded
    /// launch (events without one are not listed), top N; `pct_of_total` is of
    /// replay_device_ns.
    #[serde(default)]
    pub frames: Vec<DurStats>,
    /// Replay device time by kernel family (attention, matmul, ...), whatever the source.
    pub families: Vec<DurStats>,
    /// One entry per distinct replayed sequence of device events (a graph), with where its
    /// ops came from, how well the recorded launches agreed, and its ops in order.
    #[serde(default)]
    pub graphs: Vec<GraphSequence>,
}

/// One distinct sequence of device events that replays ran (a graph), and its ops.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GraphSequence {
    /// The graph id its events carry (Ascend model id, Kineto `graph id`); -1 unknown.
    pub graph: i64,
    /// Replays that ran this sequence, and device events per replay.
    pub replays: u64,
    pub device_events: u64,
    /// `capture`, `connection_id`, `eager_map`, or `none`.
    pub source: String,
    /// The file whose capture (or eager step) named the ops; empty when none matched.
    pub matched_from: String,
    /// Start of that capture window (or eager step), ns on that file's clock; -1 when none.
    pub recorded_at_ns: i64,
    /// Launches recorded in that capture (or device events of that eager step).
    pub recorded_launches: u64,
    /// Device events of one replay tied to a recorded launch, and how many of those pairs
    /// agree on the kernel name (not only on kind: kernel / copy / set).
    pub matched_events: u64,
    pub name_checked_events: u64,
    /// matched_events / device_events, percent.
    pub agreement_pct: f64,
    /// How the pairs were checked: `name` (every matched pair names the same kernel), `kind`
    /// (the recorded launches carry no kernel name, CUDA runtime calls: kinds only), `name and
    /// kind`, `connection_id` (Ascend, exact), or empty when nothing matched.
    pub checked_by: String,
    /// Why nothing (or not everything) matched, in words; empty when all matched.
    pub note: String,
    /// The replay's ops in order, consecutive events of one op merged; `ns` summed over the
    /// sequence's replays (the first 100 runs unless `--detail full`).
    pub ops: Vec<OpSpan>,
}

/// A run of consecutive device events of one replayed sequence launched by one op.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OpSpan {
    /// The op (innermost host op around the recorded launch); for unmatched events their
    /// kernel name in brackets (`[kernel] <name>`).
    pub op: String,
    /// The enclosing `nn.Module` and Python frame, empty when none.
    pub module: String,
    pub frame: String,
    /// Device events of the run per replay, and their device time summed over the replays, ns.
    pub events: u64,
    pub ns: i64,
}
