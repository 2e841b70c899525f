//! Every real Chrome trace in ../shared/samples ingests without error, and its per-process X
//! counts, per-category event counts, counter values and flow events equal what an independent
//! oracle counted: tests/tools/count_events.py (stdlib json; category rules re-implemented from
//! docs/tables.md), output committed as tests/expected/real_trace_counts.json with its command.
//! Inputs: real files only.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeMap;

fn expected() -> Value {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/expected/real_trace_counts.json"
    );
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn as_map(v: &Value) -> BTreeMap<String, u64> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect()
}

#[test]
fn every_real_trace_matches_the_independent_counts() {
    let root = samples_dir();
    let exp = expected();
    let files = exp["files"].as_object().unwrap();
    assert!(files.len() >= 40, "oracle lists {} files", files.len());
    let mut checked = 0;
    for (rel, want) in files {
        let path = root.join(rel);
        let t = ingest(&path);
        assert_eq!(
            x_by_process(&t),
            as_map(&want["x_by_process"]),
            "{rel}: X events per process"
        );
        assert_eq!(
            events_by_category(&t),
            as_map(&want["events_by_category"]),
            "{rel}: events per category"
        );
        assert_eq!(
            t.counters.len() as u64,
            want["counter_values"].as_u64().unwrap(),
            "{rel}: counter values"
        );
        assert_eq!(
            t.flows.len() as u64,
            want["flow_events"].as_u64().unwrap(),
            "{rel}: flow events"
        );
        assert!(
            t.diagnostics.get("truncated").is_none(),
            "{rel}: complete file reported truncated"
        );
        checked += 1;
    }
    assert_eq!(checked, files.len());
}

/// Spot values checked by hand against the oracle's JSON, so a regenerated oracle that silently
/// changed cannot pass unnoticed. Source: tests/expected/real_trace_counts.json (2026-11-29), and
/// the task-type counts of formats doc section 6 (AI_CORE 172, MIX_AIV 13, DSA_SQE 2).
#[test]
fn real_level1_rank0_spot_values() {
    let t = ingest(
        &samples_dir()
            .join("ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"),
    );
    let x = x_by_process(&t);
    assert_eq!(x["Ascend Hardware"], 535);
    assert_eq!(x["HCCL"], 300);
    assert_eq!(x["Python"], 2460);
    let c = events_by_category(&t);
    assert_eq!(c["compute_kernel"], 187); // 172 AI_CORE + 13 MIX_AIV + 2 DSA_SQE
    assert_eq!(c["wait_sync"], 472);
    assert_eq!(c["data_movement"], 132);
    assert_eq!(t.files.rank[0], 0, "rank from profiler_info_0.json");
    // Both 2025 task-type spellings of waits land in wait_sync (formats doc section 6).
    let waits: Vec<&str> = (0..t.events.len())
        .filter(|&i| t.events.category[i] == profscope::model::Category::WaitSync)
        .map(|i| t.str(t.events.task_type.at(i)))
        .collect();
    for tt in [
        "Notify Wait",
        "Write Value",
        "EVENT_WAIT_SQE",
        "EVENT_RECORD_SQE",
    ] {
        assert!(waits.contains(&tt), "{tt} classified as wait_sync");
    }
}

/// The 2024 trace (older CANN: `Stream Id`, pid 800 for Ascend Hardware) keeps its streams.
#[test]
fn older_cann_stream_id_is_the_stream() {
    let t = ingest(&samples_dir().join("ascend-misc/mstt/mstt_test_resources/trace_view.json"));
    let mut streams: Vec<i32> = (0..t.events.len())
        .filter(|&i| t.event_role(i) == profscope::model::ProcessRole::AscendHardware)
        .map(|i| t.events.stream.at(i))
        .collect();
    streams.sort();
    streams.dedup();
    assert_eq!(
        streams,
        vec![3],
        "the sample's Ascend Hardware has one thread, `Stream 3`"
    );
}

/// Kineto: device processes from `GPU n` labels, rank from distributedInfo, streams from args.
#[test]
fn kineto_rank_device_and_streams() {
    let t = ingest(&samples_dir().join("torch-traces/trace_filter/sampled_rank-1.json.gz"));
    assert_eq!(t.files.rank[0], 1);
    assert!(t.files.gzip[0]);
    let kernels: Vec<usize> = (0..t.events.len())
        .filter(|&i| t.str(t.events.cat.at(i)) == "kernel")
        .collect();
    assert!(!kernels.is_empty());
    for &i in &kernels {
        assert!(t.event_is_device_side(i));
        assert!(t.events.stream.at(i) >= 0);
    }
}
