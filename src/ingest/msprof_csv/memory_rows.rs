//! torch_npu's `memory_record.csv` (allocator totals over time: Component PTA / GE / PTA+GE /
//! WORKSPACE, MB) into the `memory` table with source `memory_record.csv`, and
//! `operator_memory.csv` (one row per allocation: Size in KB, totals in MB, an empty release
//! when the block outlived the capture) into `op_memory`. Bytes and ns, like the db's
//! MEMORY_RECORD and OP_MEMORY, so both exports give the same rows. Headers by name.

use crate::diag::Severity;
use crate::ingest::builder::TablesBuilder;
use crate::ingest::chrome_json::number::us_to_ns;
use crate::ingest::error::IngestError;
use crate::model::FileId;

const MB: f64 = 1024.0 * 1024.0;

/// A headed CSV (flexible rows, trimmed header names), shared with `module_mem`.
pub(super) struct Csv {
    pub(super) header: Vec<String>,
    pub(super) rd: csv::Reader<std::fs::File>,
}

pub(super) fn open(path: &str) -> Result<Csv, IngestError> {
    let bad = |what: String| IngestError::Csv {
        path: path.to_string(),
        what,
    };
    let mut rd = csv::ReaderBuilder::new().flexible(true).from_reader(
        crate::ingest::source::open_regular(
            std::path::Path::new(path),
            crate::ingest::source::MAX_COMPANION_BYTES,
        )
        .map_err(|e| bad(e.to_string()))?,
    );
    let header = rd
        .headers()
        .map_err(|e| bad(e.to_string()))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    Ok(Csv { header, rd })
}

impl Csv {
    pub(super) fn col(&self, n: &str) -> Option<usize> {
        self.header.iter().position(|h| h == n)
    }
    fn need(&self, path: &str, n: &str) -> Result<usize, IngestError> {
        self.col(n).ok_or_else(|| IngestError::Csv {
            path: path.to_string(),
            what: format!(
                "no `{n}` column (header: {})",
                crate::diag::cap_text(&self.header.join(","), 500)
            ),
        })
    }
}

/// `NPU:3` → 3; anything else → -1.
fn device(s: &str) -> i32 {
    s.trim()
        .rsplit(':')
        .next()
        .and_then(|d| d.parse().ok())
        .unwrap_or(-1)
}

/// MB cell → bytes; empty / `N/A` → -1.
fn mb(s: Option<&str>, unit: f64) -> i64 {
    s.and_then(|s| s.trim().parse::<f64>().ok())
        .map_or(-1, |v| (v * unit).round() as i64)
}

fn ts(s: Option<&str>) -> Option<i64> {
    us_to_ns(s?.trim().as_bytes())
}

fn skipped(b: &mut TablesBuilder, path: &str, n: u64) {
    if n > 0 {
        b.diag()
            .add_n("csv_row_skipped", Severity::DataLoss, n, || {
                format!("{path}: rows without a readable timestamp")
            });
    }
}

pub fn ingest_memory_record(
    path: &str,
    file: FileId,
    b: &mut TablesBuilder,
) -> Result<u64, IngestError> {
    let mut c = open(path)?;
    let comp = c.need(path, "Component")?;
    let t = c.need(path, "Timestamp(us)")?;
    let (alloc, res, act, dev) = (
        c.col("Total Allocated(MB)"),
        c.col("Total Reserved(MB)"),
        c.col("Total Active(MB)"),
        c.col("Device Type"),
    );
    let source = b.intern("memory_record.csv");
    let (mut rows, mut skip) = (0u64, 0u64);
    for rec in c.rd.records() {
        let Ok(r) = rec else {
            skip += 1;
            continue;
        };
        let Some(ts_ns) = ts(r.get(t)) else {
            skip += 1;
            continue;
        };
        let component = b.intern(r.get(comp).unwrap_or("").trim());
        let m = &mut b.t.memory;
        m.file.push(file);
        m.device.push(dev.and_then(|i| r.get(i)).map_or(-1, device));
        m.source.push(source);
        m.component.push(component);
        m.ts_ns.push(ts_ns);
        m.allocated_bytes.push(mb(alloc.and_then(|i| r.get(i)), MB));
        m.reserved_bytes.push(mb(res.and_then(|i| r.get(i)), MB));
        m.active_bytes.push(mb(act.and_then(|i| r.get(i)), MB));
        m.hbm_bytes.push(-1);
        rows += 1;
    }
    skipped(b, path, skip);
    Ok(rows)
}

pub fn ingest_operator_memory(
    path: &str,
    file: FileId,
    b: &mut TablesBuilder,
) -> Result<u64, IngestError> {
    let mut c = open(path)?;
    let name = c.need(path, "Name")?;
    let size = c.need(path, "Size(KB)")?;
    let alloc_t = c.need(path, "Allocation Time(us)")?;
    let cols = [
        c.col("Release Time(us)"),
        c.col("Allocation Total Allocated(MB)"),
        c.col("Allocation Total Reserved(MB)"),
        c.col("Release Total Allocated(MB)"),
        c.col("Release Total Reserved(MB)"),
        c.col("Device Type"),
    ];
    let (mut rows, mut skip) = (0u64, 0u64);
    for rec in c.rd.records() {
        let Ok(r) = rec else {
            skip += 1;
            continue;
        };
        let Some(at) = ts(r.get(alloc_t)) else {
            skip += 1;
            continue;
        };
        let get = |i: Option<usize>| i.and_then(|i| r.get(i));
        let n = b.intern(r.get(name).unwrap_or("").trim());
        let m = &mut b.t.op_memory;
        m.file.push(file);
        m.device.push(get(cols[5]).map_or(-1, device));
        m.name.push(n);
        m.size_bytes.push(mb(r.get(size), 1024.0));
        m.allocation_ns.push(at);
        m.release_ns.push(ts(get(cols[0])).unwrap_or(-1));
        m.allocation_total_allocated.push(mb(get(cols[1]), MB));
        m.allocation_total_reserved.push(mb(get(cols[2]), MB));
        m.release_total_allocated.push(mb(get(cols[3]), MB));
        m.release_total_reserved.push(mb(get(cols[4]), MB));
        rows += 1;
    }
    skipped(b, path, skip);
    Ok(rows)
}
