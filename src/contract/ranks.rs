//! The report contract of `analysis::ranks`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/ranks.rs`.

use crate::model::closed_set::closed_set;
use serde::{Deserialize, Serialize};

/// A rank whose files are this many times the median rank's bytes is `oversized`.
pub const OVERSIZED_FACTOR: u64 = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankRow {
    pub rank: i32,
    pub files: Vec<String>,
    /// Bytes on disk of the rank's files.
    pub size_bytes: u64,
    /// Events of device processes (hardware streams, HCCL planes and groups), without the
    /// vendor's Overlap Analysis rows.
    pub device_events: u64,
    pub host_events: u64,
    /// The vendor's OVERLAP_ANALYSIS / `Overlap Analysis` rows, whether read as events or as
    /// sums (derived by the vendor from the device events; not in the window).
    pub vendor_overlap_rows: u64,
    /// First start and last end of the rank's events in files of `window_format`, ns; None
    /// without events.
    pub window_start_ns: Option<i64>,
    pub window_end_ns: Option<i64>,
    /// The clock of the files that give the window: `ascend` (db, trace_view.json, msprof
    /// json, kernel CSVs: realtime ns) when the rank has such files, else `kineto`.
    #[serde(deserialize_with = "crate::static_names::optional_name")]
    pub window_clock: Option<crate::static_names::Name>,
    /// The clock offset cross_rank estimated and corrected for this rank on `window_clock`
    /// (subtracted from the window before windows are compared), ns; 0 when none.
    #[serde(default)]
    pub clock_offset_ns: i64,
}

/// An input that could not be read; the rest of the run is analysed without it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailedInput {
    pub file: String,
    /// -1 when unknown.
    pub rank: i32,
    pub error: String,
}

closed_set! {
    /// Where the expected rank count came from.
    #[derive(Default)]
    pub enum ExpectedSource {
        /// `--expected-ranks`.
        Option = "--expected-ranks",
        /// The largest `world_size` of the files (a Kineto header, `distributed_args`).
        WorldSize = "world_size",
        #[default]
        None = "none",
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Ranks {
    /// Where the expected count came from.
    pub expected_source: ExpectedSource,
    pub expected: Option<u32>,
    pub present: Vec<i32>,
    /// Ranks 0..expected that have no file that could be read.
    pub missing: Vec<i32>,
    /// Ranks with files but no device events (not summary-only ones).
    pub cpu_only: Vec<i32>,
    /// Ranks read from the vendor's summaries only (step_trace_time.csv, communication.json,
    /// analysis.db; no timeline): their steps and collectives come from those.
    #[serde(default)]
    pub summary_only: Vec<i32>,
    /// Ranks with a file that ended mid-event (events after the cut are missing).
    pub truncated: Vec<i32>,
    /// Ranks whose files are at least `OVERSIZED_FACTOR` times the median rank's bytes (only
    /// with three or more ranks).
    pub oversized: Vec<i32>,
    /// Ranks whose window overlaps no other rank's window (only with two or more ranks).
    pub disjoint: Vec<i32>,
    /// Files that could not be read (error per file).
    pub failed: Vec<FailedInput>,
    /// Files whose rank is unknown (-1).
    pub unknown_rank_files: Vec<String>,
    pub rows: Vec<RankRow>,
    /// Files read beside another file for its graph replays' ops, not as a rank's device
    /// (graph_mode: capture traces, eager maps); they are in no row above.
    #[serde(default)]
    pub companions: Vec<CompanionFile>,
}

/// A companion file and the files it serves.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CompanionFile {
    pub file: String,
    /// -1 when unknown.
    pub rank: i32,
    /// `capture_companion` or `eager_map`.
    pub role: String,
    /// The replay files whose ops it names.
    pub of: Vec<String>,
    /// How it was recognised.
    pub why: String,
}
