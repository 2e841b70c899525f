//! The job, not the ranks: its parallel layout ([`layout`]: world size, groups by kind, each
//! rank's stage / replica / shard / expert index, the peer sets of ranks that do the same work),
//! from what the files state or, failing that, from the collectives the ranks share; the
//! comparisons that mean something ([`peers`]: within each peer set and each TP group, never
//! across pipeline stages); the pipeline across stages ([`pipeline`]); the expert-parallel
//! load ([`experts`]). Per file, [`facts::facts`] keeps what the run-level step needs.
//!
//! cross_rank compares the ranks of a cohort only when [`roles`] says they are peers.

pub mod experts;
pub mod facts;
pub mod layout;
pub mod peers;
pub mod pipeline;

pub use crate::contract::layout::*;
pub use facts::{JobFacts, facts};

use super::cross_rank::{DeviceExtract, Roles};
use super::evidence::FileEvidence;

/// Two ranks whose compute-kernel mixes share less than this fraction (by count) do different
/// work.
pub const SAME_WORK: f64 = 0.8;

/// The run's layout and every comparison it allows.
pub fn compute(
    facts: &[JobFacts],
    extracts: &[DeviceExtract],
    evidence: &[FileEvidence],
    top_n: usize,
) -> Layout {
    let mut l = layout::layout(facts, extracts);
    for f in facts {
        for p in &f.problems {
            l.warnings.push(format!("{}: {p}", f.file));
        }
    }
    l.comparisons = peers::compare(&l, facts, extracts, evidence, top_n);
    l.pipeline = pipeline::pipeline(&l, facts, extracts, evidence);
    l.experts = experts::experts(&l, facts);
    l.statement = statement(&l, facts);
    l
}

/// Which ranks cross_rank may compare with each other: the peer sets of the layout; without
/// one, every rank when their kernel mixes agree, else none.
pub fn roles(facts: &[JobFacts], extracts: &[DeviceExtract]) -> Roles {
    let l = layout::layout(facts, extracts);
    if !l.peer_sets.is_empty() {
        let mut sets = std::collections::BTreeMap::new();
        for (k, p) in l.peer_sets.iter().enumerate() {
            for &r in &p.ranks {
                sets.insert(r, k as u32);
            }
        }
        return Roles::Sets(sets);
    }
    match different_work(facts) {
        Some(why) => Roles::NotComparable(why),
        None => Roles::Peers,
    }
}

/// Why the ranks with device events do different work (their compute-kernel mixes share less
/// than [`SAME_WORK`]), None when they agree.
fn different_work(facts: &[JobFacts]) -> Option<String> {
    let with: Vec<&JobFacts> = facts
        .iter()
        .filter(|f| !f.work.is_empty() && f.rank >= 0)
        .collect();
    let first = with.first()?;
    let worst = with
        .iter()
        .skip(1)
        .map(|f| (similarity(&first.work, &f.work), f))
        .min_by(|a, b| a.0.total_cmp(&b.0))?;
    (worst.0 < SAME_WORK).then(|| {
        format!(
            "no peer comparison: no file states the job's layout and the ranks run different work (rank {} and rank {} share {:.0}% of their compute-kernel mix)",
            first.rank,
            worst.1.rank,
            worst.0 * 100.0
        )
    })
}

/// The share of two kernel-count mixes in common: Σ min(share_a, share_b) over names.
pub fn similarity(a: &[(String, u64)], b: &[(String, u64)]) -> f64 {
    let total = |v: &[(String, u64)]| v.iter().map(|x| x.1).sum::<u64>().max(1) as f64;
    let (ta, tb) = (total(a), total(b));
    a.iter()
        .map(|(n, c)| {
            let other = b.iter().find(|x| &x.0 == n).map_or(0, |x| x.1);
            (*c as f64 / ta).min(other as f64 / tb)
        })
        .sum()
}

/// One line: the layout, its source, the ranks present and how they are compared.
fn statement(l: &Layout, facts: &[JobFacts]) -> String {
    let present = l.ranks.iter().filter(|r| r.present).count();
    let summary = l.ranks.iter().filter(|r| r.summary_only).count();
    let events = facts
        .iter()
        .filter(|f| f.has_device_events && f.rank >= 0)
        .map(|f| f.rank)
        .collect::<std::collections::BTreeSet<i32>>()
        .len();
    let shape = match l.sizes {
        Some(s) => format!(
            "TP{} x PP{} x DP{}{}{}",
            s.tp,
            s.pp,
            s.dp,
            if s.cp > 1 {
                format!(" x CP{}", s.cp)
            } else {
                String::new()
            },
            if s.ep > 1 {
                format!(" (EP{})", s.ep)
            } else {
                String::new()
            }
        ),
        None => {
            let stages = l
                .ranks
                .iter()
                .filter_map(|r| r.pp_stage)
                .max()
                .map_or(0, |s| s + 1);
            format!("{stages} stage(s), {} peer set(s)", l.peer_sets.len())
        }
    };
    let of = l.world_size.map_or(String::new(), |w| format!(" of {w}"));
    let ranks = format!(
        "{present}{of} rank(s) present: {events} with device events, {summary} with vendor summaries only"
    );
    match l.source {
        LayoutSource::None => format!("job layout: not stated and not inferable; {ranks}"),
        src => format!(
            "job: {shape} ({}); {ranks}; ranks compared within {} peer set(s)",
            match src {
                LayoutSource::Inferred => "inferred from shared collectives".to_string(),
                other => format!("from {}", other),
            },
            l.peer_sets.len()
        ),
    }
}
