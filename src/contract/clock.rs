//! The report contract of `analysis::clock` and `analysis::collective_match`: each rank's clock
//! offset estimated from the collectives it shares with others, and the communication groups
//! with their matched ops, skew and slow rank (docs/analyses/cross_rank.md).

use crate::model::closed_set::closed_set;
use serde::{Deserialize, Serialize};

/// Fewest matched collectives an offset is estimated from (a median and its spread need three).
pub const MIN_CLOCK_COLLECTIVES: u64 = 3;

/// Offsets within this of zero are never corrected: collective ends of ranks on one host (one
/// clock) differ by 7-15 µs in the real 2-rank roots (the last transfer step ends on one rank
/// first), so a smaller offset is not told apart from that.
pub const CLOCK_FLOOR_NS: i64 = 20_000;

/// Collective ends of one job agree within the last transfer step; when the differences spread
/// wider than this (robust standard deviation), the ops paired are not the same collectives
/// (different runs, a drifting generator) and no offset is estimated from them.
pub const CLOCK_MAX_SPREAD_NS: i64 = 1_000_000;

/// An offset is corrected only when it exceeds this many robust standard deviations of the
/// per-collective differences it is the median of (and [`CLOCK_FLOOR_NS`]).
pub const CLOCK_NOISE_SIGMAS: f64 = 3.0;

closed_set! {
    /// What was done with one rank's clock.
    pub enum ClockStatus {
        /// The rank all others are measured against (the lowest rank of the cohort).
        Reference = "reference",
        /// In the same file as the reference, or on its host (db HOST_INFO, msprof info.json)
        /// with too few shared collectives to measure: taken as one clock (uncertainty
        /// [`CLOCK_FLOOR_NS`]).
        SameHost = "same_host",
        /// Estimated, and within its noise of zero: left alone.
        WithinNoise = "within_noise",
        /// Estimated beyond its noise: every timestamp of the rank is moved by the offset
        /// before any cross-rank comparison.
        Corrected = "corrected",
        /// Too few collectives shared with a rank of known clock: not estimated, not
        /// corrected, and claims comparing its times with others' are not confident.
        TooFewCollectives = "too_few_collectives",
        /// The shared collectives' ends disagree by more than [`CLOCK_MAX_SPREAD_NS`]: they do
        /// not pin a clock (different runs, unrelated ops); not corrected, and not confident.
        EndsDisagree = "ends_disagree",
    }
}

/// One rank's clock against the reference.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankClock {
    pub rank: i32,
    /// The rank it was measured against (its neighbour in the tree of shared collectives).
    pub relative_to_rank: i32,
    /// Estimate against `relative_to_rank`: the median over shared collectives of (this rank's
    /// end - that rank's end), ns.
    pub estimate_ns: i64,
    /// Robust spread of those differences (1.4826 × their median absolute deviation), ns.
    pub spread_ns: i64,
    /// The shared collectives the estimate is the median of.
    pub collectives: u64,
    /// What was subtracted from this rank's timestamps, against the reference rank (the
    /// corrected estimates along its path), ns.
    pub applied_ns: i64,
    pub status: ClockStatus,
}

/// The cohort's clocks.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Clocks {
    /// The rank every offset is against; -1 with fewer than two ranks.
    pub reference_rank: i32,
    pub corrected: u64,
    pub within_noise: u64,
    pub same_host: u64,
    pub too_few_collectives: u64,
    #[serde(default)]
    pub ends_disagree: u64,
    /// Largest |applied_ns| over the ranks, ns.
    pub max_abs_applied_ns: i64,
    /// False when some rank's clock could not be tied to the reference: then times compared
    /// across ranks (arrival, step starts) are not confident.
    pub confident: bool,
    pub statement: String,
    /// Every rank but the reference by default only those corrected or not estimated, largest
    /// offset first (`--detail full`: every rank).
    pub ranks: Vec<RankClock>,
}

/// One communicator group's collectives across its ranks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommGroup {
    /// As the input names it (HCCL `Group <name> Communication`); empty when the format names
    /// none (then one group holds every rank of the cohort).
    pub name: String,
    /// What the input says the group is for (`tp`, `dp`, `pp`, ...), else empty.
    pub kind: String,
    /// Ranks holding ops of this group.
    pub ranks: Vec<i32>,
    /// Op instances every member holds (matched by name, and by occurrence aligned on the
    /// sequence of op ends when a rank holds more or fewer of a name).
    pub matched: u64,
    /// Ops some member does not hold (warm-up, a cut capture), over all members.
    pub unmatched: u64,
    /// Names of unmatched ops with their counts, most first (at most 10).
    pub unmatched_names: Vec<(String, u64)>,
    /// Members whose sequence of a name was shifted to align (an op more or fewer at its start).
    pub realigned: u64,
    /// last start - first start of each matched op, after clock correction.
    pub skew_mean_ns: f64,
    pub skew_p50_ns: f64,
    pub skew_max_ns: i64,
    /// The member last into the most matched ops by total lateness (-1: none stands out or a tie).
    pub slow_rank: i32,
    pub slow_rank_last_into: u64,
    pub slow_rank_lateness_ns: i64,
}

/// The cohort's groups.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CommGroups {
    pub total: u64,
    /// Largest skew first; by default at most 20 (`--detail full`: all).
    pub groups: Vec<CommGroup>,
}
