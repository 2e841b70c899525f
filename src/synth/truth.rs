//! The ground truth the generator records while it writes: what it injected, counted by the
//! generator itself (not by re-reading its output), so tests can compare ingest and analyses to it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CountDur {
    pub count: u64,
    pub dur_ns: i64,
}

impl CountDur {
    pub fn add(&mut self, dur_ns: i64) {
        self.count += 1;
        self.dur_ns += dur_ns;
    }
}

/// Gaps shorter than this are not counted as bubbles in the truth (the analysis default).
pub const BUBBLE_MIN_GAP_NS: i64 = 1_000;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RankTruth {
    pub rank: u32,
    /// trace_view.json path relative to the root.
    /// trace_view.json path under the root; empty when only the db was written.
    pub trace_view: String,
    /// The torch_npu db path under the root, when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db: Option<String>,
    /// lmdeploy-style Kineto file relative to the root, if written.
    pub kineto: Option<String>,
    pub prefill_steps: u64,
    pub decode_steps: u64,
    pub layers: u64,
    pub mtp_heads: u64,
    pub batch_size: u64,
    /// Earliest start / latest end over every timed event of trace_view.json, ns.
    pub window_start_ns: i64,
    pub window_end_ns: i64,
    /// trace_view.json: X events per process_name.
    pub x_events_by_process: BTreeMap<String, u64>,
    /// trace_view.json: every timed event per profscope category (count, sum of dur).
    pub by_category: BTreeMap<String, CountDur>,
    /// trace_view.json Ascend Hardware: per physical stream (count, busy = sum of dur; no overlaps).
    pub streams: BTreeMap<i64, CountDur>,
    /// Compute kernels per name (device, Ascend Hardware).
    pub kernels: BTreeMap<String, CountDur>,
    /// Compute kernels per phase of the step that launched them (`prefill`, `decode`).
    pub phase_kernels: BTreeMap<String, CountDur>,
    /// Communication kernels on the device (HcclAllReduce, allreduceAicpuKernel).
    pub comm_kernels: CountDur,
    /// Gaps between consecutive tasks on the compute stream (2): count, total, 10 largest.
    pub compute_stream_gaps: CountDur,
    pub largest_gaps_ns: Vec<(i64, i64)>,
    /// Per decode step: NOTIFY_WAIT ns and graph-replay burst ns (CAPTURE_RECORD .. last kernel).
    pub notify_wait_ns: Vec<i64>,
    pub replay_ns: Vec<i64>,
    /// Per decode step: KV context (min, max, mean) of the decode marker.
    pub kv_context: Vec<(i64, i64, f64)>,
    /// Device busy time (compute kernels and collectives, placed in sequence) and its window.
    pub device_window_start_ns: i64,
    pub device_window_end_ns: i64,
    pub device_busy_ns: i64,
    /// Idle gaps ≥ BUBBLE_MIN_GAP_NS between busy intervals, by the cause the generator placed.
    pub bubbles: BTreeMap<String, CountDur>,
    /// Decode steps whose replay had slow host dispatch (2-6 µs between kernels).
    pub slow_replays: u64,
    /// Every MEM_WAIT_VALUE (one per MTP head per decode step), ns.
    pub mem_wait_ns: Vec<i64>,
    /// Every MTP head burst: from its MEM_WAIT_VALUE end to its last kernel end, ns.
    pub mtp_head_ns: Vec<i64>,
    /// Kineto file: X events per cat.
    pub kineto_x_by_cat: BTreeMap<String, u64>,
    pub flows: u64,
    pub counters: u64,
    pub metadata: u64,
    /// Graph mode (`--graph-mode`): `aclmdlRIExecuteAsync` calls, launches recorded during
    /// capture, time inside capture windows (begin start to end end), every replay, and device
    /// time inside replays per capture-time op.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub graph_launches: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub captured_launches: u64,
    #[serde(default, skip_serializing_if = "is_zero_i")]
    pub capture_ns: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub graph_replays: Vec<ReplayTruth>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub graph_op_ns: BTreeMap<String, i64>,
    /// With `--capture-apart`: the capture session's trace_view.json under the root (the counts
    /// above other than the capture's own describe the rank's trace, which holds the replays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_file: Option<String>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_i(v: &i64) -> bool {
    *v == 0
}

/// One generated graph replay.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ReplayTruth {
    /// Index of the decode step (0-based) that replayed it.
    pub decode_step: u64,
    /// Model id.
    pub graph: i64,
    /// Start of its `aclmdlRIExecuteAsync` call, ns.
    pub launch_ns: i64,
    pub tasks: u64,
    /// Sum of its tasks' durations, ns.
    pub device_ns: i64,
    /// First task start, last task end, ns.
    pub start_ns: i64,
    pub end_ns: i64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Truth {
    pub generator: String,
    pub seed: u64,
    pub ranks: Vec<RankTruth>,
    /// A generated training job's layout and per-rank numbers (`synth --tp/--pp/--dp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<super::job::JobTruth>,
}
