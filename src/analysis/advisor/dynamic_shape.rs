//! Dynamic-shape operators, as msprof-analyze advisor flags them (analyzer/computation/
//! op_compile/dynamic_shape_checker.py with operator_checker.py `is_dynamic_shape`: CANN 8.0+
//! writes `OP State` per task; the run is flagged when no task is `static`; the suggestion is
//! to turn online compilation off). Without an op state (older CANN, a db without
//! COMPUTE_TASK_INFO.opState) the rule says it could not check.
//!
//! Time at stake: not estimated (operator compilation runs on the host; its cost is not a
//! device task).

use super::op_rows::{ascend_files, duration, rows};
use super::{FileRule, Keyed, finding, not_checked, where_file};
use crate::analysis::devices::Device;
use crate::model::Tables;
use std::collections::BTreeMap;

pub const RULE: FileRule = FileRule {
    name: "dynamic_shape",
    run,
};

fn run(t: &Tables, devices: &[Device]) -> Vec<Keyed> {
    let m = &t.op_metrics;
    let mut out = Vec::new();
    for file in ascend_files(t, devices) {
        let stated: Vec<usize> = rows(t, file)
            .into_iter()
            .filter(|&i| !m.op_state[i].is_empty())
            .collect();
        if stated.is_empty() {
            out.push(not_checked(
                "dynamic_shape",
                "no op state per task (CANN 8.0+ writes OP State in kernel_details.csv / op_summary and opState in the db's COMPUTE_TASK_INFO)",
                where_file(t, file),
            ));
            continue;
        }
        if stated.iter().any(|&i| t.str(m.op_state[i]) == "static") {
            continue;
        }
        let mut by_type: BTreeMap<&str, (u64, i64)> = BTreeMap::new();
        for &i in &stated {
            let e = by_type.entry(t.str(m.op_type[i])).or_default();
            *e = (e.0 + 1, e.1 + m.dur_ns[i]);
        }
        let total = crate::units::sum_ns(stated.iter().map(|&i| m.dur_ns[i]));
        let mut f = finding(
            "dynamic_shape",
            "msprof-analyze advisor: op_compile/dynamic_shape_checker.py, operator_checker.py is_dynamic_shape (no `static` op state)",
        );
        f.statement = format!(
            "all {} compute tasks with an op state are dynamic-shape ({} of device time): operators are compiled online",
            stated.len(),
            duration(total)
        );
        f.estimate =
            "not estimated: online compilation runs on the host, not in a device task".into();
        let mut types: Vec<(&str, (u64, i64))> = by_type.into_iter().collect();
        types.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
        f.evidence.push(format!(
            "{}: {} dynamic, 0 static tasks",
            where_file(t, file),
            stated.len()
        ));
        for (ty, (n, ns)) in types.iter().take(5) {
            f.evidence.push(format!(
                "{}: {ty}: {n} dynamic task(s), {}",
                where_file(t, file),
                duration(*ns)
            ));
        }
        f.recommendation = "turn online compilation off at the top of the script: torch_npu.npu.set_compile_mode(jit_compile=False); torch_npu.npu.config.allow_internal_format = False (binary operators, no per-shape compile)".into();
        out.push(Keyed {
            key: "dynamic_shape".into(),
            finding: f,
        });
    }
    out
}
