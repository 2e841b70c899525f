//! The report contract of `analysis::device_time`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/device_time.rs`.

use super::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VendorBreakdown {
    /// Where the vendor numbers were read.
    pub source: String,
    pub computing_ns: i64,
    pub communication_ns: i64,
    pub communication_not_overlapped_ns: i64,
    pub free_ns: i64,
    /// (ours − vendor) / vendor × 100, per quantity.
    pub computing_diff_pct: f64,
    pub communication_diff_pct: f64,
    pub free_diff_pct: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceTime {
    pub device: DeviceRef,
    pub window_start_ns: i64,
    pub window_end_ns: i64,
    /// `window_end_ns − window_start_ns`, less the time between the pieces of a capture
    /// written in pieces (not observed).
    pub window_ns: i64,
    pub computing_ns: i64,
    pub communication_ns: i64,
    pub overlapped_ns: i64,
    pub communication_not_overlapped_ns: i64,
    pub free_ns: i64,
    /// Σ durations of `MEMCPY_ASYNC` device tasks (msprof-analyze "Memory").
    pub async_copy_ns: i64,
    /// Copy time not overlapped by computing or communication (anywhere, as msprof-analyze).
    pub async_copy_not_overlapped_ns: i64,
    /// `free_ns − async_copy_not_overlapped_ns` (msprof-analyze cluster_time_summary "Free").
    pub free_excluding_async_copy_ns: i64,
    /// Shares of `window_ns`, percent.
    pub computing_pct_of_window: f64,
    pub communication_not_overlapped_pct_of_window: f64,
    pub free_pct_of_window: f64,
    /// Which events define communication time.
    pub communication_source: CommSource,
    pub vendor: Option<VendorBreakdown>,
}
