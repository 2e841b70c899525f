//! Per-task communication details (db COMMUNICATION_TASK_INFO, or the args of trace_view.json's
//! HCCL `Plane <n>` events): one row per plane task of a collective, reached from
//! `events.comm_task`. From JSON, op name and group are empty and the plane is -1 (the thread
//! name says it).

use super::strings::StrId;

#[derive(Debug, Clone, Default)]
pub struct CommTaskTable {
    /// The collective op this task belongs to (`hcom_allReduce__210_0_1`).
    pub op_name: Vec<StrId>,
    /// Communication group (`10.0.0.1%enp_60000_0_1736408883`, or the group's hash id).
    pub group: Vec<StrId>,
    pub plane: Vec<i32>,
    pub src_rank: Vec<i64>,
    pub dst_rank: Vec<i64>,
    /// `SDMA`, `RDMA`, `LOCAL`, ... (ENUM_HCCL_TRANSPORT_TYPE).
    pub transport: Vec<StrId>,
    /// `ON_CHIP`, `HCCS`, `PCIE`, `ROCE`, ... (ENUM_HCCL_LINK_TYPE).
    pub link: Vec<StrId>,
    /// `FP16`, `INT32`, `INVALID_TYPE`, ... (ENUM_HCCL_DATA_TYPE).
    pub data_type: Vec<StrId>,
    pub size_bytes: Vec<i64>,
    /// Bytes per second as written by the profiler; NaN unknown.
    pub bandwidth_bytes_per_s: Vec<f64>,
    /// -1 when none (the profiler writes UINT64_MAX).
    pub notify_id: Vec<i64>,
}

impl CommTaskTable {
    pub fn len(&self) -> usize {
        self.plane.len()
    }
    pub fn is_empty(&self) -> bool {
        self.plane.is_empty()
    }
}
