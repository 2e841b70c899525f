//! Runs every timeline analysis on the tables and gathers the results for the report.

use crate::analysis::{
    batch_audit::{self, BatchAudit},
    bubbles::{self, BubbleOpts, DeviceBubbles},
    communication::{self, Communication},
    communication_ops::{self, CommunicationOps},
    composition::{self, Composition},
    cross_rank::{self, CrossRank, DeviceExtract},
    device_time::{self, DeviceTime},
    devices,
    dispatch::{self, DeviceDispatch},
    kernel_types::{self, KernelTypes},
    mtp::{self, Mtp},
    op_types::{self, OpTypes},
    phases::{self, Phases},
    ranks::{self, FileFacts, Ranks},
    step_sync::{self, StepSyncSummary},
    top_events::{self, TopEvents},
    vendor_agreement::{self, VendorAgreement},
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
    "dispatch",
    "step_sync",
    "mtp",
    "top_events",
    "op_types",
    "composition",
    "communication",
    "communication_ops",
    "phases",
    "batch_audit",
    "ranks",
    "cross_rank",
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

#[derive(Debug, Clone, Default, Serialize)]
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
pub struct Part {
    pub analyses: Analyses,
    pub rank_facts: Vec<FileFacts>,
    pub extracts: Vec<DeviceExtract>,
}

/// Runs every analysis on one set of tables.
pub fn run_all(t: &Tables, o: &AnalyzeOpts) -> Analyses {
    finish(vec![run_part(t, o)], o)
}

fn selected(o: &AnalyzeOpts, name: &str) -> bool {
    o.only.as_ref().is_none_or(|v| v.iter().any(|x| x == name))
}

/// Runs the per-file analyses (independent of each other) as parallel tasks, the slowest first
/// so the pool stays busy; `ranks` and `cross_rank` are left empty for [`finish`].
pub fn run_part(t: &Tables, o: &AnalyzeOpts) -> Part {
    let devs = devices::devices(t);
    let d = &devs;
    let on = |name: &str| selected(o, name);
    let (mut device_time, mut kernel_types, mut kernel_types_complete_steps) = <_>::default();
    let (mut bubbles, mut step_sync, mut mtp, mut extracts) = <_>::default();
    let mut dispatch = Vec::new();
    let (mut top_events, mut op_types, mut composition) = <_>::default();
    let (mut communication, mut phases, mut batch_audit, mut rank_facts) = <_>::default();
    let mut comm_ops = Vec::new();
    // Each task fills its own result when the analysis is selected (else it stays empty). The
    // order is by measured time on the 20 M-row db (docs/performance.md), longest first.
    rayon::scope(|s| {
        fn task<'s, T: Send + 's>(
            s: &rayon::Scope<'s>,
            yes: bool,
            out: &'s mut T,
            f: impl FnOnce() -> T + Send + 's,
        ) {
            if yes {
                s.spawn(move |_| *out = f());
            }
        }
        task(s, on("bubbles"), &mut bubbles, || {
            bubbles::compute(t, d, &o.bubbles)
        });
        task(s, on("dispatch"), &mut dispatch, || {
            dispatch::compute(t, d, o.bubbles.min_gap_ns, o.top_n)
        });
        task(s, on("cross_rank"), &mut extracts, || {
            cross_rank::extract(t, d, o.bubbles.min_gap_ns)
        });
        task(s, on("kernel_types"), &mut kernel_types, || {
            kernel_types::compute(t, d)
        });
        task(s, on("device_time"), &mut device_time, || {
            device_time::compute(t, d)
        });
        task(s, on("composition"), &mut composition, || {
            composition::compute(t, d, o.top_n)
        });
        task(s, on("communication"), &mut communication, || {
            communication::compute(t, d)
        });
        task(s, on("communication_ops"), &mut comm_ops, || {
            communication_ops::compute(t, d, o.top_n)
        });
        task(s, on("top_events"), &mut top_events, || {
            top_events::compute(t, d, o.top_n)
        });
        task(s, on("op_types"), &mut op_types, || op_types::compute(t, d));
        task(s, on("batch_audit"), &mut batch_audit, || {
            Some(batch_audit::compute(t, o.batch))
        });
        task(s, on("step_sync"), &mut step_sync, || {
            step_sync::compute(t, d)
        });
        task(s, on("mtp"), &mut mtp, || mtp::compute(t, d));
        task(
            s,
            on("kernel_types"),
            &mut kernel_types_complete_steps,
            || kernel_types::compute_complete_steps(t, d),
        );
        task(s, on("phases"), &mut phases, || phases::compute(t));
        task(s, on("ranks"), &mut rank_facts, || ranks::facts(t));
    });
    Part {
        analyses: Analyses {
            vendor_agreement: VendorAgreement::default(),
            ranks: Ranks::default(),
            cross_rank: CrossRank::default(),
            device_time,
            kernel_types,
            kernel_types_complete_steps,
            bubbles,
            dispatch,
            step_sync,
            mtp,
            top_events,
            op_types,
            composition,
            communication,
            communication_ops: CommunicationOps {
                devices: comm_ops,
                ..CommunicationOps::default()
            },
            phases,
            batch_audit,
        },
        rank_facts,
        extracts,
    }
}

/// The run's analyses from its parts (in input order): per-file lists concatenated, the batch
/// verdict re-derived over all files, ranks and cross_rank computed over every part.
pub fn finish(parts: Vec<Part>, o: &AnalyzeOpts) -> Analyses {
    let mut a = Analyses::default();
    let mut facts = Vec::new();
    let mut extracts = Vec::new();
    let mut audits = Vec::new();
    for p in parts {
        let x = p.analyses;
        a.device_time.extend(x.device_time);
        a.kernel_types.extend(x.kernel_types);
        a.kernel_types_complete_steps
            .extend(x.kernel_types_complete_steps);
        a.bubbles.extend(x.bubbles);
        a.dispatch.extend(x.dispatch);
        a.step_sync.extend(x.step_sync);
        a.mtp.extend(x.mtp);
        a.top_events.extend(x.top_events);
        a.op_types.extend(x.op_types);
        a.composition.extend(x.composition);
        a.communication.extend(x.communication);
        a.communication_ops
            .devices
            .extend(x.communication_ops.devices);
        a.phases.extend(x.phases);
        audits.extend(x.batch_audit);
        facts.extend(p.rank_facts);
        extracts.extend(p.extracts);
    }
    if selected(o, "batch_audit") {
        a.batch_audit = Some(batch_audit::merge(audits, o.batch));
    }
    if selected(o, "ranks") {
        a.ranks = ranks::combine(&facts, o.expected_ranks);
    }
    if selected(o, "cross_rank") {
        a.cross_rank = cross_rank::combine(extracts, o.top_n);
    }
    a.communication_ops.summary = communication_ops::summarize(&a.communication_ops.devices);
    a.vendor_agreement = vendor_agreement::compute(&a.device_time);
    a
}
