//! The report contract of `analysis::top_events`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/top_events.rs`.

use super::*;
use crate::model::closed_set::closed_set;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TopEvents {
    pub device: DeviceRef,
    /// `compute` or `communication_and_wait`.
    pub subset: EventSubset,
    pub subset_events: u64,
    pub subset_sum_ns: i64,
    pub by_sum: Vec<DurStats>,
    pub by_max: Vec<DurStats>,
}

closed_set! {
    /// Which device events a top list ranks.
    pub enum EventSubset {
        /// Compute kernels.
        Compute = "compute",
        /// Communication kernels and waits.
        CommunicationAndWait = "communication_and_wait",
    }
}
