//! Markdown renderer, for PRs and notes: the same sections as the terminal renderer; by default
//! only the headline and the top tables ([`render_brief`]), every section with `--full`.

use super::sections::build;
use crate::report::Report;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Sections of the brief Markdown (a PR comment), by title prefix, in report order.
const BRIEF: &[&str] = &[
    "Cross-rank steps",
    "Device time",
    "Slowest links",
    "Graph mode: replays",
];
/// Rows and notes per section in the brief Markdown.
const BRIEF_ROWS: usize = 6;
const BRIEF_NOTES: usize = 3;

/// The headline and the top tables, about 60 lines: what a PR comment can hold. The rest is one
/// command away (`--full`), named on the last line.
pub fn render_brief(r: &Report) -> String {
    let mut o = head(r);
    let all = build(r);
    let mut left = Vec::new();
    for mut s in all {
        if !BRIEF.iter().any(|p| s.title.starts_with(p)) {
            left.push(s.title);
            continue;
        }
        let n = s.rows.len();
        if n > BRIEF_ROWS {
            s.rows.truncate(BRIEF_ROWS);
            s.notes
                .insert(0, format!("{BRIEF_ROWS} of {n} rows; `--full` lists all"));
        }
        s.notes.truncate(BRIEF_NOTES);
        render_section(&s, &mut o);
    }
    if !left.is_empty() {
        // Section kinds, once each, with how many there are (per-device sections repeat).
        let mut kinds: Vec<(String, usize)> = Vec::new();
        for title in &left {
            let stem = title.split([':', '(']).next().unwrap_or(title).trim();
            match kinds.iter_mut().find(|k| k.0 == stem) {
                Some(k) => k.1 += 1,
                None => kinds.push((stem.to_string(), 1)),
            }
        }
        let kinds: Vec<String> = kinds
            .into_iter()
            .map(|(k, n)| if n > 1 { format!("{k} ×{n}") } else { k })
            .collect();
        o.push_str(&format!(
            "{} more sections with `--full`: {}.\n",
            left.len(),
            kinds.join(", ")
        ));
    }
    o
}

/// Every section.
pub fn render(r: &Report) -> String {
    let mut o = head(r);
    for s in build(r) {
        render_section(&s, &mut o);
    }
    o
}

fn head(r: &Report) -> String {
    let mut o = format!("# profscope report (schema {})\n\n", r.schema_version);
    for l in &r.headline {
        o.push_str(&format!("- **{}**\n", cell(l)));
    }
    o.push('\n');
    o.push_str(&format!(
        "Inputs: {}\n\n",
        r.inputs
            .iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if let Some(p) = &r.phase_slice {
        o.push_str(&format!(
            "Phase: {} only ({} events kept, {} dropped).\n\n",
            p.phase.as_str(),
            p.events_kept,
            p.events_dropped
        ));
    }
    o
}

/// One section as a `##` heading, a pipe table and its notes.
pub fn render_section(s: &super::sections::Section, o: &mut String) {
    {
        o.push_str(&format!("## {}\n\n", s.title));
        if !s.rows.is_empty() {
            o.push_str(&format!(
                "| {} |\n|{}\n",
                s.header.join(" | "),
                "---|".repeat(s.header.len())
            ));
            for row in &s.rows {
                o.push_str(&format!(
                    "| {} |\n",
                    row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
                ));
            }
            o.push('\n');
        }
        for n in &s.notes {
            o.push_str(&format!("{}\n\n", cell(n)));
        }
    }
}
