//! The report contract of `analysis::step_sync`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/step_sync.rs`.

use super::*;
use crate::model::closed_set::closed_set;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepSync {
    pub step: u64,
    pub notify_wait_ts_ns: i64,
    pub notify_wait_ns: i64,
    pub replay_start_ns: i64,
    pub replay_ns: i64,
    pub ratio_pct: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepSyncSummary {
    pub device: DeviceRef,
    pub steps: Vec<StepSync>,
    pub notify_wait_total_ns: i64,
    pub replay_total_ns: i64,
    /// Σ notify / Σ replay, percent.
    pub overall_ratio_pct: f64,
    pub median_ratio_pct: Option<f64>,
    pub max_ratio_pct: Option<f64>,
    pub excellent_steps: u64,
    pub acceptable_steps: u64,
    pub needs_attention_steps: u64,
    pub verdict: SyncVerdict,
    /// Host `update_step_context` scopes of the same file: total ns and percent of replay time.
    pub host_update_step_context_ns: i64,
    pub host_pct_of_replay: Option<f64>,
    pub host_verdict: Option<HostVerdict>,
}

closed_set! {
    /// How much of a decode replay the NOTIFY_WAIT sync takes: under 5 %, up to 25 %, more.
    pub enum SyncVerdict {
        Excellent = "excellent",
        Acceptable = "acceptable",
        NeedsAttention = "needs_attention",
    }
}

closed_set! {
    /// Host `update_step_context` time: more than 5 % of replay time needs attention.
    pub enum HostVerdict {
        Ok = "ok",
        NeedsAttention = "needs_attention",
    }
}
