//! The report contract of `analysis::kernel_types`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/kernel_types.rs`.

use super::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClassShare {
    pub class: String,
    pub ns: i64,
    /// Share of busy_ns, percent.
    pub pct_of_busy: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelTypes {
    pub device: DeviceRef,
    pub span_start_ns: i64,
    pub span_end_ns: i64,
    pub span_ns: i64,
    pub busy_ns: i64,
    pub idle_ns: i64,
    pub compute_ns: i64,
    pub non_compute_ns: i64,
    /// Shares of span_ns, percent.
    pub idle_pct_of_span: f64,
    pub compute_pct_of_span: f64,
    pub non_compute_pct_of_span: f64,
    pub classes: Vec<ClassShare>,
}
