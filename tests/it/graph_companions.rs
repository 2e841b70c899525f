//! Graph captures beside their replays, read together and not summed (issue 60): a capture
//! trace in a vLLM-style `capture_traces/` folder, a capture and its replays in one file
//! (xDiT), an eager run as the map of a graph run's ops, and an ACLGraph capture profiled apart.
//!
//! Inputs:
//! * the real Kineto trace with CUDA graph replays
//!   ../shared/samples/torch-traces/negative_queue_length_values_check/rank0.json.gz (70
//!   `cudaGraphLaunch`, 14 distinct replayed sequences of 1 to 20 kernels / memsets, 5 replays
//!   each, 345 device events, 105,467,000 ns; python3 over the JSON: graph launches whose
//!   correlation id device events carry, those events grouped by (cat, name) sequence);
//! * capture traces written here from that trace's real events, as vLLM's `capture_traces/`
//!   layout holds them (`capture_traces/graph_capture_rank_0.<ms>.pt.trace.json.gz`, same pid and
//!   tid as the replays' launches): per replayed sequence one `cudaStreamBeginCapture` ..
//!   `cudaStreamEndCapture` window with one launch call per device event of its first replay
//!   (`cudaLaunchKernel` / `cudaMemsetAsync`, or ROCm's `hipLaunchKernel` with `args.kernel` and
//!   `hipMemsetAsync`), each inside a `cpu_op` whose name is one of the trace's real aten op
//!   names, and each window inside an `nn.Module: CapturedGraph_<g>` Python frame (a label
//!   written here). One window holds one launch more than its replays run (a memset or an empty
//!   kernel between two kernels). What each replayed event must be attributed to is known by
//!   construction and summed here from the replays' own durations;
//! * an eager trace written here from the same real device events (two ProfilerSteps, every
//!   sequence launched eagerly inside an aten op), and the real pair trace_diff/test (graph
//!   replays) and trace_diff/control (an eager run of another model version: 60 of the 83
//!   replayed kernel names, python3 difflib over the first step: 27.7% and 26.1% of the two
//!   sequences in order);
//! * generated ACLGraph roots (`profscope synth --graph-mode --capture-apart`), whose ground
//!   truth holds the replays' device time per capture-time op.

use crate::common;
use profscope::synth::{Export, SynthOpts};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const TRACE: &str = "torch-traces/negative_queue_length_values_check/rank0.json.gz";

fn read_gz(path: &Path) -> Value {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    serde_json::from_str(&s).unwrap()
}

fn write_gz(path: &Path, v: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let f = std::fs::File::create(path).unwrap();
    let mut w = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
    w.write_all(serde_json::to_string(v).unwrap().as_bytes())
        .unwrap();
    w.finish().unwrap();
}

fn ns(e: &Value) -> i64 {
    (e["dur"].as_f64().unwrap() * 1000.0).round() as i64
}

/// One replayed sequence of the real trace: its first replay's device events, and the device
/// time of each position summed over its replays.
struct Graph {
    events: Vec<Value>,
    ns: Vec<i64>,
    replays: u64,
}

/// The replayed sequences in order of first replay, and the launching (pid, tid).
fn graphs(t: &Value) -> ((i64, i64), Vec<Graph>) {
    let ev = t["traceEvents"].as_array().unwrap();
    let mut launches: Vec<&Value> = ev
        .iter()
        .filter(|e| e["name"] == "cudaGraphLaunch")
        .collect();
    launches.sort_by(|a, b| a["ts"].as_f64().partial_cmp(&b["ts"].as_f64()).unwrap());
    let mut by_corr: HashMap<i64, Vec<&Value>> = HashMap::new();
    let wanted: std::collections::HashSet<i64> = launches
        .iter()
        .filter_map(|l| l["args"]["correlation"].as_i64())
        .collect();
    for e in ev {
        let dev = matches!(
            e["cat"].as_str(),
            Some("kernel" | "gpu_memset" | "gpu_memcpy")
        );
        if let Some(c) = e["args"]["correlation"]
            .as_i64()
            .filter(|c| dev && wanted.contains(c))
        {
            by_corr.entry(c).or_default().push(e);
        }
    }
    let mut out: Vec<Graph> = Vec::new();
    let mut key_of: HashMap<Vec<(String, String)>, usize> = HashMap::new();
    for l in &launches {
        let Some(mut evs) = by_corr.remove(&l["args"]["correlation"].as_i64().unwrap()) else {
            continue;
        };
        evs.sort_by(|a, b| a["ts"].as_f64().partial_cmp(&b["ts"].as_f64()).unwrap());
        let key: Vec<(String, String)> = evs
            .iter()
            .map(|e| {
                (
                    e["cat"].as_str().unwrap().into(),
                    e["name"].as_str().unwrap().into(),
                )
            })
            .collect();
        let k = *key_of.entry(key).or_insert_with(|| {
            out.push(Graph {
                events: evs.iter().map(|&e| e.clone()).collect(),
                ns: vec![0; evs.len()],
                replays: 0,
            });
            out.len() - 1
        });
        out[k].replays += 1;
        for (s, e) in out[k].ns.iter_mut().zip(&evs) {
            *s += ns(e);
        }
    }
    let l = launches[0];
    (
        (l["pid"].as_i64().unwrap(), l["tid"].as_i64().unwrap()),
        out,
    )
}

/// Distinct real aten op names of the trace (cpu_op events), sorted.
fn real_ops(t: &Value) -> Vec<String> {
    let mut v: Vec<String> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "cpu_op")
        .filter_map(|e| e["name"].as_str())
        .filter(|n| n.starts_with("aten::") && *n != "aten::zero_")
        .map(String::from)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The op each position of each graph is launched by (the same in captures and eager steps).
fn op_at(ops: &[String], g: usize, k: usize, e: &Value) -> String {
    if e["cat"] == "gpu_memset" {
        "aten::zero_".into()
    } else {
        ops[(g * 7 + k) % ops.len()].clone()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Cuda,
    Hip,
}

/// A capture window per graph, one launch per device event of its first replay inside an aten
/// op, `extra` (graph index) with one more launch between two kernels; events start at `t0` µs.
fn capture_events(
    t: &Value,
    style: Style,
    extra: Option<usize>,
    t0: f64,
) -> (Vec<Value>, Vec<Vec<String>>) {
    let ((pid, tid), gs) = graphs(t);
    let ops = real_ops(t);
    let x = |name: &str, cat: &str, ts: f64, dur: f64, args: Value| json!({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args});
    let api = |cuda: &str| match style {
        Style::Cuda => cuda.to_string(),
        Style::Hip => cuda.replacen("cuda", "hip", 1),
    };
    let mut out = Vec::new();
    let mut labels = Vec::new();
    let (mut ts, mut corr) = (t0, 900_000_000i64);
    for (g, graph) in gs.iter().enumerate() {
        let begin = ts;
        out.push(x(
            &api("cudaStreamBeginCapture"),
            "cuda_runtime",
            ts,
            3.0,
            json!({"correlation": corr}),
        ));
        corr += 1;
        ts += 5.0;
        let mut items: Vec<(String, String, Option<String>)> = graph
            .events
            .iter()
            .enumerate()
            .map(|(k, e)| {
                let call = if e["cat"] == "gpu_memset" {
                    api("cudaMemsetAsync")
                } else {
                    api("cudaLaunchKernel")
                };
                let kernel =
                    (e["cat"] == "kernel").then(|| e["name"].as_str().unwrap().to_string());
                (op_at(&ops, g, k, e), call, kernel)
            })
            .collect();
        labels.push(items.iter().map(|i| i.0.clone()).collect());
        if extra == Some(g) {
            let cats: Vec<&Value> = graph.events.iter().map(|e| &e["cat"]).collect();
            let at = (1..cats.len())
                .find(|&k| cats[k] == "kernel" && cats[k - 1] == "kernel")
                .expect("two kernels in a row");
            let call = match style {
                Style::Cuda => ("cudaMemsetAsync".to_string(), None),
                Style::Hip => (
                    "hipLaunchKernel".to_string(),
                    Some("void empty_kernel<>()".to_string()),
                ),
            };
            items.insert(at, ("aten::zero_".into(), call.0, call.1));
        }
        for (op, call, kernel) in items {
            out.push(x(&op, "cpu_op", ts, 8.0, json!({})));
            let mut args = json!({"correlation": corr});
            if let (Style::Hip, Some(k)) = (style, kernel) {
                args["kernel"] = json!(k);
            }
            out.push(x(&call, "cuda_runtime", ts + 1.0, 5.0, args));
            corr += 1;
            ts += 10.0;
        }
        out.push(x(
            &api("cudaStreamEndCapture"),
            "cuda_runtime",
            ts,
            3.0,
            json!({"correlation": corr}),
        ));
        corr += 1;
        out.push(x(
            &format!("nn.Module: CapturedGraph_{g}"),
            "python_function",
            begin + 4.0,
            ts - begin - 4.0,
            json!({}),
        ));
        ts += 1000.0;
    }
    (out, labels)
}

/// The trace's header members and its host process's metadata, with `events`.
fn trace_with(t: &Value, events: Vec<Value>) -> Value {
    let ((pid, _), _) = graphs(t);
    let mut out = t.clone();
    let meta: Vec<Value> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M" && e["pid"] == pid)
        .cloned()
        .collect();
    out["traceEvents"] = Value::Array(meta.into_iter().chain(events).collect());
    out
}

fn start_us(t: &Value) -> f64 {
    t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["ts"].as_f64())
        .fold(f64::MAX, f64::min)
}

/// Per op and per module, the replays' device time each position must be attributed to when
/// every position of graph `g` takes `labels[g][k]` (`keep(g, k)` false: not attributed).
fn expected(
    t: &Value,
    labels: &[Vec<String>],
    keep: impl Fn(usize, usize) -> bool,
) -> (BTreeMap<String, i64>, BTreeMap<String, i64>, u64) {
    let (_, gs) = graphs(t);
    let (mut ops, mut modules, mut matched) = (BTreeMap::new(), BTreeMap::new(), 0u64);
    for (g, graph) in gs.iter().enumerate() {
        for (k, &ns) in graph.ns.iter().enumerate() {
            if keep(g, k) {
                *ops.entry(labels[g][k].clone()).or_insert(0) += ns;
                *modules
                    .entry(format!("nn.Module: CapturedGraph_{g}"))
                    .or_insert(0) += ns;
                matched += graph.replays;
            }
        }
    }
    (ops, modules, matched)
}

fn rows(v: &Value) -> BTreeMap<String, i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap().to_string(),
                x["sum_ns"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn analyze(paths: &[&Path], extra: &[&str]) -> Value {
    let mut args = vec!["analyze", "--quiet", "--format", "json", "--top", "100"];
    args.extend_from_slice(extra);
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    common::profscope_json(&args)
}

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-gc-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn file<'a>(r: &'a Value, suffix: &str) -> &'a Value {
    r["analyses"]["graph_mode"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with(suffix))
        .unwrap_or_else(|| panic!("no graph_mode row for {suffix}"))
}

/// Every analysis but graph_mode and ranks, the verdict and the headline lines other than graph
/// mode's, with `from` replaced by `to` in paths: what must not change when a companion is
/// read beside the replays.
fn replay_view(r: &Value, from: &str, to: &str) -> Value {
    let text = serde_json::to_string(r).unwrap().replace(from, to);
    let mut v: Value = serde_json::from_str(&text).unwrap();
    let a = v["analyses"].as_object_mut().unwrap();
    a.remove("graph_mode");
    a.remove("ranks");
    let headline: Vec<Value> = v["headline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| !l.as_str().unwrap().starts_with("graph mode:"))
        .cloned()
        .collect();
    json!({"analyses": v["analyses"], "verdict": v["verdict"], "headline": headline})
}

#[test]
fn a_capture_trace_beside_its_replays_names_their_ops_and_is_not_summed() {
    let real = read_gz(&common::samples_dir().join(TRACE));
    let dir = temp("hip");
    let replay = dir.join("profile/worker_rank0.pt.trace.json.gz");
    std::fs::create_dir_all(replay.parent().unwrap()).unwrap();
    std::fs::copy(common::samples_dir().join(TRACE), &replay).unwrap();
    let (events, labels) = capture_events(&real, Style::Hip, Some(3), start_us(&real) - 5e6);
    let cap =
        dir.join("profile/capture_traces/graph_capture_rank_0.1683564896000.pt.trace.json.gz");
    write_gz(&cap, &trace_with(&real, events));
    let r = analyze(&[&dir.join("profile")], &[]);

    // The capture is named as the replays' companion, in ranks and graph_mode.
    let k = &r["analyses"]["ranks"];
    let comp = k["companions"].as_array().unwrap();
    assert_eq!(comp.len(), 1, "{comp:?}");
    assert!(
        comp[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("graph_capture_rank_0.1683564896000.pt.trace.json.gz")
    );
    assert_eq!(comp[0]["role"], "capture_companion");
    assert!(
        comp[0]["of"][0]
            .as_str()
            .unwrap()
            .ends_with("worker_rank0.pt.trace.json.gz")
    );
    assert_eq!(k["rows"].as_array().unwrap().len(), 1);
    assert_eq!(k["rows"][0]["files"].as_array().unwrap().len(), 1, "{k}");
    let c = file(&r, "graph_capture_rank_0.1683564896000.pt.trace.json.gz");
    assert_eq!(c["role"], "capture_companion");
    // 14 windows; 345 / 5 = 69 launches plus the one without a device event.
    assert_eq!(
        (
            c["capture_windows"].as_u64(),
            c["captured_launches"].as_u64()
        ),
        (Some(14), Some(70))
    );
    assert!(
        r["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "graph_companion")
    );

    // Every replayed event is tied to the op its launch was recorded under, by kernel name.
    let g = file(&r, "worker_rank0.pt.trace.json.gz");
    assert_eq!(g["role"], "replays");
    let o = &g["ops_in_graphs"];
    assert_eq!(o["source"], "capture");
    assert_eq!(o["replays_matched"], 70);
    assert_eq!(o["matched_events"], 345);
    assert_eq!(o["matched_ns"], 105_467_000);
    assert_eq!(o["matched_ns_pct"], 100.0);
    let (ops, modules, matched) = expected(&real, &labels, |_, _| true);
    assert_eq!(matched, 345);
    assert_eq!(rows(&o["rows"]), ops);
    assert_eq!(rows(&o["modules"]), modules);
    let seqs = o["graphs"].as_array().unwrap();
    assert_eq!(seqs.len(), 14);
    let four = &seqs[3];
    assert_eq!(
        (
            four["device_events"].as_u64(),
            four["recorded_launches"].as_u64(),
            four["matched_events"].as_u64()
        ),
        (Some(2), Some(3), Some(2))
    );
    assert_eq!(four["checked_by"], "name");
    assert!(
        four["note"]
            .as_str()
            .unwrap()
            .contains("1 recorded launch(es) ran no device event")
    );
    // Each replay names its sequence; the sequence lists its ops in order.
    let first = &g["per_replay"][0];
    let s = &seqs[first["sequence"].as_u64().unwrap() as usize];
    let in_order: Vec<&str> = s["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["op"].as_str().unwrap())
        .collect();
    let mut want: Vec<&str> = labels[first["sequence"].as_u64().unwrap() as usize]
        .iter()
        .map(|x| x.as_str())
        .collect();
    want.dedup();
    assert_eq!(in_order, want);

    // The verdict, shares and advice are the replays' alone.
    let alone = temp("hip-alone");
    std::fs::create_dir_all(alone.join("profile")).unwrap();
    std::fs::copy(&replay, alone.join("profile/worker_rank0.pt.trace.json.gz")).unwrap();
    let a = analyze(&[&alone.join("profile")], &[]);
    assert_eq!(
        replay_view(&r, dir.to_str().unwrap(), "ROOT"),
        replay_view(&a, alone.to_str().unwrap(), "ROOT")
    );
    assert_eq!(r["verdict"]["kind"], a["verdict"]["kind"]);
    let line = r["headline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .find(|l| l.starts_with("graph mode:"))
        .unwrap();
    assert!(
        line.contains("ops named for 100.0% of replay time (from capture, 1 companion file(s))"),
        "{line}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&alone);
}

#[test]
fn cuda_launches_are_checked_by_kind_and_graphs_of_one_shape_keep_only_shared_ops() {
    let real = read_gz(&common::samples_dir().join(TRACE));
    let dir = temp("cuda");
    std::fs::copy(
        common::samples_dir().join(TRACE),
        dir.join("rank0.pt.trace.json.gz"),
    )
    .unwrap();
    let (events, labels) = capture_events(&real, Style::Cuda, None, start_us(&real) - 5e6);
    write_gz(
        &dir.join("capture_traces/graph_capture_rank_0.1.pt.trace.json.gz"),
        &trace_with(&real, events),
    );
    let r = analyze(&[&dir], &[]);
    // CUDA launch calls name no kernel: a sequence fits every capture of its kinds (kernel /
    // memset) in order. Where those captures record different ops at a position, it keeps none.
    let (_, gs) = graphs(&real);
    let kinds =
        |g: &Graph| -> Vec<bool> { g.events.iter().map(|e| e["cat"] == "kernel").collect() };
    let same: Vec<Vec<usize>> = gs
        .iter()
        .map(|g| {
            (0..gs.len())
                .filter(|&h| kinds(&gs[h]) == kinds(g))
                .collect()
        })
        .collect();
    let keep = |g: usize, k: usize| same[g].iter().all(|&h| labels[h][k] == labels[g][k]);
    let (ops, _, matched) = expected(&real, &labels, keep);
    let o = &file(&r, "rank0.pt.trace.json.gz")["ops_in_graphs"];
    assert_eq!(o["matched_events"].as_u64(), Some(matched));
    let got: BTreeMap<String, i64> = rows(&o["rows"])
        .into_iter()
        .filter(|(n, _)| n.starts_with("aten::"))
        .collect();
    assert_eq!(got, ops);
    // 9 of the 14 sequences share their shape with another (python3: the kernel / memset
    // pattern of each sequence: five single kernels, two pairs of two kernels, two of three
    // events).
    let shared = same.iter().filter(|s| s.len() > 1).count();
    assert_eq!(shared, 9);
    for q in o["graphs"].as_array().unwrap() {
        if q["matched_events"].as_u64() > Some(0) {
            assert_eq!(q["checked_by"], "kind", "{q}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_capture_and_its_replays_in_one_file_match_despite_a_launch_without_device_event() {
    // xDiT writes the capture and its replays in one trace: 1,567 recorded launches, 1,566
    // device events. Here: the real trace with the capture windows written before its first
    // event, one of them with an empty kernel between two kernels.
    let real = read_gz(&common::samples_dir().join(TRACE));
    let dir = temp("infile");
    let (events, labels) = capture_events(&real, Style::Hip, Some(3), start_us(&real) - 5e6);
    let mut one = real.clone();
    one["traceEvents"].as_array_mut().unwrap().extend(events);
    write_gz(&dir.join("xdit_rank0.json.gz"), &one);
    let r = analyze(&[&dir], &[]);
    let g = file(&r, "xdit_rank0.json.gz");
    assert_eq!(g["capture_windows"], 14);
    assert_eq!(g["captured_launches"], 70);
    let o = &g["ops_in_graphs"];
    assert_eq!(o["source"], "capture");
    assert_eq!(o["matched_events"], 345);
    let (ops, modules, _) = expected(&real, &labels, |_, _| true);
    assert_eq!(rows(&o["rows"]), ops);
    assert_eq!(rows(&o["modules"]), modules);
    let four = &o["graphs"][3];
    assert!(
        four["matched_from"]
            .as_str()
            .unwrap()
            .ends_with("xdit_rank0.json.gz")
    );
    assert_eq!(four["recorded_launches"], 3);
    assert!(
        r["analyses"]["ranks"]["companions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An eager run written from the trace's real device events: two ProfilerSteps, each launching
/// every replayed sequence in order, each launch inside the op `op_at` names.
fn eager_trace(t: &Value) -> Value {
    let ((pid, tid), gs) = graphs(t);
    let ops = real_ops(t);
    let mut out = Vec::new();
    let (mut ts, mut corr) = (1000.0f64, 1i64);
    for step in 0..2 {
        let s0 = ts;
        let mut body = Vec::new();
        for (g, graph) in gs.iter().enumerate() {
            for (k, e) in graph.events.iter().enumerate() {
                let call = if e["cat"] == "gpu_memset" {
                    "cudaMemsetAsync"
                } else {
                    "cudaLaunchKernel"
                };
                body.push(json!({"ph": "X", "cat": "cpu_op", "name": op_at(&ops, g, k, e), "pid": pid, "tid": tid, "ts": ts, "dur": 8.0, "args": {}}));
                body.push(json!({"ph": "X", "cat": "cuda_runtime", "name": call, "pid": pid, "tid": tid, "ts": ts + 1.0, "dur": 5.0, "args": {"correlation": corr}}));
                let mut d = e.clone();
                d["ts"] = json!(ts + 20.0);
                d["args"]["correlation"] = json!(corr);
                d["args"]["External id"] = json!(corr);
                body.push(d);
                corr += 1;
                ts += (e["dur"].as_f64().unwrap() + 2.0).max(10.0);
            }
        }
        out.push(json!({"ph": "X", "cat": "user_annotation", "name": format!("ProfilerStep#{step}"), "pid": pid, "tid": tid, "ts": s0 - 1.0, "dur": ts - s0 + 2.0, "args": {}}));
        out.extend(body);
        ts += 100.0;
    }
    trace_with(t, out)
}

#[test]
fn an_eager_run_maps_the_replayed_kernels_to_their_ops() {
    let real = read_gz(&common::samples_dir().join(TRACE));
    let dir = temp("eager");
    std::fs::create_dir_all(dir.join("graphs")).unwrap();
    std::fs::copy(
        common::samples_dir().join(TRACE),
        dir.join("graphs/rank0.json.gz"),
    )
    .unwrap();
    write_gz(&dir.join("eager/rank0_eager.json.gz"), &eager_trace(&real));
    let ops = real_ops(&real);
    let (_, gs) = graphs(&real);
    let labels: Vec<Vec<String>> = gs
        .iter()
        .enumerate()
        .map(|(g, x)| {
            x.events
                .iter()
                .enumerate()
                .map(|(k, e)| op_at(&ops, g, k, e))
                .collect()
        })
        .collect();
    // The eager step launches every sequence in order: a short sequence (one or two kernels)
    // occurs at several places, launched by different ops; a position keeps its op only when
    // every place agrees (the mapper looks at the first 16 places of a step).
    let step: Vec<(&str, &str)> = gs
        .iter()
        .zip(&labels)
        .flat_map(|(x, l)| {
            x.events
                .iter()
                .zip(l)
                .map(|(e, op)| (e["name"].as_str().unwrap(), op.as_str()))
        })
        .collect();
    let places: Vec<Vec<usize>> = gs
        .iter()
        .map(|x| {
            let names: Vec<&str> = x
                .events
                .iter()
                .map(|e| e["name"].as_str().unwrap())
                .collect();
            (0..=step.len() - names.len())
                .filter(|&p| (0..names.len()).all(|k| step[p + k].0 == names[k]))
                .take(16)
                .collect()
        })
        .collect();
    let keep = |g: usize, k: usize| places[g].iter().all(|&p| step[p + k].1 == labels[g][k]);
    let (want, _, matched) = expected(&real, &labels, keep);
    // python3 over the written step (the names of every sequence's first replay, in order): 3
    // of the 14 sequences occur more than once.
    assert_eq!(places.iter().filter(|p| p.len() > 1).count(), 3);
    // Given with --eager-map, and recognised beside the replays (same folder, same rank).
    let given = analyze(
        &[&dir.join("graphs")],
        &["--eager-map", dir.join("eager").to_str().unwrap()],
    );
    std::fs::copy(
        dir.join("eager/rank0_eager.json.gz"),
        dir.join("graphs/rank0_eager.json.gz"),
    )
    .unwrap();
    let beside = analyze(&[&dir.join("graphs")], &[]);
    for (r, why) in [
        (&given, "given with --eager-map"),
        (
            &beside,
            "an eager run of the same rank beside the replays, whose steps map them",
        ),
    ] {
        let o = &file(r, "graphs/rank0.json.gz")["ops_in_graphs"];
        assert_eq!(o["source"], "eager_map");
        assert_eq!(o["matched_events"].as_u64(), Some(matched));
        let got: BTreeMap<String, i64> = rows(&o["rows"])
            .into_iter()
            .filter(|(n, _)| n.starts_with("aten::"))
            .collect();
        assert_eq!(got, want);
        assert!(
            o["graphs"]
                .as_array()
                .unwrap()
                .iter()
                .all(|q| q["checked_by"] == "name" || q["matched_events"] == 0)
        );
        let c = &r["analyses"]["ranks"]["companions"][0];
        assert_eq!(c["role"], "eager_map");
        assert_eq!(c["why"], why);
        assert!(c["file"].as_str().unwrap().ends_with("rank0_eager.json.gz"));
        assert_eq!(file(r, "rank0_eager.json.gz")["role"], "eager_map");
        // The eager run is no second device of rank 0.
        assert_eq!(r["analyses"]["device_time"].as_array().unwrap().len(), 1);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_eager_run_of_another_model_maps_nothing() {
    // trace_diff/control is an eager run of another model version than trace_diff/test's graph
    // replays (python3 difflib: 27.7% and 26.1% of the two replayed sequences in order in its
    // first step): below 90% nothing is mapped, and the notes say so.
    let s = common::samples_dir().join("torch-traces/trace_diff");
    let r = analyze(
        &[&s.join("test")],
        &["--eager-map", s.join("control").to_str().unwrap()],
    );
    let o = &file(&r, "test.json.gz")["ops_in_graphs"];
    assert_eq!(o["source"], "kernel_name");
    assert_eq!(o["matched_events"], 0);
    for q in o["graphs"].as_array().unwrap() {
        assert_eq!(q["source"], "none");
        assert!(q["note"].as_str().unwrap().contains("not mapped"), "{q}");
    }
    // Given as a map, it is still left out of the run's numbers.
    let alone = analyze(&[&s.join("test")], &[]);
    assert_eq!(r["verdict"], alone["verdict"]);
    assert_eq!(
        r["analyses"]["device_time"],
        alone["analyses"]["device_time"]
    );
}

fn aclgraph_root(tag: &str, capture_apart: bool) -> common::Generated {
    common::generated_with(
        tag,
        SynthOpts {
            ranks: 2,
            target_bytes: 300_000,
            seed: 11,
            kineto: false,
            export: Export::Json,
            slow: None,
            graph_mode: true,
            capture_apart,
        },
    )
}

#[test]
fn an_aclgraph_capture_profiled_apart_is_the_companion_of_its_replays() {
    // Generated: each rank's capture is its own torch_npu session under capture_traces/, of
    // the same rank and process (the one-session-per-rank rule would read only one of them).
    let g = aclgraph_root("apart", true);
    let r = analyze(&[&g.dir], &[]);
    let comp = r["analyses"]["ranks"]["companions"].as_array().unwrap();
    assert_eq!(comp.len(), 2, "{comp:?}");
    assert!(
        r["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["code"] != "other_capture_skipped")
    );
    for rt in &g.truth.ranks {
        let cap = rt.capture_file.as_deref().unwrap();
        let c = file(&r, cap);
        assert_eq!(c["role"], "capture_companion");
        assert_eq!(c["captured_launches"].as_u64(), Some(rt.captured_launches));
        assert_eq!(c["capture_ns"].as_i64(), Some(rt.capture_ns));
        let main = g.dir.join(&rt.trace_view);
        let f = r["analyses"]["graph_mode"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["file"] == main.to_str().unwrap())
            .unwrap();
        assert_eq!(
            f["companions"][0].as_str().map(|s| s.ends_with(cap)),
            Some(true)
        );
        let o = &f["ops_in_graphs"];
        assert_eq!(o["source"], "capture");
        assert_eq!(o["matched_ns_pct"], 100.0);
        let want: BTreeMap<String, i64> = rt.graph_op_ns.clone().into_iter().collect();
        assert_eq!(rows(&o["rows"]), want, "rank {}", rt.rank);
        assert_eq!(f["replays"].as_u64(), Some(rt.graph_replays.len() as u64));
    }
    // The same run without the capture sessions: the same verdict, shares and advice.
    let only = temp("apart-only");
    for rt in &g.truth.ranks {
        let from = g.dir.join(format!("rank{}_ascend_pt", rt.rank));
        let to = only.join(format!("rank{}_ascend_pt", rt.rank));
        std::fs::create_dir_all(to.join("ASCEND_PROFILER_OUTPUT")).unwrap();
        for f in [
            format!("profiler_info_{}.json", rt.rank),
            "ASCEND_PROFILER_OUTPUT/trace_view.json".into(),
        ] {
            std::fs::copy(from.join(&f), to.join(&f)).unwrap();
        }
    }
    let a = analyze(&[&only], &[]);
    assert_eq!(
        replay_view(&r, g.dir.to_str().unwrap(), "ROOT"),
        replay_view(&a, only.to_str().unwrap(), "ROOT")
    );
    let _ = std::fs::remove_dir_all(&only);
}
