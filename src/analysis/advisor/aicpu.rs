//! AI CPU operators, as msprof-analyze advisor flags them (analyzer/computation/aicpu/
//! aicpu_checker.py: compute tasks of task type AI_CPU, reported when the longest takes at
//! least `_MIN_TASK_DURATION` = 20 µs; rules/en/aicpu_rules.yaml "Modify code to avoid aicpu
//! operator"). Communication kernels that run on the AI CPU (HCCL's `allreduceAicpuKernel`)
//! are not operators to replace and are left out.
//!
//! Time at stake: an upper bound, the AI_CPU tasks' whole device time (what an AI Core
//! replacement takes is not in the capture).

use super::{FileRule, Keyed, finding, where_file};
use crate::analysis::devices::Device;
use crate::model::{Category, Tables};
use std::collections::BTreeMap;

pub const RULE: FileRule = FileRule { name: "aicpu", run };

const MIN_TASK_NS: i64 = 20_000;

fn run(t: &Tables, devices: &[Device]) -> Vec<Keyed> {
    let Some(aicpu) = t.strings.lookup("AI_CPU") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in devices {
        let mut by_name: BTreeMap<&str, (u64, i64, i64)> = BTreeMap::new();
        for &i in &d.events {
            let i = i as usize;
            if t.events.category[i] != Category::ComputeKernel || t.events.task_type.at(i) != aicpu
            {
                continue;
            }
            let dur = t.events.dur_ns.at(i);
            let e = by_name.entry(t.str(t.events.name[i])).or_default();
            *e = (e.0 + 1, e.1 + dur, e.2.max(dur));
        }
        let longest = by_name.values().map(|v| v.2).max().unwrap_or(0);
        if longest < MIN_TASK_NS {
            continue;
        }
        let total: i64 = by_name.values().map(|v| v.1).sum();
        let count: u64 = by_name.values().map(|v| v.0).sum();
        let mut names: Vec<(&str, (u64, i64, i64))> = by_name.into_iter().collect();
        names.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
        let mut f = finding(
            "aicpu",
            "msprof-analyze advisor: aicpu_checker.py (_MIN_TASK_DURATION 20 µs), rules/en/aicpu_rules.yaml",
        );
        f.time_at_stake_ns = total;
        f.statement = format!(
            "{count} AI CPU operator task(s) of {} kind(s) take {} (longest {})",
            names.len(),
            crate::units::human_duration(total as f64),
            crate::units::human_duration(longest as f64)
        );
        f.estimate = "upper bound: the AI_CPU tasks' whole time (an AI Core replacement's time is not in the capture)".into();
        for (name, (n, sum, max)) in names.iter().take(5) {
            f.evidence.push(format!(
                "{}: {name}: {n} task(s), {}, longest {}",
                where_file(t, d.file),
                crate::units::human_duration(*sum as f64),
                crate::units::human_duration(*max as f64)
            ));
        }
        f.recommendation = "replace the AI CPU operators (often int64 / double inputs or unsupported shapes: cast to int32 / float32, or use the AI Core operator) so they run on the AI Core; see msprof-analyze's aicpu_operator_replacement_example".into();
        out.push(Keyed {
            key: "aicpu".into(),
            finding: f,
        });
    }
    out
}
