//! Top device events per device: grouped by name, with count, sum, mean, std, min, quartiles and
//! max; ranked by sum and by max; separately for compute kernels and for communication + wait/sync
//! tasks. Denominator of `pct_of_total`: the subset's sum of durations on that device.

use super::devices::Device;
use super::stats::{DurStats, Durations, dur_stats};
pub use crate::contract::top_events::*;
use crate::model::{Category, StrId, Tables};

pub fn compute(t: &Tables, devices: &[Device], top_n: usize) -> Vec<TopEvents> {
    let subsets = [EventSubset::Compute, EventSubset::CommunicationAndWait];
    // Each name's group per subset, found by the name's id (ids are dense): one pass over the
    // device's events for both subsets, no hashing.
    let mut slot: Vec<[u32; 2]> = vec![[NONE; 2]; t.strings.len()];
    let mut out = Vec::new();
    for d in devices {
        let mut groups: [Vec<(StrId, Durations)>; 2] = Default::default();
        for &i in &d.events {
            let i = i as usize;
            let s = match t.events.category[i] {
                Category::ComputeKernel => 0,
                Category::CommKernel | Category::WaitSync => 1,
                _ => continue,
            };
            let name = t.events.name[i];
            let g = &mut slot[name.0 as usize][s];
            if *g == NONE {
                *g = groups[s].len() as u32;
                groups[s].push((name, Durations::default()));
            }
            groups[s][*g as usize].1.push(t.events.dur_ns.at(i));
        }
        for (subset, groups) in subsets.into_iter().zip(groups) {
            for (name, _) in &groups {
                slot[name.0 as usize] = [NONE; 2];
            }
            let total = super::stats::wide_sum(groups.iter().flat_map(|g| g.1.iter()));
            let events = groups.iter().map(|g| g.1.len() as u64).sum();
            let mut stats: Vec<DurStats> = groups
                .into_iter()
                .map(|(n, v)| dur_stats(t.str(n).to_string(), v.iter().collect(), total))
                .collect();
            stats.sort_by(|a, b| b.sum_ns.cmp(&a.sum_ns).then_with(|| a.name.cmp(&b.name)));
            let by_sum: Vec<DurStats> = stats.iter().take(top_n).cloned().collect();
            stats.sort_by(|a, b| b.max_ns.cmp(&a.max_ns).then_with(|| a.name.cmp(&b.name)));
            stats.truncate(top_n);
            out.push(TopEvents {
                device: d.evidence.clone(),
                subset,
                subset_events: events,
                subset_sum_ns: super::stats::saturated(total),
                by_sum,
                by_max: stats,
            });
        }
    }
    out
}

/// No group yet, in the name → group table.
const NONE: u32 = u32::MAX;
