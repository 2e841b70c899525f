//! The source-file table: one row per ingested input file, with what its header told us.

use super::strings::StrId;
use serde::Serialize;

/// The on-disk format of an ingested file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// Chrome trace JSON as a bare array (torch_npu trace_view.json, msprof_*.json).
    ChromeJsonArray,
    /// Chrome trace JSON object with `traceEvents` (Kineto, lmdeploy).
    ChromeJsonObject,
    /// torch_npu `ascend_pytorch_profiler_<rank>.db` or CANN `msprof_*.db` (SQLite).
    AscendDb,
    /// torch_npu `kernel_details.csv` or CANN `op_summary_*.csv` (device task rows only).
    KernelCsv,
    /// A rank kept as the vendor's summaries only (`analysis.db`, `step_trace_time.csv`,
    /// `communication.json` in an `ASCEND_PROFILER_OUTPUT/` with no timeline, db or kernel CSV):
    /// no events, its step breakdown and collectives in the reference table.
    VendorSummary,
}

impl SourceFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceFormat::ChromeJsonArray => "chrome_json_array",
            SourceFormat::ChromeJsonObject => "chrome_json_object",
            SourceFormat::AscendDb => "ascend_db",
            SourceFormat::KernelCsv => "kernel_csv",
            SourceFormat::VendorSummary => "vendor_summary",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct FileTable {
    /// Path as given to ingest.
    pub path: Vec<String>,
    pub format: Vec<Option<SourceFormat>>,
    /// Bytes on disk.
    pub size_bytes: Vec<u64>,
    /// Bytes parsed (decompressed size for `.gz`).
    pub parsed_bytes: Vec<u64>,
    pub gzip: Vec<bool>,
    /// Rank from `distributedInfo.rank` or the file/folder name; -1 when unknown.
    pub rank: Vec<i32>,
    /// `distributedInfo.world_size`; -1 when unknown.
    pub world_size: Vec<i32>,
    /// Kineto `baseTimeNanoseconds`; 0 when absent. ts_ns values are NOT shifted by it.
    pub base_time_ns: Vec<i64>,
    /// `displayTimeUnit` (display only; Chrome-trace `ts` is always microseconds).
    pub display_time_unit: Vec<StrId>,
    /// The file ended mid-event (a rank that died mid-dump): events after that point are missing.
    pub truncated: Vec<bool>,
    /// Files read as this row (1, or the pieces of one capture: legacy per-iteration timelines,
    /// slices).
    pub parts: Vec<u32>,
    /// When `parts` > 1: the union of each part's [first start, last end] in ns, sorted; time
    /// between them was not captured (not idle). Empty otherwise.
    pub captured_spans: Vec<Vec<(i64, i64)>>,
}

impl FileTable {
    pub fn len(&self) -> usize {
        self.path.len()
    }
    pub fn is_empty(&self) -> bool {
        self.path.is_empty()
    }
}
