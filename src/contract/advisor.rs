//! The advisor's findings (docs/advisor.md): what to change, ranked by the time fixing it could
//! save, each with its evidence, how that time was estimated and where the rule comes from.

use serde::{Deserialize, Serialize};

/// One finding of one rule.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finding {
    /// The rule's name (`byte_alignment`, `host_dispatch`, ...; docs/advisor.md).
    pub rule: String,
    /// What the finding is about within its rule (the variable, the optimizer, the rank; empty
    /// when the rule has one finding per run): `diff` matches findings by (rule, subject).
    pub subject: String,
    /// `high` (time at stake ≥ 5% of the longest device window), `medium` (≥ 1%), `low`
    /// (> 0), `info` (cannot be estimated from the capture).
    pub severity: String,
    /// What fixing it could save on the slowest rank, ns (ranks run in parallel: the largest
    /// per-rank saving, not their sum); 0 when the capture cannot say.
    pub time_at_stake_ns: i64,
    /// How `time_at_stake_ns` was estimated, or why it is 0.
    pub estimate: String,
    /// One line: what was found.
    pub statement: String,
    /// Where: files, ranks, ops, windows (the first 10).
    pub evidence: Vec<String>,
    /// What to change: the variable and value, the API, the size to align to.
    pub recommendation: String,
    /// Where the rule and its threshold come from (msprof-analyze advisor file, or profscope's
    /// own evidence).
    pub source: String,
}

/// Every finding, largest time at stake first.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Advisor {
    pub findings: Vec<Finding>,
    /// The rules that ran, in order (a rule absent here was not checked).
    pub rules: Vec<String>,
    /// The longest device window of the run, ns: the denominator of `severity`.
    pub window_ns: i64,
    /// Rules that ran but could not check some files, and why (what the capture lacks): a rule
    /// listed here found nothing on those files because it could not look, not because all is
    /// well.
    #[serde(default)]
    pub not_checked: Vec<NotChecked>,
}

/// A rule that could not check some files.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NotChecked {
    pub rule: String,
    /// What the files lack (and what to capture instead).
    pub reason: String,
    /// The files (rank and path), the first 10.
    pub files: Vec<String>,
}
