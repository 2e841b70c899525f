//! The Verdict section: the run's status, each reason with its effect and evidence, and the
//! coverage signals it was decided from (report::verdict, docs/evidence.md). First of the
//! sections in every format, right under the headline.

use super::section::{Section, sec};
use crate::report::Report;

fn opt_pct(p: Option<f64>) -> String {
    p.map_or_else(|| "n/a".into(), |p| format!("{p:.1}%"))
}

/// The Verdict section of `r`.
pub fn section(r: &Report) -> Section {
    let v = &r.verdict;
    let mut t = sec(
        format!(
            "Verdict: {} (cross-rank claims: {})",
            v.status, v.cross_rank_status
        ),
        vec!["reason", "effect", "scope", "detail", "evidence"],
    );
    for x in &v.reasons {
        t.rows.push(vec![
            x.code.to_string(),
            x.effect.to_string(),
            x.scope.to_string(),
            x.detail.clone(),
            x.evidence.join("; "),
        ]);
    }
    t.notes.push(v.statement.clone());
    let c = &v.coverage;
    t.notes.push(format!(
        "coverage: {} device events; {} of {} launches with device work ({}), {} captured in {} capture window(s), {} graph launches; smallest device window {} of its host window; vendor numbers on {} of {} devices",
        c.device_events,
        c.launches_with_device_work,
        c.launches,
        opt_pct(c.launch_coverage_pct),
        c.captured_launches,
        c.capture_windows,
        c.graph_launches,
        opt_pct(c.min_device_window_pct_of_host),
        c.vendor_devices_checked,
        c.vendor_devices_total,
    ));
    t.notes
        .push("each signal and its threshold: docs/evidence.md".into());
    t
}
