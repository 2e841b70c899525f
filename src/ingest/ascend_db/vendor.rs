//! Vendor-derived data: OVERLAP_ANALYSIS (newest msprof, or added by MindStudio Insight) as the
//! `Overlap Analysis` process trace_view.json carries (or, when the consumer asked for sums, into
//! the vendor_overlap table: one row per device and kind), and the `analysis.db` beside a
//! torch_npu db (StepTraceTime, CommAnalyzerTime, CommAnalyzerBandwidth, CommAnalyzerMatrix) into
//! the reference table. Both are for comparison only; no analysis derives from them.

use super::Ctx;
use super::open::{err, open};
use super::rows;
use super::scan::{Spec, for_each_rows, for_each_rows_mapped};
use crate::diag::Severity;
use crate::ingest::builder::NewEvent;
use crate::ingest::error::IngestError;
use crate::model::hash::FxHashMap;
use crate::model::vendor_overlap::OVERLAP_KINDS as OVERLAP_ROWS;
use rusqlite::types::ValueRef;

/// Read as rows of (device, start, end, type) by both readings below.
const OVERLAP_COLS: [Spec; 4] = [&["deviceId"], &["startNs"], &["endNs"], &["type"]];

pub(super) fn overlap_analysis(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    if !cx.schema.has("OVERLAP_ANALYSIS") {
        return Ok(());
    }
    if !cx.overlap_events {
        return overlap_sums(cx);
    }
    let names = OVERLAP_ROWS.map(|n| cx.b.intern(n));
    let mut unknown = 0u64;
    for_each_rows(cx, "OVERLAP_ANALYSIS", &OVERLAP_COLS, |cx, rows| {
        for r in rows.chunks_exact(4) {
            let (device, ty) = (r[0], r[3]);
            if !cx.span_ok("OVERLAP_ANALYSIS", r[1], r[2]) {
                continue;
            }
            let Some(&name) = usize::try_from(ty).ok().and_then(|t| names.get(t)) else {
                unknown += 1;
                continue;
            };
            let thread = cx.thread(
                (super::PID_OVERLAP + device, ty),
                ("Overlap Analysis", "NPU"),
                Some(device as i32),
                |_| OVERLAP_ROWS[ty as usize].to_string(),
            );
            cx.b.push_event(NewEvent::span(thread, r[1], r[2], name, -1));
        }
    })?;
    unknown_types(cx, unknown);
    Ok(())
}

fn unknown_types(cx: &mut Ctx<'_>, n: u64) {
    let path = cx.path;
    cx.b.diag().add_n("vendor_overlap_unknown_type", Severity::DataLoss, n, || {
        format!("{path}: OVERLAP_ANALYSIS rows of a type outside ENUM_OVERLAP_ANALYSIS_TYPE's four are not read")
    });
}

/// (rows, Σ dur) per kind, per device. Rows of one device come in runs, so the last device is
/// tried first; the index keeps a file with many device ids linear.
#[derive(Default)]
struct DeviceSums {
    devices: Vec<(i64, [(u64, i64); 4])>,
    at: FxHashMap<i64, usize>,
    last: usize,
}

impl DeviceSums {
    fn add(&mut self, device: i64, kind: usize, n: u64, dur: i64) {
        if self.devices.get(self.last).is_none_or(|s| s.0 != device) {
            let devices = &mut self.devices;
            self.last = *self.at.entry(device).or_insert_with(|| {
                devices.push((device, [(0, 0); 4]));
                devices.len() - 1
            });
        }
        let s = &mut self.devices[self.last].1[kind];
        s.0 += n;
        s.1 += dur;
    }
}

/// One chunk of OVERLAP_ANALYSIS rows, summed in the pool: the sums, the rows of an unknown
/// type, and the rows whose span is not a time (rare; the diagnostic is added in order).
#[derive(Default)]
struct ChunkSums {
    sums: DeviceSums,
    unknown: u64,
    bad_spans: Vec<(i64, i64)>,
}

fn chunk_sums(rows: &[i64]) -> ChunkSums {
    let mut out = ChunkSums::default();
    for r in rows.chunks_exact(4) {
        if crate::ingest::builder::implausible_span(r[1], r[2]).is_some() {
            out.bad_spans.push((r[1], r[2]));
            continue;
        }
        let Some(kind) = usize::try_from(r[3])
            .ok()
            .filter(|&k| k < OVERLAP_ROWS.len())
        else {
            out.unknown += 1;
            continue;
        };
        out.sums.add(r[0], kind, 1, r[2] - r[1]);
    }
    out
}

/// OVERLAP_ANALYSIS as per-(device, kind) sums in the vendor_overlap table: one scan, no
/// events; chunks are summed in parallel and the sums added in order.
fn overlap_sums(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    let mut sums = DeviceSums::default();
    let mut unknown = 0u64;
    for_each_rows_mapped(
        cx,
        "OVERLAP_ANALYSIS",
        &OVERLAP_COLS,
        chunk_sums,
        |cx, _, part| {
            for (start, end) in part.bad_spans {
                cx.span_ok("OVERLAP_ANALYSIS", start, end);
            }
            unknown += part.unknown;
            for (device, kinds) in part.sums.devices {
                for (kind, (n, dur)) in kinds.into_iter().enumerate() {
                    sums.add(device, kind, n, dur);
                }
            }
        },
    )?;
    let mut devices = sums.devices;
    devices.sort_unstable_by_key(|s| s.0);
    let mut rows = 0u64;
    for (device, kinds) in devices {
        let device = device.clamp(-1, i32::MAX as i64) as i32;
        for (kind, (n, dur)) in kinds.into_iter().enumerate().filter(|k| k.1.0 > 0) {
            rows += n;
            cx.b.t
                .vendor_overlap
                .push(cx.file, device, kind as u8, n, dur);
        }
    }
    let path = cx.path;
    cx.b.diag().add_n("vendor_overlap_as_sums", Severity::Info, rows, || {
        format!("{path}: OVERLAP_ANALYSIS rows read as per-device sums (device_time's vendor comparison), not as events; `export` and `query` read them as events")
    });
    unknown_types(cx, unknown);
    Ok(())
}

const ANALYSIS_TABLES: [&str; 4] = [
    "StepTraceTime",
    "CommAnalyzerTime",
    "CommAnalyzerBandwidth",
    "CommAnalyzerMatrix",
];

/// Reads `analysis.db` beside the profiler db, when there is one.
pub(super) fn analysis_db(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    let Some(dir) = std::path::Path::new(cx.path).parent() else {
        return Ok(());
    };
    let adb = dir.join("analysis.db");
    if !adb.is_file() {
        return Ok(());
    }
    read_analysis_db(&adb.display().to_string(), cx.file, cx.b)
}

/// Rows read per `analysis.db` table (real ones hold a row per step, per communication op or per
/// link: thousands); a crafted file's further rows are left out with a `truncated` diagnostic.
const MAX_ANALYSIS_ROWS: u32 = 2_000_000;

/// Reads the tables of an `analysis.db` (StepTraceTime, CommAnalyzer*) into `file`'s reference
/// rows: beside a profiler db, or as the summary of a rank kept with summaries only.
pub fn read_analysis_db(
    apath: &str,
    file: crate::model::FileId,
    b: &mut crate::ingest::builder::TablesBuilder,
) -> Result<(), IngestError> {
    let c = open(apath)?;
    let schema = super::open::Schema::probe(&c, apath)?;
    for table in ANALYSIS_TABLES {
        if !schema.has(table) {
            continue;
        }
        let tname = b.intern(table);
        let mut st = c
            .prepare(&format!("SELECT * FROM {table}"))
            .map_err(|e| err(apath, e))?;
        let cols: Vec<_> = st.column_names().map(|n| n.to_string()).collect();
        let cols: Vec<_> = cols.iter().map(|n| b.intern(n)).collect();
        let mut q = st.query([]).map_err(|e| err(apath, e))?;
        let mut row = 0u32;
        while let Some(r) = q.next().map_err(|e| err(apath, e))? {
            if row == MAX_ANALYSIS_ROWS {
                b.diag().add("truncated", Severity::DataLoss, || {
                    format!("{apath}: {table} has more than {MAX_ANALYSIS_ROWS} rows; the rest are not read")
                });
                break;
            }
            for (i, &col) in cols.iter().enumerate() {
                let (number, text) = match r.get_ref(i) {
                    Ok(ValueRef::Text(_)) => (f64::NAN, b.intern(&rows::text(r, i))),
                    _ => (rows::num(r, i), crate::model::StrId::EMPTY),
                };
                let t = &mut b.t.reference;
                t.file.push(file);
                t.table.push(tname);
                t.row.push(row);
                t.column.push(col);
                t.number.push(number);
                t.text.push(text);
            }
            row += 1;
        }
    }
    Ok(())
}
