//! Terminal renderer: comfy-table tables of the report's sections.

use super::{human_bytes, human_ns};
use crate::report::Report;
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(header.iter().map(Cell::new));
    t
}

fn right(s: impl ToString) -> Cell {
    Cell::new(s.to_string()).set_alignment(CellAlignment::Right)
}

pub fn render(r: &Report) -> String {
    let s = &r.summary;
    let mut out = String::new();
    out.push_str(&format!(
        "profscope {} — report schema {}\n",
        r.tool_version, r.schema_version
    ));
    out.push_str(&format!("inputs: {}\n", r.inputs.join(", ")));
    if let Some(ms) = r.ingest_ms {
        out.push_str(&format!("ingest: {ms:.1} ms\n"));
    }
    let ranks = if s.ranks.is_empty() {
        "unknown".to_string()
    } else {
        format!("{:?}", s.ranks)
    };
    out.push_str(&format!(
        "ranks: {ranks}; events {}, processes {}, threads {}, counter samples {}, flow events {}\n\n",
        s.events, s.processes, s.threads, s.counters, s.flows
    ));

    let mut t = table(&[
        "file",
        "format",
        "size",
        "rank",
        "events",
        "window (ns, file clock)",
        "duration",
    ]);
    for f in &s.files {
        let size = if f.gzip {
            format!(
                "{} (gz; {} parsed)",
                human_bytes(f.size_bytes),
                human_bytes(f.parsed_bytes)
            )
        } else {
            human_bytes(f.size_bytes)
        };
        let (win, dur) = match &f.window {
            Some(w) => (
                format!("{} .. {}", w.start_ns, w.end_ns),
                human_ns(w.duration_ns),
            ),
            None => ("-".into(), "-".into()),
        };
        t.add_row(vec![
            Cell::new(&f.path),
            Cell::new(f.format),
            right(size),
            right(f.rank),
            right(f.events),
            Cell::new(win),
            right(dur),
        ]);
    }
    out.push_str(&format!("Files\n{t}\n\n"));

    let mut t = table(&["category", "events", "sum of durations"]);
    for c in &s.by_category {
        t.add_row(vec![
            Cell::new(c.category),
            right(c.events),
            right(human_ns(c.dur_ns_sum)),
        ]);
    }
    out.push_str(&format!("Events per category\n{t}\n\n"));

    if !s.device_streams.is_empty() {
        let mut t = table(&[
            "rank",
            "process",
            "stream",
            "events",
            "sum of durations",
            "categories (events)",
        ]);
        for st in &s.device_streams {
            let cats: Vec<String> = st
                .by_category
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            t.add_row(vec![
                right(st.rank),
                Cell::new(&st.process),
                Cell::new(format!("{} ({})", st.stream, st.thread_name)),
                right(st.events),
                right(human_ns(st.dur_ns_sum)),
                Cell::new(cats.join(", ")),
            ]);
        }
        out.push_str(&format!("Device streams\n{t}\n\n"));
    }

    if r.diagnostics.is_empty() {
        out.push_str("Diagnostics: none\n");
    } else {
        let mut t = table(&["code", "severity", "count", "first example"]);
        for d in &r.diagnostics {
            t.add_row(vec![
                Cell::new(d.code),
                Cell::new(format!("{:?}", d.severity)),
                right(d.count),
                Cell::new(d.examples.first().cloned().unwrap_or_default()),
            ]);
        }
        out.push_str(&format!("Diagnostics\n{t}\n"));
    }
    out
}
