//! The headline: the answer in a few lines, first in every format. Built from the report's
//! results only (pure): the verdict's status when it is not confident and why (report::verdict);
//! window and steps; computing / exposed communication / free shares with the bound verdict and
//! the rule that decided it (idle-bound becomes host-bound when most idle waited for late
//! launches); the slowest rank by device time and the rank the others wait for (by arrival, and
//! by the wait ratio of the collectives); the top bubble cause; graph replays' share of device
//! time and the gap between them; the vendor self-audit; which capture was read when a folder
//! held several; how many warnings. A withheld verdict drops the bound, bubble-cause, graph and
//! rank lines; a withheld cross-rank part drops the rank line.

use super::verdict::bound;
use crate::analysis::evidence::{Status, Verdict};
use crate::diag::{Diagnostic, Severity};
use crate::registry::Analyses;

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

/// The headline lines of a run.
pub fn build(
    a: &Analyses,
    v: &Verdict,
    diagnostics: &[Diagnostic],
    other_captures: &[(String, String)],
) -> Vec<String> {
    let mut out = Vec::new();
    let withheld = v.status == Status::Withheld;
    if v.status != Status::Confident {
        out.push(v.statement.clone());
    }
    if a.device_time.is_empty() {
        // Said only when no device analysis found a device (not when `--only` skipped device_time).
        if !withheld
            && a.bubbles.is_empty()
            && a.dispatch.is_empty()
            && a.kernel_types.is_empty()
            && a.communication_ops.devices.is_empty()
        {
            out.push("no device timeline in the input: device time, bubbles and cross-rank comparisons do not apply".into());
        }
    } else {
        out.push(window_and_steps(a));
        if !withheld {
            out.extend(verdict(a));
        }
    }
    out.extend(job(a));
    if v.cross_rank_status != Status::Withheld {
        out.extend(who_is_slow(a));
        out.extend(within_roles(a));
        out.extend(a.layout.pipeline.as_ref().map(|p| p.statement.clone()));
        out.extend(experts(a));
    }
    if !withheld {
        out.extend(top_bubble_cause(a));
        out.extend(idle_story(a));
        out.extend(graph_mode(a));
        out.extend(super::headline_efficiency::line(a));
        out.extend(top_advice(a));
    }
    out.push(a.vendor_agreement.verdict.clone());
    out.extend(capture_read(other_captures));
    out.push(warnings(diagnostics));
    out
}

/// `2 device(s) on 2 rank(s); summed device window …; 1 step (ProfilerStep)`.
fn window_and_steps(a: &Analyses) -> String {
    let dt = &a.device_time;
    let mut ranks: Vec<i32> = dt
        .iter()
        .map(|d| d.device.rank)
        .filter(|&r| r >= 0)
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    let steps = a
        .cross_rank
        .cohorts
        .iter()
        .map(|c| {
            let n = c.ranks.iter().map(|r| r.steps).max().unwrap_or(0);
            if n == 0 {
                "no steps".to_string()
            } else {
                format!(
                    "{n} step{} ({})",
                    if n == 1 { "" } else { "s" },
                    c.step_source
                )
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    let window: i64 = dt.iter().map(|d| d.window_ns).sum();
    let summary = a.ranks.summary_only.len();
    format!(
        "{} device(s) on {} rank(s){}; summed device window {}; {}",
        dt.len(),
        ranks.len(),
        if summary > 0 {
            format!(" (and {summary} rank(s) with vendor summaries only)")
        } else {
            String::new()
        },
        ms(window),
        if steps.is_empty() {
            "no steps".into()
        } else {
            steps
        }
    )
}

/// The bound verdict with its shares and the rule that decided it.
fn verdict(a: &Analyses) -> Option<String> {
    let b = bound(a)?;
    Some(format!(
        "{}: computing {:.1}%, exposed communication {:.1}%, free {:.1}% of the summed device windows{}",
        b.kind,
        b.computing_pct,
        b.exposed_communication_pct,
        b.free_pct,
        b.host_bound_pct
            .map(|p| format!("; {p:.1}% of idle host-bound"))
            .unwrap_or_default()
    ))
}

/// The slowest rank by device time, by arrival, and by collective wait: one line each.
fn who_is_slow(a: &Analyses) -> Vec<String> {
    let mut who = Vec::new();
    for c in &a.cross_rank.cohorts {
        // Ranks of different work and no layout to say which are peers: said, not compared.
        if !c.not_compared.is_empty() && a.layout.peer_sets.is_empty() {
            who.push(c.not_compared.clone());
        }
        if let Some(s) = &c.slowest {
            who.push(s.statement.clone());
        }
        if let Some(w) = &c.waited_for {
            who.push(w.statement.clone());
        }
    }
    let c = &a.communication_ops.summary;
    if let Some(k) = c.slow_rank {
        let others: Vec<String> = c
            .wait_ratios
            .iter()
            .filter(|x| x.0 != k)
            .map(|x| format!("{:.2}", x.1))
            .collect();
        let own = c.wait_ratios.iter().find(|x| x.0 == k).map_or(0.0, |x| x.1);
        who.push(format!(
            "by collective wait, rank {k} is the one the others wait for (wait ratio {own:.2} vs {})",
            others.join(", ")
        ));
    }
    who
}

/// The job's layout and the ranks it holds, when a file states it, it could be inferred, or
/// some ranks are summaries only.
fn job(a: &Analyses) -> Option<String> {
    let l = &a.layout;
    let shown =
        l.source != crate::contract::LayoutSource::None || l.ranks.iter().any(|r| r.summary_only);
    (shown && !l.statement.is_empty()).then(|| l.statement.clone())
}

/// The comparisons within peer sets: the claims that stand out (the two most certain), else
/// one line saying none does.
fn within_roles(a: &Analyses) -> Vec<String> {
    let c = &a.layout.comparisons;
    // One peer set that cross_rank compared whole: its lines say it already.
    let whole = a.layout.peer_sets.len() <= 1
        && a.cross_rank
            .cohorts
            .iter()
            .all(|k| k.not_compared.is_empty());
    if c.is_empty() || whole {
        return Vec::new();
    }
    let p = |x: &crate::contract::PeerComparison| {
        let s = x
            .slowest
            .as_ref()
            .filter(|s| s.stands_out)
            .map_or(1.0, |s| s.p_value);
        let w = x
            .waited_for
            .as_ref()
            .filter(|w| w.stands_out)
            .map_or(1.0, |w| w.p_value);
        s.min(w)
    };
    let mut out: Vec<&crate::contract::PeerComparison> =
        c.iter().filter(|x| x.stands_out).collect();
    // Own causes first (a slow member), then lateness its pipeline sends and receives explain.
    out.sort_by(|x, y| {
        (!x.explanation.is_empty())
            .cmp(&!y.explanation.is_empty())
            .then(p(x).total_cmp(&p(y)))
    });
    if out.is_empty() {
        let sets = c.iter().filter(|x| x.role == "dp_replicas").count();
        return vec![format!(
            "no rank stands out within its peer set ({} comparison(s): {sets} sets of data-parallel replicas, {} TP groups)",
            c.len(),
            c.len() - sets
        )];
    }
    let mut lines: Vec<String> = out.iter().take(2).map(|x| peer_line(x)).collect();
    if out.len() > 2 {
        let explained = out[2..]
            .iter()
            .filter(|x| !x.explanation.is_empty())
            .count();
        lines.push(format!(
            "{} more peer set(s) with a rank standing out ({explained} of them late because of their pipeline sends / receives): analyses.layout.comparisons",

            out.len() - 2
        ));
    }
    lines
}

/// One peer comparison's claim: where (stage, members), what stands out, and why when its
/// pipeline sends and receives explain it.
fn peer_line(x: &crate::contract::PeerComparison) -> String {
    let head = format!(
        "within {} (stage {}, {})",
        if x.role == "tp_group" {
            "a TP group"
        } else {
            "the replicas of a stage"
        },
        x.stage.map_or("?".into(), |s| s.to_string()),
        ranks_short(&x.ranks)
    );
    let claim = x
        .slowest
        .as_ref()
        .filter(|s| s.stands_out)
        .map(|s| s.statement.clone())
        .or_else(|| x.waited_for.as_ref().map(|w| w.statement.clone()))
        .unwrap_or_default();
    if x.explanation.is_empty() {
        format!("{head}: {claim}")
    } else {
        format!("{head}: {claim}; {}", x.explanation)
    }
}

/// `ranks 0, 1` for a few, `128 ranks (0-127)` for a run, else the first eight and a count.
fn ranks_short(v: &[i32]) -> String {
    let mut v = v.to_vec();
    v.sort_unstable();
    if v.len() <= 8 {
        let list: Vec<String> = v.iter().map(|r| r.to_string()).collect();
        return format!("ranks {}", list.join(", "));
    }
    let (first, last) = (v[0], v[v.len() - 1]);
    if (last - first) as usize + 1 == v.len() {
        return format!("{} ranks ({first}-{last})", v.len());
    }
    let head: Vec<String> = v.iter().take(8).map(|r| r.to_string()).collect();
    format!("{} ranks ({}, …)", v.len(), head.join(", "))
}

/// The expert-parallel group with the most time at stake, when one is imbalanced.
fn experts(a: &Analyses) -> Option<String> {
    let g = a.layout.experts.iter().find(|g| g.imbalanced)?;
    Some(g.statement.clone())
}

/// The idle time, its gaps, and the cause with the most idle.
fn top_bubble_cause(a: &Analyses) -> Option<String> {
    let (mut idle, mut gaps) = (0i64, 0u64);
    let mut causes: std::collections::BTreeMap<&str, i64> = Default::default();
    for b in &a.bubbles {
        idle += b.idle_ns;
        gaps += b.gaps;
        for (c, t) in &b.by_cause {
            *causes.entry(c).or_default() += t.total_ns;
        }
    }
    let (cause, ns) = causes
        .iter()
        .max_by_key(|(c, n)| (**n, std::cmp::Reverse(**c)))?;
    Some(format!(
        "idle {} in {gaps} gaps; top cause {cause}: {} ({:.1}% of idle)",
        ms(idle),
        ms(*ns),
        *ns as f64 * 100.0 / idle.max(1) as f64
    ))
}

/// One gap holding most of a device's window, with what spanned it; the capture edges when they
/// are a large part of the capture (the device had no work while the host ran).
fn idle_story(a: &Analyses) -> Vec<String> {
    use crate::contract::{CAPTURE_EDGE_HEADLINE_PCT, DOMINANT_GAP_PCT};
    let mut out = Vec::new();
    let share = |g: &crate::contract::Gap, w: i64| g.dur_ns as f64 * 100.0 / w.max(1) as f64;
    let dominant = a
        .bubbles
        .iter()
        .filter_map(|b| Some((b, b.largest.first()?)))
        .map(|(b, g)| (b, g, share(g, b.window_ns)))
        .filter(|x| x.2 >= DOMINANT_GAP_PCT)
        .max_by(|x, y| x.2.total_cmp(&y.2));
    if let Some((b, g, p)) = dominant {
        out.push(format!(
            "one {} gap is {p:.1}% of the device window of {}: {}",
            ms(g.dur_ns),
            b.device.short(),
            g.explain()
        ));
    }
    // (before the first task, after the last), summed over devices.
    let (before, after) = a
        .bubbles
        .iter()
        .flat_map(|b| b.capture_edges.iter().map(move |g| (b, g)))
        .fold((0, 0), |(x, y), (b, g)| {
            if g.end_ns <= b.window_start_ns {
                (x + g.dur_ns, y)
            } else {
                (x, y + g.dur_ns)
            }
        });
    let edges: i64 = a.bubbles.iter().map(|b| b.capture_edge_ns).sum();
    let window: i64 = a.bubbles.iter().map(|b| b.window_ns).sum();
    let p = edges as f64 * 100.0 / (edges + window).max(1) as f64;
    if edges > 0 && p >= CAPTURE_EDGE_HEADLINE_PCT {
        out.push(format!(
            "capture edges: no device work for {} before the first task and {} after the last while the host ran ({p:.1}% of the capture; not idle)",
            ms(before),
            ms(after)
        ));
    }
    out
}

/// Graph replays' share of device time and the host gap between them (the file with the
/// largest median gap), when any file replayed graphs.
fn graph_mode(a: &Analyses) -> Option<String> {
    let files: Vec<_> = a
        .graph_mode
        .files
        .iter()
        .filter(|f| f.replays > 0)
        .collect();
    let replays: u64 = files.iter().map(|f| f.replays).sum();
    if replays == 0 {
        return None;
    }
    let graph: i64 = files.iter().map(|f| f.replay_device_ns).sum();
    let all: i64 = graph + files.iter().map(|f| f.eager_device_ns).sum::<i64>();
    let mut line = format!(
        "graph mode: {:.1}% of device time in {replays} graph replays",
        graph as f64 * 100.0 / all.max(1) as f64
    );
    let gap = files
        .iter()
        .filter_map(|f| {
            let s = f.replay_stats.iter().find(|s| s.name == "gap_to_next")?;
            Some((s.p50_ns, f.rank))
        })
        .max_by(|x, y| x.0.total_cmp(&y.0));
    if let Some((p50, rank)) = gap {
        line.push_str(&format!(
            "; from a replay's end to the next one's start p50 {} (rank {rank})",
            crate::units::human_duration(p50)
        ));
    }
    // Where the ops inside the replays came from, when any replayed event was tied to one.
    let matched: i64 = files.iter().map(|f| f.ops_in_graphs.matched_ns).sum();
    if matched > 0 {
        let mut from: Vec<&str> = files
            .iter()
            .filter(|f| f.ops_in_graphs.matched_ns > 0)
            .map(|f| f.ops_in_graphs.source.as_str())
            .collect();
        from.sort_unstable();
        from.dedup();
        let companions: usize = files.iter().map(|f| f.companions.len()).sum();
        line.push_str(&format!(
            "; ops named for {:.1}% of replay time (from {}{})",
            matched as f64 * 100.0 / graph.max(1) as f64,
            from.join(", ").replace('_', " "),
            if companions > 0 {
                format!(", {companions} companion file(s)")
            } else {
                String::new()
            }
        ));
    }
    Some(line)
}

/// Which capture was read when a folder held several of the same ranks: `other` holds (root
/// left out, root read instead), sorted; the first few roots are named.
/// The advisor's top finding with time at stake (docs/advisor.md), when it has one.
fn top_advice(a: &Analyses) -> Option<String> {
    let f = a.advisor.findings.first()?;
    (f.time_at_stake_ns > 0).then(|| {
        format!(
            "top advice: {}, {} at stake ({}); {} finding(s) in the Advisor section",
            f.rule,
            ms(f.time_at_stake_ns),
            f.severity,
            a.advisor.findings.len()
        )
    })
}

fn capture_read(other: &[(String, String)]) -> Option<String> {
    let (_, instead) = other.first()?;
    let roots: Vec<&str> = other
        .iter()
        .take(crate::diag::MAX_EXAMPLES)
        .map(|(root, _)| root.as_str())
        .collect();
    let n = other.len();
    Some(format!(
        "read one capture, the newest: {instead}; {n} other capture{} of the same ranks not read: {}{} (pass one as the path to analyse it)",
        if n == 1 { "" } else { "s" },
        roots.join(", "),
        if n > roots.len() { ", …" } else { "" }
    ))
}

/// How many warnings and which codes.
fn warnings(diagnostics: &[Diagnostic]) -> String {
    let warnings: u64 = diagnostics
        .iter()
        .filter(|d| d.severity >= Severity::Warning)
        .map(|d| d.count)
        .sum();
    let codes: Vec<&str> = diagnostics
        .iter()
        .filter(|d| d.severity >= Severity::Warning)
        .map(|d| d.code)
        .collect();
    if warnings == 0 {
        "no warnings (diagnostics: info only)".into()
    } else {
        format!(
            "{warnings} warning(s) or data-loss diagnostic(s): {} (see Diagnostics)",
            codes.join(", ")
        )
    }
}
