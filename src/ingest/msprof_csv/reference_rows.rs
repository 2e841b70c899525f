//! Vendor summaries kept as reference values (long format, `reference` table): any CSV with a
//! header row (`step_trace_time.csv`, `op_statistic.csv`, `task_time*.csv`, msprof-analyze's
//! `cluster_step_trace_time.csv`) and the communication JSON files (`communication.json`,
//! `communication_matrix.json`, `cluster_communication.json`). Cells are numbers when they parse
//! (after trimming the TAB Excel guard), text otherwise (`N/A`, names, empty Step).
//!
//! JSON: the nesting above a record becomes text columns (`step`, `kind`, `op`, `link` for the
//! per-rank files; `group`, `step`, `op`, `rank` for the cluster file); a record is an object
//! with a leaf value or a `Communication Time Info`; inside it, nested keys join with `/`
//! (`Communication Bandwidth Info/HCCS/Transit Size(MB)`), array items by index.

use crate::ingest::builder::TablesBuilder;
use crate::ingest::error::IngestError;
use crate::model::{FileId, StrId};
use serde_json::Value;

fn push(b: &mut TablesBuilder, file: FileId, table: StrId, row: u32, col: &str, v: Cell<'_>) {
    let col = b.intern(col);
    let (number, text) = match v {
        Cell::Num(n) => (n, StrId::EMPTY),
        Cell::Text(t) => (f64::NAN, b.intern(t)),
    };
    let t = &mut b.t.reference;
    t.file.push(file);
    t.table.push(table);
    t.row.push(row);
    t.column.push(col);
    t.number.push(number);
    t.text.push(text);
}

enum Cell<'a> {
    Num(f64),
    Text(&'a str),
}

fn cell(s: &str) -> Cell<'_> {
    let t = s.trim();
    match t.parse::<f64>() {
        Ok(n) if !t.is_empty() => Cell::Num(n),
        _ => Cell::Text(t),
    }
}

/// Reads a headed CSV into the reference table as `table`; returns data rows read.
pub fn ingest_csv(
    path: &str,
    table: &str,
    file: FileId,
    b: &mut TablesBuilder,
) -> Result<u32, IngestError> {
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
    let header: Vec<String> = rd
        .byte_headers()
        .map_err(|e| bad(e.to_string()))?
        .iter()
        .map(|h| {
            String::from_utf8_lossy(h)
                .trim()
                .trim_start_matches('\u{feff}')
                .to_string()
        })
        .collect();
    let tname = b.intern(table);
    let mut row = 0u32;
    for rec in rd.byte_records() {
        let r = rec.map_err(|e| bad(format!("row {}: {e}", row + 2)))?;
        for (i, h) in header.iter().enumerate() {
            let v = String::from_utf8_lossy(r.get(i).unwrap_or(b""));
            push(b, file, tname, row, h, cell(&v));
        }
        row += 1;
    }
    Ok(row)
}

fn is_record(o: &serde_json::Map<String, Value>) -> bool {
    o.contains_key("Communication Time Info") || o.values().any(|v| !v.is_object())
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}/{k}")
        }
    };
    match v {
        Value::Object(o) => o.iter().for_each(|(k, v)| flatten(&key(k), v, out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, v)| flatten(&key(&i.to_string()), v, out)),
        _ => out.push((prefix.to_string(), v.clone())),
    }
}

/// Reads a communication JSON into the reference table as `table`; `levels` names the keys
/// above a record. Returns records read.
pub fn ingest_json(
    path: &str,
    table: &str,
    levels: &[&str],
    file: FileId,
    b: &mut TablesBuilder,
) -> Result<u32, IngestError> {
    let bytes = crate::ingest::source::read_regular(
        std::path::Path::new(path),
        crate::ingest::source::MAX_COMPANION_BYTES,
    )
    .map_err(|e| IngestError::Io {
        path: path.to_string(),
        source: e,
    })?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| IngestError::Csv {
        path: path.to_string(),
        what: format!("not JSON: {e}"),
    })?;
    let tname = b.intern(table);
    let mut row = 0u32;
    let mut stack: Vec<(Vec<String>, &Value)> = vec![(vec![], &v)];
    while let Some((keys, v)) = stack.pop() {
        let Value::Object(o) = v else { continue };
        if !keys.is_empty() && is_record(o) {
            for (i, k) in keys.iter().enumerate() {
                let name = levels
                    .get(i)
                    .map_or_else(|| format!("level{i}"), |s| s.to_string());
                push(b, file, tname, row, &name, Cell::Text(k));
            }
            let mut leaves = Vec::new();
            flatten("", v, &mut leaves);
            for (k, leaf) in leaves {
                let c = match &leaf {
                    Value::Number(n) => Cell::Num(n.as_f64().unwrap_or(f64::NAN)),
                    Value::String(s) => Cell::Text(s),
                    Value::Bool(x) => Cell::Num(*x as u8 as f64),
                    _ => Cell::Text(""),
                };
                push(b, file, tname, row, &k, c);
            }
            row += 1;
            continue;
        }
        // Reversed onto the stack so records come out in key order.
        for (k, c) in o.iter().rev() {
            let mut kk = keys.clone();
            kk.push(k.clone());
            stack.push((kk, c));
        }
    }
    Ok(row)
}
