//! One offline, self-contained HTML page for a report: no script, no network, inline CSS and SVG
//! charts (device time, per-stream composition, kernel families, bubble histogram and timeline
//! strip, communication shares, per-rank step breakdown, memory components), then every section
//! of the terminal report as tables. Viewable anywhere, printable, diffable.

use super::sections::{Section, build};
use crate::analysis::devices::DeviceRef;
use crate::report::Report;
use crate::report::memory::MemoryReport;

const PALETTE: &[&str] = &[
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn dev(d: &DeviceRef) -> String {
    let file = d.file.rsplit('/').next().unwrap_or(&d.file);
    if d.rank >= 0 {
        format!("rank {} · {} · {}", d.rank, d.process, file)
    } else {
        format!("{} · {}", d.process, file)
    }
}

/// One horizontal stacked bar (parts in percent of the whole) with a legend.
fn stacked(title: &str, parts: &[(String, f64)]) -> String {
    let (w, h) = (720.0, 26.0);
    let mut x = 0.0;
    let mut s = format!(
        "<div class=chart><div class=ct>{}</div><svg width='{w}' height='{}' role='img'>",
        esc(title),
        h + 4.0
    );
    for (k, (name, pct)) in parts.iter().enumerate() {
        let pw = (pct.max(0.0) / 100.0 * w).min(w - x);
        if pw > 0.0 {
            s += &format!(
                "<rect x='{x:.1}' y='2' width='{pw:.1}' height='{h}' fill='{}'><title>{}: {pct:.2}%</title></rect>",
                PALETTE[k % PALETTE.len()],
                esc(name)
            );
        }
        x += pw;
    }
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

/// Vertical bars with labels.
fn bars(title: &str, unit: &str, items: &[(String, f64)]) -> String {
    let (bw, gap, h) = (46.0, 14.0, 140.0);
    let max = items.iter().map(|i| i.1).fold(0.0f64, f64::max).max(1e-12);
    let w = (bw + gap) * items.len() as f64 + gap;
    let mut s = format!(
        "<div class=chart><div class=ct>{}</div><svg width='{w:.0}' height='{}' role='img'>",
        esc(title),
        h + 60.0
    );
    for (k, (name, v)) in items.iter().enumerate() {
        let bh = v / max * h;
        let x = gap + k as f64 * (bw + gap);
        s += &format!(
            "<rect x='{x:.1}' y='{:.1}' width='{bw}' height='{bh:.1}' fill='{}'><title>{}: {v:.3} {unit}</title></rect>",
            10.0 + h - bh,
            PALETTE[k % PALETTE.len()],
            esc(name)
        );
        s += &format!(
            "<text x='{:.1}' y='{:.1}' class=v>{}</text>",
            x + bw / 2.0,
            8.0 + h - bh,
            short(*v)
        );
        s += &format!(
            "<text x='{:.1}' y='{:.1}' class=l>{}</text>",
            x + bw / 2.0,
            h + 26.0,
            esc(&name.chars().take(9).collect::<String>())
        );
    }
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
                    &format!("{} — kernel families, % of compute", dev(&c.device)),
                    "%",
                    &fam,
                );
            }
        }
    }
    if !a.bubbles.is_empty() {
        o += "<h2>Bubbles</h2>";
        for b in &a.bubbles {
            let hist: Vec<(String, f64)> = b
                .histogram
                .iter()
                .map(|h| {
                    (
                        format!("≥{}", crate::render::human_ns(h.lo_ns)),
                        h.count as f64,
                    )
                })
                .collect();
            o += &bars(
                &format!(
                    "{} — gaps ≥ {} by length (count)",
                    dev(&b.device),
                    crate::render::human_ns(b.min_gap_ns)
                ),
                "gaps",
                &hist,
            );
            // Timeline strip: the largest gaps inside the device window, coloured by cause.
            let (w, h) = (720.0, 22.0);
            let span = (b.window_end_ns - b.window_start_ns).max(1) as f64;
            let mut s = format!(
                "<div class=chart><div class=ct>{} — largest gaps on the timeline ({} shown of {})</div><svg width='{w}' height='{}' role='img'><rect x='0' y='2' width='{w}' height='{h}' fill='#eef'/>",
                esc(&dev(&b.device)),
                b.largest.len(),
                b.gaps,
                h + 4.0
            );
            // Only the causes this device has, in the rule order, so the legend lists nothing absent.
            // A cause keeps its colour (its rule number) whichever causes are present.
            let colour = |c: &str| {
                let k = crate::analysis::bubbles::Cause::ALL
                    .iter()
                    .position(|x| x.as_str() == c)
                    .unwrap_or(0);
                PALETTE[(k + 3) % PALETTE.len()]
            };
            let causes: Vec<&str> = crate::analysis::bubbles::Cause::ALL
                .iter()
                .map(|c| c.as_str())
                .filter(|c| b.by_cause.contains_key(c))
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
            s += "</svg><div class=lg>";
            for c in &causes {
                s += &format!("<span><i style='background:{}'></i>{c}</span>", colour(c));
            }
            o += &(s + "</div></div>");
        }
    }
    if !a.communication.is_empty() {
        o += "<h2>Communication shares</h2>";
        for c in &a.communication {
            o += &format!(
                "<p class=n><b>{}</b>: communication ({}) = {:.1}% of compute-kernel time ({:.3} ms); {:.1}% of communication overlaps compute</p>",
                esc(&dev(&c.device)),
                c.comm_kernels_source,
                c.comm_kernels.pct,
                c.compute_kernel_ns as f64 / 1e6,
                c.overlapped_pct_of_comm
            );
            o += &bars(
                &format!(
                    "{} — % of all device task time ({:.3} ms)",
                    dev(&c.device),
                    c.device_task_ns as f64 / 1e6
                ),
                "%",
                &[
                    ("notify".into(), c.notify_wait.pct),
                    ("waits".into(), c.event_and_mem_waits.pct),
                    ("copies".into(), c.data_movement.pct),
                ],
            );
        }
    }
    for (k, cohort) in a.cross_rank.cohorts.iter().enumerate() {
        if cohort.ranks.is_empty() {
            continue;
        }
        o += &format!(
            "<h2>Per-rank step breakdown (cohort {}, {} steps from {})</h2>",
            k + 1,
            cohort.steps_compared,
            esc(&cohort.step_source)
        );
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
                used / (1u64 << 20) as f64
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

const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}h3{font-size:15px;margin-top:18px}table{border-collapse:collapse;margin:6px 0;font-size:12px}td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}th{background:#f4f4f4}.chart{margin:10px 0}.ct{font-weight:600;margin-bottom:2px}.lg span{margin-right:14px;font-size:12px}.lg i{display:inline-block;width:10px;height:10px;margin-right:4px}.n{color:#555;font-size:12px;margin:2px 0}svg text.v{font-size:10px;text-anchor:middle}svg text.l{font-size:10px;text-anchor:middle}.meta{color:#555}";

pub fn render(r: &Report, memory: Option<&MemoryReport>) -> String {
    let mut o = format!(
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>profscope report</title><style>{CSS}</style></head><body>"
    );
    o += "<h1>profscope report</h1>";
    o += "<ul>";
    for l in &r.headline {
        o += &format!("<li><b>{}</b></li>", esc(l));
    }
    o += "</ul>";
    o += &format!(
        "<p class=meta>schema {} · {} {} · inputs: {} · {} events in {} files, ranks {:?}</p>",
        r.schema_version,
        r.tool,
        r.tool_version,
        esc(&r.inputs.join(", ")),
        r.summary.events,
        r.summary.files.len(),
        r.summary.ranks
    );
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
