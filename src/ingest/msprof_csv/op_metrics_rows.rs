//! The op state and PMU pipe-ratio columns of kernel_details.csv / op_summary_*.csv → the
//! op_metrics table: while the file is the input (kernel_rows.rs), and as a companion beside a
//! text export's trace_view.json, whose events do not carry them. Columns by name: `OP State`
//! (CANN 8.0+), `aic_mac_ratio` ... `aiv_mte3_ratio` (written when `aic_metrics` is on, e.g.
//! PipeUtilization at Level1/2); `N/A` and empty cells are NaN.

use crate::diag::Severity;
use crate::ingest::builder::TablesBuilder;
use crate::ingest::chrome_json::number::us_to_ns;
use crate::ingest::error::IngestError;
use crate::model::op_metrics::{OpMetricsRow, PIPES};
use crate::model::{FileId, StrId};

/// Where the metric columns are; None from [`MetricCols::find`] when the file has none.
#[derive(Clone, Copy)]
pub struct MetricCols {
    state: Option<usize>,
    pipes: [Option<usize>; 9],
}

impl MetricCols {
    pub fn find(names: &[String]) -> Option<MetricCols> {
        let at = |n: &str| names.iter().position(|h| h == n);
        let m = MetricCols {
            state: at("OP State"),
            pipes: PIPES.map(at),
        };
        (m.state.is_some() || m.pipes.iter().any(Option::is_some)).then_some(m)
    }

    fn ratios(&self, rec: &csv::ByteRecord) -> [f32; 9] {
        self.pipes.map(|c| {
            c.and_then(|c| rec.get(c))
                .and_then(|v| std::str::from_utf8(v.trim_ascii()).ok())
                .and_then(|v| v.parse::<f32>().ok())
                .unwrap_or(f32::NAN)
        })
    }

    fn state<'r>(&self, rec: &'r csv::ByteRecord) -> Option<&'r [u8]> {
        let v = rec.get(self.state?)?.trim_ascii();
        (!v.is_empty() && v != b"N/A").then_some(v)
    }
}

/// One task's values besides its metrics, as interned by the caller.
pub struct TaskCells {
    pub file: FileId,
    pub name: StrId,
    pub op_type: StrId,
    pub task_type: StrId,
    pub dur_ns: i64,
    /// Input shapes, input dtypes, output shapes.
    pub shapes: [StrId; 3],
}

/// Pushes the op_metrics row of one compute task row when it has an op state or a ratio.
pub fn push(b: &mut TablesBuilder, m: &MetricCols, rec: &csv::ByteRecord, t: TaskCells) {
    let ratios = m.ratios(rec);
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

/// Reads the metric columns of a kernel_details.csv beside a text export into `file`'s
/// op_metrics (nothing when the file has none, or when `file` already has rows: an
/// `export_type=both` db gave them). Returns rows read.
pub fn ingest_companion(
    path: &str,
    file: FileId,
    b: &mut TablesBuilder,
) -> Result<u64, IngestError> {
    if b.tables().op_metrics.file.contains(&file) {
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
    let names: Vec<String> = header
        .iter()
        .map(|h| String::from_utf8_lossy(h).trim().to_string())
        .collect();
    let Some(m) = MetricCols::find(&names) else {
        return Ok(0);
    };
    let at = |cands: &[&str]| names.iter().position(|n| cands.contains(&n.as_str()));
    let (name, dur) = (
        at(&["Name", "Op Name"]),
        at(&["Duration(us)", "Task Duration(us)"]),
    );
    let (Some(name), Some(dur)) = (name, dur) else {
        return Ok(0);
    };
    let op_type = at(&["Type", "OP Type"]);
    let core = at(&["Accelerator Core", "Task Type"]);
    let shapes = [
        at(&["Input Shapes"]),
        at(&["Input Data Types"]),
        at(&["Output Shapes"]),
    ];
    let mut rec = csv::ByteRecord::new();
    let (mut rows, mut bad) = (0u64, 0u64);
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
        let text = |b: &mut TablesBuilder, i: Option<usize>| -> StrId {
            match i.and_then(|i| rec.get(i)).map(<[u8]>::trim_ascii) {
                Some(v) if !v.is_empty() && v != b"N/A" => b.intern(&String::from_utf8_lossy(v)),
                _ => StrId::EMPTY,
            }
        };
        let task_type = text(b, core);
        let tt = b.tables().str(task_type);
        if tt == "HCCL" || tt == "COMMUNICATION" {
            continue;
        }
        let Some(dur_ns) = rec.get(dur).map(<[u8]>::trim_ascii).and_then(us_to_ns) else {
            bad += 1;
            continue;
        };
        let cells = TaskCells {
            file,
            name: text(b, Some(name)),
            op_type: text(b, op_type),
            task_type,
            dur_ns,
            shapes: shapes.map(|c| text(b, c)),
        };
        push(b, &m, &rec, cells);
    }
    b.diag()
        .add_n("csv_row_skipped", Severity::DataLoss, bad, || {
            format!("{path}: rows without a duration; their op metrics are not read")
        });
    Ok(rows)
}

fn csv_error(path: &str, e: csv::Error) -> IngestError {
    IngestError::Csv {
        path: path.to_string(),
        what: e.to_string(),
    }
}
