//! The report contract of `analysis::composition`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/composition.rs`.

use super::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamShare {
    pub stream: i32,
    pub kernels: u64,
    pub compute_ns: i64,
    pub pct_of_compute: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelRow {
    pub name: String,
    pub count: u64,
    pub sum_ns: i64,
    pub max_ns: i64,
    pub pct_of_compute: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Composition {
    pub device: DeviceRef,
    pub compute_kernels: u64,
    pub compute_ns: i64,
    pub streams: Vec<StreamShare>,
    pub busiest_stream: Option<i32>,
    pub busiest_by_sum: Vec<KernelRow>,
    pub busiest_by_max: Vec<KernelRow>,
    pub busiest_by_count: Vec<KernelRow>,
    pub families: Vec<KernelRow>,
}
