//! Agreement with msprof-analyze 26.2.0 (Huawei's own analysis tool) on the real 2-rank db root
//! ../shared/samples/ascend-pt/db/level1 (torch_npu Level1, export db). Expected values:
//! tests/expected/msprof_analyze_26.2.0.json, written by tests/tools/run_msprof_analyze.py
//! (command and venv set-up in that script; it runs `msprof-analyze cluster -d <copy of the root>
//! -m compute_op_sum | hccl_sum | cluster_time_summary` and dumps its output tables). Nothing here
//! runs the peer; the file records what it said.

use crate::common;

use profscope::analysis::{communication, device_time, devices, op_types};
use serde_json::Value;
use std::collections::BTreeMap;

fn expected(mode: &str, table: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/expected/msprof_analyze_26.2.0.json"),
    )
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["modes"][mode]["tables"][table]
        .as_array()
        .unwrap()
        .clone()
}

fn ingest() -> profscope::model::Tables {
    common::ingest(&common::samples_dir().join("ascend-pt/db/level1"))
}

fn num(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// compute_op_sum: per rank, per (op type, task type): count, sum, mean, min, quartiles, max
/// equal; std equal after converting our population std to pandas' sample std.
#[test]
fn op_types_equal_compute_op_sum() {
    let t = ingest();
    let ours = op_types::compute(&t, &devices::devices(&t));
    assert_eq!(ours.len(), 2);
    let mut got: BTreeMap<(i64, String, String), &profscope::analysis::stats::DurStats> =
        BTreeMap::new();
    for o in &ours {
        for r in &o.rows {
            got.insert(
                (o.device.rank as i64, r.op_type.clone(), r.task_type.clone()),
                &r.stats,
            );
        }
    }
    let want = expected("compute_op_sum", "ComputeOpPerRankStatsByOpType");
    assert_eq!(want.len(), 66);
    assert_eq!(
        got.len(),
        want.len(),
        "same (rank, op type, task type) groups"
    );
    for w in &want {
        let key = (
            w["Rank"].as_i64().unwrap(),
            w["OpType"].as_str().unwrap().to_string(),
            w["TaskType"].as_str().unwrap().to_string(),
        );
        let s = got.get(&key).unwrap_or_else(|| panic!("{key:?} missing"));
        assert_eq!(s.count as f64, num(w, "Count"), "{key:?}");
        assert_eq!(s.sum_ns as f64, num(w, "SumNs"), "{key:?}");
        assert_eq!(s.min_ns as f64, num(w, "MinNs"), "{key:?}");
        assert_eq!(s.max_ns as f64, num(w, "MaxNs"), "{key:?}");
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
        assert!(close(s.mean_ns, num(w, "MeanNs")), "{key:?} mean");
        assert!(close(s.p25_ns, num(w, "Q1Ns")), "{key:?} q1");
        assert!(close(s.p50_ns, num(w, "MedianNs")), "{key:?} median");
        assert!(close(s.p75_ns, num(w, "Q3Ns")), "{key:?} q3");
        if s.count > 1 {
            let n = s.count as f64;
            let sample_std = s.std_ns * (n / (n - 1.0)).sqrt();
            assert!(close(sample_std, num(w, "StdNs")), "{key:?} std");
        }
    }
}

/// hccl_sum: per rank, collective ops (count, sum, min, max) by op type; per op name over ranks.
#[test]
fn collectives_equal_hccl_sum() {
    let t = ingest();
    let devs = devices::devices(&t);
    let comm = communication::compute(&t, &devs);
    for w in expected("hccl_sum", "HcclPerRankStats") {
        let rank = w["Rank"].as_i64().unwrap() as i32;
        let c = comm.iter().find(|c| c.device.rank == rank).unwrap();
        assert_eq!(c.comm_kernels_source, "hccl_group_ops");
        assert_eq!(c.comm_kernels.count as f64, num(&w, "Count"));
        assert_eq!(c.comm_kernels.sum_ns as f64, num(&w, "SumNs"));
        assert_eq!(c.comm_kernels.max_ns as f64, num(&w, "MaxNs"));
        // Its op type is the op name without the `_<group>_<index>_<n>` suffix.
        let d = devs.iter().find(|d| d.evidence.rank == rank).unwrap();
        for &i in &d.comm_ops {
            let name = t.event_name(i as usize);
            let op_type = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '_');
            assert_eq!(format!("{op_type}_"), w["OpType"].as_str().unwrap());
        }
    }
    let mut by_name: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for d in &devs {
        for &i in &d.comm_ops {
            let e = by_name
                .entry(t.event_name(i as usize).to_string())
                .or_default();
            e.0 += 1;
            e.1 += t.events.dur_ns.at(i as usize);
        }
    }
    let want = expected("hccl_sum", "HcclTopOpStats");
    assert_eq!(by_name.len(), want.len());
    for w in want {
        let (n, s) = by_name[w["OpName"].as_str().unwrap()];
        assert_eq!((n as f64, s as f64), (num(&w, "Count"), num(&w, "SumNs")));
    }
}

/// cluster_time_summary (µs, rounded to ns here): computation, communication, its overlapped
/// and not-overlapped parts, memory (MEMCPY_ASYNC), memory not overlapped, and its Free, which is
/// the vendor's Free minus copy time overlapped by nothing (our `free_excluding_async_copy_ns`;
/// our `free_ns` is torch_npu's StepTraceTime Free, checked in tests/it/ascend_db.rs).
#[test]
fn device_time_equals_cluster_time_summary() {
    let t = ingest();
    let dt = device_time::compute(&t, &devices::devices(&t));
    let ns = |us: f64| (us * 1000.0).round() as i64;
    let want = expected("cluster_time_summary", "ClusterTimeSummary");
    assert_eq!(want.len(), 2);
    for w in want {
        let rank = w["rank"].as_i64().unwrap() as i32;
        let d = dt.iter().find(|d| d.device.rank == rank).unwrap();
        let tag = format!("rank {rank}");
        assert_eq!(d.computing_ns, ns(num(&w, "computation")), "{tag}");
        assert_eq!(d.communication_ns, ns(num(&w, "communication")), "{tag}");
        assert_eq!(
            d.communication_not_overlapped_ns,
            ns(num(&w, "communicationNotOverlapComputation")),
            "{tag}"
        );
        assert_eq!(
            d.overlapped_ns,
            ns(num(&w, "communicationOverlapComputation")),
            "{tag}"
        );
        assert_eq!(d.async_copy_ns, ns(num(&w, "memory")), "{tag}");
        assert_eq!(
            d.async_copy_not_overlapped_ns,
            ns(num(&w, "memoryNotOverlapComputationCommunication")),
            "{tag}"
        );
        assert_eq!(d.free_excluding_async_copy_ns, ns(num(&w, "free")), "{tag}");
        // Its stepTime is the host STEP_TIME span of ProfilerStep#50, in our steps table.
        let f = (0..t.files.len())
            .find(|&f| t.files.rank[f] == rank)
            .unwrap();
        let s = (0..t.steps.len())
            .find(|&s| t.steps.file[s].idx() == f && t.steps.step[s] == num(&w, "step") as i64)
            .unwrap();
        assert_eq!(
            t.steps.end_ns[s] - t.steps.start_ns[s],
            ns(num(&w, "stepTime")),
            "{tag}"
        );
    }
}

/// cluster_time_summary again, now against `analyze`'s cross-rank result (file by file, one
/// cohort of the two db ranks, step ProfilerStep#50): every per-rank column, including the
/// collective wait / transmit split, which needs both ranks (transmit = the faster rank's
/// duration of each matched collective; wait = own duration minus that).
#[test]
fn cross_rank_equals_cluster_time_summary() {
    let root = common::samples_dir().join("ascend-pt/db/level1");
    let o = profscope::pipeline::RunOpts {
        analyze: Default::default(),
        phase: None,
        jobs: 2,
        max_memory: u64::MAX,
        cache: None,
        ..profscope::pipeline::RunOpts::new(Default::default(), None)
    };
    let r = profscope::pipeline::run(&[root], &o, &Default::default()).unwrap();
    let c = &r.analyses.cross_rank.cohorts;
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].step_source, "ProfilerStep");
    let ns = |us: f64| (us * 1000.0).round() as i64;
    for w in expected("cluster_time_summary", "ClusterTimeSummary") {
        let rank = w["rank"].as_i64().unwrap() as i32;
        let x = c[0].ranks.iter().find(|x| x.device.rank == rank).unwrap();
        let tag = format!("rank {rank}");
        assert_eq!(x.steps, 1, "{tag}");
        let pairs = [
            (x.host_step_ns, "stepTime"),
            (x.computing_ns, "computation"),
            (x.communication_ns, "communication"),
            (
                x.communication_not_overlapped_ns,
                "communicationNotOverlapComputation",
            ),
            (x.async_copy_ns, "memory"),
            (
                x.async_copy_not_overlapped_ns,
                "memoryNotOverlapComputationCommunication",
            ),
            (x.free_excluding_async_copy_ns, "free"),
            (x.collective_transit_ns, "communicationTransmitStageTime"),
            (x.collective_wait_ns, "communicationWaitStageTime"),
        ];
        for (ours, col) in pairs {
            assert_eq!(ours, ns(num(&w, col)), "{tag} {col}");
        }
    }
    // Rank 1 entered the first collective last (rank 0 waited 3.5 ms for it), so it is the
    // slowest rank of the step. It also starts the other three 9.7-15.4 µs after rank 0, but its
    // ends are later by the same amount (COMMUNICATION_OP, sqlite3: end differences 15.5, 14.3,
    // 9.6, 14.8 µs; median 14.5 µs): that is the two processes' clocks, within the 20 µs floor,
    // not an arrival order, so those three are ties.
    let s = c[0].slowest.as_ref().unwrap();
    assert_eq!((s.rank, s.steps, s.of_steps), (1, 1, 1));
    assert_eq!(c[0].ranks[1].last_to_start_collectives, 1);
    assert_eq!(c[0].clock.ranks[0].status.as_str(), "within_noise");
    assert_eq!(c[0].clock.ranks[0].estimate_ns, 14_516);
}
