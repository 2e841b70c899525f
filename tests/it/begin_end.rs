//! `B`/`E` duration events (no real sample has them; hand-written input): nested pairs on one
//! thread become complete events with the right durations; an E without a B and a B without an E
//! are counted as data loss, never dropped silently; instants and unknown phases are counted.

use profscope::ingest::chrome_json::ingest_slice;
use profscope::model::EventKind;

#[test]
fn begin_end_pairs_nest_and_unmatched_ones_are_reported() {
    let src = br#"{"traceEvents": [
      {"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 10},
      {"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 12.5},
      {"ph": "E", "pid": 1, "tid": 1, "ts": 15},
      {"ph": "E", "pid": 1, "tid": 1, "ts": 20},
      {"ph": "E", "pid": 1, "tid": 2, "ts": 21},
      {"ph": "B", "name": "open", "pid": 1, "tid": 3, "ts": 22},
      {"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 23, "s": "t"},
      {"ph": "b", "name": "async", "pid": 1, "tid": 1, "ts": 24, "id": 1, "cat": "x"}
    ]}"#;
    let t = ingest_slice("be.json", src, 1 << 20).unwrap();
    let mut got: Vec<(String, i64, i64, EventKind)> = (0..t.events.len())
        .map(|i| {
            (
                t.event_name(i).to_string(),
                t.events.ts_ns[i],
                t.events.dur_ns.at(i),
                t.events.kind[i],
            )
        })
        .collect();
    got.sort_by_key(|g| g.1);
    assert_eq!(
        got,
        vec![
            ("outer".into(), 10_000, 10_000, EventKind::Complete),
            ("inner".into(), 12_500, 2_500, EventKind::Complete),
            ("mark".into(), 23_000, 0, EventKind::Instant),
        ]
    );
    assert_eq!(t.diagnostics.count("unmatched_end"), 1);
    assert_eq!(t.diagnostics.count("unmatched_begin"), 1);
    assert!(t.diagnostics.get("unmatched_begin").unwrap().examples[0].contains("open"));
    assert_eq!(
        t.diagnostics.count("unknown_phase"),
        1,
        "the async `b` event is counted"
    );
}
