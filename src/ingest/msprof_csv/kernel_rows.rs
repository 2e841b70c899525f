//! Device task rows of kernel_details.csv / op_summary_*.csv → events and kernels.

use super::columns::{Cols, cell, csv_error, int, is_comm_core};
use super::op_metrics_rows::TaskCells;
use crate::diag::Severity;
use crate::ingest::builder::{FileMeta, NewEvent, TablesBuilder};
use crate::ingest::chrome_json::number::us_to_ns;
use crate::ingest::error::IngestError;
use crate::model::events::NO_ROW;
use crate::model::files::SourceFormat;
use crate::model::kernels::KernelRow;
use crate::model::{FileId, StrId, ThreadId};

/// The synthesised `Ascend Hardware` process (per device: + device id), as the db reader makes it.
use crate::ingest::ascend_db::PID_HARDWARE;

/// Reads one kernel_details.csv / op_summary_*.csv into `b`.
pub fn ingest_file(path: &str, b: &mut TablesBuilder) -> Result<(), IngestError> {
    let io = |e: std::io::Error| IngestError::Io {
        path: path.to_string(),
        source: e,
    };
    let bytes =
        crate::ingest::source::read_regular(std::path::Path::new(path), u64::MAX).map_err(io)?;
    ingest_bytes(path, &bytes, b)
}

/// Reads the bytes of one kernel_details.csv / op_summary_*.csv (named `path` in diagnostics)
/// into `b`.
pub fn ingest_bytes(path: &str, bytes: &[u8], b: &mut TablesBuilder) -> Result<(), IngestError> {
    let size = bytes.len() as u64;
    let (complete, unterminated_ok) = readable_end(bytes);
    let mut rd = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(&bytes[..complete]);
    let header = rd.byte_headers().map_err(|e| csv_error(path, e))?.clone();
    let cols = Cols::find(&header, path)?;
    if unterminated_ok {
        b.diag().add("no_final_line_break", Severity::Info, || {
            format!("{path}: no line break after the last row; it has every column and was read")
        });
    }
    if complete < bytes.len() {
        b.note_truncated(path);
        let (at, total) = (complete, bytes.len());
        b.diag().add("truncated", Severity::DataLoss, || {
            format!("{path}: ends mid-row at byte {total} without a line break; the partial row from byte {at} is not read")
        });
    }
    let file = b.add_file(
        path,
        FileMeta {
            format: Some(SourceFormat::KernelCsv),
            size_bytes: size,
            parsed_bytes: size,
            rank: crate::ingest::rank::rank_from_path(path),
            ..Default::default()
        },
    );
    let mut rows = Rows {
        path,
        file,
        cols,
        threads: Vec::new(),
        bad: 0,
        first_bad: String::new(),
        lossy: 0,
        steps: Default::default(),
        impossible: Default::default(),
    };
    let mut rec = csv::ByteRecord::new();
    loop {
        match rd.read_byte_record(&mut rec) {
            Ok(true) => rows.row(b, &rec),
            Ok(false) => break,
            Err(e) => {
                // A cut file ends inside a quoted field: keep what was read, say where it stops.
                let at = e.position().map_or(0, |p| p.byte());
                b.note_truncated(path);
                b.diag().add("truncated", Severity::DataLoss, || {
                    format!("{path}: CSV unreadable from byte {at} ({e}); rows before it are kept")
                });
                break;
            }
        }
    }
    rows.report(b);
    Ok(())
}

/// Where the readable rows end, and whether that is past a last line without a line break. A
/// file cut mid-row (a dump that died) has no final line break: its last line is read only when
/// it has every column of the header; otherwise reading stops at the last line break.
fn readable_end(bytes: &[u8]) -> (usize, bool) {
    let complete = match bytes.last() {
        Some(b'\n') | None => bytes.len(),
        Some(_) => memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1),
    };
    if complete == bytes.len() || complete == 0 {
        return (complete, false);
    }
    let fields = |b: &[u8]| {
        csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(b)
            .byte_records()
            .next()
            .and_then(Result::ok)
            .map_or(0, |r| r.len())
    };
    if fields(bytes) == fields(&bytes[complete..]) {
        (bytes.len(), true)
    } else {
        (complete, false)
    }
}

/// The rows of one file being read: its threads (one per device and stream) and what was
/// skipped or decoded lossily.
struct Rows<'p> {
    path: &'p str,
    file: FileId,
    cols: Cols,
    threads: Vec<((i64, i64), ThreadId)>,
    bad: u64,
    first_bad: String,
    lossy: u64,
    /// `Step Id` → first start and last end of its rows.
    steps: std::collections::BTreeMap<i64, (i64, i64)>,
    /// Tasks whose pipe ratios cannot be ratios.
    impossible: crate::model::op_metrics::ImpossibleRatios,
}

impl Rows<'_> {
    /// One row: an event on its stream's thread, and a kernels row unless it is a communication
    /// task.
    fn row(&mut self, b: &mut TablesBuilder, rec: &csv::ByteRecord) {
        let (path, cols) = (self.path, self.cols);
        let line = rec.position().map_or(0, |p| p.line());
        let (Some(ts), Some(dur)) = (
            cell(rec, Some(cols.start)).and_then(us_to_ns),
            cell(rec, Some(cols.dur)).and_then(us_to_ns),
        ) else {
            self.bad += 1;
            if self.first_bad.is_empty() {
                self.first_bad = format!("{path}:{line}: no start time or duration");
            }
            return;
        };
        if let Some(why) = crate::ingest::builder::implausible_span(ts, ts.saturating_add(dur)) {
            b.diag().add("skipped_event", Severity::DataLoss, || {
                format!("{path}:{line}: start {ts} ns, duration {dur} ns: {why}; row skipped")
            });
            return;
        }
        if let Some(k) = int(rec, cols.step) {
            let e = self.steps.entry(k).or_insert((ts, ts + dur));
            e.0 = e.0.min(ts);
            e.1 = e.1.max(ts + dur);
        }
        let device = int(rec, cols.device).unwrap_or(-1) as i32;
        let stream = int(rec, cols.stream).unwrap_or(-1);
        let thread = self.thread(b, device, stream);
        let name = self.text(b, cell(rec, Some(self.cols.name)));
        let core = self.text(b, cell(rec, self.cols.core));
        let op_type = self.text(b, cell(rec, self.cols.op_type));
        let is_comm = is_comm_core(b.tables().str(core));
        let kernel = if is_comm {
            NO_ROW
        } else {
            self.kernel(b, rec, op_type, core)
        };
        if let (false, Some(m)) = (is_comm, &cols.metrics) {
            let k = &b.tables().kernels;
            let cells = TaskCells {
                file: self.file,
                name,
                op_type,
                task_type: core,
                dur_ns: dur,
                shapes: [&k.input_shapes, &k.input_dtypes, &k.output_shapes]
                    .map(|c| c[kernel as usize]),
            };
            super::op_metrics_rows::push(b, m, rec, cells, &mut self.impossible);
        }
        if let Some(w) = cell(rec, cols.wait).and_then(us_to_ns).filter(|&w| w >= 0) {
            b.t.task_waits.push(thread, ts, w);
        }
        b.push_event(NewEvent {
            thread,
            ts_ns: ts,
            dur_ns: dur,
            name,
            cat: StrId::EMPTY,
            task_type: core,
            stream: stream as i32,
            connection_id: -1,
            correlation_id: -1,
            graph_id: int(rec, self.cols.model).unwrap_or(-1),
            kernel,
            comm_task: NO_ROW,
        });
    }

    /// The `Ascend Hardware` thread of (`device`, `stream`), named as the db reader names it.
    fn thread(&mut self, b: &mut TablesBuilder, device: i32, stream: i64) -> ThreadId {
        let key = (device as i64, stream);
        if let Some(&(_, t)) = self.threads.iter().find(|x| x.0 == key) {
            return t;
        }
        let label = if stream >= 0 {
            format!("Stream {stream}")
        } else {
            "Stream N/A".to_string()
        };
        let t = b.named_thread(
            self.file,
            PID_HARDWARE + device.max(0) as i64,
            stream,
            ("Ascend Hardware", "NPU"),
            &label,
        );
        if device >= 0 {
            b.set_process_device(t, device);
        }
        self.threads.push((key, t));
        t
    }

    /// The kernels row of a compute task: op type, core, block dims, shapes, dtypes, formats.
    fn kernel(
        &mut self,
        b: &mut TablesBuilder,
        rec: &csv::ByteRecord,
        op_type: StrId,
        core: StrId,
    ) -> u32 {
        let shapes = self.cols.shapes;
        let sh = shapes.map(|c| self.text(b, cell(rec, c)));
        b.kernel_row(KernelRow {
            op_type,
            task_type: core,
            block_num: int(rec, self.cols.block).unwrap_or(-1),
            mix_block_num: int(rec, self.cols.mix_block).unwrap_or(-1),
            shapes: sh,
        })
    }

    /// A cell interned (empty when absent); invalid UTF-8 is decoded lossily and counted.
    fn text(&mut self, b: &mut TablesBuilder, v: Option<&[u8]>) -> StrId {
        match v {
            None => StrId::EMPTY,
            Some(v) => match std::str::from_utf8(v) {
                Ok(t) => b.intern(t),
                Err(_) => {
                    self.lossy += 1;
                    b.intern(&String::from_utf8_lossy(v))
                }
            },
        }
    }

    /// The rows skipped for a missing start or duration and the cells decoded lossily.
    fn report(self, b: &mut TablesBuilder) {
        let path = self.path;
        super::op_metrics_rows::report_ratios(b, path, &self.impossible);
        // The steps the rows name, as STEP_TIME would give them: a CSV-only export has no host
        // ProfilerStep events to take them from.
        let source = b.intern("kernel_details.csv Step Id");
        for (&k, &(start, end)) in &self.steps {
            let s = &mut b.t.steps;
            s.file.push(self.file);
            s.step.push(k);
            s.start_ns.push(start);
            s.end_ns.push(end);
            s.source.push(source);
        }
        b.diag()
            .add_n("csv_row_skipped", Severity::DataLoss, self.bad, || {
                self.first_bad
            });
        b.diag()
            .add_n("non_utf8_string", Severity::Info, self.lossy, || {
                format!("{path}: cells with invalid UTF-8 were decoded lossily (U+FFFD)")
            });
    }
}
