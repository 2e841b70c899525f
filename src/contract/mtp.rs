//! The report contract of `analysis::mtp`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/mtp.rs`.

use super::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HeadStats {
    /// 1 for the first MTP head after the main model.
    pub head: usize,
    pub steps: u64,
    pub mem_wait_total_ns: i64,
    pub burst_total_ns: i64,
    pub burst_mean_ns: f64,
    /// Σ NOTIFY_WAIT of those steps / Σ this head's bursts, percent.
    pub notify_pct_of_burst: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mtp {
    pub device: DeviceRef,
    pub decode_steps: u64,
    /// How many steps had 0, 1, 2, ... heads.
    pub heads_per_step: BTreeMap<usize, u64>,
    pub mem_waits: u64,
    pub mem_wait_total_ns: i64,
    pub main_burst_total_ns: i64,
    pub heads: Vec<HeadStats>,
    /// Every MEM_WAIT_VALUE, ns, in time order (evidence).
    pub mem_wait_ns: Vec<i64>,
    /// Every head burst, ns, in time order.
    pub head_burst_ns: Vec<i64>,
}
