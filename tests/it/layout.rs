//! The job's layout and the comparisons within its roles (issue 56; docs/analyses/layout.md).
//! Inputs: generated training jobs (`profscope synth --tp/--pp/--dp/--ep`, whose ground truth is
//! counted from the generator's schedule, not by re-reading its files), and copies of the real
//! ascend-pt db / text level1 roots and a real Kineto trace with `distributedInfo.pg_config`,
//! with layout metadata written into the copies where the real files have none.

use crate::common::{self, profscope_json, samples_dir};
use profscope::synth::job::{JobOpts, JobTruth, schedule::Slowness, topology::Topology};
use serde_json::Value;
use std::path::{Path, PathBuf};

struct Job {
    dir: PathBuf,
    truth: JobTruth,
}

impl Drop for Job {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn job(
    tag: &str,
    (tp, pp, dp, ep): (u32, u32, u32, u32),
    slow: Slowness,
    summary_only: &[u32],
) -> Job {
    let dir = std::env::temp_dir().join(format!("profscope-layout-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = JobOpts {
        topology: Topology { tp, pp, dp, ep },
        steps: 6,
        microbatches: 4,
        slow,
        summary_only: summary_only.to_vec(),
        seed: 7,
    };
    let truth = profscope::synth::generate_job(&dir, &o)
        .unwrap()
        .job
        .unwrap();
    Job { dir, truth }
}

fn analyze(dir: &Path) -> Value {
    profscope_json(&[
        "analyze",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "--quiet",
    ])
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

/// The comparison of `role` whose ranks are `ranks` and numbers `source`.
fn comparison<'a>(r: &'a Value, role: &str, ranks: &[i64], source: &str) -> &'a Value {
    r["analyses"]["layout"]["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["role"] == role && ints(&c["ranks"]) == ranks && c["source"] == source)
        .unwrap_or_else(|| panic!("no {role} comparison of {ranks:?} on {source}"))
}

/// TP2 x PP2 x DP2: every group the generator wrote (ids, names, ranks) and every rank's stage,
/// replica and shard are read back; the peer sets are the generator's.
#[test]
fn layout_of_a_generated_job_is_the_generators() {
    let j = job("tp2pp2dp2", (2, 2, 2, 1), Slowness::default(), &[]);
    let r = analyze(&j.dir);
    let l = &r["analyses"]["layout"];
    assert_eq!(l["world_size"], 8);
    assert_eq!(l["source"], "parallel_group_info");
    assert_eq!(l["sizes"]["tp"], 2);
    assert_eq!(r["analyses"]["ranks"]["expected"], 8);
    let groups = l["groups"].as_array().unwrap();
    for g in &j.truth.groups {
        let got = groups
            .iter()
            .find(|x| x["id"] == g.id.as_str())
            .unwrap_or_else(|| panic!("group {}", g.id));
        assert_eq!(got["name"], g.name.as_str());
        let want: Vec<i64> = g.ranks.iter().map(|&x| x as i64).collect();
        assert_eq!(ints(&got["ranks"]), want, "{}", g.id);
    }
    assert_eq!(groups.len(), j.truth.groups.len());
    for t in &j.truth.ranks {
        let got = &l["ranks"][t.rank as usize];
        assert_eq!(got["pp_stage"], t.stage, "rank {}", t.rank);
        assert_eq!(got["dp_index"], t.dp_index, "rank {}", t.rank);
        assert_eq!(got["tp_index"], t.tp_index, "rank {}", t.rank);
        assert_eq!(got["present"], true);
    }
    let sets: Vec<Vec<i64>> = l["peer_sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| ints(&p["ranks"]))
        .collect();
    let mut want: Vec<Vec<i64>> = j
        .truth
        .peer_sets
        .iter()
        .map(|p| p.iter().map(|&x| x as i64).collect())
        .collect();
    want.sort();
    assert_eq!(sets, want);
    // Identical replicas: nobody stands out, and the headline says so.
    assert!(
        l["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["stands_out"] == false)
    );
    let headline = r["headline"].as_array().unwrap();
    assert!(
        headline.iter().any(|h| h
            .as_str()
            .unwrap()
            .starts_with("no rank stands out within its peer set")),
        "{headline:?}"
    );
    // cross_rank does not compare across stages.
    let cohort = &r["analyses"]["cross_rank"]["cohorts"][0];
    assert!(cohort["slowest"].is_null() && cohort["waited_for"].is_null());
    assert!(
        cohort["not_compared"]
            .as_str()
            .unwrap()
            .contains("4 peer sets")
    );
}

/// `synth --ranks 4 --pp 2 --dp 2 --slow-rank 3` (the issue's case): rank 3 is named against its
/// peer, rank 2 (the same stage), by device time; no claim compares it with stage 0.
#[test]
fn a_slow_replica_is_named_against_its_peer() {
    let j = job(
        "slow3",
        (1, 2, 2, 1),
        Slowness {
            rank: Some((3, 150)),
            ..Default::default()
        },
        &[],
    );
    let r = analyze(&j.dir);
    let c = comparison(&r, "dp_replicas", &[2, 3], "events");
    assert_eq!(c["stage"], 1);
    assert_eq!(c["slowest"]["rank"], 3);
    assert_eq!(c["slowest"]["stands_out"], true);
    assert_eq!(c["slowest"]["steps"], 6);
    assert_eq!(c["step_mean_ns"]["max_rank"], 3);
    // Its computing over its peer's, per step: the generator's compute sums (all tasks, 6 steps)
    // differ by about half of rank 2's (150%), and the claim's mean excess is of that order.
    let (c2, c3) = (
        j.truth.ranks[2].compute_ns as f64,
        j.truth.ranks[3].compute_ns as f64,
    );
    let excess = c["slowest"]["mean_excess_ns"].as_f64().unwrap();
    let per_step = (c3 - c2) / 6.0;
    assert!(
        (excess - per_step).abs() < 0.1 * per_step,
        "excess {excess} vs truth {per_step}"
    );
    // Stage 0's late rank (1) is explained by its pipeline sends to and receives from rank 3.
    let s0 = comparison(&r, "dp_replicas", &[0, 1], "events");
    if s0["waited_for"]["stands_out"] == true {
        assert_eq!(s0["waited_for"]["rank"], 1);
        assert!(
            s0["explanation"]
                .as_str()
                .unwrap()
                .contains("pipeline sends and receives"),
            "{s0}"
        );
    }
    let headline: Vec<&str> = r["headline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    assert!(
        headline
            .iter()
            .any(|h| h.contains("stage 1, ranks 2, 3") && h.contains("rank 3 is the slowest")),
        "{headline:?}"
    );
    let advice = r["analyses"]["advisor"]["findings"].as_array().unwrap();
    assert!(advice.iter().any(|f| {
        f["rule"] == "slow_rank"
            && f["subject"]
                .as_str()
                .unwrap()
                .starts_with("rank 3 slowest among its peers")
    }));
}

/// A slow stage holds the pipeline: named with its excess; the others' receive wait is measured.
#[test]
fn a_slow_stage_is_named() {
    let j = job(
        "slowstage",
        (1, 4, 2, 1),
        Slowness {
            stage: Some((2, 150)),
            ..Default::default()
        },
        &[],
    );
    let r = analyze(&j.dir);
    let p = &r["analyses"]["layout"]["pipeline"];
    assert_eq!(p["stages"], 4);
    assert_eq!(p["slow_stage"]["stage"], 2);
    assert_eq!(p["slow_stage"]["stands_out"], true);
    assert_eq!(p["steps_compared"], 6);
    // Receive wait per stage against the generator's receive sums (6 steps, two ranks a stage).
    for s in p["per_stage"].as_array().unwrap() {
        let stage = s["stage"].as_u64().unwrap() as u32;
        let truth: Vec<i64> = j
            .truth
            .ranks
            .iter()
            .filter(|x| x.stage == stage)
            .map(|x| x.receive_ns)
            .collect();
        let want = truth.iter().sum::<i64>() as f64 / truth.len() as f64 / 6.0;
        let got = s["receive_ns_per_step"].as_f64().unwrap();
        assert!((got - want).abs() <= 1.0, "stage {stage}: {got} vs {want}");
    }
    let advice = r["analyses"]["advisor"]["findings"].as_array().unwrap();
    assert_eq!(advice[0]["rule"], "pipeline_stage");
    assert_eq!(advice[0]["subject"], "stage 2");
}

/// EP2 inside DP4 with expert index 0 of each EP group loaded 2x: both overloaded ranks are named,
/// with the generator's token counts.
#[test]
fn an_overloaded_expert_rank_is_named() {
    let j = job(
        "experts",
        (1, 1, 4, 2),
        Slowness {
            expert_skew: 2.0,
            ..Default::default()
        },
        &[],
    );
    let r = analyze(&j.dir);
    let groups = r["analyses"]["layout"]["experts"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    for g in groups {
        let ranks = g["ranks"].as_array().unwrap();
        for m in ranks {
            let rank = m["rank"].as_u64().unwrap() as usize;
            assert_eq!(
                m["tokens"].as_i64().unwrap(),
                j.truth.ranks[rank].tokens,
                "rank {rank}"
            );
            assert_eq!(
                m["grouped_matmul_ns"].as_i64().unwrap(),
                j.truth.ranks[rank].grouped_matmul_ns,
                "rank {rank}"
            );
        }
        let over = g["overloaded_rank"].as_u64().unwrap() as usize;
        assert_eq!(j.truth.ranks[over].ep_index, 0, "{g}");
        assert_eq!(g["imbalanced"], true);
        let ratio = g["tokens_max_over_mean"].as_f64().unwrap();
        assert!((ratio - 4.0 / 3.0).abs() < 0.05, "{ratio}");
    }
    let advice = r["analyses"]["advisor"]["findings"].as_array().unwrap();
    assert!(advice.iter().any(|f| f["rule"] == "expert_load"));
    // Balanced experts: no group is imbalanced, no advice.
    let j = job(
        "experts1",
        (1, 1, 4, 2),
        Slowness {
            expert_skew: 1.0,
            ..Default::default()
        },
        &[],
    );
    let r = analyze(&j.dir);
    assert!(
        r["analyses"]["layout"]["experts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["imbalanced"] == false)
    );
}

/// Two of four ranks kept as vendor summaries only (the issue's real export's shape): all four
/// ranks counted, the two summary ranks compared with their peers on the vendor's numbers and
/// audited, the headline says how many of each.
#[test]
fn summary_only_ranks_are_ranks() {
    let j = job(
        "summary",
        (1, 2, 2, 1),
        Slowness {
            rank: Some((3, 150)),
            ..Default::default()
        },
        &[1, 3],
    );
    let r = analyze(&j.dir);
    let k = &r["analyses"]["ranks"];
    assert_eq!(ints(&k["present"]), vec![0, 1, 2, 3]);
    assert_eq!(ints(&k["summary_only"]), vec![1, 3]);
    assert_eq!(ints(&k["cpu_only"]), Vec::<i64>::new());
    assert_eq!(k["expected"], 4);
    let v = &r["analyses"]["vendor_agreement"];
    assert_eq!(v["devices_total"], 4);
    assert_eq!(v["devices_checked"], 4);
    assert_eq!(v["devices_disagreeing"], 0);
    // Rank 3 (summary only) against rank 2 on the vendor's step tables.
    let c = comparison(&r, "dp_replicas", &[2, 3], "vendor");
    assert_eq!(c["slowest"]["rank"], 3);
    assert_eq!(c["slowest"]["stands_out"], true);
    let headline: Vec<&str> = r["headline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    assert!(
        headline
            .iter()
            .any(|h| h.contains("2 with device events, 2 with vendor summaries only")),
        "{headline:?}"
    );
    // Their environment advice runs like any rank's (profiler_metadata.json beside the summaries).
    let env: Vec<&Value> = r["analyses"]["advisor"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "environment_variables")
        .collect();
    assert!(!env.is_empty());
}

/// A copy of the real db/level1 root with distributed_args and parallel_group_info added to each
/// db's META_DATA (the real dbs have none; torch_npu writes them there for Megatron jobs): the
/// layout comes from META_DATA; the HCCL group of the real collectives is joined by its id.
#[test]
fn layout_from_a_real_db_roots_meta_data() {
    let src = samples_dir().join("ascend-pt/db/level1");
    let dir = std::env::temp_dir().join(format!("profscope-layout-db-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    common::copy_dir(&src, &dir);
    // The real group id of the 4 hcom_allReduce ops (COMMUNICATION_OP.groupName, rank 0's db).
    let id = "90.91.105.46%enp189s0f0_60000_0_1736410538306028";
    for rank in 0..2 {
        let db = dir.join(format!(
            "rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db"
        ));
        let c = rusqlite::Connection::open(&db).unwrap();
        let info = format!(
            r#"{{"{id}": {{"group_name": "dp", "group_rank": {rank}, "global_ranks": [0, 1]}}}}"#
        );
        let args = format!(
            r#"{{"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1, "data_parallel_size": 2, "rank": {rank}, "world_size": 2}}"#
        );
        c.execute(
            "INSERT INTO META_DATA VALUES ('parallel_group_info', ?1)",
            [&info],
        )
        .unwrap();
        c.execute(
            "INSERT INTO META_DATA VALUES ('distributed_args', ?1)",
            [&args],
        )
        .unwrap();
    }
    let r = analyze(&dir);
    let l = &r["analyses"]["layout"];
    assert_eq!(l["source"], "parallel_group_info");
    assert_eq!(l["world_size"], 2);
    assert_eq!(l["groups"][0]["kind"], "dp");
    assert_eq!(ints(&l["peer_sets"][0]["ranks"]), vec![0, 1]);
    // The one DP pair is the whole cohort: cross_rank compares it as before.
    let cohort = &r["analyses"]["cross_rank"]["cohorts"][0];
    assert_eq!(cohort["not_compared"], "");
    assert_eq!(cohort["groups"]["groups"][0]["kind"], "dp");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A real text export read from its kernel_details.csv alone (no trace_view.json) still reads its
/// profiler_metadata.json: the environment advice the real file calls for (ACLNN_CACHE_LIMIT and
/// HOST_CACHE_CAPACITY unset, msprof-analyze's conditions) is given.
#[test]
fn a_csv_only_export_reads_its_profiler_metadata() {
    let src = samples_dir().join("ascend-pt/text/level1");
    let dir = std::env::temp_dir().join(format!("profscope-layout-csv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    common::copy_dir(&src, &dir);
    for rank in 0..2 {
        std::fs::remove_file(dir.join(format!(
            "rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
        )))
        .unwrap();
    }
    let r = analyze(&dir);
    let files = r["summary"]["files"].as_array().unwrap();
    assert!(
        files.iter().all(|f| f["format"] == "kernel_csv"),
        "{files:?}"
    );
    let subjects: Vec<&str> = r["analyses"]["advisor"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "environment_variables")
        .map(|f| f["subject"].as_str().unwrap())
        .collect();
    assert!(
        subjects.iter().any(|s| s.contains("ACLNN_CACHE_LIMIT")),
        "{subjects:?}"
    );
    assert!(
        subjects.iter().any(|s| s.contains("HOST_CACHE_CAPACITY")),
        "{subjects:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The real Kineto trace of a 300-rank CPU job states 11 process groups with their ranks
/// (`distributedInfo.pg_config`, 11 entries though `pg_count` says 10, counted with python3's json module: pg `0` is `default_pg`
/// over ranks 0-299): the layout lists them, the world is 300, 299 ranks missing.
#[test]
fn kineto_process_groups_with_their_ranks() {
    let f =
        samples_dir().join("torch-traces/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    let r = analyze(&f);
    let l = &r["analyses"]["layout"];
    assert_eq!(l["world_size"], 300);
    let groups = l["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 11);
    let world = groups.iter().find(|g| g["id"] == "0").unwrap();
    assert_eq!(world["kind"], "world");
    assert_eq!(world["name"], "default_pg");
    assert_eq!(world["ranks"].as_array().unwrap().len(), 300);
    assert_eq!(r["analyses"]["ranks"]["expected"], 300);
    assert_eq!(
        r["analyses"]["ranks"]["missing"].as_array().unwrap().len(),
        299
    );
}

/// Issue 61 item 11: two db ranks whose RANK_DEVICE_MAP both say rank 0 (a copy of the real
/// db/level1 root with rank 1's row changed) stay two ranks, as their folders'
/// profiler_info_<rank>.json say, with a `rank_mismatch` warning naming the file.
#[test]
fn db_rank_ids_that_collide_are_named_and_resolved_by_the_folder() {
    let src = samples_dir().join("ascend-pt/db/level1");
    let dir = std::env::temp_dir().join(format!("profscope-layout-rankmap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    common::copy_dir(&src, &dir);
    let db = dir.join("rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("UPDATE RANK_DEVICE_MAP SET rankId = 0", [])
        .unwrap();
    let r = analyze(&dir);
    assert_eq!(ints(&r["analyses"]["ranks"]["present"]), vec![0, 1]);
    let ex = common::diag_examples(&r, "rank_mismatch");
    assert_eq!(ex.len(), 1, "{ex:?}");
    assert!(
        ex[0].contains("ascend_pytorch_profiler_1.db") && ex[0].contains("says rank 0"),
        "{ex:?}"
    );
    assert_eq!(
        r["analyses"]["cross_rank"]["cohorts"][0]["ranks"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let _ = std::fs::remove_dir_all(&dir);
}
