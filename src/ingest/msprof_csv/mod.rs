//! msprof / torch_npu CSV exports. `kernel_details.csv` (torch_npu) and `op_summary_*.csv` (CANN)
//! hold the same device task rows under two header spellings; they become `Ascend Hardware`
//! events on `Stream <id>` threads plus `kernels` rows, so the timeline analyses and op_types run
//! on roots (or ranks) that have only CSV. Headers are matched by name, never by position:
//! level0 files lack Device_id / Stream ID / shape columns, older CANN writes `Block Dim`.
//! Quirks handled (shared/formats/ascend-formats.md section 3): start times end in a TAB, `N/A`
//! cells, CRLF or LF lines, shapes quoted with doubled quotes, non-UTF-8 names (replaced, with a
//! diagnostic).

mod kernel_rows;
pub mod module_mem;

pub use kernel_rows::ingest_file;

use crate::diag::Severity;
use crate::ingest::builder::TablesBuilder;

/// Reads the companion CSVs beside a torch_npu text export (`npu_module_mem.csv` in the same
/// `ASCEND_PROFILER_OUTPUT/`) into the tables of the file just read from `main`. A companion that
/// cannot be read is a diagnostic, never a failure of the main input.
pub fn companions(main: &str, b: &mut TablesBuilder) {
    let p = std::path::Path::new(main);
    let Some(dir) = p
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "ASCEND_PROFILER_OUTPUT"))
    else {
        return;
    };
    let Some(file) = b.tables().files.len().checked_sub(1) else {
        return;
    };
    let mem = dir.join("npu_module_mem.csv");
    if mem.is_file() {
        let path = mem.display().to_string();
        if let Err(e) = module_mem::ingest(&path, crate::model::FileId(file as u32), b) {
            b.diag()
                .add("companion_unreadable", Severity::DataLoss, || e.to_string());
        }
    }
}

/// True for the CSV files this module reads: `kernel_details.csv` and `op_summary_*.csv` (with
/// `_slice_N` variants).
pub fn is_kernel_csv(file_name: &str) -> bool {
    file_name.ends_with(".csv")
        && (file_name.starts_with("kernel_details") || file_name.starts_with("op_summary"))
}
