//! update_step_context overhead per decode step, on the device (steps and replay bursts as
//! segmented by [`super::devices::decode_steps`]). Ratio = NOTIFY_WAIT / burst. Verdict bands (the seed's): < 5% excellent,
//! 5-25% acceptable, > 25% needs attention. Also the host side: total `update_step_context` scope
//! time vs total device burst time (> 5% needs attention).

use super::devices::Device;
use super::devices::decode_steps;
pub use crate::contract::step_sync::*;
use crate::model::Tables;

pub fn verdict(ratio_pct: f64) -> SyncVerdict {
    if ratio_pct < 5.0 {
        SyncVerdict::Excellent
    } else if ratio_pct <= 25.0 {
        SyncVerdict::Acceptable
    } else {
        SyncVerdict::NeedsAttention
    }
}

pub fn compute(t: &Tables, devices: &[Device]) -> Vec<StepSyncSummary> {
    devices.iter().filter_map(|d| one(t, d)).collect()
}

fn one(t: &Tables, d: &Device) -> Option<StepSyncSummary> {
    let steps: Vec<StepSync> = decode_steps::segment(t, d)
        .iter()
        .enumerate()
        .map(|(k, st)| {
            let replay = st.replay_end_ns - st.replay_start_ns;
            StepSync {
                step: k as u64,
                notify_wait_ts_ns: st.notify_ts_ns,
                notify_wait_ns: st.notify_ns,
                replay_start_ns: st.replay_start_ns,
                replay_ns: replay,
                ratio_pct: if replay > 0 {
                    st.notify_ns as f64 * 100.0 / replay as f64
                } else {
                    0.0
                },
            }
        })
        .collect();
    if steps.is_empty() {
        return None;
    }
    let nt: i64 = steps.iter().map(|s| s.notify_wait_ns).sum();
    let rt: i64 = steps.iter().map(|s| s.replay_ns).sum();
    let mut ratios: Vec<f64> = steps.iter().map(|s| s.ratio_pct).collect();
    ratios.sort_by(|a, b| a.total_cmp(b));
    let band = |b: SyncVerdict| steps.iter().filter(|s| verdict(s.ratio_pct) == b).count() as u64;
    let overall = nt as f64 * 100.0 / rt.max(1) as f64;
    let host: i64 = t
        .strings
        .lookup("update_step_context")
        .map(|id| {
            (0..t.events.len())
                .filter(|&i| t.events.name[i] == id && t.event_file(i) == d.file)
                .map(|i| t.events.dur_ns.at(i))
                .sum()
        })
        .unwrap_or(0);
    let host_pct = (host > 0).then(|| host as f64 * 100.0 / rt.max(1) as f64);
    Some(StepSyncSummary {
        device: d.evidence.clone(),
        notify_wait_total_ns: nt,
        replay_total_ns: rt,
        overall_ratio_pct: overall,
        median_ratio_pct: Some(if ratios.len() % 2 == 1 {
            ratios[ratios.len() / 2]
        } else {
            (ratios[ratios.len() / 2 - 1] + ratios[ratios.len() / 2]) / 2.0
        }),
        max_ratio_pct: ratios.last().copied(),
        excellent_steps: band(SyncVerdict::Excellent),
        acceptable_steps: band(SyncVerdict::Acceptable),
        needs_attention_steps: band(SyncVerdict::NeedsAttention),
        verdict: verdict(overall),
        host_update_step_context_ns: host,
        host_pct_of_replay: host_pct,
        host_verdict: host_pct.map(|p| {
            if p > 5.0 {
                HostVerdict::NeedsAttention
            } else {
                HostVerdict::Ok
            }
        }),
        steps,
    })
}
