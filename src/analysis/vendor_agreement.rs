//! Self-audit: how far profscope's device-time numbers are from the vendor's own numbers in the
//! same input (the `Overlap Analysis` rows of a trace_view.json / msprof json, the db's
//! OVERLAP_ANALYSIS table). Each device and metric (computing, communication, communication not
//! overlapped, free) is one check; a check agrees when the difference is at most
//! [`TOLERANCE_PCT_OF_WINDOW`] percent of the device's window. The verdict is one line every format
//! shows first, so a reader (or an agent) knows whether to trust the numbers below it.

use super::device_time::DeviceTime;
use crate::diag::{Diagnostics, Severity};
pub use crate::report::contract::vendor_agreement::*;

/// A difference larger than this share of the window (percent) is a disagreement.
pub const TOLERANCE_PCT_OF_WINDOW: f64 = 1.0;

/// The checks of every device_time row that has vendor numbers.
pub fn compute(device_time: &[DeviceTime]) -> VendorAgreement {
    let mut checks = Vec::new();
    let mut checked = 0u64;
    let mut disagreeing = 0u64;
    for d in device_time {
        let Some(v) = &d.vendor else {
            continue;
        };
        checked += 1;
        let mut bad = false;
        for (metric, ours, vendor) in [
            (TimeMetric::Computing, d.computing_ns, v.computing_ns),
            (
                TimeMetric::Communication,
                d.communication_ns,
                v.communication_ns,
            ),
            (
                TimeMetric::CommunicationNotOverlapped,
                d.communication_not_overlapped_ns,
                v.communication_not_overlapped_ns,
            ),
            (TimeMetric::Free, d.free_ns, v.free_ns),
        ] {
            let diff = ours - vendor;
            let pct = diff as f64 * 100.0 / d.window_ns.max(1) as f64;
            let agrees = pct.abs() <= TOLERANCE_PCT_OF_WINDOW;
            bad |= !agrees;
            checks.push(Check {
                device: d.device.clone(),
                source: v.source.clone(),
                metric,
                ours_ns: ours,
                vendor_ns: vendor,
                diff_ns: diff,
                window_ns: d.window_ns,
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
    let verdict = verdict(&checks, checked, disagreeing, max);
    VendorAgreement {
        tolerance_pct_of_window: TOLERANCE_PCT_OF_WINDOW,
        devices_checked: checked,
        devices_disagreeing: disagreeing,
        max_diff_pct_of_window: max,
        checks,
        verdict,
    }
}

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn verdict(checks: &[Check], checked: u64, disagreeing: u64, max: f64) -> String {
    if checked == 0 {
        return "vendor self-audit: the input carries no vendor overlap numbers to check against"
            .into();
    }
    if disagreeing == 0 {
        return format!(
            "agrees with the vendor's Overlap Analysis within {max:.2}% of the window on {checked}/{checked} devices (computing, communication, exposed communication, free)"
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
        "DISAGREES with the vendor's Overlap Analysis on {disagreeing}/{checked} devices; worst: {} {}: ours {}, vendor {} ({:+.2}% of the window; tolerance {TOLERANCE_PCT_OF_WINDOW}%)",
        worst.device.title(),
        worst.metric,
        ms(worst.ours_ns),
        ms(worst.vendor_ns),
        worst.diff_pct_of_window
    )
}

/// A `vendor_disagreement` warning per check over the tolerance, with both values.
pub fn diagnostics(v: &VendorAgreement) -> Diagnostics {
    let mut d = Diagnostics::default();
    for c in v.checks.iter().filter(|c| !c.agrees) {
        d.add("vendor_disagreement", Severity::Warning, || {
            format!(
                "{} ({}): {}: ours {} ns, vendor {} ns ({:+.2}% of the {} ns window; {})",
                c.device.title(),
                c.device.file,
                c.metric,
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
