//! The gaps of one device tallied as they are classified (totals, the length histogram, the
//! totals per cause, the idle nothing in the trace explains, the candidates for the largest N),
//! and the largest gaps with their neighbours' names, launch details and blocking calls.

use super::host_block::frames;
use super::{BUCKETS, Cause, CauseTotal, Gap, HistogramBucket, HostBlock, neighbour};
use crate::analysis::dispatch::{self, Launch};
use crate::analysis::stats::pct;
use crate::model::Tables;
use std::collections::BTreeMap;

/// A gap with event indexes; names are looked up only for the largest ones reported.
pub(super) struct RawGap {
    pub start_ns: i64,
    pub end_ns: i64,
    pub dur_ns: i64,
    pub cause: Cause,
    pub evidence: Option<u32>,
    pub before: Option<u32>,
    pub after: Option<u32>,
    /// The task ending the gap and its launch.
    pub launch: Option<Launch>,
    /// For `host_blocked`: the device task the call waited for (None: outside the trace).
    pub waited: Option<u32>,
}

impl RawGap {
    /// Idle the trace does not explain: `unknown`, a host blocked on work outside it, tasks the
    /// file does not list.
    fn unexplained(&self) -> bool {
        matches!(self.cause, Cause::Unknown | Cause::UnlistedWork)
            || (self.cause == Cause::HostBlocked && self.waited.is_none())
    }
}

/// The gaps of one device, tallied as they are classified: totals, the length histogram, the
/// totals per cause and the candidates for the largest `top_n`.
pub(super) struct Tally {
    top_n: usize,
    pub gaps: u64,
    pub idle_ns: i64,
    /// `unknown` idle, `host_blocked` idle whose call waited on work outside the trace, and
    /// `unlisted_work` idle.
    pub unknown_ns: i64,
    pub blocked_outside_ns: i64,
    pub unlisted_ns: i64,
    /// (count, ns) per bucket of [`BUCKETS`], the last open-ended.
    buckets: [(u64, i64); BUCKETS.len() + 1],
    causes: BTreeMap<&'static str, (u64, i64)>,
    /// Holds the `top_n` largest gaps once trimmed; trimmed when it reaches twice that.
    pub largest: Vec<RawGap>,
}

/// Longest first, then earliest.
fn largest_first(g: &RawGap) -> (std::cmp::Reverse<i64>, i64) {
    (std::cmp::Reverse(g.dur_ns), g.start_ns)
}

impl Tally {
    pub fn new(top_n: usize) -> Tally {
        Tally {
            top_n,
            gaps: 0,
            idle_ns: 0,
            unknown_ns: 0,
            blocked_outside_ns: 0,
            unlisted_ns: 0,
            buckets: [(0, 0); BUCKETS.len() + 1],
            causes: BTreeMap::new(),
            largest: Vec::new(),
        }
    }

    pub fn add(&mut self, g: RawGap) {
        self.gaps += 1;
        self.idle_ns += g.dur_ns;
        if g.unexplained() {
            *match g.cause {
                Cause::Unknown => &mut self.unknown_ns,
                Cause::UnlistedWork => &mut self.unlisted_ns,
                _ => &mut self.blocked_outside_ns,
            } += g.dur_ns;
        }
        let b = &mut self.buckets[BUCKETS.partition_point(|&hi| hi <= g.dur_ns)];
        *b = (b.0 + 1, b.1 + g.dur_ns);
        let c = self.causes.entry(g.cause.as_str()).or_default();
        *c = (c.0 + 1, c.1 + g.dur_ns);
        if self.top_n == 0 {
            return;
        }
        self.largest.push(g);
        if self.largest.len() >= 2 * self.top_n {
            self.largest
                .select_nth_unstable_by_key(self.top_n - 1, largest_first);
            self.largest.truncate(self.top_n);
        }
    }

    /// Gap counts and time per length bucket (the last bucket open-ended: `hi_ns` -1).
    pub fn histogram(&self) -> Vec<HistogramBucket> {
        let his = BUCKETS.iter().copied().chain(std::iter::once(-1));
        let los = std::iter::once(0).chain(BUCKETS.iter().copied());
        his.zip(los)
            .zip(self.buckets)
            .map(|((hi, lo), (count, total))| HistogramBucket {
                lo_ns: lo,
                hi_ns: hi,
                count,
                total_ns: total,
            })
            .collect()
    }

    /// Gap count, time and share of idle per cause.
    pub fn by_cause(&self, idle: i64) -> BTreeMap<&'static str, CauseTotal> {
        self.causes
            .iter()
            .map(|(&c, &(count, total_ns))| {
                let pct_of_idle = pct(total_ns, idle);
                (
                    c,
                    CauseTotal {
                        count,
                        total_ns,
                        pct_of_idle,
                    },
                )
            })
            .collect()
    }
}

/// The `top_n` largest gaps, longest first, with their neighbours' names, launch details and,
/// for `host_blocked`, the blocking call's frames and what it waited for.
pub(super) fn largest_of(t: &Tables, mut largest: Vec<RawGap>, top_n: usize) -> Vec<Gap> {
    if top_n < largest.len() {
        largest.select_nth_unstable_by_key(top_n, largest_first);
        largest.truncate(top_n);
    }
    largest.sort_by_key(largest_first);
    let pairs: Vec<(u32, u32)> = largest
        .iter()
        .filter_map(|g| g.launch.map(|l| (l.task, l.call)))
        .collect();
    let mut ops = dispatch::ops_above(t, &pairs).into_iter();
    let calls: Vec<u32> = largest
        .iter()
        .filter(|g| g.cause == Cause::HostBlocked)
        .filter_map(|g| g.evidence)
        .collect();
    let mut frames = if calls.is_empty() {
        Vec::new()
    } else {
        frames(t, &calls)
    }
    .into_iter();
    largest
        .into_iter()
        .map(|g| {
            let host_block = g
                .evidence
                .filter(|_| g.cause == Cause::HostBlocked)
                .map(|c| HostBlock {
                    waited_for: g.waited.map(|i| neighbour(t, i)),
                    frames: frames.next().unwrap_or_default(),
                    overlap_ns: t.events.end_ns(c as usize).min(g.end_ns)
                        - t.events.ts_ns[c as usize].max(g.start_ns),
                });
            Gap {
                start_ns: g.start_ns,
                end_ns: g.end_ns,
                dur_ns: g.dur_ns,
                cause: g.cause,
                evidence: g.evidence.map(|i| neighbour(t, i)),
                before: g.before.map(|i| neighbour(t, i)),
                after: g.after.map(|i| neighbour(t, i)),
                launch: g.launch.map(|l| neighbour(t, l.call)),
                launch_lag_ns: g.launch.map(|l| l.at_ns - g.start_ns),
                launch_op: g
                    .launch
                    .and_then(|_| ops.next().flatten())
                    .map(|o| t.event_name(o as usize).to_string()),
                host_block,
            }
        })
        .collect()
}
