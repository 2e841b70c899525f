//! The binary end to end: `analyze` with no path analyses the bundled demo root (generated,
//! fixtures/demo) in every format; errors exit 2 with the file named. Expected numbers come from
//! fixtures/demo/ground_truth.json (the generator's own bookkeeping).

use std::process::Command;

fn profscope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_profscope"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn truth() -> serde_json::Value {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/demo/ground_truth.json"
    );
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn analyze_without_path_reads_the_demo_root() {
    let out = profscope(&["analyze", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["schema_version"], "0.7.0");
    let a = &r["analyses"];
    for k in [
        "device_time",
        "bubbles",
        "step_sync",
        "top_events",
        "composition",
        "communication",
        "communication_ops",
        "dispatch",
        "phases",
        "batch_audit",
        "ranks",
        "cross_rank",
    ] {
        assert!(!a[k].is_null(), "analyses.{k}");
    }
    assert_eq!(a["batch_audit"]["fixed_batch_proven"], true);
    let truth = truth();
    let files = r["summary"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 4, "2 trace_view.json + 2 lmdeploy rank files");
    assert_eq!(r["summary"]["ranks"], serde_json::json!([0, 1]));
    let mut want_x = 0;
    for rt in truth["ranks"].as_array().unwrap() {
        let x: u64 = rt["x_events_by_process"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        let k: u64 = rt["kineto_x_by_cat"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        want_x += x + k;
    }
    assert_eq!(r["summary"]["events"].as_u64().unwrap(), want_x);
    assert!(
        r["diagnostics"].as_array().unwrap().is_empty(),
        "{}",
        r["diagnostics"]
    );
}

#[test]
fn table_and_markdown_render() {
    let out = profscope(&["analyze", "--quiet"]);
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.contains("Events per category") && s.contains("compute_kernel") && s.contains("Stream 2"),
        "{s}"
    );
    // Markdown fits a PR comment by default (headline and top tables, at most 60 lines); the
    // inventory and every other section come with --full.
    let out = profscope(&["analyze", "--format", "md"]);
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.starts_with("# profscope report") && s.contains("## Device time"),
        "{s}"
    );
    assert!(s.lines().count() <= 60, "{} lines", s.lines().count());
    assert!(!s.contains("| compute_kernel |") && s.contains("more sections with `--full`"));
    let out = profscope(&["analyze", "--format", "md", "--full"]);
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("| compute_kernel |"), "{s}");
}

#[test]
fn errors_exit_2_and_name_the_file() {
    let out = profscope(&["analyze", "no/such/path"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/path"));
    let out = profscope(&["analyze", "fixtures/demo/ground_truth.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a Chrome trace"));
}

#[test]
fn only_runs_the_named_analyses() {
    let out = profscope(&[
        "analyze",
        "--quiet",
        "--format",
        "json",
        "--only",
        "bubbles,batch_audit",
    ]);
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = &r["analyses"];
    assert_eq!(
        a["bubbles"].as_array().unwrap().len(),
        2,
        "one per demo device"
    );
    assert_eq!(a["device_time"].as_array().unwrap().len(), 0, "not run");
    assert!(a["batch_audit"].is_object());
    let out = profscope(&["analyze", "--quiet", "--only", "device_time"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Device time"));
    let out = profscope(&["analyze", "--quiet", "--only", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    // clap checks the names against the analysis registry and lists them.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid value 'nope'"), "{err}");
    assert!(
        err.contains("cross_rank") && err.contains("dispatch"),
        "{err}"
    );
}
