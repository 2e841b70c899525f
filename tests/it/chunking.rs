//! Chunk-boundary independence: parsing a real trace in one chunk or in chunks of any size
//! (down to a few hundred bytes, so that candidate boundaries fall everywhere, including inside
//! strings that contain `}, {`) gives identical tables. Inputs: real files plus one generated
//! adversarial array.

use crate::common;

use profscope::ingest::chrome_json::ingest_slice;
use profscope::model::Tables;

/// Everything observable about the events, in table order, with strings resolved.
fn fingerprint(t: &Tables) -> Vec<(String, String, i64, i64, i32, String, String)> {
    (0..t.events.len())
        .map(|i| {
            (
                t.event_name(i).to_string(),
                t.thread_label(t.events.thread[i]),
                t.events.ts_ns[i],
                t.events.dur_ns.at(i),
                t.events.stream.at(i),
                t.events.category[i].as_str().to_string(),
                t.str(t.events.task_type.at(i)).to_string(),
            )
        })
        .collect()
}

#[test]
fn real_traces_parse_identically_at_any_chunk_size() {
    for rel in [
        "ascend-pt/text/level2/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        "torch-cpu/torch_cpu_tiny_transformer_trace.json",
    ] {
        let b = std::fs::read(common::samples_dir().join(rel)).unwrap();
        let one = ingest_slice(rel, &b, usize::MAX / 2).unwrap();
        let want = fingerprint(&one);
        for chunk in [300, 4096, 65_536, 1 << 20] {
            let t = ingest_slice(rel, &b, chunk).unwrap();
            assert_eq!(fingerprint(&t), want, "{rel} with {chunk}-byte chunks");
            assert_eq!(t.counters.len(), one.counters.len());
            assert_eq!(t.flows.len(), one.flows.len());
        }
    }
}

#[test]
fn false_boundaries_inside_strings_are_repaired() {
    let mut s = String::from("[");
    for i in 0..500 {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&format!(
            r#"{{"ph": "X", "name": "op{i} }}, {{\"fake\": 1}}, {{", "pid": 1, "tid": 2, "ts": "{}.000", "dur": 1.5, "args": {{"s": "}}, {{x"}}}}"#,
            1000 + i
        ));
    }
    s.push(']');
    let one = ingest_slice("adversarial.json", s.as_bytes(), usize::MAX / 2).unwrap();
    assert_eq!(one.events.len(), 500);
    for chunk in [1, 7, 50, 333] {
        let t = ingest_slice("adversarial.json", s.as_bytes(), chunk).unwrap();
        assert_eq!(fingerprint(&t), fingerprint(&one), "chunk {chunk}");
    }
    assert_eq!(one.event_name(3), "op3 }, {\"fake\": 1}, {");
}

/// The streaming path (gzip files) gives the same tables as the mapped path for any block size,
/// including blocks smaller than one event.
#[test]
fn streamed_blocks_parse_identically() {
    use profscope::ingest::chrome_json::ingest_slice_streamed;
    for rel in [
        "ascend-pt/text/level0/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        "torch-cpu/torch_cpu_tiny_transformer_trace.json",
    ] {
        let b = std::fs::read(common::samples_dir().join(rel)).unwrap();
        let want = ingest_slice(rel, &b, usize::MAX / 2).unwrap();
        for (block, chunk) in [
            (97, 50),
            (1000, 300),
            (4096, 4096),
            (65_536, 10_000),
            (1 << 22, 1 << 20),
        ] {
            let t = ingest_slice_streamed(rel, &b, block, chunk).unwrap();
            assert_eq!(
                fingerprint(&t),
                fingerprint(&want),
                "{rel}: block {block}, chunk {chunk}"
            );
            assert_eq!(t.counters.len(), want.counters.len());
            assert_eq!(t.flows.len(), want.flows.len());
            assert_eq!(t.files.rank, want.files.rank);
            assert!(t.diagnostics.is_empty() == want.diagnostics.is_empty());
        }
    }
}
