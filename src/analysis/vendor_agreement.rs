//! Self-audit: how far profscope's device-time numbers are from the vendor's own numbers in the
//! same input: the `Overlap Analysis` rows of a trace_view.json / msprof json and the db's
//! OVERLAP_ANALYSIS table (the device's whole window), and the vendor's step table
//! (analysis.db `StepTraceTime`, the text export's `step_trace_time.csv`; per step, against the
//! cross-rank analysis's step rows, or the whole window when the vendor wrote one row for the
//! capture and we found no steps). Each device, source, step and metric (computing,
//! communication, communication not overlapped, free) is one check; a check agrees when the
//! difference is at most [`TOLERANCE_PCT_OF_WINDOW`] percent of the window compared. The
//! verdict is one line every format shows first, so a reader (or an agent) knows whether to
//! trust the numbers below it.

use super::cluster::JobFacts;
use super::communication_ops::DeviceCommOps;
use super::cross_rank::{DeviceExtract, StepRow};
use super::device_time::DeviceTime;
use super::devices::DeviceRef;
use super::evidence::{FileEvidence, VendorStep};
pub use crate::contract::vendor_agreement::*;
use crate::diag::{Diagnostics, Severity};
use std::collections::HashMap;

/// A difference larger than this share of the window (percent) is a disagreement.
pub const TOLERANCE_PCT_OF_WINDOW: f64 = 1.0;

/// Our numbers and the vendor's (of `metrics`), with the windows they come from.
struct Compared {
    source: String,
    step: Option<i64>,
    /// Our window: device_time's, or our step's device window.
    window_ns: i64,
    /// The vendor's: computing + communication not overlapped + free of its row (its step's
    /// `Stage`), or, for collective totals, their elapsed time.
    vendor_window_ns: i64,
    metrics: &'static [TimeMetric],
    ours: [i64; 4],
    vendor: [i64; 4],
}

const COLLECTIVE_METRICS: [TimeMetric; 3] = [
    TimeMetric::CollectiveElapsed,
    TimeMetric::CollectiveTransit,
    TimeMetric::CollectiveWait,
];

const METRICS: [TimeMetric; 4] = [
    TimeMetric::Computing,
    TimeMetric::Communication,
    TimeMetric::CommunicationNotOverlapped,
    TimeMetric::Free,
];

fn of_step(s: &StepRow) -> [i64; 4] {
    [
        s.computing_ns,
        s.communication_ns,
        s.communication_not_overlapped_ns,
        s.free_ns,
    ]
}

fn of_device(d: &DeviceTime) -> [i64; 4] {
    [
        d.computing_ns,
        d.communication_ns,
        d.communication_not_overlapped_ns,
        d.free_ns,
    ]
}

/// The window the vendor's four numbers split: computing + communication not overlapped + free.
fn vendor_window(v: [i64; 4]) -> i64 {
    v[0] + v[2] + v[3]
}

fn of_vendor(v: &VendorStep) -> [i64; 4] {
    [
        v.computing_ns,
        v.communication_ns,
        v.communication_not_overlapped_ns,
        v.free_ns,
    ]
}

/// The checks of every device_time row against every vendor source its file holds.
/// `extracts`: the cross-rank step rows (empty when cross_rank did not run); `evidence`: the
/// vendor step tables per file.
pub fn compute(
    device_time: &[DeviceTime],
    extracts: &[DeviceExtract],
    comm_ops: &[DeviceCommOps],
    evidence: &[FileEvidence],
    jobs: &[JobFacts],
) -> VendorAgreement {
    let mut checks = Vec::new();
    let mut checked = 0u64;
    let mut disagreeing = 0u64;
    let mut unmatched = 0u64;
    let mut sources: Vec<String> = Vec::new();
    let ix = Index::new(device_time, extracts, comm_ops, evidence);
    for d in device_time {
        let mut compared = Vec::new();
        if let Some(v) = &d.vendor {
            let vendor = [
                v.computing_ns,
                v.communication_ns,
                v.communication_not_overlapped_ns,
                v.free_ns,
            ];
            compared.push(Compared {
                source: v.source.clone(),
                step: None,
                window_ns: d.window_ns,
                vendor_window_ns: vendor_window(vendor),
                metrics: &METRICS,
                ours: of_device(d),
                vendor,
            });
        }
        let (c, u) = step_table(d, &ix);
        unmatched += u;
        compared.extend(c);
        compared.extend(collectives(d, &ix));
        for x in &compared {
            // device_time's source reads `Overlap Analysis process of <file>`.
            let kind = if x.source.starts_with("Overlap Analysis") {
                "Overlap Analysis"
            } else {
                x.source.split(" of ").next().unwrap_or("")
            };
            push_source(&mut sources, kind);
        }
        if compared.is_empty() {
            continue;
        }
        checked += 1;
        let mut bad = false;
        for c in compared {
            // A share of the larger window: each number is at most its own window, so the
            // difference is at most 100% of it (a cut export's sliver against the vendor's
            // whole step is not a share of the sliver).
            let window = c.window_ns.max(c.vendor_window_ns);
            for (k, &metric) in c.metrics.iter().enumerate() {
                let diff = c.ours[k] - c.vendor[k];
                let pct = diff as f64 * 100.0 / window.max(1) as f64;
                let agrees = pct.abs() <= TOLERANCE_PCT_OF_WINDOW;
                bad |= !agrees;
                checks.push(Check {
                    device: d.device.clone(),
                    source: c.source.clone(),
                    step: c.step,
                    metric,
                    ours_ns: c.ours[k],
                    vendor_ns: c.vendor[k],
                    diff_ns: diff,
                    window_ns: window,
                    ours_window_ns: c.window_ns,
                    vendor_window_ns: c.vendor_window_ns,
                    diff_pct_of_window: pct,
                    agrees,
                });
            }
        }
        disagreeing += u64::from(bad);
    }
    // Ranks kept as summaries only: their communication.json's ops against their step table.
    let summaries = summary_ranks(jobs, evidence);
    for (d, compared) in &summaries {
        if compared.is_empty() {
            continue;
        }
        push_source(&mut sources, "communication.json");
        checked += 1;
        let mut bad = false;
        for c in compared {
            let k = 0;
            let diff = c.ours[k] - c.vendor[k];
            let pct = diff as f64 * 100.0 / c.window_ns.max(1) as f64;
            let agrees = pct.abs() <= TOLERANCE_PCT_OF_WINDOW;
            bad |= !agrees;
            checks.push(Check {
                device: d.clone(),
                source: c.source.clone(),
                step: c.step,
                metric: c.metrics[k],
                ours_ns: c.ours[k],
                vendor_ns: c.vendor[k],
                diff_ns: diff,
                window_ns: c.window_ns,
                ours_window_ns: c.window_ns,
                vendor_window_ns: c.vendor_window_ns,
                diff_pct_of_window: pct,
                agrees,
            });
        }
        disagreeing += u64::from(bad);
    }
    let max = checks
        .iter()
        .map(|c| c.diff_pct_of_window.abs())
        .fold(0.0, f64::max);
    let total = (device_time.len() + summaries.len()) as u64;
    let verdict = verdict(&checks, checked, total, disagreeing, max, &sources);
    VendorAgreement {
        tolerance_pct_of_window: TOLERANCE_PCT_OF_WINDOW,
        devices_checked: checked,
        devices_total: total,
        sources,
        vendor_steps_unmatched: unmatched,
        vendor_steps_folded: evidence.iter().map(|e| e.vendor_steps_folded).sum(),
        devices_disagreeing: disagreeing,
        max_diff_pct_of_window: max,
        checks,
        verdict,
    }
}

/// Per summary-only rank: its communication per step recomputed as the union of its
/// communication.json (or CommAnalyzerTime) ops, against the step table's Communication.
fn summary_ranks(jobs: &[JobFacts], evidence: &[FileEvidence]) -> Vec<(DeviceRef, Vec<Compared>)> {
    let ev: HashMap<&str, &FileEvidence> = evidence.iter().map(|e| (e.file.as_str(), e)).collect();
    jobs.iter()
        .filter(|j| j.summary_only)
        .map(|j| {
            let device = DeviceRef {
                file: j.file.clone(),
                rank: j.rank,
                device_id: -1,
                process: "vendor summary".into(),
            };
            let mut by_step: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
            for op in &j.vendor_ops {
                if let Some(s) = op.step {
                    by_step.entry(s).or_default().push((op.start_ns, op.end_ns));
                }
            }
            let compared = ev
                .get(j.file.as_str())
                .map(|e| e.vendor_steps.as_slice())
                .unwrap_or_default()
                .iter()
                .filter_map(|v| {
                    let step = v.step?;
                    let ops = by_step.get(&step)?;
                    let ours = super::intervals::total(&super::intervals::union(ops.clone()));
                    // A summary has no events: the vendor's own step window is both windows.
                    let stage = v.computing_ns + v.communication_not_overlapped_ns + v.free_ns;
                    Some(Compared {
                        source: format!(
                            "{} against the union of communication.json ops of {}",
                            v.source, j.file
                        ),
                        step: Some(step),
                        window_ns: stage,
                        vendor_window_ns: stage,

                        metrics: &[TimeMetric::Communication],
                        ours: [ours, 0, 0, 0],
                        vendor: [v.communication_ns, 0, 0, 0],
                    })
                })
                .collect();
            (device, compared)
        })
        .collect()
}

fn push_source(sources: &mut Vec<String>, s: &str) {
    if !sources.iter().any(|x| x == s) {
        sources.push(s.to_string());
    }
}

/// The vendor step rows of `d`'s file against our steps of the same number; the whole window
/// when the vendor wrote one row and we have no step of that number. A file's step table has
/// no device column, so files with several devices are not compared. Returns the comparisons
/// and how many vendor rows matched nothing.
/// The inputs looked up per device, indexed once (thousands of ranks make linear scans
/// quadratic).
struct Index<'a> {
    evidence: HashMap<&'a str, &'a FileEvidence>,
    devices_in_file: HashMap<&'a str, usize>,
    comm: HashMap<&'a DeviceRef, &'a DeviceCommOps>,
    extracts: HashMap<&'a DeviceRef, Vec<&'a DeviceExtract>>,
}

impl<'a> Index<'a> {
    fn new(
        device_time: &'a [DeviceTime],
        extracts: &'a [DeviceExtract],
        comm_ops: &'a [DeviceCommOps],
        evidence: &'a [FileEvidence],
    ) -> Self {
        let mut devices_in_file: HashMap<&str, usize> = HashMap::new();
        for d in device_time {
            *devices_in_file.entry(d.device.file.as_str()).or_default() += 1;
        }
        let mut by_device: HashMap<&DeviceRef, Vec<&DeviceExtract>> = HashMap::new();
        for x in extracts {
            by_device.entry(&x.device).or_default().push(x);
        }
        Index {
            evidence: evidence.iter().map(|e| (e.file.as_str(), e)).collect(),
            devices_in_file,
            comm: comm_ops
                .iter()
                .filter(|c| c.source.is_none())
                .map(|c| (&c.device, c))
                .collect(),
            extracts: by_device,
        }
    }
}

fn step_table(d: &DeviceTime, ix: &Index<'_>) -> (Vec<Compared>, u64) {
    let Some(ev) = ix
        .evidence
        .get(d.device.file.as_str())
        .filter(|e| !e.vendor_steps.is_empty())
    else {
        return (Vec::new(), 0);
    };
    if ix.devices_in_file.get(d.device.file.as_str()) != Some(&1) {
        return (Vec::new(), ev.vendor_steps.len() as u64);
    }
    // By step number (the last row of a number wins, as in the cross-rank comparison): vendor
    // tables and captures can both hold tens of thousands of steps.
    let steps: HashMap<i64, &StepRow> = ix
        .extracts
        .get(&d.device)
        .into_iter()
        .flatten()
        .flat_map(|x| &x.steps)
        .map(|s| (s.key, s))
        .collect();
    let mut out = Vec::new();
    let mut unmatched = 0u64;
    let whole = ev.vendor_steps.len() == 1;
    for v in &ev.vendor_steps {
        let ours = v.step.and_then(|k| steps.get(&k).copied());
        let (window_ns, ours) = match ours {
            Some(s) => (s.step_ns(), of_step(s)),
            None if whole && (v.step.is_none() || steps.is_empty()) => (d.window_ns, of_device(d)),
            None => {
                unmatched += 1;
                continue;
            }
        };
        out.push(Compared {
            source: format!("{} of {}", v.source, d.device.file),
            step: ours_step(v, &steps),
            window_ns,
            vendor_window_ns: vendor_window(of_vendor(v)),
            metrics: &METRICS,
            ours,
            vendor: of_vendor(v),
        });
    }
    (out, unmatched)
}

/// communication.json's collective totals per step against our collective-op depth of the same
/// step (recomputed from the HCCL plane tasks; a device whose ops came from communication.json
/// itself, or that has no timed ops in the step, is not compared).
fn collectives(d: &DeviceTime, ix: &Index<'_>) -> Vec<Compared> {
    let (Some(ev), Some(ours)) = (
        ix.evidence.get(d.device.file.as_str()),
        ix.comm.get(&d.device),
    ) else {
        return Vec::new();
    };
    ev.vendor_collectives
        .iter()
        .filter_map(|v| {
            let s = ours.steps.iter().find(|s| s.step == v.step && s.ops > 0)?;
            Some(Compared {
                source: format!("{} of {}", v.source, d.device.file),
                step: v.step,
                window_ns: d.window_ns,
                vendor_window_ns: v.elapsed_ns,
                metrics: &COLLECTIVE_METRICS,
                ours: [s.times.elapsed_ns, s.times.transit_ns, s.times.wait_ns, 0],
                vendor: [v.elapsed_ns, v.transit_ns, v.wait_ns, 0],
            })
        })
        .collect()
}

/// The step number a comparison is labelled with: the vendor's when we have that step.
fn ours_step(v: &VendorStep, steps: &HashMap<i64, &StepRow>) -> Option<i64> {
    v.step.filter(|k| steps.contains_key(k))
}

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn verdict(
    checks: &[Check],
    checked: u64,
    total: u64,
    disagreeing: u64,
    max: f64,
    sources: &[String],
) -> String {
    if checked == 0 {
        return "vendor self-audit: the input carries no vendor numbers (Overlap Analysis, StepTraceTime, step_trace_time.csv) to check against".into();
    }
    let from = sources
        .iter()
        .map(|s| s.trim_start_matches("analysis.db "))
        .collect::<Vec<_>>()
        .join(", ");
    if disagreeing == 0 {
        return format!(
            "agrees with the vendor ({from}) within {max:.2}% of the window on {checked} of {total} devices ({} checks)",
            checks.len()
        );
    }
    let worst = checks
        .iter()
        .filter(|c| !c.agrees)
        .max_by(|a, b| {
            a.diff_pct_of_window
                .abs()
                .total_cmp(&b.diff_pct_of_window.abs())
        })
        .expect("a disagreeing device has a failing check");
    format!(
        "DISAGREES with the vendor ({from}) on {disagreeing} of {checked} devices; worst: {} {}{}: ours {}, vendor {} ({:+.2}% of the {} window{})",
        worst.device.short(),
        worst.metric,
        worst
            .step
            .map(|k| format!(", step {k}"))
            .unwrap_or_default(),
        ms(worst.ours_ns),
        ms(worst.vendor_ns),
        worst.diff_pct_of_window,
        ms(worst.window_ns),
        if worst.ours_window_ns < worst.vendor_window_ns {
            format!(
                " the vendor's numbers split; ours cover {}",
                ms(worst.ours_window_ns)
            )
        } else {
            String::new()
        }
    )
}

/// A `vendor_disagreement` warning per check over the tolerance, with both values; a
/// `vendor_step_duplicate` warning counting the vendor step rows folded.
pub fn diagnostics(v: &VendorAgreement) -> Diagnostics {
    let mut d = Diagnostics::default();
    d.add_n(
        "vendor_step_duplicate",
        Severity::Warning,
        v.vendor_steps_folded,
        || {
            format!(
                "{} vendor step rows (step_trace_time.csv, analysis.db StepTraceTime) repeat a step number already read: each step is compared once, with its first row (per file: analyses.evidence[].vendor_steps_folded)",
                v.vendor_steps_folded
            )
        },
    );
    for c in v.checks.iter().filter(|c| !c.agrees) {
        d.add("vendor_disagreement", Severity::Warning, || {
            format!(
                "{} ({}): {}{}: ours {} ns, vendor {} ns ({:+.2}% of the {} ns window; {})",
                c.device.title(),
                c.device.file,
                c.metric,
                c.step.map(|k| format!(" in step {k}")).unwrap_or_default(),
                c.ours_ns,
                c.vendor_ns,
                c.diff_pct_of_window,
                c.window_ns,
                c.source
            )
        });
    }
    d
}
