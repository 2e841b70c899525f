//! The advisor (issue 45) on the real 2-rank torch_npu roots ascend-pt/db/level1 and
//! text/level1, against msprof-analyze 26.2.0's advisor on copies of the same roots
//! (`msprof-analyze advisor all -d <copy> -o <out>`, throwaway venv; command and its full
//! findings in docs/advisor.md). Its numbers, from its xlsx (log/mstt_advisor_*.xlsx), are
//! written here; nothing here runs the peer.
//! - byte alignment: on rank 0, 2 ops; db: `hcom_allReduce__210_0_1` 28,647,232 bytes, abnormal
//!   240.505 µs; `hcom_allReduce__210_3_1` 17,267,200 bytes, abnormal 294.406 µs. text:
//!   `__586_0_1` abnormal 237.9447 µs, `__586_3_1` 159.0632 µs (the JSON's µs floats).
//! - environment variables (text root only; the db root has no profiler_metadata.json, which is
//!   all msprof-analyze reads, though its META_DATA holds the same ENV_VARIABLES):
//!   ACLNN_CACHE_LIMIT, HOST_CACHE_CAPACITY, PYTORCH_NPU_ALLOC_CONF.
//! - affinity API: torch_npu.optim.NpuFusedSGD.
//! - slow rank: none.

use crate::common;
use serde_json::Value;

/// The environment findings msprof-analyze's text-root run lists (its xlsx sheet 环境变量分析).
const ENV_FINDINGS: [&str; 3] = [
    "ACLNN_CACHE_LIMIT is not set",
    "HOST_CACHE_CAPACITY is not set",
    "PYTORCH_NPU_ALLOC_CONF is not set",
];

/// The advisor part of the report of a shared sample root.
pub(crate) fn advisor(root: &str) -> Value {
    report(root)["analyses"]["advisor"].clone()
}

/// `profscope analyze --format json` of a shared sample root, without the result cache.
pub(crate) fn report(root: &str) -> Value {
    report_at(&common::samples_dir().join(root))
}

fn report_at(path: &std::path::Path) -> Value {
    common::profscope_json(&[
        "analyze",
        "--quiet",
        "--no-cache",
        "--format",
        "json",
        path.to_str().unwrap(),
    ])
}

fn by_rule<'a>(a: &'a Value, rule: &str) -> Vec<&'a Value> {
    a["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

/// The µs value after `unaligned <bytes> bytes in ` in the evidence line naming `op` on rank 0.
fn abnormal_us(f: &Value, op: &str, bytes: u64) -> f64 {
    let line = f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|e| e.starts_with("rank 0 ") && e.contains(op))
        .unwrap_or_else(|| panic!("no rank 0 evidence for {op}: {f}"));
    let tail = line
        .split(&format!("unaligned {bytes} bytes in "))
        .nth(1)
        .unwrap_or_else(|| panic!("{line}"));
    tail.trim_end_matches(" µs").parse().unwrap()
}

#[test]
fn findings_include_msprof_analyze_advisor_s_on_the_db_root() {
    let a = advisor("ascend-pt/db/level1");
    let b = by_rule(&a, "byte_alignment");
    assert_eq!(b.len(), 1, "{a}");
    assert_eq!(
        abnormal_us(b[0], "hcom_allReduce__210_0_1", 3_874_624),
        240.505
    );
    assert_eq!(
        abnormal_us(b[0], "hcom_allReduce__210_3_1", 2_324_992),
        294.406
    );
    let ev = b[0]["evidence"].to_string();
    assert!(ev.contains("hcom_allReduce__210_0_1 at") && ev.contains("28647232 bytes"));
    assert!(ev.contains("17267200 bytes"));
    assert!(b[0]["time_at_stake_ns"].as_i64().unwrap() > 0);
    let affinity = by_rule(&a, "affinity_api");
    assert_eq!(affinity.len(), 1);
    assert!(
        affinity[0]["recommendation"]
            .as_str()
            .unwrap()
            .contains("torch_npu.optim.NpuFusedSGD")
    );
    assert!(by_rule(&a, "slow_rank").is_empty());
    // Beyond msprof-analyze: the db's META_DATA ENV_VARIABLES (it reads only
    // profiler_metadata.json and misses them here).
    let env: Vec<&str> = by_rule(&a, "environment_variables")
        .iter()
        .map(|f| f["statement"].as_str().unwrap())
        .collect();
    assert_eq!(env, ENV_FINDINGS);
    // Ranked by time at stake; the top one is the host-dispatch idle.
    let t: Vec<i64> = a["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["time_at_stake_ns"].as_i64().unwrap())
        .collect();
    assert!(t.windows(2).all(|w| w[0] >= w[1]), "{t:?}");
    assert_eq!(a["findings"][0]["rule"], "host_dispatch");
    assert_eq!(a["findings"][0]["severity"], "high");
}

#[test]
fn findings_include_msprof_analyze_advisor_s_on_the_text_root() {
    let a = advisor("ascend-pt/text/level1");
    let b = by_rule(&a, "byte_alignment");
    assert_eq!(b.len(), 1, "{a}");
    // msprof-analyze sums the JSON's µs floats; profscope reads them as exact ns: within 5 ns.
    assert!((abnormal_us(b[0], "hcom_allReduce__586_0_1", 3_874_624) - 237.9447).abs() < 0.005);
    assert!((abnormal_us(b[0], "hcom_allReduce__586_3_1", 2_324_992) - 159.0632).abs() < 0.005);
    let env: Vec<&str> = by_rule(&a, "environment_variables")
        .iter()
        .map(|f| f["statement"].as_str().unwrap())
        .collect();
    assert_eq!(env, ENV_FINDINGS);
    assert_eq!(by_rule(&a, "affinity_api").len(), 1);
    assert!(by_rule(&a, "slow_rank").is_empty());
    for f in a["findings"].as_array().unwrap() {
        assert!(!f["recommendation"].as_str().unwrap().is_empty(), "{f}");
        assert!(!f["estimate"].as_str().unwrap().is_empty(), "{f}");
        assert!(!f["evidence"].as_array().unwrap().is_empty(), "{f}");
    }
}

/// `diff` names the findings that appeared and went away, by (rule, subject): from the
/// generated demo (graph_replay_gaps and the step-context wait) to the real db/level1 root (host_dispatch,
/// byte_alignment, affinity_api and 3 environment variables, as the test above lists).
#[test]
fn diff_reports_findings_that_appeared_and_went_away() {
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    let db = common::samples_dir().join("ascend-pt/db/level1");
    let out = common::profscope_command()
        .args(["diff", "--quiet", "--format", "json"])
        .arg(&demo)
        .arg(&db)
        .output()
        .unwrap();
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names = |k: &str| -> Vec<String> {
        d["findings"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}/{}",
                    f["rule"].as_str().unwrap(),
                    f["subject"].as_str().unwrap()
                )
            })
            .collect()
    };
    let mut gone = names("gone");
    gone.sort();
    assert_eq!(
        gone,
        [
            "graph_replay_gaps/",
            "wait_pressure/update_step_context_sync"
        ]
    );
    let mut appeared = names("appeared");
    appeared.sort();
    assert_eq!(
        appeared,
        [
            "affinity_api/Optimizer.step#SGD.step",
            "byte_alignment/",
            "environment_variables/ACLNN_CACHE_LIMIT",
            "environment_variables/HOST_CACHE_CAPACITY",
            "environment_variables/PYTORCH_NPU_ALLOC_CONF",
            "host_dispatch/",
            "operator_no_bound/",
            "vector_operators/",
        ]
    );
}

/// On the generated demo the top finding is the NOTIFY_WAIT before each replay: its time at
/// stake is the generator's own bookkeeping of that idle (fixtures/demo/ground_truth.json
/// `bubbles.update_step_context_sync`: 2,814,155 ns on rank 0, 3,081,280 ns in 19 gaps on rank
/// 1; the larger one, since ranks run in parallel).
#[test]
fn the_demo_s_top_finding_is_the_step_context_wait_from_its_ground_truth() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    let truth: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("ground_truth.json")).unwrap())
            .unwrap();
    let expected = truth["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["bubbles"]["update_step_context_sync"]["dur_ns"]
                .as_i64()
                .unwrap()
        })
        .max()
        .unwrap();
    assert_eq!(expected, 3_081_280);
    let a = report_at(&root)["analyses"]["advisor"].clone();
    let top = &a["findings"][0];
    assert_eq!(top["rule"], "wait_pressure");
    assert_eq!(top["subject"], "update_step_context_sync");
    assert_eq!(top["time_at_stake_ns"], expected);
    assert_eq!(top["severity"], "high");
}

/// Inputs that cannot support a verdict get a `capture` finding per verdict reason, saying what
/// to capture instead (real files: a CPU-only Kineto trace, whose verdict is withheld for
/// `no_device_activity`; a Triton trace whose device events cover 0.002 ms of a 13.7 s host
/// window, `device_sliver`); a confident root (db/level1) gets none.
#[test]
fn a_capture_that_cannot_support_a_verdict_says_what_to_capture_instead() {
    for (root, code, words) in [
        ("torch-cpu", "no_device_activity", "ProfilerActivity.NPU"),
        (
            "torch-traces/triton_example",
            "device_sliver",
            "widen the device capture",
        ),
    ] {
        let r = report(root);
        assert_eq!(r["verdict"]["status"], "withheld", "{root}");
        let reasons: Vec<&str> = r["verdict"]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["code"].as_str().unwrap())
            .collect();
        assert!(reasons.contains(&code), "{root}: {reasons:?}");
        let capture = by_rule(&r["analyses"]["advisor"], "capture");
        let subjects: Vec<&str> = capture
            .iter()
            .map(|f| f["subject"].as_str().unwrap())
            .collect();
        assert_eq!(
            subjects, reasons,
            "{root}: one finding per reason, in order"
        );
        let f = capture.iter().find(|f| f["subject"] == code).unwrap();
        assert_eq!(f["severity"], "info");
        assert_eq!(f["time_at_stake_ns"], 0);
        assert!(f["recommendation"].as_str().unwrap().contains(words), "{f}");
        assert!(!f["evidence"].as_array().unwrap().is_empty(), "{f}");
    }
    let a = advisor("ascend-pt/db/level1");
    assert!(by_rule(&a, "capture").is_empty());
}
