//! Compute-stream composition per device: only device compute kernels count (host rows,
//! wait/sync, data movement and communication are excluded by category). Per physical stream:
//! compute time (sum of kernel durations) and its share of the device's compute time; the busiest
//! stream's top kernels by sum, max and count; kernel-family totals and shares (families.rs).
//! Denominator of every share: the device's total compute-kernel time (sum of durations).

use super::devices::Device;
use super::families::family_of;
use super::stats::pct;
pub use crate::contract::composition::*;
use crate::model::hash::FxHashMap;
use crate::model::{Category, StrId, Tables};
use std::collections::BTreeMap;

fn rows(m: BTreeMap<String, (u64, i64, i64)>, total: i64) -> Vec<KernelRow> {
    m.into_iter()
        .map(|(name, (count, sum, max))| KernelRow {
            name,
            count,
            sum_ns: sum,
            max_ns: max,
            pct_of_compute: pct(sum, total),
        })
        .collect()
}

pub fn compute(t: &Tables, devices: &[Device], top_n: usize) -> Vec<Composition> {
    devices.iter().map(|d| one(t, d, top_n)).collect()
}

/// Adds a kernel (`n` of them, `ns` in all, longest `max`) to a (count, sum, max) total.
fn add(x: &mut (u64, i64, i64), (n, ns, max): (u64, i64, i64)) {
    *x = (x.0 + n, x.1 + ns, x.2.max(max));
}

fn one(t: &Tables, d: &Device, top_n: usize) -> Composition {
    // One pass over the kernels into (stream, name) totals; everything below is derived from
    // those few rows (a device can have tens of millions of kernels and a few hundred names).
    let mut by_stream_name: FxHashMap<(i32, StrId), (u64, i64, i64)> = FxHashMap::default();
    for &i in &d.events {
        let i = i as usize;
        if t.events.category[i] == Category::ComputeKernel {
            let dur = t.events.dur_ns.at(i);
            add(
                by_stream_name
                    .entry((t.events.stream.at(i), t.events.name[i]))
                    .or_default(),
                (1, dur, dur),
            );
        }
    }
    let kernels: u64 = by_stream_name.values().map(|x| x.0).sum();
    let total: i64 = by_stream_name.values().map(|x| x.1).sum();
    let mut per_stream: BTreeMap<i32, (u64, i64)> = BTreeMap::new();
    let mut fam: BTreeMap<String, (u64, i64, i64)> = BTreeMap::new();
    for (&(stream, name), &x) in &by_stream_name {
        let s = per_stream.entry(stream).or_default();
        *s = (s.0 + x.0, s.1 + x.1);
        add(
            fam.entry(family_of(t.str(name)).to_string()).or_default(),
            x,
        );
    }
    let mut streams: Vec<StreamShare> = per_stream
        .iter()
        .map(|(&stream, &(k, ns))| StreamShare {
            stream,
            kernels: k,
            compute_ns: ns,
            pct_of_compute: pct(ns, total),
        })
        .collect();
    streams.sort_by_key(|s| (std::cmp::Reverse(s.compute_ns), s.stream));
    let busiest = streams.first().map(|s| s.stream);
    let mut names: BTreeMap<String, (u64, i64, i64)> = BTreeMap::new();
    for (&(stream, name), &x) in &by_stream_name {
        if Some(stream) == busiest {
            add(names.entry(t.str(name).to_string()).or_default(), x);
        }
    }
    let all = rows(names, total);
    let top = |mut v: Vec<KernelRow>, key: fn(&KernelRow) -> i64| {
        v.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.name.cmp(&b.name)));
        v.truncate(top_n);
        v
    };
    let mut families = rows(fam, total);
    families.sort_by(|a, b| b.sum_ns.cmp(&a.sum_ns).then_with(|| a.name.cmp(&b.name)));
    Composition {
        device: d.evidence.clone(),
        compute_kernels: kernels,
        compute_ns: total,
        streams,
        busiest_stream: busiest,
        busiest_by_sum: top(all.clone(), |r| r.sum_ns),
        busiest_by_max: top(all.clone(), |r| r.max_ns),
        busiest_by_count: top(all, |r| r.count as i64),
        families,
    }
}
