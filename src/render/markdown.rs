//! Markdown renderer, for PRs and notes: the same sections as the terminal renderer; by default
//! the brief (`markdown_brief`: the report filled into a byte budget by importance), every
//! section with `--full`.

use super::sections::build;
use crate::report::Report;

/// A table cell or a line: pipes escaped, on one line.
pub(super) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Every section.
pub fn render(r: &Report) -> String {
    let mut o = head(r);
    for s in build(r) {
        render_section(&s, &mut o);
    }
    o
}

/// The title, the headline as bullets, the inputs and the phase slice.
fn head(r: &Report) -> String {
    let mut o = title(r);
    for l in &r.headline {
        o.push_str(&format!("- **{}**\n", cell(l)));
    }
    o.push('\n');
    o + &context(r)
}

pub(super) fn title(r: &Report) -> String {
    format!("# profscope report (schema {})\n\n", r.schema_version)
}

/// The inputs and the phase slice, under the headline.
pub(super) fn context(r: &Report) -> String {
    let mut o = String::new();
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
