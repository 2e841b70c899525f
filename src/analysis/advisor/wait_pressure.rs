//! Device idle behind waits (profscope's bubbles causes, docs/analyses/bubbles.md):
//! `update_step_context_sync` (NOTIFY_WAIT before a replay until the host's step context
//! arrives), `synchronization` (EVENT_WAIT and other waits on another stream or the host),
//! `mtp_wait` (MEM_WAIT_VALUE before a speculative head). One finding per cause that holds at
//! least 5% of its rank's window.
//!
//! Time at stake: the cause's idle on the rank with the most of it (what removing the wait
//! would give back to the device).

use super::{RunInputs, RunRule, finding};
use crate::contract::Finding;

pub const RULE: RunRule = RunRule {
    name: "wait_pressure",
    run,
};

const MIN_PCT: f64 = 5.0;

/// (cause, what it is, what to change).
const CAUSES: &[(&str, &str, &str)] = &[
    (
        "update_step_context_sync",
        "NOTIFY_WAIT before each graph replay until the host's step context (update_step_context) arrives",
        "prepare the next step's context while the current replay runs (async scheduling), and keep per-step metadata updates on the device instead of a host-to-device copy the replay must wait for",
    ),
    (
        "synchronization",
        "EVENT_WAIT / stream waits on another stream or the host",
        "find the event each wait is for (the gap's evidence): overlap the producer stream's work (e.g. the collective) with independent compute, and remove host synchronizations (synchronize-stream, .item(), .cpu()) inside the step",
    ),
    (
        "mtp_wait",
        "MEM_WAIT_VALUE before each speculative (MTP) head",
        "launch the MTP heads' graphs so their inputs are ready when the main replay ends (fewer heads, or heads captured into the main graph)",
    ),
];

fn run(inputs: &RunInputs<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for &(cause, what, advice) in CAUSES {
        let Some((b, c, pct)) = super::worst_by_cause(inputs.bubbles, cause, MIN_PCT) else {
            continue;
        };
        let mut f = finding(
            "wait_pressure",
            "profscope: bubbles analysis causes (docs/analyses/bubbles.md)",
        );
        f.subject = cause.to_string();
        f.time_at_stake_ns = c.total_ns;
        f.statement = format!(
            "{cause}: {:.1}% of rank {}'s window idle in {} gaps ({:.3} ms): {what}",
            pct,
            b.device.rank,
            c.count,
            c.total_ns as f64 / 1e6
        );
        f.estimate = format!("the {cause} idle of the rank with the most of it");
        f.evidence = super::idle_evidence(b, cause, |g| {
            g.evidence
                .as_ref()
                .map_or_else(String::new, |e| format!(", waiting in {}", e.name))
        });
        f.recommendation = advice.to_string();
        out.push(f);
    }
    out
}
