//! The report contract of `analysis::op_types`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/op_types.rs`.

use super::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpTypeRow {
    pub op_type: String,
    pub task_type: String,
    /// `name` is `op_type`.
    pub stats: DurStats,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpTypes {
    pub device: DeviceRef,
    /// Tasks with kernel details, and the sum of their durations (the denominator).
    pub tasks: u64,
    pub sum_ns: i64,
    /// By sum, descending (ties by op type).
    pub rows: Vec<OpTypeRow>,
}
