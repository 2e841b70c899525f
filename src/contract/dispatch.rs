//! The report contract of `analysis::dispatch`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/dispatch.rs`.

use super::*;
use serde::{Deserialize, Serialize};

/// How a device's tasks are linked to their host calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Link {
    /// Ascend `connection_id`: CANN API call ↔ device task.
    ConnectionId,
    /// Kineto `correlation`: runtime call ↔ kernel.
    Correlation,
    /// A flow from a host op to the task (`torch_to_npu` / `async_npu`), used when the file has
    /// no CANN API calls (torch_npu Level0) or none that shares a task's connection id: the
    /// launcher is the framework op, so latency is measured from the op's start, an upper bound
    /// of the launch latency. `host_bound` takes the launch time from the `HostToDevice` flow of
    /// the task's connection id when the file has one.
    Flow,
}

/// Launch latency of one launch call: its first task's start − the call's start.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Launch calls with at least one linked task.
    pub count: u64,
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub max_ns: i64,
    pub mean_ns: f64,
    /// Calls whose first task starts before the call (host and device clocks disagree).
    pub negative: u64,
}

/// Queue depth at launch: tasks of this device launched by earlier calls and not yet ended
/// when the call began.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DepthStats {
    pub p50: f64,
    pub p90: f64,
    pub max: i64,
    pub mean: f64,
    /// Calls that found nothing queued (the device was waiting or about to wait for them).
    pub empty_queue: u64,
}

/// One launch call with its first task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaunchRow {
    /// The host call (`Node@launch`, `AscendCL@aclnnAdd`, `cudaLaunchKernel`).
    pub call: String,
    pub call_ts_ns: i64,
    pub call_dur_ns: i64,
    /// Host thread of the call.
    pub thread: String,
    /// The PyTorch op that issued the call, when known.
    pub op: Option<String>,
    /// Its first task.
    pub task: String,
    pub stream: i32,
    pub task_ts_ns: i64,
    pub latency_ns: i64,
    pub queue_depth: i64,
    /// Tasks this call launched on the device.
    pub tasks: u64,
}

/// Host idle time of the device attributed to late launches (see bubbles' `host_dispatch`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostBound {
    /// Gaps ≥ min_gap of the device (as bubbles counts them) and their total.
    pub gaps: u64,
    pub idle_ns: i64,
    /// Gaps whose next task was launched after the gap began, and their total.
    pub host_bound_gaps: u64,
    pub host_bound_ns: i64,
    /// host_bound_ns / idle_ns, percent.
    pub pct_of_idle: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceDispatch {
    pub device: DeviceRef,
    pub link: Link,
    /// Device tasks, and those whose launch call was found.
    pub tasks: u64,
    pub linked_tasks: u64,
    /// One value per launch call (a call that launches several tasks counts once: its later
    /// tasks wait for the earlier ones, not for the host).
    pub latency: LatencyStats,
    pub queue_depth: DepthStats,
    /// Calls with the longest latency among those that found the queue empty (pure launch
    /// overhead), longest first, at most top_n.
    pub slowest_empty_queue: Vec<LaunchRow>,
    pub host_bound: HostBound,
    /// Host API calls of the device's file by name (msprof-analyze `cann_api_sum` /
    /// api_statistic.csv; Kineto runtime calls): the top_n by total time.
    pub host_apis: Vec<DurStats>,
    /// APIs beyond the top_n: how many names, calls and ns.
    pub host_apis_other: (u64, u64, i64),
    /// Σ durations of all host API calls (the denominator of host_apis' pct_of_total).
    pub host_api_total_ns: i64,
}
