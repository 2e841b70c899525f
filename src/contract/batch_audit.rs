//! The report contract of `analysis::batch_audit`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/batch_audit.rs`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KvMarker {
    pub min: i64,
    pub max: i64,
    pub mean: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankAudit {
    pub file: String,
    pub rank: i32,
    pub replays: u64,
    pub qualified: u64,
    /// Replays with no marker (warmup) / one marker / several markers of a kind / another batch.
    pub bare: u64,
    pub one_marker: u64,
    pub not_one_to_one: u64,
    pub other_batch: u64,
    /// Batch sizes seen in qualified-shape replays, with counts.
    pub batch_sizes: BTreeMap<i64, u64>,
    pub kv: Vec<KvMarker>,
    pub kv_min_range: Option<Range>,
    pub kv_max_range: Option<Range>,
    pub kv_mean_range: Option<Range>,
    pub first_start_ns: Option<i64>,
    pub last_end_ns: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BatchAudit {
    /// The batch size required (`--batch`), or the one all qualified replays agree on.
    pub batch: Option<i64>,
    /// True when at least one replay qualified on every rank that has replays, all with that B.
    pub fixed_batch_proven: bool,
    pub ranks_agree: bool,
    pub ranks: Vec<RankAudit>,
    pub statement: String,
}
