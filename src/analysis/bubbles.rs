//! Device bubbles: idle gaps of each device (the union of its compute kernels and collective
//! ops, as in [`super::device_time`], so total idle = Free at `min_gap_ns` 0) and of each of its
//! streams (any task occupies a stream). Per device: total idle and its share of the window, a gap
//! histogram, the largest gaps with their neighbours, and a cause per gap:
//! a NOTIFY_WAIT inside the gap → `update_step_context_sync` when the device shows decode serving
//! (graph-replay decode steps, or host `update_step_context` scopes in its file), else
//! `waiting_for_collective` (HCCL's notify wait: training, eager serving); else an EVENT_WAIT inside →
//! `waiting_for_collective`; else a MEM_WAIT_VALUE inside → `mtp_wait`; else a gap inside a graph
//! replay (after a CAPTURE_RECORD, before the next NOTIFY_WAIT / CAPTURE_RECORD) whose replay has at
//! least [`DISPATCH_MIN_GAPS`] gaps → `host_dispatch`; else `unknown`.

use super::device_time::busy_unions;
use super::devices::{Device, DeviceRef, iv, wait_kind, windows};
use super::intervals::{self, Iv};
use super::stats::pct;
use crate::model::category::WaitKind;
use crate::model::{Category, Tables};
use serde::Serialize;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    UpdateStepContextSync,
    WaitingForCollective,
    MtpWait,
    HostDispatch,
    Unknown,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::UpdateStepContextSync => "update_step_context_sync",
            Cause::WaitingForCollective => "waiting_for_collective",
            Cause::MtpWait => "mtp_wait",
            Cause::HostDispatch => "host_dispatch",
            Cause::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Neighbour {
    pub name: String,
    pub stream: i32,
    pub ts_ns: i64,
    pub dur_ns: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Gap {
    pub start_ns: i64,
    pub end_ns: i64,
    pub dur_ns: i64,
    pub cause: Cause,
    /// The wait task that explains the gap, if any (name, stream, ts_ns).
    pub evidence: Option<Neighbour>,
    pub before: Option<Neighbour>,
    pub after: Option<Neighbour>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HistogramBucket {
    /// `[lo_ns, hi_ns)`; hi_ns = -1 means unbounded.
    pub lo_ns: i64,
    pub hi_ns: i64,
    pub count: u64,
    pub total_ns: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CauseTotal {
    pub count: u64,
    pub total_ns: i64,
    pub pct_of_idle: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct StreamIdle {
    pub stream: i32,
    pub tasks: u64,
    pub busy_ns: i64,
    /// Gaps ≥ min_gap between the stream's first and last task.
    pub idle_ns: i64,
    pub gaps: u64,
}

/// Idle inside one decode step: between the replay's first kernel and the end of its last burst
/// (main model and MTP heads). The update_step_context gap before the replay is between steps.
#[derive(Debug, Clone, Serialize)]
pub struct StepIdle {
    pub step: u64,
    pub start_ns: i64,
    pub end_ns: i64,
    /// Gaps ≥ min_gap_ns inside the step.
    pub idle_ns: i64,
    pub idle_pct_of_step: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceBubbles {
    pub device: DeviceRef,
    pub min_gap_ns: i64,
    pub window_start_ns: i64,
    pub window_end_ns: i64,
    /// `window_end_ns − window_start_ns`, less the time between the pieces of a capture
    /// written in pieces (not observed).
    pub window_ns: i64,
    pub busy_ns: i64,
    /// Sum of gaps ≥ min_gap_ns.
    pub idle_ns: i64,
    /// idle_ns / window_ns, percent.
    pub idle_pct_of_window: f64,
    pub gaps: u64,
    pub histogram: Vec<HistogramBucket>,
    pub by_cause: BTreeMap<&'static str, CauseTotal>,
    pub largest: Vec<Gap>,
    pub streams: Vec<StreamIdle>,
    /// Per graph-mode decode step (empty without NOTIFY_WAIT / CAPTURE_RECORD steps).
    pub steps: Vec<StepIdle>,
    /// Σ steps[].idle_ns: idle inside steps; idle_ns minus this is idle between steps.
    pub idle_within_steps_ns: i64,
}

const BUCKETS: &[i64] = &[1_000, 10_000, 100_000, 1_000_000, 10_000_000];

pub fn compute(t: &Tables, devices: &[Device], o: &BubbleOpts) -> Vec<DeviceBubbles> {
    devices.iter().filter_map(|d| one(t, d, o)).collect()
}

fn neighbour(t: &Tables, i: u32) -> Neighbour {
    let u = i as usize;
    Neighbour {
        name: t.event_name(u).to_string(),
        stream: t.events.stream[u],
        ts_ns: t.events.ts_ns[u],
        dur_ns: t.events.dur_ns[u],
    }
}

fn one(t: &Tables, d: &Device, o: &BubbleOpts) -> Option<DeviceBubbles> {
    let (compute, comm) = busy_unions(t, d);
    let busy = intervals::union_of(compute, comm);
    let window: Iv = (busy.first()?.0, busy.last()?.1);
    // Gaps inside each observed window (time between the pieces of a capture is not idle).
    let observed = windows(d, &busy);
    let observed_ns: i64 = observed.iter().map(|w| w.1 - w.0).sum();
    let gaps: Vec<Iv> = observed
        .iter()
        .flat_map(|&w| intervals::gaps(&busy, w))
        .filter(|&(a, b)| b - a >= o.min_gap_ns)
        .collect();

    // A NOTIFY_WAIT is the update_step_context sync only in decode serving: graph-replay decode
    // steps on the device or host `update_step_context` scopes in the file. Elsewhere (training,
    // eager serving) it is HCCL's wait for a peer's notify: a collective.
    // Decided on the first NOTIFY_WAIT gap only (the host scan is a pass over every event).
    let mut serving: Option<bool> = None;
    // Waits by kind, and replay spans (CAPTURE_RECORD → next NOTIFY_WAIT / CAPTURE_RECORD).
    let mut buf = String::new();
    let mut waits: Vec<(Iv, WaitKind, u32)> = Vec::new();
    for &i in &d.events {
        if let Some(k) = wait_kind(t, i as usize, &mut buf).filter(|&k| k != WaitKind::Other) {
            waits.push((iv(t, i), k, i));
        }
    }
    let mut replays: Vec<Iv> = Vec::new();
    for (n, w) in waits.iter().enumerate() {
        if w.1 == WaitKind::Capture {
            let end = waits[n + 1..]
                .iter()
                .find(|x| matches!(x.1, WaitKind::Capture | WaitKind::Notify))
                .map_or(window.1, |x| x.0.0);
            replays.push((w.0.0, end));
        }
    }
    let in_replay = |g: Iv| {
        replays
            .partition_point(|r| r.0 <= g.0)
            .checked_sub(1)
            .filter(|&k| g.1 <= replays[k].1)
    };
    let mut per_replay: BTreeMap<usize, usize> = BTreeMap::new();
    for &g in &gaps {
        if let Some(k) = in_replay(g) {
            *per_replay.entry(k).or_default() += 1;
        }
    }

    let kernels: Vec<u32> = d
        .events
        .iter()
        .copied()
        .filter(|&i| {
            matches!(
                t.events.category[i as usize],
                Category::ComputeKernel | Category::CommKernel
            )
        })
        .collect();
    // Gaps carry event indexes; names are looked up only for the largest ones reported.
    struct RawGap {
        start_ns: i64,
        end_ns: i64,
        dur_ns: i64,
        cause: Cause,
        evidence: Option<u32>,
        before: Option<u32>,
        after: Option<u32>,
    }
    let mut all: Vec<RawGap> = Vec::with_capacity(gaps.len());
    // Gaps are sorted: the first kernel starting at or after a gap's end only moves forward.
    let mut k = 0;
    for &(a, b) in &gaps {
        // The first wait of each kind inside the gap (one search, one scan).
        let first = waits.partition_point(|w| w.0.1 <= a);
        let (mut notify, mut event, mut mem) = (None, None, None);
        for w in waits[first..].iter().take_while(|w| w.0.0 < b) {
            let slot = match w.1 {
                WaitKind::Notify => &mut notify,
                WaitKind::Event => &mut event,
                WaitKind::MemWait => &mut mem,
                _ => continue,
            };
            slot.get_or_insert(w.2);
        }
        let (cause, ev) = if let Some(w) = notify {
            let serving = *serving.get_or_insert_with(|| {
                !super::decode_steps::segment(t, d).is_empty() || host_step_context(t, d)
            });
            if serving {
                (Cause::UpdateStepContextSync, Some(w))
            } else {
                (Cause::WaitingForCollective, Some(w))
            }
        } else if let Some(w) = event {
            (Cause::WaitingForCollective, Some(w))
        } else if let Some(w) = mem {
            (Cause::MtpWait, Some(w))
        } else if in_replay((a, b)).is_some_and(|k| per_replay[&k] >= DISPATCH_MIN_GAPS) {
            (Cause::HostDispatch, None)
        } else {
            (Cause::Unknown, None)
        };
        while k < kernels.len() && t.events.ts_ns[kernels[k] as usize] < b {
            k += 1;
        }
        let before = kernels[..k]
            .iter()
            .rev()
            .find(|&&i| iv(t, i).1 <= a)
            .copied();
        let after = kernels.get(k).copied();
        all.push(RawGap {
            start_ns: a,
            end_ns: b,
            dur_ns: b - a,
            cause,
            evidence: ev,
            before,
            after,
        });
    }

    let idle: i64 = all.iter().map(|g| g.dur_ns).sum();
    let mut histogram: Vec<HistogramBucket> = Vec::new();
    let mut lo = 0;
    for &hi in BUCKETS.iter().chain(std::iter::once(&-1)) {
        let sel = all
            .iter()
            .filter(|g| g.dur_ns >= lo && (hi < 0 || g.dur_ns < hi));
        let (count, total) = sel.fold((0, 0), |(c, s), g| (c + 1, s + g.dur_ns));
        histogram.push(HistogramBucket {
            lo_ns: lo,
            hi_ns: hi,
            count,
            total_ns: total,
        });
        lo = hi;
    }
    let mut by_cause: BTreeMap<&'static str, CauseTotal> = BTreeMap::new();
    for g in &all {
        let c = by_cause.entry(g.cause.as_str()).or_insert(CauseTotal {
            count: 0,
            total_ns: 0,
            pct_of_idle: 0.0,
        });
        c.count += 1;
        c.total_ns += g.dur_ns;
    }
    for c in by_cause.values_mut() {
        c.pct_of_idle = pct(c.total_ns, idle);
    }
    let gap_count = all.len() as u64;
    let mut largest = all;
    let key = |g: &RawGap| (std::cmp::Reverse(g.dur_ns), g.start_ns);
    if o.top_n < largest.len() {
        largest.select_nth_unstable_by_key(o.top_n, key);
        largest.truncate(o.top_n);
    }
    largest.sort_by_key(key);
    let largest: Vec<Gap> = largest
        .into_iter()
        .map(|g| Gap {
            start_ns: g.start_ns,
            end_ns: g.end_ns,
            dur_ns: g.dur_ns,
            cause: g.cause,
            evidence: g.evidence.map(|i| neighbour(t, i)),
            before: g.before.map(|i| neighbour(t, i)),
            after: g.after.map(|i| neighbour(t, i)),
        })
        .collect();

    let steps: Vec<StepIdle> = super::decode_steps::segment(t, d)
        .iter()
        .enumerate()
        .map(|(k, st)| {
            let end = st
                .heads
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
        .collect();
    let idle_within_steps_ns = steps.iter().map(|s| s.idle_ns).sum();
    Some(DeviceBubbles {
        steps,
        idle_within_steps_ns,
        device: d.evidence.clone(),
        min_gap_ns: o.min_gap_ns,
        window_start_ns: window.0,
        window_end_ns: window.1,
        window_ns: observed_ns,
        busy_ns: intervals::total(&busy),
        idle_ns: idle,
        idle_pct_of_window: pct(idle, observed_ns),
        gaps: gap_count,
        histogram,
        by_cause,
        largest,
        streams: stream_idle(t, d, o),
    })
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
        let s = t.events.stream[i as usize];
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
