//! Renders a run-to-run [`Diff`]: one table of metrics (base, new, change, thresholds, status)
//! for the terminal or Markdown (a PR comment), or the diff as JSON.

use super::sections::{Section, sec};
use super::{Format, human_ns, markdown, table};
use crate::report::diff::{Diff, MetricUnit, NoiseMethod, Row, Status, Verdict};

/// A value as displayed: ns metrics as a time (below 1 µs with one decimal, so a mean of 16.4 ns
/// does not show as 16.000 ns), pct as a percent, any other unit after the number.
fn value(unit: MetricUnit, v: Option<f64>) -> String {
    match (unit, v) {
        (_, None) => "-".into(),
        (MetricUnit::Ns, Some(x)) if x.abs() < 1e3 => format!("{x:.1} ns"),
        (MetricUnit::Ns, Some(x)) => human_ns(x.round() as i64),
        (MetricUnit::Pct, Some(x)) => format!("{x:.2}%"),
        (u, Some(x)) => format!("{x:.2} {u}"),
    }
}

fn change(r: &Row) -> String {
    let Some(c) = r.change else {
        return "-".into();
    };
    let abs = match r.unit {
        MetricUnit::Ns => {
            let s = value(MetricUnit::Ns, Some(c));
            if c >= 0.0 { format!("+{s}") } else { s }
        }
        MetricUnit::Pct => format!("{c:+.2} pt"),
        u => format!("{c:+.2} {u}"),
    };
    match r.change_pct {
        Some(p) => format!("{abs} ({p:+.1}%)"),
        None => abs,
    }
}

/// The 95% interval of the change (relative when the base is not 0), and its samples.
fn interval(r: &Row) -> String {
    let n = &r.noise;
    let (Some(lo), Some(hi)) = (n.ci_low, n.ci_high) else {
        return "-".into();
    };
    let range = match (n.ci_low_pct, n.ci_high_pct) {
        _ if r.unit == MetricUnit::Pct => format!("{lo:+.2} .. {hi:+.2} pt"),
        (Some(a), Some(b)) => format!("{a:+.1}% .. {b:+.1}%"),
        _ => format!("{lo:+.1} .. {hi:+.1}"),
    };
    match n.method {
        NoiseMethod::Steps => format!("{range} ({}/{} steps)", n.n_base, n.n_new),
        NoiseMethod::History => format!("{range} ({} runs)", n.n_base),
        NoiseMethod::Calls => format!("{range} ({}/{} calls)", n.n_base, n.n_new),
        NoiseMethod::Unknown => "-".into(),
    }
}

/// A change too small to show at the displayed precision.
fn unchanged(r: &Row) -> bool {
    matches!(r.status, Status::Ok) && value(r.unit, r.base) == value(r.unit, r.new)
}

fn section(d: &Diff) -> Section {
    let mut s = sec(
        format!("profscope diff: {} -> {}: {}", d.base, d.new, d.summary),
        vec![
            "metric",
            "base",
            "new",
            "change",
            "95% CI of the change",
            "verdict",
            "threshold",
            "status",
        ],
    );
    // Failures first, then what changed, then metrics of one run only; unchanged ones folded.
    let rank = |r: &Row| match r.status {
        Status::Fail => 0,
        Status::CrossedWithinNoise => 1,
        Status::Ok => 2,
        Status::Missing => 3,
    };
    let mut rows: Vec<&Row> = d.rows.iter().filter(|r| !unchanged(r)).collect();
    rows.sort_by_key(|r| rank(r));
    for r in rows {
        s.rows.push(vec![
            r.metric.clone(),
            value(r.unit, r.base),
            value(r.unit, r.new),
            change(r),
            interval(r),
            match r.verdict {
                Verdict::Regressed => "regressed",
                Verdict::Improved => "improved",
                Verdict::WithinNoise => "within noise",
                Verdict::NoiseUnknown => "noise unknown",
            }
            .into(),
            r.thresholds.join(", "),
            match r.status {
                Status::Ok => "ok",
                Status::Fail => "FAIL",
                Status::CrossedWithinNoise => "crossed, within noise",
                Status::Missing => "in one run only",
            }
            .into(),
        ]);
    }
    let same: Vec<&str> = d
        .rows
        .iter()
        .filter(|r| unchanged(r))
        .map(|r| r.metric.as_str())
        .collect();
    if !same.is_empty() {
        s.notes.push(format!(
            "unchanged at the displayed precision ({}): {}",
            same.len(),
            same.join(", ")
        ));
    }
    if !d.unmatched_thresholds.is_empty() {
        s.notes.push(format!(
            "thresholds matching no metric (not evaluated): {}",
            d.unmatched_thresholds.join(", ")
        ));
    }
    for (what, list) in [
        ("advisor findings that appeared", &d.findings.appeared),
        ("advisor findings that went away", &d.findings.gone),
    ] {
        if !list.is_empty() {
            let names: Vec<String> = list
                .iter()
                .map(|f| format!("{}: {}", f.rule, f.statement))
                .collect();
            s.notes
                .push(format!("{what} ({}): {}", list.len(), names.join("; ")));
        }
    }
    s.notes.push(
        "pct metrics change in percentage points (pt); the % in brackets is relative to base; definitions in --format json".into(),
    );
    s.notes.push(
        "a threshold fails only when the change crosses it outside the noise: the 95% interval of the change (a bootstrap of both runs' steps, or the spread of earlier runs) excludes 0 on its side; with the noise unknown it applies as given (docs/diff.md)".into(),
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
    if format == Format::Json {
        out
    } else {
        super::for_people(out)
    }
}
