//! The "Graph mode" sections: per file the graph replays, their device time and the host gap
//! between them, the captures, the ops inside the replays and the replays per step
//! (analysis::graph_mode, docs/analyses/graph_mode.md).

use super::human_ns;
use super::section::{Section, rel, sec};
use crate::contract::{DurStats, GraphFile};
use crate::report::Report;

/// Steps listed per file before the rest are summed into one note (JSON lists all).
const STEP_ROWS: usize = 10;

fn stat<'a>(g: &'a GraphFile, name: &str) -> Option<&'a DurStats> {
    g.replay_stats.iter().find(|s| s.name == name)
}

fn p50(g: &GraphFile, name: &str) -> String {
    stat(g, name).map_or("-".into(), |s| human_ns(s.p50_ns.round() as i64))
}

/// The graph-mode sections, when any file replays or captures graphs.
pub fn sections(r: &Report, out: &mut Vec<Section>) {
    let files = &r.analyses.graph_mode.files;
    if files.is_empty() {
        return;
    }
    let mut s = sec(
        "Graph mode: replays",
        vec![
            "file",
            "rank",
            "role",
            "graph launches",
            "replays",
            "replay device time",
            "share of device time",
            "replay span p50",
            "gap to next replay p50",
            "captures (launches)",
            "issued by",
            "tied by",
            "ops named",
        ],
    );
    for g in files {
        let named = if g.replays > 0 {
            format!("{:.1}%", g.ops_in_graphs.matched_ns_pct)
        } else {
            "-".into()
        };
        s.rows.push(vec![
            rel(r, &g.file).to_string(),
            g.rank.to_string(),
            if g.role.is_empty() {
                "replays".into()
            } else {
                g.role.replace('_', " ")
            },
            g.graph_launches.to_string(),
            g.replays.to_string(),
            human_ns(g.replay_device_ns),
            format!("{:.1}%", g.replay_pct_of_device_ns),
            p50(g, "span"),
            p50(g, "gap_to_next"),
            format!("{} ({})", g.capture_windows, g.captured_launches),
            g.issuing_ops.first().map_or("-".into(), |o| o.name.clone()),
            g.attribution.clone(),
            named,
        ]);
        for c in &g.caveats {
            s.notes.push(format!("{}: {c}", rel(r, &g.file)));
        }
    }
    s.notes.push("share of device time: replay device time / the sum of all device-event durations of the file; gap to next replay: from a replay's last device end to the next one's first start (host overhead between replays); ops named: share of replay device time tied to the op that launched it; a capture companion or eager map is read for those ops only, never summed with the run".into());
    out.push(s);
    sequences(r, files, out);
    ops(r, files, out);
    steps(r, files, out);
}

fn ops(r: &Report, files: &[GraphFile], out: &mut Vec<Section>) {
    let mut s = sec(
        "Graph mode: time inside replays",
        vec!["file", "op", "tasks", "time", "share of replay time", "by"],
    );
    for g in files.iter().filter(|g| g.replays > 0) {
        let o = &g.ops_in_graphs;
        for row in &o.rows {
            s.rows.push(vec![
                rel(r, &g.file).to_string(),
                row.name.clone(),
                row.count.to_string(),
                human_ns(row.sum_ns),
                format!("{:.1}%", row.pct_of_total),
                o.source.clone(),
            ]);
        }
        if o.other.0 > 0 {
            s.rows.push(vec![
                rel(r, &g.file).to_string(),
                format!("({} more)", o.other.0),
                o.other.1.to_string(),
                human_ns(o.other.2),
                format!("{:.1}%", pct(o.other.2, g.replay_device_ns)),
                o.source.clone(),
            ]);
        }
    }
    s.notes.push("by: capture (a replay's device events aligned to the launches its capture recorded, in the file or a capture companion), connection_id (Ascend: the capture-time launch a replayed task names), eager_map (aligned to a step of an eager run), kernel_name (nothing matched: an op column of kernel names)".into());
    if !s.rows.is_empty() {
        out.push(s);
    }
}

/// Sequences listed per file (by device time, the rest in a note; the JSON lists all).
const SEQUENCE_ROWS: usize = 10;

/// Per distinct replayed sequence: where its ops came from and how well the recorded launches
/// agreed.
fn sequences(r: &Report, files: &[GraphFile], out: &mut Vec<Section>) {
    let mut s = sec(
        "Graph mode: replayed graphs and their ops",
        vec![
            "file",
            "graph",
            "replays",
            "events per replay",
            "ops from",
            "recorded launches",
            "matched",
            "checked by",
        ],
    );
    for g in files.iter().filter(|g| g.replays > 0) {
        let seqs = &g.ops_in_graphs.graphs;
        let mut order: Vec<usize> = (0..seqs.len()).collect();
        order.sort_by_key(|&k| std::cmp::Reverse(seqs[k].ops.iter().map(|o| o.ns).sum::<i64>()));
        for &k in order.iter().take(SEQUENCE_ROWS) {
            let q = &seqs[k];
            let from = if q.matched_from.is_empty() {
                q.source.clone()
            } else if q.matched_from == g.file {
                format!("{} (this file)", q.source)
            } else {
                format!("{} ({})", q.source, rel(r, &q.matched_from))
            };
            s.rows.push(vec![
                rel(r, &g.file).to_string(),
                if q.graph >= 0 {
                    q.graph.to_string()
                } else {
                    format!("#{k}")
                },
                q.replays.to_string(),
                q.device_events.to_string(),
                from,
                q.recorded_launches.to_string(),
                format!("{} ({:.1}%)", q.matched_events, q.agreement_pct),
                if q.checked_by.is_empty() {
                    "-".into()
                } else {
                    q.checked_by.clone()
                },
            ]);
            if !q.note.is_empty() {
                s.notes.push(format!(
                    "{} graph {}: {}",
                    rel(r, &g.file),
                    s.rows.last().map_or("", |x| x[1].as_str()),
                    q.note
                ));
            }
        }
        if seqs.len() > SEQUENCE_ROWS {
            s.notes.push(format!(
                "{}: {} more replayed graphs in the JSON report (analyses.graph_mode.files[].ops_in_graphs.graphs)",
                rel(r, &g.file),
                seqs.len() - SEQUENCE_ROWS
            ));
        }
    }
    s.notes.push("graph: the graph id the events carry, else #index into ops_in_graphs.graphs; matched: device events of one replay tied to a recorded launch (share of the replay's events); checked by: name (the same kernel on both sides), kind (kernel / copy / set only: the capture's launches name no kernel, CUDA), connection_id (Ascend, exact); each graph's ops in order are in the JSON report".into());
    if !s.rows.is_empty() {
        out.push(s);
    }
}

fn steps(r: &Report, files: &[GraphFile], out: &mut Vec<Section>) {
    let mut s = sec(
        "Graph mode: per step",
        vec![
            "file",
            "step",
            "replays",
            "graph device time",
            "eager device time",
            "graph share",
            "between replays",
            "largest gap",
        ],
    );
    for g in files {
        for st in g.steps.iter().take(STEP_ROWS) {
            s.rows.push(vec![
                rel(r, &g.file).to_string(),
                st.step.to_string(),
                st.replays.to_string(),
                human_ns(st.graph_device_ns),
                human_ns(st.eager_device_ns),
                format!("{:.1}%", st.graph_pct),
                human_ns(st.between_replay_gap_ns),
                human_ns(st.max_between_replay_gap_ns),
            ]);
        }
        if g.steps.len() > STEP_ROWS {
            s.notes.push(format!(
                "{}: {} more steps in the JSON report (analyses.graph_mode)",
                rel(r, &g.file),
                g.steps.len() - STEP_ROWS
            ));
        }
    }
    s.notes.push(
        "steps: a replay belongs to the step of its launch; eager device work to the step of its own launch (its start when no launch is linked)"
            .into(),
    );
    if !s.rows.is_empty() {
        out.push(s);
    }
}

fn pct(a: i64, b: i64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 * 100.0 / b as f64
    }
}
