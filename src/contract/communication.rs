//! The report contract of `analysis::communication`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/communication.rs`.

use super::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Share {
    pub count: u64,
    pub sum_ns: i64,
    pub max_ns: i64,
    pub pct: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Communication {
    pub device: DeviceRef,
    /// (a) numerator source.
    pub comm_kernels_source: CommSource,
    pub comm_kernels: Share,
    /// (a) denominator: sum of compute-kernel durations on the device, ns.
    pub compute_kernel_ns: i64,
    /// (b) numerators.
    pub event_and_mem_waits: Share,
    pub notify_wait: Share,
    pub data_movement: Share,
    /// (b) denominator: sum of durations of all device tasks on the device, ns.
    pub device_task_ns: i64,
    pub comm_union_ns: i64,
    pub overlapped_with_compute_ns: i64,
    pub overlapped_pct_of_comm: f64,
}
