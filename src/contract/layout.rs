//! The report contract of `analysis::cluster`: the job's parallel layout (who does which work),
//! the comparisons made within the roles where they mean something (data-parallel replicas of
//! one stage, the members of one tensor-parallel group), the pipeline across stages and the
//! expert-parallel load. Their computation lives in `analysis/cluster/`.

use super::cross_rank::{Slowest, WaitedFor};
use crate::model::closed_set::closed_set;
use serde::{Deserialize, Serialize};

closed_set! {
    /// What a process group is for, from the job's documented group names.
    pub enum GroupKind {
        Tp = "tp",
        Pp = "pp",
        Dp = "dp",
        Cp = "cp",
        Ep = "ep",
        Edp = "edp",
        World = "world",
        Other = "other",
    }
}

closed_set! {
    /// Where the layout came from, most authoritative first.
    #[derive(Default)]
    pub enum LayoutSource {
        /// `distributed_args` (profiler_metadata.json, the db's META_DATA): the parallel sizes,
        /// ranks placed in Megatron-LM's order.
        DistributedArgs = "distributed_args",
        /// `parallel_group_info` (profiler_metadata.json, META_DATA) or a Kineto header's
        /// `distributedInfo.pg_config`: each group's ranks.
        GroupInfo = "parallel_group_info",
        /// Nothing states it: groups from the collectives the ranks share, stages from the
        /// pipeline's send / receive pairs.
        Inferred = "inferred",
        /// Nothing states it and nothing could be inferred.
        #[default]
        None = "none",
    }
}

closed_set! {
    /// Which numbers a comparison rests on.
    pub enum CompareSource {
        /// profscope's own, from the device events.
        Events = "events",
        /// The vendor's summaries (step_trace_time.csv / StepTraceTime, communication.json /
        /// CommAnalyzerTime): every member has them, not every member has events.
        Vendor = "vendor",
    }
}

/// The parallel sizes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sizes {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub cp: u32,
    pub ep: u32,
}

/// One process group of the job.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LayoutGroup {
    /// The group id (`parallel_group_info`'s key, a Kineto `pg_name`), or the collective group's
    /// name when inferred.
    pub id: String,
    /// The job's name for it (`dp`, `tp`, `exp`, `default_group`, ...; empty when inferred).
    pub name: String,
    pub kind: GroupKind,
    pub ranks: Vec<i32>,
}

/// One rank's place in the job; None where the layout does not say.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankRole {
    pub rank: i32,
    pub pp_stage: Option<u32>,
    pub dp_index: Option<u32>,
    pub tp_index: Option<u32>,
    pub ep_index: Option<u32>,
    /// A file of this rank was read.
    pub present: bool,
    /// Read from the vendor's summaries only (no events).
    pub summary_only: bool,
}

/// Ranks that do the same work (same stage, TP and CP index: the data-parallel replicas).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeerSet {
    pub stage: Option<u32>,
    pub tp_index: Option<u32>,
    pub ranks: Vec<i32>,
}

/// A distribution over ranks with the ranks at its ends.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RankSpread {
    pub min: f64,
    pub min_rank: i32,
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
    pub max_rank: i32,
}

/// The ranks of one peer set (or one TP group) compared with each other.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeerComparison {
    /// `dp_replicas` (a peer set) or `tp_group`.
    pub role: String,
    pub stage: Option<u32>,
    /// The ranks compared (the members with numbers of `source`).
    pub ranks: Vec<i32>,
    /// Members left out (no numbers of `source`).
    pub missing: Vec<i32>,
    pub source: CompareSource,
    pub steps_compared: u64,
    /// The slowest member by device time (None with no compared step).
    pub slowest: Option<Slowest>,
    /// The member the others wait for in their shared collectives.
    pub waited_for: Option<WaitedFor>,
    /// Each member's mean device step time, ns.
    pub step_mean_ns: RankSpread,
    /// Each member's computing share of its step windows, %.
    pub computing_pct: RankSpread,
    /// True when `slowest` or `waited_for` names a member.
    pub stands_out: bool,
    /// When the member the others wait for itself waits longer than its peers in pipeline
    /// receives: the delay comes from the stage it receives from (empty otherwise).
    #[serde(default)]
    pub explanation: String,
}

/// One stage's numbers per step (means over its members and the compared steps).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageRow {
    pub stage: u32,
    pub ranks: Vec<i32>,
    pub source: CompareSource,
    pub computing_ns_per_step: f64,
    /// Time in pipeline receives (HCCL `hcom_receive`, NCCL SendRecv): waiting for the stage
    /// before (forward) or after (backward), what torch_npu calls the bubble.
    pub receive_ns_per_step: f64,
    pub send_ns_per_step: f64,
    pub step_ns_per_step: f64,
    /// Steps in which this stage computed the most.
    pub slowest_in_steps: u64,
}

/// The stage the others wait for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SlowStage {
    pub stage: u32,
    pub steps: u64,
    pub of_steps: u64,
    /// Its computing over the other stages' median, per step where it was the slowest, ns.
    pub mean_excess_ns: f64,
    pub p_value: f64,
    pub stands_out: bool,
}

/// The pipeline across stages.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pipeline {
    pub stages: u32,
    pub steps_compared: u64,
    pub per_stage: Vec<StageRow>,
    pub slow_stage: Option<SlowStage>,
    /// Receive time summed over the stages, per step, ns (the pipeline bubble).
    pub bubble_ns_per_step: f64,
    pub statement: String,
}

/// One member of an expert-parallel group.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExpertRank {
    pub rank: i32,
    /// Tokens routed to the rank's experts: dim 0 of each `GroupedMatmul`'s inputs except the
    /// last two non-empty ones (weights and group list), summed (msprof-analyze ep_load_balance).
    pub tokens: i64,
    pub grouped_matmul_tasks: u64,
    pub grouped_matmul_ns: i64,
}

/// The expert load of one expert-parallel group.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExpertGroup {
    pub group: String,
    pub ranks: Vec<ExpertRank>,
    pub tokens_max_over_mean: f64,
    pub tokens_max_minus_min: i64,
    /// The rank with the most tokens.
    pub overloaded_rank: i32,
    /// The slowest member's GroupedMatmul time minus the group's mean, ns.
    pub time_at_stake_ns: i64,
    /// True when the load is imbalanced by more than [`EXPERT_IMBALANCE`].
    pub imbalanced: bool,
    pub statement: String,
}

/// An EP group whose max / mean tokens reach this is imbalanced.
pub const EXPERT_IMBALANCE: f64 = 1.2;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Layout {
    /// Ranks of the job; None when nothing says.
    pub world_size: Option<u32>,
    /// Which file said so (or `inferred` / empty).
    pub world_size_source: String,
    pub source: LayoutSource,
    /// The parallel sizes when `distributed_args` states them.
    pub sizes: Option<Sizes>,
    pub groups: Vec<LayoutGroup>,
    pub ranks: Vec<RankRole>,
    pub peer_sets: Vec<PeerSet>,
    /// Sources that disagree, named.
    pub warnings: Vec<String>,
    /// Comparisons within peer sets and TP groups.
    pub comparisons: Vec<PeerComparison>,
    pub pipeline: Option<Pipeline>,
    pub experts: Vec<ExpertGroup>,
    /// One line: the layout, where it came from, what is compared.
    pub statement: String,
}
