//! Renderers: turn a [`crate::report::Report`] into text. They see only the report, never the
//! model. One module per output format.

pub mod diff;
pub mod graph_mode;
pub mod html;
pub mod html_cards;
pub mod json;
pub mod markdown;
pub mod markdown_brief;
pub mod memory;
pub mod query;
pub mod roofline;
pub mod section;
pub mod sections;
pub mod table;
pub mod verdict;

use crate::report::Report;
use std::sync::atomic::{AtomicBool, Ordering};

/// `--ascii`: plain ASCII for terminals and logs that cannot show µ, ×, → or box drawing.
static ASCII: AtomicBool = AtomicBool::new(false);

/// Switches every people-facing renderer to plain ASCII (`us`, `x`, `->`, `+--+` tables).
pub fn set_ascii(on: bool) {
    ASCII.store(on, Ordering::Relaxed);
}

pub fn ascii() -> bool {
    ASCII.load(Ordering::Relaxed)
}

/// True for a character a terminal would act on rather than show (C0 controls but the line
/// break, DEL, C1 controls): ESC starts escape sequences, CR rewrites the line.
fn is_control(c: char) -> bool {
    c != '\n' && (c.is_control())
}

/// `s` with every control character of a name (see [`is_control`]) written as `\xNN` / `\u{NNNN}`,
/// so a file or kernel name cannot move the cursor, recolour or rewrite a terminal line.
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if is_control(c) && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if is_control(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Text for people as the output style asks: control characters escaped (see
/// [`escape_controls`]), and with `--ascii` every non-ASCII sign spelled in ASCII (anything
/// else non-ASCII, such as a kernel name in another script, becomes `?`). JSON never goes
/// through this: its strings are data (serde escapes their controls).
pub fn for_people(s: String) -> String {
    let s = match escape_controls(&s) {
        std::borrow::Cow::Borrowed(_) => s,
        std::borrow::Cow::Owned(o) => o,
    };
    if !ascii() || s.is_ascii() {
        return s;
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            c if c.is_ascii() => out.push(c),
            'µ' | 'μ' => out.push('u'),
            '×' => out.push('x'),
            '→' => out.push_str("->"),
            '←' => out.push_str("<-"),
            '≥' => out.push_str(">="),
            '≤' => out.push_str("<="),
            '≠' => out.push_str("!="),
            '≈' => out.push('~'),
            '±' => out.push_str("+/-"),
            '−' | '–' | '—' => out.push('-'),
            '…' => out.push_str("..."),
            '»' => out.push('>'),
            '·' | '•' => out.push('*'),
            '∪' => out.push('U'),
            '∩' => out.push('^'),
            '∑' | 'Σ' => out.push_str("sum"),
            '‘' | '’' => out.push('\''),
            '“' | '”' => out.push('"'),
            _ => out.push('?'),
        }
    }
    out
}

/// Text for an HTML page: `&`, `<`, `>` and `"` escaped (the HTML page and its cards).
pub fn esc_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Output format of every subcommand (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Md,
}

/// The report in `format`; Markdown is the brief one (filled by importance into
/// [`markdown_brief::DEFAULT_BRIEF_BYTES`]).
pub fn render(report: &Report, format: Format) -> String {
    render_detail(report, format, false)
}

/// The report in `format`; `full` Markdown has every section.
pub fn render_detail(report: &Report, format: Format, full: bool) -> String {
    match format {
        Format::Table => for_people(table::render(report)),
        Format::Json => json::render(report),
        Format::Md if full => for_people(markdown::render(report)),
        Format::Md => markdown_brief::render(report, None)
            .expect("an unbounded brief grows to its essentials"),
    }
}

/// `1234567` ns as `1.235 ms` (for people; JSON keeps integers).
pub fn human_ns(ns: i64) -> String {
    let text = crate::units::human_duration(ns as f64);
    if ascii() {
        text.replace("µs", "us")
    } else {
        text
    }
}

/// Bytes for people, in decimal multiples (`1.50 GB` is 1.5e9 bytes).
pub fn human_bytes(b: u64) -> String {
    use crate::units::{GB, KB, MB};
    let f = b as f64;
    if b >= GB as u64 {
        format!("{:.2} GB", f / GB as f64)
    } else if b >= MB as u64 {
        format!("{:.2} MB", f / MB as f64)
    } else if b >= KB as u64 {
        format!("{:.1} KB", f / KB as f64)
    } else {
        format!("{b} B")
    }
}

/// Sections as terminal tables or Markdown (`Format::Json` is the caller's own serialization).
pub fn render_sections(sections: &[sections::Section], format: Format) -> String {
    let mut out = String::new();
    for s in sections {
        if format == Format::Md {
            markdown::render_section(s, &mut out);
        } else {
            table::render_section(s, &mut out);
        }
    }
    for_people(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_of_names_are_escaped_for_people() {
        assert_eq!(
            for_people("a\u{1b}[31mred\rb\u{7f}\u{9b}\n".into()),
            "a\\x1b[31mred\\x0db\\x7f\\x9b\n"
        );
        assert_eq!(escape_controls("plain µs → name\n"), "plain µs → name\n");
    }
}
