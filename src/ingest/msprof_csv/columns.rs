//! The columns of kernel_details.csv / op_summary_*.csv, found by name (both spellings, older
//! CANN's `Block Dim`), and how their cells read: shared by the events reader (kernel_rows.rs) and
//! the op-metrics companion (op_metrics_rows.rs).

use crate::ingest::error::IngestError;
use crate::model::op_metrics::PIPES;

/// Column indexes by the names both spellings use.
#[derive(Clone, Copy)]
pub(super) struct Cols {
    pub(super) name: usize,
    pub(super) start: usize,
    pub(super) dur: usize,
    pub(super) op_type: Option<usize>,
    pub(super) core: Option<usize>,
    pub(super) stream: Option<usize>,
    pub(super) device: Option<usize>,
    pub(super) block: Option<usize>,
    pub(super) mix_block: Option<usize>,
    /// `Step Id` (torch_npu kernel_details.csv): the rows' ProfilerStep.
    pub(super) step: Option<usize>,
    /// `Model ID` (kernel_details.csv Level1/2, op_summary): the graph a task was replayed from.
    pub(super) model: Option<usize>,
    /// `Wait Time(us)` / `Task Wait Time(us)`: the exporter's wait before the task.
    pub(super) wait: Option<usize>,
    /// Input shapes, dtypes, formats, then output shapes, dtypes, formats.
    pub(super) shapes: [Option<usize>; 6],
    /// `OP State` and the pipe-ratio columns, when the file has them.
    pub(super) metrics: Option<MetricCols>,
}

impl Cols {
    pub(super) fn find(header: &csv::ByteRecord, path: &str) -> Result<Cols, IngestError> {
        let names: Vec<String> = header
            .iter()
            .map(|h| String::from_utf8_lossy(h).trim().to_string())
            .collect();
        let any = |cands: &[&str]| names.iter().position(|n| cands.contains(&n.as_str()));
        let need = |cands: &[&str]| {
            any(cands).ok_or_else(|| IngestError::Csv {
                path: path.to_string(),
                what: format!(
                    "no `{}` column (header: {})",
                    cands.join("` / `"),
                    crate::diag::cap_text(&names.join(","), 500)
                ),
            })
        };
        Ok(Cols {
            name: need(&["Name", "Op Name"])?,
            start: need(&["Start Time(us)", "Task Start Time(us)"])?,
            dur: need(&["Duration(us)", "Task Duration(us)"])?,
            op_type: any(&["Type", "OP Type"]),
            core: any(&["Accelerator Core", "Task Type"]),
            stream: any(&["Stream ID"]),
            device: any(&["Device_id"]),
            block: any(&["Block Num", "Block Dim"]),
            mix_block: any(&["Mix Block Num", "Mix Block Dim"]),
            step: any(&["Step Id", "Step ID"]),
            model: any(&["Model ID", "Model Id"]),
            wait: any(&["Wait Time(us)", "Task Wait Time(us)"]),
            shapes: [
                any(&["Input Shapes"]),
                any(&["Input Data Types"]),
                any(&["Input Formats"]),
                any(&["Output Shapes"]),
                any(&["Output Data Types"]),
                any(&["Output Formats"]),
            ],
            metrics: MetricCols::find(&names),
        })
    }
}

/// A cell as text: trimmed of blanks and the trailing TAB; `N/A` and empty are None.
pub(super) fn cell(r: &csv::ByteRecord, i: Option<usize>) -> Option<&[u8]> {
    let v = r.get(i?)?.trim_ascii();
    (!v.is_empty() && v != b"N/A").then_some(v)
}

pub(super) fn int(r: &csv::ByteRecord, i: Option<usize>) -> Option<i64> {
    std::str::from_utf8(cell(r, i)?).ok()?.parse().ok()
}

/// A communication row (`Accelerator Core` / `Task Type` HCCL or COMMUNICATION): an op, not a
/// compute task.
pub(super) fn is_comm_core(core: &str) -> bool {
    core == "HCCL" || core == "COMMUNICATION"
}

/// Where the metric columns are; None from [`MetricCols::find`] when the file has none.
#[derive(Clone, Copy)]
pub(super) struct MetricCols {
    state: Option<usize>,
    pipes: [Option<usize>; 9],
}

impl MetricCols {
    pub(super) fn find(names: &[String]) -> Option<MetricCols> {
        let at = |n: &str| names.iter().position(|h| h == n);
        let m = MetricCols {
            state: at("OP State"),
            pipes: PIPES.map(at),
        };
        (m.state.is_some() || m.pipes.iter().any(Option::is_some)).then_some(m)
    }

    pub(super) fn ratios(&self, rec: &csv::ByteRecord) -> [f32; 9] {
        self.pipes.map(|c| {
            c.and_then(|c| rec.get(c))
                .and_then(|v| std::str::from_utf8(v.trim_ascii()).ok())
                .and_then(|v| v.parse::<f32>().ok())
                .unwrap_or(f32::NAN)
        })
    }

    pub(super) fn state<'r>(&self, rec: &'r csv::ByteRecord) -> Option<&'r [u8]> {
        cell(rec, self.state)
    }
}

pub(super) fn csv_error(path: &str, e: csv::Error) -> IngestError {
    IngestError::Csv {
        path: path.to_string(),
        what: e.to_string(),
    }
}
