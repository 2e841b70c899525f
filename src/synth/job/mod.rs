//! `profscope synth --tp T --pp P --dp D [--ep E]`: a generated training job laid out as
//! Megatron-LM lays one out, written per rank as torch_npu's text export (see [`emit`]), with
//! collectives that end together on every member of their group ([`schedule`]), pipeline stages
//! joined by HCCL send / receive, an optional slow rank, slow stage and expert skew, and ranks
//! kept as vendor summaries only (`--summary-only`), as trimmed archives keep them. The ground
//! truth (`ground_truth.json`'s `job`) holds the layout, each rank's compute, pipeline wait and
//! expert tokens, counted from the schedule, not by re-reading the files.
//!
//! ```text
//! rank<r>_ascend_pt/profiler_info_<r>.json, profiler_metadata.json
//! rank<r>_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json, kernel_details.csv   (not summary-only)
//! rank<r>_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv, communication.json, analysis.db
//! ```

mod emit;
pub mod schedule;
pub mod topology;

use super::SynthError;
use rayon::prelude::*;
use schedule::{OpKind, RankTimeline, Slowness};
use serde::{Deserialize, Serialize};
use std::path::Path;
use topology::Topology;

#[derive(Debug, Clone)]
pub struct JobOpts {
    pub topology: Topology,
    pub steps: u32,
    pub microbatches: u32,
    pub slow: Slowness,
    /// Ranks written as vendor summaries only.
    pub summary_only: Vec<u32>,
    pub seed: u64,
}

/// One group as written in `parallel_group_info`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GroupTruth {
    pub id: String,
    pub name: String,
    /// The vendor's hash of the id (communication.json / analysis.db group name).
    pub hash: String,
    pub ranks: Vec<u32>,
}

/// One rank of the job, from the schedule.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobRankTruth {
    pub rank: u32,
    pub stage: u32,
    pub dp_index: u32,
    pub tp_index: u32,
    pub ep_index: u32,
    pub summary_only: bool,
    /// Sum of the compute tasks' durations, ns.
    pub compute_ns: i64,
    /// Sum of the `hcom_receive` ops' durations (the pipeline bubble torch_npu counts), ns.
    pub receive_ns: i64,
    pub send_ns: i64,
    /// Sum of all HCCL ops' durations, ns.
    pub comm_ns: i64,
    /// Tokens over the capture as msprof-analyze's ep_load_balance counts them (dim 0 of each
    /// GroupedMatmul's first input), and the GroupedMatmul time, ns.
    pub tokens: i64,
    pub grouped_matmul_ns: i64,
    /// Device step windows (first task start to last end per step), ns.
    pub step_ns: Vec<i64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobTruth {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub ep: u32,
    pub world: u32,
    pub steps: u32,
    pub microbatches: u32,
    pub slow_rank: Option<(u32, u32)>,
    pub slow_stage: Option<(u32, u32)>,
    pub expert_skew: f64,
    pub summary_only: Vec<u32>,
    pub groups: Vec<GroupTruth>,
    /// Ranks doing the same work (same stage and TP index: the data-parallel replicas).
    pub peer_sets: Vec<Vec<u32>>,
    pub ranks: Vec<JobRankTruth>,
}

/// Writes the job under `out` and returns its truth (also written as ground_truth.json).
pub fn generate(out: &Path, o: &JobOpts) -> Result<JobTruth, SynthError> {
    let t = o.topology;
    let groups = t.groups();
    let t0 = 1_736_408_883_000_000_000;
    let timelines = schedule::simulate(t, &groups, (o.steps, o.microbatches), &o.slow, o.seed, t0);
    let written: Result<Vec<JobRankTruth>, SynthError> = timelines
        .par_iter()
        .enumerate()
        .map(|(r, tl)| write_rank(out, r as u32, tl, o, &groups))
        .collect();
    let mut peer_sets: Vec<Vec<u32>> = Vec::new();
    for s in 0..t.pp {
        for k in 0..t.tp {
            peer_sets.push((0..t.dp).map(|d| t.rank(s, d, k)).collect());
        }
    }
    Ok(JobTruth {
        tp: t.tp,
        pp: t.pp,
        dp: t.dp,
        ep: t.ep,
        world: t.world(),
        steps: o.steps,
        microbatches: o.microbatches,
        slow_rank: o.slow.rank,
        slow_stage: o.slow.stage,
        expert_skew: o.slow.expert_skew,
        summary_only: o.summary_only.clone(),
        groups: groups
            .iter()
            .map(|g| GroupTruth {
                id: g.id.clone(),
                name: g.name.to_string(),
                hash: emit::group_label(g),
                ranks: g.ranks.clone(),
            })
            .collect(),
        peer_sets,
        ranks: written?,
    })
}

fn write_rank(
    out: &Path,
    rank: u32,
    tl: &RankTimeline,
    o: &JobOpts,
    groups: &[topology::JobGroup],
) -> Result<JobRankTruth, SynthError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| SynthError::Io {
            path: path.clone(),
            source,
        }
    };
    let (dir, prof) = super::rank_folder(out, rank)?;
    let meta = dir.join("profiler_metadata.json");
    emit::profiler_metadata(&meta, rank, &o.topology, groups).map_err(io(&meta))?;
    let summary_only = o.summary_only.contains(&rank);
    if !summary_only {
        let tv = prof.join("trace_view.json");
        emit::trace_view(&tv, rank, tl, groups).map_err(io(&tv))?;
        let kd = prof.join("kernel_details.csv");
        emit::kernel_details(&kd, tl).map_err(io(&kd))?;
    }
    let steps = emit::vendor_steps(tl);
    let st = prof.join("step_trace_time.csv");
    emit::step_trace_time(&st, &steps).map_err(io(&st))?;
    let cj = prof.join("communication.json");
    emit::communication_json(&cj, tl, groups).map_err(io(&cj))?;
    if summary_only {
        let adb = prof.join("analysis.db");
        emit::analysis_db(&adb, &steps).map_err(io(&adb))?;
    }
    Ok(rank_truth(rank, tl, o, summary_only))
}

fn rank_truth(rank: u32, tl: &RankTimeline, o: &JobOpts, summary_only: bool) -> JobRankTruth {
    let t = o.topology;
    let ops = |k: Option<OpKind>| -> i64 {
        tl.ops
            .iter()
            .filter(|x| k.is_none_or(|k| x.kind == k))
            .map(|x| x.end - x.start)
            .sum()
    };
    let gmm = tl.tasks.iter().filter(|x| x.name == "GroupedMatmul");
    let step_ns = tl
        .steps
        .iter()
        .map(|s| {
            let inside = |ts: i64| s.host_start <= ts && ts <= s.end;
            let starts = tl.tasks.iter().filter(|x| inside(x.start)).map(|x| x.start);
            let ends = tl
                .tasks
                .iter()
                .filter(|x| inside(x.start))
                .map(|x| x.start + x.dur);
            let op_s = tl.ops.iter().filter(|x| inside(x.start)).map(|x| x.start);
            let op_e = tl.ops.iter().filter(|x| inside(x.start)).map(|x| x.end);
            let first = starts.chain(op_s).min().unwrap_or(0);
            let last = ends.chain(op_e).max().unwrap_or(0);
            last - first
        })
        .collect();
    JobRankTruth {
        rank,
        stage: t.stage(rank),
        dp_index: t.dp_index(rank),
        tp_index: t.tp_index(rank),
        ep_index: t.ep_index(rank),
        summary_only,
        compute_ns: tl.tasks.iter().map(|x| x.dur).sum(),
        receive_ns: ops(Some(OpKind::Receive)),
        send_ns: ops(Some(OpKind::Send)),
        comm_ns: ops(None),
        tokens: gmm.clone().map(|x| x.tokens).sum(),
        grouped_matmul_ns: gmm.map(|x| x.dur).sum(),
        step_ns,
    }
}
