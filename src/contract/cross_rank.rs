//! The report contract of `analysis::cross_rank`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/cross_rank.rs`.

use super::*;
use crate::model::closed_set::closed_set;
use serde::{Deserialize, Serialize};

/// One step of one device.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepRow {
    /// `ProfilerStep#N` or `forward_cudagraph` etc.
    pub label: String,
    /// N of ProfilerStep#N, else the ordinal of the forward scope in the file (from 0).
    pub key: i64,
    /// Duration of the host step (STEP_TIME row, ProfilerStep or forward scope event).
    pub host_ns: i64,
    /// The device step window: first start to last end of the step's compute kernels and
    /// collectives (device_time's window, per step).
    pub start_ns: i64,
    pub end_ns: i64,
    pub computing_ns: i64,
    pub communication_ns: i64,
    pub communication_not_overlapped_ns: i64,
    /// Window minus the union of computing and communication.
    pub free_ns: i64,
    /// MEMCPY_ASYNC task time, and the part of it that overlaps neither computing nor
    /// communication (msprof-analyze's `memory` and `memoryNotOverlapComputationCommunication`).
    pub async_copy_ns: i64,
    pub async_copy_not_overlapped_ns: i64,
    pub compute_kernels: u64,
    /// Idle gaps of at least the bubble threshold between computing and communication inside
    /// the step window, and their total (≤ `free_ns`, which also counts shorter gaps).
    pub bubbles: u64,
    pub bubble_ns: i64,
}

/// One device's steps, summarised.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankSteps {
    pub device: DeviceRef,
    pub steps: u64,
    /// Device step windows (first start to last end of the step's compute and collectives).
    pub step_mean_ns: f64,
    /// Median by linear interpolation (stats::quantile; numpy's default).
    pub step_p50_ns: f64,
    pub step_max_ns: i64,
    /// Host step durations (STEP_TIME / ProfilerStep / forward scope), summed and mean.
    pub host_step_ns: i64,
    pub host_step_mean_ns: f64,
    /// Sums over the rank's steps (the same definitions as device_time, per step window).
    pub computing_ns: i64,
    pub communication_ns: i64,
    pub communication_not_overlapped_ns: i64,
    pub free_ns: i64,
    pub async_copy_ns: i64,
    pub async_copy_not_overlapped_ns: i64,
    /// `free_ns` minus copy time that overlaps nothing (msprof-analyze's `free`).
    pub free_excluding_async_copy_ns: i64,
    /// Computing / exposed communication / free as % of the summed device step windows.
    pub computing_pct: f64,
    pub communication_not_overlapped_pct: f64,
    pub free_pct: f64,
    /// Bubbles (gaps ≥ the bubble threshold in computing ∪ communication) inside the steps:
    /// count, total, and mean count per step.
    pub bubbles: u64,
    pub bubble_ns: i64,
    pub bubbles_per_step: f64,
    /// Collectives matched on every rank: summed duration split into transit (the fastest
    /// rank's duration of each op, when every rank is in it) and wait (own duration minus that:
    /// time spent waiting for the other ranks). msprof-analyze's communicationTransmitStageTime
    /// and communicationWaitStageTime.
    pub collective_transit_ns: i64,
    pub collective_wait_ns: i64,
    /// Steps (compared across all ranks) in which this rank was the slowest.
    pub slowest_in_steps: u64,
    /// Collectives (matched across all ranks) this rank started last.
    pub last_to_start_collectives: u64,
    /// The per-step values the noise-aware diff gate resamples (docs/diff.md).
    #[serde(default)]
    pub samples: StepSamples,
}

/// The most steps per device kept in [`StepSamples`] (the first ones, in step order).
pub const MAX_STEP_SAMPLES: usize = 4096;

/// One device's steps as samples, in step order, the first [`MAX_STEP_SAMPLES`] of them: the
/// device step window and its computing, exposed communication and free time, ns.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StepSamples {
    pub step_ns: Vec<i64>,
    pub computing_ns: Vec<i64>,
    pub communication_not_overlapped_ns: Vec<i64>,
    pub free_ns: Vec<i64>,
}

closed_set! {
    /// Where a host step window came from.
    pub enum StepSource {
        /// `ProfilerStep#N` (db STEP_TIME or host events).
        ProfilerStep = "ProfilerStep",
        /// The device's `Iteration N` (legacy CANN step trace).
        StepTrace = "Step Trace",
        /// `forward_eager` / `forward_cudagraph` scopes, numbered in order.
        ForwardScopes = "forward scopes",
        None = "none",
    }
}

closed_set! {
    /// What makes the slowest rank of a step slow: more computing or more free time than the
    /// other ranks' median.
    pub enum SlowReason {
        Computing = "computing",
        Free = "free",
    }
}

/// One step compared across ranks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepCompare {
    pub label: String,
    pub key: i64,
    pub step_min_ns: i64,
    pub step_max_ns: i64,
    pub slowest_rank: i32,
    pub slowest_file: String,
    /// Which exceeds the other ranks' median by more.
    pub reason: SlowReason,
    /// The slowest rank's computing (or free) time above the other ranks' median, ns.
    pub excess_ns: i64,
    /// Compute kernels per rank differ in this step.
    pub kernel_counts_differ: bool,
    /// The rank whose device started the step last, and by how much after the first rank
    /// (each rank's step window starts at its own first kernel, which alone hides late arrival).
    pub last_start_rank: i32,
    pub start_spread_ns: i64,
}

/// The rank the others wait for in collectives: the one that arrives last most often.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WaitedFor {
    pub rank: i32,
    pub file: String,
    /// Matched collectives this rank started last, of `of_collectives`.
    pub last_into: u64,
    pub of_collectives: u64,
    /// Mean of (its start − the first rank's start) over the collectives it started last.
    pub mean_lateness_ns: f64,
    /// Its own collective wait, and the median of the other ranks' (the late rank waits least).
    pub wait_ns: i64,
    pub others_median_wait_ns: f64,
    /// True when it is last into more collectives than ranks arriving last in turn would make
    /// it: `p_value` below [`SIGNIFICANCE`]. False: "no rank stands out".
    pub stands_out: bool,
    /// Binomial tail P(X ≥ last_into) over the collectives with one last rank, chance 1/ranks,
    /// times the rank count (Bonferroni); 1 when no single rank is the candidate.
    pub p_value: f64,
    pub statement: String,
}

/// The rank that is slowest most often.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Slowest {
    pub rank: i32,
    pub file: String,
    pub steps: u64,
    pub of_steps: u64,
    /// The reason in most of those steps.
    pub reason: SlowReason,
    /// Mean excess over the other ranks' median in those steps, ns.
    pub mean_excess_ns: f64,
    /// True when it is slowest in more steps than ranks taking turns would make it: `p_value`
    /// below [`SIGNIFICANCE`]. False: "no rank stands out" (`rank` is -1 on a tie).
    pub stands_out: bool,
    /// Binomial tail P(X ≥ steps) over the compared steps, chance 1/ranks, times the rank
    /// count (Bonferroni); 1 when no single rank is the candidate.
    pub p_value: f64,
    pub statement: String,
}

/// A claim about one rank ("slowest", "arrives latest") is made only below this p-value.
pub const SIGNIFICANCE: f64 = 0.05;

/// One collective op matched across ranks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkewedCollective {
    pub name: String,
    /// Its communicator group (empty when the format names none).
    #[serde(default)]
    pub group: String,
    /// n-th op of that name (from 0).
    pub occurrence: u64,
    pub first_start_ns: i64,
    pub skew_ns: i64,
    pub first_rank: i32,
    pub last_rank: i32,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CollectiveSkew {
    /// Op instances present on every rank of their communicator group (matched by group, name
    /// and aligned occurrence; see `groups`).
    pub matched: u64,
    /// Ops some member of their group lacks, over all ranks.
    pub unmatched: u64,
    /// Matched ops whose last start belongs to one rank (the others tie for last).
    #[serde(default)]
    pub with_one_last: u64,
    pub skew_mean_ns: f64,
    /// Median by linear interpolation (stats::quantile; numpy's default).
    pub skew_p50_ns: f64,
    pub skew_max_ns: i64,
    /// Largest skews first.
    pub top: Vec<SkewedCollective>,
}

/// Ranks of one format compared.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cohort {
    /// File format of the compared files.
    #[serde(deserialize_with = "crate::static_names::name")]
    pub format: crate::static_names::Name,
    /// Step definition used by the ranks (`ProfilerStep`, `forward scopes`, mixed as listed).
    pub step_source: String,
    pub ranks: Vec<RankSteps>,
    /// Steps present on every rank (matched by key).
    pub steps_compared: u64,
    /// Steps some rank lacks.
    pub steps_unmatched: u64,
    /// Compared steps in which the ranks ran different numbers of compute kernels.
    pub kernel_count_mismatch_steps: u64,
    /// By device time: the rank with the most computing + free time in most steps.
    pub slowest: Option<Slowest>,
    /// By arrival: the rank whose late starts add up to the most time behind the first rank
    /// (None with fewer than 2 ranks or no matched collective). When it differs from `slowest`, the others wait for this one.
    pub waited_for: Option<WaitedFor>,
    /// Compared steps with the largest step-time spread (max - min) first.
    pub widest_steps: Vec<StepCompare>,
    pub collectives: CollectiveSkew,
    /// Each rank's clock against the reference rank, estimated from collective ends and
    /// corrected before every comparison above.
    #[serde(default)]
    pub clock: Clocks,
    /// The communicator groups: members, matched ops, skew and slow rank per group.
    #[serde(default)]
    pub groups: CommGroups,
    /// Every rank's row summarized (kept whole when the rows are capped to the ranks that matter).
    #[serde(default)]
    pub distribution: RankDistribution,
    /// Why `slowest` and `waited_for` are not given when the cohort's ranks do different work
    /// (pipeline stages, different kernel mixes); empty when they are compared.
    #[serde(default)]
    pub not_compared: String,
}

/// Min, 10th, 50th, 90th percentile and max (linear interpolation, stats::quantile).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Spread5 {
    pub min: f64,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
}

/// The cohort's per-rank rows as distributions, and each rank's mean step time for a heat map.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RankDistribution {
    pub ranks: u64,
    pub step_mean_ns: Spread5,
    pub computing_pct: Spread5,
    pub free_pct: Spread5,
    pub collective_wait_ns: Spread5,
    pub last_to_start_collectives: Spread5,
    /// (rank, mean device step time ns), in rank order: every rank.
    pub step_mean_ns_by_rank: Vec<(i32, i64)>,
    /// (rank, mean computing time per step ns), in rank order: every rank. In a job whose ranks
    /// wait for each other in lock step the step times match; a slow rank shows here.
    #[serde(default)]
    pub computing_mean_ns_by_rank: Vec<(i32, i64)>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CrossRank {
    /// One per file format; a cohort of one device has its step summary but no comparison.
    pub cohorts: Vec<Cohort>,
}
