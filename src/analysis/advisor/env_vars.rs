//! Environment variables torch_npu recorded (`ENV_VARIABLES`: the db's META_DATA, a text
//! export's profiler_metadata.json), checked with msprof-analyze advisor's conditions
//! (analyzer/overall/environment_variable_checker.py `ENV_SUGGEST_CONDITION`, suggestions from
//! rules/en/environment_variable_info.yaml, msprof-analyze 26.2.0). The capture cannot say what
//! a setting costs, so the time at stake is 0.

use super::{FileRule, Keyed, finding, not_checked, where_file};
use crate::analysis::devices::Device;
use crate::model::Tables;
use crate::model::meta::METADATA_UNREADABLE;

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

/// ENV_VARIABLES as the variables it holds, or why it does not hold any (a UTF-8 byte-order
/// mark before it is skipped, as Python's `utf-8-sig` does).
fn variables(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(env)) => Ok(env),
        Ok(other) => Err(format!(
            "ENV_VARIABLES is {}, not an object of variables",
            json_kind(&other)
        )),
        Err(e) => Err(format!("ENV_VARIABLES is not JSON ({e})")),
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

fn run(t: &Tables, _: &[Device]) -> Vec<Keyed> {
    let mut out = Vec::new();
    if let Some(key) = t.strings.lookup(METADATA_UNREADABLE) {
        for i in (0..t.meta.len()).filter(|&i| t.meta.key[i] == key) {
            out.push(not_checked(
                "environment_variables",
                "profiler_metadata.json cannot be read (the metadata_unreadable diagnostic says why)",
                where_file(t, t.meta.file[i]),
            ));
        }
    }
    let Some(key) = t.strings.lookup("ENV_VARIABLES") else {
        return out;
    };
    for i in 0..t.meta.len() {
        if t.meta.key[i] != key {
            continue;
        }
        let file = t.meta.file[i];
        let env =
            match variables(t.str(t.meta.value[i])) {
                Ok(env) => env,
                Err(why) => {
                    out.push(not_checked(
                    "environment_variables",
                    "ENV_VARIABLES is not a JSON object of variables (its reason follows the file)",
                    format!("{}: {}", where_file(t, file), crate::diag::cap_text(&why, 300)),
                ));
                    continue;
                }
            };
        for &(var, bad, advice) in CHECKS {
            // Only variables torch_npu recorded: an absent key says nothing (HCCL_ALGO is not
            // in every version's list).
            let Some(value) = env.get(var) else { continue };
            let value = match value {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(_) | serde_json::Value::Bool(_) => value.to_string(),
                other => {
                    out.push(not_checked(
                        "environment_variables",
                        "a variable of ENV_VARIABLES is not a value (its name follows the file)",
                        format!("{}: {var} is {}", where_file(t, file), json_kind(other)),
                    ));
                    continue;
                }
            };
            if !bad(&value) {
                continue;
            }
            let mut f = finding("environment_variables", SOURCE);
            f.subject = var.to_string();
            f.statement = if value.is_empty() {
                format!("{var} is not set")
            } else {
                format!("{var}={}", crate::diag::cap_text(&value, 200))
            };
            f.estimate = "not estimated: the capture holds no run with the suggested value to compare against".into();
            f.evidence.push(format!(
                "{}: ENV_VARIABLES {var}={:?}",
                where_file(t, file),
                crate::diag::cap_text(&value, 200)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_skip_a_bom_and_say_why_they_cannot_be_read() {
        let env = variables("\u{feff}{\"HCCL_ALGO\": \"x\"}").unwrap();
        assert_eq!(env["HCCL_ALGO"], "x");
        assert_eq!(
            variables("[1, 2]").unwrap_err(),
            "ENV_VARIABLES is a list, not an object of variables"
        );
        assert!(
            variables("{\"A\": ")
                .unwrap_err()
                .starts_with("ENV_VARIABLES is not JSON (EOF")
        );
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(variables(&deep).unwrap_err().contains("recursion limit"));
    }
}
