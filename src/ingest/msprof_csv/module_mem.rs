//! `npu_module_mem.csv`: reserved memory per driver module (HCCL, RUNTIME, APP, GE, ...) over
//! time, into the `memory` table with source `npu_module_mem.csv`. Two variants: CANN's
//! `Device_id, Component, Timestamp(us), Total Reserved(KB), Device` and torch_npu's rewrite
//! `Component, Timestamp(us), Total Reserved(MB), Device` (MB = KB / 1024, a float). Read as a
//! companion of the text export chosen for a rank (the db carries NPU_MODULE_MEM itself).

use crate::diag::Severity;
use crate::ingest::builder::TablesBuilder;
use crate::ingest::chrome_json::number::us_to_ns;
use crate::ingest::error::IngestError;
use crate::model::FileId;

/// Reads `path` into the memory table rows of `file` (the rank's main input).
pub fn ingest(path: &str, file: FileId, b: &mut TablesBuilder) -> Result<u64, IngestError> {
    let bad = |what: String| IngestError::Csv {
        path: path.to_string(),
        what,
    };
    let mut c = super::memory_rows::open(path)?;
    let header = &c.header;
    let col = |n: &str| c.col(n);
    let (component, ts) = match (col("Component"), col("Timestamp(us)")) {
        (Some(c), Some(t)) => (c, t),
        _ => {
            return Err(bad(format!(
                "no Component / Timestamp(us) column (header: {})",
                crate::diag::cap_text(&header.join(","), 500)
            )));
        }
    };
    // Bytes per unit of the reserved column.
    let (reserved, unit) = match (col("Total Reserved(KB)"), col("Total Reserved(MB)")) {
        (Some(c), _) => (c, 1024.0),
        (None, Some(c)) => (c, 1024.0 * 1024.0),
        _ => {
            return Err(bad(
                "no Total Reserved(KB) / Total Reserved(MB) column".into()
            ));
        }
    };
    let device_id = col("Device_id");
    let device_text = col("Device");
    let source = b.intern("npu_module_mem.csv");
    let (mut rows, mut skipped) = (0u64, 0u64);
    for rec in c.rd.records() {
        let Ok(r) = rec else {
            skipped += 1;
            continue;
        };
        let get = |i: usize| r.get(i).unwrap_or("").trim();
        let (Some(t), Ok(v)) = (us_to_ns(get(ts).as_bytes()), get(reserved).parse::<f64>()) else {
            skipped += 1;
            continue;
        };
        // `NPU:3` (torch_npu) or Device_id.
        let device = device_id
            .and_then(|i| get(i).parse().ok())
            .or_else(|| device_text.and_then(|i| get(i).rsplit(':').next()?.parse().ok()))
            .unwrap_or(-1);
        let comp = b.intern(get(component));
        let m = &mut b.t.memory;
        m.file.push(file);
        m.device.push(device);
        m.source.push(source);
        m.component.push(comp);
        m.ts_ns.push(t);
        m.allocated_bytes.push(-1);
        m.reserved_bytes.push((v * unit).round() as i64);
        m.active_bytes.push(-1);
        m.hbm_bytes.push(-1);
        rows += 1;
    }
    if skipped > 0 {
        b.diag()
            .add_n("csv_row_skipped", Severity::DataLoss, skipped, || {
                format!("{path}: rows without a timestamp or reserved value")
            });
    }
    Ok(rows)
}
