//! The cross-rank sections: per-rank step times, the slowest rank and the skew between ranks;
//! the clock offsets corrected and the communication groups.

use super::{Section, count_of, sec};
use crate::contract::{ClockStatus, Cohort};
use crate::render::human_ns;
use crate::report::Report;

pub(super) fn cross_rank(r: &Report, out: &mut Vec<Section>) {
    for c in &r.analyses.cross_rank.cohorts {
        if c.ranks.len() < 2 {
            continue;
        }
        let mut s = sec(
            format!("Cross-rank steps ({}; steps: {})", c.format, c.step_source),
            vec![
                "rank",
                "steps",
                "step mean",
                "step max",
                "computing",
                "comm exposed",
                "free",
                "bubbles / step",
                "collective wait / transit",
                "slowest in",
                "last into collective",
            ],
        );
        for x in &c.ranks {
            s.rows.push(vec![
                x.device.rank.to_string(),
                x.steps.to_string(),
                human_ns(x.step_mean_ns.round() as i64),
                human_ns(x.step_max_ns),
                format!("{:.1}%", x.computing_pct),
                format!("{:.1}%", x.communication_not_overlapped_pct),
                format!("{:.1}%", x.free_pct),
                format!("{:.1}", x.bubbles_per_step),
                format!(
                    "{} / {}",
                    human_ns(x.collective_wait_ns),
                    human_ns(x.collective_transit_ns)
                ),
                count_of(x.slowest_in_steps, "step"),
                x.last_to_start_collectives.to_string(),
            ]);
        }
        if !c.not_compared.is_empty() {
            s.notes.push(c.not_compared.clone());
        }
        if let Some(w) = &c.slowest {
            s.notes.push(w.statement.clone());
        }
        if let Some(w) = &c.waited_for {
            s.notes.push(w.statement.clone());
        }
        s.notes.push(format!(
            "{} compared, {} not on every rank, {} with different compute-kernel counts; shares are of the summed step time",
            count_of(c.steps_compared, "step"),
            c.steps_unmatched,
            c.kernel_count_mismatch_steps
        ));
        let k = &c.collectives;
        if k.matched > 0 {
            s.notes.push(format!(
                "collective start skew over {} ops matched on every member of their group ({} not): mean {}, median {}, max {}{}",
                k.matched,
                k.unmatched,
                human_ns(k.skew_mean_ns.round() as i64),
                human_ns(k.skew_p50_ns.round() as i64),
                human_ns(k.skew_max_ns),
                k.top.first().map_or(String::new(), |t| format!(
                    " ({} #{}: rank {} first, rank {} last)",
                    t.name, t.occurrence, t.first_rank, t.last_rank
                ))
            ));
        }
        let d = &c.distribution;
        if d.ranks > c.ranks.len() as u64 {
            s.notes.push(format!(
                "{} of {} ranks listed (the lowest, the ones a verdict names, the slowest, latest and idlest; --detail full: all); over all ranks, mean step p10 / p50 / p90 / max {} / {} / {} / {}, free p50 {:.1}%, collective wait p90 {}",
                c.ranks.len(),
                d.ranks,
                human_ns(d.step_mean_ns.p10.round() as i64),
                human_ns(d.step_mean_ns.p50.round() as i64),
                human_ns(d.step_mean_ns.p90.round() as i64),
                human_ns(d.step_mean_ns.max.round() as i64),
                d.free_pct.p50,
                human_ns(d.collective_wait_ns.p90.round() as i64),
            ));
        }
        if c.clock.reference_rank >= 0 && c.ranks.len() > 1 {
            s.notes.push(format!("clocks: {}", c.clock.statement));
        }
        out.push(s);
        if let Some(x) = clocks(c) {
            out.push(x);
        }
        if let Some(x) = groups(c) {
            out.push(x);
        }
    }
}

/// The ranks whose clock was corrected or could not be tied to the reference.
fn clocks(c: &Cohort) -> Option<Section> {
    if c.clock.ranks.is_empty()
        || c.clock.corrected + c.clock.too_few_collectives + c.clock.ends_disagree == 0
    {
        return None;
    }
    let mut s = sec(
        format!(
            "Clock offsets ({}; against rank {})",
            c.format, c.clock.reference_rank
        ),
        vec![
            "rank",
            "measured against",
            "estimate",
            "spread",
            "collectives",
            "corrected by",
            "status",
        ],
    );
    for x in c.clock.ranks.iter().filter(|x| {
        matches!(
            x.status,
            ClockStatus::Corrected | ClockStatus::TooFewCollectives
        )
    }) {
        s.rows.push(vec![
            x.rank.to_string(),
            format!("rank {}", x.relative_to_rank),
            signed_ns(x.estimate_ns),
            human_ns(x.spread_ns),
            x.collectives.to_string(),
            signed_ns(x.applied_ns),
            x.status.to_string(),
        ]);
    }
    s.notes.push("estimate: median over shared collectives of the difference of their ends (members leave a collective together); corrected when beyond 3 spreads and 20 µs".into());
    Some(s)
}

/// The communicator groups, when there is more than one or one lost ops to matching.
fn groups(c: &Cohort) -> Option<Section> {
    let g = &c.groups;
    let interesting = g.total > 1 || g.groups.iter().any(|x| x.unmatched > 0 || x.realigned > 0);
    if !interesting {
        return None;
    }
    let mut s = sec(
        format!("Communication groups ({}; {} group(s))", c.format, g.total),
        vec![
            "group",
            "ranks",
            "matched",
            "unmatched",
            "skew mean / max",
            "last into most",
        ],
    );
    for x in &g.groups {
        let ranks = if x.ranks.len() > 8 {
            format!(
                "{} ranks: {}–{}",
                x.ranks.len(),
                x.ranks[0],
                x.ranks[x.ranks.len() - 1]
            )
        } else {
            x.ranks
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let unmatched = match x.unmatched_names.first() {
            Some((name, n)) => format!(
                "{} ({name} ×{n}{})",
                x.unmatched,
                if x.unmatched_names.len() > 1 {
                    ", …"
                } else {
                    ""
                }
            ),
            None => x.unmatched.to_string(),
        };
        s.rows.push(vec![
            match (x.name.is_empty(), x.kind.is_empty()) {
                (true, _) => "(unnamed)".into(),
                (false, true) => x.name.clone(),
                (false, false) => format!("{} ({})", x.name, x.kind),
            },
            ranks,
            x.matched.to_string(),
            unmatched,
            format!(
                "{} / {}",
                human_ns(x.skew_mean_ns.round() as i64),
                human_ns(x.skew_max_ns)
            ),
            if x.slow_rank >= 0 {
                format!(
                    "rank {} ({} ops, {} late in total)",
                    x.slow_rank,
                    x.slow_rank_last_into,
                    human_ns(x.slow_rank_lateness_ns)
                )
            } else {
                "none".into()
            },
        ]);
    }
    if (g.groups.len() as u64) < g.total {
        s.notes.push(format!(
            "{} of {} groups listed, largest skew first (--detail full: all)",
            g.groups.len(),
            g.total
        ));
    }
    let realigned: u64 = g.groups.iter().map(|x| x.realigned).sum();
    if realigned > 0 {
        s.notes.push(format!("{realigned} rank sequence(s) realigned: an op more or fewer at their start (warm-up, a capture cut elsewhere) was matched by the gaps between op ends"));
    }
    Some(s)
}

/// `+60.000 s`, `-8.136 µs`.
fn signed_ns(ns: i64) -> String {
    if ns < 0 {
        format!("-{}", human_ns(-ns))
    } else {
        format!("+{}", human_ns(ns))
    }
}
