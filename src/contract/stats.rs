//! The report contract of `analysis::stats`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/stats.rs`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DurStats {
    pub name: String,
    pub count: u64,
    pub sum_ns: i64,
    pub mean_ns: f64,
    pub std_ns: f64,
    pub min_ns: i64,
    pub p25_ns: f64,
    pub p50_ns: f64,
    pub p75_ns: f64,
    pub max_ns: i64,
    /// sum_ns / the denominator named by the enclosing result, percent.
    pub pct_of_total: f64,
}
