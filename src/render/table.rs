//! Terminal renderer: the report's sections as comfy-table tables.

use super::sections::{Section, build};
use crate::report::Report;
use comfy_table::{
    Cell, Table,
    presets::{ASCII_FULL_CONDENSED, UTF8_FULL_CONDENSED},
};

/// One section as a title, a comfy-table table and its notes.
pub fn render_section(s: &Section, out: &mut String) {
    out.push_str(&s.title);
    out.push('\n');
    if !s.rows.is_empty() {
        let mut t = Table::new();
        t.load_preset(if super::ascii() {
            ASCII_FULL_CONDENSED
        } else {
            UTF8_FULL_CONDENSED
        });
        t.set_header(s.header.iter().map(Cell::new));
        for r in &s.rows {
            t.add_row(r.iter().map(Cell::new));
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    for n in &s.notes {
        out.push_str("  ");
        out.push_str(n);
        out.push('\n');
    }
    out.push('\n');
}

pub fn render(r: &Report) -> String {
    let mut out = format!(
        "profscope {} — report schema {}\n",
        r.tool_version, r.schema_version
    );
    for l in &r.headline {
        out.push_str(&format!("» {l}\n"));
    }
    out.push_str(&format!("inputs: {}\n", r.inputs.join(", ")));
    if let Some(w) = r.wall_ms {
        out.push_str(&format!("wall: {w:.1} ms"));
        if let (Some(i), Some(a)) = (r.ingest_ms, r.analysis_ms) {
            out.push_str(&format!(
                " (summed over files: ingest {i:.1} ms, analyses {a:.1} ms)"
            ));
        }
        out.push('\n');
    }
    if let Some(p) = &r.phase_slice {
        out.push_str(&format!(
            "phase: {} only ({} events kept, {} dropped; device events by launch {}, by own start {})\n",
            p.phase.as_str(),
            p.events_kept, p.events_dropped, p.device_by_launch, p.device_by_own_start
        ));
    }
    out.push('\n');
    for s in build(r) {
        render_section(&s, &mut out);
    }
    out
}
