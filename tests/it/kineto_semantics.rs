//! Kineto step and device semantics on the real HTA sample traces (../shared/samples/torch-traces,
//! all real PyTorch-profiler output; see its SOURCES.md). The expected values come from
//! tests/tools/complete_steps.py, a stdlib-Python oracle of HTA's documented complete-steps rule
//! (CPU `ProfilerStep#N` only; kernels launched before the last step's start), written without
//! profscope and recorded in tests/expected/complete_steps.json with the command that made it.
//! The oracle's span of timeline_analysis/sampled_rank-0 (600,058 µs) equals HTA 0.5.0's own
//! `kernel_time` for that trace (tests/expected/hta_0.5.0.json), so the oracle's rule is HTA's.

use crate::common;

use profscope::analysis::{devices, families, kernel_types, summary};
use profscope::model::Category;
use serde_json::Value;

fn expected() -> Value {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/expected/complete_steps.json"
    );
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn traces() -> std::path::PathBuf {
    common::samples_dir().join("torch-traces")
}

#[test]
fn complete_steps_windows_equal_htas_rule() {
    let e = expected();
    let mut checked = 0;
    for (rel, v) in e["files"].as_object().unwrap() {
        let t = common::ingest(&traces().join(rel));
        let rows = kernel_types::compute_complete_steps(&t, &devices::devices(&t));
        match &v["complete_steps"] {
            Value::Null => assert!(rows.is_empty(), "{rel}: no complete steps expected"),
            w => {
                let lo = rows.iter().map(|r| r.span_start_ns).min().unwrap();
                let hi = rows.iter().map(|r| r.span_end_ns).max().unwrap();
                assert_eq!(
                    (lo, hi),
                    (
                        w["span_start_ns"].as_i64().unwrap(),
                        w["span_end_ns"].as_i64().unwrap()
                    ),
                    "{rel}"
                );
                checked += 1;
            }
        }
    }
    // Including the ROCm trace whose GPU copy of ProfilerStep#N used to end the window late.
    assert!(checked >= 10, "{checked}");
    assert!(
        !e["files"]["amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"]["complete_steps"]
            .is_null()
    );
}

#[test]
fn annotations_are_neither_device_events_nor_streams() {
    let e = expected();
    for (rel, v) in e["files"].as_object().unwrap() {
        let t = common::ingest(&traces().join(rel));
        let annotations = t.strings.lookup("gpu_user_annotation");
        let mut seen = 0u64;
        for i in 0..t.events.len() {
            if Some(t.events.cat.at(i)) == annotations {
                seen += 1;
                assert!(
                    !t.events.category[i].is_device(),
                    "{rel}: a gpu_user_annotation counted as device work"
                );
                assert_ne!(t.events.category[i], Category::Step, "{rel}");
            }
        }
        assert_eq!(seen, v["gpu_user_annotations"].as_u64().unwrap(), "{rel}");
        // Overlaps among kernels / copies of one track only (the oracle's count).
        assert_eq!(
            t.diagnostics.count("overlapping_device_events"),
            v["device_overlaps"].as_u64().unwrap(),
            "{rel}"
        );
        let s = summary::compute(&t);
        for st in &s.device_streams {
            assert!(
                st.by_category
                    .keys()
                    .all(|c| !["annotation", "step", "host_op"].contains(c)),
                "{rel}: {} {:?}",
                st.thread_name,
                st.by_category
            );
        }
    }
}

#[test]
fn cpu_ops_with_a_stream_argument_are_not_device_streams() {
    // triton_example: CPU `cpu_op` events carry `args.stream` (Triton launches).
    let t = common::ingest(&traces().join("triton_example/triton_example.json.gz"));
    let host_with_stream = (0..t.events.len())
        .filter(|&i| t.events.stream.at(i) >= 0 && !t.event_is_device_side(i))
        .count();
    assert!(host_with_stream > 0, "the sample's premise");
    let s = summary::compute(&t);
    assert!(!s.device_streams.is_empty());
    for st in &s.device_streams {
        assert!(st.process.contains("GPU") || st.by_category.contains_key("compute_kernel"));
        assert!(!st.by_category.contains_key("host_op"), "{:?}", st);
    }
}

#[test]
fn no_nocast_kernel_is_a_cast() {
    // Every compute-kernel name of every real sample with kernels (Kineto and Ascend).
    let mut names = std::collections::BTreeSet::new();
    let mut roots: Vec<std::path::PathBuf> = expected()["files"]
        .as_object()
        .unwrap()
        .keys()
        .map(|rel| traces().join(rel))
        .collect();
    roots.push(common::samples_dir().join("ascend-msprof-legacy"));
    roots.push(common::samples_dir().join("ascend-pt/db/level1"));
    for root in &roots {
        let t = common::ingest(root);
        for i in 0..t.events.len() {
            if t.events.category[i] == Category::ComputeKernel {
                names.insert(t.event_name(i).to_string());
            }
        }
    }
    let nocast: Vec<&String> = names.iter().filter(|n| n.contains("nocast")).collect();
    assert!(
        !nocast.is_empty(),
        "the samples hold gpu_kernel_impl_nocast kernels"
    );
    for n in &nocast {
        assert_ne!(families::family_of(n), "Cast", "{n}");
    }
    // A true cast is still a cast (real names: MindSpore legacy, Kineto).
    let casts: Vec<&String> = names
        .iter()
        .filter(|n| families::family_of(n) == "Cast")
        .collect();
    assert!(!casts.is_empty());
    for n in casts {
        let lower = n.to_ascii_lowercase();
        assert!(lower.contains("cast"), "{n}");
        assert!(!lower.contains("nocast"), "{n}");
    }
}
