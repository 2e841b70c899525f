//! Top device events per device: grouped by name, with count, sum, mean, std, min, quartiles and
//! max; ranked by sum and by max; separately for compute kernels and for communication + wait/sync
//! tasks. Denominator of `pct_of_total`: the subset's sum of durations on that device.

use super::devices::Device;
use super::stats::{DurStats, Durations, dur_stats};
pub use crate::contract::top_events::*;
use crate::model::hash::FxHashMap;
use crate::model::{Category, Tables};

pub fn compute(t: &Tables, devices: &[Device], top_n: usize) -> Vec<TopEvents> {
    let mut out = Vec::new();
    for d in devices {
        for (subset, keep) in [
            (EventSubset::Compute, &[Category::ComputeKernel][..]),
            (
                EventSubset::CommunicationAndWait,
                &[Category::CommKernel, Category::WaitSync][..],
            ),
        ] {
            let mut groups: FxHashMap<crate::model::StrId, Durations> = FxHashMap::default();
            for &i in &d.events {
                let i = i as usize;
                if keep.contains(&t.events.category[i]) {
                    groups
                        .entry(t.events.name[i])
                        .or_default()
                        .push(t.events.dur_ns.at(i));
                }
            }
            let total = super::stats::wide_sum(groups.values().flat_map(Durations::iter));
            let events = groups.values().map(|v| v.len() as u64).sum();
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
