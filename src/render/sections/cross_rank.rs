//! The cross-rank section: per-rank step times, the slowest rank and the skew between ranks.

use super::{Section, count_of, sec};
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
                "collective start skew over {} ops matched on every rank ({} not): mean {}, median {}, max {}{}",
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
        out.push(s);
    }
}
