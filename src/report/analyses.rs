//! The analyses' part of the report (`Analyses`) and the scheduler that runs the registry's
//! analyses ([`super::registry`]) on one file's tables and combines files' parts.

use super::registry::{Analysis, REGISTRY};
use crate::analysis::{
    batch_audit::BatchAudit,
    bubbles::{BubbleOpts, DeviceBubbles},
    communication::Communication,
    communication_ops::{self, CommunicationOps},
    composition::Composition,
    cross_rank::{CrossRank, DeviceExtract},
    device_time::DeviceTime,
    devices,
    dispatch::DeviceDispatch,
    kernel_types::KernelTypes,
    mtp::Mtp,
    op_types::OpTypes,
    phases::Phases,
    ranks::{FileFacts, Ranks},
    step_sync::StepSyncSummary,
    top_events::TopEvents,
    vendor_agreement::{self, VendorAgreement},
};
use crate::model::Tables;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone)]
pub struct AnalyzeOpts {
    pub bubbles: BubbleOpts,
    /// Rows in top-N lists.
    pub top_n: usize,
    /// The batch size the decode audit requires; None: all qualified replays must agree.
    pub batch: Option<i64>,
    /// Run only these analyses (names as in [`super::registry::REGISTRY`]); None: all.
    pub only: Option<Vec<String>>,
    /// How many ranks the run should have (`--expected-ranks`); None: a file's world size.
    pub expected_ranks: Option<u32>,
}

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

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Analyses {
    /// Self-audit against the vendor's own numbers in the input (computed from device_time).
    pub vendor_agreement: VendorAgreement,
    pub device_time: Vec<DeviceTime>,
    pub kernel_types: Vec<KernelTypes>,
    /// HTA's default window: complete ProfilerSteps only (files with at least two steps).
    pub kernel_types_complete_steps: Vec<KernelTypes>,
    pub bubbles: Vec<DeviceBubbles>,
    /// Launch links, launch latency, queue depth, host-bound idle, host API statistics.
    pub dispatch: Vec<DeviceDispatch>,
    pub step_sync: Vec<StepSyncSummary>,
    pub mtp: Vec<Mtp>,
    pub top_events: Vec<TopEvents>,
    /// Compute time per op type (inputs with kernel details: db).
    pub op_types: Vec<OpTypes>,
    pub composition: Vec<Composition>,
    pub communication: Vec<Communication>,
    /// Per collective op: transit / wait / synchronization / idle, bandwidth per link type, the
    /// link matrix; the slow rank and slow link.
    pub communication_ops: CommunicationOps,
    pub phases: Vec<Phases>,
    /// None when not run (`--only`).
    pub batch_audit: Option<BatchAudit>,
    /// Rank anomalies: missing, CPU-only, truncated, failed, oversized, disjoint windows.
    pub ranks: Ranks,
    /// Per step and rank: computing / exposed communication / free, slowest rank and why,
    /// collective start skew.
    pub cross_rank: CrossRank,
}

/// The results of one set of tables (one file, or all files at once) and what the run-level
/// analyses (ranks, cross_rank, the batch verdict) need from it.
#[derive(Default, Serialize, Deserialize)]
pub struct Part {
    pub analyses: Analyses,
    pub rank_facts: Vec<FileFacts>,
    pub extracts: Vec<DeviceExtract>,
    /// Per-file decode audits, merged into one verdict over the run.
    pub audits: Vec<BatchAudit>,
}

/// Runs every analysis on one set of tables.
pub fn run_all(t: &Tables, o: &AnalyzeOpts) -> Analyses {
    finish(vec![run_part(t, o)], o)
}

fn selected(o: &AnalyzeOpts, name: &str) -> bool {
    o.only.as_ref().is_none_or(|v| v.iter().any(|x| x == name))
}

/// Runs the selected analyses of the registry on one set of tables as parallel tasks (they are
/// independent of each other), the slowest first so the pool stays busy; the run-level results
/// are left for [`finish`].
pub fn run_part(t: &Tables, o: &AnalyzeOpts) -> Part {
    let t0 = std::time::Instant::now();
    let devs = devices::devices(t);
    let mut order: Vec<&Analysis> = REGISTRY.iter().filter(|a| selected(o, a.name)).collect();
    order.sort_by_key(|a| a.start_order);
    let mut parts: Vec<Part> = order.iter().map(|_| Part::default()).collect();
    // `PROFSCOPE_ANALYSIS_TIMING` prints each analysis's time to stderr.
    let timing = std::env::var_os("PROFSCOPE_ANALYSIS_TIMING").is_some();
    if timing {
        eprintln!("analysis device lists: {:.3} s", t0.elapsed().as_secs_f64());
    }
    // FIFO: a plain scope runs the spawning thread's own tasks newest first, which started the
    // costliest analyses last.
    rayon::scope_fifo(|s| {
        for (a, part) in order.iter().zip(parts.iter_mut()) {
            let devs = &devs;
            s.spawn_fifo(move |_| {
                let started = t0.elapsed().as_secs_f64();
                (a.run)(t, devs, o, part);
                if timing {
                    let done = t0.elapsed().as_secs_f64();
                    eprintln!("analysis {}: {started:.3} s .. {done:.3} s", a.name);
                }
            });
        }
    });
    let mut out = Part::default();
    for (a, mut part) in order.iter().zip(parts) {
        (a.merge)(&mut out, &mut part);
    }
    out
}

/// The run's analyses from its parts (in input order): per-file lists concatenated, then each
/// selected analysis's run-level result (the batch verdict over all files, ranks, cross_rank),
/// the communication summary and the vendor agreement.
pub fn finish(parts: Vec<Part>, o: &AnalyzeOpts) -> Analyses {
    let mut run = Part::default();
    for mut p in parts {
        for a in REGISTRY {
            (a.merge)(&mut run, &mut p);
        }
    }
    for a in REGISTRY.iter().filter(|a| selected(o, a.name)) {
        if let Some(f) = a.finish {
            f(&mut run, o);
        }
    }
    let a = &mut run.analyses;
    a.communication_ops.summary = communication_ops::summarize(&a.communication_ops.devices);
    a.vendor_agreement = vendor_agreement::compute(&a.device_time);
    run.analyses
}
