//! The dispatch chain and the bubble causes on real inputs, against values computed without
//! profscope:
//! - tests/expected/dispatch_oracle.json: tests/tools/dispatch_oracle.py recomputes, from the raw
//!   SQLite tables of the real db roots ../shared/samples/ascend-pt/db/level{0,1,2}, the launch
//!   links, latencies, queue depths, the gaps and the cause of every gap (command in the script);
//! - tests/expected/msprof_analyze_26.2.0_cann_api_sum_level{0,1,2}.json: msprof-analyze 26.2.0
//!   `cluster -m cann_api_sum` on the same roots (tests/tools/run_msprof_analyze.py --modes
//!   cann_api_sum), table CannApiSumRank;
//! - the text roots' own api_statistic.csv (written by torch_npu);
//! - a stdlib Python count on the real Kineto trace (command below).
//!
//! Every input here is real.

use crate::common;

use profscope::analysis::bubbles::{self, BubbleOpts};
use profscope::analysis::devices;
use profscope::analysis::dispatch::{self, Link};
use serde_json::Value;
use std::collections::BTreeMap;

fn expected(name: &str) -> Value {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expected")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: ours {a} vs {b}");
}

#[test]
fn db_roots_equal_the_independent_recomputation() {
    let oracle = expected("dispatch_oracle.json");
    for level in ["level0", "level1", "level2"] {
        let t = common::ingest(&common::samples_dir().join("ascend-pt/db").join(level));
        let devs = devices::devices(&t);
        let d = dispatch::compute(&t, &devs, 1_000, 10);
        let b = bubbles::compute(
            &t,
            &devs,
            &BubbleOpts {
                min_gap_ns: 1_000,
                top_n: 1_000,
            },
        );
        assert_eq!((d.len(), b.len()), (2, 2), "{level}: one device per rank");
        for (x, g) in d.iter().zip(&b) {
            let rank = x.device.rank;
            let want = &oracle["roots"][format!("db/{level}")][rank.to_string()];
            let what = format!("{level} rank {rank}");
            let n = |k: &str| want[k].as_f64().unwrap();
            assert_eq!(x.link, Link::ConnectionId);
            assert_eq!(x.tasks as f64, n("tasks"), "{what} tasks");
            assert_eq!(x.linked_tasks as f64, n("linked_tasks"), "{what}");
            assert_eq!(x.latency.count as f64, n("calls"), "{what} calls");
            close(x.latency.p50_ns, n("latency_p50_ns"), 1e-6, &what);
            close(x.latency.p90_ns, n("latency_p90_ns"), 1e-6, &what);
            close(x.latency.p99_ns, n("latency_p99_ns"), 1e-3, &what);
            assert_eq!(x.latency.max_ns as f64, n("latency_max_ns"), "{what}");
            assert_eq!(x.latency.negative as f64, n("latency_negative"), "{what}");
            close(x.queue_depth.p50, n("depth_p50"), 1e-9, &what);
            assert_eq!(x.queue_depth.max as f64, n("depth_max"), "{what}");
            assert_eq!(x.queue_depth.empty_queue as f64, n("depth_empty"), "{what}");
            assert_eq!(x.host_bound.gaps as f64, n("gaps"), "{what}");
            assert_eq!(x.host_bound.idle_ns as f64, n("idle_ns"), "{what}");
            assert_eq!(x.host_bound.host_bound_gaps as f64, n("host_bound_gaps"));
            assert_eq!(x.host_bound.host_bound_ns as f64, n("host_bound_ns"));
            // Bubbles: the same gaps, and every gap's cause as the oracle derives it.
            assert_eq!(g.idle_ns as f64, n("idle_ns"), "{what}");
            let got: BTreeMap<(i64, i64), &str> = g
                .largest
                .iter()
                .map(|x| ((x.start_ns, x.end_ns), x.cause.as_str()))
                .collect();
            let causes = want["gap_causes"].as_array().unwrap();
            assert_eq!(got.len(), causes.len(), "{what}: every gap listed");
            for c in causes {
                let key = (
                    c["start_ns"].as_i64().unwrap(),
                    c["end_ns"].as_i64().unwrap(),
                );
                assert_eq!(
                    got.get(&key).copied(),
                    c["cause"].as_str(),
                    "{what}: gap {key:?}"
                );
            }
            // The bar: at least 80% of idle has a named cause, with evidence.
            assert!(
                g.named_pct_of_idle >= 80.0,
                "{what}: {}",
                g.named_pct_of_idle
            );
            assert_eq!(g.unknown_ns, 0, "{what}");
            for x in &g.largest {
                assert!(x.evidence.is_some(), "{what}: {x:?}");
                if x.cause == bubbles::Cause::HostDispatch {
                    assert!(x.launch_lag_ns.unwrap() > 0);
                }
            }
        }
    }
}

#[test]
fn db_level1_rank0_figures() {
    // The numbers docs/analyses/dispatch.md quotes (oracle values, db/level1 rank 0).
    let t = common::ingest(&common::samples_dir().join("ascend-pt/db/level1"));
    let devs = devices::devices(&t);
    let d = &dispatch::compute(&t, &devs, 1_000, 10)[0];
    assert_eq!(d.device.rank, 0);
    assert_eq!((d.tasks, d.latency.count), (533, 236));
    assert_eq!(d.latency.p50_ns, 586_424.0);
    assert_eq!(d.queue_depth.p50, 215.0);
    assert_eq!(
        (d.host_bound.host_bound_gaps, d.host_bound.host_bound_ns),
        (34, 19_846_538)
    );
    // The slowest empty-queue launches name the op above the call (through the async_npu flow).
    assert!(!d.slowest_empty_queue.is_empty());
    assert!(d.slowest_empty_queue.iter().all(|r| r.queue_depth == 0));
    assert!(d.slowest_empty_queue.iter().any(|r| r.op.is_some()));
}

#[test]
fn host_apis_equal_msprof_analyze_cann_api_sum() {
    for level in ["level0", "level1", "level2"] {
        let want = expected(&format!("msprof_analyze_26.2.0_cann_api_sum_{level}.json"));
        let rows = want["modes"]["cann_api_sum"]["tables"]["CannApiSumRank"]
            .as_array()
            .unwrap()
            .clone();
        assert!(rows.len() > 40, "{level}: {} rows", rows.len());
        let t = common::ingest(&common::samples_dir().join("ascend-pt/db").join(level));
        let devs = devices::devices(&t);
        let ours = dispatch::compute(&t, &devs, 1_000, 10_000);
        let mut compared = 0;
        for w in &rows {
            let rank = w["rank"].as_i64().unwrap() as i32;
            let name = w["name"].as_str().unwrap();
            let d = ours.iter().find(|d| d.device.rank == rank).unwrap();
            let s = d
                .host_apis
                .iter()
                .find(|s| s.name == name)
                .unwrap_or_else(|| panic!("{level} rank {rank}: no {name}"));
            let what = format!("{level} rank {rank} {name}");
            let f = |k: &str| w[k].as_f64().unwrap();
            assert_eq!(s.count as f64, f("totalCount"), "{what}");
            assert_eq!(s.sum_ns as f64, f("totalTimeNs"), "{what}");
            assert_eq!(s.min_ns as f64, f("minNs"), "{what}");
            assert_eq!(s.max_ns as f64, f("maxNs"), "{what}");
            // The vendor rounds the mean and its quartiles to 0.1 ns.
            close(s.mean_ns, f("averageNs"), 0.05 + 1e-9, &what);
            close(s.p25_ns, f("Q1Ns"), 0.05 + 1e-9, &what);
            close(s.p50_ns, f("medNs"), 0.05 + 1e-9, &what);
            close(s.p75_ns, f("Q3Ns"), 0.05 + 1e-9, &what);
            // Its stdev is the population std here (numpy's default, unlike compute_op_sum's
            // pandas sample std), rounded to 0.1: Launch_Ffts, 4 calls, level0 rank 1, is
            // 20851.4 = sample std 24077.2 × √(3/4).
            close(s.std_ns, f("stdev"), 0.05 + 1e-6, &what);
            compared += 1;
        }
        // And nothing extra: every name of ours is one of the vendor's.
        for d in &ours {
            let theirs = rows
                .iter()
                .filter(|w| w["rank"].as_i64() == Some(d.device.rank as i64))
                .count();
            assert_eq!(d.host_apis.len(), theirs, "{level} rank {}", d.device.rank);
        }
        assert_eq!(compared, rows.len());
    }
}

#[test]
fn text_roots_link_and_name_their_idle() {
    for level in ["level0", "level1", "level2"] {
        let root = common::samples_dir().join("ascend-pt/text").join(level);
        let t = common::ingest(&root);
        let devs = devices::devices(&t);
        let d = dispatch::compute(&t, &devs, 1_000, 10);
        let b = bubbles::compute(&t, &devs, &BubbleOpts::default());
        assert_eq!(d.len(), 2);
        for (x, g) in d.iter().zip(&b) {
            let what = format!("text {level} rank {}", x.device.rank);
            // Level0 writes no CANN calls: the framework op's torch_to_npu flow links 211 of
            // the 531 tasks (stdlib Python over trace_view.json: tasks whose connection_id is
            // that of a task an async_npu flow ends on, rank 0).
            if level == "level0" {
                assert_eq!(x.link, Link::Flow, "{what}");
                if x.device.rank == 0 {
                    assert_eq!((x.tasks, x.linked_tasks), (531, 211), "{what}");
                }
            } else {
                assert_eq!(x.link, Link::ConnectionId, "{what}");
                assert_eq!(
                    x.linked_tasks, x.tasks,
                    "{what}: every task has its CANN call"
                );
            }
            assert!(
                g.named_pct_of_idle >= 80.0,
                "{what}: {}",
                g.named_pct_of_idle
            );
        }
        // The host API table of level1/2 equals torch_npu's own api_statistic.csv, for the
        // names that occur at one level only (the CSV splits a name by level).
        if level == "level0" {
            continue;
        }
        for x in &d {
            let csv = root
                .join(format!("rank{}_ascend_pt", x.device.rank))
                .join("ASCEND_PROFILER_OUTPUT/api_statistic.csv");
            let text = std::fs::read_to_string(&csv).unwrap();
            let mut by_name: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
            for line in text.lines().skip(1) {
                let c: Vec<&str> = line.split(',').collect();
                by_name
                    .entry(c[1].to_string())
                    .or_default()
                    .push((c[2].parse().unwrap(), c[3].parse().unwrap()));
            }
            let full = dispatch::compute(&t, &devs, 1_000, 10_000);
            let ours = &full
                .iter()
                .find(|y| y.device.rank == x.device.rank)
                .unwrap();
            let mut compared = 0;
            for (name, v) in &by_name {
                if v.len() != 1 {
                    continue;
                }
                let (time_us, count) = v[0];
                let s = ours.host_apis.iter().find(|s| &s.name == name).unwrap();
                assert_eq!(s.count as f64, count, "{level} {name}");
                // Time(us) is written with 2 decimals.
                close(s.sum_ns as f64 / 1e3, time_us, 0.005 + 1e-9, name);
                compared += 1;
            }
            assert!(compared > 40, "{level}: {compared} names compared");
        }
    }
}

#[test]
fn kineto_kernels_link_to_their_runtime_calls() {
    // python3: kernels / memcpy / memset X events whose args.correlation is that of a
    // cuda_runtime or cuda_driver X event of the same file: 1204 of 1204 in
    // torch-traces/timeline_analysis/sampled_rank-0.json.gz.
    let t = common::ingest(
        &common::samples_dir().join("torch-traces/timeline_analysis/sampled_rank-0.json.gz"),
    );
    let devs = devices::devices(&t);
    let d = dispatch::compute(&t, &devs, 1_000, 10);
    assert_eq!(d.iter().map(|x| x.tasks).sum::<u64>(), 1204);
    assert_eq!(d.iter().map(|x| x.linked_tasks).sum::<u64>(), 1204);
    assert!(d.iter().all(|x| x.link == Link::Correlation));
    // The runtime calls are the host APIs; the op above a call is a cpu_op enclosing it.
    let x = &d[0];
    assert!(x.host_apis.iter().any(|s| s.name == "cudaLaunchKernel"));
    assert!(
        x.slowest_empty_queue.iter().any(|r| r.op.is_some()),
        "{:?}",
        x.slowest_empty_queue
    );
}
