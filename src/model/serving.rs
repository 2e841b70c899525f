//! Serving evidence beside the profiles, as read from text: `npu-smi info` snapshots and the
//! memory lines of vLLM / vLLM-Ascend start-up logs. Filled by `ingest::evidence`, used by the
//! HBM attribution (`analysis::memory`). Values keep the unit of their source (npu-smi MB are
//! MiB); every record keeps its 1-based line number so reports can point at it.

use super::closed_set::closed_set;
use serde::Serialize;

closed_set! {
    /// The layout of an `npu-smi info` table.
    #[derive(Default)]
    pub enum NpuSmiLayout {
        /// A2, 98 columns.
        #[default]
        Classic = "classic",
        /// `Chip  Phy-ID`: two dies per NPU.
        A3 = "a3",
        /// 26.x, 118 columns, `Process id in container`.
        Wide = "wide",
    }
}

/// One `npu-smi info` table.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NpuSmiSnapshot {
    pub path: String,
    /// `npu-smi 24.1.rc2.1` → `24.1.rc2.1`.
    pub version: Option<String>,
    pub layout: NpuSmiLayout,
    pub chips: Vec<NpuSmiChip>,
    pub processes: Vec<NpuSmiProcess>,
    /// NPU ids of `No running processes found in NPU n` rows.
    pub idle_npus: Vec<u32>,
    /// Lines inside the table that matched no known row (1-based line, text).
    pub unparsed: Vec<(usize, String)>,
}

/// One chip (A2: one per NPU; A3: one per die) with its two table rows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NpuSmiChip {
    pub npu: u32,
    /// Chip index within the NPU (0, or 0/1 on A3).
    pub chip: u32,
    /// A3's `Phy-ID`: the logical device id torch_npu and HCCL use.
    pub phy_id: Option<u32>,
    pub name: String,
    pub health: String,
    pub power_w: Option<f64>,
    pub temp_c: Option<f64>,
    pub aicore_pct: Option<f64>,
    pub hbm_used_mb: u64,
    pub hbm_total_mb: u64,
    /// `Memory-Usage(MB)` (0/0 on 910B and A3; DDR on 310P-class cards).
    pub mem_used_mb: u64,
    pub mem_total_mb: u64,
    pub bus_id: String,
    /// Line of the chip's second row (the one with HBM).
    pub line: usize,
}

impl NpuSmiChip {
    /// The device id a profile uses: the phy id on A3, else the NPU id.
    pub fn device(&self) -> u32 {
        self.phy_id.unwrap_or(self.npu)
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct NpuSmiProcess {
    pub npu: u32,
    /// Chip index (not the phy id, also on A3).
    pub chip: u32,
    pub pid: u64,
    /// Empty when npu-smi could not resolve it (containers); truncated to 15 chars by npu-smi.
    pub name: String,
    pub memory_mb: f64,
    /// The 26.x wide layout's `Process id in container` (`NA` on the host).
    pub container_pid: Option<String>,
    pub line: usize,
}

impl NpuSmiSnapshot {
    pub fn has_processes(&self) -> bool {
        !self.processes.is_empty()
    }
    /// The chip a process row belongs to.
    pub fn chip_of(&self, p: &NpuSmiProcess) -> Option<&NpuSmiChip> {
        self.chips
            .iter()
            .find(|c| c.npu == p.npu && c.chip == p.chip)
    }
}

/// A vLLM start-up log's memory lines.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VllmLog {
    pub path: String,
    pub lines: usize,
    pub records: Vec<VllmRecord>,
}

/// One memory-relevant log line.
#[derive(Debug, Clone, Serialize)]
pub struct VllmRecord {
    pub line: usize,
    /// Innermost process tag (`Worker_TP0`, `Worker_DP1_TP7_EP15`, `EngineCore_DP0`), if any.
    pub process: Option<String>,
    pub pid: Option<u64>,
    /// `model_runner_v1.py:2667`.
    pub at: String,
    /// Which documented format matched (serving-evidence.md 2.2: W1, K1, S1, ...).
    pub format: &'static str,
    pub value: VllmValue,
}

/// A parsed message. Memory is in bytes (GiB and "GB-that-is-GiB" × 2^30), rounded to a byte.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VllmValue {
    /// W1-W5: torch-allocator bytes allocated while loading the model.
    Weights { bytes: i64, secs: Option<f64> },
    /// K1: the KV budget and the device's total memory, in bytes.
    KvAvailableAndTotal { kv_bytes: i64, total_bytes: i64 },
    /// K2-K5.
    KvAvailable { bytes: i64 },
    /// T1.
    KvTokens { tokens: u64 },
    /// T2.
    MaxConcurrency { tokens_per_request: u64, times: f64 },
    /// B1 / T3.
    Blocks {
        device: String,
        blocks: u64,
        cpu_blocks: Option<u64>,
    },
    /// G1/G2: the free-memory delta of graph capture (can be negative).
    GraphCapture { secs: f64, bytes: i64 },
    /// G3.
    GraphPool {
        actual_bytes: i64,
        estimated_bytes: i64,
    },
    /// P1 line 2.
    ProfileBudget {
        total_bytes: i64,
        utilization: f64,
        requested_bytes: i64,
    },
    /// P1 line 3.
    ProfileSplit {
        weights_bytes: i64,
        non_torch_bytes: i64,
        activation_bytes: i64,
        kv_bytes: i64,
    },
    /// P2.
    ProfileResult {
        non_kv_bytes: i64,
        torch_peak_bytes: i64,
        non_torch_bytes: i64,
        weights_bytes: i64,
    },
    /// S1 (vllm-ascend >= 0.19.1rc1 summary).
    Summary {
        free_bytes: i64,
        total_bytes: i64,
        utilization: f64,
        requested_bytes: i64,
        weights_bytes: i64,
        activation_bytes: i64,
        non_torch_bytes: i64,
        graph_bytes: i64,
        kv_bytes: i64,
        reserved_bytes: Option<i64>,
        allocated_bytes: Option<i64>,
    },
    /// E1/E2.
    InitEngine {
        secs: f64,
        compilation_secs: Option<f64>,
    },
    /// X1.
    SleepFreed { freed_bytes: i64, in_use_bytes: i64 },
}

closed_set! {
    /// What moment an npu-smi snapshot shows.
    pub enum SnapshotRole {
        /// No model loaded: the driver / firmware baseline.
        Idle = "idle",
        /// Service up, before traffic.
        Ready = "ready",
        /// Loaded, moment not stated.
        Loaded = "loaded",
        /// After inference traffic ended.
        PostInference = "post_inference",
        /// Taken at the activation peak (during a prefill of the largest batch).
        Peak = "peak",
    }
}

impl SnapshotRole {
    pub fn parse(s: &str) -> Option<SnapshotRole> {
        Some(match s {
            "idle" | "baseline" => SnapshotRole::Idle,
            "ready" => SnapshotRole::Ready,
            "loaded" => SnapshotRole::Loaded,
            "post_inference" | "post-inference" | "after" | "post" => SnapshotRole::PostInference,
            "peak" => SnapshotRole::Peak,
            _ => return None,
        })
    }
}

/// One driver module's reserved memory on one device over a capture (msprof).
#[derive(Debug, Clone, Serialize)]
pub struct ModuleMem {
    pub file: String,
    /// The profiler's device id (-1 unknown).
    pub device: i32,
    pub component: String,
    pub max_bytes: i64,
    /// When the maximum was sampled (ns, the profiler's clock).
    pub max_ts_ns: i64,
    pub samples: u64,
}
