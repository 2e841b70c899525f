//! One offline, self-contained HTML page for a report: no script, no network, inline CSS and SVG.
//! The answer first: the headline, then the verdict and the advisor's top findings as cards
//! (`html_cards`), then the charts (device time, per-stream composition, kernel families, bubble
//! histogram and timeline strip, communication shares, per-rank step breakdown, rooflines (roofline.rs), memory
//! components), then every section of the terminal report as tables. Viewable anywhere,
//! printable, diffable.

use super::sections::{Section, build};
use crate::contract::{Cause, DeviceBubbles, DeviceRef};
use crate::registry::Analyses;
use crate::report::Report;
use crate::report::memory::MemoryReport;

const PALETTE: &[&str] = &[
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

pub use super::esc_html as esc;

fn dev(d: &DeviceRef) -> String {
    let file = d.file.rsplit('/').next().unwrap_or(&d.file);
    if d.rank >= 0 {
        format!("rank {} · {} · {}", d.rank, d.process, file)
    } else {
        format!("{} · {}", d.process, file)
    }
}

/// Chart width in px (the page is at most 1200 px wide).
const W: f64 = 1000.0;

/// One horizontal stacked bar (parts in percent of the whole) with a 0-100% axis and a legend.
fn stacked(title: &str, parts: &[(String, f64)]) -> String {
    let h = 26.0;
    let mut x = 0.0;
    let mut s = format!(
        "<div class=chart><div class=ct>{}</div><svg width='{W}' height='{}' role='img'>",
        esc(title),
        h + 20.0
    );
    for (k, (name, pct)) in parts.iter().enumerate() {
        let pw = (pct.max(0.0) / 100.0 * W).min(W - x);
        if pw > 0.0 {
            s += &format!(
                "<rect x='{x:.1}' y='2' width='{pw:.1}' height='{h}' fill='{}'><title>{}: {pct:.2}%</title></rect>",
                PALETTE[k % PALETTE.len()],
                esc(name)
            );
        }
        x += pw;
    }
    s += &axis(h + 2.0, 0.0, W, &[(0.0, "0%"), (0.5, "50%"), (1.0, "100%")]);
    s += "</svg><div class=lg>";
    for (k, (name, pct)) in parts.iter().enumerate() {
        s += &format!(
            "<span><i style='background:{}'></i>{} {pct:.1}%</span>",
            PALETTE[k % PALETTE.len()],
            esc(name)
        );
    }
    s + "</div></div>"
}

/// A horizontal axis line at `y` from `x0` to `x0 + w` with ticks at fractions of it.
fn axis(y: f64, x0: f64, w: f64, ticks: &[(f64, &str)]) -> String {
    let mut s = format!(
        "<line x1='{x0:.1}' y1='{y:.1}' x2='{:.1}' y2='{y:.1}' class='ax'/>",
        x0 + w
    );
    for (f, label) in ticks {
        let x = x0 + f * w;
        let anchor = if *f <= 0.0 {
            "start"
        } else if *f >= 1.0 {
            "end"
        } else {
            "middle"
        };
        s += &format!(
            "<line x1='{x:.1}' y1='{y:.1}' x2='{x:.1}' y2='{:.1}' class='ax'/><text x='{x:.1}' y='{:.1}' class=t text-anchor='{anchor}'>{}</text>",
            y + 4.0,
            y + 15.0,
            esc(label)
        );
    }
    s
}

/// How a bar chart's values read: a count (whole numbers) or a quantity with a unit.
#[derive(Clone, Copy)]
enum Values<'a> {
    Count,
    Unit(&'a str),
}

impl Values<'_> {
    fn show(self, v: f64) -> String {
        match self {
            Values::Count => format!("{v:.0}"),
            Values::Unit(u) => format!("{}{u}", short(v)),
        }
    }
}

/// Horizontal bars: the full label on the left, the value after the bar, an axis from 0 to the
/// largest value below.
fn bars(title: &str, values: Values, items: &[(String, f64)]) -> String {
    let (label_w, row, gap) = (300.0, 18.0, 6.0);
    let plot = W - label_w - 90.0;
    let max = items.iter().map(|i| i.1).fold(0.0f64, f64::max).max(1e-12);
    let h = (row + gap) * items.len() as f64;
    let mut s = format!(
        "<div class=chart><div class=ct>{}</div><svg width='{W}' height='{:.0}' role='img'>",
        esc(title),
        h + 24.0
    );
    for (k, (name, v)) in items.iter().enumerate() {
        let y = k as f64 * (row + gap);
        let bw = (v / max * plot).max(0.0);
        let label: String = if name.chars().count() > 46 {
            name.chars().take(45).chain(['…']).collect()
        } else {
            name.clone()
        };
        s += &format!(
            "<text x='{:.1}' y='{:.1}' class=l text-anchor='end'>{}<title>{}</title></text>",
            label_w - 6.0,
            y + row - 5.0,
            esc(&label),
            esc(name)
        );
        s += &format!(
            "<rect x='{label_w}' y='{y:.1}' width='{bw:.1}' height='{row}' fill='{}'><title>{}: {}</title></rect>",
            PALETTE[k % PALETTE.len()],
            esc(name),
            values.show(*v)
        );
        s += &format!(
            "<text x='{:.1}' y='{:.1}' class=v>{}</text>",
            label_w + bw + 4.0,
            y + row - 5.0,
            values.show(*v)
        );
    }
    let (mid, top) = (values.show(max / 2.0), values.show(max));
    s += &axis(
        h + 2.0,
        label_w,
        plot,
        &[(0.0, &values.show(0.0)), (0.5, &mid), (1.0, &top)],
    );
    s + "</svg></div>"
}

fn short(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn section_table(s: &Section) -> String {
    let mut o = format!("<h3>{}</h3>", esc(&s.title));
    if !s.rows.is_empty() {
        o += "<table><thead><tr>";
        for h in &s.header {
            o += &format!("<th>{}</th>", esc(h));
        }
        o += "</tr></thead><tbody>";
        for r in &s.rows {
            o += "<tr>";
            for c in r {
                o += &format!("<td>{}</td>", esc(c));
            }
            o += "</tr>";
        }
        o += "</tbody></table>";
    }
    for n in &s.notes {
        o += &format!("<p class=n>{}</p>", esc(n));
    }
    o
}

fn charts(r: &Report) -> String {
    let a = &r.analyses;
    [
        device_time_charts(a),
        composition_charts(a),
        bubble_charts(a),
        communication_charts(a),
        cross_rank_charts(a),
        super::roofline::charts(a, esc),
    ]
    .concat()
}

/// Each device's window split into computing, exposed communication and free.
fn device_time_charts(a: &Analyses) -> String {
    let mut o = String::new();
    if !a.device_time.is_empty() {
        o += "<h2>Device time</h2>";
        for d in &a.device_time {
            o += &stacked(
                &format!(
                    "{} — share of the device window ({:.3} ms)",
                    dev(&d.device),
                    d.window_ns as f64 / 1e6
                ),
                &[
                    ("computing".into(), d.computing_pct_of_window),
                    (
                        "communication not overlapped".into(),
                        d.communication_not_overlapped_pct_of_window,
                    ),
                    ("free".into(), d.free_pct_of_window),
                ],
            );
        }
    }
    o
}

/// Compute time per stream and the largest kernel families.
fn composition_charts(a: &Analyses) -> String {
    let mut o = String::new();
    if !a.composition.is_empty() {
        o += "<h2>Compute streams and kernel families</h2>";
        for c in &a.composition {
            let parts: Vec<(String, f64)> = c
                .streams
                .iter()
                .map(|s| (format!("stream {}", s.stream), s.pct_of_compute))
                .collect();
            o += &stacked(
                &format!(
                    "{} — compute time per stream ({} kernels)",
                    dev(&c.device),
                    c.compute_kernels
                ),
                &parts,
            );
            let fam: Vec<(String, f64)> = c
                .families
                .iter()
                .take(10)
                .map(|f| (f.name.clone(), f.pct_of_compute))
                .collect();
            if !fam.is_empty() {
                o += &bars(
                    &format!(
                        "{} — the 10 largest kernel families, % of compute-kernel time",
                        dev(&c.device)
                    ),
                    Values::Unit("%"),
                    &fam,
                );
            }
        }
    }
    o
}

/// Per device: the gap-length histogram and the largest gaps on a timeline strip.
fn bubble_charts(a: &Analyses) -> String {
    if a.bubbles.is_empty() {
        return String::new();
    }
    let mut o = String::from("<h2>Bubbles</h2>");
    for b in &a.bubbles {
        o += &bubble_histogram(b);
        o += &gap_strip(b);
    }
    o
}

/// Gaps by length: bins from the first to the last non-empty one, as [lo, hi) ranges.
fn bubble_histogram(b: &DeviceBubbles) -> String {
    // Bins from the first to the last non-empty one, as [lo, hi) ranges.
    let first = b.histogram.iter().position(|h| h.count > 0);
    let last = b.histogram.iter().rposition(|h| h.count > 0);
    let bins = match (first, last) {
        (Some(f), Some(l)) => &b.histogram[f..=l],
        _ => &b.histogram[..0],
    };
    let hist: Vec<(String, f64)> = bins
        .iter()
        .map(|h| {
            let lo = crate::render::human_ns(h.lo_ns);
            let label = if h.hi_ns < 0 {
                format!("≥ {lo}")
            } else {
                format!("[{lo}, {})", crate::render::human_ns(h.hi_ns))
            };
            (label, h.count as f64)
        })
        .collect();
    bars(
        &format!(
            "{} — gaps ≥ {} by length (number of gaps)",
            dev(&b.device),
            crate::render::human_ns(b.min_gap_ns)
        ),
        Values::Count,
        &hist,
    )
}

/// The largest gaps inside the device window, coloured by cause, with a time axis and a
/// legend of the causes drawn.
fn gap_strip(b: &DeviceBubbles) -> String {
    // Timeline strip: the largest gaps inside the device window, coloured by cause.
    let (w, h) = (W, 22.0);
    let span = (b.window_end_ns - b.window_start_ns).max(1) as f64;
    let mut s = format!(
        "<div class=chart><div class=ct>{} — largest gaps on the timeline ({} shown of {}; time from the device's first busy instant)</div><svg width='{w}' height='{}' role='img'><rect x='0' y='2' width='{w}' height='{h}' fill='#eef'/>",
        esc(&dev(&b.device)),
        b.largest.len(),
        b.gaps,
        h + 20.0
    );
    // In the rule order; the legend lists only the causes drawn.
    // A cause keeps its colour (its rule number) whichever causes are present.
    let colour = |c: &str| {
        let k = Cause::ALL.iter().position(|x| x.as_str() == c).unwrap_or(0);
        PALETTE[(k + 3) % PALETTE.len()]
    };
    // The legend lists the causes of the gaps drawn, not every cause of the device.
    let causes: Vec<&str> = Cause::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| b.largest.iter().any(|g| g.cause.as_str() == *c))
        .collect();
    for g in &b.largest {
        let x = (g.start_ns - b.window_start_ns) as f64 / span * w;
        let gw = (g.dur_ns as f64 / span * w).max(1.0);
        s += &format!(
            "<rect x='{x:.1}' y='2' width='{gw:.1}' height='{h}' fill='{}'><title>{}: {}</title></rect>",
            colour(g.cause.as_str()),
            g.cause.as_str(),
            crate::render::human_ns(g.dur_ns)
        );
    }
    let at = |f: f64| format!("+{}", crate::render::human_ns((span * f) as i64));
    let ticks: Vec<(f64, String)> = [0.0, 0.25, 0.5, 0.75, 1.0]
        .into_iter()
        .map(|f| (f, at(f)))
        .collect();
    let ticks: Vec<(f64, &str)> = ticks.iter().map(|(f, t)| (*f, t.as_str())).collect();
    s += &axis(h + 2.0, 0.0, w, &ticks);
    s += "</svg><div class=lg>";
    for c in &causes {
        s += &format!("<span><i style='background:{}'></i>{c}</span>", colour(c));
    }
    s + "</div></div>"
}

/// Communication shares against compute kernels and device task time.
fn communication_charts(a: &Analyses) -> String {
    let mut o = String::new();
    if !a.communication.is_empty() {
        o += "<h2>Communication shares</h2>";
        for c in &a.communication {
            o += &format!(
                "<p class=n><b>{}</b>: communication kernels ({}) = {} ({:.3} ms of compute kernels); {:.1}% of communication overlaps compute</p>",
                esc(&dev(&c.device)),
                c.comm_kernels_source,
                if c.comm_kernels.pct >= 100.0 {
                    format!("{:.1}× compute-kernel time", c.comm_kernels.pct / 100.0)
                } else {
                    format!("{:.1}% of compute-kernel time", c.comm_kernels.pct)
                },
                c.compute_kernel_ns as f64 / 1e6,
                c.overlapped_pct_of_comm
            );
            o += &bars(
                &format!(
                    "{} — % of all device task time ({:.3} ms)",
                    dev(&c.device),
                    c.device_task_ns as f64 / 1e6
                ),
                Values::Unit("%"),
                &[
                    ("NOTIFY_WAIT".into(), c.notify_wait.pct),
                    ("EVENT / MEM waits".into(), c.event_and_mem_waits.pct),
                    ("data movement (copies)".into(), c.data_movement.pct),
                ],
            );
        }
    }
    o
}

/// Per cohort: each rank's mean step split into computing, exposed communication, free.
fn cross_rank_charts(a: &Analyses) -> String {
    let mut o = String::new();
    for (k, cohort) in a.cross_rank.cohorts.iter().enumerate() {
        if cohort.ranks.is_empty() {
            continue;
        }
        o += &format!(
            "<h2>Per-rank step breakdown (cohort {}, {} from {})</h2>",
            k + 1,
            super::sections::count_of(cohort.steps_compared, "step"),
            esc(&cohort.step_source)
        );
        o += &match by_stage(&a.layout, &cohort.distribution) {
            Some(grid) => grid,
            None => heat_map(&cohort.distribution),
        };
        if cohort.steps_compared <= 1 {
            o += "<p class=n>One step per rank: its breakdown is the device time above.</p>";
            continue;
        }
        for rk in &cohort.ranks {
            o += &stacked(
                &format!(
                    "{} — mean step {:.3} ms",
                    dev(&rk.device),
                    rk.step_mean_ns / 1e6
                ),
                &[
                    ("computing".into(), rk.computing_pct),
                    (
                        "communication not overlapped".into(),
                        rk.communication_not_overlapped_pct,
                    ),
                    ("free".into(), rk.free_pct),
                ],
            );
        }
    }
    o
}

/// With a job layout: one row of cells per peer set (stage and TP index), one column per
/// data-parallel replica, each row shaded from its fastest to its slowest member (replicas are
/// compared with each other, never across stages), the row's slowest member named.
fn by_stage(l: &crate::contract::Layout, d: &crate::contract::RankDistribution) -> Option<String> {
    const CELL: usize = 12;
    const MAX_COLS: usize = 128;
    let means: std::collections::HashMap<i32, i64> =
        d.computing_mean_ns_by_rank.iter().copied().collect();
    let rows: Vec<(&crate::contract::PeerSet, Vec<(i32, i64)>)> = l
        .peer_sets
        .iter()
        .map(|p| {
            (
                p,
                p.ranks
                    .iter()
                    .filter_map(|r| Some((*r, *means.get(r)?)))
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, v)| !v.is_empty())
        .collect();
    if rows.len() < 2 || means.len() < 3 {
        return None;
    }
    let cols = rows.iter().map(|r| r.1.len()).max()?.min(MAX_COLS);
    let label = 150;
    let mut o = format!(
        "<div class=chart><div class=ct>Mean computing time per step per rank, by peer set ({} ranks in {} sets; each row shaded from its least, light, to its most, dark: in lock step the step times match, the computing shows the slow rank)</div><svg width={} height={} role=img>",
        means.len(),
        rows.len(),
        label + cols * CELL,
        rows.len() * CELL
    );
    let mut notes = Vec::new();
    for (y, (p, v)) in rows.iter().enumerate() {
        let lo = v.iter().map(|x| x.1).min().unwrap_or(0) as f64;
        let hi = v.iter().map(|x| x.1).max().unwrap_or(0) as f64;
        let name = format!(
            "stage {}{}",
            p.stage.map_or("?".into(), |s| s.to_string()),
            p.tp_index.map_or(String::new(), |t| format!(", tp {t}"))
        );
        o += &format!(
            "<text x=0 y={} font-size=10>{}</text>",
            y * CELL + 10,
            esc(&name)
        );
        for (x, &(rank, ns)) in v.iter().take(cols).enumerate() {
            let t = if hi > lo {
                (ns as f64 - lo) / (hi - lo)
            } else {
                0.0
            };
            let light = 92.0 - 62.0 * t;
            o += &format!(
                "<rect x={} y={} width={} height={} fill=\"hsl(10,70%,{light:.0}%)\"><title>rank {rank}: {:.3} ms</title></rect>",
                label + x * CELL,
                y * CELL,
                CELL - 1,
                CELL - 1,
                ns as f64 / 1e6
            );
        }
        if let Some(&(rank, ns)) = v.iter().max_by_key(|x| x.1) {
            notes.push(format!(
                "{name}: rank {rank} computes the most ({:.3} ms per step, +{:.1}% over the row's least)",
                ns as f64 / 1e6,
                (ns as f64 / lo.max(1.0) - 1.0) * 100.0
            ));
        }
    }
    o += "</svg>";
    notes.truncate(16);
    o += &format!("<p class=n>{}</p></div>", esc(&notes.join("; ")));
    Some(o)
}

/// Every rank's mean step time as one grid of cells (rank order, 64 per row), shaded from the
/// fastest to the slowest rank, with the slowest and fastest ranks named: one picture for any
/// rank count (the per-rank rows above list only the ranks that matter).
fn heat_map(d: &crate::contract::RankDistribution) -> String {
    let v = &d.step_mean_ns_by_rank;
    if v.len() < 3 {
        return String::new();
    }
    const COLS: usize = 64;
    const CELL: usize = 12;
    let lo = v.iter().map(|x| x.1).min().unwrap_or(0) as f64;
    let hi = v.iter().map(|x| x.1).max().unwrap_or(0) as f64;
    let rows = v.len().div_ceil(COLS);
    let mut o = format!(
        "<div class=chart><div class=ct>Mean device step time per rank ({} ranks; light {:.3} ms to dark {:.3} ms)</div><svg width={} height={} role=img>",
        v.len(),
        lo / 1e6,
        hi / 1e6,
        COLS * CELL,
        rows * CELL
    );
    for (i, &(rank, ns)) in v.iter().enumerate() {
        let t = if hi > lo {
            (ns as f64 - lo) / (hi - lo)
        } else {
            0.0
        };
        let light = 92.0 - 62.0 * t;
        o += &format!(
            "<rect x={} y={} width={} height={} fill=\"hsl(10,70%,{light:.0}%)\"><title>rank {rank}: {:.3} ms</title></rect>",
            (i % COLS) * CELL,
            (i / COLS) * CELL,
            CELL - 1,
            CELL - 1,
            ns as f64 / 1e6
        );
    }
    o += "</svg>";
    let mut by: Vec<&(i32, i64)> = v.iter().collect();
    by.sort_by_key(|x| std::cmp::Reverse(x.1));
    let names = |xs: &[&(i32, i64)]| {
        xs.iter()
            .map(|x| format!("rank {} ({:.3} ms)", x.0, x.1 as f64 / 1e6))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let s = &d.step_mean_ns;
    o += &format!(
        "<p class=n>slowest: {}; fastest: {}; p10 / p50 / p90 {:.3} / {:.3} / {:.3} ms</p></div>",
        names(&by[..by.len().min(5)]),
        names(&by[by.len().saturating_sub(3)..]),
        s.p10 / 1e6,
        s.p50 / 1e6,
        s.p90 / 1e6
    );
    o
}

fn memory_charts(m: &MemoryReport) -> String {
    let mut o = String::from("<h2>HBM by component</h2>");
    for d in &m.run.attribution.devices {
        let used = d.cross_check.npu_smi_used_bytes.unwrap_or(0).max(1) as f64;
        let mut parts: Vec<(String, f64)> = d
            .components
            .iter()
            .filter_map(|c| Some((c.name.to_string(), c.bytes? as f64 / used * 100.0)))
            .collect();
        if let Some(r) = d.residual_bytes {
            parts.push(("residual".into(), r as f64 / used * 100.0));
        }
        o += &stacked(
            &format!(
                "device {} — % of npu-smi HBM used ({:.0} MiB)",
                d.device.map_or("?".into(), |x| x.to_string()),
                used / crate::units::MIB as f64
            ),
            &parts,
        );
    }
    let mut secs = Vec::new();
    for s in crate::render::memory::sections(m) {
        secs.push(section_table(&s));
    }
    o + &secs.join("")
}

const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}h3{font-size:15px;margin-top:18px}table{border-collapse:collapse;margin:6px 0;font-size:12px}td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}th{background:#f4f4f4}.chart{margin:10px 0}.ct{font-weight:600;margin-bottom:2px}.lg span{margin-right:14px;font-size:12px}.lg i{display:inline-block;width:10px;height:10px;margin-right:4px}.n{color:#555;font-size:12px;margin:2px 0}svg text.v{font-size:11px}svg text.l{font-size:11px}svg text.t{font-size:10px;fill:#555}svg line.ax{stroke:#888;stroke-width:1}svg line.roof{stroke:#333;stroke-width:1.5}svg.roofline text{font-size:10px;fill:#555}.meta{color:#555}";

pub fn render(r: &Report, memory: Option<&MemoryReport>) -> String {
    let mut o = format!(
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>profscope report</title><style>{CSS}{}</style></head><body>",
        super::html_cards::CSS
    );
    o += "<h1>profscope report</h1>";
    o += "<ul>";
    for l in &r.headline {
        o += &format!("<li><b>{}</b></li>", esc(l));
    }
    o += "</ul>";
    o += &format!(
        "<p class=meta>schema {} · {} {} · inputs: {} · {} events in {} files, ranks {}</p>",
        r.schema_version,
        r.tool,
        r.tool_version,
        esc(&r.inputs.join(", ")),
        r.summary.events,
        r.summary.files.len(),
        r.summary
            .ranks
            .iter()
            .map(i32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    o += &super::html_cards::answer(r);
    o += &charts(r);
    if let Some(m) = memory {
        o += &memory_charts(m);
    }
    o += "<h2>Report tables</h2>";
    for s in build(r) {
        o += &section_table(&s);
    }
    o + "</body></html>\n"
}
