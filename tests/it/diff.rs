//! `profscope diff` end to end on two generated runs that differ by a known amount: the same seed,
//! but in the new run rank 1's compute kernels take 150 % of their time (`synth --slow-rank 1
//! --slow-pct 150`). Expected per-kernel means come from the generator's ground truth
//! (ground_truth.json: count and summed duration per compute kernel name and rank), not from the
//! code under test. The baseline goes through `analyze --save`, as in CI.

use crate::common;

use profscope::synth::{SynthOpts, Truth};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

fn profscope(args: &[&str]) -> Output {
    crate::common::profscope_command()
        .args(args)
        .output()
        .unwrap()
}

fn run(tag: &str, slow: Option<(u32, u32)>) -> common::Generated {
    common::generated_with(
        tag,
        SynthOpts {
            ranks: 2,
            target_bytes: 400_000,
            seed: 5,
            kineto: false,
            export: Default::default(),
            slow,
        },
    )
}

/// Mean duration per call of every compute kernel name over all ranks, from the ground truth.
fn truth_means(t: &Truth) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (i64, u64)> = BTreeMap::new();
    for r in &t.ranks {
        for (name, k) in &r.kernels {
            let e = sums.entry(name.clone()).or_default();
            e.0 += k.dur_ns;
            e.1 += k.count;
        }
    }
    sums.into_iter()
        .map(|(n, (d, c))| (n, d as f64 / c as f64))
        .collect()
}

fn diff_json(base: &Path, new: &Path, fail_on: &str) -> (i32, Value) {
    let out = profscope(&[
        "diff",
        base.to_str().unwrap(),
        new.to_str().unwrap(),
        "--quiet",
        "--format",
        "json",
        "--fail-on",
        fail_on,
    ]);
    let code = out.status.code().unwrap();
    assert!(
        code == 0 || code == 1,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn diff_reports_the_injected_change_and_gates_on_thresholds() {
    let base = run("diff-base", None);
    let new = run("diff-new", Some((1, 150)));
    let saved = base.dir.join("baseline.json");
    let out = profscope(&[
        "analyze",
        base.dir.to_str().unwrap(),
        "--quiet",
        "--format",
        "md",
        "--save",
        saved.to_str().unwrap(),
    ]);
    assert!(out.status.success());

    let (want_base, want_new) = (truth_means(&base.truth), truth_means(&new.truth));
    // Not vacuous: every compute kernel got slower by 12-38 % on average (one rank of two at 150 %).
    assert!(want_base.len() >= 5);
    for (name, b) in &want_base {
        let r = want_new[name] / b;
        assert!((1.12..1.38).contains(&r), "{name}: {r}");
    }

    let (code, d) = diff_json(&saved, &new.dir, "kernel.*>+40%,bubble_share>+50pt");
    assert_eq!(code, 0, "no kernel mean rose by 40 %");
    assert_eq!(d["failed"], false);
    let rows: BTreeMap<&str, &Value> = d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["metric"].as_str().unwrap(), r))
        .collect();
    for (name, b) in &want_base {
        let row = rows[format!("kernel.{name}").as_str()];
        let (rb, rn) = (row["base"].as_f64().unwrap(), row["new"].as_f64().unwrap());
        assert!((rb - b).abs() < 1e-6, "{name} base {rb} vs truth {b}");
        assert!((rn - want_new[name]).abs() < 1e-6, "{name} new");
        assert!((row["change"].as_f64().unwrap() - (want_new[name] - b)).abs() < 1e-6);
        assert_eq!(row["status"], "ok");
        assert_eq!(row["unit"], "ns");
    }
    // Run-level metrics beyond kernels are reported with their unit.
    for m in [
        "step_time",
        "bubble_share",
        "notify_wait_ratio",
        "computing_share",
        "host_bound_share",
        "launch_latency_p99",
    ] {
        assert!(rows.contains_key(m), "{m}");
    }

    // The same diff with a tighter threshold fails, and names the kernels that crossed it.
    let (code, d) = diff_json(&saved, &new.dir, "kernel.*>+10%");
    assert_eq!(code, 1);
    assert_eq!(d["failed"], true);
    let failed: Vec<&str> = d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "fail")
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    let want: Vec<String> = want_base
        .iter()
        .filter(|(n, b)| (want_new[*n] - **b) / **b * 100.0 > 10.0)
        .map(|(n, _)| format!("kernel.{n}"))
        .collect();
    assert_eq!(failed, want);

    // A run against itself passes any threshold; a bad threshold is an error (exit 2).
    let (code, _) = diff_json(&saved, &saved, "kernel.*>+0%,step_time>+0%");
    assert_eq!(code, 0);
    let bad = profscope(&[
        "diff",
        saved.to_str().unwrap(),
        saved.to_str().unwrap(),
        "--fail-on",
        "step_time>3",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("step_time>3"));
}

#[test]
fn thresholds_file_json_and_toml() {
    let base = run("diff-file", None);
    let saved = base.dir.join("baseline.json");
    assert!(
        profscope(&[
            "analyze",
            base.dir.to_str().unwrap(),
            "--quiet",
            "--save",
            saved.to_str().unwrap()
        ])
        .status
        .success()
    );
    let json = base.dir.join("t.json");
    std::fs::write(&json, r#"{"step_time": "+3%", "free_share": "-2pt"}"#).unwrap();
    let toml = base.dir.join("t.toml");
    std::fs::write(
        &toml,
        "# gate\n[thresholds]\nstep_time = \"+3%\"\n\"kernel.*\" = \"+2us\"\n",
    )
    .unwrap();
    for f in [&json, &toml] {
        let out = profscope(&[
            "diff",
            saved.to_str().unwrap(),
            saved.to_str().unwrap(),
            "--format",
            "json",
            "--thresholds",
            f.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{f:?}");
        let d: Value = serde_json::from_slice(&out.stdout).unwrap();
        let step = d["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == "step_time")
            .unwrap();
        assert_eq!(step["thresholds"][0], "step_time>+3%");
        assert_eq!(d["unmatched_thresholds"].as_array().unwrap().len(), 0);
    }
}
