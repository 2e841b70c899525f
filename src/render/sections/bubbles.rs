//! The bubbles section: idle gaps per device, their causes, histogram and the idle inside steps.

use super::{Section, dev, pct, sec};
use crate::render::human_ns;
use crate::report::Report;

/// Per device: the largest gaps with cause, evidence and neighbours; idle by cause; gap sizes.
pub(super) fn bubbles(r: &Report, out: &mut Vec<Section>) {
    for b in &r.analyses.bubbles {
        let mut s = sec(
            format!(
                "Bubbles: {} (gaps ≥ {})",
                dev(&b.device),
                human_ns(b.min_gap_ns)
            ),
            vec![
                "at", "duration", "cause", "evidence", "launched", "before", "after",
            ],
        );
        let nb = |n: &Option<crate::contract::Neighbour>| {
            n.as_ref().map_or("-".into(), |n| {
                if n.stream < 0 {
                    format!("{} (host)", n.name)
                } else {
                    format!("{} (stream {})", n.name, n.stream)
                }
            })
        };
        for g in &b.largest {
            let launched = match (g.launch_lag_ns, &g.launch_op) {
                (Some(l), op) => {
                    let when = if l > 0 {
                        format!("{} after the gap began", human_ns(l))
                    } else {
                        format!("{} before", human_ns(-l))
                    };
                    match op {
                        Some(op) => format!("{when} ({op})"),
                        None => when,
                    }
                }
                (None, _) => "-".into(),
            };
            let evidence = match &g.host_block {
                Some(h) => format!(
                    "{}{}; waited for {}",
                    nb(&g.evidence),
                    h.frames
                        .first()
                        .map(|f| format!(" under {f}"))
                        .unwrap_or_default(),
                    h.waited_for
                        .as_ref()
                        .map_or("work outside the trace".into(), |w| nb(&Some(w.clone())))
                ),
                None => nb(&g.evidence),
            };
            s.rows.push(vec![
                format!("+{}", human_ns(g.start_ns - b.window_start_ns)),
                human_ns(g.dur_ns),
                g.cause.as_str().into(),
                evidence,
                launched,
                nb(&g.before),
                nb(&g.after),
            ]);
        }
        s.notes.push(format!(
            "idle {} = {} of the {} window, in {} gaps; {} of it has a named cause (unknown {}); by cause: {}",
            human_ns(b.idle_ns),
            pct(b.idle_pct_of_window),
            human_ns(b.window_ns),
            b.gaps,
            pct(b.named_pct_of_idle),
            human_ns(b.unknown_ns),
            b.by_cause
                .iter()
                .map(|(k, v)| format!(
                    "{k} {} ({}, {})",
                    v.count,
                    human_ns(v.total_ns),
                    pct(v.pct_of_idle)
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ));
        if b.unexplained_ns > 0 {
            s.notes.push(format!(
                "unexplained: {} of idle ({}): unknown {}, host blocked on work outside the trace {}, tasks the file does not list {}",
                pct(b.unexplained_pct_of_idle),
                human_ns(b.unexplained_ns),
                human_ns(b.unknown_ns),
                human_ns(b.host_blocked_outside_ns),
                human_ns(b.unexplained_ns - b.unknown_ns - b.host_blocked_outside_ns)
            ));
        }
        if !b.capture_edges.is_empty() {
            let side = |before: bool| {
                b.capture_edges
                    .iter()
                    .filter(|g| (g.end_ns <= b.window_start_ns) == before)
                    .map(|g| g.dur_ns)
                    .sum::<i64>()
            };
            s.notes.push(format!(
                "capture edges (not idle, outside the window): the host ran {} before the device's first task and {} after its last",
                human_ns(side(true)),
                human_ns(side(false))
            ));
        }
        s.notes.push(
            "at: from the device's first busy instant; launched: when the host call that launched the next task began (docs/analyses/bubbles.md)"
                .into(),
        );
        let hist: Vec<String> = b
            .histogram
            .iter()
            .filter(|h| h.count > 0)
            .map(|h| {
                format!(
                    "[{}, {}): {}",
                    human_ns(h.lo_ns),
                    if h.hi_ns < 0 {
                        "∞".into()
                    } else {
                        human_ns(h.hi_ns)
                    },
                    h.count
                )
            })
            .collect();
        s.notes.push(format!("gap sizes: {}", hist.join(", ")));
        if !b.steps.is_empty() {
            let worst = b
                .steps
                .iter()
                .max_by(|x, y| x.idle_pct_of_step.total_cmp(&y.idle_pct_of_step));
            s.notes.push(format!(
                "inside {} decode steps: {} idle (between steps: {}); worst step {}",
                b.steps.len(),
                human_ns(b.idle_within_steps_ns),
                human_ns(b.idle_ns - b.idle_within_steps_ns),
                worst.map_or("-".into(), |w| format!(
                    "#{} at {} ns ({} idle)",
                    w.step,
                    w.start_ns,
                    pct(w.idle_pct_of_step)
                ))
            ));
        }
        out.push(s);
    }
}
