//! The pipeline stage the others wait for (analyses.layout.pipeline, docs/analyses/layout.md):
//! reported when one stage computes the most in more steps than stages taking turns would
//! (p < 0.05). Time at stake: its computing above the other stages' median, per step it was
//! the slowest, times those steps (what the others spent waiting in receives on its account).

use super::{RunInputs, RunRule, finding};
use crate::contract::Finding;

pub const RULE: RunRule = RunRule {
    name: "pipeline_stage",
    run,
};

const SOURCE: &str = "profscope: layout.pipeline slow_stage (binomial p < 0.05 over stages taking turns); msprof-analyze's pp_chart draws the stages but names none";

fn run(inputs: &RunInputs<'_>) -> Vec<Finding> {
    let Some(p) = &inputs.layout.pipeline else {
        return Vec::new();
    };
    let Some(s) = p.slow_stage.as_ref().filter(|s| s.stands_out) else {
        return Vec::new();
    };
    let mut f = finding("pipeline_stage", SOURCE);
    f.time_at_stake_ns = (s.mean_excess_ns * s.steps as f64).max(0.0) as i64;
    f.subject = format!("stage {}", s.stage);
    f.statement = p.statement.clone();
    f.estimate = format!(
        "stage {}'s computing above the other stages' median ({} per step) times the {} steps it computed the most in",
        s.stage,
        crate::units::human_duration(s.mean_excess_ns),
        s.steps
    );
    for r in &p.per_stage {
        f.evidence.push(format!(
            "stage {} (ranks {}): computing {:.3} ms, receive wait {:.3} ms per step ({})",
            r.stage,
            r.ranks
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            r.computing_ns_per_step / 1e6,
            r.receive_ns_per_step / 1e6,
            r.source
        ));
    }
    f.recommendation = format!(
        "rebalance the pipeline: move layers off stage {} (Megatron --decoder-first/last-pipeline-num-layers, MindSpeed --num-layer-list), or check its ranks' NPUs if the stages hold equal layers; more microbatches or an interleaved schedule shrink the bubble the other stages wait in",
        s.stage
    );
    vec![f]
}
