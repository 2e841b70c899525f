//! The report as titled tables of display strings, built once and formatted by both the terminal
//! and the Markdown renderer (so the two never drift apart).

use super::{human_bytes, human_ns};
use crate::report::Report;
use crate::report::contract::{BandwidthRank, LinkType};

pub use super::section::{Section, rel, sec};

/// Kernel families shown per device before one `other` row (JSON lists all).
const FAMILY_ROWS: usize = 10;

/// `1 step`, `2 steps`; `1 family`, `3 families`.
pub fn count_of(n: u64, one: &str) -> String {
    match (n, one.strip_suffix('y')) {
        (1, _) => format!("1 {one}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {one}s"),
    }
}

/// A share of compute-kernel time that can pass 100%: as a share below it, as a multiple above
/// (`11.5× compute-kernel time`, not `1146.84%`).
fn against_compute(p: f64) -> String {
    if p >= 100.0 {
        format!("{:.1}× compute-kernel time", p / 100.0)
    } else {
        format!("{p:.2}% of compute-kernel time")
    }
}

fn pct(p: f64) -> String {
    format!("{p:.2}%")
}

/// A device row's title: rank, device id and process when known; without a rank, the file name
/// too (rows of several unranked files must stay distinguishable).
fn dev(d: &crate::report::contract::DeviceRef) -> String {
    let mut s = d.title();
    if d.rank < 0 {
        let file = d.file.rsplit('/').next().unwrap_or(&d.file);
        s += &format!(" · {file}");
    }
    s
}

pub fn build(r: &Report) -> Vec<Section> {
    let mut out = Vec::new();
    // The answer first (the headline is printed above the sections), the inventory of what was
    // read (files, categories, streams) last.
    out.push(super::verdict::section(r));
    ranks(r, &mut out);
    cross_rank(r, &mut out);
    timeline(r, &mut out);
    super::graph_mode::sections(r, &mut out);
    kernels(r, &mut out);
    audits(r, &mut out);
    summary(r, &mut out);
    let mut d = sec(
        "Diagnostics",
        vec!["code", "severity", "count", "first example"],
    );
    for x in &r.diagnostics {
        d.rows.push(vec![
            x.code.to_string(),
            x.severity.as_str().into(),
            x.count.to_string(),
            x.examples.first().cloned().unwrap_or_default(),
        ]);
    }
    if d.rows.is_empty() {
        d.notes.push("none".into());
    }
    out.push(d);
    out
}

fn ranks(r: &Report, out: &mut Vec<Section>) {
    let k = &r.analyses.ranks;
    if k.rows.is_empty() && k.missing.is_empty() && k.failed.is_empty() {
        return;
    }
    let mut s = sec(
        "Ranks",
        vec![
            "rank",
            "files",
            "size",
            "device events",
            "host events",
            "window duration",
        ],
    );
    for x in &k.rows {
        let window = match (x.window_start_ns, x.window_end_ns) {
            (Some(a), Some(b)) => human_ns(b - a),
            _ => "-".into(),
        };
        s.rows.push(vec![
            x.rank.to_string(),
            x.files.len().to_string(),
            human_bytes(x.size_bytes),
            x.device_events.to_string(),
            x.host_events.to_string(),
            window,
        ]);
    }
    let list = |v: &[i32]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    s.notes.push(format!(
        "expected: {} ({}); missing: {}; CPU-only (no device events): {}; truncated: {}; oversized (>= {}x the median rank's bytes): {}; window overlaps no other rank: {}",
        k.expected.map_or("unknown".into(), |n| n.to_string()),
        k.expected_source,
        list(&k.missing),
        list(&k.cpu_only),
        list(&k.truncated),
        crate::report::contract::OVERSIZED_FACTOR,
        list(&k.oversized),
        list(&k.disjoint)
    ));
    for f in &k.failed {
        s.notes
            .push(format!("not analysed (rank {}): {}", f.rank, f.error));
    }
    if !k.unknown_rank_files.is_empty() {
        s.notes.push(format!(
            "{} file(s) of unknown rank, e.g. {}",
            k.unknown_rank_files.len(),
            k.unknown_rank_files[0]
        ));
    }
    out.push(s);
}

fn cross_rank(r: &Report, out: &mut Vec<Section>) {
    for c in &r.analyses.cross_rank.cohorts {
        if c.ranks.len() < 2 {
            continue;
        }
        let mut s = sec(
            format!("Cross-rank steps ({}; steps: {})", c.format, c.step_source),
            vec![
                "rank",
                "steps",
                "step mean",
                "step max",
                "computing",
                "comm exposed",
                "free",
                "bubbles / step",
                "collective wait / transit",
                "slowest in",
                "last into collective",
            ],
        );
        for x in &c.ranks {
            s.rows.push(vec![
                x.device.rank.to_string(),
                x.steps.to_string(),
                human_ns(x.step_mean_ns.round() as i64),
                human_ns(x.step_max_ns),
                format!("{:.1}%", x.computing_pct),
                format!("{:.1}%", x.communication_not_overlapped_pct),
                format!("{:.1}%", x.free_pct),
                format!("{:.1}", x.bubbles_per_step),
                format!(
                    "{} / {}",
                    human_ns(x.collective_wait_ns),
                    human_ns(x.collective_transit_ns)
                ),
                count_of(x.slowest_in_steps, "step"),
                x.last_to_start_collectives.to_string(),
            ]);
        }
        if let Some(w) = &c.slowest {
            s.notes.push(w.statement.clone());
        }
        if let Some(w) = &c.waited_for {
            s.notes.push(w.statement.clone());
        }
        s.notes.push(format!(
            "{} compared, {} not on every rank, {} with different compute-kernel counts; shares are of the summed step time",
            count_of(c.steps_compared, "step"),
            c.steps_unmatched,
            c.kernel_count_mismatch_steps
        ));
        let k = &c.collectives;
        if k.matched > 0 {
            s.notes.push(format!(
                "collective start skew over {} ops matched on every rank ({} not): mean {}, median {}, max {}{}",
                k.matched,
                k.unmatched,
                human_ns(k.skew_mean_ns.round() as i64),
                human_ns(k.skew_p50_ns.round() as i64),
                human_ns(k.skew_max_ns),
                k.top.first().map_or(String::new(), |t| format!(
                    " ({} #{}: rank {} first, rank {} last)",
                    t.name, t.occurrence, t.first_rank, t.last_rank
                ))
            ));
        }
        out.push(s);
    }
}

fn summary(r: &Report, out: &mut Vec<Section>) {
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

fn vendor_agreement(r: &Report, out: &mut Vec<Section>) {
    let v = &r.analyses.vendor_agreement;
    if v.checks.is_empty() {
        return;
    }
    let mut t = sec(
        "Vendor agreement (ours against the vendor's own numbers in the same input)",
        vec![
            "device",
            "source",
            "step",
            "metric",
            "ours",
            "vendor",
            "diff (% of window)",
            "agrees",
        ],
    );
    for c in &v.checks {
        t.rows.push(vec![
            dev(&c.device),
            c.source
                .split(" of ")
                .next()
                .unwrap_or(&c.source)
                .to_string(),
            c.step.map_or_else(|| "window".into(), |k| k.to_string()),
            c.metric.to_string(),
            human_ns(c.ours_ns),
            human_ns(c.vendor_ns),
            format!("{:+.3}%", c.diff_pct_of_window),
            if c.agrees { "yes" } else { "NO" }.into(),
        ]);
    }
    t.notes.push(v.verdict.clone());
    t.notes.push(format!(
        "a check agrees when |ours − vendor| ≤ {}% of the window compared (the device's, or the step's)",
        v.tolerance_pct_of_window
    ));
    out.push(t);
}

fn timeline(r: &Report, out: &mut Vec<Section>) {
    device_time(r, out);
    vendor_agreement(r, out);
    kernel_types(r, out);
    bubbles(r, out);
    dispatch(r, out);
    communication_ops(r, out);
    step_sync(r, out);
}

/// Per device: window, computing, communication, free, beside the vendor's free time.
fn device_time(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    let mut t = sec(
        "Device time (vendor definitions; shares of the window)",
        vec![
            "device",
            "window",
            "computing",
            "communication",
            "comm not overlapped",
            "free",
            "vendor free (diff)",
        ],
    );
    for d in &a.device_time {
        let vendor = d.vendor.as_ref().map_or("-".into(), |v| {
            format!("{} ({:+.3}%)", human_ns(v.free_ns), v.free_diff_pct)
        });
        t.rows.push(vec![
            dev(&d.device),
            human_ns(d.window_ns),
            format!(
                "{} ({})",
                human_ns(d.computing_ns),
                pct(d.computing_pct_of_window)
            ),
            human_ns(d.communication_ns),
            format!(
                "{} ({})",
                human_ns(d.communication_not_overlapped_ns),
                pct(d.communication_not_overlapped_pct_of_window)
            ),
            format!("{} ({})", human_ns(d.free_ns), pct(d.free_pct_of_window)),
            vendor,
        ]);
    }
    t.notes.push("window = first start to last end of compute ∪ communication; free = window − (compute ∪ communication)".into());
    out.push(t);
}

/// HTA's kernel-type breakdown, whole capture and complete steps only.
fn kernel_types(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    for (title, rows) in [
        (
            "Kernel types, whole capture (HTA definitions; shares of the kernel span)",
            &a.kernel_types,
        ),
        (
            "Kernel types, complete ProfilerSteps only (HTA's default window)",
            &a.kernel_types_complete_steps,
        ),
    ] {
        let mut k = sec(
            title,
            vec![
                "device",
                "span",
                "idle",
                "compute",
                "non-compute",
                "overlap classes (% of busy)",
            ],
        );
        for x in rows {
            k.rows.push(vec![
                dev(&x.device),
                human_ns(x.span_ns),
                pct(x.idle_pct_of_span),
                pct(x.compute_pct_of_span),
                pct(x.non_compute_pct_of_span),
                x.classes
                    .iter()
                    .map(|c| format!("{} {:.1}%", c.class, c.pct_of_busy))
                    .collect::<Vec<_>>()
                    .join("; "),
            ]);
        }
        if !k.rows.is_empty() && !a.device_time.is_empty() {
            k.notes.push("idle here is HTA's: the span minus the union of kernels, and a collective's waits (Notify Wait, EVENT_WAIT) are not kernels, so time spent waiting in a collective is idle; the vendor's free time above counts the whole collective as busy: the two differ mostly by the time spent waiting inside collectives".into());
        }
        if !k.rows.is_empty() {
            out.push(k);
        }
    }
}

/// Per device: the largest gaps with cause, evidence and neighbours; idle by cause; gap sizes.
fn bubbles(r: &Report, out: &mut Vec<Section>) {
    for b in &r.analyses.bubbles {
        let mut s = sec(
            format!(
                "Bubbles: {} (gaps ≥ {})",
                dev(&b.device),
                human_ns(b.min_gap_ns)
            ),
            vec![
                "at", "duration", "cause", "evidence", "launched", "before", "after",
            ],
        );
        let nb = |n: &Option<crate::report::contract::Neighbour>| {
            n.as_ref().map_or("-".into(), |n| {
                if n.stream < 0 {
                    format!("{} (host)", n.name)
                } else {
                    format!("{} (stream {})", n.name, n.stream)
                }
            })
        };
        for g in &b.largest {
            let launched = match (g.launch_lag_ns, &g.launch_op) {
                (Some(l), op) => {
                    let when = if l > 0 {
                        format!("{} after the gap began", human_ns(l))
                    } else {
                        format!("{} before", human_ns(-l))
                    };
                    match op {
                        Some(op) => format!("{when} ({op})"),
                        None => when,
                    }
                }
                (None, _) => "-".into(),
            };
            s.rows.push(vec![
                format!("+{}", human_ns(g.start_ns - b.window_start_ns)),
                human_ns(g.dur_ns),
                g.cause.as_str().into(),
                nb(&g.evidence),
                launched,
                nb(&g.before),
                nb(&g.after),
            ]);
        }
        s.notes.push(format!(
            "idle {} = {} of the {} window, in {} gaps; {} of it has a named cause (unknown {}); by cause: {}",
            human_ns(b.idle_ns),
            pct(b.idle_pct_of_window),
            human_ns(b.window_ns),
            b.gaps,
            pct(b.named_pct_of_idle),
            human_ns(b.unknown_ns),
            b.by_cause
                .iter()
                .map(|(k, v)| format!(
                    "{k} {} ({}, {})",
                    v.count,
                    human_ns(v.total_ns),
                    pct(v.pct_of_idle)
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ));
        s.notes.push(
            "at: from the device's first busy instant; launched: when the host call that launched the next task began (docs/analyses/bubbles.md)"
                .into(),
        );
        let hist: Vec<String> = b
            .histogram
            .iter()
            .filter(|h| h.count > 0)
            .map(|h| {
                format!(
                    "[{}, {}): {}",
                    human_ns(h.lo_ns),
                    if h.hi_ns < 0 {
                        "∞".into()
                    } else {
                        human_ns(h.hi_ns)
                    },
                    h.count
                )
            })
            .collect();
        s.notes.push(format!("gap sizes: {}", hist.join(", ")));
        if !b.steps.is_empty() {
            let worst = b
                .steps
                .iter()
                .max_by(|x, y| x.idle_pct_of_step.total_cmp(&y.idle_pct_of_step));
            s.notes.push(format!(
                "inside {} decode steps: {} idle (between steps: {}); worst step {}",
                b.steps.len(),
                human_ns(b.idle_within_steps_ns),
                human_ns(b.idle_ns - b.idle_within_steps_ns),
                worst.map_or("-".into(), |w| format!(
                    "#{} at {} ns ({} idle)",
                    w.step,
                    w.start_ns,
                    pct(w.idle_pct_of_step)
                ))
            ));
        }
        out.push(s);
    }
}

/// update_step_context sync per decode step, and MTP bursts.
fn step_sync(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    let mut u = sec(
        "update_step_context sync (NOTIFY_WAIT vs graph replay, per decode step)",
        vec![
            "device",
            "steps",
            "Σ NOTIFY_WAIT",
            "Σ replay",
            "overall",
            "median",
            "max",
            "excellent / acceptable / attention",
            "verdict",
            "host update_step_context",
        ],
    );
    for s in &a.step_sync {
        u.rows.push(vec![
            dev(&s.device),
            s.steps.len().to_string(),
            human_ns(s.notify_wait_total_ns),
            human_ns(s.replay_total_ns),
            pct(s.overall_ratio_pct),
            s.median_ratio_pct.map_or("-".into(), pct),
            s.max_ratio_pct.map_or("-".into(), pct),
            format!(
                "{} / {} / {}",
                s.excellent_steps, s.acceptable_steps, s.needs_attention_steps
            ),
            s.verdict.to_string(),
            s.host_pct_of_replay.map_or("-".into(), |p| {
                format!(
                    "{} of replay ({})",
                    pct(p),
                    s.host_verdict.map_or("", |v| v.as_str())
                )
            }),
        ]);
    }
    for m in &a.mtp {
        let heads: Vec<String> = m
            .heads
            .iter()
            .map(|h| {
                format!(
                    "head {}: {} steps, mean burst {}, NOTIFY_WAIT {} of burst",
                    h.head,
                    h.steps,
                    human_ns(h.burst_mean_ns as i64),
                    pct(h.notify_pct_of_burst)
                )
            })
            .collect();
        u.notes.push(format!(
            "MTP {}: {} MEM_WAIT_VALUE ({}); heads per step {:?}; {}",
            dev(&m.device),
            m.mem_waits,
            human_ns(m.mem_wait_total_ns),
            m.heads_per_step,
            heads.join("; ")
        ));
    }
    u.notes.push("bands: < 5% excellent, 5-25% acceptable, > 25% needs attention (host: > 5% needs attention)".into());
    if !u.rows.is_empty() {
        out.push(u);
    }
}

/// Per device: the slowest collective ops with their time split, the totals per link type; then
/// the slowest off-chip links of the run and the slow-rank verdict.
fn communication_ops(r: &Report, out: &mut Vec<Section>) {
    let c = &r.analyses.communication_ops;
    for d in &c.devices {
        let mut s = collective_ops(d);
        if let Some(src) = &d.source {
            s.notes.push(format!(
                "from the vendor's {src} (a CSV-only export has no HCCL plane tasks to recompute them from)"
            ));
        }
        out.push(s);
    }
    out.extend(slowest_links(c));
}

/// One device's slowest collective ops with their time split, and its totals per link type.
fn collective_ops(d: &crate::report::contract::DeviceCommOps) -> Section {
    let mut s = sec(
        format!("Collective ops: {}", dev(&d.device)),
        vec![
            "op",
            "step",
            "elapsed",
            "transit",
            "wait (before first transit)",
            "idle",
            "wait ratio",
            "main link",
        ],
    );
    if d.ops_without_tasks == d.ops_total {
        s.notes.push(format!(
            "{} collective ops, none with HCCL plane task details (Level0 captures write placeholders): transit / wait / idle unknown",
            d.ops_total
        ));
        return s;
    }
    for o in d.slowest.iter().filter(|o| o.times.is_some()) {
        let Some(x) = o.times else { continue };
        let link = o
            .bandwidth
            .iter()
            .filter(|b| b.link != LinkType::Sdma && b.time_ns > 0)
            .max_by_key(|b| b.size_bytes)
            .map_or("-".into(), |b| {
                format!("{} {:.2} GB/s", b.link, b.bandwidth_gb_s)
            });
        s.rows.push(vec![
            o.name.clone(),
            o.step.map_or("-".into(), |n| n.to_string()),
            human_ns(x.elapsed_ns),
            human_ns(x.transit_ns),
            format!(
                "{} ({})",
                human_ns(x.wait_ns),
                human_ns(x.synchronization_ns)
            ),
            human_ns(x.idle_ns),
            o.wait_ratio.map_or("-".into(), |r| format!("{r:.4}")),
            link,
        ]);
    }
    let t = &d.total;
    let x = &t.times;
    s.notes.push(format!(
        "{} of {} ops ({} slowest listed): elapsed {}, transit {}, wait {} (of it before the first transit {}), idle {}; wait ratio {:.4} = wait / (wait + transit)",
        t.ops,
        d.ops_total,
        s.rows.len(),
        human_ns(x.elapsed_ns),
        human_ns(x.transit_ns),
        human_ns(x.wait_ns),
        human_ns(x.synchronization_ns),
        human_ns(x.idle_ns),
        t.wait_ratio
    ));
    let links: Vec<String> = t
        .bandwidth
        .iter()
        .filter(|b| b.time_ns > 0)
        .map(|b| {
            format!(
                "{} {} in {} = {:.2} GB/s ({:.0}% large packets)",
                b.link,
                human_bytes(b.size_bytes.max(0) as u64),
                human_ns(b.time_ns),
                b.bandwidth_gb_s,
                b.large_packet_ratio * 100.0
            )
        })
        .collect();
    if !links.is_empty() {
        s.notes.push(format!("per link type: {}", links.join("; ")));
    }
    if d.ops_without_tasks > 0 {
        s.notes.push(format!(
            "{} ops without plane task details are left out of the totals",
            d.ops_without_tasks
        ));
    }
    if d.ops_with_rdma > 0 {
        s.notes.push(format!(
            "{} ops move data over RDMA: their send groups are read by CANN's five-task rule, not yet checked against a real RDMA capture",
            d.ops_with_rdma
        ));
    }
    s
}

/// The slowest off-chip links of the run and the slow-rank verdict.
fn slowest_links(c: &crate::report::contract::CommunicationOps) -> Option<Section> {
    let mut links: Vec<(i32, &crate::report::contract::MatrixCell)> = c
        .devices
        .iter()
        .flat_map(|d| {
            d.matrix
                .iter()
                .filter(|m| m.rank_by_bandwidth == BandwidthRank::Total && m.transport != "LOCAL")
                .map(move |m| (d.device.rank, m))
        })
        .collect();
    if links.is_empty() {
        return None;
    }
    links.sort_by(|a, b| a.1.bandwidth_gb_s.total_cmp(&b.1.bandwidth_gb_s));
    let n = links.len();
    let mut l = sec(
        "Slowest links (src rank → dst rank, all ops of a type)",
        vec!["link", "op type", "transport", "bytes", "time", "bandwidth"],
    );
    for (_, m) in links.iter().take(10) {
        l.rows.push(vec![
            format!("{} → {}", m.src_rank, m.dst_rank),
            m.op_type.clone(),
            m.transport.clone(),
            human_bytes(m.size_bytes.max(0) as u64),
            human_ns(m.time_ns),
            format!("{:.2} GB/s", m.bandwidth_gb_s),
        ]);
    }
    if n > l.rows.len() {
        l.notes.push(format!(
            "{} of {n} off-chip links listed, slowest first",
            l.rows.len()
        ));
    }
    if let Some(m) = c.summary.median_link_gb_s {
        l.notes.push(format!(
            "median bandwidth of the slowest link's transport: {m:.2} GB/s"
        ));
    }
    let ratios: Vec<String> = c
        .summary
        .wait_ratios
        .iter()
        .map(|(k, v)| format!("rank {k} {v:.4}"))
        .collect();
    if !ratios.is_empty() {
        l.notes.push(match c.summary.slow_rank {
            Some(k) => format!(
                "slow rank: {k}; it waited least in its collectives, so the others waited for it (wait ratios: {})",
                ratios.join(", ")
            ),
            None => format!(
                "no slow rank: wait ratios within {} of each other, or fewer than {} collectives on a rank ({})",
                crate::report::contract::SLOW_RANK_MARGIN,
                crate::report::contract::SLOW_RANK_MIN_OPS,
                ratios.join(", ")
            ),
        });
    }
    Some(l)
}

/// Per device: the launch chain's figures, the slowest launches into an empty queue, and the
/// host API calls by total time.
fn dispatch(r: &Report, out: &mut Vec<Section>) {
    use crate::report::contract::Link;
    for d in &r.analyses.dispatch {
        let mut s = sec(
            format!("Dispatch: {}", dev(&d.device)),
            vec![
                "launch call",
                "op above it",
                "first task",
                "stream",
                "latency",
                "tasks",
            ],
        );
        for x in &d.slowest_empty_queue {
            s.rows.push(vec![
                x.call.clone(),
                x.op.clone().unwrap_or_else(|| "-".into()),
                x.task.clone(),
                x.stream.to_string(),
                human_ns(x.latency_ns),
                x.tasks.to_string(),
            ]);
        }
        if d.linked_tasks == 0 {
            s.notes.push(format!(
                "no launch links: none of the {} device tasks carries a connection id or correlation that a host call shares",
                d.tasks
            ));
            out.push(s);
            continue;
        }
        let link = match d.link {
            Link::ConnectionId => "CANN call by connection_id",
            Link::Correlation => "runtime call by correlation",
            Link::Flow => {
                "framework op by torch_to_npu flow (no CANN calls in the file; latency from the op's start)"
            }
        };
        let l = &d.latency;
        s.notes.push(format!(
            "{} of {} tasks linked to their launcher ({link}); {} launch calls: latency p50 {}, p90 {}, p99 {}, max {}{}",
            d.linked_tasks,
            d.tasks,
            l.count,
            human_ns(l.p50_ns as i64),
            human_ns(l.p90_ns as i64),
            human_ns(l.p99_ns as i64),
            human_ns(l.max_ns),
            if l.negative > 0 {
                format!(" ({} calls start after their first task: clock offset)", l.negative)
            } else {
                String::new()
            }
        ));
        let q = &d.queue_depth;
        s.notes.push(format!(
            "queue depth at launch: p50 {:.0}, p90 {:.0}, max {} tasks; {} calls found the queue empty (listed above: the slowest of them)",
            q.p50, q.p90, q.max, q.empty_queue
        ));
        let h = &d.host_bound;
        s.notes.push(format!(
            "host-bound idle: {} of {} gaps, {} = {} of idle {}, began while the host had not yet launched the next task",
            h.host_bound_gaps,
            h.gaps,
            human_ns(h.host_bound_ns),
            pct(h.pct_of_idle),
            human_ns(h.idle_ns)
        ));
        out.push(s);
        let mut a = sec(
            format!("Host API calls: {}", dev(&d.device)),
            vec![
                "API",
                "calls",
                "total",
                "mean",
                "max",
                "share of host API time",
            ],
        );
        for x in &d.host_apis {
            a.rows.push(vec![
                x.name.clone(),
                x.count.to_string(),
                human_ns(x.sum_ns),
                human_ns(x.mean_ns as i64),
                human_ns(x.max_ns),
                pct(x.pct_of_total),
            ]);
        }
        let (names, calls, ns) = d.host_apis_other;
        if names > 0 {
            a.rows.push(vec![
                format!("other ({names} APIs)"),
                calls.to_string(),
                human_ns(ns),
                "-".into(),
                "-".into(),
                pct(crate::report::contract::percent_of(ns, d.host_api_total_ns)),
            ]);
        }
        if !a.rows.is_empty() {
            a.notes.push(format!(
                "denominator: all host API calls of the file, {}",
                human_ns(d.host_api_total_ns)
            ));
            out.push(a);
        }
    }
}

fn kernels(r: &Report, out: &mut Vec<Section>) {
    top_events(r, out);
    op_types(r, out);
    composition(r, out);
    communication(r, out);
}

/// Per device and subset: the events with the most total time.
fn top_events(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    for t in &a.top_events {
        let title = format!(
            "Top {} events by total time: {}",
            t.subset.as_str().replace('_', " "),
            dev(&t.device)
        );
        let mut s = sec(
            title,
            vec!["name", "count", "sum", "% of subset", "mean", "p50", "max"],
        );
        for x in &t.by_sum {
            s.rows.push(vec![
                x.name.clone(),
                x.count.to_string(),
                human_ns(x.sum_ns),
                pct(x.pct_of_total),
                human_ns(x.mean_ns as i64),
                human_ns(x.p50_ns as i64),
                human_ns(x.max_ns),
            ]);
        }
        s.notes.push(format!(
            "subset: {} events, {} (denominator of %)",
            t.subset_events,
            human_ns(t.subset_sum_ns)
        ));
        if !s.rows.is_empty() {
            out.push(s);
        }
    }
}

/// Per device: compute time per op type (inputs with kernel details).
fn op_types(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    for o in &a.op_types {
        let mut s = sec(
            format!("Compute time per op type: {}", dev(&o.device)),
            vec![
                "op type",
                "task type",
                "count",
                "sum",
                "% of tasks",
                "mean",
                "max",
            ],
        );
        for x in o.rows.iter().take(15) {
            s.rows.push(vec![
                x.op_type.clone(),
                x.task_type.clone(),
                x.stats.count.to_string(),
                human_ns(x.stats.sum_ns),
                pct(x.stats.pct_of_total),
                human_ns(x.stats.mean_ns as i64),
                human_ns(x.stats.max_ns),
            ]);
        }
        s.notes.push(format!(
            "{} tasks with kernel details, {} (denominator of %); {} op/task types, top {} shown",
            o.tasks,
            human_ns(o.sum_ns),
            o.rows.len(),
            s.rows.len()
        ));
        out.push(s);
    }
}

/// Per device: compute time per stream and per kernel family.
fn composition(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    for c in &a.composition {
        let mut s = sec(
            format!("Compute-stream composition: {}", dev(&c.device)),
            vec!["stream / family", "kernels", "compute time", "% of compute"],
        );
        for x in &c.streams {
            s.rows.push(vec![
                format!("stream {}", x.stream),
                x.kernels.to_string(),
                human_ns(x.compute_ns),
                pct(x.pct_of_compute),
            ]);
        }
        for x in c.families.iter().take(FAMILY_ROWS) {
            s.rows.push(vec![
                format!("family {}", x.name),
                x.count.to_string(),
                human_ns(x.sum_ns),
                pct(x.pct_of_compute),
            ]);
        }
        let rest = c.families.get(FAMILY_ROWS..).unwrap_or_default();
        if !rest.is_empty() {
            s.rows.push(vec![
                format!("other ({})", count_of(rest.len() as u64, "family")),
                rest.iter().map(|x| x.count).sum::<u64>().to_string(),
                human_ns(rest.iter().map(|x| x.sum_ns).sum()),
                pct(rest.iter().map(|x| x.pct_of_compute).sum()),
            ]);
        }
        s.notes.push(format!(
            "denominator: {} of compute kernels ({} kernels); busiest stream {}",
            human_ns(c.compute_ns),
            c.compute_kernels,
            c.busiest_stream.map_or("-".into(), |s| s.to_string())
        ));
        out.push(s);
    }
}

/// Communication shares, each with its denominator.
fn communication(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    let mut m = sec(
        "Communication (two denominators)",
        vec![
            "device",
            "(a) comm kernels",
            "(a) against compute kernels",
            "(b) EVENT/MEM waits",
            "(b) NOTIFY_WAIT",
            "(b) data movement",
            "comm overlapped with compute",
        ],
    );
    for c in &a.communication {
        m.rows.push(vec![
            dev(&c.device),
            format!(
                "{} × {} (max {}; {})",
                c.comm_kernels.count,
                human_ns(c.comm_kernels.sum_ns),
                human_ns(c.comm_kernels.max_ns),
                c.comm_kernels_source
            ),
            against_compute(c.comm_kernels.pct),
            format!(
                "{} ({})",
                human_ns(c.event_and_mem_waits.sum_ns),
                pct(c.event_and_mem_waits.pct)
            ),
            format!(
                "{} ({})",
                human_ns(c.notify_wait.sum_ns),
                pct(c.notify_wait.pct)
            ),
            format!(
                "{} ({})",
                human_ns(c.data_movement.sum_ns),
                pct(c.data_movement.pct)
            ),
            format!(
                "{} ({} of comm)",
                human_ns(c.overlapped_with_compute_ns),
                pct(c.overlapped_pct_of_comm)
            ),
        ]);
    }
    m.notes.push("(a) denominator: sum of compute-kernel durations; (b) denominator: sum of all device-task durations; host Dequeue@Hccl* rows never count".into());
    if !m.rows.is_empty() {
        out.push(m);
    }
}

fn audits(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    let mut p = sec(
        "Phase validation",
        vec![
            "file",
            "rank",
            "forward_eager",
            "forward_cudagraph",
            "prefill valid",
            "decode valid",
            "statement",
        ],
    );
    for x in &a.phases {
        p.rows.push(vec![
            rel(r, &x.file).to_string(),
            x.rank.to_string(),
            x.prefill.count.to_string(),
            x.decode.count.to_string(),
            x.prefill_valid.to_string(),
            x.decode_valid.to_string(),
            x.statement.clone(),
        ]);
    }
    let markers = a
        .phases
        .iter()
        .any(|x| x.prefill.count > 0 || x.decode.count > 0);
    if !a.phases.is_empty() && !markers {
        out.push(sec(
            format!(
                "Phase validation: no vLLM phase markers (forward_eager / forward_cudagraph) in {}: phase validation and decode audit do not apply",
                count_of(a.phases.len() as u64, "file")
            ),
            Vec::new(),
        ));
        let replays = a
            .batch_audit
            .as_ref()
            .is_some_and(|b| b.ranks.iter().any(|x| x.replays > 0));
        if !replays {
            return;
        }
    }
    if !p.rows.is_empty() {
        out.push(p);
    }
    let Some(b) = &a.batch_audit else { return };
    let mut s = sec(
        "Fixed real-batch decode audit",
        vec![
            "file",
            "rank",
            "replays",
            "qualified",
            "bare / one marker / not 1:1 / other B",
            "KV min range",
            "KV max range",
            "KV mean range",
        ],
    );
    let rg = |r: &Option<crate::report::contract::Range>| {
        r.as_ref()
            .map_or("-".into(), |r| format!("{}..{}", r.lo, r.hi))
    };
    for x in &b.ranks {
        s.rows.push(vec![
            rel(r, &x.file).to_string(),
            x.rank.to_string(),
            x.replays.to_string(),
            x.qualified.to_string(),
            format!(
                "{} / {} / {} / {}",
                x.bare, x.one_marker, x.not_one_to_one, x.other_batch
            ),
            rg(&x.kv_min_range),
            rg(&x.kv_max_range),
            rg(&x.kv_mean_range),
        ]);
    }
    s.notes.push(format!(
        "batch {}; proven {}; ranks agree {}: {}",
        b.batch.map_or("not determined".into(), |x| x.to_string()),
        b.fixed_batch_proven,
        b.ranks_agree,
        b.statement
    ));
    out.push(s);
}
