//! Expert-parallel load imbalance (analyses.layout.experts, docs/analyses/layout.md): an EP
//! group whose most loaded rank processes at least `EXPERT_IMBALANCE` times its group's mean
//! tokens (msprof-analyze ep_load_balance's count: dim 0 of the GroupedMatmul inputs). Time at
//! stake: the slowest member's GroupedMatmul time minus the group's mean (the others wait that
//! long in the next all-to-all).

use super::{RunInputs, RunRule, finding};
use crate::contract::{EXPERT_IMBALANCE, Finding};

pub const RULE: RunRule = RunRule {
    name: "expert_load",
    run,
};

const SOURCE: &str = "msprof-analyze cluster_analyse/recipes/ep_load_balance (tokens per rank, max - min per EP group); threshold max / mean >= 1.2 is profscope's";

fn run(inputs: &RunInputs<'_>) -> Vec<Finding> {
    inputs
        .layout
        .experts
        .iter()
        .filter(|g| g.imbalanced)
        .map(|g| {
            let mut f = finding("expert_load", SOURCE);
            f.time_at_stake_ns = g.time_at_stake_ns;
            f.subject = format!("EP group {}", g.group);
            f.statement = g.statement.clone();
            f.estimate = "the slowest member's GroupedMatmul time minus the group's mean".into();
            for r in &g.ranks {
                f.evidence.push(format!(
                    "rank {}: {} tokens in {} GroupedMatmul task(s), {:.3} ms",
                    r.rank,
                    r.tokens,
                    r.grouped_matmul_tasks,
                    r.grouped_matmul_ns as f64 / 1e6
                ));
            }
            f.recommendation = format!(
                "rank {} gets {:.2}x its group's mean tokens (threshold {EXPERT_IMBALANCE}): balance the router (auxiliary load-balancing loss, capacity factor), or redistribute hot experts across ranks (EPLB / expert replication)",
                g.overloaded_rank, g.tokens_max_over_mean
            );
            f
        })
        .collect()
}
