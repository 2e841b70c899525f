//! The inventory sections: the files read, their event categories and streams.

use super::{Section, rel, sec};
use crate::render::{human_bytes, human_ns};
use crate::report::Report;

pub(super) fn summary(r: &Report, out: &mut Vec<Section>) {
    let s = &r.summary;
    let mut f = sec(
        "Files",
        vec![
            "file",
            "format",
            "size",
            "rank",
            "events",
            "window duration",
        ],
    );
    for x in &s.files {
        let size = if x.gzip {
            format!(
                "{} (gz; {} parsed)",
                human_bytes(x.size_bytes),
                human_bytes(x.parsed_bytes)
            )
        } else {
            human_bytes(x.size_bytes)
        };
        let dur = x
            .window
            .as_ref()
            .map_or("-".into(), |w| human_ns(w.duration_ns));
        f.rows.push(vec![
            if x.parts > 1 {
                format!("{} (+{} parts)", rel(r, &x.path), x.parts - 1)
            } else {
                rel(r, &x.path).to_string()
            },
            x.format.into(),
            size,
            x.rank.to_string(),
            x.events.to_string(),
            dur,
        ]);
    }
    f.notes.push(format!(
        "ranks {}; events {}, processes {}, threads {}, counter samples {}, flow events {}",
        if s.ranks.is_empty() {
            "unknown".to_string()
        } else {
            s.ranks
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        },
        s.events,
        s.processes,
        s.threads,
        s.counters,
        s.flows
    ));
    out.push(f);
    let mut c = sec(
        "Events per category",
        vec!["category", "events", "sum of durations"],
    );
    for x in &s.by_category {
        c.rows.push(vec![
            x.category.into(),
            x.events.to_string(),
            human_ns(x.dur_ns_sum),
        ]);
    }
    out.push(c);
    let mut d = sec(
        "Device streams",
        vec![
            "rank",
            "process",
            "thread",
            "events",
            "sum of durations",
            "categories (events)",
        ],
    );
    for x in &s.device_streams {
        let cats: Vec<String> = x
            .by_category
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        d.rows.push(vec![
            x.rank.to_string(),
            x.process.clone(),
            format!("{} ({})", x.stream, x.thread_name),
            x.events.to_string(),
            human_ns(x.dur_ns_sum),
            cats.join(", "),
        ]);
    }
    if !d.rows.is_empty() {
        out.push(d);
    }
}
