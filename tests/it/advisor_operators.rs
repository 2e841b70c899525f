//! The advisor's operator rules (issue 45) on the real 2-rank torch_npu roots ascend-pt/db/level1
//! and text/level1, against msprof-analyze 26.2.0's advisor on copies of them (command in
//! docs/advisor.md; its numbers, from its xlsx log/mstt_advisor_*.xlsx, written here):
//! - "Vector算子性能分析" (vector operators), same on both roots but for rounding: the five
//!   shapes with the most optimization space and the five bound shapes with the most time, below.
//! - "0号卡算子瓶颈" (operator no bound, db root only: the text root is dynamic-shape, which
//!   skips the check there): 171 tasks on rank 0, 6,901.753 µs = 0.0622 of 111,011.531 µs.
//! - "0号卡动态shape算子" (dynamic shape, text root only: the db has no opState column).
//!
//! Independent numbers (tests/tools/advisor_pipe_ratios.py, python3 over the same files:
//! kernel_details.csv rows without HCCL; db COMPUTE_TASK_INFO ⋈ TASK ⋈ TASK_PMU_INFO): a task is
//! "no bound" when the largest of its nine pipe ratios is in (0, 0.8]; time at stake
//! Σ dur × (1 − largest / 0.8).
//! - db rank 0: 185 measured, 160 flagged, 4,154,718 ns, stake 1,117,266 ns; rank 1: 185, 161,
//!   4,180,140 ns of 8,910,174 ns, stake 1,127,949 ns. The same with msprof-analyze's six
//!   prefix-resolved ratios (aic_mac, aiv_vec, aic_scalar, aic_mte1, aic_mte2, aiv_mte3) gives 171
//!   on rank 0, its number: the 11 more are vector-core tasks busy above 80% on aiv_mte2 /
//!   aiv_scalar, which it does not read (its miss; docs/advisor.md).
//! - text rank 1: 185 measured, 160 flagged, 4,136,719 of 8,872,795 ns, stake 1,125,467 ns.
//! - OP State on text: 187 `dynamic` compute tasks per rank, none `static`.

use crate::advisor::advisor;
use serde_json::Value;

fn one<'a>(a: &'a Value, rule: &str) -> &'a Value {
    let v: Vec<&Value> = a["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect();
    assert_eq!(v.len(), 1, "{rule}: {a}");
    v[0]
}

/// msprof-analyze's vector lists: (kernel, shape, optimization space %) and (kernel, shape).
const SPACE_DB: [(&str, &str, f64); 5] = [
    ("trans_TransData_23", "200,12,16,8", 67.91),
    (
        "aclnnMaxPool2dWithMaskBackward_TransDataSpecial_TransData",
        "32,256,6,6",
        67.55,
    ),
    ("trans_TransData_17", "216,24,16,8", 67.33),
    (
        "aclnnMaxPool2dWithMask_TransDataSpecial_TransData",
        "32,16,6,6,16",
        66.91,
    ),
    ("trans_TransData_17", "432,16,16,8", 66.66),
];
const SPACE_TEXT: [(&str, &str, f64); 5] = [
    ("trans_TransData_23", "200,12,16,8", 68.2),
    ("trans_TransData_17", "216,24,16,8", 67.4),
    (
        "aclnnMaxPool2dWithMaskBackward_TransDataSpecial_TransData",
        "32,256,6,6",
        66.9,
    ),
    (
        "aclnnMaxPool2dWithMask_TransDataSpecial_TransData",
        "32,16,6,6,16",
        66.9,
    ),
    ("trans_TransData_17", "432,16,16,8", 66.6),
];
const BOUND: [(&str, &str); 5] = [
    (
        "aclnnForeachAddListV2_ForeachAddListV2_ForeachAddList",
        "64,3,11,11;64;192,64,5,5;",
    ),
    ("trans_TransData_24", "32,3,224,224"),
    ("trans_TransData_0", "32,3,224,224"),
    (
        "aclnnMaxPool2dWithMaskBackward_TransDataSpecial_TransData",
        "32,64,55,55",
    ),
    (
        "aclnnMaxPool2dWithMaskBackward_TransDataSpecial_TransData",
        "32,192,27,27",
    ),
];

/// Rank 0's vector evidence lines, in order: `<kernel> shape <shape> <dtype>: ...`.
fn vector_lines(f: &Value) -> Vec<String> {
    f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|e| e.starts_with("rank 0 "))
        .map(|e| e.split_once("): ").unwrap().1.to_string())
        .collect()
}

fn check_vector(a: &Value, space: &[(&str, &str, f64); 5]) {
    let f = one(a, "vector_operators");
    let lines = vector_lines(f);
    assert_eq!(lines.len(), 10, "{f}");
    for (line, (kernel, shape, pct)) in lines.iter().zip(space) {
        assert!(
            line.starts_with(&format!(
                "{kernel} shape {shape} FLOAT: optimization space "
            )),
            "{line}"
        );
        let got: f64 = line
            .split("optimization space ")
            .nth(1)
            .and_then(|s| s.split('%').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!((got - pct).abs() <= 0.05, "{line} vs {pct}");
    }
    for (line, (kernel, shape)) in lines[5..].iter().zip(BOUND) {
        assert!(
            line.starts_with(&format!("{kernel} shape {shape}")),
            "{line}"
        );
        assert!(line.contains(": vec_mte2_mte3 bound, "), "{line}");
    }
    assert!(f["time_at_stake_ns"].as_i64().unwrap() > 0);
}

#[test]
fn operator_rules_match_msprof_analyze_on_the_db_root() {
    let a = advisor("ascend-pt/db/level1");
    check_vector(&a, &SPACE_DB);
    let nb = one(&a, "operator_no_bound");
    // The larger time at stake of the two ranks (rank 1) gives the statement.
    assert_eq!(nb["time_at_stake_ns"], 1_127_949);
    assert_eq!(
        nb["statement"],
        "161 of 185 measured compute tasks (4.180 ms of 8.910 ms) keep every pipe at or below 80% busy"
    );
    // The db has no opState column: the dynamic-shape rule says it could not look.
    assert!(
        a["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["rule"] != "dynamic_shape")
    );
    let nc = &a["not_checked"];
    assert_eq!(nc.as_array().unwrap().len(), 1, "{nc}");
    assert_eq!(nc[0]["rule"], "dynamic_shape");
    assert_eq!(nc[0]["files"].as_array().unwrap().len(), 2);
}

#[test]
fn operator_rules_match_msprof_analyze_on_the_text_root() {
    let a = advisor("ascend-pt/text/level1");
    check_vector(&a, &SPACE_TEXT);
    let ds = one(&a, "dynamic_shape");
    assert_eq!(ds["time_at_stake_ns"], 0);
    assert_eq!(ds["severity"], "info");
    let ev = ds["evidence"].to_string();
    assert!(ev.contains("rank 0 (") && ev.contains("rank 1 ("), "{ev}");
    assert!(ev.contains("): 187 dynamic, 0 static tasks"), "{ev}");
    assert!(
        ds["recommendation"]
            .as_str()
            .unwrap()
            .contains("set_compile_mode(jit_compile=False)")
    );
    // Beyond msprof-analyze (it skips the check on a dynamic-shape run): from the
    // kernel_details.csv beside trace_view.json.
    let nb = one(&a, "operator_no_bound");
    assert_eq!(nb["time_at_stake_ns"], 1_125_467);
    assert_eq!(
        nb["statement"],
        "160 of 185 measured compute tasks (4.137 ms of 8.873 ms) keep every pipe at or below 80% busy"
    );
    assert_eq!(a["not_checked"].as_array().unwrap().len(), 0);
}

/// A capture without PMU data or op states (the text level0 root: kernel_details.csv has
/// neither) gets no operator findings, and the report says the three rules could not check it.
#[test]
fn operator_rules_say_not_checked_without_pmu_or_op_state() {
    let a = advisor("ascend-pt/text/level0");
    for rule in ["dynamic_shape", "operator_no_bound", "vector_operators"] {
        assert!(
            a["findings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f["rule"] != rule),
            "{rule}"
        );
        let n = a["not_checked"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["rule"] == rule)
            .unwrap_or_else(|| panic!("{rule} not in not_checked: {a}"));
        assert_eq!(n["files"].as_array().unwrap().len(), 2);
    }
}
