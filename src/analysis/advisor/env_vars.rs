//! Environment variables torch_npu recorded (`ENV_VARIABLES`: the db's META_DATA, a text
//! export's profiler_metadata.json), checked with msprof-analyze advisor's conditions
//! (analyzer/overall/environment_variable_checker.py `ENV_SUGGEST_CONDITION`, suggestions from
//! rules/en/environment_variable_info.yaml, msprof-analyze 26.2.0). The capture cannot say what
//! a setting costs, so the time at stake is 0.

use super::{FileRule, Keyed, finding, where_file};
use crate::analysis::devices::Device;
use crate::model::Tables;

pub const RULE: FileRule = FileRule {
    name: "environment_variables",
    run,
};

const SOURCE: &str = "msprof-analyze advisor: environment_variable_checker.py ENV_SUGGEST_CONDITION, rules/en/environment_variable_info.yaml";

/// (variable, is the value a problem, what to set). Conditions as msprof-analyze writes them;
/// a value that is not a number where one is expected counts as set to something else.
/// (variable, is the value a problem, what to set).
type Check = (&'static str, fn(&str) -> bool, &'static str);

const CHECKS: &[Check] = &[
    (
        "ASCEND_GLOBAL_LOG_LEVEL",
        |v| !v.is_empty() && v.trim().parse::<i64>().ok() != Some(3),
        "export ASCEND_GLOBAL_LOG_LEVEL=3 (error level: debug or info logging slows the run)",
    ),
    (
        "HCCL_RDMA_TC",
        |v| !v.is_empty(),
        "check HCCL_RDMA_TC against the network's DSCP plan (DSCP * 4; default 132); unset it unless the switches need it",
    ),
    (
        "HCCL_RDMA_SL",
        |v| !v.is_empty(),
        "HCCL_RDMA_SL must equal the NIC's PFC priority (0-7, default 4); unset it unless the network needs it",
    ),
    (
        "ACLNN_CACHE_LIMIT",
        |v| v.is_empty() || v.trim().parse::<i64>().is_ok_and(|n| n < 10_000),
        "export ACLNN_CACHE_LIMIT=100000 (cache more aclnn operators when the host is the bottleneck)",
    ),
    (
        "HOST_CACHE_CAPACITY",
        |v| v.is_empty() || v.trim().parse::<i64>().is_ok_and(|n| n == 0),
        "export HOST_CACHE_CAPACITY=20 (cache the execution data of dynamic shapes)",
    ),
    (
        "PYTORCH_NPU_ALLOC_CONF",
        |v| !v.contains("expandable_segments:True"),
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True (less fragmentation of device memory)",
    ),
    (
        "ASCEND_LAUNCH_BLOCKING",
        |v| !v.is_empty() && v.trim().parse::<i64>().ok() == Some(1),
        "export ASCEND_LAUNCH_BLOCKING=0 (1 runs every operator synchronously: a debugging setting)",
    ),
    (
        "HCCL_ALGO",
        |v| !v.is_empty(),
        "unset HCCL_ALGO (let HCCL choose the algorithm for the chip, node count and data size)",
    ),
];

fn run(t: &Tables, _: &[Device]) -> Vec<Keyed> {
    let Some(key) = t.strings.lookup("ENV_VARIABLES") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for i in 0..t.meta.len() {
        if t.meta.key[i] != key {
            continue;
        }
        let Ok(serde_json::Value::Object(env)) =
            serde_json::from_str::<serde_json::Value>(t.str(t.meta.value[i]))
        else {
            continue;
        };
        let file = t.meta.file[i];
        for &(var, bad, advice) in CHECKS {
            // Only variables torch_npu recorded: an absent key says nothing (HCCL_ALGO is not
            // in every version's list).
            let Some(value) = env.get(var) else { continue };
            let value = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_string);
            if !bad(&value) {
                continue;
            }
            let mut f = finding("environment_variables", SOURCE);
            f.subject = var.to_string();
            f.statement = if value.is_empty() {
                format!("{var} is not set")
            } else {
                format!("{var}={value}")
            };
            f.estimate = "not estimated: the capture holds no run with the suggested value to compare against".into();
            f.evidence.push(format!(
                "{}: ENV_VARIABLES {var}={value:?}",
                where_file(t, file)
            ));
            f.recommendation = advice.to_string();
            out.push(Keyed {
                key: format!("env:{var}:{value}"),
                finding: f,
            });
        }
    }
    out
}
