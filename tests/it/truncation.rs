//! A rank that died mid-dump leaves a truncated trace. Cutting real traces at 20 pseudo-random
//! byte offsets each must never panic, must report `truncated` with the offset, and must keep
//! exactly the events that were complete before the cut. The expected count comes from serde_json
//! (an independent parser) reading the events one by one and recording where each one ends.
//! Inputs: real files (torch_npu trace_view.json, Kineto CPU trace).

use crate::common;

use profscope::ingest::chrome_json::{ingest_slice, ingest_slice_streamed};
use profscope::model::EventKind;

/// (end offset, phase) of every top-level event, found by serde_json.
fn event_ends(b: &[u8]) -> (usize, Vec<(usize, String, bool)>) {
    let start = if b.trim_ascii_start().starts_with(b"[") {
        b.iter().position(|&c| c == b'[').unwrap() + 1
    } else {
        let k = b.windows(13).position(|w| w == b"\"traceEvents\"").unwrap();
        k + b[k..].iter().position(|&c| c == b'[').unwrap() + 1
    };
    let mut pos = start;
    let mut out = Vec::new();
    loop {
        while pos < b.len() && (b[pos].is_ascii_whitespace() || b[pos] == b',') {
            pos += 1;
        }
        if b[pos] == b']' {
            return (start, out);
        }
        let mut it =
            serde_json::Deserializer::from_slice(&b[pos..]).into_iter::<serde_json::Value>();
        let v = it.next().unwrap().unwrap();
        pos += it.byte_offset();
        let ph = v["ph"].as_str().unwrap_or("").to_string();
        let timed = ph == "X" && v.get("dur").is_some() || ph == "i" || ph == "I";
        out.push((pos, ph, timed));
    }
}

fn check_cuts(rel: &str, seed: u64) {
    let path = common::samples_dir().join(rel);
    let b = std::fs::read(&path).unwrap();
    let (first, ends) = event_ends(&b);
    let full = ingest_slice(rel, &b, 64 << 10).unwrap();
    let timed_total = ends.iter().filter(|e| e.2).count();
    assert_eq!(full.events.len(), timed_total, "{rel}: full file");
    let mut rng = common::Lcg(seed);
    for k in 0..20 {
        // Cuts anywhere in the event array (the first cut is inside the header, before any event).
        let cut = if k == 0 {
            (first / 2).max(1)
        } else {
            first + rng.next(b.len() - first - 2)
        };
        let t = ingest_slice(rel, &b[..cut], 64 << 10)
            .unwrap_or_else(|e| panic!("{rel} cut at {cut}: {e}"));
        let want = ends.iter().filter(|e| e.0 <= cut && e.2).count();
        assert_eq!(
            t.events.len(),
            want,
            "{rel} cut at {cut}: complete events kept"
        );
        assert!(
            t.events
                .kind
                .iter()
                .all(|&k| k == EventKind::Complete || k == EventKind::Instant)
        );
        let d = t
            .diagnostics
            .get("truncated")
            .unwrap_or_else(|| panic!("{rel} cut at {cut}: no truncated diagnostic"));
        assert_eq!(d.count, 1);
        assert!(d.examples[0].contains("byte"), "{}", d.examples[0]);
        // The streaming path (gzip) keeps the same events and reports the same offset.
        let s = ingest_slice_streamed(rel, &b[..cut], 5_000, 1_000).unwrap();
        assert_eq!(s.events.len(), want, "{rel} cut at {cut}: streamed");
        let sd = s.diagnostics.get("truncated").map(|d| d.examples.clone());
        assert_eq!(
            sd,
            Some(d.examples.clone()),
            "{rel} cut at {cut}: streamed diagnostic"
        );
    }
}

#[test]
fn truncated_torch_npu_trace_keeps_complete_events() {
    check_cuts(
        "ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        7,
    );
}

#[test]
fn truncated_kineto_trace_keeps_complete_events() {
    check_cuts("torch-cpu/torch_cpu_tiny_transformer_trace.json", 11);
}

#[test]
fn truncated_gzip_stream_is_reported() {
    let path = common::samples_dir().join("torch-traces/trace_filter/sampled_rank-1.json.gz");
    let b = std::fs::read(&path).unwrap();
    let dir = std::env::temp_dir().join(format!("profscope-trunc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cut = dir.join("rank-1.json.gz");
    std::fs::write(&cut, &b[..b.len() / 2]).unwrap();
    let t = common::ingest(&cut);
    std::fs::remove_dir_all(&dir).unwrap();
    let d = t
        .diagnostics
        .get("truncated")
        .expect("truncated diagnostic");
    assert!(d.count >= 1);
    assert!(
        d.examples.iter().any(|e| e.contains("gzip")),
        "{:?}",
        d.examples
    );
    assert!(
        !t.events.is_empty() && t.events.len() < 4676,
        "some but not all events: {}",
        t.events.len()
    );
}

#[test]
fn malformed_json_in_the_middle_is_an_error_with_offset() {
    let rel = "ascend-pt/text/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json";
    let mut b = std::fs::read(common::samples_dir().join(rel)).unwrap();
    let at = b.len() / 2;
    let brace = at + b[at..].iter().position(|&c| c == b'{').unwrap();
    b[brace] = b'#';
    let err = ingest_slice(rel, &b, 64 << 10).unwrap_err().to_string();
    assert!(err.contains(rel) && err.contains("byte"), "{err}");
}

#[test]
fn empty_and_cpu_only_files_are_diagnostics_not_failures() {
    let t = ingest_slice("empty.json", b"  \n", 1 << 20).unwrap();
    assert_eq!(t.diagnostics.count("empty_file"), 1);
    let t = common::ingest(
        &common::samples_dir()
            .join("torch-traces/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"),
    );
    assert_eq!(t.files.rank[0], 34);
    assert!(t.events.category.iter().all(|c| !c.is_device()));
}
