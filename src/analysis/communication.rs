//! Communication shares per device, with two labelled denominators.
//! (a) Explicit communication kernels (Hccl*, hcom_*, allreduceAicpuKernel, ...: category
//!     comm_kernel on the device's streams; when a device has none, the HCCL group ops of its file)
//!     as count, sum, max and percent of the device's compute-kernel time (sum of durations).
//! (b) Communication/wait pressure: EVENT_WAIT, STREAM_WAIT and MEM_WAIT_VALUE tasks as percent of
//!     all device-side task time (sum of durations of every device task on the device); NOTIFY_WAIT
//!     (update_step_context sync, not a collective) and SDMA/DMA data movement reported separately
//!     against the same denominator. Host rows (`Dequeue@Hccl*`) never count: only device events.
//! Plus comm/compute overlap from the unions: overlapped ns and percent of communication time.

use super::device_time::busy_unions;
use super::devices::{CommSource, Device, WaitKinds};
use super::intervals;
use super::stats::pct;
pub use crate::contract::communication::*;
use crate::model::category::WaitKind;
use crate::model::{Category, Tables};

fn share(durs: impl Iterator<Item = i64>, denom: i64) -> Share {
    let (mut count, mut sum, mut max) = (0, 0, 0);
    for d in durs {
        count += 1;
        sum += d;
        max = max.max(d);
    }
    Share {
        count,
        sum_ns: sum,
        max_ns: max,
        pct: pct(sum, denom),
    }
}

pub fn compute(t: &Tables, devices: &[Device]) -> Vec<Communication> {
    devices.iter().map(|d| one(t, d)).collect()
}

fn one(t: &Tables, d: &Device) -> Communication {
    let e = &t.events;
    // Passes over the device's events by category, with no per-event list (a device can have
    // tens of millions of events).
    let durs = |c: Category| {
        d.events
            .iter()
            .map(|&i| i as usize)
            .filter(move |&i| e.category[i] == c)
            .map(|i| e.dur_ns.at(i))
    };
    let compute_ns = crate::units::sum_ns(durs(Category::ComputeKernel));
    let device_ns = crate::units::sum_ns(d.events.iter().map(|&i| e.dur_ns.at(i as usize)));
    let has_own = durs(Category::CommKernel).next().is_some();
    let (source, comm) = if !has_own && !d.comm_ops.is_empty() {
        let ops = d.comm_ops.iter().map(|&i| e.dur_ns.at(i as usize));
        (CommSource::HcclGroupOps, share(ops, compute_ns))
    } else {
        let own = durs(Category::CommKernel);
        (CommSource::DeviceCommKernels, share(own, compute_ns))
    };
    // Waits by kind: 1 NOTIFY_WAIT, 2 EVENT_WAIT / STREAM_WAIT / MEM_WAIT_VALUE.
    let mut kinds = WaitKinds::default();
    let mut kind = |i: usize| match kinds.of(t, i) {
        Some(WaitKind::Notify) => 1,
        Some(WaitKind::Event | WaitKind::MemWait) => 2,
        _ => 0,
    };
    let (mut notify, mut other) = (Vec::new(), Vec::new());
    for &i in &d.events {
        let i = i as usize;
        if e.category[i] == Category::WaitSync {
            match kind(i) {
                1 => notify.push(e.dur_ns.at(i)),
                2 => other.push(e.dur_ns.at(i)),
                _ => {}
            }
        }
    }
    let (compute_u, comm_u) = busy_unions(t, d);
    let overlapped = intervals::intersect_total(compute_u, comm_u);
    let comm_total = intervals::total(comm_u);
    Communication {
        device: d.evidence.clone(),
        comm_kernels_source: source,
        comm_kernels: comm,
        compute_kernel_ns: compute_ns,
        event_and_mem_waits: share(other.into_iter(), device_ns),
        notify_wait: share(notify.into_iter(), device_ns),
        data_movement: share(durs(Category::DataMovement), device_ns),
        device_task_ns: device_ns,
        comm_union_ns: comm_total,
        overlapped_with_compute_ns: overlapped,
        overlapped_pct_of_comm: pct(overlapped, comm_total),
    }
}
