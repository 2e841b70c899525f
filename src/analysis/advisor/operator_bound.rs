//! Operators bound by no pipe, after msprof-analyze advisor's "operator no bound" check
//! (analyzer/computation/bound/operator_bound_checker.py, config/config.ini
//! `operator_bound_ratio = 0.8`): a compute task whose pipe ratios are known (not all 0) and all
//! at most 0.8 keeps no unit of its core busy; such operators are candidates for tuning (AOE).
//!
//! Two differences, both deliberate (docs/advisor.md): msprof-analyze reads six ratios by name
//! prefix (`mac`, `scalar`, `mte1`, `mte2` resolve to the AI Core's `aic_*` columns, `vec` and
//! `mte3` to the vector core's), so a vector-core task saturated on `aiv_mte2_ratio` or
//! `aiv_scalar_ratio` passes as "no bound"; profscope checks all nine pipes of both cores. And
//! msprof-analyze runs the check only when the first task of the file passes it and the run is
//! not dynamic-shape; profscope checks every file that has ratios.
//!
//! Time at stake (profscope's estimate): per task, its time × (1 − busiest pipe / 0.8): what it
//! would take if its busiest pipe reached the 80% the rule calls bound.

use super::op_rows::{ascend_files, duration, rows};
use super::{FileRule, Keyed, finding, not_checked, where_file};
use crate::analysis::devices::Device;
use crate::model::Tables;
use std::collections::BTreeMap;

pub const RULE: FileRule = FileRule {
    name: "operator_no_bound",
    run,
};

/// `operator_bound_ratio` of msprof-analyze's config.ini.
pub const BOUND_RATIO: f32 = 0.8;

/// The largest known ratio of a task; None when none is known or all are 0 (no PMU data).
pub fn busiest(r: &[f32; 9]) -> Option<f32> {
    let m = r
        .iter()
        .filter(|v| !v.is_nan())
        .fold(f32::NAN, |a, &b| a.max(b));
    (m > 0.0).then_some(m)
}

fn run(t: &Tables, devices: &[Device]) -> Vec<Keyed> {
    let m = &t.op_metrics;
    let mut out = Vec::new();
    for file in ascend_files(t, devices) {
        let measured: Vec<(usize, f32)> = rows(t, file)
            .into_iter()
            .filter_map(|i| Some((i, busiest(&m.ratios[i])?)))
            .collect();
        if measured.is_empty() {
            out.push(not_checked(
                "operator_no_bound",
                "no PMU pipe ratios per task (capture with aic_metrics=PipeUtilization, torch_npu's default at Level1 / Level2)",
                where_file(t, file),
            ));
            continue;
        }
        let flagged: Vec<(usize, f32)> = measured
            .iter()
            .copied()
            .filter(|&(_, b)| b <= BOUND_RATIO)
            .collect();
        if flagged.is_empty() {
            continue;
        }
        let total = crate::units::sum_ns(flagged.iter().map(|&(i, _)| m.dur_ns[i]));
        let measured_ns = crate::units::sum_ns(measured.iter().map(|&(i, _)| m.dur_ns[i]));
        let stake: f64 = flagged
            .iter()
            .map(|&(i, b)| m.dur_ns[i] as f64 * (1.0 - f64::from(b / BOUND_RATIO)))
            .sum();
        let mut by_type: BTreeMap<&str, (u64, i64, f32)> = BTreeMap::new();
        for &(i, b) in &flagged {
            let e = by_type.entry(t.str(m.op_type[i])).or_insert((0, 0, 0.0));
            *e = (e.0 + 1, e.1.saturating_add(m.dur_ns[i]), e.2.max(b));
        }
        let mut types: Vec<(&str, (u64, i64, f32))> = by_type.into_iter().collect();
        types.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
        let mut f = finding(
            "operator_no_bound",
            "msprof-analyze advisor: computation/bound/operator_bound_checker.py, config.ini operator_bound_ratio = 0.8 (profscope reads all nine pipes)",
        );
        f.subject = String::new();
        f.time_at_stake_ns = stake.round() as i64;
        f.statement = format!(
            "{} of {} measured compute tasks ({} of {}) keep every pipe at or below 80% busy",
            flagged.len(),
            measured.len(),
            duration(total),
            duration(measured_ns)
        );
        f.estimate = "Σ task time × (1 − busiest pipe ratio / 0.8): the time saved if each task's busiest pipe reached the 80% the rule calls bound".into();
        for (ty, (n, ns, b)) in types.iter().take(6) {
            f.evidence.push(format!(
                "{}: {ty}: {n} task(s), {}, busiest pipe at most {:.0}%",
                where_file(t, file),
                duration(*ns),
                b * 100.0
            ));
        }
        f.recommendation = "tune these operators' tiling for their shapes (AOE operator tuning: aoe --job_type=2 with the operators listed; or a better-fitting kernel / fused operator), starting with the types that take the most time".into();
        out.push(Keyed {
            key: "operator_no_bound".into(),
            finding: f,
        });
    }
    out
}
