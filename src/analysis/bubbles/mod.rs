//! Device bubbles: idle gaps of each device (the union of its compute kernels and collective
//! ops, as in [`super::device_time`], so total idle = Free at `min_gap_ns` 0) and of each of its
//! streams (any task occupies a stream). Per device: total idle and its share of the window, a gap
//! histogram, the largest gaps with their neighbours, a cause per gap with the event that
//! explains it, the idle nothing in the trace explains, and the capture edges apart (`edges`).
//! The first rule that holds decides (docs/analyses/bubbles.md; `rules`):
//! 1. `update_step_context_sync`: a NOTIFY_WAIT inside the gap on a device that shows decode
//!    serving (graph-replay decode steps, or host `update_step_context` scopes in its file);
//! 2. `mtp_wait`: a MEM_WAIT_VALUE inside the gap;
//! 3. `host_blocked`: a synchronous host call (stream / device / event sync, a synchronous copy)
//!    holds the host for at least half of the gap and returns by the time the device resumes
//!    (evidence: the call; its frames and the device task it waited for, or none: outside the
//!    trace; `host_block`);
//! 4. `host_dispatch`: the task that ends the gap was launched by a host call that began after
//!    the gap began (the host was late; evidence: the call), or the gap lies inside a graph replay
//!    (after a CAPTURE_RECORD, before the next NOTIFY_WAIT / CAPTURE_RECORD) with at least
//!    [`DISPATCH_MIN_GAPS`] gaps;
//! 5. `waiting_for_collective`: a NOTIFY_WAIT inside the gap (HCCL's wait for a peer), or a
//!    communication task of a collective in flight (REDUCE_ASYNC, hcom tasks) inside it;
//! 6. `synchronization`: an EVENT_WAIT / STREAM_WAIT inside the gap (a stream waits for another);
//! 7. `data_movement`: a copy / DMA task overlaps the gap;
//! 8. `unlisted_work`: a CSV-only export's `Wait Time(us)` says the task ending the gap started
//!    less than the gap after its predecessor: a task the file does not list ran in the gap;
//! 9. `between_steps`: the gap lies outside every step of the file (ProfilerStep, Step Trace,
//!    a CSV's `Step Id`);
//! 10. `device_scheduling`: the task ending the gap had been launched before the gap began (it
//!     was queued; with a framework-op link, the op had ended) and nothing above lies in the gap:
//!     the device took that long to start a queued task (evidence: that task; its launch call is
//!     in `launch`);
//!     The same cause when the capture is a sunk graph (no task has a host launch and the steps
//!     are the device's `Iteration N`): a gap inside an iteration with none of the evidence above
//!     (evidence: the task ending the gap; the model's tasks were submitted when the iteration
//!     began);
//! 11. `unknown`: no evidence (e.g. tasks without a launch link).

mod edges;
mod host_block;
mod host_side;
mod idle;
mod rules;
mod sorted;
mod tally;

pub use super::devices::busy::device_gaps;
use super::devices::busy::{BusyGaps, busy_gaps};
use super::devices::{Device, iv};
use super::intervals::Iv;
use super::stats::pct;
pub use crate::contract::bubbles::*;
use crate::model::{Category, Tables};
pub use host_block::SYNC_RETURN_NS;
use tally::{RawGap, Tally, largest_of};

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

fn one(t: &Tables, d: &Device, o: &BubbleOpts) -> Option<DeviceBubbles> {
    // Gaps inside each observed window (time between the pieces of a capture is not idle).
    let BusyGaps {
        window,
        observed_ns,
        busy_ns,
        gaps,
    } = busy_gaps(t, d, o.min_gap_ns)?;
    let mut tally = Tally::new(o.top_n);
    let mut rules = rules::Rules::new(t, d, &gaps, window);
    classify(t, d, &gaps, &mut rules, |g| tally.add(g));
    let capture_edges = edges::edges(t, d, window, &rules.host, o.min_gap_ns);
    let idle = tally.idle_ns;
    let unexplained = tally.unknown_ns + tally.blocked_outside_ns + tally.unlisted_ns;
    let largest = largest_of(t, std::mem::take(&mut tally.largest), o.top_n);
    let steps = idle::step_idle(t, d, &gaps);
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
        gaps: tally.gaps,
        histogram: tally.histogram(),
        by_cause: tally.by_cause(idle),
        unknown_ns: tally.unknown_ns,
        named_pct_of_idle: pct(idle - tally.unknown_ns, idle),
        host_blocked_outside_ns: tally.blocked_outside_ns,
        unexplained_ns: unexplained,
        unexplained_pct_of_idle: pct(unexplained, idle),
        largest,
        capture_edge_ns: capture_edges.iter().map(|g| g.dur_ns).sum(),
        capture_edges,
        streams: idle::stream_idle(t, d, o),
    })
}

/// Every gap with its cause (the first rule that holds, docs/analyses/bubbles.md), its evidence
/// and its neighbouring kernels, handed to `sink` in gap order (a device can have millions of
/// gaps: they are tallied as they come, not stored).
fn classify(
    t: &Tables,
    d: &Device,
    gaps: &[Iv],
    rules: &mut rules::Rules<'_>,
    mut sink: impl FnMut(RawGap),
) {
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
        while k < events.len() && t.events.ts_ns[events[k] as usize] < b {
            k += 1;
        }
        // `k` is `dispatch::next_launch`'s search for `b`, found by the walk.
        let launch = rules.launches.of(d, t, k);
        let before = events[..k]
            .iter()
            .rev()
            .find(|&&i| is_kernel(i) && iv(t, i).1 <= a)
            .copied();
        let after = events[k..].iter().find(|&&i| is_kernel(i)).copied();
        let mut found = rules.cause((a, b), launch, before, events.get(k).copied());
        if found.cause == Cause::Unknown && rules.graph_sunk && rules.inside_a_step((a, b)) {
            found.cause = Cause::DeviceScheduling;
            found.evidence = after;
        }
        sink(RawGap {
            start_ns: a,
            end_ns: b,
            dur_ns: b - a,
            cause: found.cause,
            evidence: found.evidence,
            before,
            after,
            launch,
            waited: found.waited,
        });
    }
}

/// A name cut to 40 characters (kernel names run to thousands): for one-line statements.
fn short(name: &str) -> String {
    match name.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_string(),
    }
}

impl Gap {
    /// What explains the gap, in words (names cut to 40 characters): the headline's and the
    /// verdict's evidence.
    pub fn explain(&self) -> String {
        let name = |n: &Option<Neighbour>| n.as_ref().map(|n| short(&n.name));
        let ms = |ns: i64| format!("{:.3} ms", ns as f64 / 1e6);
        match self.cause {
            Cause::HostBlocked => {
                let call = name(&self.evidence).unwrap_or_else(|| "a synchronous call".into());
                let b = self.host_block.as_ref();
                let under = b
                    .and_then(|b| b.frames.first())
                    .map(|f| format!(" under {}", short(f)))
                    .unwrap_or_default();
                let waited = match b.and_then(|b| b.waited_for.as_ref()) {
                    Some(w) if w.stream >= 0 => format!("{} (stream {})", short(&w.name), w.stream),
                    Some(w) => short(&w.name),
                    None => "work outside the trace".into(),
                };
                format!("host in {call}{under}, waiting on {waited}")
            }
            Cause::HostDispatch => match (&self.launch, self.launch_lag_ns) {
                (Some(l), Some(lag)) => format!(
                    "the host launched the next task {} in ({}{})",
                    ms(lag),
                    short(&l.name),
                    self.launch_op
                        .as_ref()
                        .map(|o| format!(" under {}", short(o)))
                        .unwrap_or_default()
                ),
                _ => "host dispatch inside a graph replay".into(),
            },
            Cause::Unknown => {
                "nothing in the trace explains it (no launch link, sync call, wait, copy or step)"
                    .into()
            }
            Cause::UnlistedWork => format!(
                "unlisted tasks ran in it (Wait Time of {})",
                name(&self.evidence).unwrap_or_default()
            ),
            Cause::CaptureEdge => format!(
                "the host ran ({}) while the device had no work",
                name(&self.evidence).unwrap_or_default()
            ),
            c => match name(&self.evidence) {
                Some(e) => format!("{c} ({e})"),
                None => c.to_string(),
            },
        }
    }
}
