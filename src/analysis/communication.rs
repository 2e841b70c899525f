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
use super::devices::{CommSource, Device, wait_kind};
use super::intervals;
use super::stats::pct;
use crate::model::category::WaitKind;
use crate::model::{Category, Tables};
pub use crate::report::contract::communication::*;

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
    let idx: Vec<usize> = d.events.iter().map(|&i| i as usize).collect();
    let compute_ns: i64 = idx
        .iter()
        .filter(|&&i| e.category[i] == Category::ComputeKernel)
        .map(|&i| e.dur_ns.at(i))
        .sum();
    let device_ns: i64 = idx.iter().map(|&i| e.dur_ns.at(i)).sum();
    let own: Vec<i64> = idx
        .iter()
        .filter(|&&i| e.category[i] == Category::CommKernel)
        .map(|&i| e.dur_ns.at(i))
        .collect();
    let (source, comm) = if own.is_empty() && !d.comm_ops.is_empty() {
        (
            CommSource::HcclGroupOps,
            d.comm_ops
                .iter()
                .map(|&i| e.dur_ns.at(i as usize))
                .collect::<Vec<_>>(),
        )
    } else {
        (CommSource::DeviceCommKernels, own)
    };
    let mut buf = String::new();
    let mut kind = |i: usize| match wait_kind(t, i, &mut buf) {
        Some(WaitKind::Notify) => 1,
        Some(WaitKind::Event | WaitKind::MemWait) => 2,
        _ => 0,
    };
    let waits: Vec<(usize, u8)> = idx
        .iter()
        .filter(|&&i| e.category[i] == Category::WaitSync)
        .map(|&i| (i, kind(i)))
        .collect();
    let (compute_u, comm_u) = busy_unions(t, d);
    let overlapped = intervals::intersect_total(compute_u, comm_u);
    let comm_total = intervals::total(comm_u);
    Communication {
        device: d.evidence.clone(),
        comm_kernels_source: source,
        comm_kernels: share(comm.into_iter(), compute_ns),
        compute_kernel_ns: compute_ns,
        event_and_mem_waits: share(
            waits.iter().filter(|w| w.1 == 2).map(|w| e.dur_ns.at(w.0)),
            device_ns,
        ),
        notify_wait: share(
            waits.iter().filter(|w| w.1 == 1).map(|w| e.dur_ns.at(w.0)),
            device_ns,
        ),
        data_movement: share(
            idx.iter()
                .filter(|&&i| e.category[i] == Category::DataMovement)
                .map(|&i| e.dur_ns.at(i)),
            device_ns,
        ),
        device_task_ns: device_ns,
        comm_union_ns: comm_total,
        overlapped_with_compute_ns: overlapped,
        overlapped_pct_of_comm: pct(overlapped, comm_total),
    }
}
