//! Device bubbles: idle gaps of each device (the union of its compute kernels and collective
//! ops, as in [`super::device_time`], so total idle = Free at `min_gap_ns` 0) and of each of its
//! streams (any task occupies a stream). Per device: total idle and its share of the window, a gap
//! histogram, the largest gaps with their neighbours, and a cause per gap with the event that
//! explains it. The first rule that holds decides (docs/analyses/bubbles.md):
//! 1. `update_step_context_sync`: a NOTIFY_WAIT inside the gap on a device that shows decode
//!    serving (graph-replay decode steps, or host `update_step_context` scopes in its file);
//! 2. `mtp_wait`: a MEM_WAIT_VALUE inside the gap;
//! 3. `host_dispatch`: the task that ends the gap was launched by a host call that began after
//!    the gap began (the host was late; evidence: the call), or the gap lies inside a graph replay
//!    (after a CAPTURE_RECORD, before the next NOTIFY_WAIT / CAPTURE_RECORD) with at least
//!    [`DISPATCH_MIN_GAPS`] gaps;
//! 4. `waiting_for_collective`: a NOTIFY_WAIT inside the gap (HCCL's wait for a peer), or a
//!    communication task of a collective in flight (REDUCE_ASYNC, hcom tasks) inside it;
//! 5. `synchronization`: an EVENT_WAIT / STREAM_WAIT inside the gap (a stream waits for another);
//! 6. `data_movement`: a copy / DMA task overlaps the gap;
//! 7. `between_steps`: the gap lies outside every step of the file (ProfilerStep, Step Trace);
//! 8. `device_scheduling`: the task ending the gap had been launched before the gap began (it
//!    was queued; with a framework-op link, the op had ended) and nothing above lies in the gap:
//!    the device took that long to start a queued task (evidence: that task; its launch call is
//!    in `launch`);
//!    The same cause when the capture is a sunk graph (no task has a host launch and the steps
//!    are the device's `Iteration N`): a gap inside an iteration with none of the evidence above
//!    (evidence: the task ending the gap; the model's tasks were submitted when the iteration
//!    began);
//! 9. `unknown`: no evidence (e.g. tasks without a launch link).

pub use super::devices::busy::device_gaps;
use super::devices::busy::{BusyGaps, busy_gaps};
use super::devices::{CommSource, Device, iv, wait_kind};
use super::intervals::{self, Iv};
use super::stats::pct;
pub use crate::contract::bubbles::*;
use crate::model::category::WaitKind;
use crate::model::{Category, Tables};
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
pub struct BubbleOpts {
    /// Gaps shorter than this are not bubbles (default 1 µs).
    pub min_gap_ns: i64,
    /// How many of the largest gaps to list per device.
    pub top_n: usize,
}

impl Default for BubbleOpts {
    fn default() -> Self {
        BubbleOpts {
            min_gap_ns: 1_000,
            top_n: 10,
        }
    }
}

/// Gaps inside one replay needed to blame host dispatch.
pub const DISPATCH_MIN_GAPS: usize = 3;

const BUCKETS: &[i64] = &[1_000, 10_000, 100_000, 1_000_000, 10_000_000];

pub fn compute(t: &Tables, devices: &[Device], o: &BubbleOpts) -> Vec<DeviceBubbles> {
    devices.iter().filter_map(|d| one(t, d, o)).collect()
}

fn neighbour(t: &Tables, i: u32) -> Neighbour {
    let u = i as usize;
    Neighbour {
        name: t.event_name(u).to_string(),
        stream: t.events.stream.at(u),
        ts_ns: t.events.ts_ns[u],
        dur_ns: t.events.dur_ns.at(u),
    }
}

/// Device events in start order with the running maximum of their ends, so that "the first one
/// that ends after `a`" is a binary search even when they overlap. Holds indexes, not intervals:
/// 12 bytes per event (a device can have millions of waits and communication tasks).
#[derive(Default)]
struct Sorted {
    events: Vec<u32>,
    max_end: Vec<i64>,
}

impl Sorted {
    /// `i` must not start before the previous event.
    fn push(&mut self, t: &Tables, i: u32) {
        let end = iv(t, i).1;
        self.max_end
            .push(self.max_end.last().map_or(end, |&m| m.max(end)));
        self.events.push(i);
    }

    /// The events that overlap `[a, b)`, in start order, with their positions here.
    fn overlapping<'s>(
        &'s self,
        t: &'s Tables,
        (a, b): Iv,
    ) -> impl Iterator<Item = (usize, u32)> + 's {
        let first = self.max_end.partition_point(|&e| e <= a);
        (first..self.events.len())
            .map(move |k| (k, self.events[k], iv(t, self.events[k])))
            .take_while(move |x| x.2.0 < b)
            .filter(move |x| x.2.1 > a)
            .map(|x| (x.0, x.1))
    }
}

fn one(t: &Tables, d: &Device, o: &BubbleOpts) -> Option<DeviceBubbles> {
    // Gaps inside each observed window (time between the pieces of a capture is not idle).
    let BusyGaps {
        window,
        observed_ns,
        busy_ns,
        gaps,
    } = busy_gaps(t, d, o.min_gap_ns)?;
    let mut tally = Tally::new(o.top_n);
    classify(t, d, &gaps, window, |g| tally.add(g));
    let idle = tally.idle_ns;
    let histogram = tally.histogram();
    let by_cause = tally.by_cause(idle);
    let unknown_ns = by_cause
        .get(Cause::Unknown.as_str())
        .map_or(0, |c| c.total_ns);
    let gap_count = tally.gaps;
    let largest = largest_of(t, tally.largest, o.top_n);
    let steps = step_idle(t, d, &gaps);
    let idle_within_steps_ns = steps.iter().map(|s| s.idle_ns).sum();
    Some(DeviceBubbles {
        steps,
        idle_within_steps_ns,
        device: d.evidence.clone(),
        min_gap_ns: o.min_gap_ns,
        window_start_ns: window.0,
        window_end_ns: window.1,
        window_ns: observed_ns,
        busy_ns,
        idle_ns: idle,
        idle_pct_of_window: pct(idle, observed_ns),
        gaps: gap_count,
        histogram,
        by_cause,
        unknown_ns,
        named_pct_of_idle: pct(idle - unknown_ns, idle),
        largest,
        streams: stream_idle(t, d, o),
    })
}

/// A gap with event indexes; names are looked up only for the largest ones reported.
struct RawGap {
    start_ns: i64,
    end_ns: i64,
    dur_ns: i64,
    cause: Cause,
    evidence: Option<u32>,
    before: Option<u32>,
    after: Option<u32>,
    /// (task ending the gap, its launch call)
    launch: Option<(u32, u32)>,
}

/// What a gap can overlap on the device: waits by kind, copies, communication tasks that are not
/// the device's busy time, and graph-replay spans (CAPTURE_RECORD → next NOTIFY_WAIT /
/// CAPTURE_RECORD).
struct Evidence {
    waits: Sorted,
    /// The wait kind of each of `waits` (in its order).
    wait_kinds: Vec<WaitKind>,
    copies: Sorted,
    comm_tasks: Sorted,
    replays: Vec<Iv>,
}

fn evidence_of(t: &Tables, d: &Device, window: Iv) -> Evidence {
    let mut buf = String::new();
    let (mut waits, mut copies, mut comm_tasks) =
        (Sorted::default(), Sorted::default(), Sorted::default());
    let mut wait_kinds = Vec::new();
    // Communication tasks of the device that are not its busy time (the HCCL group ops are).
    let own_comm_busy = d.comm_source == CommSource::DeviceCommKernels;
    for &i in &d.events {
        if let Some(k) = wait_kind(t, i as usize, &mut buf).filter(|&k| k != WaitKind::Other) {
            waits.push(t, i);
            wait_kinds.push(k);
        } else {
            match t.events.category[i as usize] {
                Category::DataMovement => copies.push(t, i),
                Category::CommKernel if !own_comm_busy => comm_tasks.push(t, i),
                _ => {}
            }
        }
    }
    let mut replays: Vec<Iv> = Vec::new();
    for (n, &k) in wait_kinds.iter().enumerate() {
        if k == WaitKind::Capture {
            let end = (n + 1..wait_kinds.len())
                .find(|&m| matches!(wait_kinds[m], WaitKind::Capture | WaitKind::Notify))
                .map_or(window.1, |m| t.events.ts_ns[waits.events[m] as usize]);
            replays.push((t.events.ts_ns[waits.events[n] as usize], end));
        }
    }
    Evidence {
        waits,
        wait_kinds,
        copies,
        comm_tasks,
        replays,
    }
}

/// Every gap with its cause (the first rule that holds, docs/analyses/bubbles.md), its evidence
/// and its neighbouring kernels, handed to `sink` in gap order (a device can have millions of
/// gaps: they are tallied as they come, not stored).
fn classify(t: &Tables, d: &Device, gaps: &[Iv], window: Iv, mut sink: impl FnMut(RawGap)) {
    let mut rules = Rules::new(t, d, gaps, window);
    let is_kernel = |i: u32| {
        matches!(
            t.events.category[i as usize],
            Category::ComputeKernel | Category::CommKernel
        )
    };
    let events = &d.events;
    // Gaps are sorted: the first device event starting at or after a gap's end only moves
    // forward; the kernels around the gap are found from there.
    let mut k = 0;
    for &(a, b) in gaps {
        let launch = super::dispatch::next_launch(t, d, rules.launches, b);
        let (cause, ev) = rules.cause((a, b), launch);
        while k < events.len() && t.events.ts_ns[events[k] as usize] < b {
            k += 1;
        }
        let before = events[..k]
            .iter()
            .rev()
            .find(|&&i| is_kernel(i) && iv(t, i).1 <= a)
            .copied();
        let after = events[k..].iter().find(|&&i| is_kernel(i)).copied();
        let (cause, ev) = if cause == Cause::Unknown
            && rules.graph_sunk
            && rules.steps.iter().any(|s| s.0.0 <= a && b <= s.0.1)
        {
            (Cause::DeviceScheduling, after)
        } else {
            (cause, ev)
        };
        sink(RawGap {
            start_ns: a,
            end_ns: b,
            dur_ns: b - a,
            cause,
            evidence: ev,
            before,
            after,
            launch,
        });
    }
}

/// What the cause rules of one device read: its waits, copies, communication tasks, graph
/// replays, launches and steps.
struct Rules<'a> {
    t: &'a Tables,
    d: &'a Device,
    evidence: Evidence,
    /// Gaps per graph replay (index into `evidence.replays`).
    per_replay: BTreeMap<usize, usize>,
    launches: &'a super::dispatch::Launches,
    steps: Vec<(Iv, u32)>,
    /// Graph sink (legacy CANN / MindSpore): no task has a host launch, and the steps are the
    /// device's own iterations; the model's tasks were submitted together when the iteration
    /// began.
    graph_sunk: bool,
    /// Whether a NOTIFY_WAIT is the update_step_context sync: only in decode serving (graph-replay
    /// decode steps on the device or host `update_step_context` scopes in the file). Elsewhere
    /// (training, eager serving) it is HCCL's wait for a peer's notify: a collective. Decided on
    /// the first NOTIFY_WAIT gap only (the host scan is a pass over every event).
    serving: Option<bool>,
}

impl<'a> Rules<'a> {
    fn new(t: &'a Tables, d: &'a Device, gaps: &[Iv], window: Iv) -> Self {
        let evidence = evidence_of(t, d, window);
        let mut per_replay: BTreeMap<usize, usize> = BTreeMap::new();
        for &g in gaps {
            if let Some(k) = replay_of(&evidence.replays, g) {
                *per_replay.entry(k).or_default() += 1;
            }
        }
        let launches = super::dispatch::launches(t, d);
        let steps = step_spans(t, d);
        let graph_sunk = !steps.is_empty()
            && launches
                .launch
                .iter()
                .all(|&l| l == super::dispatch::NO_LAUNCH)
            && steps
                .iter()
                .all(|s| t.event_name(s.1 as usize).starts_with("Iteration "));
        Rules {
            t,
            d,
            evidence,
            per_replay,
            launches,
            steps,
            graph_sunk,
            serving: None,
        }
    }

    /// The first rule that holds for gap (`a`, `b`), ended by the task `launch` (with its launch
    /// call), and the event that shows it.
    fn cause(&mut self, (a, b): Iv, launch: Option<(u32, u32)>) -> (Cause, Option<u32>) {
        let (t, d) = (self.t, self.d);
        let ev = &self.evidence;
        // The first wait of each kind inside the gap.
        let (mut notify, mut event, mut mem) = (None, None, None);
        for (k, w) in ev.waits.overlapping(t, (a, b)) {
            let slot = match ev.wait_kinds[k] {
                WaitKind::Notify => &mut notify,
                WaitKind::Event => &mut event,
                WaitKind::MemWait => &mut mem,
                _ => continue,
            };
            slot.get_or_insert(w);
        }
        let late = launch.filter(|&(_, c)| t.events.ts_ns[c as usize] > a);
        let serving = &mut self.serving;
        let serving_notify = notify.filter(|_| {
            *serving.get_or_insert_with(|| {
                !super::devices::decode_steps::segment(t, d).is_empty() || host_step_context(t, d)
            })
        });
        let dispatch_bound_replay = replay_of(&ev.replays, (a, b))
            .is_some_and(|k| self.per_replay[&k] >= DISPATCH_MIN_GAPS);
        if let Some(w) = serving_notify {
            (Cause::UpdateStepContextSync, Some(w))
        } else if let Some(w) = mem {
            (Cause::MtpWait, Some(w))
        } else if let Some((_, c)) = late {
            (Cause::HostDispatch, Some(c))
        } else if dispatch_bound_replay {
            (Cause::HostDispatch, None)
        } else if let Some(w) = notify {
            (Cause::WaitingForCollective, Some(w))
        } else if let Some(c) = ev.comm_tasks.overlapping(t, (a, b)).next() {
            (Cause::WaitingForCollective, Some(c.1))
        } else if let Some(w) = event {
            (Cause::Synchronization, Some(w))
        } else if let Some(c) = ev.copies.overlapping(t, (a, b)).next() {
            (Cause::DataMovement, Some(c.1))
        } else if let Some(s) = outside_steps(&self.steps, (a, b)) {
            (Cause::BetweenSteps, s)
        } else if let Some((task, _)) =
            launch.filter(|&(_, c)| self.launches.issued_before(t, c, a))
        {
            (Cause::DeviceScheduling, Some(task))
        } else {
            (Cause::Unknown, None)
        }
    }
}

/// The graph replay (index into `replays`, sorted by start) that holds gap `g` whole.
fn replay_of(replays: &[Iv], g: Iv) -> Option<usize> {
    replays
        .partition_point(|r| r.0 <= g.0)
        .checked_sub(1)
        .filter(|&k| g.1 <= replays[k].1)
}

/// The gaps of one device, tallied as they are classified: totals, the length histogram, the
/// totals per cause and the candidates for the largest `top_n`.
struct Tally {
    top_n: usize,
    gaps: u64,
    idle_ns: i64,
    /// (count, ns) per bucket of [`BUCKETS`], the last open-ended.
    buckets: [(u64, i64); BUCKETS.len() + 1],
    causes: BTreeMap<&'static str, (u64, i64)>,
    /// Holds the `top_n` largest gaps once trimmed; trimmed when it reaches twice that.
    largest: Vec<RawGap>,
}

/// Longest first, then earliest.
fn largest_first(g: &RawGap) -> (std::cmp::Reverse<i64>, i64) {
    (std::cmp::Reverse(g.dur_ns), g.start_ns)
}

impl Tally {
    fn new(top_n: usize) -> Tally {
        Tally {
            top_n,
            gaps: 0,
            idle_ns: 0,
            buckets: [(0, 0); BUCKETS.len() + 1],
            causes: BTreeMap::new(),
            largest: Vec::new(),
        }
    }

    fn add(&mut self, g: RawGap) {
        self.gaps += 1;
        self.idle_ns += g.dur_ns;
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
    fn histogram(&self) -> Vec<HistogramBucket> {
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
    fn by_cause(&self, idle: i64) -> BTreeMap<&'static str, CauseTotal> {
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

/// The `top_n` largest gaps, longest first, with their neighbours' names and launch details.
fn largest_of(t: &Tables, mut largest: Vec<RawGap>, top_n: usize) -> Vec<Gap> {
    if top_n < largest.len() {
        largest.select_nth_unstable_by_key(top_n, largest_first);
        largest.truncate(top_n);
    }
    largest.sort_by_key(largest_first);
    let pairs: Vec<(u32, u32)> = largest.iter().filter_map(|g| g.launch).collect();
    let mut ops = super::dispatch::ops_above(t, &pairs).into_iter();
    largest
        .into_iter()
        .map(|g| Gap {
            start_ns: g.start_ns,
            end_ns: g.end_ns,
            dur_ns: g.dur_ns,
            cause: g.cause,
            evidence: g.evidence.map(|i| neighbour(t, i)),
            before: g.before.map(|i| neighbour(t, i)),
            after: g.after.map(|i| neighbour(t, i)),
            launch: g.launch.map(|(_, c)| neighbour(t, c)),
            launch_lag_ns: g
                .launch
                .map(|(_, c)| t.events.ts_ns[c as usize] - g.start_ns),
            launch_op: g
                .launch
                .and_then(|_| ops.next().flatten())
                .map(|o| t.event_name(o as usize).to_string()),
        })
        .collect()
}

/// Idle inside each decode step (graph-replay steps of the device).
fn step_idle(t: &Tables, d: &Device, gaps: &[Iv]) -> Vec<StepIdle> {
    let steps = super::devices::decode_steps::segment(t, d);
    steps
        .iter()
        .enumerate()
        .map(|(k, st)| {
            let end = steps
                .heads(st)
                .iter()
                .map(|h| h.mem_wait_ts_ns + h.mem_wait_ns + h.burst_ns)
                .fold(st.replay_end_ns, i64::max);
            let start = st.first_kernel_ns;
            // Gaps are sorted and disjoint: visit only those that can meet [start, end).
            let first = gaps.partition_point(|&(_, b)| b <= start);
            let idle: i64 = gaps[first..]
                .iter()
                .take_while(|&&(a, _)| a < end)
                .map(|&(a, b)| (b.min(end) - a.max(start)).max(0))
                .sum();
            StepIdle {
                step: k as u64,
                start_ns: start,
                end_ns: end,
                idle_ns: idle,
                idle_pct_of_step: pct(idle, end - start),
            }
        })
        .collect()
}

/// The steps of the device's file (ProfilerStep, Step Trace iterations), sorted by start, with
/// their event index.
fn step_spans(t: &Tables, d: &Device) -> Vec<(Iv, u32)> {
    let mut v: Vec<(Iv, u32)> = (0..t.events.len())
        .filter(|&i| t.events.category[i] == Category::Step && t.event_file(i) == d.file)
        .map(|i| (iv(t, i as u32), i as u32))
        .collect();
    v.sort_unstable();
    v
}

/// When `g` lies outside every step (and some step exists): the last step that ended before it.
fn outside_steps(steps: &[(Iv, u32)], g: Iv) -> Option<Option<u32>> {
    if steps.is_empty() || steps.iter().any(|s| s.0.0 < g.1 && s.0.1 > g.0) {
        return None;
    }
    Some(
        steps
            .iter()
            .filter(|s| s.0.1 <= g.0)
            .max_by_key(|s| s.0.1)
            .map(|s| s.1),
    )
}

/// True when the device's file has host `update_step_context` scopes.
fn host_step_context(t: &Tables, d: &Device) -> bool {
    t.strings.lookup("update_step_context").is_some_and(|id| {
        (0..t.events.len()).any(|i| t.events.name[i] == id && t.event_file(i) == d.file)
    })
}

fn stream_idle(t: &Tables, d: &Device, o: &BubbleOpts) -> Vec<StreamIdle> {
    // Streams are few: a short list, looked up from the previous event's stream first. Device
    // events are sorted by start, so each stream's tasks arrive in start order.
    let mut by_stream: Vec<(i32, u64, intervals::RunningUnion)> = Vec::new();
    let mut last = usize::MAX;
    for &i in &d.events {
        let s = t.events.stream.at(i as usize);
        if by_stream.get(last).is_none_or(|x| x.0 != s) {
            last = by_stream.iter().position(|x| x.0 == s).unwrap_or_else(|| {
                by_stream.push((s, 0, intervals::RunningUnion::new(o.min_gap_ns)));
                by_stream.len() - 1
            });
        }
        let x = &mut by_stream[last];
        x.1 += 1;
        x.2.add(iv(t, i));
    }
    by_stream.sort_unstable_by_key(|x| x.0);
    by_stream
        .into_iter()
        .map(|(stream, tasks, u)| StreamIdle {
            stream,
            tasks,
            busy_ns: u.busy_ns(),
            idle_ns: u.idle_ns,
            gaps: u.gaps,
        })
        .collect()
}
