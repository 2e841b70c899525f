//! The report contract of `analysis::summary`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/summary.rs`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileSummary {
    pub path: String,
    #[serde(deserialize_with = "crate::static_names::name")]
    pub format: crate::static_names::Name,
    pub size_bytes: u64,
    pub parsed_bytes: u64,
    pub gzip: bool,
    /// -1 when unknown.
    pub rank: i32,
    /// Files read as this one: 1, or the pieces of a capture written in pieces (`path` is the
    /// first; legacy per-iteration timelines, slices).
    pub parts: u32,
    pub events: u64,
    /// This file's time window (files may use different clocks: Kineto ts are often relative).
    pub window: Option<TimeWindow>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CategorySummary {
    #[serde(deserialize_with = "crate::static_names::name")]
    pub category: crate::static_names::Name,
    pub events: u64,
    /// Sum of event durations (overlaps counted each time).
    pub dur_ns_sum: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamSummary {
    pub file: String,
    pub rank: i32,
    pub process: String,
    pub device_id: i32,
    /// Physical stream id (Ascend Hardware / Kineto device tracks).
    pub stream: i64,
    pub thread_name: String,
    pub events: u64,
    /// Sum of durations of the stream's events.
    pub dur_ns_sum: i64,
    /// Events per category on this stream.
    #[serde(deserialize_with = "crate::static_names::name_keys")]
    pub by_category: BTreeMap<crate::static_names::Name, u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimeWindow {
    /// Earliest event start, ns (in the file's own clock).
    pub start_ns: i64,
    /// Latest event end, ns.
    pub end_ns: i64,
    pub duration_ns: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    pub files: Vec<FileSummary>,
    /// Distinct known ranks.
    pub ranks: Vec<i32>,
    pub events: u64,
    pub processes: u64,
    pub threads: u64,
    pub counters: u64,
    pub flows: u64,
    pub distinct_strings: u64,
    pub by_category: Vec<CategorySummary>,
    pub device_streams: Vec<StreamSummary>,
}
