//! Kernel-type time breakdown per device, with Holistic Trace Analysis' definitions (its
//! `get_temporal_breakdown` and `get_gpu_kernel_breakdown`): span = first to last device kernel
//! (compute, communication and memory kernels; waits are not kernels); idle = span − their union;
//! compute = union of compute kernels; non-compute = span − idle − compute. The busy union is
//! partitioned into exclusive overlap classes ("COMPUTATION", "COMPUTATION overlapping
//! COMMUNICATION", ...), each as a share of the busy time. Unlike device_time (vendor definitions),
//! memory copies count as busy here.
//!
//! Two windows: the whole capture ([`compute`]), and complete steps only ([`compute_complete_steps`],
//! HTA's default): when a file has at least two distinct `ProfilerStep#N` names, only device kernels
//! whose correlated host event (same correlation id) starts before the last ProfilerStep count,
//! because the last step may be cut off by the end of the capture.

use super::devices::{Device, iv};
use super::stats::pct;
use crate::model::{Category, Tables};
pub use crate::report::contract::kernel_types::*;

const TYPES: [&str; 3] = ["COMPUTATION", "COMMUNICATION", "MEMORY"];

fn kind(c: Category) -> Option<usize> {
    match c {
        Category::ComputeKernel => Some(0),
        Category::CommKernel => Some(1),
        Category::DataMovement => Some(2),
        _ => None,
    }
}

/// The class name of a set of active types (bit i = TYPES[i]).
pub fn class_name(mask: usize) -> String {
    (0..3)
        .filter(|b| mask & (1 << b) != 0)
        .map(|b| TYPES[b])
        .collect::<Vec<_>>()
        .join(" overlapping ")
}

pub fn compute(t: &Tables, devices: &[Device]) -> Vec<KernelTypes> {
    devices
        .iter()
        .filter_map(|d| one(t, d, &|_| true))
        .collect()
}

/// The same breakdown over complete steps only (see the module doc); devices of files with fewer
/// than two ProfilerStep names are left out.
pub fn compute_complete_steps(t: &Tables, devices: &[Device]) -> Vec<KernelTypes> {
    let mut out = Vec::new();
    for d in devices {
        let mut step_names = std::collections::HashSet::new();
        let mut last_start = i64::MIN;
        for i in 0..t.events.len() {
            if t.events.category[i] == Category::Step && t.event_file(i) == d.file {
                step_names.insert(t.events.name[i]);
                last_start = last_start.max(t.events.ts_ns[i]);
            }
        }
        if step_names.len() < 2 {
            continue;
        }
        let launched: std::collections::HashSet<i64> = (0..t.events.len())
            .filter(|&i| {
                t.events.correlation_id.at(i) >= 0
                    && t.events.ts_ns[i] < last_start
                    && !t.event_is_device_side(i)
                    && t.event_file(i) == d.file
            })
            .map(|i| t.events.correlation_id.at(i))
            .collect();
        out.extend(one(t, d, &|i| {
            launched.contains(&t.events.correlation_id.at(i as usize))
        }));
    }
    out
}

fn one(t: &Tables, d: &Device, keep: &dyn Fn(u32) -> bool) -> Option<KernelTypes> {
    // Sweep over start (+1) and end (−1) points of every kernel; ends sort before starts at a tie.
    let mut pts: Vec<(i64, i8, u8)> = Vec::new();
    for &i in d.events.iter().filter(|&&i| keep(i)) {
        if let Some(k) = kind(t.events.category[i as usize]) {
            let (s, e) = iv(t, i);
            if e > s {
                pts.push((s, 1, k as u8));
                pts.push((e, -1, k as u8));
            }
        }
    }
    if pts.is_empty() {
        return None;
    }
    pts.sort_unstable();
    let mut active = [0i64; 3];
    let mut class_ns = [0i64; 8];
    let mut compute_ns = 0;
    let mut prev = pts[0].0;
    for &(x, delta, k) in &pts {
        if x > prev {
            let mask = (0..3)
                .filter(|&b| active[b] > 0)
                .fold(0, |m, b| m | (1 << b));
            class_ns[mask] += x - prev;
            if active[0] > 0 {
                compute_ns += x - prev;
            }
            prev = x;
        }
        active[k as usize] += delta as i64;
    }
    let (start, end) = (pts[0].0, pts.last()?.0);
    let span = end - start;
    let busy: i64 = class_ns[1..].iter().sum();
    let idle = span - busy;
    let mut classes: Vec<ClassShare> = (1..8)
        .filter(|&m| class_ns[m] > 0)
        .map(|m| ClassShare {
            class: class_name(m),
            ns: class_ns[m],
            pct_of_busy: pct(class_ns[m], busy),
        })
        .collect();
    classes.sort_by_key(|c| std::cmp::Reverse(c.ns));
    Some(KernelTypes {
        device: d.evidence.clone(),
        span_start_ns: start,
        span_end_ns: end,
        span_ns: span,
        busy_ns: busy,
        idle_ns: idle,
        compute_ns,
        non_compute_ns: span - idle - compute_ns,
        idle_pct_of_span: pct(idle, span),
        compute_pct_of_span: pct(compute_ns, span),
        non_compute_pct_of_span: pct(span - idle - compute_ns, span),
        classes,
    })
}
