//! The real legacy CANN msprof root `../shared/samples/ascend-msprof-legacy` (MindSpore AlexNet
//! training, 2 devices with AllReduce, CANN ~6.x; read its SOURCES.md): per device one capture
//! written as 10 per-iteration `msprof_*.json` files, plus `task_time_*`, `hccl_*` and
//! `step_trace_*` subsets of the same events.
//!
//! Every expected value is derived here, independently of the code under test, from the files
//! themselves with serde_json (a DOM parser; profscope's scanner is hand-written): event counts per
//! process name, and the vendor's own Overlap Analysis rows of each iteration file (its
//! `Computing`, `Communication(Not Overlapped)` and `Free` threads, summed). The same sums were
//! cross-checked with a stdlib Python script (union of AI_CORE/AI_CPU tasks and of the HCCL
//! `Communication Kernel` op per file): iteration 1 of device 0 is computing 5914.58 µs,
//! communication 41534.3 µs (all of it exposed), free 113.63 µs, as the vendor's rows say.

use crate::common;

use profscope::analysis::{cross_rank, devices};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    common::samples_dir().join("ascend-msprof-legacy")
}

/// The `msprof_*.json` files of one device folder, by iteration (the file name's last number).
fn iteration_files(device: &str) -> BTreeMap<i64, PathBuf> {
    let mut out = BTreeMap::new();
    for prof in std::fs::read_dir(root()).unwrap().flatten() {
        let timeline = prof.path().join(device).join("timeline");
        let Ok(dir) = std::fs::read_dir(&timeline) else {
            continue;
        };
        for f in dir.flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if let Some(stem) = name
                .strip_prefix("msprof_")
                .and_then(|s| s.strip_suffix(".json"))
            {
                let iter: i64 = stem.rsplit('_').next().unwrap().parse().unwrap();
                out.insert(iter, f.path());
            }
        }
    }
    out
}

/// Process and thread names of a Chrome trace (`M` events), and its `X` events.
struct Trace {
    process: BTreeMap<i64, String>,
    thread: BTreeMap<(i64, i64), String>,
    complete: Vec<serde_json::Value>,
}

fn read_trace(p: &Path) -> Trace {
    let v: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    let mut t = Trace {
        process: BTreeMap::new(),
        thread: BTreeMap::new(),
        complete: Vec::new(),
    };
    for e in v {
        let pid = e["pid"].as_i64().unwrap_or(-1);
        let tid = e["tid"].as_i64().unwrap_or(-1);
        match (e["ph"].as_str(), e["name"].as_str()) {
            (Some("M"), Some("process_name")) => {
                t.process
                    .insert(pid, e["args"]["name"].as_str().unwrap().to_string());
            }
            (Some("M"), Some("thread_name")) => {
                t.thread
                    .insert((pid, tid), e["args"]["name"].as_str().unwrap().to_string());
            }
            (Some("X"), _) => t.complete.push(e),
            _ => {}
        }
    }
    t
}

fn pid_tid(e: &serde_json::Value) -> (i64, i64) {
    (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap())
}

/// µs (the file's float) to ns.
fn ns(us: f64) -> i64 {
    (us * 1000.0).round() as i64
}

#[test]
fn one_capture_per_device_and_the_subsets_skipped() {
    let found = profscope::ingest::discover(&[root()]).unwrap();
    // Two captures (one per device), each the 10 iteration files joined; the 3 × 10 subset files
    // per device are skipped, naming the msprof_* file kept.
    assert_eq!(found.inputs.len(), 2);
    for (input, dev) in found.inputs.iter().zip(["device_0", "device_1"]) {
        let files = iteration_files(dev);
        assert_eq!(files.len(), 10);
        assert_eq!(input.parts.len(), 9, "{}", input.path);
        let mut all = vec![input.path.clone()];
        all.extend(input.parts.iter().cloned());
        let expected: Vec<String> = files.values().map(|p| p.display().to_string()).collect();
        assert_eq!(all, expected, "natural iteration order");
        let sizes: u64 = files.values().map(|p| p.metadata().unwrap().len()).sum();
        assert_eq!(input.size_bytes, sizes);
    }
    assert_eq!(found.skipped.len(), 60);
    for sk in &found.skipped {
        let name = Path::new(&sk.path).file_name().unwrap().to_string_lossy();
        assert!(
            ["task_time_", "hccl_", "step_trace_"]
                .iter()
                .any(|p| name.starts_with(p)),
            "{name}"
        );
        assert!(sk.kept[0].contains("/msprof_"), "{:?}", sk.kept);
    }
}

#[test]
fn ranks_devices_events_and_vendor_free_of_the_whole_run() {
    let o = profscope::pipeline::RunOpts {
        analyze: Default::default(),
        phase: None,
        jobs: 2,
        max_memory: u64::MAX,
        cache: None,
        ..profscope::pipeline::RunOpts::new(Default::default(), None)
    };
    let r = profscope::pipeline::run(&[root()], &o, &Default::default()).unwrap();
    let ranks = &r.analyses.ranks;
    assert_eq!(
        ranks.rows.iter().map(|x| x.rank).collect::<Vec<_>>(),
        [0, 1]
    );
    for (row, dev) in ranks.rows.iter().zip(["device_0", "device_1"]) {
        // Independent count: X events of the processes named Ascend Hardware and HCCL in the
        // iteration files (4,940 + 3,380 per device).
        let mut expected = 0u64;
        for p in iteration_files(dev).values() {
            let t = read_trace(p);
            expected += t
                .complete
                .iter()
                .filter(|e| {
                    let pid = pid_tid(e).0;
                    matches!(
                        t.process.get(&pid).map(String::as_str),
                        Some("Ascend Hardware" | "HCCL")
                    )
                })
                .count() as u64;
        }
        assert_eq!(expected, 8_320, "{dev}");
        assert_eq!(row.device_events, expected, "rank {}", row.rank);
        assert_eq!(row.files.len(), 1, "rank {}: one capture", row.rank);
    }
    let dt = &r.analyses.device_time;
    assert_eq!(dt.len(), 2);
    for (d, id) in dt.iter().zip([0, 1]) {
        assert_eq!((d.device.rank, d.device.device_id), (id, id));
        assert_eq!(d.communication_source, "hccl_group_ops");
        let v = d
            .vendor
            .as_ref()
            .expect("the files carry Overlap Analysis rows");
        // Summed over the 10 iterations: the window is the pieces' windows (the ~170 ms between
        // iterations was not captured by any file and is not free time).
        for (ours, theirs) in [
            (d.computing_ns, v.computing_ns),
            (d.communication_ns, v.communication_ns),
            (
                d.communication_not_overlapped_ns,
                v.communication_not_overlapped_ns,
            ),
            (d.free_ns, v.free_ns),
        ] {
            assert!(
                (ours - theirs).abs() <= 20,
                "rank {id}: ours {ours} ns vs the vendor's {theirs} ns"
            );
        }
    }
    // Training: the NOTIFY_WAITs belong to the AllReduce; no serving cause without its evidence.
    for b in &r.analyses.bubbles {
        assert!(
            !b.by_cause.contains_key("update_step_context_sync"),
            "{:?}",
            b.by_cause
        );
        assert!(b.by_cause.contains_key("waiting_for_collective"));
    }
    let c = &r.analyses.cross_rank.cohorts;
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].step_source, "Step Trace");
    assert_eq!(c[0].steps_compared, 10);
    assert!(c[0].ranks.iter().all(|x| x.steps == 10));
}

#[test]
fn every_iteration_agrees_with_its_overlap_analysis_rows() {
    for (dev, rank) in [("device_0", 0), ("device_1", 1)] {
        let files = iteration_files(dev);
        let mut input = profscope::ingest::discover(&[root()])
            .unwrap()
            .inputs
            .into_iter()
            .find(|i| i.path.contains(&format!("/{dev}/")))
            .unwrap();
        input.alternates.clear();
        let t = profscope::ingest::ingest_one(&input, &Default::default()).unwrap();
        let devs = devices::devices(&t);
        assert_eq!(devs.len(), 1, "{dev}: one device, one row");
        let x = cross_rank::extract(&t, &devs, &cross_rank::StepWindows::new(&t), 1_000);
        assert_eq!(x[0].device.device_id, rank);
        assert_eq!(x[0].step_source, "Step Trace");
        let steps: BTreeMap<i64, &cross_rank::StepRow> =
            x[0].steps.iter().map(|s| (s.key, s)).collect();
        assert_eq!(
            steps.keys().copied().collect::<Vec<_>>(),
            (1..=10).collect::<Vec<_>>()
        );
        for (iter, p) in &files {
            let tr = read_trace(p);
            let mut sums: BTreeMap<&str, f64> = BTreeMap::new();
            let mut iteration_event = None;
            for e in &tr.complete {
                let key = pid_tid(e);
                let process = tr.process.get(&key.0).map(String::as_str);
                let thread = tr.thread.get(&key).map(String::as_str).unwrap_or("");
                if process == Some("Overlap Analysis") {
                    *sums.entry(thread).or_default() += e["dur"].as_f64().unwrap();
                }
                if e["cat"] == "Iteration Time" {
                    iteration_event = Some(e["name"].as_str().unwrap().to_string());
                }
            }
            assert_eq!(iteration_event, Some(format!("Iteration {iter}")));
            let s = steps[iter];
            assert_eq!(s.label, format!("Iteration {iter}"));
            let window = s.end_ns - s.start_ns;
            for (ours, kind) in [
                (s.computing_ns, "Computing"),
                (
                    s.communication_not_overlapped_ns,
                    "Communication(Not Overlapped)",
                ),
                (s.free_ns, "Free"),
            ] {
                let vendor = ns(sums[kind]);
                let off = (ours - vendor).abs();
                // The bar is 0.5% of the window; the sums agree to a few ns (the file's
                // float µs rounding).
                assert!(
                    off * 200 <= window && off <= 20,
                    "rank {rank} iteration {iter} {kind}: ours {ours} vs vendor {vendor} ns (window {window})"
                );
            }
        }
    }
}

/// The headline on the legacy root, against the vendor's own rows: the shares are the sums of the
/// `Computing`, `Communication(Not Overlapped)` and `Free` rows of all 20 iteration files over
/// their sum plus the overlapped part (the window = computing + exposed communication + free).
#[test]
fn headline_says_communication_bound_with_the_vendor_shares() {
    let mut sums: BTreeMap<String, f64> = BTreeMap::new();
    for dev in ["device_0", "device_1"] {
        for p in iteration_files(dev).values() {
            let tr = read_trace(p);
            for e in &tr.complete {
                let key = pid_tid(e);
                if tr.process.get(&key.0).map(String::as_str) == Some("Overlap Analysis") {
                    let thread = tr.thread.get(&key).cloned().unwrap_or_default();
                    *sums.entry(thread).or_default() += e["dur"].as_f64().unwrap();
                }
            }
        }
    }
    let window = sums["Computing"] + sums["Communication(Not Overlapped)"] + sums["Free"];
    let share = |k: &str| format!("{:.1}%", sums[k] * 100.0 / window);
    let out = crate::common::profscope_command()
        .args(["analyze", "--quiet", "--format", "json"])
        .arg(root())
        .output()
        .unwrap();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let h: Vec<&str> = r["headline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    // One line per finding, each at most about 160 characters (issue 47).
    assert!(h.len() <= 8, "{h:?}");
    assert!(h.iter().all(|l| l.chars().count() <= 160), "{h:?}");
    assert!(h[0].starts_with("2 device(s) on 2 rank(s)"), "{}", h[0]);
    assert!(h[0].ends_with("10 steps (Step Trace)"), "{}", h[0]);
    let expected = format!(
        "communication-bound: computing {}, exposed communication {}, free {} of the summed device windows",
        share("Computing"),
        share("Communication(Not Overlapped)"),
        share("Free")
    );
    assert!(h[1].starts_with(&expected), "{} vs {expected}", h[1]);
    assert!(
        h.iter()
            .any(|l| l.contains("top cause waiting_for_collective")),
        "{h:?}"
    );
    assert!(h.iter().any(|l| {
        l.starts_with("agrees with the vendor (Overlap Analysis)")
            && l.contains("on 2 of 2 devices")
    }));
    // No serving phase scopes in a training capture: --phase keeps nothing, and says so.
    let out = crate::common::profscope_command()
        .args([
            "analyze",
            "--quiet",
            "--format",
            "json",
            "--phase",
            "decode",
            "--fail-empty",
        ])
        .arg(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        r["headline"][0]
            .as_str()
            .unwrap()
            .starts_with("WARNING: the --phase decode slice kept 0 of"),
        "{}",
        r["headline"][0]
    );
}

/// A graph-sink capture has no host launches: the gaps inside an iteration with no wait, copy or
/// collective in them are the device starting the model's next queued task. Checked here: no
/// unknown idle is left, the named causes add up to the idle, and every `device_scheduling` gap
/// listed ends exactly where its evidence task starts, inside one of the device's `Iteration N`
/// windows read from the files with serde_json.
#[test]
fn graph_sink_gaps_inside_an_iteration_are_device_scheduling() {
    use profscope::analysis::bubbles::{self, BubbleOpts};
    let t = common::ingest(&root());
    let devs = devices::devices(&t);
    let b = bubbles::compute(
        &t,
        &devs,
        &BubbleOpts {
            min_gap_ns: 1_000,
            top_n: 10_000,
        },
    );
    assert_eq!(b.len(), 2);
    for (d, g) in devs.iter().zip(&b) {
        assert_eq!(g.unknown_ns, 0, "device {}", d.evidence.device_id);
        let named: i64 = g.by_cause.values().map(|c| c.total_ns).sum();
        assert_eq!(named, g.idle_ns);
        let folder = format!("device_{}", d.evidence.device_id);
        let mut iterations: Vec<(i64, i64)> = Vec::new();
        for p in iteration_files(&folder).values() {
            for e in &read_trace(p).complete {
                let name = e["name"].as_str().unwrap_or("");
                if name.starts_with("Iteration ") {
                    let ts = e["ts"]
                        .as_str()
                        .map_or_else(|| e["ts"].as_f64().unwrap(), |s| s.parse::<f64>().unwrap());
                    let dur = e["dur"].as_f64().unwrap();
                    iterations.push((ns(ts), ns(ts + dur)));
                }
            }
        }
        // Each iteration file carries its `Iteration N` (the step-trace thread and a subset).
        assert!(iterations.len() >= 10, "{}", iterations.len());
        let sched: Vec<_> = g
            .largest
            .iter()
            .filter(|x| x.cause == bubbles::Cause::DeviceScheduling)
            .collect();
        assert!(!sched.is_empty());
        for x in sched {
            let ev = x.evidence.as_ref().unwrap();
            assert_eq!(ev.ts_ns, x.end_ns, "evidence starts where the gap ends");
            assert!(
                iterations
                    .iter()
                    .any(|&(s, e)| s <= x.start_ns + 1 && x.end_ns <= e + 1),
                "gap {}..{} inside an iteration",
                x.start_ns,
                x.end_ns
            );
        }
    }
}
