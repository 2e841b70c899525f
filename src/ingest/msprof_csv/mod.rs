//! msprof / torch_npu CSV exports. `kernel_details.csv` (torch_npu) and `op_summary_*.csv` (CANN)
//! hold the same device task rows under two header spellings; they become `Ascend Hardware`
//! events on `Stream <id>` threads plus `kernels` rows, so the timeline analyses and op_types run
//! on roots (or ranks) that have only CSV. Headers are matched by name, never by position:
//! level0 files lack Device_id / Stream ID / shape columns, older CANN writes `Block Dim`.
//! Quirks handled (shared/formats/ascend-formats.md section 3): start times end in a TAB, `N/A`
//! cells, CRLF or LF lines, shapes quoted with doubled quotes, non-UTF-8 names (replaced, with a
//! diagnostic).

mod kernel_rows;

pub use kernel_rows::ingest_file;

/// True for the CSV files this module reads: `kernel_details.csv` and `op_summary_*.csv` (with
/// `_slice_N` variants).
pub fn is_kernel_csv(file_name: &str) -> bool {
    file_name.ends_with(".csv")
        && (file_name.starts_with("kernel_details") || file_name.starts_with("op_summary"))
}
