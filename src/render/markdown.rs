//! Markdown renderer, for PRs and notes: the same sections as the table renderer.

use super::{human_bytes, human_ns};
use crate::report::Report;

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn render(r: &Report) -> String {
    let s = &r.summary;
    let mut o = String::new();
    o.push_str(&format!(
        "# profscope report (schema {})\n\n",
        r.schema_version
    ));
    o.push_str(&format!(
        "Inputs: {}\n\n",
        r.inputs
            .iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    o.push_str(&format!(
        "Events {}, processes {}, threads {}, counter samples {}, flow events {}; ranks {:?}\n\n",
        s.events, s.processes, s.threads, s.counters, s.flows, s.ranks
    ));
    o.push_str(
        "## Files

| file | format | size | rank | events | window duration |
|---|---|---:|---:|---:|---:|
",
    );
    for f in &s.files {
        let dur = f
            .window
            .as_ref()
            .map_or("-".to_string(), |w| human_ns(w.duration_ns));
        o.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |
",
            cell(&f.path),
            f.format,
            human_bytes(f.size_bytes),
            f.rank,
            f.events,
            dur
        ));
    }
    o.push_str(
        "\n## Events per category\n\n| category | events | sum of durations |\n|---|---:|---:|\n",
    );
    for c in &s.by_category {
        o.push_str(&format!(
            "| {} | {} | {} |\n",
            c.category,
            c.events,
            human_ns(c.dur_ns_sum)
        ));
    }
    if !s.device_streams.is_empty() {
        o.push_str("\n## Device streams\n\n| rank | process | stream | events | sum of durations |\n|---:|---|---|---:|---:|\n");
        for st in &s.device_streams {
            o.push_str(&format!(
                "| {} | {} | {} ({}) | {} | {} |\n",
                st.rank,
                cell(&st.process),
                st.stream,
                cell(&st.thread_name),
                st.events,
                human_ns(st.dur_ns_sum)
            ));
        }
    }
    o.push_str("\n## Diagnostics\n\n");
    if r.diagnostics.is_empty() {
        o.push_str("None.\n");
    } else {
        o.push_str("| code | severity | count | first example |\n|---|---|---:|---|\n");
        for d in &r.diagnostics {
            o.push_str(&format!(
                "| {} | {:?} | {} | {} |\n",
                d.code,
                d.severity,
                d.count,
                cell(d.examples.first().map_or("", |s| s))
            ));
        }
    }
    o
}
