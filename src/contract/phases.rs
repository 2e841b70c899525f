//! The report contract of `analysis::phases`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/phases.rs`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseWindows {
    #[serde(deserialize_with = "crate::static_names::name")]
    pub scope: crate::static_names::Name,
    pub count: u64,
    pub total_ns: i64,
    pub first_start_ns: Option<i64>,
    pub last_end_ns: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Phases {
    pub file: String,
    pub rank: i32,
    pub prefill: PhaseWindows,
    pub decode: PhaseWindows,
    pub prefill_valid: bool,
    pub decode_valid: bool,
    pub mixed: bool,
    /// What a reader must know before quoting percentages of this capture.
    pub statement: String,
}

/// A phase to slice to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Prefill,
    Decode,
}

/// What a slice kept and how device events were attributed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SliceInfo {
    pub phase: Phase,
    pub events_kept: u64,
    pub events_dropped: u64,
    /// Device events attributed through their launch link / by their own start.
    pub device_by_launch: u64,
    pub device_by_own_start: u64,
    #[serde(deserialize_with = "crate::static_names::name")]
    pub method: crate::static_names::Name,
}
