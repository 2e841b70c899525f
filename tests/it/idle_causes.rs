//! Issue 58: idle with a cause, or a verdict that says it has none. Host-blocked syncs, capture
//! edges, CSV-only exports and the `idle_unexplained` verdict reason (docs/analyses/bubbles.md,
//! docs/evidence.md), on real traces of ../shared/samples and on variants made from them.
//!
//! Inputs: real files, and variants written by tests/tools/idle_variants.py (one edit of a real
//! file each: a synchronous copy moved over the largest gap of the ROCm trace, the ROCm capture
//! opened 5 ms early, a torch_npu stream sync that returns right after a gap). Expected values:
//! tests/tools/idle_oracle.py, stdlib Python over the same files (exact Decimal times; gaps from
//! the kernel union or the vendor's own Overlap Analysis `Free` rows), never profscope's code.

use crate::common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tool(args: &[&str]) -> Value {
    let script = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/tools")
            .join(name)
    };
    let name = if args[0] == "variant" {
        "idle_variants.py"
    } else {
        "idle_oracle.py"
    };
    let out = Command::new("python3")
        .arg(script(name))
        .args(&args[1..])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{name} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    if out.stdout.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn oracle(path: &Path) -> Value {
    tool(&["oracle", path.to_str().unwrap()])
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-r58-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn report(path: &Path) -> Value {
    common::profscope_json(&[
        "analyze",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--quiet",
        "--top",
        "200",
    ])
}

fn sample(rel: &str) -> PathBuf {
    common::samples_dir().join(rel)
}

const AMD: &str = "torch-traces/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz";

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap()
}

/// The gap of `b` that starts at `start_ns`.
fn gap_at(b: &Value, start_ns: i64) -> &Value {
    b["largest"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| i(&g["start_ns"]) == start_ns)
        .unwrap_or_else(|| panic!("no gap at {start_ns}"))
}

fn reason<'a>(r: &'a Value, code: &str) -> Option<&'a Value> {
    r["verdict"]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == code)
}

/// Each blocked gap of the oracle is `host_blocked` in the report with the same call, overlap,
/// frames and waited-for task, and the cause's totals are the oracle's.
fn assert_blocked_as_oracle(b: &Value, o: &Value) {
    let want = o["blocked"].as_array().unwrap();
    assert!(!want.is_empty());
    for w in want {
        let g = gap_at(b, i(&w["start_ns"]));
        assert_eq!(i(&g["end_ns"]), i(&w["end_ns"]));
        assert_eq!(g["cause"], "host_blocked", "{g}");
        assert_eq!(g["evidence"]["name"], w["call"]);
        let hb = &g["host_block"];
        assert_eq!(i(&hb["overlap_ns"]), i(&w["overlap_ns"]));
        assert_eq!(hb["frames"], w["frames"]);
        match w["waited_for"].as_str() {
            Some(name) => assert_eq!(hb["waited_for"]["name"], name),
            None => assert!(hb["waited_for"].is_null(), "{hb}"),
        }
    }
    let total: i64 = want
        .iter()
        .map(|w| i(&w["end_ns"]) - i(&w["start_ns"]))
        .sum();
    let outside: i64 = want
        .iter()
        .filter(|w| w["waited_for"].is_null())
        .map(|w| i(&w["end_ns"]) - i(&w["start_ns"]))
        .sum();
    let c = &b["by_cause"]["host_blocked"];
    assert_eq!(i(&c["count"]), want.len() as i64);
    assert_eq!(i(&c["total_ns"]), total);
    assert_eq!(i(&b["host_blocked_outside_ns"]), outside);
}

/// A synchronous copy that holds the host over the ROCm trace's largest gap (the serving case of
/// issue 58: the host sits in `hipMemcpyWithStream` while the device has nothing): the gap is
/// `host_blocked`, waiting on work outside the trace, with the aten frames above the call; one
/// gap holds most of the window and the headline says what spanned it; most idle is then
/// unexplained, so the host-bound verdict is qualified; the advisor puts the time at stake.
#[test]
fn r58_sync_copy_over_a_gap_is_host_blocked_on_work_outside_the_trace() {
    let d = tmp("blocked");
    let f = d.join("amd_blocked.json.gz");
    tool(&[
        "variant",
        "block-gap",
        sample(AMD).to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    let o = oracle(&f);
    let r = report(&f);
    let b = &r["analyses"]["bubbles"][0];
    assert_eq!(i(&b["idle_ns"]), i(&o["idle_ns"]));
    assert_blocked_as_oracle(b, &o);
    let w = &o["blocked"][0];
    let dur = i(&w["end_ns"]) - i(&w["start_ns"]);
    // The frames of the moved call: the aten ops that enclose it (the Python oracle's list).
    assert_eq!(w["frames"][0], "aten::copy_");
    let window = i(&o["busy_window"][1]) - i(&o["busy_window"][0]);
    let line = format!(
        "one {:.3} ms gap is {:.1}% of the device window of",
        dur as f64 / 1e6,
        dur as f64 * 100.0 / window as f64
    );
    let headline = r["headline"].as_array().unwrap();
    let dominant = headline
        .iter()
        .filter_map(Value::as_str)
        .find(|l| l.starts_with(&line))
        .unwrap_or_else(|| panic!("no `{line}` in {headline:#?}"));
    assert!(
        dominant.ends_with(
            "host in hipMemcpyWithStream under aten::copy_, waiting on work outside the trace"
        ),
        "{dominant}"
    );
    // The verdict rests on idle and most of it is unexplained: qualified, naming the share.
    assert_eq!(r["verdict"]["status"], "qualified");
    let share = dur as f64 * 100.0 / i(&o["idle_ns"]) as f64;
    let why = reason(&r, "idle_unexplained").expect("idle_unexplained");
    assert!(
        why["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{share:.1}% of idle")),
        "{why}"
    );
    let advice = r["analyses"]["advisor"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "host_blocked")
        .expect("a host_blocked finding");
    assert_eq!(i(&advice["time_at_stake_ns"]), dur);
}

/// The real AlexNet trace: the host sits 6 s in `cudaFree` (under cuDNN's convolution) across a
/// 10.9 s gap; a 2 µs gap is spanned by `cudaDeviceSynchronize`, which waited for the kernel that
/// ends right before it returns. Both `host_blocked` as the oracle says; the unexplained share
/// qualifies the host-bound verdict.
#[test]
fn r58_real_cudafree_stall_is_host_blocked_and_qualifies_the_verdict() {
    let f = sample(
        "torch-traces/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    );
    let o = oracle(&f);
    let r = report(&f);
    let b = &r["analyses"]["bubbles"][0];
    assert_eq!(i(&b["idle_ns"]), i(&o["idle_ns"]));
    assert_blocked_as_oracle(b, &o);
    let calls: Vec<&str> = o["blocked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["call"].as_str().unwrap())
        .collect();
    assert_eq!(calls, ["cudaFree", "cudaDeviceSynchronize"]);
    assert!(o["blocked"][1]["waited_for"].is_string());
    assert_eq!(r["verdict"]["kind"], "host-bound");
    assert_eq!(r["verdict"]["status"], "qualified");
    assert!(reason(&r, "idle_unexplained").is_some());
}

/// torch_npu (Ascend, text export): the step's `aclrtSynchronizeStreamWithTimeout` made to return
/// 40 µs after a gap it spans. That gap (the vendor's own `Free` row) is `host_blocked`, with the
/// Python frames above the CANN call (`.item()` inside a format string); every other gap the
/// call spans is not (the call outlives them: the device ran its own queue). The device side is
/// untouched, so the self-audit against the vendor's Overlap Analysis still agrees.
#[test]
fn r58_ascend_stream_sync_over_a_gap_is_host_blocked_with_its_python_frames() {
    let d = tmp("ascend");
    let rank = d.join("rank0_ascend_pt");
    common::copy_dir(&sample("ascend-pt/text/level1/rank0_ascend_pt"), &rank);
    let tv = rank.join("ASCEND_PROFILER_OUTPUT/trace_view.json");
    tool(&[
        "variant",
        "shorten-sync",
        sample("ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json")
            .to_str()
            .unwrap(),
        tv.to_str().unwrap(),
    ]);
    let o = oracle(&tv);
    let r = report(&rank);
    let b = &r["analyses"]["bubbles"][0];
    assert_blocked_as_oracle(b, &o);
    assert_eq!(o["blocked"].as_array().unwrap().len(), 1);
    assert_eq!(o["blocked"][0]["frames"][1], "aten::item");
    assert_eq!(r["analyses"]["vendor_agreement"]["devices_disagreeing"], 0);
}

/// A capture opened 5 ms before the work (the ROCm trace's first host event moved earlier):
/// the edge before the device's first task grows by what the oracle says, and nothing else
/// moves: idle, device_time's free time and the bound verdict's shares are those of the real
/// file (the edges are outside the device window). On the real multi-stream CUDA trace the
/// profiler's span opens 43 ms before the first kernel: an edge the headline names.
#[test]
fn r58_capture_opened_early_is_an_edge_not_idle() {
    let d = tmp("early");
    let f = d.join("amd_early.json.gz");
    tool(&[
        "variant",
        "open-early",
        sample(AMD).to_str().unwrap(),
        f.to_str().unwrap(),
        "5000",
    ]);
    let edges = |r: &Value| -> Vec<i64> {
        let b = &r["analyses"]["bubbles"][0];
        let ws = i(&b["window_start_ns"]);
        let e = b["capture_edges"].as_array().unwrap();
        let side = |before: bool| {
            e.iter()
                .filter(|g| (i(&g["end_ns"]) <= ws) == before)
                .map(|g| i(&g["dur_ns"]))
                .sum::<i64>()
        };
        assert!(e.iter().all(|g| g["cause"] == "capture_edge"));
        vec![side(true), side(false)]
    };
    let (real, early) = (report(&sample(AMD)), report(&f));
    for (r, path) in [(&real, sample(AMD)), (&early, f.clone())] {
        let o = oracle(&path);
        let want: Vec<i64> = o["edges"].as_array().unwrap().iter().map(i).collect();
        assert_eq!(edges(r), want, "{}", path.display());
        assert_eq!(i(&r["analyses"]["bubbles"][0]["idle_ns"]), i(&o["idle_ns"]));
    }
    assert_eq!(edges(&early)[0] - edges(&real)[0], {
        let (a, b) = (oracle(&sample(AMD)), oracle(&f));
        i(&a["host_window"][0]) - i(&b["host_window"][0])
    });
    // Nothing the verdict reads moved.
    let dt = |r: &Value| r["analyses"]["device_time"][0].clone();
    for k in ["window_ns", "free_ns", "computing_ns", "free_pct_of_window"] {
        assert_eq!(dt(&real)[k], dt(&early)[k], "{k}");
    }
    assert_eq!(real["verdict"]["kind"], early["verdict"]["kind"]);
    assert_eq!(real["verdict"]["status"], early["verdict"]["status"]);
    // A real capture opened early.
    let f =
        sample("torch-traces/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz");
    let (o, r) = (oracle(&f), report(&f));
    let want: Vec<i64> = o["edges"].as_array().unwrap().iter().map(i).collect();
    assert_eq!(edges(&r), want);
    let line = format!(
        "capture edges: no device work for {:.3} ms before the first task and {:.3} ms after the last",
        want[0] as f64 / 1e6,
        want[1] as f64 / 1e6
    );
    assert!(
        r["headline"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().starts_with(&line)),
        "{line}"
    );
}

/// torch_npu Level0 text exports write no CANN events, but a `HostToDevice` flow per launch: its
/// start is the runtime's launch. The gaps whose next task was launched after they began are
/// `host_dispatch`, as many and as long as the oracle counts from the flows and the vendor's
/// `Free` rows; nothing is left `unknown` (it was 8.5% of rank 0's idle before issue 58).
#[test]
fn r58_level0_launch_times_come_from_host_to_device_flows() {
    for rank in ["rank0", "rank1"] {
        let root = sample(&format!("ascend-pt/text/level0/{rank}_ascend_pt"));
        let o = oracle(&root.join("ASCEND_PROFILER_OUTPUT/trace_view.json"));
        let r = report(&root);
        let b = &r["analyses"]["bubbles"][0];
        let c = &b["by_cause"]["host_dispatch"];
        let n = i(&o["late_launch"][0]);
        assert_eq!(i(&c["count"]), n, "{rank}");
        // The vendor's Free rows end on its µs with 3 decimals, our gaps on each task's exact
        // end: at most 1 ns apart at each end of a gap.
        let total = i(&o["late_launch"][1]);
        assert!(
            (i(&c["total_ns"]) - total).abs() <= 2 * n,
            "{rank}: {c} vs {total}"
        );
        assert_eq!(i(&b["unknown_ns"]), 0, "{rank}");
    }
}

/// CSV-only exports (a kernel_details.csv read alone). The real text exports' `Wait Time(us)` is
/// the row's start minus the previous row's end (191 of 191 rows on each), so it names no
/// cause the rows do not: the idle stays `unknown`, counted; their verdict is
/// communication-bound, which does not rest on idle, so it stays confident. A file cut to a few
/// rows (msprof-analyze's test fixture) keeps the exporter's waits: each gap's next row says
/// its predecessor ended inside the gap, so those gaps are `unlisted_work`, and an idle-bound
/// verdict over them is qualified. A subset whose waits match its rows is idle-bound with all of
/// its idle unknown: qualified too.
#[test]
fn r58_csv_only_exports_count_unknown_and_unlisted_work() {
    let d = tmp("csv");
    let real = "ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
    std::fs::create_dir_all(d.join("level1")).unwrap();
    let csv = d.join("level1/kernel_details.csv");
    std::fs::copy(sample(real), &csv).unwrap();
    let o = tool(&["oracle", "--csv", csv.to_str().unwrap()]);
    assert_eq!(o["wait_is_row_gap"], serde_json::json!([191, 191]));
    assert_eq!(o["unlisted"], serde_json::json!([0, 0]));
    let r = report(&d.join("level1"));
    let b = &r["analyses"]["bubbles"][0];
    assert_eq!(i(&b["idle_ns"]), i(&o["idle_ns"]));
    assert_eq!(i(&b["unknown_ns"]), i(&o["idle_ns"]));
    assert_eq!(r["verdict"]["kind"], "communication-bound");
    assert!(reason(&r, "idle_unexplained").is_none());

    let cut = sample("ascend-misc/mstt/mstt_test_resources/kernel_details_with_opstate.csv");
    let o = tool(&["oracle", "--csv", cut.to_str().unwrap()]);
    let r = report(&cut);
    let b = &r["analyses"]["bubbles"][0];
    assert_eq!(i(&b["idle_ns"]), i(&o["idle_ns"]));
    let c = &b["by_cause"]["unlisted_work"];
    assert_eq!(i(&c["count"]), i(&o["unlisted"][0]));
    assert_eq!(i(&c["total_ns"]), i(&o["unlisted"][1]));
    assert!(i(&o["unlisted"][0]) > 0);
    assert_eq!(r["verdict"]["kind"], "idle-bound");
    assert_eq!(r["verdict"]["status"], "qualified");
    assert!(reason(&r, "idle_unexplained").is_some());

    let subset = sample("ascend-misc/mstt/mstt_test_resources/kernel_details_subset_test.csv");
    let o = tool(&["oracle", "--csv", subset.to_str().unwrap()]);
    assert_eq!(o["unlisted"], serde_json::json!([0, 0]));
    let r = report(&subset);
    let b = &r["analyses"]["bubbles"][0];
    assert_eq!(i(&b["unknown_ns"]), i(&o["idle_ns"]));
    assert_eq!(r["verdict"]["status"], "qualified");
    let why = reason(&r, "idle_unexplained").unwrap();
    assert!(
        why["detail"]
            .as_str()
            .unwrap()
            .starts_with("100.0% of idle")
    );
}
