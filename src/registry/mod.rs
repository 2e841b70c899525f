//! Every analysis, once: its `--only` name (the key it fills in the report's `analyses`), its
//! help line, how it runs on one file's tables, how files' results combine, and what it computes
//! over the whole run. `--only`'s values and help, the MCP `only` enum, the scheduler
//! ([`run`]) and the docs list (docs/analyses/<name>.md) all come from [`REGISTRY`]
//! (a test checks they agree). Adding an analysis: its module in `analysis/`, one entry here
//! (and its field in `Analyses`), its render section.
//!
//! The registry sits between `analysis/` and its readers: the pipeline runs it ([`run`]), the
//! report holds what it fills ([`part::Analyses`]); it imports neither.

pub mod part;
pub mod run;

pub use part::{Analyses, AnalyzeOpts, Part};
pub use run::{Shared, finish, run_all, run_part};

use crate::analysis::{
    advisor, batch_audit, bubbles, cluster, communication, communication_ops,
    communication_ops_vendor, composition, cross_rank, device_time, dispatch, efficiency,
    graph_mode, kernel_types, mtp, op_types, phases, ranks, step_sync, top_events,
};
use crate::model::Tables;

/// One analysis.
pub struct Analysis {
    /// The `--only` name and the key it fills under `analyses`.
    pub name: &'static str,
    /// One line for `--only`'s help and the MCP schema.
    pub help: &'static str,
    /// Fills this analysis's fields of a part from one file's tables and what is derived from
    /// them once for every analysis ([`Shared`]: the device lists, the step windows).
    pub run: fn(&Tables, &Shared, &AnalyzeOpts, &mut Part),
    /// Moves this analysis's per-file results from the second part into the first, after what
    /// the first holds (files in input order).
    pub merge: fn(&mut Part, &mut Part),
    /// The run-level result over every file's part, when there is one.
    pub finish: Option<fn(&mut Part, &AnalyzeOpts)>,
    /// Measured cost order on the 20 M-row db and json1g (docs/performance.md): lower starts
    /// first, so the slowest tasks do not start last.
    pub start_order: u8,
}

fn append<T>(a: &mut Vec<T>, b: &mut Vec<T>) {
    a.append(b);
}

/// In `--only` order (the order the report's keys follow).
pub const REGISTRY: &[Analysis] = &[
    Analysis {
        name: "device_time",
        help: "busy, free and overlap time per device, against the vendor's own sums",
        run: |t, d, _, p| p.analyses.device_time = device_time::compute(t, d),
        merge: |a, b| append(&mut a.analyses.device_time, &mut b.analyses.device_time),
        finish: None,
        start_order: 4,
    },
    Analysis {
        name: "kernel_types",
        help: "kernel time by type (compute, communication, memory), HTA's breakdown",
        run: |t, d, _, p| {
            let (all, steps) = rayon::join(
                || kernel_types::compute(t, d),
                || kernel_types::compute_complete_steps(t, d),
            );
            p.analyses.kernel_types = all;
            p.analyses.kernel_types_complete_steps = steps;
        },
        merge: |a, b| {
            append(&mut a.analyses.kernel_types, &mut b.analyses.kernel_types);
            append(
                &mut a.analyses.kernel_types_complete_steps,
                &mut b.analyses.kernel_types_complete_steps,
            );
        },
        finish: None,
        start_order: 3,
    },
    Analysis {
        name: "bubbles",
        help: "device idle gaps with their cause, neighbours and distribution",
        run: |t, d, o, p| p.analyses.bubbles = bubbles::compute(t, d, &o.bubbles),
        merge: |a, b| append(&mut a.analyses.bubbles, &mut b.analyses.bubbles),
        finish: None,
        start_order: 0,
    },
    Analysis {
        name: "dispatch",
        help: "launch links, launch latency, queue depth, host-bound idle, host API time",
        run: |t, d, o, p| {
            p.analyses.dispatch = dispatch::compute(t, d, o.bubbles.min_gap_ns, o.top_n)
        },
        merge: |a, b| append(&mut a.analyses.dispatch, &mut b.analyses.dispatch),
        finish: None,
        start_order: 1,
    },
    Analysis {
        name: "step_sync",
        help: "per step: host synchronization waits and device idle",
        run: |t, d, _, p| p.analyses.step_sync = step_sync::compute(t, d),
        merge: |a, b| append(&mut a.analyses.step_sync, &mut b.analyses.step_sync),
        finish: None,
        start_order: 11,
    },
    Analysis {
        name: "mtp",
        help: "multi-token-prediction draft / verify synchronization",
        run: |t, d, _, p| p.analyses.mtp = mtp::compute(t, d),
        merge: |a, b| append(&mut a.analyses.mtp, &mut b.analyses.mtp),
        finish: None,
        start_order: 12,
    },
    Analysis {
        name: "top_events",
        help: "the longest and most frequent device events",
        run: |t, d, o, p| p.analyses.top_events = top_events::compute(t, d, o.top_n),
        merge: |a, b| append(&mut a.analyses.top_events, &mut b.analyses.top_events),
        finish: None,
        start_order: 8,
    },
    Analysis {
        name: "op_types",
        help: "compute time per op type (inputs with kernel details)",
        run: |t, d, _, p| p.analyses.op_types = op_types::compute(t, d),
        merge: |a, b| append(&mut a.analyses.op_types, &mut b.analyses.op_types),
        finish: None,
        start_order: 9,
    },
    Analysis {
        name: "efficiency",
        help: "FLOPs, bytes, MFU and roofline class per operator, from the capture's shapes",
        run: |t, s, o, p| p.analyses.efficiency = efficiency::compute(t, s, &s.windows, &o.peaks),
        merge: |a, b| append(&mut a.analyses.efficiency, &mut b.analyses.efficiency),
        finish: None,
        start_order: 2,
    },
    Analysis {
        name: "composition",
        help: "compute-stream composition: kernel families and their shares",
        run: |t, d, o, p| p.analyses.composition = composition::compute(t, d, o.top_n),
        merge: |a, b| append(&mut a.analyses.composition, &mut b.analyses.composition),
        finish: None,
        start_order: 5,
    },
    Analysis {
        name: "communication",
        help: "communication shares against two labelled denominators",
        run: |t, d, _, p| p.analyses.communication = communication::compute(t, d),
        merge: |a, b| append(&mut a.analyses.communication, &mut b.analyses.communication),
        finish: None,
        start_order: 6,
    },
    Analysis {
        name: "communication_ops",
        help: "per collective: transit, wait, synchronization, bandwidth per link, slow rank",
        run: |t, d, o, p| {
            // Recomputed from HCCL plane tasks; a CSV-only export's from its communication.json.
            let mut devices = communication_ops::compute(t, d, &d.windows, o.top_n);
            devices.extend(communication_ops_vendor::compute(t, d, o.top_n));
            p.analyses.communication_ops.devices = devices;
        },
        merge: |a, b| {
            append(
                &mut a.analyses.communication_ops.devices,
                &mut b.analyses.communication_ops.devices,
            )
        },
        finish: None,
        start_order: 7,
    },
    Analysis {
        name: "graph_mode",
        help: "graph replays (CUDA/HIP graphs, Ascend ACLGraph): device time per replay and step, captures, ops inside graphs",
        run: |t, d, o, p| {
            let eager: Vec<String> = o.eager_map.iter().chain(&o.eager_beside).cloned().collect();
            (p.analyses.graph_mode, p.graph) =
                graph_mode::compute(t, d, &d.windows, o.top_n, &eager);
        },
        merge: |a, b| {
            append(
                &mut a.analyses.graph_mode.files,
                &mut b.analyses.graph_mode.files,
            );
            append(&mut a.graph, &mut b.graph);
        },
        finish: None,
        start_order: 0,
    },
    Analysis {
        name: "phases",
        help: "prefill / decode phase validation from vLLM markers",
        run: |t, _, _, p| p.analyses.phases = phases::compute(t),
        merge: |a, b| append(&mut a.analyses.phases, &mut b.analyses.phases),
        finish: None,
        start_order: 13,
    },
    Analysis {
        name: "batch_audit",
        help: "fixed real-batch decode audit (--batch)",
        run: |t, _, o, p| p.audits.push(batch_audit::compute(t, o.batch)),
        merge: |a, b| append(&mut a.audits, &mut b.audits),
        finish: Some(|p, o| {
            p.analyses.batch_audit =
                Some(batch_audit::merge(std::mem::take(&mut p.audits), o.batch))
        }),
        start_order: 10,
    },
    Analysis {
        name: "ranks",
        help: "rank anomalies: missing, CPU-only, truncated, failed, oversized, disjoint",
        run: |t, _, _, p| p.rank_facts = ranks::facts(t),
        merge: |a, b| append(&mut a.rank_facts, &mut b.rank_facts),
        finish: Some(|p, o| p.analyses.ranks = ranks::combine(&p.rank_facts, o.expected_ranks)),
        // A pass over every event (11 ms on json1g): started with the mid-cost analyses, so
        // the last to start are the ones of a few ms.
        start_order: 8,
    },
    Analysis {
        name: "layout",
        help: "the job's parallel layout (tp/pp/dp/ep), comparisons within peer sets, the pipeline, expert load",
        // What each file says about the job is gathered for every run (registry::run_part).
        run: |_, _, _, _| {},
        merge: |_, _| {},
        // Before cross_rank's finish consumes the step rows the peer sets are compared on.
        finish: Some(|p, o| {
            p.analyses.layout =
                cluster::compute(&p.job_facts, &p.extracts, &p.analyses.evidence, o.top_n)
        }),
        start_order: 15,
    },
    Analysis {
        name: "cross_rank",
        help: "per step and rank: computing, exposed communication, free; who arrives last",
        run: |t, s, o, p| p.extracts = cross_rank::extract(t, s, &s.windows, o.bubbles.min_gap_ns),
        merge: |a, b| append(&mut a.extracts, &mut b.extracts),
        finish: Some(|p, o| {
            let roles = cluster::roles(&p.job_facts, &p.extracts);
            p.analyses.cross_rank =
                cross_rank::combine(std::mem::take(&mut p.extracts), o.top_n, &roles)
        }),
        start_order: 2,
    },
    Analysis {
        name: "advisor",
        help: "ranked findings: what to change, the time at stake, the evidence (docs/advisor.md)",
        run: |t, d, _, p| p.advice = advisor::file_findings(t, d),
        merge: |a, b| append(&mut a.advice, &mut b.advice),
        // After every other finish (the registry's order): it reads bubbles, cross_rank,
        // graph_mode and efficiency.
        finish: Some(|p, _| {
            let a = &p.analyses;
            let advisor = advisor::finish(
                std::mem::take(&mut p.advice),
                &advisor::RunInputs {
                    bubbles: &a.bubbles,
                    cross_rank: &a.cross_rank,
                    graph_mode: &a.graph_mode,
                    layout: &a.layout,
                    efficiency: &a.efficiency,
                },
            );
            p.analyses.advisor = advisor;
        }),
        start_order: 1,
    },
];

/// Every analysis's name, in `--only` order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|a| a.name).collect()
}

/// The analysis called `name`.
pub fn find(name: &str) -> Option<&'static Analysis> {
    REGISTRY.iter().find(|a| a.name == name)
}
