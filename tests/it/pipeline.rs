//! File-by-file analysis (`profscope::pipeline`, what `analyze` runs) against the joint analysis of
//! all files in one set of tables, and rank anomalies of a damaged generated root.
//!
//! Inputs: the real 2-rank roots in ../shared/samples/ascend-pt (db/level1, text/level1), the
//! bundled demo root (generated), and generated roots written by the tests. The oracle of the
//! equivalence test is the joint path (`ingest_paths` + `summary::compute` + `run_all`), which the
//! other test files check against sqlite3, msprof-analyze, HTA and the generator's ground truth.
//! The anomaly test's expected values are what the test itself did to the root.

use crate::common;

use profscope::analysis::{phases::Phase, summary};
use profscope::pipeline::{self, RunOpts};
use profscope::registry::{AnalyzeOpts, run_all};
use profscope::synth::SynthOpts;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn opts(jobs: usize, max_memory: u64, phase: Option<Phase>) -> RunOpts {
    RunOpts {
        analyze: AnalyzeOpts::default(),
        phase,
        jobs,
        max_memory,
        cache: None,
        ..RunOpts::new(Default::default(), None)
    }
}

/// Summary (without `distinct_strings`, which file-by-file ingest sums), analyses, diagnostics.
fn comparable(summary: &summary::Summary, analyses: Value, diags: Value) -> Value {
    let mut s = serde_json::to_value(summary).unwrap();
    s.as_object_mut().unwrap().remove("distinct_strings");
    json!({ "summary": s, "analyses": analyses, "diagnostics": diags })
}

/// All files in one set of tables, read as `analyze` reads them (the vendor's overlap rows summed).
fn joint(paths: &[PathBuf], phase: Option<Phase>) -> Value {
    let analysis = profscope::ingest::IngestOpts::ANALYSIS;
    let t = profscope::ingest::ingest_paths_with(paths, analysis, &Default::default()).unwrap();
    let t = match phase {
        Some(p) => profscope::analysis::phases::slice(&t, p).0,
        None => t,
    };
    let a = serde_json::to_value(run_all(&t, &AnalyzeOpts::default())).unwrap();
    let d: Vec<_> = t.diagnostics.iter().cloned().collect();
    comparable(&summary::compute(&t), a, serde_json::to_value(d).unwrap())
}

fn by_file(paths: &[PathBuf], o: &RunOpts) -> Value {
    let r = pipeline::run(paths, o, &Default::default()).unwrap();
    let d: Vec<_> = r.diagnostics.iter().cloned().collect();
    comparable(
        &r.summary,
        serde_json::to_value(r.analyses).unwrap(),
        serde_json::to_value(d).unwrap(),
    )
}

#[test]
fn file_by_file_equals_joint_analysis() {
    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    let roots = [
        vec![demo.clone()],
        vec![common::samples_dir().join("ascend-pt/db/level1")],
        vec![common::samples_dir().join("ascend-pt/text/level1")],
        // Two roots at once: ranks 0/1 of the db capture and of the text capture.
        vec![
            common::samples_dir().join("ascend-pt/db/level2"),
            common::samples_dir().join("ascend-pt/text/level0"),
        ],
    ];
    for paths in &roots {
        let want = joint(paths, None);
        // Not vacuous: several files, devices and analyses with rows.
        assert!(want["summary"]["files"].as_array().unwrap().len() >= 2);
        assert!(
            !want["analyses"]["device_time"]
                .as_array()
                .unwrap()
                .is_empty()
        );
        // Both cores, unbounded; one file at a time (a budget of 1 byte runs each file alone).
        assert_eq!(by_file(paths, &opts(2, u64::MAX, None)), want, "{paths:?}");
        assert_eq!(
            by_file(paths, &opts(2, 1, None)),
            want,
            "{paths:?} one at a time"
        );
    }
    // --phase slices each file the same way.
    let d = vec![demo];
    assert_eq!(
        by_file(&d, &opts(2, u64::MAX, Some(Phase::Decode))),
        joint(&d, Some(Phase::Decode))
    );
}

/// Keeps only the events of host processes (drops every pid whose `process_name` is a device
/// process of torch_npu): a CPU-only rank file.
fn strip_device_events(path: &Path) {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let events = v.as_array().unwrap();
    let device: Vec<&Value> = events
        .iter()
        .filter(|e| {
            e["name"] == "process_name"
                && ["Ascend Hardware", "HCCL", "Overlap Analysis", "NPU MEM"]
                    .iter()
                    .any(|n| e["args"]["name"] == *n)
        })
        .map(|e| &e["pid"])
        .collect();
    assert!(device.len() >= 2, "device processes found");
    let kept: Vec<&Value> = events
        .iter()
        .filter(|e| !device.contains(&&e["pid"]))
        .collect();
    std::fs::write(path, serde_json::to_vec(&kept).unwrap()).unwrap();
}

#[test]
fn damaged_root_reports_every_anomaly_and_the_slow_rank() {
    let g = common::generated_with(
        "anomalies",
        SynthOpts {
            ranks: 6,
            target_bytes: 300_000,
            seed: 11,
            kineto: false,
            export: Default::default(),
            // Rank 4's compute kernels take twice as long.
            slow: Some((4, 200)),
            graph_mode: false,
            capture_apart: false,
        },
    );
    let tv = |r: u32| g.dir.join(&g.truth.ranks[r as usize].trace_view);
    // Rank 1: CPU only. Rank 2: missing. Rank 3: cut at 60% of its bytes (a rank that died
    // mid-dump). Rank 5: its best export is a db that is not a database (it cannot be read), so
    // its trace_view.json (the same capture) is read instead (issue 16).
    strip_device_events(&tv(1));
    std::fs::remove_dir_all(g.dir.join("rank2_ascend_pt")).unwrap();
    let bytes = std::fs::read(tv(3)).unwrap();
    std::fs::write(tv(3), &bytes[..bytes.len() * 6 / 10]).unwrap();
    let bad_db = tv(5).with_file_name("ascend_pytorch_profiler_5.db");
    std::fs::write(&bad_db, vec![b'x'; 4096]).unwrap();

    let o = RunOpts {
        analyze: AnalyzeOpts {
            expected_ranks: Some(6),
            ..AnalyzeOpts::default()
        },
        ..opts(2, u64::MAX, None)
    };
    let r = pipeline::run(std::slice::from_ref(&g.dir), &o, &Default::default()).unwrap();
    assert_eq!((r.files, r.failed), (5, 0));
    let k = &r.analyses.ranks;
    assert_eq!(k.present, vec![0, 1, 3, 4, 5]);
    assert_eq!(k.missing, vec![2]);
    assert_eq!(k.cpu_only, vec![1]);
    assert_eq!(k.truncated, vec![3]);
    assert!(k.failed.is_empty());
    assert_eq!(r.diagnostics.count("input_failed"), 0);
    assert_eq!(r.diagnostics.count("input_fallback"), 1);
    let fb = &r.diagnostics.get("input_fallback").unwrap().examples[0];
    assert!(
        fb.contains("ascend_pytorch_profiler_5.db") && fb.contains("trace_view.json"),
        "{fb}"
    );
    assert!(r.diagnostics.count("truncated") >= 1);

    // Cross-rank: ranks 0, 3, 4, 5 have device events (one cohort); rank 4 is the slowest in
    // every step they all have, by computing.
    let c = &r.analyses.cross_rank.cohorts;
    assert_eq!(c.len(), 1);
    let ranks: Vec<i32> = c[0].ranks.iter().map(|x| x.device.rank).collect();
    assert_eq!(ranks, vec![0, 3, 4, 5]);
    let s = c[0].slowest.as_ref().expect("a slowest rank");
    assert_eq!((s.rank, s.reason.as_str()), (4, "computing"));
    assert!(s.of_steps >= 10);
    assert_eq!(s.steps, s.of_steps);
    // The truncated rank lacks the later steps.
    assert!(c[0].steps_unmatched > 0);
    // Rank 4's compute per step is about twice the others' (the generator doubled it).
    let comp = |i: usize| c[0].ranks[i].computing_ns as f64 / c[0].ranks[i].steps as f64;
    let ratio = comp(2) / comp(0);
    assert!((1.8..2.2).contains(&ratio), "compute ratio {ratio}");
}

#[test]
fn every_input_failing_is_an_error() {
    let dir = std::env::temp_dir().join(format!("profscope-allfail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ascend_pytorch_profiler_0.db"), b"not a db").unwrap();
    let e = pipeline::run(
        std::slice::from_ref(&dir),
        &opts(2, u64::MAX, None),
        &Default::default(),
    )
    .err()
    .expect("an error");
    assert!(e.to_string().contains("no input could be read"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Discovery on the six real 2-rank roots: two inputs each, ranks 0 and 1, the db in db roots and
/// trace_view.json in text roots (the folder layouts of ../shared/samples/ascend-pt).
#[test]
fn real_roots_are_discovered_with_ranks_and_formats() {
    for kind in ["db", "text"] {
        for level in ["level0", "level1", "level2"] {
            let root = common::samples_dir().join(format!("ascend-pt/{kind}/{level}"));
            let r = pipeline::run(
                std::slice::from_ref(&root),
                &opts(2, u64::MAX, None),
                &Default::default(),
            )
            .unwrap();
            let files: Vec<(i32, &str, bool)> = r
                .summary
                .files
                .iter()
                .map(|f| {
                    let name = Path::new(&f.path).file_name().unwrap().to_str().unwrap();
                    let want = if kind == "db" {
                        format!("ascend_pytorch_profiler_{}.db", f.rank)
                    } else {
                        "trace_view.json".to_string()
                    };
                    (f.rank, f.format, name == want)
                })
                .collect();
            let format = if kind == "db" {
                "ascend_db"
            } else {
                "chrome_json_array"
            };
            assert_eq!(
                files,
                vec![(0, format, true), (1, format, true)],
                "{kind}/{level}"
            );
            assert_eq!(r.analyses.ranks.present, vec![0, 1]);
        }
    }
}

/// A rank folder holding both exports of a capture (here: the real db of db/level1 rank 0 and
/// the real trace_view.json of text/level1 rank 0, linked, not copied) is read once, from the db,
/// and the trace_view.json is reported as skipped with the db named.
#[test]
fn a_rank_with_db_and_text_reads_the_db_and_says_so() {
    let s = common::samples_dir().join("ascend-pt");
    let dir = std::env::temp_dir().join(format!("profscope-mixed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    let db =
        s.join("db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    let tv = s.join("text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    std::os::unix::fs::symlink(&db, out.join("ascend_pytorch_profiler_0.db")).unwrap();
    std::os::unix::fs::symlink(&tv, out.join("trace_view.json")).unwrap();
    std::os::unix::fs::symlink(
        s.join("text/level1/rank0_ascend_pt/profiler_info_0.json"),
        dir.join("rank0_ascend_pt/profiler_info_0.json"),
    )
    .unwrap();
    let r = pipeline::run(
        std::slice::from_ref(&dir),
        &opts(2, u64::MAX, None),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(r.files, 1);
    assert_eq!(r.summary.files[0].format, "ascend_db");
    assert_eq!(r.summary.files[0].rank, 0);
    let d = r.diagnostics.get("input_skipped").expect("skipped listed");
    assert_eq!(d.count, 1);
    assert!(
        d.examples[0].contains("trace_view.json")
            && d.examples[0].contains("ascend_pytorch_profiler_0.db"),
        "{}",
        d.examples[0]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A CANN msprof capture folder `PROF_*` (layout of shared/formats/ascend-formats.md section 1;
/// the files are real torch_npu exports linked under msprof's names): the rank comes from
/// `device_<n>/info.json.<n>` `rank_id`, both timeline slices are read, and the op_summary CSV of
/// the same capture is skipped.
#[test]
fn prof_folder_rank_slices_and_preference() {
    let s =
        common::samples_dir().join("ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT");
    let dir = std::env::temp_dir().join(format!("profscope-prof-root-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let prof = dir.join("PROF_000001_20250101120000123_ABCDEFGH");
    let out = prof.join("mindstudio_profiler_output");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::create_dir_all(prof.join("device_4")).unwrap();
    std::fs::write(prof.join("device_4/info.json.4"), r#"{"rank_id": 3}"#).unwrap();
    let link = |from: &str, to: &str| {
        std::os::unix::fs::symlink(s.join(from), out.join(to)).unwrap();
    };
    link("trace_view.json", "msprof_slice_0_20250101120000.json");
    link("trace_view.json", "msprof_slice_1_20250101120000.json");
    link("kernel_details.csv", "op_summary_20250101120000.csv");
    let r = pipeline::run(
        std::slice::from_ref(&dir),
        &opts(2, u64::MAX, None),
        &Default::default(),
    )
    .unwrap();
    // The two slices are pieces of one capture: one file row, both parts read.
    let files: Vec<(String, i32, u32)> = r
        .summary
        .files
        .iter()
        .map(|f| {
            let name = Path::new(&f.path).file_name().unwrap();
            (name.to_str().unwrap().to_string(), f.rank, f.parts)
        })
        .collect();
    assert_eq!(
        files,
        vec![("msprof_slice_0_20250101120000.json".to_string(), 3, 2)]
    );
    let d = r.diagnostics.get("input_skipped").unwrap();
    assert_eq!(d.count, 1);
    assert!(d.examples[0].contains("op_summary_20250101120000.csv"));
    let _ = std::fs::remove_dir_all(&dir);
}
