//! The job sections: the layout and the comparisons within its peer sets, the pipeline across
//! stages, the expert-parallel load. Lists that grow with the rank count show the sets where a
//! rank stands out first, then a few more, and say how many were left out.

use super::{Section, count_of, sec};
use crate::contract::{CompareSource, Layout, LayoutSource, PeerComparison};
use crate::render::human_ns;
use crate::report::Report;

/// Peer-set comparisons listed before the rest are counted in a note.
const LISTED: usize = 8;

pub(super) fn layout(r: &Report, out: &mut Vec<Section>) {
    let l = &r.analyses.layout;
    if l.source == LayoutSource::None && l.ranks.iter().all(|x| !x.summary_only) {
        return;
    }
    comparisons(l, out);
    pipeline(l, out);
    experts(l, out);
}

fn ranks_text(v: &[i32]) -> String {
    let head: Vec<String> = v.iter().take(8).map(|r| r.to_string()).collect();
    if v.len() > 8 {
        format!("{} … (+{})", head.join(", "), v.len() - 8)
    } else {
        head.join(", ")
    }
}

fn claim(c: &PeerComparison) -> String {
    let mut parts = Vec::new();
    if let Some(s) = &c.slowest {
        parts.push(s.statement.clone());
    }
    if let Some(w) = c
        .waited_for
        .as_ref()
        .filter(|w| w.stands_out || c.slowest.is_none())
    {
        parts.push(w.statement.clone());
    }
    if !c.explanation.is_empty() {
        parts.push(c.explanation.clone());
    }
    if parts.is_empty() {
        "no compared step".into()
    } else {
        parts.join("; ")
    }
}

fn comparisons(l: &Layout, out: &mut Vec<Section>) {
    let mut s = sec(
        "Job layout: comparisons within peer sets",
        vec![
            "role",
            "stage",
            "ranks",
            "numbers",
            "steps",
            "step mean p50 / p90 / max (rank)",
            "finding",
        ],
    );
    let mut order: Vec<&PeerComparison> = l.comparisons.iter().collect();
    order.sort_by_key(|c| !c.stands_out);
    for c in order.iter().take(LISTED) {
        let m = &c.step_mean_ns;
        s.rows.push(vec![
            c.role.replace('_', " "),
            c.stage.map_or("-".into(), |x| x.to_string()),
            ranks_text(&c.ranks),
            match c.source {
                CompareSource::Events => "events".into(),
                CompareSource::Vendor => "vendor summaries".into(),
            },
            c.steps_compared.to_string(),
            format!(
                "{} / {} / {} (rank {})",
                human_ns(m.p50.round() as i64),
                human_ns(m.p90.round() as i64),
                human_ns(m.max.round() as i64),
                m.max_rank
            ),
            claim(c),
        ]);
    }
    s.notes.push(l.statement.clone());
    if order.len() > LISTED {
        let quiet = order.iter().skip(LISTED).filter(|c| !c.stands_out).count();
        s.notes.push(format!(
            "{} more comparison(s) not listed ({quiet} with no rank standing out); JSON: analyses.layout.comparisons",
            order.len() - LISTED
        ));
    }
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    for g in &l.groups {
        *kinds.entry(g.kind.to_string()).or_default() += 1;
    }
    if !kinds.is_empty() {
        let k: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        s.notes.push(format!("groups by kind: {}", k.join(", ")));
    }
    for w in &l.warnings {
        s.notes.push(format!("warning: {w}"));
    }
    out.push(s);
}

fn pipeline(l: &Layout, out: &mut Vec<Section>) {
    let Some(p) = &l.pipeline else { return };
    let mut s = sec(
        format!(
            "Pipeline ({} stages, {} compared)",
            p.stages,
            count_of(p.steps_compared, "step")
        ),
        vec![
            "stage",
            "ranks",
            "numbers",
            "computing / step",
            "receive wait / step",
            "send / step",
            "step window",
            "computes the most in",
        ],
    );
    for x in &p.per_stage {
        s.rows.push(vec![
            x.stage.to_string(),
            ranks_text(&x.ranks),
            match x.source {
                CompareSource::Events => "events".into(),
                CompareSource::Vendor => "vendor summaries".into(),
            },
            human_ns(x.computing_ns_per_step.round() as i64),
            human_ns(x.receive_ns_per_step.round() as i64),
            human_ns(x.send_ns_per_step.round() as i64),
            human_ns(x.step_ns_per_step.round() as i64),
            count_of(x.slowest_in_steps, "step"),
        ]);
    }
    s.notes.push(p.statement.clone());
    s.notes.push("means over each stage's ranks and the steps every ranked member has; receive wait is torch_npu's Bubble (hcom_receive time)".into());
    out.push(s);
}

fn experts(l: &Layout, out: &mut Vec<Section>) {
    if l.experts.is_empty() {
        return;
    }
    let mut s = sec(
        "Expert load (tokens per EP group, msprof-analyze ep_load_balance's count)",
        vec![
            "EP group",
            "ranks",
            "max / mean tokens",
            "max - min",
            "most loaded",
            "time at stake",
        ],
    );
    for g in l.experts.iter().take(LISTED) {
        s.rows.push(vec![
            g.group.clone(),
            ranks_text(&g.ranks.iter().map(|x| x.rank).collect::<Vec<_>>()),
            format!("{:.2}", g.tokens_max_over_mean),
            g.tokens_max_minus_min.to_string(),
            format!("rank {}", g.overloaded_rank),
            human_ns(g.time_at_stake_ns),
        ]);
    }
    if let Some(g) = l.experts.first() {
        s.notes.push(g.statement.clone());
    }
    if l.experts.len() > LISTED {
        s.notes.push(format!(
            "{} more EP group(s): JSON analyses.layout.experts",
            l.experts.len() - LISTED
        ));
    }
    out.push(s);
}
