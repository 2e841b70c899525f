//! `profscope query` output: a table for people (with the row count and any cut), CSV, or the
//! JSON result contract.

use crate::report::query::QueryResult;
use comfy_table::{
    ContentArrangement, Table,
    presets::{ASCII_FULL_CONDENSED, UTF8_FULL_CONDENSED},
};
use serde_json::Value;

/// Output formats of `profscope query`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryFormat {
    Table,
    Json,
    Csv,
}

pub fn render(r: &QueryResult, format: QueryFormat) -> String {
    match format {
        QueryFormat::Json => serde_json::to_string_pretty(r).unwrap_or_default() + "\n",
        QueryFormat::Csv => csv(r),
        QueryFormat::Table => table(r),
    }
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => format!("{f:.6}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string(),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

fn csv(r: &QueryResult) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(r.columns.iter().map(|c| c.name.as_str()));
    for row in &r.rows {
        let _ = w.write_record(row.iter().map(cell));
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

fn table(r: &QueryResult) -> String {
    let mut t = Table::new();
    t.load_preset(if super::ascii() {
        ASCII_FULL_CONDENSED
    } else {
        UTF8_FULL_CONDENSED
    })
    .set_content_arrangement(ContentArrangement::Dynamic)
    .set_header(r.columns.iter().map(|c| c.name.as_str()));
    for row in &r.rows {
        t.add_row(row.iter().map(cell));
    }
    let mut out = format!("{t}\n");
    out += &format!(
        "{} of {} rows ({}; {} ms)\n",
        r.rows.len(),
        r.total_rows,
        r.query,
        r.elapsed_ms
    );
    if r.truncated {
        out += "cut at --limit; raise it or use --format csv for every row\n";
    }
    for c in &r.caveats {
        out += &format!("caveat: {c}\n");
    }
    super::for_people(out)
}
