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

use super::device_time::busy_unions;
use super::devices::{Device, iv};
use super::intervals::{self, Iv};
use super::stats::pct;
pub use crate::contract::kernel_types::*;
use crate::model::{Category, Tables};

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
    devices.iter().filter_map(|d| one(t, d, None)).collect()
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
        let keep = |i: u32| launched.contains(&t.events.correlation_id.at(i as usize));
        out.extend(one(t, d, Some(&keep)));
    }
    out
}

/// The unions of `d`'s kernels of each type of [`TYPES`] that `keep` accepts, in one pass; the
/// compute one is left empty when `skip_compute` (the caller has it).
fn type_unions(
    t: &Tables,
    d: &Device,
    keep: Option<&dyn Fn(u32) -> bool>,
    skip_compute: bool,
) -> [Vec<Iv>; 3] {
    let mut v: [Vec<Iv>; 3] = Default::default();
    for &i in &d.events {
        if let Some(k) = kind(t.events.category[i as usize])
            && !(k == 0 && skip_compute)
            && keep.is_none_or(|f| f(i))
        {
            v[k].push(iv(t, i));
        }
    }
    v.map(intervals::union)
}

/// Time per overlap class (bit k set: some kernel of TYPES[k] runs) between the first and the
/// last boundary of the three unions, by one merge of their boundaries.
fn class_times(u: [&[Iv]; 3]) -> [i64; 8] {
    // Point p of union k: start of u[k][p / 2] when p is even, its end when odd. The points of
    // one union strictly increase (merged unions neither overlap nor touch), so the unions open
    // at the current point are the ones whose cursor is odd: `mask` is kept by flipping bits.
    let point = |k: usize, p: usize| -> Option<i64> {
        let x = u[k].get(p / 2)?;
        Some(if p.is_multiple_of(2) { x.0 } else { x.1 })
    };
    let mut pos = [0usize; 3];
    let mut next = [point(0, 0), point(1, 0), point(2, 0)];
    let mut class_ns = [0i64; 8];
    let mut mask = 0usize;
    let mut prev: Option<i64> = None;
    while let Some(x) = next.iter().flatten().copied().min() {
        if let Some(p) = prev {
            class_ns[mask] += x - p;
        }
        for k in 0..3 {
            if next[k] == Some(x) {
                pos[k] += 1;
                mask ^= 1 << k;
                next[k] = point(k, pos[k]);
            }
        }
        prev = Some(x);
    }
    class_ns
}

/// `keep`: the kernels to count (None: all, and the compute union is the device's shared one).
fn one(t: &Tables, d: &Device, keep: Option<&dyn Fn(u32) -> bool>) -> Option<KernelTypes> {
    // A device can have tens of millions of kernels: the breakdown is taken from the three
    // per-type unions (sorted, merged; the compute one shared with device_time when every
    // kernel counts) rather than from a sorted list of every start and end.
    let [own_compute, comm, memory] = type_unions(t, d, keep, keep.is_none());
    let compute: &[Iv] = match keep {
        None => &busy_unions(t, d).0,
        Some(_) => &own_compute,
    };
    let u = [compute, &comm[..], &memory[..]];
    let start = u.iter().filter_map(|x| x.first()).map(|x| x.0).min()?;
    let end = u.iter().filter_map(|x| x.last()).map(|x| x.1).max()?;
    let class_ns = class_times(u);
    let compute_ns = intervals::total(compute);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The class of every nanosecond of a small range, from the raw intervals (a bitmap model,
    /// independent of the unions and of the boundary merge).
    #[test]
    fn class_times_match_a_per_nanosecond_model() {
        let mut rnd = intervals::test_rng(7);
        for _ in 0..400 {
            let raw: Vec<Vec<Iv>> = (0..3)
                .map(|_| {
                    (0..rnd(8))
                        .map(|_| {
                            let a = rnd(200);
                            (a, a + rnd(40))
                        })
                        .collect()
                })
                .collect();
            let unions: Vec<Vec<Iv>> = raw.iter().map(|v| intervals::union(v.clone())).collect();
            let got = class_times([&unions[0], &unions[1], &unions[2]]);
            let (lo, hi) = match (
                unions.iter().filter_map(|u| u.first()).map(|x| x.0).min(),
                unions.iter().filter_map(|u| u.last()).map(|x| x.1).max(),
            ) {
                (Some(lo), Some(hi)) => (lo, hi),
                _ => {
                    assert_eq!(got, [0; 8]);
                    continue;
                }
            };
            let mut want = [0i64; 8];
            for ns in lo..hi {
                let mask = (0..3)
                    .filter(|&k| raw[k].iter().any(|&(a, b)| a <= ns && ns < b))
                    .fold(0, |m, k| m | (1 << k));
                want[mask] += 1;
            }
            assert_eq!(got, want, "{raw:?}");
        }
    }
}
