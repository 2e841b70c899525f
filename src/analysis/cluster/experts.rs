//! Expert-parallel load: per EP group (the job's `exp` groups; with `distributed_args` only, the
//! chunks of each data-parallel group Megatron-LM makes them), the tokens each member's experts
//! processed as msprof-analyze's ep_load_balance counts them (dim 0 of the `GroupedMatmul`
//! inputs), the imbalance (max / mean, max - min) and the time at stake: the slowest member's
//! GroupedMatmul time minus the group's mean (the others wait that long in the next all-to-all).

use super::facts::JobFacts;
use crate::contract::layout::*;
use crate::units::human_duration;
use std::collections::BTreeMap;

/// The EP groups with at least two members that ran GroupedMatmul.
pub fn experts(l: &Layout, facts: &[JobFacts]) -> Vec<ExpertGroup> {
    let mut by_rank: BTreeMap<i32, (i64, u64, i64)> = BTreeMap::new();
    for f in facts.iter().filter(|f| f.rank >= 0 && f.experts.tasks > 0) {
        let e = by_rank.entry(f.rank).or_default();
        e.0 = e.0.saturating_add(f.experts.tokens);
        e.1 += f.experts.tasks;
        e.2 = e.2.saturating_add(f.experts.time_ns);
    }
    if by_rank.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<ExpertGroup> = ep_groups(l)
        .into_iter()
        .filter_map(|(name, ranks)| group(&name, &ranks, &by_rank))
        .collect();
    out.sort_by(|a, b| {
        b.time_at_stake_ns
            .cmp(&a.time_at_stake_ns)
            .then(a.group.cmp(&b.group))
    });
    out
}

/// (name, ranks) of every EP group: stated, else implied by `distributed_args`.
fn ep_groups(l: &Layout) -> Vec<(String, Vec<i32>)> {
    let stated: Vec<(String, Vec<i32>)> = l
        .groups
        .iter()
        .filter(|g| g.kind == GroupKind::Ep && g.ranks.len() > 1)
        .map(|g| (group_name(&g.name, &g.ranks), g.ranks.clone()))
        .collect();
    if !stated.is_empty() {
        return stated;
    }
    let Some(s) = l.sizes.filter(|s| s.ep > 1) else {
        return Vec::new();
    };
    // Chunks of `ep` consecutive replicas of each (stage, tp index).
    let mut by: BTreeMap<(Option<u32>, Option<u32>, u32), Vec<i32>> = BTreeMap::new();
    for r in &l.ranks {
        if let Some(d) = r.dp_index {
            by.entry((r.pp_stage, r.tp_index, d / s.ep))
                .or_default()
                .push(r.rank);
        }
    }
    by.into_iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(_, v)| (group_name("exp", &v), v))
        .collect()
}

/// `exp (ranks 0, 2)`: the job's name and the members.
fn group_name(name: &str, ranks: &[i32]) -> String {
    let r: Vec<String> = ranks.iter().take(8).map(|r| r.to_string()).collect();
    let more = if ranks.len() > 8 {
        format!(", … (+{})", ranks.len() - 8)
    } else {
        String::new()
    };
    let name = if name.is_empty() { "ep" } else { name };
    format!("{name} (ranks {}{more})", r.join(", "))
}

fn group(
    name: &str,
    ranks: &[i32],
    by_rank: &BTreeMap<i32, (i64, u64, i64)>,
) -> Option<ExpertGroup> {
    let members: Vec<ExpertRank> = ranks
        .iter()
        .filter_map(|r| {
            let &(tokens, tasks, ns) = by_rank.get(r)?;
            Some(ExpertRank {
                rank: *r,
                tokens,
                grouped_matmul_tasks: tasks,
                grouped_matmul_ns: ns,
            })
        })
        .collect();
    if members.len() < 2 {
        return None;
    }
    let n = members.len() as f64;
    let mean_tokens = members.iter().map(|m| m.tokens as f64).sum::<f64>() / n;
    let top = members.iter().max_by_key(|m| (m.tokens, -m.rank))?;
    let max = top.tokens;
    let min = members.iter().map(|m| m.tokens).min()?;
    let mean_ns = members
        .iter()
        .map(|m| m.grouped_matmul_ns as f64)
        .sum::<f64>()
        / n;
    let slowest_ns = members.iter().map(|m| m.grouped_matmul_ns).max()?;
    let ratio = if mean_tokens > 0.0 {
        max as f64 / mean_tokens
    } else {
        1.0
    };
    let imbalanced = ratio >= EXPERT_IMBALANCE;
    let at_stake = (slowest_ns as f64 - mean_ns).max(0.0).round() as i64;
    let statement = if imbalanced {
        format!(
            "experts: rank {} of EP group {name} processes {:.2}x its group's mean tokens ({max} vs {:.0}); {} of GroupedMatmul above the group's mean",
            top.rank,
            ratio,
            mean_tokens,
            human_duration(at_stake as f64)
        )
    } else {
        format!(
            "experts: EP group {name} is balanced (max / mean tokens {ratio:.2}, under {EXPERT_IMBALANCE})"
        )
    };
    Some(ExpertGroup {
        group: name.to_string(),
        tokens_max_over_mean: ratio,
        tokens_max_minus_min: max - min,
        overloaded_rank: top.rank,
        time_at_stake_ns: at_stake,
        imbalanced,
        statement,
        ranks: members,
    })
}
