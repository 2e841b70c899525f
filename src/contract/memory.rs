//! The report contract of `analysis::memory`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/memory.rs`.

use crate::model::closed_set::closed_set;
use crate::model::serving::{ModuleMem, NpuSmiLayout, SnapshotRole as Role};
use serde::Serialize;

/// Per-device weights estimated from a checkpoint (`analysis::weights`).
#[derive(Debug, Clone, Serialize)]
pub struct CheckpointWeights {
    pub path: String,
    pub per_device_bytes: Option<f64>,
    pub tp: u64,
    pub ep: u64,
}

/// Where a number comes from.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Source {
    pub file: String,
    /// 1-based line (text evidence), when there is one.
    pub line: Option<usize>,
    pub what: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Component {
    /// fixed_overhead, weights, kv_cache, graph_capture, hccl, cann_runtime, activations.
    pub name: &'static str,
    /// None = unknown (no evidence), never silently 0.
    pub bytes: Option<i64>,
    pub mib: Option<f64>,
    pub gib: Option<f64>,
    /// Percent of the reference snapshot's npu-smi HBM used on this device.
    pub share_pct: Option<f64>,
    /// Exact from the source, or an estimate (say which).
    pub estimate: bool,
    pub sources: Vec<Source>,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CrossCheck {
    /// npu-smi HBM used in the reference snapshot.
    pub npu_smi_used_bytes: Option<i64>,
    /// Sum of the known components.
    pub component_sum_bytes: i64,
    /// msprof APP module (the process's reserved memory as the driver sees it), max over the capture.
    pub msprof_app_bytes: Option<i64>,
    /// npu-smi process memory on this chip (all processes), reference snapshot.
    pub npu_smi_process_bytes: Option<i64>,
    /// npu-smi HBM used minus process memory: memory no process owns (driver, firmware).
    pub npu_smi_unowned_bytes: Option<i64>,
    /// The vLLM weights line for this device's worker, beside the checkpoint estimate.
    pub vllm_weights_bytes: Option<i64>,
    pub checkpoint_weights_bytes: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceMemory {
    /// The device id profiles use (A3: phy id; A2: NPU id); None when no npu-smi names it.
    pub device: Option<u32>,
    pub npu: Option<u32>,
    pub chip: Option<u32>,
    pub name: Option<String>,
    pub hbm_total_bytes: Option<i64>,
    /// The vLLM worker matched to the device (by pid), if any.
    pub worker: Option<String>,
    pub worker_pid: Option<u64>,
    pub components: Vec<Component>,
    /// Reference npu-smi HBM used minus the known components; unknown without npu-smi.
    pub residual_bytes: Option<i64>,
    pub residual_mib: Option<f64>,
    pub residual_share_pct: Option<f64>,
    pub residual_sources: Vec<Source>,
    pub cross_check: CrossCheck,
}

#[derive(Debug, Clone, Serialize)]
pub struct SnapshotUse {
    pub file: String,
    pub role: Role,
    pub version: Option<String>,
    pub layout: NpuSmiLayout,
}

closed_set! {
    /// Whether every component of every device has evidence.
    pub enum Completeness {
        Complete = "complete",
        Incomplete = "incomplete",
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Attribution {
    pub status: Completeness,
    pub missing: Vec<String>,
    pub share_denominator: &'static str,
    pub reference: Option<SnapshotUse>,
    pub snapshots: Vec<SnapshotUse>,
    pub devices: Vec<DeviceMemory>,
    /// msprof module memory not tied to an npu-smi device: shown, never added into a device.
    pub process_level: Vec<ModuleMem>,
    pub statements: Vec<String>,
}

/// Two runs side by side: per component, the mean over devices where it is known.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub component: &'static str,
    pub a_mean_bytes: Option<f64>,
    pub a_devices: usize,
    pub b_mean_bytes: Option<f64>,
    pub b_devices: usize,
    pub delta_bytes: Option<f64>,
}
