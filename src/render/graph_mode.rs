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
            "graph launches",
            "replays",
            "replay device time",
            "share of device time",
            "replay span p50",
            "gap to next replay p50",
            "captures (launches)",
            "issued by",
            "tied by",
        ],
    );
    for g in files {
        s.rows.push(vec![
            rel(r, &g.file).to_string(),
            g.rank.to_string(),
            g.graph_launches.to_string(),
            g.replays.to_string(),
            human_ns(g.replay_device_ns),
            format!("{:.1}%", g.replay_pct_of_device_ns),
            p50(g, "span"),
            p50(g, "gap_to_next"),
            format!("{} ({})", g.capture_windows, g.captured_launches),
            g.issuing_ops.first().map_or("-".into(), |o| o.name.clone()),
            g.attribution.clone(),
        ]);
        for c in &g.caveats {
            s.notes.push(format!("{}: {c}", rel(r, &g.file)));
        }
    }
    s.notes.push("share of device time: replay device time / the sum of all device-event durations of the file; gap to next replay: from a replay's last device end to the next one's first start (host overhead between replays)".into());
    out.push(s);
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
    s.notes.push("by: capture (k-th task of a replay = k-th launch recorded in a capture of the same length), connection_id (Ascend: the capture-time launch a replayed task names), kernel_name (no capture in the file)".into());
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
