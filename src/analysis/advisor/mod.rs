//! The advisor: rules that turn the capture and the other analyses into ranked findings, each
//! with the time fixing it could save (docs/advisor.md). A rule is one module with one `RULE`
//! constant, listed once in [`FILE_RULES`] (reads one file's tables) or [`RUN_RULES`] (reads the
//! run's finished analyses). Findings of a rule from several files are merged by key (the same
//! environment variable on every rank is one finding), keeping the largest time at stake.

mod affinity_api;
mod aicpu;
mod byte_alignment;
mod dynamic_shape;
mod env_vars;
mod expert_load;
mod graph_gaps;
mod host_blocked;
mod host_dispatch;
mod op_rows;
mod operator_bound;
mod pipeline_stage;
mod roofline_gap;
mod slow_rank;
mod vector_ops;
mod wait_pressure;

use super::devices::Device;
use crate::contract::{
    Advisor, CrossRank, DeviceBubbles, DeviceEfficiency, Finding, GraphMode, NotChecked,
};
use crate::model::Tables;

/// A rule over one file's tables: findings with their merge keys.
pub struct FileRule {
    pub name: &'static str,
    pub run: fn(&Tables, &[Device]) -> Vec<Keyed>,
}

/// A rule over the run's finished analyses.
pub struct RunRule {
    pub name: &'static str,
    pub run: fn(&RunInputs<'_>) -> Vec<Finding>,
}

/// What run-level rules read.
pub struct RunInputs<'a> {
    pub bubbles: &'a [DeviceBubbles],
    pub cross_rank: &'a CrossRank,
    pub graph_mode: &'a GraphMode,
    pub layout: &'a crate::contract::Layout,
    pub efficiency: &'a [DeviceEfficiency],
}

/// A per-file finding and the key it merges under across files.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Keyed {
    pub key: String,
    pub finding: Finding,
}

pub const FILE_RULES: &[FileRule] = &[
    env_vars::RULE,
    byte_alignment::RULE,
    aicpu::RULE,
    affinity_api::RULE,
    dynamic_shape::RULE,
    operator_bound::RULE,
    vector_ops::RULE,
];

pub const RUN_RULES: &[RunRule] = &[
    host_dispatch::RULE,
    host_blocked::RULE,
    wait_pressure::RULE,
    slow_rank::RULE,
    pipeline_stage::RULE,
    expert_load::RULE,
    graph_gaps::RULE,
    roofline_gap::RULE,
];

/// Evidence lines kept per finding.
const EVIDENCE_CAP: usize = 10;

/// Every file rule over one file's tables.
pub fn file_findings(t: &Tables, devices: &[Device]) -> Vec<Keyed> {
    FILE_RULES
        .iter()
        .flat_map(|r| (r.run)(t, devices))
        .collect()
}

/// Merges the files' findings, runs the run rules, sets severities and ranks the findings.
pub fn finish(per_file: Vec<Keyed>, inputs: &RunInputs<'_>) -> Advisor {
    let window_ns = inputs
        .bubbles
        .iter()
        .map(|b| b.window_ns)
        .max()
        .unwrap_or(0);
    let (unchecked, per_file): (Vec<Keyed>, Vec<Keyed>) = per_file
        .into_iter()
        .partition(|k| k.key.starts_with(NOT_CHECKED));
    let mut merged: Vec<Keyed> = Vec::new();
    for k in per_file {
        match merged.iter_mut().find(|m| m.key == k.key) {
            Some(m) => merge(&mut m.finding, k.finding),
            None => merged.push(k),
        }
    }
    let mut findings: Vec<Finding> = merged.into_iter().map(|k| k.finding).collect();
    findings.extend(RUN_RULES.iter().flat_map(|r| (r.run)(inputs)));
    for f in &mut findings {
        f.severity = severity(f.time_at_stake_ns, window_ns).to_string();
        f.evidence.truncate(EVIDENCE_CAP);
    }
    findings.sort_by(|a, b| {
        b.time_at_stake_ns
            .cmp(&a.time_at_stake_ns)
            .then_with(|| a.rule.cmp(&b.rule))
            .then_with(|| a.statement.cmp(&b.statement))
    });
    Advisor {
        findings,
        rules: FILE_RULES
            .iter()
            .map(|r| r.name)
            .chain(RUN_RULES.iter().map(|r| r.name))
            .map(str::to_string)
            .collect(),
        window_ns,
        not_checked: not_checked_list(unchecked),
    }
}

/// The key prefix of a [`not_checked`] entry among a file's findings.
const NOT_CHECKED: &str = "not_checked:";

/// Says that `rule` could not check the file `where_` (a [`where_file`] label) and why.
pub fn not_checked(rule: &str, reason: &str, where_: String) -> Keyed {
    let mut f = finding(rule, "");
    f.statement = reason.to_string();
    f.evidence.push(where_);
    Keyed {
        key: format!("{NOT_CHECKED}{rule}:{reason}"),
        finding: f,
    }
}

/// The files' not-checked entries grouped by rule and reason, in rule order.
fn not_checked_list(unchecked: Vec<Keyed>) -> Vec<NotChecked> {
    let mut out: Vec<NotChecked> = Vec::new();
    for k in unchecked {
        let f = k.finding;
        match out
            .iter_mut()
            .find(|n| n.rule == f.rule && n.reason == f.statement)
        {
            Some(n) => n.files.extend(f.evidence),
            None => out.push(NotChecked {
                rule: f.rule,
                reason: f.statement,
                files: f.evidence,
            }),
        }
    }
    for n in &mut out {
        n.files.truncate(EVIDENCE_CAP);
    }
    out
}

/// The same finding on another file: its evidence added, the larger time at stake kept (ranks
/// run in parallel, so savings do not add up across them).
fn merge(into: &mut Finding, other: Finding) {
    if other.time_at_stake_ns > into.time_at_stake_ns {
        into.time_at_stake_ns = other.time_at_stake_ns;
        into.estimate = other.estimate;
        into.statement = other.statement;
    }
    for e in other.evidence {
        if !into.evidence.contains(&e) {
            into.evidence.push(e);
        }
    }
}

/// `high` ≥ 5% of the window, `medium` ≥ 1%, `low` above 0, `info` when 0.
pub fn severity(time_at_stake_ns: i64, window_ns: i64) -> &'static str {
    if time_at_stake_ns <= 0 {
        "info"
    } else if window_ns > 0 && time_at_stake_ns * 20 >= window_ns {
        "high"
    } else if window_ns > 0 && time_at_stake_ns * 100 >= window_ns {
        "medium"
    } else {
        "low"
    }
}

/// A finding with its severity left for [`finish`].
pub fn finding(rule: &str, source: &str) -> Finding {
    Finding {
        rule: rule.to_string(),
        subject: String::new(),
        severity: String::new(),
        time_at_stake_ns: 0,
        estimate: String::new(),
        statement: String::new(),
        evidence: Vec::new(),
        recommendation: String::new(),
        source: source.to_string(),
    }
}

/// The rank with the most idle of `cause`, with that cause's total, when it holds at least
/// `min_pct` of the rank's window (the idle rules' common test).
pub fn worst_by_cause<'a>(
    bubbles: &'a [DeviceBubbles],
    cause: &str,
    min_pct: f64,
) -> Option<(&'a DeviceBubbles, &'a crate::contract::CauseTotal, f64)> {
    let (b, c) = bubbles
        .iter()
        .filter_map(|b| Some((b, b.by_cause.get(cause)?)))
        .max_by_key(|(_, c)| c.total_ns)?;
    let pct = crate::units::percent(c.total_ns, b.window_ns);
    (pct >= min_pct).then_some((b, c, pct))
}

/// Evidence of an idle finding: the rank's device and window, then its 3 largest gaps of
/// `cause`, each with what `detail` says about it.
pub fn idle_evidence(
    b: &DeviceBubbles,
    cause: &str,
    detail: impl Fn(&crate::contract::Gap) -> String,
) -> Vec<String> {
    let mut out = vec![format!(
        "rank {} ({}, {}): window {} .. {} ns",
        b.device.rank, b.device.file, b.device.process, b.window_start_ns, b.window_end_ns
    )];
    for g in b
        .largest
        .iter()
        .filter(|g| g.cause.as_str() == cause)
        .take(3)
    {
        out.push(format!(
            "gap {} .. {} ns ({}){}",
            g.start_ns,
            g.end_ns,
            crate::units::human_duration(g.dur_ns as f64),
            detail(g)
        ));
    }
    out
}

/// `rank N (file)` for evidence lines.
pub fn where_file(t: &Tables, file: crate::model::FileId) -> String {
    let f = &t.files;
    format!("rank {} ({})", f.rank[file.idx()], f.path[file.idx()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_thresholds() {
        assert_eq!(severity(0, 100), "info");
        assert_eq!(severity(5, 100), "high");
        assert_eq!(severity(4, 100), "medium");
        assert_eq!(severity(1, 100), "medium");
        assert_eq!(severity(1, 1000), "low");
    }
}
