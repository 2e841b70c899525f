//! The ranks section: which ranks were read, missing or failed.

use super::{Section, sec};
use crate::render::{human_bytes, human_ns};
use crate::report::Report;

pub(super) fn ranks(r: &Report, out: &mut Vec<Section>) {
    let k = &r.analyses.ranks;
    if k.rows.is_empty() && k.missing.is_empty() && k.failed.is_empty() {
        return;
    }
    let mut s = sec(
        "Ranks",
        vec![
            "rank",
            "files",
            "size",
            "device events",
            "host events",
            "window duration",
        ],
    );
    for x in &k.rows {
        let window = match (x.window_start_ns, x.window_end_ns) {
            (Some(a), Some(b)) => human_ns(b - a),
            _ => "-".into(),
        };
        s.rows.push(vec![
            x.rank.to_string(),
            x.files.len().to_string(),
            human_bytes(x.size_bytes),
            x.device_events.to_string(),
            x.host_events.to_string(),
            window,
        ]);
    }
    let list = |v: &[i32]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    s.notes.push(format!(
        "expected: {} ({}); missing: {}; CPU-only (no device events): {}; vendor summaries only: {}; truncated: {}; oversized (>= {}x the median rank's bytes): {}; window overlaps no other rank: {}",
        k.expected.map_or("unknown".into(), |n| n.to_string()),
        k.expected_source,
        list(&k.missing),
        list(&k.cpu_only),
        list(&k.summary_only),
        list(&k.truncated),
        crate::contract::OVERSIZED_FACTOR,
        list(&k.oversized),
        list(&k.disjoint)
    ));
    for f in &k.failed {
        s.notes
            .push(format!("not analysed (rank {}): {}", f.rank, f.error));
    }
    if !k.unknown_rank_files.is_empty() {
        s.notes.push(format!(
            "{} file(s) of unknown rank, e.g. {}",
            k.unknown_rank_files.len(),
            k.unknown_rank_files[0]
        ));
    }
    out.push(s);
}
