//! Runs every timeline analysis on the tables and gathers the results for the report.

use crate::analysis::{
    batch_audit::{self, BatchAudit},
    bubbles::{self, BubbleOpts, DeviceBubbles},
    communication::{self, Communication},
    composition::{self, Composition},
    device_time::{self, DeviceTime},
    devices,
    kernel_types::{self, KernelTypes},
    mtp::{self, Mtp},
    phases::{self, Phases},
    step_sync::{self, StepSyncSummary},
    top_events::{self, TopEvents},
};
use crate::model::Tables;
use serde::Serialize;

#[derive(Debug, Clone)]
pub struct AnalyzeOpts {
    pub bubbles: BubbleOpts,
    /// Rows in top-N lists.
    pub top_n: usize,
    /// The batch size the decode audit requires; None: all qualified replays must agree.
    pub batch: Option<i64>,
}

impl Default for AnalyzeOpts {
    fn default() -> Self {
        AnalyzeOpts {
            bubbles: BubbleOpts::default(),
            top_n: 10,
            batch: None,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Analyses {
    pub device_time: Vec<DeviceTime>,
    pub kernel_types: Vec<KernelTypes>,
    /// HTA's default window: complete ProfilerSteps only (files with at least two steps).
    pub kernel_types_complete_steps: Vec<KernelTypes>,
    pub bubbles: Vec<DeviceBubbles>,
    pub step_sync: Vec<StepSyncSummary>,
    pub mtp: Vec<Mtp>,
    pub top_events: Vec<TopEvents>,
    pub composition: Vec<Composition>,
    pub communication: Vec<Communication>,
    pub phases: Vec<Phases>,
    pub batch_audit: BatchAudit,
}

/// Runs the analyses (independent of each other) two ways in parallel.
pub fn run_all(t: &Tables, o: &AnalyzeOpts) -> Analyses {
    let devs = devices::devices(t);
    let d = &devs;
    let (
        (device_time, kernel_types, kernel_types_complete_steps, bubbles, step_sync, mtp),
        (top_events, composition, communication, phases, batch_audit),
    ) = rayon::join(
        || {
            (
                device_time::compute(t, d),
                kernel_types::compute(t, d),
                kernel_types::compute_complete_steps(t, d),
                bubbles::compute(t, d, &o.bubbles),
                step_sync::compute(t, d),
                mtp::compute(t, d),
            )
        },
        || {
            (
                top_events::compute(t, d, o.top_n),
                composition::compute(t, d, o.top_n),
                communication::compute(t, d),
                phases::compute(t),
                batch_audit::compute(t, o.batch),
            )
        },
    );
    Analyses {
        device_time,
        kernel_types,
        kernel_types_complete_steps,
        bubbles,
        step_sync,
        mtp,
        top_events,
        composition,
        communication,
        phases,
        batch_audit,
    }
}
