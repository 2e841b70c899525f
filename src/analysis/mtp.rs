//! MTP (multi-token prediction) heads per decode step: after the main model's replay burst, each
//! MEM_WAIT_VALUE opens a head whose burst follows (segmentation in [`super::devices::decode_steps`]). Per
//! device: heads per step, MEM_WAIT_VALUE count and total, and per head index the mean burst and the
//! NOTIFY_WAIT / burst ratio (how the step's update_step_context sync compares to each head's work).

use super::devices::Device;
use super::devices::decode_steps;
use super::stats::pct;
pub use crate::contract::mtp::*;
use crate::model::Tables;
use std::collections::BTreeMap;

pub fn compute(t: &Tables, devices: &[Device]) -> Vec<Mtp> {
    devices
        .iter()
        .filter_map(|d| {
            let steps = decode_steps::segment(t, d);
            if steps.all_heads().is_empty() {
                return None;
            }
            let mut heads_per_step: BTreeMap<usize, u64> = BTreeMap::new();
            let mut by_head: BTreeMap<usize, (u64, i64, i64, i64)> = BTreeMap::new();
            for s in steps.iter() {
                *heads_per_step.entry(steps.heads(s).len()).or_default() += 1;
                for (k, h) in steps.heads(s).iter().enumerate() {
                    let e = by_head.entry(k + 1).or_default();
                    e.0 += 1;
                    e.1 += h.mem_wait_ns;
                    e.2 += h.burst_ns;
                    e.3 += s.notify_ns;
                }
            }
            let all = steps.all_heads();
            Some(Mtp {
                device: d.evidence.clone(),
                decode_steps: steps.len() as u64,
                heads_per_step,
                mem_waits: all.len() as u64,
                mem_wait_total_ns: all.iter().map(|h| h.mem_wait_ns).sum(),
                main_burst_total_ns: steps
                    .iter()
                    .map(|s| s.replay_end_ns - s.replay_start_ns)
                    .sum(),
                heads: by_head
                    .into_iter()
                    .map(|(head, (n, w, b, notify))| HeadStats {
                        head,
                        steps: n,
                        mem_wait_total_ns: w,
                        burst_total_ns: b,
                        burst_mean_ns: b as f64 / n as f64,
                        notify_pct_of_burst: pct(notify, b),
                    })
                    .collect(),
                mem_wait_ns: all.iter().map(|h| h.mem_wait_ns).collect(),
                head_burst_ns: all.iter().map(|h| h.burst_ns).collect(),
            })
        })
        .collect()
}
