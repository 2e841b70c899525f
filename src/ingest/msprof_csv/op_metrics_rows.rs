//! The op state and PMU pipe-ratio columns of kernel_details.csv / op_summary_*.csv → the
//! op_metrics table: while the file is the input (kernel_rows.rs), and as a companion beside a
//! text export's trace_view.json, whose events do not carry them (the companion also links its
//! rows' op details to those events: kernel_links.rs). Columns by name: `OP State`
//! (CANN 8.0+), `aic_mac_ratio` ... `aiv_mte3_ratio` (written when `aic_metrics` is on, e.g.
//! PipeUtilization at Level1/2); `N/A` and empty cells are NaN.

use super::columns::{Cols, MetricCols, cell, csv_error, int, is_comm_core};
use super::kernel_links::Links;
use crate::diag::Severity;
use crate::ingest::builder::TablesBuilder;
use crate::ingest::chrome_json::number::us_to_ns;
use crate::ingest::error::IngestError;
use crate::model::kernels::KernelRow;
use crate::model::op_metrics::{ImpossibleRatios, OpMetricsRow};
use crate::model::{FileId, StrId};

/// One task's values besides its metrics, as interned by the caller.
pub(super) struct TaskCells {
    pub file: FileId,
    pub name: StrId,
    pub op_type: StrId,
    pub task_type: StrId,
    pub dur_ns: i64,
    /// Input shapes, input dtypes, output shapes.
    pub shapes: [StrId; 3],
}

/// Pushes the op_metrics row of one compute task row when it has an op state or a ratio; a
/// task with an impossible ratio keeps none (counted in `bad`, [`report_ratios`]).
pub(super) fn push(
    b: &mut TablesBuilder,
    m: &MetricCols,
    rec: &csv::ByteRecord,
    t: TaskCells,
    bad: &mut ImpossibleRatios,
) {
    let mut ratios = m.ratios(rec);
    bad.check(&mut ratios);
    let state = m.state(rec);
    if state.is_none() && ratios.iter().all(|r| r.is_nan()) {
        return;
    }
    let op_state = state.map_or(StrId::EMPTY, |s| b.intern(&String::from_utf8_lossy(s)));
    b.t.op_metrics.push(OpMetricsRow {
        file: t.file,
        name: t.name,
        op_type: t.op_type,
        task_type: t.task_type,
        dur_ns: t.dur_ns,
        op_state,
        input_shapes: t.shapes[0],
        input_dtypes: t.shapes[1],
        output_shapes: t.shapes[2],
        ratios,
    });
}

/// The `pmu_ratio_invalid` diagnostic of a file's tasks with impossible pipe ratios.
pub(super) fn report_ratios(b: &mut TablesBuilder, path: &str, bad: &ImpossibleRatios) {
    b.diag()
        .add_n("pmu_ratio_invalid", Severity::DataLoss, bad.tasks, || {
            format!(
                "{path}: pipe ratios outside 0..1: {}; a ratio is a share of the task's time, so these tasks' ratios are not read (no advisor rule prices them)",
                bad.summary()
            )
        });
}

/// Reads a kernel_details.csv beside a text export: its metric columns into `file`'s op_metrics
/// (unless `file` already has rows: an `export_type=both` db gave them), and its compute rows'
/// details into kernels rows linked to the trace_view.json events they describe
/// ([`super::kernel_links`]). Returns rows read.
pub fn ingest_companion(
    path: &str,
    file: FileId,
    b: &mut TablesBuilder,
) -> Result<u64, IngestError> {
    let metrics_wanted = !b.tables().op_metrics.file.contains(&file);
    let mut links = Links::new(b, file);
    if !metrics_wanted && links.is_empty() {
        return Ok(0);
    }
    // Streamed (a 1 M-task capture's file is hundreds of MB; only the metric columns are kept).
    let max = crate::ingest::source::MAX_COMPANION_BYTES;
    let f = crate::ingest::source::open_regular(std::path::Path::new(path), max).map_err(|e| {
        IngestError::Io {
            path: path.to_string(),
            source: e,
        }
    })?;
    let mut rd = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(std::io::Read::take(f, max));
    let header = rd.byte_headers().map_err(|e| csv_error(path, e))?.clone();
    let cols = Cols::find(&header, path)?;
    let metrics = cols.metrics.filter(|_| metrics_wanted);
    if metrics.is_none() && links.is_empty() {
        return Ok(0);
    }
    let mut rec = csv::ByteRecord::new();
    let (mut rows, mut bad, mut short, mut implausible) = (0u64, 0u64, 0u64, 0u64);
    let mut impossible = ImpossibleRatios::default();
    loop {
        match rd.read_byte_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let at = e.position().map_or(0, |p| p.byte());
                b.diag().add("companion_unreadable", Severity::DataLoss, || {
                    format!("{path}: CSV unreadable from byte {at} ({e}); op metrics before it are kept")
                });
                break;
            }
        }
        rows += 1;
        // A row with fewer cells than the header (a file cut mid-row) is not read: its last
        // cell may be cut short.
        if rec.len() < header.len() {
            short += 1;
            continue;
        }
        let text = |b: &mut TablesBuilder, i: Option<usize>| -> StrId {
            cell(&rec, i).map_or(StrId::EMPTY, |v| b.intern(&String::from_utf8_lossy(v)))
        };
        let task_type = text(b, cols.core);
        if is_comm_core(b.tables().str(task_type)) {
            continue;
        }
        let Some(dur_ns) = cell(&rec, Some(cols.dur)).and_then(us_to_ns) else {
            bad += 1;
            continue;
        };
        if !(0..=crate::units::MAX_SPAN_NS).contains(&dur_ns) {
            implausible += 1;
            continue;
        }
        let name = text(b, Some(cols.name));
        let op_type = text(b, cols.op_type);
        let shapes = cols.shapes.map(|k| text(b, k));
        if !links.is_empty()
            && let Some(ts) = cell(&rec, Some(cols.start)).and_then(us_to_ns)
        {
            let row = KernelRow {
                op_type,
                task_type,
                block_num: int(&rec, cols.block).unwrap_or(-1),
                mix_block_num: int(&rec, cols.mix_block).unwrap_or(-1),
                shapes,
            };
            links.link(b, ts, name, row);
        }
        if let Some(m) = &metrics {
            let cells = TaskCells {
                file,
                name,
                op_type,
                task_type,
                dur_ns,
                shapes: [shapes[0], shapes[1], shapes[3]],
            };
            push(b, m, &rec, cells, &mut impossible);
        }
    }
    report_ratios(b, path, &impossible);
    b.diag()
        .add_n("csv_row_skipped", Severity::DataLoss, bad, || {
            format!("{path}: rows without a duration; their op metrics are not read")
        });
    b.diag()
        .add_n("skipped_event", Severity::DataLoss, implausible, || {
            format!("{path}: rows whose duration is negative or longer than a week; their op metrics are not read")
        });
    b.diag().add_n("truncated", Severity::DataLoss, short, || {
        format!("{path}: rows with fewer cells than the header (a cut file); their op metrics are not read")
    });
    let unmatched = links.unmatched;
    b.diag().add_n("kernel_details_unmatched", Severity::Info, unmatched, || {
        format!("{path}: compute rows with no trace_view.json event of the same start and name (their op details are not linked to the timeline)")
    });
    Ok(rows)
}
