//! The types the analyses fill and the scheduler reads: the options (`AnalyzeOpts`), the
//! analyses' part of the report (`Analyses`) and one set of tables' results (`Part`). Both the
//! registry ([`super::REGISTRY`]) and the scheduler ([`super::run`]) import them from here,
//! so neither imports the other's types.

use crate::analysis::{
    advisor::Keyed,
    batch_audit::BatchAudit,
    bubbles::{BubbleOpts, DeviceBubbles},
    cluster::{JobFacts, Layout},
    communication::Communication,
    communication_ops::CommunicationOps,
    composition::Composition,
    cross_rank::{CrossRank, DeviceExtract},
    device_time::DeviceTime,
    dispatch::DeviceDispatch,
    efficiency::{DeviceEfficiency, PeakOverride},
    evidence::FileEvidence,
    graph_mode::{GraphMode, extract::GraphExtract},
    kernel_types::KernelTypes,
    mtp::Mtp,
    op_types::OpTypes,
    phases::Phases,
    ranks::{FileFacts, Ranks},
    step_sync::StepSyncSummary,
    top_events::TopEvents,
    vendor_agreement::VendorAgreement,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone)]
pub struct AnalyzeOpts {
    pub bubbles: BubbleOpts,
    /// Rows in top-N lists.
    pub top_n: usize,
    /// The batch size the decode audit requires; None: all qualified replays must agree.
    pub batch: Option<i64>,
    /// Run only these analyses (names as in `registry::REGISTRY`); None: all.
    pub only: Option<Vec<String>>,
    /// How many ranks the run should have (`--expected-ranks`); None: a file's world size.
    pub expected_ranks: Option<u32>,
    /// `--peak-tflops` / `--peak-gbps`: the efficiency analysis' peaks instead of the chip's.
    pub peaks: PeakOverride,
    /// Files read as eager maps of the graph replays (`--eager-map`): their steps are kept for
    /// graph mode, and they are left out of every other analysis.
    pub eager_map: Vec<String>,
    /// Files beside a replay file that may be an eager run of it (the pipeline's second look):
    /// their steps are kept, and they are companions only when they map replays.
    pub eager_beside: Vec<String>,
}

impl Default for AnalyzeOpts {
    fn default() -> Self {
        AnalyzeOpts {
            bubbles: BubbleOpts::default(),
            top_n: 10,
            batch: None,
            only: None,
            expected_ranks: None,
            peaks: PeakOverride::default(),
            eager_map: Vec::new(),
            eager_beside: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Analyses {
    /// Self-audit against the vendor's own numbers in the input (computed from device_time).
    pub vendor_agreement: VendorAgreement,
    /// What each input file can support (launch coverage, stream captures, the device's share
    /// of the host window, the vendor's step table): always computed, the verdict's evidence.
    pub evidence: Vec<FileEvidence>,
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
    /// Compute time per op type (inputs with kernel details: db, kernel CSVs, text exports).
    pub op_types: Vec<OpTypes>,
    /// FLOPs, bytes, MFU and roofline class per operator, per device.
    #[serde(default)]
    pub efficiency: Vec<DeviceEfficiency>,
    pub composition: Vec<Composition>,
    pub communication: Vec<Communication>,
    /// Per collective op: transit / wait / synchronization / idle, bandwidth per link type, the
    /// link matrix; the slow rank and slow link.
    pub communication_ops: CommunicationOps,
    /// Graph replays, captures, replays per step and the ops inside graphs, per file.
    pub graph_mode: GraphMode,
    pub phases: Vec<Phases>,
    /// None when not run (`--only`).
    pub batch_audit: Option<BatchAudit>,
    /// Rank anomalies: missing, CPU-only, summary-only, truncated, failed, oversized, disjoint
    /// windows.
    pub ranks: Ranks,
    /// The job's parallel layout, the comparisons within its roles, the pipeline and the
    /// expert-parallel load.
    #[serde(default)]
    pub layout: Layout,
    /// Per step and rank: computing / exposed communication / free, slowest rank and why,
    /// collective start skew.
    pub cross_rank: CrossRank,
    pub advisor: crate::contract::Advisor,
}

/// The results of one set of tables (one file, or all files at once) and what the run-level
/// analyses (ranks, cross_rank, the batch verdict) need from it.
#[derive(Default, Serialize, Deserialize)]
pub struct Part {
    pub analyses: Analyses,
    pub rank_facts: Vec<FileFacts>,
    pub extracts: Vec<DeviceExtract>,
    /// What each file says about the job (always computed, like the evidence).
    pub job_facts: Vec<JobFacts>,
    /// Per-file decode audits, merged into one verdict over the run.
    pub audits: Vec<BatchAudit>,
    /// The advisor's per-file findings, merged by its finish.
    pub advice: Vec<Keyed>,
    /// What graph mode hands to the run's finish per file (captures, unmatched sequences,
    /// eager steps): companions are matched across files from it.
    #[serde(default)]
    pub graph: Vec<GraphExtract>,
    /// The input files of these tables.
    #[serde(default)]
    pub files: Vec<String>,
}
