//! The verdict's status and reasons (docs/evidence.md) on the shared real roots and on variants
//! made from real files. Inputs: every shared real Ascend root (text and db levels 0-2, the
//! legacy CANN roots) and the generated demo root, all `confident` with every device audited;
//! variants written to temporary folders, never touching the samples:
//! - a capture trace: torch-traces/negative_queue_length_values_check/rank0.json.gz (real Kineto,
//!   CUDA graph replays, 225 `cudaStreamIsCapturing` probes and no capture) with a
//!   `cudaStreamBeginCapture` .. `cudaStreamEndCapture` window put around every launch of its main
//!   thread and those launches' device events removed;
//! - the same trace with a window around its main thread's first 100 launches only;
//! - a CSV-only root: text/level1 without trace_view.json, whole and with kernel_details.csv cut
//!   to its first 21 rows;
//! - identical ranks: text/level1 rank 0's files under rank ids 0-3;
//! - a generated root with one slow rank (`synth --slow-rank 1 --slow-pct 150`).
//!
//! Expected counts are taken from the raw files by this test's own reading (serde_json over the
//! Kineto events; the CSV rows), not from profscope.

use crate::common;
use serde_json::{Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-verdict-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn analyze(path: &Path) -> Value {
    common::profscope_json(&[
        "analyze",
        "--quiet",
        "--format",
        "json",
        path.to_str().unwrap(),
    ])
}

fn codes(r: &Value) -> Vec<(String, String)> {
    r["verdict"]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["code"].as_str().unwrap().to_string(),
                x["effect"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn headline(r: &Value) -> Vec<String> {
    r["headline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

const BOUND: [&str; 5] = [
    "compute-bound",
    "communication-bound",
    "idle-bound",
    "host-bound",
    "mixed",
];

#[test]
fn every_shared_real_root_is_confident_and_audited_on_every_device() {
    let s = common::samples_dir();
    // Sources per root: which vendor files each capture holds (ls of the sample folders; level0
    // has no HCCL plane tasks to recompute the collective split from, so communication.json /
    // CommAnalyzerTime are not compared there).
    for (root, sources) in [
        (
            "ascend-pt/text/level0",
            json!(["Overlap Analysis", "step_trace_time.csv"]),
        ),
        (
            "ascend-pt/text/level1",
            json!([
                "Overlap Analysis",
                "step_trace_time.csv",
                "communication.json"
            ]),
        ),
        (
            "ascend-pt/text/level2",
            json!([
                "Overlap Analysis",
                "step_trace_time.csv",
                "communication.json"
            ]),
        ),
        ("ascend-pt/db/level0", json!(["analysis.db StepTraceTime"])),
        (
            "ascend-pt/db/level1",
            json!([
                "Overlap Analysis",
                "analysis.db StepTraceTime",
                "analysis.db CommAnalyzerTime"
            ]),
        ),
        (
            "ascend-pt/db/level2",
            json!(["analysis.db StepTraceTime", "analysis.db CommAnalyzerTime"]),
        ),
        ("ascend-msprof-legacy", json!(["Overlap Analysis"])),
    ] {
        let r = analyze(&s.join(root));
        assert_eq!(
            r["verdict"]["status"], "confident",
            "{root}: {}",
            r["verdict"]
        );
        assert_eq!(r["verdict"]["cross_rank_status"], "confident", "{root}");
        // Two ranks, one device each (profiler_info_0/1.json; legacy device_0 and device_1).
        let v = &r["analyses"]["vendor_agreement"];
        assert_eq!(
            (v["devices_checked"].as_u64(), v["devices_total"].as_u64()),
            (Some(2), Some(2)),
            "{root}"
        );
        assert_eq!(v["devices_disagreeing"], 0, "{root}");
        assert_eq!(v["sources"], sources, "{root}");
        assert!(
            headline(&r).iter().any(|l| l.contains("on 2 of 2 devices")),
            "{root}: {:?}",
            headline(&r)
        );
        // The step table checks are per step: step 50 (step_trace_time.csv / StepTraceTime).
        if root.starts_with("ascend-pt") {
            let steps: Vec<i64> = v["checks"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|c| c["step"].as_i64())
                .collect();
            // 4 step-table metrics per device, plus 3 collective ones where plane tasks exist.
            let coll = if root.ends_with("level0") { 0 } else { 6 };
            assert_eq!(
                steps,
                vec![50; 8 + coll],
                "{root}: every step check is step 50"
            );
        }
    }
    // The demo root (generated): confident, 2 of 2.
    let r = common::profscope_json(&["analyze", "--quiet", "--format", "json"]);
    assert_eq!(r["verdict"]["status"], "confident");
    assert_eq!(r["verdict"]["kind"], "compute-bound");
}

#[test]
fn db_level1_step_trace_time_is_checked_on_the_device_without_overlap_analysis() {
    // Only rank 0's db has OVERLAP_ANALYSIS (added by MindStudio Insight); rank 1 is audited
    // through analysis.db StepTraceTime: computing 8915.634 µs, free 25840.499 µs (sqlite3
    // `select computing, free from StepTraceTime` on rank1's analysis.db).
    let r = analyze(&common::samples_dir().join("ascend-pt/db/level1"));
    let checks = r["analyses"]["vendor_agreement"]["checks"]
        .as_array()
        .unwrap();
    let all1: Vec<&Value> = checks.iter().filter(|c| c["device"]["rank"] == 1).collect();
    // Its collective split against CommAnalyzerTime's collective rows of step50 summed
    // (sqlite3: sum(elapse_time) = 98.5901898125 ms over 4 rows of rank 1's analysis.db).
    let coll: Vec<&&Value> = all1
        .iter()
        .filter(|c| c["metric"].as_str().unwrap().starts_with("collective"))
        .collect();
    assert_eq!(coll.len(), 3);
    assert!(coll.iter().all(|c| c["agrees"] == true));
    let elapsed = coll
        .iter()
        .find(|c| c["metric"] == "collective_elapsed")
        .unwrap();
    assert_eq!(elapsed["vendor_ns"], 98_590_190);
    let rank1: Vec<&Value> = all1
        .into_iter()
        .filter(|c| !c["metric"].as_str().unwrap().starts_with("collective"))
        .collect();
    assert_eq!(rank1.len(), 4);
    assert!(rank1.iter().all(|c| {
        c["source"]
            .as_str()
            .unwrap()
            .starts_with("analysis.db StepTraceTime of ")
    }));
    let vendor = |m: &str| rank1.iter().find(|c| c["metric"] == m).unwrap()["vendor_ns"].as_i64();
    assert_eq!(vendor("computing"), Some(8_915_634));
    assert_eq!(vendor("free"), Some(25_840_499));
}

/// Kineto events of `rel` (gzip JSON).
fn kineto(rel: &str) -> Value {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(common::samples_dir().join(rel)).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    serde_json::from_str(&s).unwrap()
}

fn is_launch(e: &Value) -> bool {
    let n = e["name"].as_str().unwrap_or("");
    e["cat"] == "cuda_runtime"
        && e["ph"] == "X"
        && (n.contains("LaunchKernel")
            || n.contains("Memcpy")
            || n.contains("Memset")
            || n == "cudaGraphLaunch")
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Eager launches plus the device events whose correlation is a cudaGraphLaunch's.
fn kernel_runs(f: &Path) -> u64 {
    let mut s = String::new();
    std::fs::File::open(f)
        .unwrap()
        .read_to_string(&mut s)
        .unwrap();
    let t: Value = serde_json::from_str(&s).unwrap();
    let ev = t["traceEvents"].as_array().unwrap();
    let graph: std::collections::HashSet<i64> = ev
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime" && e["name"] == "cudaGraphLaunch")
        .filter_map(|e| e["args"]["correlation"].as_i64())
        .collect();
    let eager = ev
        .iter()
        .filter(|e| is_launch(e) && e["name"] != "cudaGraphLaunch")
        .count() as u64;
    let replayed = ev
        .iter()
        .filter(|e| {
            matches!(
                e["cat"].as_str(),
                Some("kernel" | "gpu_memcpy" | "gpu_memset")
            )
        })
        .filter(|e| {
            e["args"]["correlation"]
                .as_i64()
                .is_some_and(|c| graph.contains(&c))
        })
        .count() as u64;
    eager + replayed
}

/// The real trace with a capture window around the first `n` launches of its main thread (pid
/// = tid) and those launches' device events removed; returns the file and how many launches
/// the window holds, counted here.
fn capture_variant(dir: &Path, n: usize) -> (PathBuf, u64) {
    let mut t = kineto("torch-traces/negative_queue_length_values_check/rank0.json.gz");
    let ev = t["traceEvents"].as_array_mut().unwrap();
    let mut main: Vec<(f64, f64, i64)> = ev
        .iter()
        .filter(|e| is_launch(e) && e["pid"] == e["tid"])
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            (
                ts,
                ts + e["dur"].as_f64().unwrap(),
                e["args"]["correlation"].as_i64().unwrap(),
            )
        })
        .collect();
    main.sort_by(|a, b| a.0.total_cmp(&b.0));
    main.truncate(n);
    let (start, end) = (main[0].0, main.iter().map(|x| x.1).fold(f64::MIN, f64::max));
    let captured: std::collections::HashSet<i64> = main.iter().map(|x| x.2).collect();
    let (pid, tid) = {
        let e = ev
            .iter()
            .find(|e| is_launch(e) && e["pid"] == e["tid"])
            .unwrap();
        (e["pid"].clone(), e["tid"].clone())
    };
    ev.retain(|e| {
        let device = matches!(
            e["cat"].as_str(),
            Some("kernel" | "gpu_memcpy" | "gpu_memset")
        );
        !(device
            && e["args"]["correlation"]
                .as_i64()
                .is_some_and(|c| captured.contains(&c)))
    });
    // Launch events that start inside the window (also from other code paths of the thread).
    let inside = ev
        .iter()
        .filter(|e| {
            is_launch(e) && e["pid"] == pid && e["tid"] == tid && {
                let ts = e["ts"].as_f64().unwrap();
                ts >= start && ts + e["dur"].as_f64().unwrap() <= end + 0.002
            }
        })
        .count() as u64;
    for (name, ts) in [
        ("cudaStreamBeginCapture", start - 0.002),
        ("cudaStreamEndCapture", end + 0.001),
    ] {
        ev.push(json!({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": 0.001, "args": {"correlation": 1}}));
    }
    let f = dir.join("capture.json");
    std::fs::write(&f, serde_json::to_vec(&t).unwrap()).unwrap();
    (f, inside)
}

#[test]
fn a_capture_trace_gets_no_bound_verdict() {
    let dir = tmp("capture");
    // The original: no capture (its IsCapturing probes prove nothing), confident.
    let orig = analyze(
        &common::samples_dir()
            .join("torch-traces/negative_queue_length_values_check/rank0.json.gz"),
    );
    assert_eq!(orig["analyses"]["evidence"][0]["capture_windows"], 0);
    assert_eq!(orig["analyses"]["evidence"][0]["graph_launches"], 70);
    // Main-thread launches 4,035 of 6,600 (python: cat cuda_runtime, name with Launch /
    // Memcpy / Memset, pid == tid).
    let (f, inside) = capture_variant(&dir, usize::MAX);
    assert_eq!(inside, 4035);
    let r = analyze(&f);
    let e = &r["analyses"]["evidence"][0];
    assert_eq!(e["capture_windows"], 1);
    assert_eq!(e["captured_launches"].as_u64(), Some(inside));
    assert_eq!(e["launches"], 6600);
    assert_eq!(r["verdict"]["status"], "withheld");
    assert_eq!(r["verdict"]["kind"], Value::Null);
    assert_eq!(
        codes(&r)[0],
        ("graph_capture".to_string(), "withheld".to_string())
    );
    let h = headline(&r);
    assert!(
        h[0].starts_with(
            "cannot tell: this trace is a graph capture - 4,035 launches were recorded into a graph"
        ),
        "{h:?}"
    );
    assert!(h[0].contains("profile the replays instead"));
    for l in &h {
        assert!(!BOUND.iter().any(|b| l.starts_with(b)), "a bound line: {l}");
        assert!(!l.contains("top cause") && !l.contains("by arrival"), "{l}");
    }
    assert!(common::diag_count(&r, "verdict_withheld") >= 1);

    // A window around 100 launches of 6,600: qualified, the verdict stands.
    let dir2 = tmp("capture-part");
    let (f, inside) = capture_variant(&dir2, 100);
    let r = analyze(&f);
    assert_eq!(
        r["analyses"]["evidence"][0]["captured_launches"].as_u64(),
        Some(inside)
    );
    assert!((100..200).contains(&inside), "{inside}");
    assert_eq!(r["verdict"]["status"], "qualified");
    // The trace's world size is 16 with rank 0 present: missing_ranks weakens rank claims.
    assert_eq!(
        codes(&r),
        vec![
            ("partial_graph_capture".to_string(), "qualified".to_string()),
            ("missing_ranks".to_string(), "qualified".to_string())
        ]
    );
    assert_eq!(r["verdict"]["reasons"][1]["scope"], "cross_rank");
    let kind = r["verdict"]["kind"].as_str().unwrap();
    // The share is of kernel runs: eager launches plus the device events of the graph replays,
    // counted here from the variant file (6,600 launches - 70 cudaGraphLaunch + their events).
    let runs = kernel_runs(&f);
    assert!((6_800..6_900).contains(&runs), "{runs}");
    assert!(
        headline(&r)[0].starts_with(&format!(
            "qualified {kind}: {inside} of {} kernel runs",
            thousands(runs)
        )),
        "{:?}",
        headline(&r)
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

#[test]
fn a_csv_only_export_is_read_fully_and_a_cut_one_is_withheld() {
    let dir = tmp("csv-only");
    let level1 = common::samples_dir().join("ascend-pt/text/level1");
    for r in 0..2 {
        let to = dir.join(format!("rank{r}_ascend_pt"));
        common::copy_dir(&level1.join(format!("rank{r}_ascend_pt")), &to);
        std::fs::remove_file(to.join("ASCEND_PROFILER_OUTPUT/trace_view.json")).unwrap();
    }
    // Whole: steps from kernel_details.csv `Step Id` (every row says 50), audited against
    // step_trace_time.csv on both devices, confident.
    let r = analyze(&dir);
    assert_eq!(r["verdict"]["status"], "confident", "{}", r["verdict"]);
    assert!(
        headline(&r)[0].ends_with("1 step (ProfilerStep)"),
        "{:?}",
        headline(&r)
    );
    let v = &r["analyses"]["vendor_agreement"];
    assert_eq!(v["sources"], json!(["step_trace_time.csv"]));
    assert_eq!(
        (
            v["devices_checked"].as_u64(),
            v["devices_disagreeing"].as_u64()
        ),
        (Some(2), Some(0))
    );

    // Collective-op depth from communication.json (no plane tasks without the trace): 4 ops per
    // rank; rank 0's elapsed and wait equal the file's "Total Op Info" (Elapse 105.99187771875
    // ms, Wait 5.94061871875 ms), its wait ratio 0.6173 and rank 1's 0.0472.
    let c = &r["analyses"]["communication_ops"];
    let d0 = &c["devices"][0];
    assert_eq!(d0["source"], "communication.json");
    assert_eq!(
        (d0["ops_total"].as_u64(), d0["total"]["ops"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(d0["total"]["times"]["elapsed_ns"], 105_991_878);
    assert_eq!(d0["total"]["times"]["wait_ns"], 5_940_619);
    let ratios: Vec<f64> = c["summary"]["wait_ratios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x[1].as_f64().unwrap() * 1e4).round() / 1e4)
        .collect();
    assert_eq!(ratios, vec![0.6173, 0.0472]);
    // 4 collectives per rank: fewer than SLOW_RANK_MIN_OPS, so no slow rank from 4 ops.
    assert_eq!(c["summary"]["slow_rank"], Value::Null);

    // Cut to 21 rows per rank: withheld, export_incomplete, with both numbers.
    for r in 0..2 {
        let k = dir.join(format!(
            "rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"
        ));
        let text = std::fs::read_to_string(&k).unwrap();
        let head: Vec<&str> = text.lines().take(22).collect();
        std::fs::write(&k, head.join("\n") + "\n").unwrap();
    }
    let r = analyze(&dir);
    assert_eq!(r["verdict"]["status"], "withheld");
    assert_eq!(
        codes(&r)[0],
        ("export_incomplete".to_string(), "withheld".to_string())
    );
    let h = headline(&r);
    // step_trace_time.csv rank 0: Computing 8873.756 µs.
    assert!(
        h[0].starts_with("cannot tell: the export is incomplete - rank 0 computing"),
        "{h:?}"
    );
    assert!(
        h[0].contains("8.874 ms in its own step_trace_time.csv"),
        "{h:?}"
    );
    assert!(
        !h.iter()
            .any(|l| BOUND.iter().any(|b| l.starts_with(b)) || l.contains("stands out"))
    );
    // Issue 57: the self-audit's shares are of the larger window compared, here the vendor's
    // step: step_trace_time.csv rank 0 step 50: Computing 8873.756 + Communication(Not
    // Overlapped) 101963.203 + Free 25744.050 = 136581.009 µs (its Stage column: 136581.0), read
    // with the csv module; ours is a sliver (21 rows). A share of the sliver read -907% and more.
    let stage_us: f64 = {
        let f = dir.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv");
        let mut rd = csv::Reader::from_path(f).unwrap();
        let h = rd.headers().unwrap().clone();
        let row = rd.records().next().unwrap().unwrap();
        let col = |n: &str| {
            row[h.iter().position(|x| x == n).unwrap()]
                .parse::<f64>()
                .unwrap()
        };
        col("Computing") + col("Communication(Not Overlapped)") + col("Free")
    };
    assert!((stage_us - 136_581.009).abs() < 1e-6);
    let checks = r["analyses"]["vendor_agreement"]["checks"]
        .as_array()
        .unwrap();
    let step0: Vec<&Value> = checks
        .iter()
        .filter(|c| c["device"]["rank"] == 0 && c["step"] == 50)
        .collect();
    assert_eq!(
        step0.len(),
        4,
        "computing, communication, not overlapped, free"
    );
    for c in &step0 {
        let w = c["window_ns"].as_i64().unwrap();
        assert_eq!(w, c["vendor_window_ns"].as_i64().unwrap());
        assert!((w as f64 - stage_us * 1e3).abs() <= 1.0, "{c}");
        assert!(
            c["ours_window_ns"].as_i64().unwrap() * 10 < w,
            "ours is a sliver"
        );
        let pct = c["diff_ns"].as_f64().unwrap() * 100.0 / w as f64;
        assert!((c["diff_pct_of_window"].as_f64().unwrap() - pct).abs() < 1e-9);
        assert!(pct.abs() <= 100.0, "{c}");
    }
    let audit = r["analyses"]["vendor_agreement"]["verdict"]
        .as_str()
        .unwrap();
    assert!(
        audit.contains("window the vendor's numbers split; ours cover"),
        "{audit}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn identical_ranks_name_no_rank() {
    let dir = tmp("identical");
    let src = common::samples_dir().join("ascend-pt/text/level1/rank0_ascend_pt");
    for r in 0..4 {
        let to = dir.join(format!("rank{r}_ascend_pt"));
        common::copy_dir(&src, &to);
        if r > 0 {
            std::fs::rename(
                to.join("profiler_info_0.json"),
                to.join(format!("profiler_info_{r}.json")),
            )
            .unwrap();
        }
    }
    let r = analyze(&dir);
    assert_eq!(r["analyses"]["ranks"]["present"], json!([0, 1, 2, 3]));
    let c = &r["analyses"]["cross_rank"]["cohorts"][0];
    assert_eq!(c["slowest"]["rank"], -1);
    assert_eq!(c["slowest"]["stands_out"], false);
    assert_eq!(c["waited_for"]["rank"], -1);
    assert_eq!(c["collectives"]["with_one_last"], 0);
    // 4 hcom_allReduce per rank (communication.json of rank 0).
    assert_eq!(c["collectives"]["matched"], 4);
    let h = headline(&r).join("\n");
    assert!(
        h.contains(
            "no rank stands out by device time: the ranks tie in each of the 1 step compared"
        ),
        "{h}"
    );
    assert!(h.contains("no rank stands out by arrival: the ranks start each of the 4 matched collectives together"), "{h}");
    assert!(
        !h.contains("rank 0 is") && !h.contains("others wait"),
        "{h}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_generated_slow_rank_is_named_with_its_p_value() {
    // Generated: rank 1's compute kernels take 150% of their time in each of 51 steps per rank.
    let g = common::generated_with(
        "verdict-slow",
        profscope::synth::SynthOpts {
            ranks: 2,
            target_bytes: 1_000_000,
            seed: 3,
            kineto: false,
            export: Default::default(),
            slow: Some((1, 150)),
            graph_mode: false,
            capture_apart: false,
        },
    );
    let r = analyze(&g.dir);
    let c = &r["analyses"]["cross_rank"]["cohorts"][0];
    let s = &c["slowest"];
    assert_eq!(s["rank"], 1, "{s}");
    assert_eq!(s["stands_out"], true);
    // Slowest in k of m steps: p = 2 * P(X >= k | m, 1/2), below 0.05.
    let (k, m) = (
        s["steps"].as_u64().unwrap(),
        s["of_steps"].as_u64().unwrap(),
    );
    assert!(k * 10 >= m * 9, "{k} of {m}");
    assert!(s["p_value"].as_f64().unwrap() < 0.05);
    assert!(
        headline(&r)
            .iter()
            .any(|l| l.starts_with("by device time, rank 1 is the slowest in"))
    );
    assert_eq!(r["verdict"]["status"], "confident");
}

#[test]
fn diff_never_passes_a_withheld_run() {
    // HTA's triton_example: one kernel of 1.76 µs in a 13.69 s host window (device_sliver).
    let cpu = common::samples_dir().join("torch-traces/triton_example");
    let out = common::profscope_command()
        .args(["diff", "--quiet", "--format", "json"])
        .arg(&cpu)
        .arg(&cpu)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["gate"], "cannot_tell");
    assert!(
        d["summary"].as_str().unwrap().starts_with("CANNOT TELL:"),
        "{}",
        d["summary"]
    );
    assert!(
        d["summary"]
            .as_str()
            .unwrap()
            .contains("cover 0.00% of the host's window"),
        "{}",
        d["summary"]
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("withheld"));
}

#[test]
fn every_headline_line_reads_at_a_glance() {
    // Issue 47: each headline line at most about 160 characters, the finding first; the rule
    // that decides the bound word lives in `verdict.rule` and docs/evidence.md.
    for root in crate::report_identity::ROOTS {
        let r = common::profscope_json(&["analyze", "--quiet", "--format", "json", root]);
        for l in headline(&r) {
            assert!(
                l.chars().count() <= 160,
                "{root}: {} chars: {l}",
                l.chars().count()
            );
        }
        assert!(
            r["verdict"]["rule"]
                .as_str()
                .unwrap()
                .contains("else mixed")
        );
    }
}
