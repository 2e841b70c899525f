//! Graph mode (analyses.graph_mode): graph replays tied to their launches, steps and ops, and
//! captures counted. Inputs:
//! * real Kineto traces with CUDA graph replays (../shared/samples/torch-traces,
//!   negative_queue_length_values_check rank 0 and trace_diff/test), counted here independently
//!   from the JSON with serde: a replay is a `cudaGraphLaunch` (cat cuda_runtime) whose
//!   correlation id one or more device events (cat kernel / gpu_memcpy / gpu_memset) carry;
//!   replay device time is the sum of those events' `dur` (µs, to ns);
//! * generated Ascend ACLGraph decode roots (`profscope synth --graph-mode`), text and db, whose
//!   ground truth the generator counts as it writes every replay;
//! * a small Kineto trace written here with one capture and three replays of it, so the k-th
//!   replayed kernel maps to the k-th captured launch's op (values set by hand below).

use crate::common;
use profscope::synth::{Export, SynthOpts};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::Path;

fn analyze(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["analyze", "--quiet", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(path.to_str().unwrap());
    common::profscope_json(&args)
}

fn kineto(rel: &str) -> Value {
    let mut s = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(common::samples_dir().join("torch-traces").join(rel)).unwrap(),
    )
    .read_to_string(&mut s)
    .unwrap();
    serde_json::from_str(&s).unwrap()
}

/// (graph launches, replays, replay device events, replay device ns), counted from the JSON.
fn count_replays(t: &Value) -> (u64, u64, u64, i64) {
    let ev = t["traceEvents"].as_array().unwrap();
    let launches: Vec<i64> = ev
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime" && e["name"] == "cudaGraphLaunch")
        .filter_map(|e| e["args"]["correlation"].as_i64())
        .collect();
    let set: HashSet<i64> = launches.iter().copied().collect();
    let mut with_work: HashSet<i64> = HashSet::new();
    let (mut n, mut ns) = (0u64, 0i64);
    for e in ev {
        let device = matches!(
            e["cat"].as_str(),
            Some("kernel" | "gpu_memcpy" | "gpu_memset")
        );
        let c = e["args"]["correlation"].as_i64();
        if device && let Some(c) = c.filter(|c| set.contains(c)) {
            with_work.insert(c);
            n += 1;
            ns += (e["dur"].as_f64().unwrap() * 1000.0).round() as i64;
        }
    }
    (launches.len() as u64, with_work.len() as u64, n, ns)
}

fn file(r: &Value, k: usize) -> &Value {
    &r["analyses"]["graph_mode"]["files"][k]
}

#[test]
fn real_kineto_replays_equal_an_independent_count() {
    for (rel, want) in [
        (
            "negative_queue_length_values_check/rank0.json.gz",
            (70, 70, 345, 105_467_000),
        ),
        ("trace_diff/test/test.json.gz", (12, 12, 5_046, 267_126_000)),
    ] {
        let counted = count_replays(&kineto(rel));
        assert_eq!(counted, want, "{rel}: the independent count moved");
        let r = analyze(&common::samples_dir().join("torch-traces").join(rel), &[]);
        assert_eq!(
            r["analyses"]["graph_mode"]["files"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        let g = file(&r, 0);
        let got = (
            g["graph_launches"].as_u64().unwrap(),
            g["replays"].as_u64().unwrap(),
            g["replay_device_events"].as_u64().unwrap(),
            g["replay_device_ns"].as_i64().unwrap(),
        );
        assert_eq!(got, want, "{rel}");
        assert_eq!(g["attribution"], "correlation");
        assert_eq!(
            g["capture_windows"], 0,
            "{rel}: IsCapturing probes are no capture"
        );
        assert_eq!(g["launches_without_device_work"], 0);
        // No capture in these traces: time inside graphs by kernel name, said in a caveat.
        assert_eq!(g["ops_in_graphs"]["source"], "kernel_name");
        assert!(
            g["caveats"].as_array().unwrap().iter().any(|c| c
                .as_str()
                .unwrap()
                .starts_with("no capture of the replayed graphs")),
            "{rel}"
        );
        // Per-op time inside graphs sums to the replay device time.
        let rows: i64 = g["ops_in_graphs"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["sum_ns"].as_i64().unwrap())
            .sum::<i64>()
            + g["ops_in_graphs"]["other"][2].as_i64().unwrap();
        assert_eq!(rows, want.3, "{rel}");
        // The replays' own evidence line agrees.
        assert_eq!(
            r["analyses"]["evidence"][0]["replay_device_events"].as_u64(),
            Some(want.2)
        );
    }
}

#[test]
fn real_kineto_replays_are_issued_by_the_compiled_functions() {
    // The trace's cudaGraphLaunch calls sit inside torch.compile's CompiledFunction (forward,
    // 35 on the main thread) and CompiledFunctionBackward (35 on the autograd thread); counted
    // with python: the innermost cpu_op / python_function enclosing each launch on its tid.
    let r = analyze(
        &common::samples_dir()
            .join("torch-traces/negative_queue_length_values_check/rank0.json.gz"),
        &[],
    );
    let by: BTreeMap<String, u64> = file(&r, 0)["issuing_ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap().to_string(),
                x["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(by.values().sum::<u64>(), 70);
    assert!(
        by.keys()
            .all(|k| k == "CompiledFunction" || k == "CompiledFunctionBackward"),
        "{by:?}"
    );
}

fn graph_root(tag: &str, export: Export) -> common::Generated {
    common::generated_with(
        tag,
        SynthOpts {
            ranks: 1,
            target_bytes: 300_000,
            seed: 7,
            kineto: false,
            export,
            slow: None,
            graph_mode: true,
            capture_apart: false,
        },
    )
}

#[test]
fn generated_aclgraph_decode_gives_the_generators_replays() {
    let text = graph_root("graph-text", Export::Json);
    let db = graph_root("graph-db", Export::Db);
    for run in [&text, &db] {
        let rt = &run.truth.ranks[0];
        let input = match &rt.db {
            Some(p) => run.dir.join(p),
            None => run.dir.join(&rt.trace_view),
        };
        let replays = &rt.graph_replays;
        assert!(replays.len() >= 10, "{}", replays.len());
        let r = analyze(&input, &["--top", "1000", "--detail", "full"]);
        let g = file(&r, 0);
        assert_eq!(g["attribution"], "model_id", "{input:?}");
        assert_eq!(g["replays"].as_u64().unwrap(), replays.len() as u64);
        assert_eq!(g["graph_launches"].as_u64(), Some(rt.graph_launches));
        assert_eq!(g["launches_without_device_work"], 0);
        assert_eq!(g["replays_without_launch"], 0);
        assert_eq!(
            g["replay_device_events"].as_u64().unwrap(),
            replays.iter().map(|x| x.tasks).sum::<u64>()
        );
        assert_eq!(
            g["replay_device_ns"].as_i64().unwrap(),
            replays.iter().map(|x| x.device_ns).sum::<i64>()
        );
        // Every replay: its launch, graph, tasks, window and the gap to the next one.
        let rows = g["per_replay"].as_array().unwrap();
        assert_eq!(rows.len(), replays.len());
        for (k, (row, want)) in rows.iter().zip(replays).enumerate() {
            assert_eq!(
                row["launch_ns"].as_i64(),
                Some(want.launch_ns),
                "replay {k}"
            );
            assert_eq!(row["graph"].as_i64(), Some(want.graph), "replay {k}");
            assert_eq!(
                row["device_events"].as_u64(),
                Some(want.tasks),
                "replay {k}"
            );
            assert_eq!(row["start_ns"].as_i64(), Some(want.start_ns), "replay {k}");
            assert_eq!(row["end_ns"].as_i64(), Some(want.end_ns), "replay {k}");
            let gap = replays
                .get(k + 1)
                .map_or(-1, |n| (n.start_ns - want.end_ns).max(0));
            assert_eq!(row["gap_to_next_ns"].as_i64(), Some(gap), "replay {k}");
            assert_eq!(row["issued_by"], "forward_cudagraph", "replay {k}");
        }
        // Per decode step: the generator's replays (main graph + one per MTP head) and their
        // summed device time; steps are numbered after the prefill steps.
        let mut per_step: BTreeMap<u64, (u64, i64)> = BTreeMap::new();
        for x in replays {
            let e = per_step.entry(x.decode_step).or_default();
            e.0 += 1;
            e.1 += x.device_ns;
        }
        let steps = g["steps"].as_array().unwrap();
        assert_eq!(steps.len(), per_step.len());
        for (s, (d, (n, ns))) in steps.iter().zip(&per_step) {
            assert_eq!(
                s["step"].as_u64(),
                Some(rt.prefill_steps + d),
                "decode step {d}"
            );
            assert_eq!(s["replays"].as_u64(), Some(*n), "decode step {d}");
            assert_eq!(s["graph_device_ns"].as_i64(), Some(*ns), "decode step {d}");
        }
        // The capture: its launches and time, and the capture-time op of every replayed task.
        // One capture per graph (the generator captures each graph once, before decoding).
        let graphs: HashSet<i64> = replays.iter().map(|x| x.graph).collect();
        assert_eq!(g["capture_windows"].as_u64(), Some(graphs.len() as u64));
        assert_eq!(g["graphs"].as_u64(), Some(graphs.len() as u64));
        assert_eq!(g["captured_launches"].as_u64(), Some(rt.captured_launches));
        assert_eq!(g["capture_ns"].as_i64(), Some(rt.capture_ns));
        let ops = &g["ops_in_graphs"];
        assert_eq!(ops["source"], "connection_id");
        assert_eq!(ops["replays_matched"].as_u64(), Some(replays.len() as u64));
        let got: BTreeMap<String, i64> = ops["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["name"].as_str().unwrap().to_string(),
                    x["sum_ns"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(ops["other"][0], 0, "more ops than --top");
        assert_eq!(got, rt.graph_op_ns, "{input:?}");
        // A capture beside its replays qualifies the verdict, never withholds it.
        assert_eq!(r["verdict"]["status"], "qualified");
        assert!(
            r["verdict"]["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["code"] == "partial_graph_capture"),
            "{}",
            r["verdict"]
        );
    }
}

/// A Kineto trace (µs) with one capture of three launches under aten ops and three replays of
/// it in two profiler steps, plus one eager kernel in the second step.
fn capture_and_replays(dir: &Path) -> std::path::PathBuf {
    let host = |name: &str, cat: &str, ts: f64, dur: f64, corr: Option<i64>| {
        let mut e = json!({"ph": "X", "cat": cat, "name": name, "pid": 100, "tid": 100, "ts": ts, "dur": dur});
        if let Some(c) = corr {
            e["args"] = json!({"correlation": c});
        }
        e
    };
    let kernel = |name: &str, ts: f64, dur: f64, corr: i64| {
        json!({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
               "args": {"correlation": corr, "stream": 7, "device": 0}})
    };
    let mut ev = vec![
        host("ProfilerStep#0", "user_annotation", 0.0, 1000.0, None),
        host("ProfilerStep#1", "user_annotation", 1000.0, 1000.0, None),
        host("cudaStreamBeginCapture", "cuda_runtime", 10.0, 1.0, Some(1)),
        host("aten::mm", "cpu_op", 12.0, 10.0, None),
        host("cudaLaunchKernel", "cuda_runtime", 13.0, 5.0, Some(2)),
        host("aten::add", "cpu_op", 25.0, 10.0, None),
        host("cudaLaunchKernel", "cuda_runtime", 26.0, 5.0, Some(3)),
        host("aten::relu", "cpu_op", 40.0, 10.0, None),
        host("cudaLaunchKernel", "cuda_runtime", 41.0, 5.0, Some(4)),
        host("cudaStreamEndCapture", "cuda_runtime", 55.0, 1.0, Some(5)),
        host("aten::softmax", "cpu_op", 1490.0, 10.0, None),
        host("cudaLaunchKernel", "cuda_runtime", 1491.0, 5.0, Some(20)),
        kernel("softmax_kernel", 1510.0, 7.0, 20),
    ];
    // (launch ts, corr, kernel starts and durations)
    for (at, corr, ks) in [
        (110.0, 10, [(120.0, 20.0), (145.0, 5.0), (152.0, 3.0)]),
        (310.0, 11, [(320.0, 22.0), (345.0, 6.0), (353.0, 4.0)]),
        (1100.0, 12, [(1110.0, 21.0), (1135.0, 5.0), (1142.0, 3.0)]),
    ] {
        ev.push(host(
            "decode_forward",
            "python_function",
            at - 10.0,
            50.0,
            None,
        ));
        ev.push(host("cudaGraphLaunch", "cuda_runtime", at, 5.0, Some(corr)));
        for ((ts, dur), name) in ks.iter().zip(["gemm", "add", "relu"]) {
            ev.push(kernel(name, *ts, *dur, corr));
        }
    }
    let f = dir.join("capture_replay.json");
    std::fs::write(
        &f,
        serde_json::to_vec(&json!({"schemaVersion": 1, "traceEvents": ev})).unwrap(),
    )
    .unwrap();
    f
}

#[test]
fn a_capture_in_the_trace_names_the_ops_inside_replays() {
    let dir = std::env::temp_dir().join(format!("profscope-graph-kineto-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let r = analyze(&capture_and_replays(&dir), &[]);
    let g = file(&r, 0);
    assert_eq!(g["graph_launches"], 3);
    assert_eq!(g["replays"], 3);
    assert_eq!(g["replay_device_events"], 9);
    // 20+5+3 + 22+6+4 + 21+5+3 µs.
    assert_eq!(g["replay_device_ns"], 89_000);
    assert_eq!(g["eager_device_ns"], 7_000);
    assert_eq!(g["capture_windows"], 1);
    assert_eq!(g["captured_launches"], 3);
    // cudaStreamBeginCapture start (10) to cudaStreamEndCapture end (56).
    assert_eq!(g["capture_ns"], 46_000);
    let ops = &g["ops_in_graphs"];
    assert_eq!(ops["source"], "capture");
    assert_eq!(ops["replays_matched"], 3);
    let got: BTreeMap<&str, i64> = ops["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["name"].as_str().unwrap(), x["sum_ns"].as_i64().unwrap()))
        .collect();
    let want: BTreeMap<&str, i64> = [
        ("aten::mm", 63_000),
        ("aten::add", 16_000),
        ("aten::relu", 10_000),
    ]
    .into();
    assert_eq!(got, want);
    // Replay windows and gaps: 120..155, 320..357, 1110..1145 µs.
    let rows = g["per_replay"].as_array().unwrap();
    let gaps: Vec<i64> = rows
        .iter()
        .map(|x| x["gap_to_next_ns"].as_i64().unwrap())
        .collect();
    assert_eq!(gaps, vec![165_000, 753_000, -1]);
    let busy: Vec<i64> = rows
        .iter()
        .map(|x| x["busy_ns"].as_i64().unwrap())
        .collect();
    assert_eq!(busy, vec![28_000, 32_000, 29_000]);
    let inside: Vec<i64> = rows
        .iter()
        .map(|x| x["gaps_inside_ns"].as_i64().unwrap())
        .collect();
    assert_eq!(inside, vec![7_000, 5_000, 6_000]);
    assert!(
        rows.iter().all(|x| x["issued_by"] == "decode_forward"),
        "{rows:?}"
    );
    // Steps: two replays in step 0 (gap 165 µs between them), one replay and the eager kernel
    // in step 1.
    let steps: Vec<(i64, u64, i64, i64, i64)> = g["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["step"].as_i64().unwrap(),
                s["replays"].as_u64().unwrap(),
                s["graph_device_ns"].as_i64().unwrap(),
                s["eager_device_ns"].as_i64().unwrap(),
                s["between_replay_gap_ns"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        vec![(0, 2, 60_000, 0, 165_000), (1, 1, 29_000, 7_000, 0)]
    );
    // 3 of 13 kernel runs (3 captured + 1 eager + 9 replayed) were only recorded: qualified.
    assert_eq!(r["verdict"]["status"], "qualified");
    let h = r["headline"][0].as_str().unwrap();
    assert!(h.contains("3 of 13 kernel runs (23.1%)"), "{h}");
    // 89 of 96 µs of device time ran in replays.
    let lines: Vec<&str> = r["headline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("graph mode: 92.7% of device time in 3 graph replays; ")),
        "{lines:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_graph_mode_section_is_rendered() {
    let dir = std::env::temp_dir().join(format!("profscope-graph-md-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let f = capture_and_replays(&dir);
    let md = |extra: &[&str]| {
        let mut args = vec!["analyze", "--quiet", "--format", "md"];
        args.extend_from_slice(extra);
        args.push(f.to_str().unwrap());
        let out = common::profscope_command().args(&args).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    // The brief Markdown (a PR comment, 8,000 bytes filled by importance) keeps the graph-mode
    // headline line and, past its budget, names the graph-mode sections among those `--full`
    // shows; `--full` has all of them.
    let brief = md(&[]);
    assert!(
        brief.contains("Graph mode: replays") || brief.contains("with `--full`: Graph mode ×"),
        "{brief}"
    );

    assert!(brief.contains("graph mode: 92.7% of device time"));
    let md = md(&["--full"]);
    for title in [
        "Graph mode: replays",
        "Graph mode: time inside replays",
        "Graph mode: per step",
    ] {
        assert!(md.contains(title), "{title}");
    }
    assert!(md.contains("aten::mm"));
    let _ = std::fs::remove_dir_all(&dir);
}
