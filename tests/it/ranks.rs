//! Rank anomalies on real inputs: ../shared/samples/ascend-pt (torch_npu 2-rank captures).
//! Expected values are facts of the sample folders: db/level1 holds rank0_ascend_pt and
//! rank1_ascend_pt (profiler_info_0/1.json); text/level0/rank1 is a separate capture taken at
//! another time (its trace_view.json events are at 1736405443... s; the db/level1 dbs at 1736410576... s,
//! SESSION_TIME_INFO), so its window overlaps neither db rank.

use crate::common;

use profscope::analysis::ranks;

fn samples(rel: &str) -> std::path::PathBuf {
    common::samples_dir().join(rel)
}

#[test]
fn two_rank_db_root_with_expected_four() {
    let t = common::ingest(&samples("ascend-pt/db/level1"));
    let r = ranks::compute(&t, Some(4));
    assert_eq!(r.present, vec![0, 1]);
    assert_eq!(r.missing, vec![2, 3]);
    assert_eq!(r.expected_source.as_str(), "--expected-ranks");
    assert!(r.cpu_only.is_empty() && r.disjoint.is_empty());
    // Device events per rank = TASK rows + COMMUNICATION_TASK_INFO plane rows + COMMUNICATION_OP
    // rows; the vendor's OVERLAP_ANALYSIS rows (rank 0 only) are counted apart. By sqlite3
    // ("select count(*) from TASK" etc. on each ascend_pytorch_profiler_<r>.db):
    //   rank0: 552 TASK + 296 + 4 = 852, 382 overlap rows; rank1: 552 + 296 + 4 = 852, 0.
    let dev: Vec<(u64, u64)> = r
        .rows
        .iter()
        .map(|x| (x.device_events, x.vendor_overlap_rows))
        .collect();
    assert_eq!(dev, vec![(852, 382), (852, 0)]);
    // Read as `analyze` reads it (the overlap rows summed, not events): the same picture.
    let o = profscope::pipeline::RunOpts {
        analyze: Default::default(),
        phase: None,
        jobs: 1,
        max_memory: u64::MAX,
        cache: None,
        ..profscope::pipeline::RunOpts::new(Default::default(), None)
    };
    let a = profscope::pipeline::run(&[samples("ascend-pt/db/level1")], &o, &Default::default())
        .unwrap();
    let dev_a: Vec<(u64, u64)> = a
        .analyses
        .ranks
        .rows
        .iter()
        .map(|x| (x.device_events, x.vendor_overlap_rows))
        .collect();
    assert_eq!(dev_a, dev);
    let none = ranks::compute(&t, None);
    assert_eq!((none.expected, none.missing.len()), (None, 0));
}

/// The text form of a capture (trace_view.json): read as events (exports, SQL) or as `analyze`
/// reads it (the vendor's `Overlap Analysis` events summed per device, as a db's OVERLAP_ANALYSIS
/// rows are), the rank rows and device_time (its vendor comparison included) are the same.
/// 382 `Overlap Analysis` events per rank: counted in each rank's trace_view.json with Python
/// (the events whose pid a `process_name` metadata event names "Overlap Analysis").
#[test]
fn overlap_events_summed_or_kept_give_the_same_answers() {
    let root = samples("ascend-pt/text/level1");
    let t = common::ingest(&root);
    let rows = |r: &ranks::Ranks| -> Vec<(u64, u64)> {
        r.rows
            .iter()
            .map(|x| (x.device_events, x.vendor_overlap_rows))
            .collect()
    };
    let events = rows(&ranks::compute(&t, None));
    assert_eq!(events.iter().map(|x| x.1).collect::<Vec<_>>(), [382, 382]);
    let o = profscope::pipeline::RunOpts {
        jobs: 1,
        cache: None,
        ..profscope::pipeline::RunOpts::new(Default::default(), None)
    };
    let a = profscope::pipeline::run(std::slice::from_ref(&root), &o, &Default::default()).unwrap();
    assert_eq!(rows(&a.analyses.ranks), events);
    // device_time per file, from the events (one table per rank file, as analyze reads them).
    let mut from_events = Vec::new();
    for r in ["rank0_ascend_pt", "rank1_ascend_pt"] {
        let t = common::ingest(&root.join(r));
        let devs = profscope::analysis::devices::devices(&t);
        from_events.extend(profscope::analysis::device_time::compute(&t, &devs));
    }
    assert!(from_events.iter().all(|d| d.vendor.is_some()));
    assert_eq!(
        serde_json::to_value(&a.analyses.device_time).unwrap(),
        serde_json::to_value(&from_events).unwrap()
    );
}

#[test]
fn captures_from_different_times_are_disjoint() {
    let paths = [
        samples("ascend-pt/db/level1/rank0_ascend_pt"),
        samples("ascend-pt/text/level0/rank1_ascend_pt"),
    ];
    let t = profscope::ingest::ingest_paths(&paths, &Default::default()).unwrap();
    let r = ranks::compute(&t, None);
    assert_eq!(r.present, vec![0, 1]);
    assert_eq!(r.disjoint, vec![0, 1]);
}

/// The bundled demo root (generated): each rank has a trace_view.json (realtime ns) and an
/// lmdeploy Kineto trace (its own relative clock). The rank window comes from the trace_view
/// clock only and equals the generator's recorded window of that file (ground_truth.json
/// `window_start_ns` / `window_end_ns`), instead of spanning both clocks.
#[test]
fn rank_window_stays_on_one_clock() {
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(demo.join("ground_truth.json")).unwrap())
            .unwrap();
    let t = common::ingest(&demo);
    let r = ranks::compute(&t, None);
    assert_eq!(r.rows.len(), 2);
    for row in &r.rows {
        assert_eq!(row.files.len(), 2, "trace_view.json and the Kineto trace");
        assert_eq!(row.window_clock, Some("ascend"));
        let tr = &truth["ranks"][row.rank as usize];
        assert_eq!(row.window_start_ns, tr["window_start_ns"].as_i64());
        assert_eq!(row.window_end_ns, tr["window_end_ns"].as_i64());
    }
    assert!(r.disjoint.is_empty());
}
