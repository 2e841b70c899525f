//! What the host side of a device's file tells the cause rules, read in one pass over the
//! events: the file's steps, its synchronous host calls (`host_calls::blocks_host`), whether it
//! has `update_step_context` scopes (decode serving), and its host window with the events that
//! open and close it (the capture edges).

use super::sorted::Sorted;
use crate::analysis::devices::{Device, iv};
use crate::analysis::host_calls::{blocks_host, is_host_event};
use crate::analysis::intervals::Iv;
use crate::model::{Category, Tables};

pub(super) struct HostSide {
    /// The file's steps (ProfilerStep, Step Trace iterations; else the steps table's rows, as a
    /// CSV-only export's `Step Id` gives them), sorted by start, with their event when they
    /// have one.
    pub steps: Vec<(Iv, Option<u32>)>,
    /// Synchronous host calls of the file, by start.
    pub syncs: Sorted,
    /// The file has host `update_step_context` scopes.
    pub step_context: bool,
    /// The first-starting and the last-ending host event of the file.
    pub window: Option<(u32, u32)>,
}

impl HostSide {
    /// The host window of the file: first start to last end of its host events.
    pub fn window_span(&self, t: &Tables) -> Option<Iv> {
        self.window.map(|(f, l)| (iv(t, f).0, iv(t, l).1))
    }
}

pub(super) fn read(t: &Tables, d: &Device) -> HostSide {
    let mut steps: Vec<(Iv, Option<u32>)> = Vec::new();
    let mut syncs: Vec<u32> = Vec::new();
    // Per distinct name: 0 not looked at, 1 does not block, 2 blocks (one byte per string).
    let mut blocks: Vec<u8> = vec![0; t.strings.len() + 1];
    let context = t.strings.lookup("update_step_context");
    let mut step_context = false;
    let mut bounds: Option<((u32, i64), (u32, i64))> = None;
    for i in 0..t.events.len() {
        if t.event_file(i) != d.file {
            continue;
        }
        let c = t.events.category[i];
        let name = t.events.name[i];
        let x = i as u32;
        step_context |= Some(name) == context;
        // Steps may sit on the device (a graph sink's `Iteration N`).
        if c == Category::Step {
            steps.push((iv(t, x), Some(x)));
        }
        if !is_host_event(t, i) {
            continue;
        }
        if c == Category::HostOp {
            let b = &mut blocks[name.0 as usize];
            if *b == 0 {
                *b = 1 + blocks_host(t.str(name)) as u8;
            }
            if *b == 2 {
                syncs.push(x);
            }
        }
        // The first start and last end so far kept beside their events (the end of a long
        // event is a slower read than a column load).
        let (ts, end) = (t.events.ts_ns[i], t.events.end_ns(i));
        bounds = Some(match bounds {
            None => ((x, ts), (x, end)),
            Some((f, l)) => (
                if ts < f.1 { (x, ts) } else { f },
                if end > l.1 { (x, end) } else { l },
            ),
        });
    }
    let window = bounds.map(|(f, l)| (f.0, l.0));
    if steps.is_empty() {
        let s = &t.steps;
        steps.extend(
            (0..s.file.len())
                .filter(|&k| s.file[k] == d.file && s.end_ns[k] > s.start_ns[k])
                .map(|k| ((s.start_ns[k], s.end_ns[k]), None)),
        );
    }
    steps.sort_unstable();
    HostSide {
        steps,
        syncs: Sorted::of(t, syncs),
        step_context,
        window,
    }
}
