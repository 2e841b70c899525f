//! Segmentation of a device's timeline into graph-mode decode steps, shared by step_sync and mtp.
//! A step opens at a NOTIFY_WAIT whose next significant task (a wait of another kind, or a kernel) is
//! a CAPTURE_RECORD. The main replay burst runs from the CAPTURE_RECORD start to the end of the last
//! kernel before the next MEM_WAIT_VALUE, NOTIFY_WAIT or CAPTURE_RECORD. Each MEM_WAIT_VALUE before the
//! next NOTIFY_WAIT / CAPTURE_RECORD opens an MTP head, whose burst runs from the wait's end to the
//! last kernel before the next such task.

use super::devices::{Device, iv, wait_kind};
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
    pub heads: Vec<MtpHead>,
}

fn marks(t: &Tables, d: &Device) -> Vec<(u32, Mark)> {
    let mut buf = String::new();
    d.events
        .iter()
        .map(|&i| {
            let u = i as usize;
            let m = match t.events.category[u] {
                Category::ComputeKernel | Category::CommKernel => Mark::Kernel,
                Category::WaitSync => match wait_kind(t, u, &mut buf) {
                    Some(WaitKind::Notify) => Mark::Notify,
                    Some(WaitKind::Capture) => Mark::Capture,
                    Some(WaitKind::MemWait) => Mark::MemWait,
                    _ => Mark::Other,
                },
                _ => Mark::Other,
            };
            (i, m)
        })
        .collect()
}

/// The end of the last kernel in `m` before the next mark of a kind in `stop_at`, and how far it looked.
fn burst_end(t: &Tables, m: &[(u32, Mark)], stop_at: &[Mark]) -> (Option<i64>, usize) {
    let stop = m
        .iter()
        .position(|x| stop_at.contains(&x.1))
        .unwrap_or(m.len());
    let end = m[..stop]
        .iter()
        .filter(|x| x.1 == Mark::Kernel)
        .map(|x| iv(t, x.0).1)
        .max();
    (end, stop)
}

/// The device's decode steps (segmented once per device, then shared).
pub fn segment<'d>(t: &Tables, d: &'d Device) -> &'d [DecodeStep] {
    d.decode_steps.get_or_init(|| segment_now(t, d))
}

fn segment_now(t: &Tables, d: &Device) -> Vec<DecodeStep> {
    let m = marks(t, d);
    let mut steps = Vec::new();
    for (k, &(n, mark)) in m.iter().enumerate() {
        if mark != Mark::Notify {
            continue;
        }
        let Some(c) = m[k + 1..].iter().position(|x| x.1 != Mark::Other) else {
            continue;
        };
        let (ci, cm) = m[k + 1 + c];
        if cm != Mark::Capture {
            continue;
        }
        let mut rest = &m[k + 2 + c..];
        let (Some(end), used) = burst_end(t, rest, &[Mark::Notify, Mark::Capture, Mark::MemWait])
        else {
            continue;
        };
        let Some(first) = rest[..used]
            .iter()
            .find(|x| x.1 == Mark::Kernel)
            .map(|x| iv(t, x.0).0)
        else {
            continue;
        };
        let (ns, ne) = iv(t, n);
        let mut step = DecodeStep {
            notify_ts_ns: ns,
            notify_ns: ne - ns,
            replay_start_ns: iv(t, ci).0,
            first_kernel_ns: first,
            replay_end_ns: end,
            heads: Vec::new(),
        };
        rest = &rest[used..];
        while let Some(&(w, Mark::MemWait)) = rest.first() {
            let (ws, we) = iv(t, w);
            let (head_end, used) =
                burst_end(t, &rest[1..], &[Mark::Notify, Mark::Capture, Mark::MemWait]);
            step.heads.push(MtpHead {
                mem_wait_ts_ns: ws,
                mem_wait_ns: we - ws,
                burst_ns: head_end.map_or(0, |e| e - we),
            });
            rest = &rest[1 + used..];
        }
        steps.push(step);
    }
    steps
}
