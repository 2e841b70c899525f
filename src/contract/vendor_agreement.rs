//! The report contract of `analysis::vendor_agreement`: the result types it returns, serialized into
//! the JSON report (docs/json-output.md). Their methods and the computation live in
//! `analysis/vendor_agreement.rs`.

use super::*;
use crate::model::closed_set::closed_set;
use serde::{Deserialize, Serialize};

closed_set! {
    /// A device-time metric compared with the vendor's.
    pub enum TimeMetric {
        Computing = "computing",
        Communication = "communication",
        CommunicationNotOverlapped = "communication_not_overlapped",
        Free = "free",
        /// Summed elapsed time of a step's collective ops (communication.json).
        CollectiveElapsed = "collective_elapsed",
        CollectiveTransit = "collective_transit",
        CollectiveWait = "collective_wait",
    }
}

/// One metric of one device, ours against the vendor's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Check {
    pub device: DeviceRef,
    /// Where the vendor's number was read.
    pub source: String,
    /// The step compared (the vendor's step table); None: the whole window. (Always written:
    /// the cache's postcard entries have no optional fields.)
    pub step: Option<i64>,
    pub metric: TimeMetric,
    pub ours_ns: i64,
    pub vendor_ns: i64,
    /// ours − vendor.
    pub diff_ns: i64,
    /// The denominator of `diff_pct_of_window`: the larger of `ours_window_ns` and
    /// `vendor_window_ns` (each number is at most its own window, so |diff| is at most 100% of
    /// this).
    pub window_ns: i64,
    /// Our window: the device's (device_time's), or the step's device window for a step check.
    #[serde(default)]
    pub ours_window_ns: i64,
    /// The vendor's: computing + communication not overlapped + free of its row (the step's
    /// `Stage` in step_trace_time.csv), or the elapsed time of its collective totals.
    #[serde(default)]
    pub vendor_window_ns: i64,
    pub diff_pct_of_window: f64,
    pub agrees: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct VendorAgreement {
    pub tolerance_pct_of_window: f64,
    /// Devices whose input carries the vendor's numbers.
    pub devices_checked: u64,
    /// Devices with a device timeline (device_time rows): `devices_checked` of these.
    #[serde(default)]
    pub devices_total: u64,
    /// The vendor sources compared (`Overlap Analysis`, `analysis.db StepTraceTime`,
    /// `step_trace_time.csv`).
    #[serde(default)]
    pub sources: Vec<String>,
    /// Vendor step rows with no matching step of ours (a step number we did not find).
    #[serde(default)]
    pub vendor_steps_unmatched: u64,
    /// Vendor step rows that repeat a step number already compared (each file's
    /// `analyses.evidence[].vendor_steps_folded`, summed): not compared again.
    #[serde(default)]
    pub vendor_steps_folded: u64,
    /// Devices with at least one check over the tolerance.
    pub devices_disagreeing: u64,
    /// The largest |diff| over all checks, percent of the window.
    pub max_diff_pct_of_window: f64,
    pub checks: Vec<Check>,
    /// One line: agrees / DISAGREES / nothing to check against.
    pub verdict: String,
}
