//! The advisor section: every finding, largest time at stake first, with its recommendation.

use super::{Section, sec};
use crate::render::human_ns;
use crate::report::Report;

/// One row per finding; the recommendation, estimate and evidence as notes below.
pub(super) fn advisor(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses.advisor;
    if a.findings.is_empty() && a.not_checked.is_empty() {
        return;
    }
    let mut s = sec(
        "Advisor (largest time at stake first; docs/advisor.md)".to_string(),
        vec!["#", "rule", "severity", "time at stake", "finding"],
    );
    for (k, f) in a.findings.iter().enumerate() {
        s.rows.push(vec![
            (k + 1).to_string(),
            f.rule.clone(),
            f.severity.clone(),
            if f.time_at_stake_ns > 0 {
                human_ns(f.time_at_stake_ns)
            } else {
                "not estimated".to_string()
            },
            f.statement.clone(),
        ]);
        s.notes
            .push(format!("{}. {}: {}", k + 1, f.rule, f.recommendation));
        s.notes.push(format!("   time at stake: {}", f.estimate));
        if let Some(e) = f.evidence.first() {
            s.notes.push(format!("   evidence: {e}"));
        }
    }
    for n in &a.not_checked {
        s.notes.push(format!(
            "not checked: {} on {} file(s): {}",
            n.rule,
            n.files.len(),
            n.reason
        ));
    }
    s.notes.push(format!(
        "severity: high >= 5%, medium >= 1% of the longest device window ({}); rules run: {}",
        human_ns(a.window_ns),
        a.rules.join(", ")
    ));
    out.push(s);
}
