//! The run's verdict: the bound verdict (compute-, communication-, idle-, host-bound or mixed)
//! with a status (`confident`, `qualified`, `withheld`) and the reasons for it, from the coverage
//! signals of `analysis::evidence`, the vendor self-audit and the rank anomalies. Pure: reads the
//! analyses only. The thresholds are `analysis::evidence`'s; docs/evidence.md explains each.

use crate::analysis::bubbles::DeviceBubbles;
use crate::analysis::device_time::DeviceTime;
use crate::analysis::evidence::{
    self as ev, Coverage, FileEvidence, Reason, ReasonCode, Scope, Status, Verdict,
};
use crate::analysis::vendor_agreement::TimeMetric;
use crate::diag::{Diagnostics, Severity};
use crate::registry::Analyses;

/// A share is the verdict only when it is the largest of the three and at least this many
/// percent of the summed device windows; else the run is `mixed`.
pub const BOUND_MIN_PCT: f64 = 50.0;

/// At most this many evidence entries per reason.
const MAX_EVIDENCE: usize = 5;

/// The bound verdict's shares, percent of the summed device windows.
pub struct Bound {
    pub kind: &'static str,
    pub computing_pct: f64,
    pub exposed_communication_pct: f64,
    pub free_pct: f64,
    /// Percent of idle that waited for a late launch, when some launch is linked.
    pub host_bound_pct: Option<f64>,
}

/// The bound verdict of the device_time rows; None without any.
pub fn bound(a: &Analyses) -> Option<Bound> {
    let dt = &a.device_time;
    if dt.is_empty() {
        return None;
    }
    let window: i64 = dt.iter().map(|d| d.window_ns).sum();
    let sum = |f: fn(&DeviceTime) -> i64| -> i64 { dt.iter().map(f).sum() };
    let share = |x: i64| x as f64 * 100.0 / window.max(1) as f64;
    let shares = [
        ("compute-bound", share(sum(|d| d.computing_ns))),
        (
            "communication-bound",
            share(sum(|d| d.communication_not_overlapped_ns)),
        ),
        ("idle-bound", share(sum(|d| d.free_ns))),
    ];
    let top = shares
        .iter()
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .expect("three shares");
    let kind = if top.1 >= BOUND_MIN_PCT {
        top.0
    } else {
        "mixed"
    };
    // Idle that the host caused (late launches) makes an idle-bound run host-bound.
    let (host, idle) = a.dispatch.iter().fold((0i64, 0i64), |(h, i), d| {
        (h + d.host_bound.host_bound_ns, i + d.host_bound.idle_ns)
    });
    let host_pct = host as f64 * 100.0 / idle.max(1) as f64;
    let kind = if kind == "idle-bound" && host_pct >= BOUND_MIN_PCT {
        "host-bound"
    } else {
        kind
    };
    // Only when some launch is linked: without links nothing can be called host-bound.
    let linked = idle > 0 && a.dispatch.iter().any(|d| d.linked_tasks > 0);
    Some(Bound {
        kind,
        computing_pct: shares[0].1,
        exposed_communication_pct: shares[1].1,
        free_pct: shares[2].1,
        host_bound_pct: linked.then_some(host_pct),
    })
}

fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn pct(part: u64, whole: u64) -> f64 {
    part as f64 * 100.0 / whole.max(1) as f64
}

fn reason(
    code: ReasonCode,
    scope: Scope,
    effect: Status,
    detail: String,
    evidence: Vec<String>,
) -> Reason {
    let mut evidence = evidence;
    if evidence.len() > MAX_EVIDENCE {
        evidence.truncate(MAX_EVIDENCE);
        evidence.push("…".into());
    }
    Reason {
        code,
        scope,
        effect,
        detail,
        evidence,
    }
}

/// The verdict of a run from its analyses.
pub fn build(a: &Analyses) -> Verdict {
    let files = &a.evidence;
    let mut reasons = Vec::new();
    let device_events: u64 = files.iter().map(|f| f.device_events).sum();
    if device_events == 0 && !files.is_empty() {
        reasons.push(reason(
            ReasonCode::NoDeviceActivity,
            Scope::Run,
            Status::Withheld,
            "no device event in the input: nothing ran on a device in the captured window (a CPU-only trace, or device tracing was off)".into(),
            files.iter().map(|f| f.file.clone()).collect(),
        ));
    }
    captures(files, &mut reasons);
    launch_coverage(files, &mut reasons);
    slivers(files, &mut reasons);
    vendor(a, &mut reasons);
    rank_anomalies(a, &mut reasons);
    idle_unexplained(a, &mut reasons);
    let worst = |scope: Option<Scope>| {
        reasons
            .iter()
            .filter(|r| scope.is_none_or(|s| r.scope == s))
            .map(|r| r.effect)
            .max()
            .unwrap_or(Status::Confident)
    };
    let status = worst(Some(Scope::Run));
    let cross_rank_status = worst(None);
    let kind = bound(a)
        .filter(|_| status != Status::Withheld)
        .map(|b| b.kind.to_string());
    let statement = statement(status, kind.as_deref(), &reasons);
    Verdict {
        status,
        kind,
        rule: format!(
            "the largest of computing / exposed communication / free if ≥ {BOUND_MIN_PCT}% of the summed device windows, else mixed; idle-bound is host-bound when ≥ {BOUND_MIN_PCT}% of idle waited for a late launch"
        ),
        cross_rank_status,
        statement,
        coverage: coverage(a),
        reasons,
    }
}

fn statement(status: Status, kind: Option<&str>, reasons: &[Reason]) -> String {
    let run: Vec<&Reason> = reasons.iter().filter(|r| r.scope == Scope::Run).collect();
    match status {
        Status::Confident => match kind {
            Some(k) => format!("confident: {k} (every coverage signal passed)"),
            None => "confident: every coverage signal passed".into(),
        },
        Status::Withheld => {
            let first = run
                .iter()
                .find(|r| r.effect == Status::Withheld)
                .expect("a withheld status has a withheld reason");
            let more = run.len() - 1;
            format!(
                "cannot tell: {}{}",
                first.detail,
                if more > 0 {
                    format!(" (+{more} more: see Verdict)")
                } else {
                    String::new()
                }
            )
        }
        Status::Qualified => {
            let more = run.len() - 1;
            format!(
                "qualified{}: {}{}",
                kind.map(|k| format!(" {k}")).unwrap_or_default(),
                run[0].detail,
                if more > 0 {
                    format!(" (+{more} more: see Verdict)")
                } else {
                    String::new()
                }
            )
        }
    }
}

/// Launches recorded into a graph during stream capture: a capture trace is withheld, a
/// capture beside executed work qualified.
fn captures(files: &[FileEvidence], reasons: &mut Vec<Reason>) {
    let captured: u64 = files.iter().map(|f| f.captured_launches).sum();
    if captured == 0 {
        return;
    }
    let launches: u64 = files.iter().map(|f| f.launches).sum();
    let device_events: u64 = files
        .iter()
        .filter(|f| f.captured_launches > 0)
        .map(|f| f.device_events)
        .sum();
    // A replay launch stands for every device event it ran: the share is of the kernel runs the
    // trace accounts for (eager launches plus replayed events), not of host calls.
    let executed: u64 = files
        .iter()
        .map(|f| f.launches.saturating_sub(f.graph_launches) + f.replay_device_events)
        .sum();
    let share = pct(captured, executed.max(launches.min(captured)));
    let replayed = files.iter().any(|f| f.replay_device_events > 0);
    let evidence = files
        .iter()
        .filter(|f| f.captured_launches > 0)
        .map(|f| {
            format!(
                "{}: {} of {} launches inside {} capture window(s)",
                f.file,
                count(f.captured_launches),
                count(f.launches),
                f.capture_windows
            )
        })
        .collect();
    if share >= ev::CAPTURE_WITHHELD_PCT {
        reasons.push(reason(
            ReasonCode::GraphCapture,
            Scope::Run,
            Status::Withheld,
            format!(
                "this trace is a graph capture - {} launches were recorded into a graph, not executed ({} device events ran); profile the replays instead",
                count(captured),
                count(device_events)
            ),
            evidence,
        ));
    } else {
        reasons.push(reason(
            ReasonCode::PartialGraphCapture,
            Scope::Run,
            Status::Qualified,
            if replayed {
                format!(
                    "{} of {} kernel runs ({share:.1}%) were recorded into graphs, not executed, beside the graphs' replays: the device looks idle during capture",
                    count(captured),
                    count(executed)
                )
            } else {
                format!(
                    "{} of {} launches ({share:.1}%) were recorded into a graph, not executed: the device looks idle meanwhile",
                    count(captured),
                    count(launches)
                )
            },
            evidence,
        ));
    }
}

/// Executed launches whose device work is in the trace, per file with enough launches and
/// device events that carry link ids.
fn launch_coverage(files: &[FileEvidence], reasons: &mut Vec<Reason>) {
    let mut worst: Option<(f64, &FileEvidence)> = None;
    let mut low = Vec::new();
    for f in files {
        let executed = f.launches - f.captured_launches.min(f.launches);
        if executed < ev::MIN_LAUNCHES || f.launches_with_device_work == 0 {
            // Too few launches to judge, or device events without link ids (nothing to match).
            continue;
        }
        let p = pct(f.launches_with_device_work, executed);
        if p < ev::LAUNCH_COVERAGE_QUALIFIED_PCT {
            low.push(format!(
                "{}: {} of {} launches ({p:.1}%)",
                f.file,
                count(f.launches_with_device_work),
                count(executed)
            ));
            if worst.is_none_or(|w| p < w.0) {
                worst = Some((p, f));
            }
        }
    }
    let Some((p, f)) = worst else {
        return;
    };
    let effect = if p < ev::LAUNCH_COVERAGE_WITHHELD_PCT {
        Status::Withheld
    } else {
        Status::Qualified
    };
    reasons.push(reason(
        ReasonCode::LaunchCoverageLow,
        Scope::Run,
        effect,
        format!(
            "only {p:.1}% of the launches in {} have their device work in the trace: the device trace is incomplete, idle is overstated",
            short(&f.file)
        ),
        low,
    ));
}

/// Files whose device events cover a sliver of the host's window.
fn slivers(files: &[FileEvidence], reasons: &mut Vec<Reason>) {
    let mut worst: Option<(f64, &FileEvidence)> = None;
    let mut thin = Vec::new();
    for f in files {
        if !judged(f) {
            continue;
        }
        let p = f.device_window_ns as f64 * 100.0 / f.host_window_ns as f64;
        if p < ev::DEVICE_SLIVER_QUALIFIED_PCT {
            thin.push(format!(
                "{}: device window {} ns of a {} ns host window ({p:.2}%)",
                f.file, f.device_window_ns, f.host_window_ns
            ));
            if worst.is_none_or(|w| p < w.0) {
                worst = Some((p, f));
            }
        }
    }
    let Some((p, f)) = worst else {
        return;
    };
    let effect = if p < ev::DEVICE_SLIVER_WITHHELD_PCT {
        Status::Withheld
    } else {
        Status::Qualified
    };
    reasons.push(reason(
        ReasonCode::DeviceSliver,
        Scope::Run,
        effect,
        format!(
            "device events cover {p:.2}% of the host's window in {} ({:.3} of {:.3} ms): the shares would describe a sliver",
            short(&f.file),
            f.device_window_ns as f64 / 1e6,
            f.host_window_ns as f64 / 1e6
        ),
        thin,
    ));
}

/// A verdict that rests on idle (idle- or host-bound) whose idle is more than
/// `IDLE_UNEXPLAINED_QUALIFIED_PCT` unexplained (bubble cause `unknown`, or a host blocked in a
/// synchronous call on work outside the trace): qualified, naming the share, the parts and the
/// devices, each with its largest gap.
fn idle_unexplained(a: &Analyses, reasons: &mut Vec<Reason>) {
    if !bound(a).is_some_and(|b| matches!(b.kind, "idle-bound" | "host-bound")) {
        return;
    }
    let sum = |f: fn(&DeviceBubbles) -> i64| a.bubbles.iter().map(f).sum::<i64>();
    let idle = sum(|b| b.idle_ns);
    let unexplained = sum(|b| b.unexplained_ns);
    let (unknown, outside) = (sum(|b| b.unknown_ns), sum(|b| b.host_blocked_outside_ns));
    let unlisted = unexplained - unknown - outside;
    let share = unexplained as f64 * 100.0 / idle.max(1) as f64;
    if idle <= 0 || share <= ev::IDLE_UNEXPLAINED_QUALIFIED_PCT {
        return;
    }
    let ms = |ns: i64| format!("{:.3} ms", ns as f64 / 1e6);
    let parts: Vec<String> = [
        (unknown, "unknown"),
        (outside, "blocked on work outside the trace"),
        (unlisted, "unlisted tasks"),
    ]
    .into_iter()
    .filter(|x| x.0 > 0)
    .map(|(ns, what)| format!("{what} {}", ms(ns)))
    .collect();
    let mut devices: Vec<&DeviceBubbles> =
        a.bubbles.iter().filter(|b| b.unexplained_ns > 0).collect();
    devices.sort_by_key(|b| std::cmp::Reverse(b.unexplained_ns));
    reasons.push(reason(
        ReasonCode::IdleUnexplained,
        Scope::Run,
        Status::Qualified,
        format!(
            "{share:.1}% of idle ({} of {}) has no cause in the trace: {}",
            ms(unexplained),
            ms(idle),
            parts.join(", ")
        ),
        devices
            .iter()
            .map(|b| {
                format!(
                    "{} ({}): {} of {} idle unexplained{}",
                    b.device.title(),
                    b.device.file,
                    ms(b.unexplained_ns),
                    ms(b.idle_ns),
                    b.largest
                        .first()
                        .map(|g| format!("; largest gap {}: {}", ms(g.dur_ns), g.explain()))
                        .unwrap_or_default()
                )
            })
            .collect(),
    ));
}

/// The self-audit: a disagreement qualifies the verdict; computing far below the vendor's own
/// step table means the export holds a fraction of the device work (withheld).
fn vendor(a: &Analyses, reasons: &mut Vec<Reason>) {
    let v = &a.vendor_agreement;
    let incomplete: Vec<_> = v
        .checks
        .iter()
        .filter(|c| {
            c.metric == TimeMetric::Computing
                && c.vendor_ns > 0
                && (c.ours_ns as f64) < c.vendor_ns as f64 * ev::EXPORT_COMPLETE_MIN_PCT / 100.0
        })
        .collect();
    if let Some(c) = incomplete.first() {
        reasons.push(reason(
            ReasonCode::ExportIncomplete,
            Scope::Run,
            Status::Withheld,
            format!(
                "the export is incomplete - {} computing {:.3} ms in its device rows, {:.3} ms in its own {}",
                c.device.short(),
                c.ours_ns as f64 / 1e6,
                c.vendor_ns as f64 / 1e6,
                c.source.split(" of ").next().unwrap_or(&c.source)
            ),
            incomplete
                .iter()
                .map(|c| format!("{} ({})", c.device.title(), c.device.file))
                .collect(),
        ));
        return;
    }
    if v.devices_disagreeing > 0 {
        reasons.push(reason(
            ReasonCode::VendorDisagreement,
            Scope::Run,
            Status::Qualified,
            v.verdict.clone(),
            v.checks
                .iter()
                .filter(|c| !c.agrees)
                .map(|c| {
                    format!(
                        "{} {}{}: ours {} ns, vendor {} ns",
                        c.device.title(),
                        c.metric,
                        c.step.map(|k| format!(" step {k}")).unwrap_or_default(),
                        c.ours_ns,
                        c.vendor_ns
                    )
                })
                .collect(),
        ));
    }
}

/// Truncated files qualify everything; missing ranks and disjoint clocks weaken the claims
/// about ranks.
fn rank_anomalies(a: &Analyses, reasons: &mut Vec<Reason>) {
    let r = &a.ranks;
    let list = |v: &[i32]| v.iter().map(|x| format!("rank {x}")).collect::<Vec<_>>();
    if !r.truncated.is_empty() {
        reasons.push(reason(
            ReasonCode::TruncatedInput,
            Scope::Run,
            Status::Qualified,
            format!(
                "{} rank(s) have a file cut mid-event: the events after the cut are missing",
                r.truncated.len()
            ),
            list(&r.truncated),
        ));
    }
    if !r.missing.is_empty() {
        reasons.push(reason(
            ReasonCode::MissingRanks,
            Scope::CrossRank,
            Status::Qualified,
            format!(
                "{} of {} expected ranks are missing: rank claims cover the captured ranks only",
                r.missing.len(),
                r.expected.unwrap_or(0)
            ),
            list(&r.missing),
        ));
    }
    for c in &a.cross_rank.cohorts {
        if c.clock.confident {
            continue;
        }
        let thin: Vec<String> = c
            .clock
            .ranks
            .iter()
            .filter(|x| {
                matches!(
                    x.status,
                    crate::contract::ClockStatus::TooFewCollectives
                        | crate::contract::ClockStatus::EndsDisagree
                )
            })
            .map(|x| {
                format!(
                    "rank {} ({}, {} shared collectives)",
                    x.rank, x.status, x.collectives
                )
            })
            .collect();
        reasons.push(reason(
            ReasonCode::ClockUnverified,
            Scope::CrossRank,
            Status::Qualified,
            c.clock.statement.clone(),
            thin,
        ));
    }
    if !r.disjoint.is_empty() {
        reasons.push(reason(
            ReasonCode::ClockDisjoint,
            Scope::CrossRank,
            Status::Withheld,
            format!(
                "the windows of {} rank(s) overlap no other rank's: clocks cannot be compared, no rank is called late",
                r.disjoint.len()
            ),
            list(&r.disjoint),
        ));
    }
}

/// A file whose sliver can be judged: device events and a host window of sane length.
fn judged(f: &FileEvidence) -> bool {
    f.device_events > 0
        && (ev::DEVICE_SLIVER_MIN_HOST_WINDOW_NS..=ev::DEVICE_SLIVER_MAX_HOST_WINDOW_NS)
            .contains(&f.host_window_ns)
}

fn short(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

fn coverage(a: &Analyses) -> Coverage {
    let f = &a.evidence;
    let sum = |g: fn(&FileEvidence) -> u64| f.iter().map(g).sum::<u64>();
    let launches = sum(|x| x.launches);
    let captured = sum(|x| x.captured_launches);
    let executed = launches - captured.min(launches);
    Coverage {
        files: f.len() as u64,
        device_events: sum(|x| x.device_events),
        launches,
        launches_with_device_work: sum(|x| x.launches_with_device_work),
        launch_coverage_pct: (executed > 0)
            .then(|| pct(sum(|x| x.launches_with_device_work), executed)),
        graph_launches: sum(|x| x.graph_launches),
        capture_windows: sum(|x| x.capture_windows),
        captured_launches: captured,
        min_device_window_pct_of_host: f
            .iter()
            .filter(|x| judged(x))
            .map(|x| x.device_window_ns as f64 * 100.0 / x.host_window_ns as f64)
            .min_by(f64::total_cmp),
        vendor_devices_checked: a.vendor_agreement.devices_checked,
        vendor_devices_total: a.vendor_agreement.devices_total,
        ranks_disjoint: a.ranks.disjoint.clone(),
    }
}

/// A `clock_offset` warning per rank whose clock was corrected: the estimate, its spread and
/// how many collectives support it.
pub fn clock_diagnostics(a: &Analyses) -> Diagnostics {
    let mut d = Diagnostics::default();
    for c in &a.cross_rank.cohorts {
        for x in c
            .clock
            .ranks
            .iter()
            .filter(|x| x.status == crate::contract::ClockStatus::Corrected)
        {
            d.add("clock_offset", Severity::Warning, || {
                format!(
                    "rank {}: clock {:+} ns against rank {} (estimate {:+} ns against rank {}, spread {} ns over {} collectives); corrected before every cross-rank comparison",
                    x.rank,
                    x.applied_ns,
                    c.clock.reference_rank,
                    x.estimate_ns,
                    x.relative_to_rank,
                    x.spread_ns,
                    x.collectives
                )
            });
        }
    }
    d
}

/// A `layout_conflict` warning per disagreement between the files that state the job's layout
/// (docs/analyses/layout.md).
pub fn layout_diagnostics(a: &Analyses) -> Diagnostics {
    let mut d = Diagnostics::default();
    for w in &a.layout.warnings {
        d.add("layout_conflict", Severity::Warning, || w.clone());
    }
    d
}

/// A warning per reason (`verdict_withheld` / `verdict_qualified`), so the warning count and
/// the Diagnostics list carry them too.
pub fn diagnostics(v: &Verdict) -> Diagnostics {
    let mut d = Diagnostics::default();
    for r in &v.reasons {
        let code = match r.effect {
            Status::Withheld => "verdict_withheld",
            _ => "verdict_qualified",
        };
        d.add(code, Severity::Warning, || {
            format!("{} ({}): {}", r.code, r.scope, r.detail)
        });
    }
    d
}
