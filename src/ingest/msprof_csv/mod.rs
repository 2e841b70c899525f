//! msprof / torch_npu CSV exports. `kernel_details.csv` (torch_npu) and `op_summary_*.csv` (CANN)
//! hold the same device task rows under two header spellings; they become `Ascend Hardware`
//! events on `Stream <id>` threads plus `kernels` rows, so the timeline analyses and op_types run
//! on roots (or ranks) that have only CSV. Headers are matched by name, never by position:
//! level0 files lack Device_id / Stream ID / shape columns, older CANN writes `Block Dim`.
//! Quirks handled (shared/formats/ascend-formats.md section 3): start times end in a TAB, `N/A`
//! cells, CRLF or LF lines, shapes quoted with doubled quotes, non-UTF-8 names (replaced, with a
//! diagnostic).

mod columns;
mod kernel_links;
mod kernel_rows;
pub mod memory_rows;
pub mod module_mem;
mod op_metrics_rows;
pub mod reference_rows;

pub use kernel_rows::{ingest_bytes, ingest_file};

use crate::diag::Severity;
use crate::ingest::builder::TablesBuilder;

/// Reads the companion files beside a torch_npu text export (the other CSV / JSON files of the
/// same `ASCEND_PROFILER_OUTPUT/`, see [`read_vendor_file`]) into the tables of the file just read
/// from `main`. A companion that cannot be read is a diagnostic, never a failure of the main
/// input.
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
    let file = crate::model::FileId(file as u32);
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<(usize, String, std::path::PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            let k = COMPANIONS.iter().position(|c| is_companion(&n, c))?;
            Some((k, n, e.path()))
        })
        .collect();
    found.sort();
    for (_, _, f) in found {
        if let Err(e) = read_vendor_file(&f.display().to_string(), file, b) {
            let code = if e.to_string().contains("this kind of file may have") {
                "input_too_large"
            } else {
                "companion_unreadable"
            };
            b.diag().add(code, Severity::DataLoss, || e.to_string());
        }
    }
}

/// The companions read beside a text export, in this order.
pub const COMPANIONS: &[&str] = &[
    "npu_module_mem.csv",
    "memory_record.csv",
    "operator_memory.csv",
    "step_trace_time.csv",
    "op_statistic.csv",
    "task_time.csv",
    "communication.json",
    "communication_matrix.json",
    "kernel_details.csv",
];

/// `name` is `companion` or its `_slice_<n>` variant (`communication_slice_0.json`).
fn is_companion(name: &str, companion: &str) -> bool {
    let (stem, ext) = companion.rsplit_once('.').unwrap_or((companion, ""));
    name == companion
        || name
            .strip_prefix(stem)
            .and_then(|r| r.strip_prefix("_slice_"))
            .and_then(|r| r.strip_suffix(ext)?.strip_suffix('.'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

/// Reads one vendor summary file, chosen by name, into `file`'s tables; returns rows (records)
/// read. `npu_module_mem*.csv`, `memory_record*.csv` → memory; `operator_memory*.csv` →
/// op_memory; other CSVs (`step_trace_time`, `op_statistic`, `task_time`,
/// `cluster_step_trace_time`, ...) and `communication*.json` / `cluster_communication.json` →
/// reference, as table `<file name>`.
pub fn read_vendor_file(
    path: &str,
    file: crate::model::FileId,
    b: &mut TablesBuilder,
) -> Result<u64, crate::ingest::error::IngestError> {
    let name = std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if name.starts_with("npu_module_mem") {
        return module_mem::ingest(path, file, b);
    }
    if name.starts_with("memory_record") {
        return memory_rows::ingest_memory_record(path, file, b);
    }
    if name.starts_with("operator_memory") {
        return memory_rows::ingest_operator_memory(path, file, b);
    }
    if name.starts_with("kernel_details") {
        return op_metrics_rows::ingest_companion(path, file, b);
    }
    if name.ends_with(".csv") {
        return reference_rows::ingest_csv(path, &name, file, b).map(u64::from);
    }
    let levels: &[&str] = if name.starts_with("cluster_communication") {
        &["group", "step", "op", "rank"]
    } else if name.starts_with("communication_matrix") {
        &["step", "kind", "op", "link"]
    } else {
        &["step", "kind", "op"]
    };
    reference_rows::ingest_json(path, &name, levels, file, b).map(u64::from)
}

/// True for the CSV files this module reads: `kernel_details.csv` and `op_summary_*.csv` (with
/// `_slice_N` variants).
pub fn is_kernel_csv(file_name: &str) -> bool {
    file_name.ends_with(".csv")
        && (file_name.starts_with("kernel_details") || file_name.starts_with("op_summary"))
}
