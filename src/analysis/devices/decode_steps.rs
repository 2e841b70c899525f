//! Segmentation of a device's timeline into graph-mode decode steps, shared by step_sync and mtp.
//! A step opens at a NOTIFY_WAIT whose next significant task (a wait of another kind, or a kernel) is
//! a CAPTURE_RECORD. The main replay burst runs from the CAPTURE_RECORD start to the end of the last
//! kernel before the next MEM_WAIT_VALUE, NOTIFY_WAIT or CAPTURE_RECORD. Each MEM_WAIT_VALUE before the
//! next NOTIFY_WAIT / CAPTURE_RECORD opens an MTP head, whose burst runs from the wait's end to the
//! last kernel before the next such task.

use super::{Device, iv};
use crate::model::category::WaitKind;
use crate::model::{Category, Tables};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mark {
    Notify,
    Capture,
    MemWait,
    Kernel,
    Other,
}

#[derive(Debug, Clone)]
pub struct MtpHead {
    pub mem_wait_ts_ns: i64,
    pub mem_wait_ns: i64,
    /// From the MEM_WAIT_VALUE end to the last kernel end of the head.
    pub burst_ns: i64,
}

#[derive(Debug, Clone)]
pub struct DecodeStep {
    pub notify_ts_ns: i64,
    pub notify_ns: i64,
    pub replay_start_ns: i64,
    /// Start of the replay's first kernel.
    pub first_kernel_ns: i64,
    pub replay_end_ns: i64,
    /// Its MTP heads, as a range of [`DecodeSteps::heads`] (one list for every step: a device
    /// can have hundreds of thousands of steps).
    pub head_span: std::ops::Range<u32>,
}

/// A device's decode steps (dereferences to them), with the MTP heads of all of them in one list.
#[derive(Debug, Default)]
pub struct DecodeSteps {
    steps: Vec<DecodeStep>,
    heads: Vec<MtpHead>,
}

impl std::ops::Deref for DecodeSteps {
    type Target = [DecodeStep];
    fn deref(&self) -> &[DecodeStep] {
        &self.steps
    }
}

impl DecodeSteps {
    /// The MTP heads of step `s` (one of these steps).
    pub fn heads(&self, s: &DecodeStep) -> &[MtpHead] {
        &self.heads[s.head_span.start as usize..s.head_span.end as usize]
    }

    /// Every step's heads, step by step.
    pub fn all_heads(&self) -> &[MtpHead] {
        &self.heads
    }
}

/// The mark of each entry of `d.events` (one byte per device event: a device can have tens of
/// millions).
fn marks(t: &Tables, d: &Device) -> Vec<Mark> {
    let mut kinds = super::WaitKinds::default();
    d.events
        .iter()
        .map(|&i| {
            let u = i as usize;
            match t.events.category[u] {
                Category::ComputeKernel | Category::CommKernel => Mark::Kernel,
                Category::WaitSync => match kinds.of(t, u) {
                    Some(WaitKind::Notify) => Mark::Notify,
                    Some(WaitKind::Capture) => Mark::Capture,
                    Some(WaitKind::MemWait) => Mark::MemWait,
                    _ => Mark::Other,
                },
                _ => Mark::Other,
            }
        })
        .collect()
}

/// What ends a burst.
const STOP: [Mark; 3] = [Mark::Notify, Mark::Capture, Mark::MemWait];

/// The end of the last kernel among the events `ev` (marks `m`) before the first stop mark, and
/// how far it looked.
fn burst_end(t: &Tables, ev: &[u32], m: &[Mark]) -> (Option<i64>, usize) {
    let stop = m.iter().position(|x| STOP.contains(x)).unwrap_or(m.len());
    let end = (0..stop)
        .filter(|&j| m[j] == Mark::Kernel)
        .map(|j| iv(t, ev[j]).1)
        .max();
    (end, stop)
}

/// The device's decode steps (segmented once per device, then shared).
pub fn segment<'d>(t: &Tables, d: &'d Device) -> &'d DecodeSteps {
    d.decode_steps.get_or_init(|| segment_now(t, d))
}

fn segment_now(t: &Tables, d: &Device) -> DecodeSteps {
    let (ev, m) = (&d.events[..], marks(t, d));
    let (mut steps, mut heads) = (Vec::new(), Vec::new());
    for k in 0..m.len() {
        if m[k] != Mark::Notify {
            continue;
        }
        let Some(c) = m[k + 1..].iter().position(|&x| x != Mark::Other) else {
            continue;
        };
        if m[k + 1 + c] != Mark::Capture {
            continue;
        }
        let ci = ev[k + 1 + c];
        // Index of the first event after the CAPTURE_RECORD.
        let mut r = k + 2 + c;
        let (Some(end), used) = burst_end(t, &ev[r..], &m[r..]) else {
            continue;
        };
        let Some(first) = (r..r + used)
            .find(|&j| m[j] == Mark::Kernel)
            .map(|j| iv(t, ev[j]).0)
        else {
            continue;
        };
        let (ns, ne) = iv(t, ev[k]);
        let mut step = DecodeStep {
            notify_ts_ns: ns,
            notify_ns: ne - ns,
            replay_start_ns: iv(t, ci).0,
            first_kernel_ns: first,
            replay_end_ns: end,
            head_span: heads.len() as u32..heads.len() as u32,
        };
        r += used;
        while r < m.len() && m[r] == Mark::MemWait {
            let (ws, we) = iv(t, ev[r]);
            let (head_end, used) = burst_end(t, &ev[r + 1..], &m[r + 1..]);
            heads.push(MtpHead {
                mem_wait_ts_ns: ws,
                mem_wait_ns: we - ws,
                burst_ns: head_end.map_or(0, |e| e - we),
            });
            r += 1 + used;
        }
        step.head_span.end = heads.len() as u32;
        steps.push(step);
    }
    steps.shrink_to_fit();
    heads.shrink_to_fit();
    DecodeSteps { steps, heads }
}
