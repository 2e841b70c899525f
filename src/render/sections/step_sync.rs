//! The update_step_context sync section: NOTIFY_WAIT against graph-replay time per decode step, and memory waits.

use super::{Section, dev, pct, sec};
use crate::render::human_ns;
use crate::report::Report;

/// update_step_context sync per decode step, and MTP bursts.
pub(super) fn step_sync(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    let mut u = sec(
        "update_step_context sync (NOTIFY_WAIT vs graph replay, per decode step)",
        vec![
            "device",
            "steps",
            "Σ NOTIFY_WAIT",
            "Σ replay",
            "overall",
            "median",
            "max",
            "excellent / acceptable / attention",
            "verdict",
            "host update_step_context",
        ],
    );
    for s in &a.step_sync {
        u.rows.push(vec![
            dev(&s.device),
            s.steps.len().to_string(),
            human_ns(s.notify_wait_total_ns),
            human_ns(s.replay_total_ns),
            pct(s.overall_ratio_pct),
            s.median_ratio_pct.map_or("-".into(), pct),
            s.max_ratio_pct.map_or("-".into(), pct),
            format!(
                "{} / {} / {}",
                s.excellent_steps, s.acceptable_steps, s.needs_attention_steps
            ),
            s.verdict.to_string(),
            s.host_pct_of_replay.map_or("-".into(), |p| {
                format!(
                    "{} of replay ({})",
                    pct(p),
                    s.host_verdict.map_or("", |v| v.as_str())
                )
            }),
        ]);
    }
    for m in &a.mtp {
        let heads: Vec<String> = m
            .heads
            .iter()
            .map(|h| {
                format!(
                    "head {}: {} steps, mean burst {}, NOTIFY_WAIT {} of burst",
                    h.head,
                    h.steps,
                    human_ns(h.burst_mean_ns as i64),
                    pct(h.notify_pct_of_burst)
                )
            })
            .collect();
        u.notes.push(format!(
            "MTP {}: {} MEM_WAIT_VALUE ({}); heads per step {:?}; {}",
            dev(&m.device),
            m.mem_waits,
            human_ns(m.mem_wait_total_ns),
            m.heads_per_step,
            heads.join("; ")
        ));
    }
    u.notes.push("bands: < 5% excellent, 5-25% acceptable, > 25% needs attention (host: > 5% needs attention)".into());
    if !u.rows.is_empty() {
        out.push(u);
    }
}
