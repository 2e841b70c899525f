//! Compute-stream composition per device: only device compute kernels count (host rows,
//! wait/sync, data movement and communication are excluded by category). Per physical stream:
//! compute time (sum of kernel durations) and its share of the device's compute time; the busiest
//! stream's top kernels by sum, max and count; kernel-family totals and shares (families.rs).
//! Denominator of every share: the device's total compute-kernel time (sum of durations).

use super::devices::Device;
use super::families::family_of;
use super::stats::pct;
use crate::model::{Category, Tables};
pub use crate::report::contract::composition::*;
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

fn one(t: &Tables, d: &Device, top_n: usize) -> Composition {
    let kernels: Vec<usize> = d
        .events
        .iter()
        .map(|&i| i as usize)
        .filter(|&i| t.events.category[i] == Category::ComputeKernel)
        .collect();
    let total: i64 = kernels.iter().map(|&i| t.events.dur_ns.at(i)).sum();
    let mut per_stream: BTreeMap<i32, (u64, i64)> = BTreeMap::new();
    let mut fam: BTreeMap<String, (u64, i64, i64)> = BTreeMap::new();
    let mut family_cache: std::collections::HashMap<crate::model::StrId, String> =
        std::collections::HashMap::new();
    for &i in &kernels {
        let s = per_stream.entry(t.events.stream[i]).or_default();
        s.0 += 1;
        s.1 += t.events.dur_ns.at(i);
        let family = family_cache
            .entry(t.events.name[i])
            .or_insert_with(|| family_of(t.event_name(i)).to_string());
        let f = fam.entry(family.clone()).or_default();
        f.0 += 1;
        f.1 += t.events.dur_ns.at(i);
        f.2 = f.2.max(t.events.dur_ns.at(i));
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
    for &i in kernels
        .iter()
        .filter(|&&i| Some(t.events.stream[i]) == busiest)
    {
        let e = names.entry(t.event_name(i).to_string()).or_default();
        e.0 += 1;
        e.1 += t.events.dur_ns.at(i);
        e.2 = e.2.max(t.events.dur_ns.at(i));
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
        compute_kernels: kernels.len() as u64,
        compute_ns: total,
        streams,
        busiest_stream: busiest,
        busiest_by_sum: top(all.clone(), |r| r.sum_ns),
        busiest_by_max: top(all.clone(), |r| r.max_ns),
        busiest_by_count: top(all, |r| r.count as i64),
        families,
    }
}
