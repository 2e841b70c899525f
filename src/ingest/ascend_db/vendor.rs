//! Vendor-derived data: OVERLAP_ANALYSIS (newest msprof, or added by MindStudio Insight) as the
//! `Overlap Analysis` process trace_view.json carries, and the `analysis.db` beside a torch_npu
//! db (StepTraceTime, CommAnalyzerTime, CommAnalyzerBandwidth, CommAnalyzerMatrix) into the
//! reference table. Both are for comparison only; no analysis derives from them.

use super::Ctx;
use super::open::{err, open};
use super::rows;
use super::scan::{Spec, for_each_rows};
use crate::ingest::builder::NewEvent;
use crate::ingest::error::IngestError;
use rusqlite::types::ValueRef;

/// ENUM_OVERLAP_ANALYSIS_TYPE → the thread (row) names trace_view.json uses.
const OVERLAP_ROWS: [&str; 4] = [
    "Computing",
    "Communication",
    "Communication(Not Overlapped)",
    "Free",
];

pub(super) fn overlap_analysis(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    if !cx.schema.has("OVERLAP_ANALYSIS") {
        return Ok(());
    }
    let names = OVERLAP_ROWS.map(|n| cx.b.intern(n));
    let cols: [Spec; 4] = [&["deviceId"], &["startNs"], &["endNs"], &["type"]];
    for_each_rows(cx, "OVERLAP_ANALYSIS", &cols, |cx, rows| {
        for r in rows.chunks_exact(4) {
            let (device, ty) = (r[0], r[3]);
            let Some(&name) = usize::try_from(ty).ok().and_then(|t| names.get(t)) else {
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
    })
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
    let apath = adb.display().to_string();
    let c = open(&apath)?;
    let schema = super::open::Schema::probe(&c, &apath)?;
    for table in ANALYSIS_TABLES {
        if !schema.has(table) {
            continue;
        }
        let tname = cx.b.intern(table);
        let mut st = c
            .prepare(&format!("SELECT * FROM {table}"))
            .map_err(|e| err(&apath, e))?;
        let cols: Vec<_> = st.column_names().map(|n| n.to_string()).collect();
        let cols: Vec<_> = cols.iter().map(|n| cx.b.intern(n)).collect();
        let mut q = st.query([]).map_err(|e| err(&apath, e))?;
        let mut row = 0u32;
        while let Some(r) = q.next().map_err(|e| err(&apath, e))? {
            for (i, &col) in cols.iter().enumerate() {
                let (number, text) = match r.get_ref(i) {
                    Ok(ValueRef::Text(_)) => (f64::NAN, cx.b.intern(&rows::text(r, i))),
                    _ => (rows::num(r, i), crate::model::StrId::EMPTY),
                };
                let t = &mut cx.b.t.reference;
                t.file.push(cx.file);
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
