//! The cause rules of one device (docs/analyses/bubbles.md): what a gap can overlap on the device
//! (waits by kind, copies, communication tasks, graph-replay spans), the host side of its file
//! (steps, synchronous calls), its launches, and the first rule that holds for a gap.

use super::host_block::{blocking_call, waited_for};
use super::host_side::{self, HostSide};
use super::sorted::Sorted;
use super::{Cause, DISPATCH_MIN_GAPS};
use crate::analysis::devices::{CommSource, Device, WaitKinds};
use crate::analysis::dispatch::{self, Launch, Launches, NO_LAUNCH};
use crate::analysis::gallop::Gallop;
use crate::analysis::intervals::Iv;
use crate::model::category::WaitKind;
use crate::model::hash::FxHashMap;
use crate::model::{Category, Tables, ThreadId};

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
    let mut kinds = WaitKinds::default();
    let (mut waits, mut copies, mut comm_tasks) =
        (Sorted::default(), Sorted::default(), Sorted::default());
    let mut wait_kinds = Vec::new();
    // Communication tasks of the device that are not its busy time (the HCCL group ops are).
    let own_comm_busy = d.comm_source == CommSource::DeviceCommKernels;
    for &i in &d.events {
        if let Some(k) = kinds.of(t, i as usize).filter(|&k| k != WaitKind::Other) {
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

/// The cause of one gap: the rule that held, the event that shows it, and for `host_blocked`
/// the device task the call waited for (None: outside the trace).
pub(super) struct Found {
    pub cause: Cause,
    pub evidence: Option<u32>,
    pub waited: Option<u32>,
}

fn found(cause: Cause, evidence: Option<u32>) -> Found {
    Found {
        cause,
        evidence,
        waited: None,
    }
}

/// What the cause rules of one device read: its waits, copies, communication tasks, graph
/// replays, launches and the host side of its file.
pub(super) struct Rules<'a> {
    t: &'a Tables,
    d: &'a Device,
    evidence: Evidence,
    /// Gaps per graph replay (index into `evidence.replays`).
    per_replay: Vec<usize>,
    pub launches: &'a Launches,
    pub host: HostSide,
    /// Graph sink (legacy CANN / MindSpore): no task has a host launch, and the steps are the
    /// device's own iterations; the model's tasks were submitted together when the iteration
    /// began.
    pub graph_sunk: bool,
    /// A CSV-only export's `Wait Time(us)` of the device's tasks, by (thread, start).
    waits: FxHashMap<(ThreadId, i64), i64>,
    /// Whether a NOTIFY_WAIT is the update_step_context sync: only in decode serving (graph-replay
    /// decode steps on the device or host `update_step_context` scopes in the file). Elsewhere
    /// (training, eager serving) it is HCCL's wait for a peer's notify: a collective. Decided on
    /// the first NOTIFY_WAIT gap only (decode segmentation is a pass over the device).
    serving: Option<bool>,
    /// Where the last gap's replay search ended.
    replay_cursor: Gallop,
}

impl<'a> Rules<'a> {
    pub fn new(t: &'a Tables, d: &'a Device, gaps: &[Iv], window: Iv) -> Self {
        let evidence = evidence_of(t, d, window);
        let mut per_replay = vec![0usize; evidence.replays.len()];
        let mut cursor = Gallop::default();
        for &g in gaps {
            if let Some(k) = replay_of(&evidence.replays, g, &mut cursor) {
                per_replay[k] += 1;
            }
        }
        let launches = dispatch::launches(t, d);
        let host = host_side::read(t, d);
        let graph_sunk = !host.steps.is_empty()
            && launches.launch.iter().all(|&l| l == NO_LAUNCH)
            && host.steps.iter().all(|s| {
                s.1.is_some_and(|e| t.event_name(e as usize).starts_with("Iteration "))
            });
        Rules {
            t,
            d,
            waits: task_waits(t, d),
            evidence,
            per_replay,
            launches,
            host,
            graph_sunk,
            serving: None,
            replay_cursor: Gallop::default(),
        }
    }

    /// The first rule that holds for gap (`a`, `b`), ended by the task `next` (its launch in
    /// `launch` when linked), after the kernel `before`.
    pub fn cause(
        &mut self,
        (a, b): Iv,
        launch: Option<Launch>,
        before: Option<u32>,
        next: Option<u32>,
    ) -> Found {
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
        let late = launch.filter(|l| l.late(a));
        let serving = &mut self.serving;
        let step_context = self.host.step_context;
        let serving_notify = notify.filter(|_| {
            *serving.get_or_insert_with(|| {
                step_context || !crate::analysis::devices::decode_steps::segment(t, d).is_empty()
            })
        });
        let dispatch_bound_replay = replay_of(&ev.replays, (a, b), &mut self.replay_cursor)
            .is_some_and(|k| self.per_replay[k] >= DISPATCH_MIN_GAPS);
        if let Some(w) = serving_notify {
            found(Cause::UpdateStepContextSync, Some(w))
        } else if let Some(w) = mem {
            found(Cause::MtpWait, Some(w))
        } else if let Some(c) = blocking_call(t, &self.host.syncs, (a, b)) {
            let end = t.events.end_ns(c as usize);
            // The tasks from the gap's end on that end before the call returns (it returns at
            // most SYNC_RETURN_NS after the gap: a short scan).
            let resumed = self.d.events[self
                .d
                .events
                .partition_point(|&i| t.events.ts_ns[i as usize] < b)..]
                .iter()
                .copied()
                .take_while(|&i| t.events.ts_ns[i as usize] < end);
            let candidates = before.into_iter().chain(resumed).chain(
                [&ev.copies, &ev.waits, &ev.comm_tasks]
                    .into_iter()
                    .flat_map(|s| s.overlapping(t, (a, end)).map(|x| x.1)),
            );
            Found {
                cause: Cause::HostBlocked,
                evidence: Some(c),
                waited: waited_for(t, c, candidates),
            }
        } else if let Some(l) = late {
            found(Cause::HostDispatch, Some(l.call))
        } else if dispatch_bound_replay {
            found(Cause::HostDispatch, None)
        } else if let Some(w) = notify {
            found(Cause::WaitingForCollective, Some(w))
        } else if let Some(c) = ev.comm_tasks.overlapping(t, (a, b)).next() {
            found(Cause::WaitingForCollective, Some(c.1))
        } else if let Some(w) = event {
            found(Cause::Synchronization, Some(w))
        } else if let Some(c) = ev.copies.overlapping(t, (a, b)).next() {
            found(Cause::DataMovement, Some(c.1))
        } else if let Some(n) = next.filter(|&n| self.unlisted_before(n, a)) {
            found(Cause::UnlistedWork, Some(n))
        } else if let Some(s) = outside_steps(&self.host.steps, (a, b)) {
            found(Cause::BetweenSteps, s)
        } else if let Some(l) = launch.filter(|l| l.issued_before(t, a)) {
            found(Cause::DeviceScheduling, Some(l.task))
        } else {
            found(Cause::Unknown, None)
        }
    }

    /// True when task `n`'s `Wait Time(us)` says its predecessor ended more than
    /// [`UNLISTED_MIN_NS`] after `a`: inside the gap, where the file lists no task.
    fn unlisted_before(&self, n: u32, a: i64) -> bool {
        let i = n as usize;
        self.waits
            .get(&(self.t.events.thread[i], self.t.events.ts_ns[i]))
            .is_some_and(|&w| w > 0 && self.t.events.ts_ns[i] - w > a + UNLISTED_MIN_NS)
    }

    /// True when `(a, b)` lies inside one of the file's steps.
    pub fn inside_a_step(&self, (a, b): Iv) -> bool {
        self.host.steps.iter().any(|s| s.0.0 <= a && b <= s.0.1)
    }
}

/// A predecessor must end this long after the gap began to count as a task the file does not
/// list (CSV start times are rounded to 10 ns at worst; 1 µs keeps rounding out).
const UNLISTED_MIN_NS: i64 = 1_000;

/// The `Wait Time(us)` of `d`'s tasks (a CSV-only export; empty otherwise).
fn task_waits(t: &Tables, d: &Device) -> FxHashMap<(ThreadId, i64), i64> {
    let w = &t.task_waits;
    if w.is_empty() {
        return FxHashMap::default();
    }
    (0..w.len())
        .filter(|&k| t.thread_process(w.thread[k]) == d.process)
        .map(|k| ((w.thread[k], w.ts_ns[k]), w.wait_ns[k]))
        .collect()
}

/// The graph replay (index into `replays`, sorted by start) that holds gap `g` whole; the search
/// starts where `cursor`'s last one ended (gaps come in time order).
fn replay_of(replays: &[Iv], g: Iv, cursor: &mut Gallop) -> Option<usize> {
    cursor
        .partition_point(replays, |r| r.0 <= g.0)
        .checked_sub(1)
        .filter(|&k| g.1 <= replays[k].1)
}

/// When `g` lies outside every step (and some step exists): the event of the last step that
/// ended before it, if it has one.
fn outside_steps(steps: &[(Iv, Option<u32>)], g: Iv) -> Option<Option<u32>> {
    if steps.is_empty() || steps.iter().any(|s| s.0.0 < g.1 && s.0.1 > g.0) {
        return None;
    }
    Some(
        steps
            .iter()
            .filter(|s| s.0.1 <= g.0)
            .max_by_key(|s| s.0.1)
            .and_then(|s| s.1),
    )
}
