//! The report contract of `analysis::devices`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/devices.rs`.

use crate::model::closed_set::closed_set;
use serde::{Deserialize, Serialize};

/// Where a device's numbers come from (every result carries it as evidence).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeviceRef {
    pub file: String,
    /// -1 when unknown.
    pub rank: i32,
    /// -1 when unknown (torch_npu labels say only `NPU`).
    pub device_id: i32,
    pub process: String,
}

closed_set! {
    /// Which events define a device's communication time.
    pub enum CommSource {
        /// The collective ops of the HCCL process (`Group … Communication` threads, torch_npu;
        /// `Communication Kernel`, legacy CANN) of the same file.
        HcclGroupOps = "hccl_group_ops",
        /// The device's own communication kernels.
        DeviceCommKernels = "device_comm_kernels",
    }
}
