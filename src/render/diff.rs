//! Renders a run-to-run [`Diff`]: one table of metrics (base, new, change, thresholds, status)
//! for the terminal or Markdown (a PR comment), or the diff as JSON.

use super::sections::{Section, sec};
use super::{Format, human_ns, markdown, table};
use crate::report::diff::{Diff, Row, Status};

fn value(unit: &str, v: Option<f64>) -> String {
    match (unit, v) {
        (_, None) => "-".into(),
        ("ns", Some(x)) => human_ns(x.round() as i64),
        (_, Some(x)) => format!("{x:.2}%"),
    }
}

fn change(r: &Row) -> String {
    let Some(c) = r.change else {
        return "-".into();
    };
    let abs = if r.unit == "ns" {
        let s = human_ns(c.round() as i64);
        if c >= 0.0 { format!("+{s}") } else { s }
    } else {
        format!("{c:+.2} pt")
    };
    match r.change_pct {
        Some(p) => format!("{abs} ({p:+.1}%)"),
        None => abs,
    }
}

fn section(d: &Diff) -> Section {
    let mut s = sec(
        format!("profscope diff: {} -> {}", d.base, d.new),
        vec!["metric", "base", "new", "change", "threshold", "status"],
    );
    for r in &d.rows {
        s.rows.push(vec![
            r.metric.clone(),
            value(r.unit, r.base),
            value(r.unit, r.new),
            change(r),
            r.thresholds.join(", "),
            match r.status {
                Status::Ok => "ok",
                Status::Fail => "FAIL",
                Status::Missing => "in one run only",
            }
            .into(),
        ]);
    }
    let fails: Vec<&str> = d
        .rows
        .iter()
        .filter(|r| matches!(r.status, Status::Fail))
        .map(|r| r.metric.as_str())
        .collect();
    s.notes.push(if fails.is_empty() {
        "verdict: pass (no threshold crossed)".into()
    } else {
        format!("verdict: FAIL ({})", fails.join(", "))
    });
    if !d.unmatched_thresholds.is_empty() {
        s.notes.push(format!(
            "thresholds matching no metric (not evaluated): {}",
            d.unmatched_thresholds.join(", ")
        ));
    }
    s.notes.push(
        "pct metrics change in percentage points (pt); the % in brackets is relative to base; definitions in --format json".into(),
    );
    s
}

pub fn render(d: &Diff, format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Json => {
            out = serde_json::to_string_pretty(d).expect("the diff serializes");
            out.push('\n');
        }
        Format::Table => table::render_section(&section(d), &mut out),
        Format::Md => markdown::render_section(&section(d), &mut out),
    }
    out
}
