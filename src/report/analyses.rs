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
    op_types::{self, OpTypes},
    phases::{self, Phases},
    ranks::{self, Ranks},
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
    /// Run only these analyses (names as in [`ANALYSES`]); None: all.
    pub only: Option<Vec<String>>,
    /// How many ranks the run should have (`--expected-ranks`); None: a file's world size.
    pub expected_ranks: Option<u32>,
}

/// Every analysis by the name `--only` takes (and the JSON key it fills).
pub const ANALYSES: &[&str] = &[
    "device_time",
    "kernel_types",
    "bubbles",
    "step_sync",
    "mtp",
    "top_events",
    "op_types",
    "composition",
    "communication",
    "phases",
    "batch_audit",
    "ranks",
];

impl Default for AnalyzeOpts {
    fn default() -> Self {
        AnalyzeOpts {
            bubbles: BubbleOpts::default(),
            top_n: 10,
            batch: None,
            only: None,
            expected_ranks: None,
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
    /// Compute time per op type (inputs with kernel details: db).
    pub op_types: Vec<OpTypes>,
    pub composition: Vec<Composition>,
    pub communication: Vec<Communication>,
    pub phases: Vec<Phases>,
    /// None when not run (`--only`).
    pub batch_audit: Option<BatchAudit>,
    /// Rank anomalies: missing, CPU-only, disjoint windows.
    pub ranks: Ranks,
}

/// Runs the analyses (independent of each other) two ways in parallel.
pub fn run_all(t: &Tables, o: &AnalyzeOpts) -> Analyses {
    let devs = devices::devices(t);
    let d = &devs;
    let on = |name: &str| o.only.as_ref().is_none_or(|v| v.iter().any(|x| x == name));
    // Runs `f` when the analysis is selected; an empty result otherwise.
    fn when<T: Default>(yes: bool, f: impl FnOnce() -> T) -> T {
        if yes { f() } else { T::default() }
    }
    let (
        (device_time, kernel_types, kernel_types_complete_steps, bubbles, step_sync, mtp),
        (top_events, op_types, composition, communication, phases, batch_audit),
    ) = rayon::join(
        || {
            (
                when(on("device_time"), || device_time::compute(t, d)),
                when(on("kernel_types"), || kernel_types::compute(t, d)),
                when(on("kernel_types"), || {
                    kernel_types::compute_complete_steps(t, d)
                }),
                when(on("bubbles"), || bubbles::compute(t, d, &o.bubbles)),
                when(on("step_sync"), || step_sync::compute(t, d)),
                when(on("mtp"), || mtp::compute(t, d)),
            )
        },
        || {
            (
                when(on("top_events"), || top_events::compute(t, d, o.top_n)),
                when(on("op_types"), || op_types::compute(t, d)),
                when(on("composition"), || composition::compute(t, d, o.top_n)),
                when(on("communication"), || communication::compute(t, d)),
                when(on("phases"), || phases::compute(t)),
                on("batch_audit").then(|| batch_audit::compute(t, o.batch)),
            )
        },
    );
    let ranks = if on("ranks") {
        ranks::compute(t, o.expected_ranks)
    } else {
        Ranks::default()
    };
    Analyses {
        ranks,
        device_time,
        kernel_types,
        kernel_types_complete_steps,
        bubbles,
        step_sync,
        mtp,
        top_events,
        op_types,
        composition,
        communication,
        phases,
        batch_audit,
    }
}
