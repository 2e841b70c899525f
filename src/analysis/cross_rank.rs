//! Cross-rank analysis: per step and per rank, the device's step time split into computing,
//! exposed communication and free time; which rank is slowest in each step and why; how far apart
//! the ranks start each collective op (skew) and who arrives last; whether every rank ran the
//! same number of kernels per step.
//!
//! Steps: `ProfilerStep#N` (db STEP_TIME or host events of that name) when a file has them, else
//! CANN Step Trace iterations (`Iteration N` on the device's Step Trace thread), else
//! the serving forward scopes (`forward_eager`, `forward_cudagraph`) in time order. Host step
//! windows partition the file's timeline at their starts; a device event belongs to the step its
//! launch (connection / correlation id) falls in, else the step its own start falls in. A device's
//! step window runs from the first start to the last end of the device work of that step.
//!
//! Slowest rank of a step: the one with the most non-communication time (computing + free), the
//! time the others spend waiting for it in collectives. Its reason is whichever of computing or
//! free exceeds the median of the other ranks by more. Collectives are matched across ranks by
//! name and occurrence (the n-th op of that name on each rank); skew = last start - first start.
//!
//! Two steps like [`super::ranks`]: [`extract`] per set of tables (small, kept after the tables are
//! dropped), [`combine`] over the extracts of every file. Ranks are compared within a cohort of
//! files of one format (a trace_view.json and an lmdeploy trace of one rank run on different
//! clocks and are never compared with each other).

use super::clock::{
    self, ClockStatus, Clocks, CommGroup, CommGroups, DeviceClock, MIN_CLOCK_COLLECTIVES, RankClock,
};
use super::collective_match::{DeviceOps, Group, Matched, match_ops};
use super::devices::{AsyncCopy, Device, DeviceRef, iv};
use super::gallop::Gallop;
use super::grouping::counting_sort;
use super::intervals;
use super::phases::{DECODE_SCOPE, Launches, PREFILL_SCOPE};
use super::stats::pct;
use crate::model::{Category, EventKind, FileId, Tables};
use crate::units::human_duration;
use std::collections::BTreeMap;
use std::sync::OnceLock;

impl StepRow {
    pub fn step_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
    fn busy_outside_comm_ns(&self) -> i64 {
        self.computing_ns + self.free_ns
    }
}

/// What one device keeps for the cross-rank comparison.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DeviceExtract {
    pub device: DeviceRef,
    /// Files of one format are compared with each other only.
    #[serde(deserialize_with = "crate::static_names::name")]
    pub cohort: crate::static_names::Name,
    /// `ProfilerStep`, `Step Trace`, `forward scopes` or `none`.
    pub step_source: StepSource,
    pub steps: Vec<StepRow>,
    /// Collective-op names (indexes of `collectives`).
    pub names: Vec<String>,
    /// Communicator group names (indexes of `collectives`; `""` when the format names none).
    pub groups: Vec<String>,
    /// (name index, group index, start, end), by start.
    pub collectives: Vec<(u32, u32, i64, i64)>,
    /// The host the file was captured on (db HOST_INFO uid), empty when unknown: ranks of one
    /// host share a clock.
    pub host: String,
    /// (HCCL group name, what it is for: tp / dp / pp ...) from `parallel_group_info`.
    #[serde(default)]
    pub group_kinds: Vec<(String, String)>,
}

/// The cross-rank extract of every device of `t`.
/// `min_gap_ns`: the smallest idle gap counted as a bubble (the bubbles analysis' threshold).
pub fn extract(
    t: &Tables,
    devices: &[Device],
    windows: &StepWindows,
    min_gap_ns: i64,
) -> Vec<DeviceExtract> {
    if devices.is_empty() {
        return Vec::new();
    }
    let windows = windows.get();
    // The launch map is a pass over every event: only worth it when some file has steps.
    let launches = windows
        .iter()
        .any(|w| !w.starts.is_empty())
        .then(|| Launches::build(t));
    devices
        .iter()
        .map(|d| one(t, d, &windows[d.file.idx()], launches.as_ref(), min_gap_ns))
        .collect()
}

/// The step windows of every file of one set of tables, found on first use and then shared: each
/// finding is a pass over every event, and five analyses read them.
pub struct StepWindows<'t> {
    t: &'t Tables,
    found: OnceLock<Vec<Windows>>,
}

impl<'t> StepWindows<'t> {
    pub fn new(t: &'t Tables) -> Self {
        StepWindows {
            t,
            found: OnceLock::new(),
        }
    }

    /// Each file's windows, by file index.
    pub(super) fn get(&self) -> &[Windows] {
        self.found.get_or_init(|| step_windows(self.t))
    }
}

/// Host step windows of a file: (start, label, key, host duration) sorted by start, and their
/// source.
pub(super) struct Windows {
    source: StepSource,
    starts: Vec<(i64, String, i64, i64)>,
}

impl Windows {
    /// The step whose host window started last at or before `ts`; None before the first step
    /// or without steps.
    pub(super) fn step_at(&self, ts: i64) -> Option<i64> {
        let k = self.starts.partition_point(|w| w.0 <= ts);
        (k > 0).then(|| self.starts[k - 1].2)
    }

    /// Where the windows came from.
    pub(super) fn source(&self) -> StepSource {
        self.source
    }

    /// The windows' labels (`ProfilerStep#N`, `Iteration N`, the scope) in start order; the
    /// window of `index_near(_, ts)` is the one at that position.
    pub(super) fn labels(&self) -> impl Iterator<Item = &str> {
        self.starts.iter().map(|w| w.1.as_str())
    }

    /// The position (in start order) of the window that started last at or before `ts`,
    /// searched from where `cursor` last ended (for times nearly in order).
    pub(super) fn index_near(&self, cursor: &mut Gallop, ts: i64) -> Option<usize> {
        cursor.last_at_or_before(&self.starts, |w| w.0, ts)
    }

    /// [`Self::step_at`] searched from where `cursor` last ended (for times nearly in order).
    pub(super) fn step_near(&self, cursor: &mut Gallop, ts: i64) -> Option<i64> {
        self.index_near(cursor, ts).map(|k| self.starts[k].2)
    }
}

fn step_windows(t: &Tables) -> Vec<Windows> {
    let mut out: Vec<Windows> = (0..t.files.len())
        .map(|_| Windows {
            source: StepSource::None,
            starts: Vec::new(),
        })
        .collect();
    for i in 0..t.steps.len() {
        let w = &mut out[t.steps.file[i].idx()];
        w.source = StepSource::ProfilerStep;
        let n = t.steps.step[i];
        w.starts.push((
            t.steps.start_ns[i],
            format!("ProfilerStep#{n}"),
            n,
            t.steps.end_ns[i] - t.steps.start_ns[i],
        ));
    }
    // Host events only: Kineto copies ProfilerStep#N onto the GPU timeline
    // (gpu_user_annotation); the step is the CPU one, as in HTA.
    let host_complete = |i: usize| {
        t.events.kind[i] == EventKind::Complete
            && !t.events.category[i].is_device()
            && t.events.category[i] != Category::VendorOverlap
            && !t.event_is_device_side(i)
    };
    let profiler_steps: Vec<(crate::model::StrId, i64)> = t
        .strings
        .iter()
        .filter_map(|(id, s)| Some((id, s.strip_prefix("ProfilerStep#")?.parse().ok()?)))
        .collect();
    let scopes: Vec<crate::model::StrId> = [PREFILL_SCOPE, DECODE_SCOPE]
        .iter()
        .filter_map(|s| t.strings.lookup(s))
        .collect();
    let iteration = t.strings.lookup("Iteration Time");
    if profiler_steps.is_empty() && scopes.is_empty() && iteration.is_none() {
        return out;
    }
    // One bit per string: whether it names a ProfilerStep or a scope (most events name
    // neither, and are passed over on this bit).
    let mut named = vec![0u64; t.strings.len().div_ceil(64) + 1];
    for id in profiler_steps
        .iter()
        .map(|x| x.0)
        .chain(scopes.iter().copied())
    {
        named[id.0 as usize / 64] |= 1 << (id.0 % 64);
    }
    let is_named = |id: crate::model::StrId| {
        named
            .get(id.0 as usize / 64)
            .is_some_and(|w| w & (1 << (id.0 % 64)) != 0)
    };
    let mut forward: Vec<Vec<(i64, String, i64)>> = vec![Vec::new(); t.files.len()];
    let mut iterations: Vec<Vec<(i64, String, i64, i64)>> = vec![Vec::new(); t.files.len()];
    for i in 0..t.events.len() {
        let name = t.events.name[i];
        if iteration.is_some_and(|c| c == t.events.cat.at(i))
            && t.events.category[i] == Category::Step
            && let Some(n) = t
                .str(name)
                .strip_prefix("Iteration ")
                .and_then(|n| n.parse::<i64>().ok())
        {
            iterations[t.event_file(i).idx()].push((
                t.events.ts_ns[i],
                format!("Iteration {n}"),
                n,
                t.events.dur_ns.at(i),
            ));
        } else if !is_named(name) {
            continue;
        } else if let Some(&(_, n)) = profiler_steps.iter().find(|x| x.0 == name) {
            if host_complete(i) {
                let w = &mut out[t.event_file(i).idx()];
                w.source = StepSource::ProfilerStep;
                w.starts.push((
                    t.events.ts_ns[i],
                    format!("ProfilerStep#{n}"),
                    n,
                    t.events.dur_ns.at(i),
                ));
            }
        } else if scopes.contains(&name) && host_complete(i) {
            forward[t.event_file(i).idx()].push((
                t.events.ts_ns[i],
                t.str(name).to_string(),
                t.events.dur_ns.at(i),
            ));
        }
    }
    for ((w, mut fw), mut it) in out.iter_mut().zip(forward).zip(iterations) {
        if w.source == StepSource::ProfilerStep {
            // db STEP_TIME and the same steps as PYTORCH_API rows: keep the first row per step.
            w.starts.sort_by_key(|x| (x.2, x.0));
            w.starts.dedup_by_key(|x| x.2);
        } else if !it.is_empty() {
            it.sort_by_key(|x| (x.2, x.0));
            it.dedup_by_key(|x| x.2);
            w.source = StepSource::StepTrace;
            w.starts = it;
        } else if !fw.is_empty() {
            fw.sort();
            w.source = StepSource::ForwardScopes;
            w.starts = fw
                .into_iter()
                .enumerate()
                .map(|(k, (ts, label, dur))| (ts, label, k as i64, dur))
                .collect();
        }
        w.starts.sort_by_key(|x| x.0);
    }
    out
}

fn one(
    t: &Tables,
    d: &Device,
    w: &Windows,
    launches: Option<&Launches>,
    min_gap_ns: i64,
) -> DeviceExtract {
    let mut cursor = Gallop::default();
    let mut step_of = |i: usize| -> Option<usize> {
        let at = launches
            .and_then(|l| l.of(t, i))
            .unwrap_or(t.events.ts_ns[i]);
        w.index_near(&mut cursor, at)
    };
    let n = w.starts.len();
    let copy = AsyncCopy::new(t);
    let is_compute = |u: usize| t.events.category[u] == Category::ComputeKernel;
    // The device's compute kernels and async copies, and its collectives, grouped by step: 4
    // bytes per event (a device can have tens of millions), each step's intervals built when
    // the step is reached.
    let (dev_first, dev_order) = by_step(&d.events, n, |u| {
        (is_compute(u) || copy.is(t, u))
            .then(|| step_of(u))
            .flatten()
    });
    let (comm_first, comm_order) = by_step(&d.comm_ops, n, &mut step_of);
    let mut steps = Vec::new();
    // One set of buffers for every step (a device can have tens of thousands of steps).
    let (mut compute, mut copies, mut comm, mut busy) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (k, (_, label, key, host_ns)) in w.starts.iter().enumerate() {
        compute.clear();
        copies.clear();
        let mut kernels = 0u64;
        for &i in &dev_order[dev_first[k]..dev_first[k + 1]] {
            if is_compute(i as usize) {
                compute.push(iv(t, i));
                kernels += 1;
            }
            if copy.is(t, i as usize) {
                copies.push(iv(t, i));
            }
        }
        comm.clear();
        comm.extend(
            comm_order[comm_first[k]..comm_first[k + 1]]
                .iter()
                .map(|&i| iv(t, i)),
        );
        intervals::union_in_place(&mut compute);
        intervals::union_in_place(&mut comm);
        let (c, m) = (&compute, &comm);
        let computing = intervals::total(c);
        let communication = intervals::total(m);
        let overlapped = intervals::intersect_total(c, m);
        busy.clear();
        busy.extend(intervals::merged(c, m));
        let (Some(first), Some(last)) = (busy.first(), busy.last()) else {
            continue;
        };
        let (start, end) = (first.0, last.1);
        let (bubbles, bubble_ns) = intervals::inner_gaps(&busy)
            .filter(|&g| g >= min_gap_ns)
            .fold((0u64, 0i64), |(n, s), g| (n + 1, s + g));
        let async_copy: i64 = copies.iter().map(|x| x.1 - x.0).sum();
        intervals::union_in_place(&mut copies);
        steps.push(StepRow {
            label: label.clone(),
            key: *key,
            host_ns: *host_ns,
            start_ns: start,
            end_ns: end,
            computing_ns: computing,
            communication_ns: communication,
            communication_not_overlapped_ns: communication - overlapped,
            free_ns: (end - start) - intervals::total(&busy),
            async_copy_ns: async_copy,
            async_copy_not_overlapped_ns: intervals::uncovered_total(&copies, &busy),
            compute_kernels: kernels,
            bubbles,
            bubble_ns,
        });
    }
    let mut names: Vec<String> = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    let mut index: BTreeMap<crate::model::StrId, u32> = BTreeMap::new();
    let mut group_index: BTreeMap<crate::model::ThreadId, u32> = BTreeMap::new();
    let collectives = d
        .comm_ops
        .iter()
        .map(|&i| {
            let name = t.events.name[i as usize];
            let k = *index.entry(name).or_insert_with(|| {
                names.push(t.str(name).to_string());
                names.len() as u32 - 1
            });
            let th = t.events.thread[i as usize];
            let g = match kineto_group(t, i as usize) {
                Some(group) => group_id(&mut groups, t.str(group)),
                None => *group_index.entry(th).or_insert_with(|| {
                    group_id(&mut groups, group_name(t.str(t.threads.name[th.idx()])))
                }),
            };
            let (s, e) = iv(t, i);
            (k, g, s, e)
        })
        .collect();
    DeviceExtract {
        device: d.evidence.clone(),
        cohort: cohort(t, d.file),
        step_source: if steps.is_empty() {
            StepSource::None
        } else {
            w.source
        },
        steps,
        names,
        groups,
        collectives,
        host: meta_of(t, d.file, "host.uid"),
        group_kinds: group_kinds(&meta_of(t, d.file, "parallel_group_info")),
    }
}

/// Index of `group` in `groups`, added when new.
fn group_id(groups: &mut Vec<String>, group: &str) -> u32 {
    match groups.iter().position(|x| x == group) {
        Some(p) => p as u32,
        None => {
            groups.push(group.to_string());
            groups.len() as u32 - 1
        }
    }
}

/// A Kineto NCCL kernel's communicator group (its `Process Group Name` arg, in the comm_tasks
/// row); None for ops without one (HCCL ops name theirs by thread).
fn kineto_group(t: &Tables, i: usize) -> Option<crate::model::StrId> {
    let row = t.events.comm_task[i];
    (row != crate::model::events::NO_ROW)
        .then(|| t.comm_tasks.group[row as usize])
        .filter(|&g| g != crate::model::StrId::EMPTY)
}

/// The communicator group of an HCCL op from its thread name (`Group <name> Communication`);
/// `""` for threads that name none (legacy `Communication Kernel`, Kineto streams).
fn group_name(thread: &str) -> &str {
    thread
        .strip_prefix("Group ")
        .and_then(|x| x.strip_suffix(" Communication"))
        .unwrap_or("")
}

/// A meta value of the file (`host.uid`: db HOST_INFO, msprof info.json), empty when absent.
fn meta_of(t: &Tables, f: FileId, key: &str) -> String {
    let value = t.strings.lookup(key).and_then(|k| t.meta.get(f, k));
    value.map_or_else(String::new, |v| t.str(v).to_string())
}

/// torch_npu's `parallel_group_info` (profiler_metadata.json, the db's META_DATA): each HCCL
/// group name with what it is for (`group_name`: tp, dp, pp, ...), as msprof-analyze reads it
/// (`json_extract(value, '$.group_name')` keyed by the group name).
fn group_kinds(json: &str) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(json) else {
        return Vec::new();
    };
    // Keyed by the id (a db's COMMUNICATION_OP group, a trace's HCCL thread) and by the vendor's
    // hash of it (communication.json, analysis.db, text exports' group names).
    m.iter()
        .filter_map(|(group, v)| Some((group.clone(), v["group_name"].as_str()?.to_string())))
        .flat_map(|(id, kind)| {
            let hashed = crate::model::hash::vendor_group_hash(&id).to_string();
            [(hashed, kind.clone()), (id, kind)]
        })
        .collect()
}

/// `events` grouped by the step `step_of` gives each (None: left out), in their order within a
/// step: `order[first[k]..first[k + 1]]` are step k's. The steps are computed once.
fn by_step(
    events: &[u32],
    n: usize,
    mut step_of: impl FnMut(usize) -> Option<usize>,
) -> (Vec<usize>, Vec<u32>) {
    let step: Vec<u32> = events
        .iter()
        .map(|&i| step_of(i as usize).map_or(u32::MAX, |k| k as u32))
        .collect();
    counting_sort(n, || {
        events
            .iter()
            .zip(&step)
            .filter(|&(_, &k)| k != u32::MAX)
            .map(|(&i, &k)| (k as usize, i))
    })
}

fn cohort(t: &Tables, f: FileId) -> &'static str {
    t.files.format[f.idx()].map_or("unknown", |x| x.as_str())
}

/// Which ranks do the same work and may be compared with each other (from the job's layout,
/// `analysis::cluster::roles`).
#[derive(Debug, Clone)]
pub enum Roles {
    /// Every rank does the same work.
    Peers,
    /// Rank → its peer set: ranks of different sets are never compared.
    Sets(BTreeMap<i32, u32>),
    /// The ranks do different work and nothing says which are peers (why, in words).
    NotComparable(String),
}

impl Roles {
    /// Why the ranks of `devs` are not compared with each other, when they are not.
    fn why_not(&self, devs: &[DeviceExtract]) -> Option<String> {
        match self {
            Roles::Peers => None,
            Roles::NotComparable(why) => Some(why.clone()),
            Roles::Sets(sets) => {
                let mut of: Vec<Option<u32>> = devs
                    .iter()
                    .map(|d| sets.get(&d.device.rank).copied())
                    .collect();
                of.sort_unstable();
                of.dedup();
                (of.len() > 1).then(|| {
                    format!(
                        "not compared across roles: these ranks sit in {} peer sets (pipeline stages or TP shards of the job's layout); compared within each in analyses.layout",
                        of.len()
                    )
                })
            }
        }
    }
}

/// The cross-rank comparison from the extracts of every file; ranks that `roles` says do
/// different work are summarized but not compared.
pub fn combine(extracts: Vec<DeviceExtract>, top_n: usize, roles: &Roles) -> CrossRank {
    let mut by_cohort: BTreeMap<&'static str, Vec<DeviceExtract>> = BTreeMap::new();
    for x in extracts {
        by_cohort.entry(x.cohort).or_default().push(x);
    }
    let cohorts = by_cohort
        .into_iter()
        .map(|(format, devs)| {
            let why = roles.why_not(&devs);
            let mut c = cohort_of(format, devs, top_n);
            if let Some(why) = why {
                c.slowest = None;
                c.waited_for = None;
                c.not_compared = why;
            }
            c
        })
        .collect();
    CrossRank { cohorts }
}

use super::stats::median;
pub use crate::contract::cross_rank::*;

fn cohort_of(format: &'static str, mut devs: Vec<DeviceExtract>, top_n: usize) -> Cohort {
    let (matched, clocks) = align_clocks(&mut devs);
    let mut sources: Vec<&str> = devs.iter().map(|d| d.step_source.as_str()).collect();
    sources.sort_unstable();
    sources.dedup();
    let step_source = sources.join(", ");
    let n = devs.len();
    // Steps by key, per device (the last row of a key repeated), walked in key order below.
    let by_key = steps_by_key(&devs);
    let mut all_keys: Vec<i64> = by_key.iter().flatten().map(|s| s.key).collect();
    all_keys.sort_unstable();
    all_keys.dedup();
    let mut cursor = vec![0usize; n];
    let mut slowest_count = vec![0u64; n];
    let mut reasons: Vec<BTreeMap<SlowReason, (u64, i64)>> = vec![BTreeMap::new(); n];
    let mut compared = Vec::new();
    let mut unmatched = 0u64;
    let mut mismatched = 0u64;
    for &k in &all_keys {
        let rows: Vec<&StepRow> = by_key
            .iter()
            .zip(cursor.iter_mut())
            .filter_map(|(v, c)| {
                let s = v.get(*c).filter(|s| s.key == k)?;
                *c += 1;
                Some(*s)
            })
            .collect();
        if rows.len() != n {
            unmatched += 1;
            continue;
        }
        if n < 2 {
            continue;
        }
        // Ties are never broken by rank order: a step whose most busy time is shared has no
        // slowest rank.
        let (slow, slow_tied) = unique_max(n, |r| rows[r].busy_outside_comm_ns());
        let others = |f: fn(&StepRow) -> i64| {
            median((0..n).filter(|&r| r != slow).map(|r| f(rows[r])).collect()).round() as i64
        };
        let comp_excess = rows[slow].computing_ns - others(|s| s.computing_ns);
        let free_excess = rows[slow].free_ns - others(|s| s.free_ns);
        // Who started the step last (on the device: its first compute kernel or collective).
        let (late, late_tied) = unique_max(n, |r| rows[r].start_ns);
        let (reason, excess) = if comp_excess >= free_excess {
            (SlowReason::Computing, comp_excess)
        } else {
            (SlowReason::Free, free_excess)
        };
        if !slow_tied {
            slowest_count[slow] += 1;
            let e = reasons[slow].entry(reason).or_default();
            e.0 += 1;
            e.1 += excess;
        }
        let differ = rows
            .windows(2)
            .any(|w| w[0].compute_kernels != w[1].compute_kernels);
        mismatched += differ as u64;
        compared.push(step_compare(
            &devs,
            &rows,
            k,
            (slow, slow_tied),
            (late, late_tied),
            (reason, excess, differ),
        ));
    }
    let (skew, per, groups) = collective_skew(&devs, &matched, &clocks, top_n);
    let clock = clocks_of(&devs, &clocks);
    let waited_for = waited_for(&devs, &per, &skew).map(|w| unless_clocks_unknown(w, &clock));
    let ranks: Vec<RankSteps> = devs
        .iter()
        .enumerate()
        .map(|(r, d)| rank_steps(d, slowest_count[r], &per[r]))
        .collect();
    let distribution = distribution(&ranks);
    let slowest = (!compared.is_empty())
        .then(|| slowest(&devs, &slowest_count, &reasons, compared.len() as u64));
    let steps_compared = compared.len() as u64;
    compared.sort_by_key(|s| std::cmp::Reverse((s.step_max_ns - s.step_min_ns, -s.key)));
    compared.truncate(top_n);
    Cohort {
        format,
        step_source,
        ranks,
        steps_compared,
        steps_unmatched: unmatched,
        kernel_count_mismatch_steps: mismatched,
        slowest,
        waited_for,
        widest_steps: compared,
        collectives: skew,
        clock,
        groups: CommGroups {
            total: groups.len() as u64,
            groups,
        },
        distribution,
        not_compared: String::new(),
    }
}

/// Every rank's row as distributions (the rows themselves may be capped in the report).
fn distribution(ranks: &[RankSteps]) -> RankDistribution {
    let spread = |f: &dyn Fn(&RankSteps) -> f64| -> Spread5 {
        let mut v: Vec<f64> = ranks.iter().map(f).collect();
        if v.is_empty() {
            return Spread5::default();
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| super::stats::quantile_f64(&v, p);
        Spread5 {
            min: v[0],
            p10: q(0.1),
            p50: q(0.5),
            p90: q(0.9),
            max: v[v.len() - 1],
        }
    };
    let mut by_rank: Vec<(i32, i64)> = ranks
        .iter()
        .map(|x| (x.device.rank, x.step_mean_ns.round() as i64))
        .collect();
    by_rank.sort_unstable();
    let mut computing: Vec<(i32, i64)> = ranks
        .iter()
        .map(|x| (x.device.rank, x.computing_ns / x.steps.max(1) as i64))
        .collect();
    computing.sort_unstable();
    RankDistribution {
        ranks: ranks.len() as u64,
        step_mean_ns: spread(&|x| x.step_mean_ns),
        computing_pct: spread(&|x| x.computing_pct),
        free_pct: spread(&|x| x.free_pct),
        collective_wait_ns: spread(&|x| x.collective_wait_ns as f64),
        last_to_start_collectives: spread(&|x| x.last_to_start_collectives as f64),
        step_mean_ns_by_rank: by_rank,
        computing_mean_ns_by_rank: computing,
    }
}

/// Matches the cohort's collectives by identity, estimates each device's clock from them and
/// moves every timestamp of a corrected device (its steps, its collectives and the matched
/// spans) onto the reference rank's clock.
fn align_clocks(devs: &mut [DeviceExtract]) -> (Matched, Vec<DeviceClock>) {
    let mut order: Vec<usize> = (0..devs.len()).collect();
    order.sort_by_key(|&i| (devs[i].device.rank < 0, devs[i].device.rank, i));
    let ops: Vec<DeviceOps> = devs
        .iter()
        .map(|d| DeviceOps {
            names: &d.names,
            groups: &d.groups,
            ops: &d.collectives,
        })
        .collect();
    let mut matched = match_ops(&ops, &order);
    let files: Vec<&str> = devs.iter().map(|d| d.device.file.as_str()).collect();
    let hosts: Vec<&str> = devs.iter().map(|d| d.host.as_str()).collect();
    let clocks = clock::estimate(&matched, &files, &hosts, &order);
    for (d, c) in devs.iter_mut().zip(&clocks) {
        let by = c.applied_ns;
        if by == 0 {
            continue;
        }
        for s in &mut d.steps {
            s.start_ns -= by;
            s.end_ns -= by;
        }
        for x in &mut d.collectives {
            x.2 -= by;
            x.3 -= by;
        }
    }
    for g in &mut matched.groups {
        for row in g.spans.chunks_mut(g.members.len().max(1)) {
            for (x, &d) in row.iter_mut().zip(&g.members) {
                x.0 -= clocks[d].applied_ns;
                x.1 -= clocks[d].applied_ns;
            }
        }
    }
    (matched, clocks)
}

/// The report's view of the clocks: counts by status, and the ranks that were corrected or
/// could not be tied to the reference (every rank with `--detail full`, see report::detail).
fn clocks_of(devs: &[DeviceExtract], clocks: &[DeviceClock]) -> Clocks {
    let Some(reference) = clocks
        .iter()
        .position(|c| c.status == ClockStatus::Reference)
    else {
        return Clocks {
            reference_rank: -1,
            confident: true,
            ..Clocks::default()
        };
    };
    if devs.len() < 2 {
        return Clocks {
            reference_rank: devs[reference].device.rank,
            confident: true,
            ..Clocks::default()
        };
    }
    let count = |s: ClockStatus| clocks.iter().filter(|c| c.status == s).count() as u64;
    let mut ranks: Vec<RankClock> = clocks
        .iter()
        .enumerate()
        .filter(|(_, c)| c.status != ClockStatus::Reference)
        .map(|(d, c)| RankClock {
            rank: devs[d].device.rank,
            relative_to_rank: c.relative_to.map_or(-1, |r| devs[r].device.rank),
            estimate_ns: c.estimate_ns,
            spread_ns: c.spread_ns,
            collectives: c.collectives,
            applied_ns: c.applied_ns,
            status: c.status,
        })
        .collect();
    ranks.sort_by_key(|r| (std::cmp::Reverse(r.applied_ns.abs()), r.rank));
    // Ranks without collectives are not compared by arrival: only those with some count.
    let unknown: Vec<i32> = ranks
        .iter()
        .filter(|r| {
            matches!(
                r.status,
                ClockStatus::TooFewCollectives | ClockStatus::EndsDisagree
            )
        })
        .filter(|r| {
            devs.iter()
                .any(|d| d.device.rank == r.rank && !d.collectives.is_empty())
        })
        .map(|r| r.rank)
        .collect();
    let corrected: Vec<&RankClock> = ranks
        .iter()
        .filter(|r| r.status == ClockStatus::Corrected)
        .collect();
    let reference_rank = devs[reference].device.rank;
    let statement = if !unknown.is_empty() {
        format!(
            "the clocks of {} rank(s) ({}) are not tied to rank {reference_rank}'s ({})",
            unknown.len(),
            short_list(&unknown),
            if ranks.iter().any(|r| r.status == ClockStatus::EndsDisagree) {
                "shared collectives end too far apart".to_string()
            } else {
                format!("fewer than {MIN_CLOCK_COLLECTIVES} shared collectives")
            }
        )
    } else if let Some(top) = corrected.first() {
        format!(
            "{} rank(s) corrected onto rank {reference_rank}'s clock; largest: rank {} by {} (spread {} over {} collectives)",
            corrected.len(),
            top.rank,
            human_duration(top.applied_ns as f64),
            human_duration(top.spread_ns as f64),
            top.collectives
        )
    } else if ranks.iter().all(|r| r.status == ClockStatus::SameHost) {
        "one clock (one file or host): nothing to correct".to_string()
    } else {
        format!(
            "no clock corrected: every offset against rank {reference_rank} is within its noise (largest {})",
            human_duration(ranks.iter().map(|r| r.estimate_ns.abs()).max().unwrap_or(0) as f64)
        )
    };
    Clocks {
        reference_rank,
        corrected: corrected.len() as u64,
        within_noise: count(ClockStatus::WithinNoise),
        same_host: count(ClockStatus::SameHost),
        too_few_collectives: count(ClockStatus::TooFewCollectives),
        ends_disagree: count(ClockStatus::EndsDisagree),
        max_abs_applied_ns: ranks.iter().map(|r| r.applied_ns.abs()).max().unwrap_or(0),
        confident: unknown.is_empty(),
        statement,
        ranks,
    }
}

/// Arrival claims need comparable clocks: with a rank's clock unknown, no rank is called late.
fn unless_clocks_unknown(w: WaitedFor, clock: &Clocks) -> WaitedFor {
    if clock.confident {
        return w;
    }
    WaitedFor {
        stands_out: false,
        statement: format!("cannot tell who arrives last: {}", clock.statement),
        ..w
    }
}

/// `1, 2, 3` or `1, 2, 3, … (+N)` past ten entries.
fn short_list(v: &[i32]) -> String {
    let head: Vec<String> = v
        .iter()
        .take(10)
        .map(|&r| {
            if r < 0 {
                "unranked".into()
            } else {
                r.to_string()
            }
        })
        .collect();
    if v.len() > 10 {
        format!("{}, … (+{})", head.join(", "), v.len() - 10)
    } else {
        head.join(", ")
    }
}

/// Each device's step rows sorted by key, the last row of a repeated key kept.
fn steps_by_key(devs: &[DeviceExtract]) -> Vec<Vec<&StepRow>> {
    devs.iter()
        .map(|d| {
            let mut v: Vec<&StepRow> = d.steps.iter().collect();
            v.sort_by_key(|s| s.key);
            let mut out: Vec<&StepRow> = Vec::with_capacity(v.len());
            for s in v {
                match out.last_mut() {
                    Some(l) if l.key == s.key => *l = s,
                    _ => out.push(s),
                }
            }
            out
        })
        .collect()
}

/// One compared step's row: its time range, the slowest rank (and why), who started last.
fn step_compare(
    devs: &[DeviceExtract],
    rows: &[&StepRow],
    key: i64,
    (slow, slow_tied): (usize, bool),
    (late, late_tied): (usize, bool),
    (reason, excess, differ): (SlowReason, i64, bool),
) -> StepCompare {
    let times: Vec<i64> = rows.iter().map(|r| r.step_ns()).collect();
    let first_start = rows.iter().map(|r| r.start_ns).min().expect("rows");
    StepCompare {
        label: rows[0].label.clone(),
        key,
        step_min_ns: *times.iter().min().expect("rows"),
        step_max_ns: *times.iter().max().expect("rows"),
        slowest_rank: if slow_tied {
            -1
        } else {
            devs[slow].device.rank
        },
        slowest_file: if slow_tied {
            String::new()
        } else {
            devs[slow].device.file.clone()
        },
        reason,
        excess_ns: excess,
        kernel_counts_differ: differ,
        last_start_rank: if late_tied {
            -1
        } else {
            devs[late].device.rank
        },
        start_spread_ns: rows[late].start_ns - first_start,
    }
}

/// The first [`MAX_STEP_SAMPLES`] steps as samples for the diff gate.
fn step_samples(steps: &[StepRow]) -> StepSamples {
    let kept = &steps[..steps.len().min(MAX_STEP_SAMPLES)];
    let col = |f: fn(&StepRow) -> i64| kept.iter().map(f).collect();
    StepSamples {
        step_ns: col(StepRow::step_ns),
        computing_ns: col(|s| s.computing_ns),
        communication_not_overlapped_ns: col(|s| s.communication_not_overlapped_ns),
        free_ns: col(|s| s.free_ns),
    }
}

fn rank_steps(d: &DeviceExtract, slowest: u64, coll: &PerRankCollectives) -> RankSteps {
    let times: Vec<i64> = d.steps.iter().map(|s| s.step_ns()).collect();
    let total: i64 = times.iter().sum();
    let sum = |f: fn(&StepRow) -> i64| d.steps.iter().map(f).sum::<i64>();
    let (c, m, f) = (
        sum(|s| s.computing_ns),
        sum(|s| s.communication_not_overlapped_ns),
        sum(|s| s.free_ns),
    );
    let host = sum(|s| s.host_ns);
    let copy_free = sum(|s| s.async_copy_not_overlapped_ns);
    RankSteps {
        device: d.device.clone(),
        steps: times.len() as u64,
        step_mean_ns: if times.is_empty() {
            0.0
        } else {
            total as f64 / times.len() as f64
        },
        step_p50_ns: median(times.clone()),
        step_max_ns: times.iter().copied().max().unwrap_or(0),
        host_step_ns: host,
        host_step_mean_ns: if times.is_empty() {
            0.0
        } else {
            host as f64 / times.len() as f64
        },
        computing_ns: c,
        communication_ns: sum(|s| s.communication_ns),
        communication_not_overlapped_ns: m,
        free_ns: f,
        async_copy_ns: sum(|s| s.async_copy_ns),
        async_copy_not_overlapped_ns: copy_free,
        free_excluding_async_copy_ns: f - copy_free,
        computing_pct: pct(c, total),
        communication_not_overlapped_pct: pct(m, total),
        free_pct: pct(f, total),
        bubbles: d.steps.iter().map(|s| s.bubbles).sum(),
        bubble_ns: sum(|s| s.bubble_ns),
        bubbles_per_step: if times.is_empty() {
            0.0
        } else {
            d.steps.iter().map(|s| s.bubbles).sum::<u64>() as f64 / times.len() as f64
        },
        collective_transit_ns: coll.transit_ns,
        collective_wait_ns: coll.wait_ns,
        slowest_in_steps: slowest,
        last_to_start_collectives: coll.last,
        samples: step_samples(&d.steps),
    }
}

/// Per device: collectives started last (and by how much in total), transit and wait time of
/// matched collectives.
#[derive(Debug, Clone, Default)]
struct PerRankCollectives {
    last: u64,
    lateness_ns: i64,
    transit_ns: i64,
    wait_ns: i64,
    /// Matched ops with one last rank that this rank was a member of, and the sum of its
    /// chances (1 / group size) to be that rank in each: the turns-taking null hypothesis.
    trials: u64,
    chance: f64,
}

fn waited_for(
    devs: &[DeviceExtract],
    per: &[PerRankCollectives],
    skew: &CollectiveSkew,
) -> Option<WaitedFor> {
    let n = devs.len();
    if n < 2 || skew.matched == 0 {
        return None;
    }
    // By total lateness, not by count: one collective entered 5 ms late keeps the others
    // waiting longer than three entered 10 µs late. A tie names nobody.
    let key = |r: usize| {
        (
            per[r].lateness_ns,
            per[r].last,
            std::cmp::Reverse(per[r].wait_ns),
        )
    };
    let top = (0..n).map(key).max()?;
    let mut at = (0..n).filter(|&r| key(r) == top);
    let r = at.next()?;
    if per[r].last == 0 {
        // Every matched collective had its last start shared: nobody arrives last.
        return Some(WaitedFor {
            rank: -1,
            file: String::new(),
            last_into: 0,
            of_collectives: skew.matched,
            mean_lateness_ns: 0.0,
            wait_ns: 0,
            others_median_wait_ns: 0.0,
            stands_out: false,
            p_value: 1.0,
            statement: format!(
                "no rank stands out by arrival: the ranks start each of the {} matched collectives together (within their clocks' uncertainty)",
                skew.matched
            ),
        });
    }
    let tied = at.next().is_some();
    let d = &devs[r].device;
    let mean = per[r].lateness_ns as f64 / per[r].last as f64;
    let others = median((0..n).filter(|&x| x != r).map(|x| per[x].wait_ns).collect());
    let waits_least = (per[r].wait_ns as f64) <= others;
    let p = if tied {
        1.0
    } else {
        turns_p(
            per[r].last,
            per[r].trials,
            per[r].chance / per[r].trials.max(1) as f64,
            n,
        )
    };
    let stands_out = p < SIGNIFICANCE;
    let facts = format!(
        "last into {} of {} collectives, {} late on average (p = {p:.1e}); it waits {}, the others {}",
        per[r].last,
        skew.matched,
        human_duration(mean),
        human_duration(per[r].wait_ns as f64),
        human_duration(others),
    );
    let statement = if tied {
        format!(
            "no rank stands out by arrival: ranks {} are equally late",
            ranks_list(devs, (0..n).filter(|&x| key(x) == top))
        )
    } else if stands_out && waits_least {
        format!("rank {} keeps the others waiting: {facts}", d.rank)
    } else if stands_out {
        format!("by arrival, rank {} is {facts}", d.rank)
    } else {
        format!(
            "no rank stands out by arrival (rank {} last into {} of {} collectives; p = {p:.2}, {n} ranks taking turns)",
            d.rank, per[r].last, skew.matched
        )
    };
    Some(WaitedFor {
        rank: if tied { -1 } else { d.rank },
        file: if tied { String::new() } else { d.file.clone() },
        last_into: per[r].last,
        of_collectives: skew.matched,
        mean_lateness_ns: mean,
        wait_ns: per[r].wait_ns,
        others_median_wait_ns: others,
        stands_out,
        p_value: p,
        statement,
    })
}

/// Skew of the matched collectives of every group, and per device its last-start count,
/// lateness and transit / wait split; per group its own skew and slow rank.
fn collective_skew(
    devs: &[DeviceExtract],
    m: &Matched,
    clocks: &[DeviceClock],
    top_n: usize,
) -> (CollectiveSkew, Vec<PerRankCollectives>, Vec<CommGroup>) {
    let n = devs.len();
    let mut per = vec![PerRankCollectives::default(); n];
    let mut out = CollectiveSkew::default();
    let mut groups = Vec::new();
    if n < 2 {
        return (out, per, groups);
    }
    // (name id, group, occurrence, first start, skew, first rank, last rank): names are made
    // strings only for the top entries kept.
    let mut skews: Vec<(u32, u32, u64, i64, i64, i32, i32)> = Vec::new();
    for (gi, g) in m.groups.iter().enumerate() {
        out.unmatched += g.unmatched.iter().sum::<u64>();
        if g.members.len() < 2 {
            // Only one member captured: nothing to compare its ops with.
            out.unmatched += g.instances.len() as u64;
            continue;
        }
        let k = g.members.len();
        let mut late = vec![(0u64, 0i64); k];
        let mut group_skews = Vec::with_capacity(g.instances.len());
        for (ii, inst) in g.instances.iter().enumerate() {
            let spans = g.spans_of(ii);
            let starts: Vec<i64> = spans.iter().map(|x| x.0).collect();
            let first = (0..k).min_by_key(|&p| (starts[p], p)).expect("k >= 2");
            // A shared last start names nobody (ties are never broken by rank order), nor does
            // one within the clocks' uncertainty of another member's.
            let (lastp, tied) = unique_max(k, |p| starts[p]);
            let c = |p: usize| &clocks[g.members[p]];
            let tied = tied
                || (0..k).any(|p| p != lastp && starts[lastp] - starts[p] <= c(lastp).tie_ns(c(p)));
            if !tied {
                let lateness = starts[lastp] - starts[first];
                let r = &mut per[g.members[lastp]];
                r.last += 1;
                r.lateness_ns += lateness;
                late[lastp].0 += 1;
                late[lastp].1 += lateness;
                out.with_one_last += 1;
                for &d in &g.members {
                    per[d].trials += 1;
                    per[d].chance += 1.0 / k as f64;
                }
            }
            let transit = spans.iter().map(|x| x.1 - x.0).min().expect("k >= 2");
            for (&d, x) in g.members.iter().zip(spans) {
                per[d].transit_ns += transit;
                per[d].wait_ns += (x.1 - x.0) - transit;
            }
            let skew = starts[lastp] - starts[first];
            group_skews.push(skew);
            skews.push((
                inst.name,
                gi as u32,
                inst.occurrence,
                starts[first],
                skew,
                devs[g.members[first]].device.rank,
                if tied {
                    -1
                } else {
                    devs[g.members[lastp]].device.rank
                },
            ));
        }
        groups.push(comm_group(devs, m, g, &late, group_skews));
    }
    out.matched = skews.len() as u64;
    if !skews.is_empty() {
        let v: Vec<i64> = skews.iter().map(|s| s.4).collect();
        out.skew_mean_ns = v.iter().sum::<i64>() as f64 / v.len() as f64;
        out.skew_max_ns = *v.iter().max().expect("non-empty");
        out.skew_p50_ns = median(v);
    }
    // Stable: ties keep (group, name, occurrence) order.
    skews.sort_by_key(|s| (std::cmp::Reverse(s.4), s.3));
    skews.truncate(top_n);
    out.top = skews
        .into_iter()
        .map(
            |(name, group, occurrence, first_start_ns, skew_ns, first_rank, last_rank)| {
                SkewedCollective {
                    name: m.names[name as usize].clone(),
                    group: m.groups[group as usize].name.clone(),
                    occurrence,
                    first_start_ns,
                    skew_ns,
                    first_rank,
                    last_rank,
                }
            },
        )
        .collect();
    groups.sort_by(|a, b| b.skew_max_ns.cmp(&a.skew_max_ns).then(a.name.cmp(&b.name)));
    (out, per, groups)
}

/// One group's row: members, matched and unmatched ops, skew, and the member whose late starts
/// add up to the most (when one does).
fn comm_group(
    devs: &[DeviceExtract],
    m: &Matched,
    g: &Group,
    late: &[(u64, i64)],
    skews: Vec<i64>,
) -> CommGroup {
    let (slow, tied) = unique_max(late.len(), |p| late[p].1);
    let named = !tied && late[slow].0 > 0;
    let mut unmatched_names: Vec<(String, u64)> = g
        .unmatched_names
        .iter()
        .map(|(&k, &c)| (m.names[k as usize].clone(), c))
        .collect();
    unmatched_names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    unmatched_names.truncate(10);
    let (mean, max) = if skews.is_empty() {
        (0.0, 0)
    } else {
        (
            skews.iter().sum::<i64>() as f64 / skews.len() as f64,
            *skews.iter().max().expect("non-empty"),
        )
    };
    let kind = g
        .members
        .iter()
        .flat_map(|&d| &devs[d].group_kinds)
        .find(|(name, _)| *name == g.name)
        .map(|(_, kind)| kind.clone())
        .unwrap_or_default();
    CommGroup {
        name: g.name.clone(),
        kind,
        ranks: g.members.iter().map(|&d| devs[d].device.rank).collect(),
        matched: g.instances.len() as u64,
        unmatched: g.unmatched.iter().sum(),
        unmatched_names,
        realigned: g.realigned,
        skew_mean_ns: mean,
        skew_p50_ns: median(skews),
        skew_max_ns: max,
        slow_rank: if named {
            devs[g.members[slow]].device.rank
        } else {
            -1
        },
        slow_rank_last_into: if named { late[slow].0 } else { 0 },
        slow_rank_lateness_ns: if named { late[slow].1 } else { 0 },
    }
}

/// The rank with the largest `key`, and whether another rank shares it (then no rank is it).
fn unique_max(n: usize, key: impl Fn(usize) -> i64) -> (usize, bool) {
    let top = (0..n).map(&key).max().expect("n >= 1");
    let mut at = (0..n).filter(|&r| key(r) == top);
    let first = at.next().expect("the max is attained");
    (first, at.next().is_some())
}

/// The single rank at the top of `count` (None on a tie or when every count is 0).
fn single_top(count: &[u64]) -> Option<usize> {
    let top = *count.iter().max()?;
    let mut at = (0..count.len()).filter(|&r| count[r] == top);
    let first = at.next()?;
    (top > 0 && at.next().is_none()).then_some(first)
}

/// Bonferroni-corrected binomial tail: the chance that, of `n` ranks taking turns, some rank is
/// the one in at least `k` of the `m` trials it had chance `p` in each.
fn turns_p(k: u64, m: u64, p: f64, n: usize) -> f64 {
    (super::stats::binomial_tail(k, m, p) * n as f64).min(1.0)
}

fn ranks_list(devs: &[DeviceExtract], idx: impl Iterator<Item = usize>) -> String {
    idx.map(|r| devs[r].device.rank.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The slowest rank by device time, when one rank is slowest in significantly more steps than
/// ranks taking turns would be; otherwise "no rank stands out", with the numbers.
fn slowest(
    devs: &[DeviceExtract],
    count: &[u64],
    reasons: &[BTreeMap<SlowReason, (u64, i64)>],
    of: u64,
) -> Slowest {
    let n = devs.len();
    let steps = |m: u64| format!("{m} step{}", if m == 1 { "" } else { "s" });
    let Some(r) = single_top(count) else {
        let top = count.iter().copied().max().unwrap_or(0);
        let statement = if top == 0 {
            format!(
                "no rank stands out by device time: the ranks tie in each of the {} compared",
                steps(of)
            )
        } else {
            format!(
                "no rank stands out by device time: ranks {} are each the slowest in {top} of {}",
                ranks_list(devs, (0..n).filter(|&r| count[r] == top)),
                steps(of)
            )
        };
        return Slowest {
            rank: -1,
            file: String::new(),
            steps: top,
            of_steps: of,
            reason: SlowReason::Computing,
            mean_excess_ns: 0.0,
            stands_out: false,
            p_value: 1.0,
            statement,
        };
    };
    let (&reason, &(k, excess)) = reasons[r]
        .iter()
        .max_by_key(|(_, v)| v.0)
        .expect("a rank slowest in a step has a reason");
    let d = &devs[r].device;
    let mean = excess as f64 / k.max(1) as f64;
    let p = turns_p(count[r], of, 1.0 / n as f64, n);
    let stands_out = p < SIGNIFICANCE;
    let facts = format!(
        "by device time, rank {} is the slowest in {} of {}, mostly by more {} time (+{} per step over the others' median",
        d.rank,
        count[r],
        steps(of),
        reason,
        human_duration(mean)
    );
    Slowest {
        rank: d.rank,
        file: d.file.clone(),
        steps: count[r],
        of_steps: of,
        reason,
        mean_excess_ns: mean,
        stands_out,
        p_value: p,
        statement: if stands_out {
            format!("{facts}; p = {p:.1e})")
        } else {
            format!(
                "no rank stands out by device time (rank {} slowest in {} of {}; p = {p:.2}, {n} ranks taking turns)",
                d.rank,
                count[r],
                steps(of)
            )
        },
    }
}
