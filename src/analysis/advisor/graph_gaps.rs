//! Host overhead between graph replays (profscope's graph-mode analysis,
//! docs/analyses/graph_mode.md): in graph-mode decode the device idles from one replay's end
//! to the next one's start while the host prepares the next step.
//!
//! Time at stake: per file, the sum over replays of (gap to the next replay − the shortest such
//! gap in the file): what the run would gain if every gap were as short as its best one.
//! Reported when that is at least 1% of the replays' summed span.

use super::{RunInputs, RunRule, finding};
use crate::contract::Finding;

pub const RULE: RunRule = RunRule {
    name: "graph_replay_gaps",
    run,
};

fn run(inputs: &RunInputs<'_>) -> Vec<Finding> {
    let mut best: Option<(i64, Finding)> = None;
    for g in &inputs.graph_mode.files {
        let (Some(gap), Some(span)) = (
            g.replay_stats.iter().find(|s| s.name == "gap_to_next"),
            g.replay_stats.iter().find(|s| s.name == "span"),
        ) else {
            continue;
        };
        if gap.count == 0 {
            continue;
        }
        let saved = gap.sum_ns - gap.min_ns * gap.count as i64;
        if saved <= 0 || saved * 100 < span.sum_ns {
            continue;
        }
        let mut f = finding(
            "graph_replay_gaps",
            "profscope: graph_mode replay_stats gap_to_next (docs/analyses/graph_mode.md)",
        );
        f.time_at_stake_ns = saved;
        f.statement = format!(
            "between graph replays the device waits {} at the median ({} gaps, {} in all; shortest {}) on rank {}",
            crate::units::human_duration(gap.p50_ns),
            gap.count,
            crate::units::human_duration(gap.sum_ns as f64),
            crate::units::human_duration(gap.min_ns as f64),
            g.rank
        );
        f.estimate = "the gaps' sum minus the shortest gap times their count: each gap brought down to the file's best".into();
        f.evidence.push(format!(
            "rank {} ({}): {} replays, gap_to_next p50 {}, max {}",
            g.rank,
            g.file,
            g.replays,
            crate::units::human_duration(gap.p50_ns),
            crate::units::human_duration(gap.max_ns as f64)
        ));
        f.recommendation = "shorten the host's work between replays: prepare the next step's inputs while the graph runs (async scheduling / input preparation overlap), keep the sampler and metadata updates on the device, and avoid host syncs (.item(), .cpu()) between steps".into();
        if best.as_ref().is_none_or(|(s, _)| saved > *s) {
            best = Some((saved, f));
        }
    }
    best.into_iter().map(|(_, f)| f).collect()
}
