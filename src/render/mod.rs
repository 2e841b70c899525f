//! Renderers: turn a [`crate::report::Report`] into text. They see only the report, never the
//! model. One module per output format.

pub mod diff;
pub mod html;
pub mod json;
pub mod markdown;
pub mod memory;
pub mod query;
pub mod sections;
pub mod table;

use crate::report::Report;

/// Output format of every subcommand (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Md,
}

/// The report in `format`; Markdown is the brief one (headline and top tables).
pub fn render(report: &Report, format: Format) -> String {
    render_detail(report, format, false)
}

/// The report in `format`; `full` Markdown has every section.
pub fn render_detail(report: &Report, format: Format, full: bool) -> String {
    match format {
        Format::Table => table::render(report),
        Format::Json => json::render(report),
        Format::Md if full => markdown::render(report),
        Format::Md => markdown::render_brief(report),
    }
}

/// `1234567` ns as `1.235 ms` (for people; JSON keeps integers).
pub fn human_ns(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    let (v, unit) = if a >= 1e9 {
        (ns as f64 / 1e9, "s")
    } else if a >= 1e6 {
        (ns as f64 / 1e6, "ms")
    } else if a >= 1e3 {
        (ns as f64 / 1e3, "us")
    } else {
        (ns as f64, "ns")
    };
    format!("{v:.3} {unit}")
}

pub fn human_bytes(b: u64) -> String {
    let f = b as f64;
    if f >= 1e9 {
        format!("{:.2} GB", f / 1e9)
    } else if f >= 1e6 {
        format!("{:.2} MB", f / 1e6)
    } else if f >= 1e3 {
        format!("{:.1} KB", f / 1e3)
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
    out
}
