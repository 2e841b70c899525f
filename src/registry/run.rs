//! The scheduler that runs the registry's analyses ([`super::REGISTRY`]) on one file's tables
//! and combines files' parts; the types it fills (`Analyses`, `Part`, `AnalyzeOpts`) are
//! [`super::part`]'s.

use super::part::{Analyses, AnalyzeOpts, Part};
use super::{Analysis, REGISTRY};
use crate::analysis::cross_rank::StepWindows;
use crate::analysis::devices::Device;
use crate::analysis::graph_mode::{self, extract::GraphExtract};
use crate::analysis::{cluster, communication_ops, devices, evidence, ranks, vendor_agreement};
use crate::model::Tables;

/// What every analysis of one set of tables reads, derived once: the device lists (before the
/// analyses start) and the step windows (on first use). Reads as the device lists.
pub struct Shared<'t> {
    pub devices: Vec<Device>,
    pub windows: StepWindows<'t>,
}

impl std::ops::Deref for Shared<'_> {
    type Target = [Device];
    fn deref(&self) -> &[Device] {
        &self.devices
    }
}

/// Runs every analysis on one set of tables.
pub fn run_all(t: &Tables, o: &AnalyzeOpts) -> Analyses {
    finish(vec![run_part(t, o)], o)
}

/// True when analysis `name` runs under `o` (`--only`).
pub fn selected(o: &AnalyzeOpts, name: &str) -> bool {
    o.only.as_ref().is_none_or(|v| v.iter().any(|x| x == name))
}

/// Runs the selected analyses of the registry on one set of tables as parallel tasks (they are
/// independent of each other), the slowest first so the pool stays busy; the run-level results
/// are left for [`finish`].
pub fn run_part(t: &Tables, o: &AnalyzeOpts) -> Part {
    let t0 = std::time::Instant::now();
    let devs = Shared {
        devices: devices::devices(t),
        windows: StepWindows::new(t),
    };
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
    let mut facts = Vec::new();
    let mut job = Vec::new();
    rayon::scope_fifo(|s| {
        // The evidence the verdict rests on, and what each file says about the job, are always
        // computed (not an `--only` choice).
        let (all, facts, job) = (&devs, &mut facts, &mut job);
        s.spawn_fifo(move |_| {
            let started = t0.elapsed().as_secs_f64();
            *facts = evidence::facts(t, all);
            *job = cluster::facts(t, all, &all.windows);
            if timing {
                let done = t0.elapsed().as_secs_f64();
                eprintln!("analysis evidence: {started:.3} s .. {done:.3} s");
            }
        });
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
    let mut out = Part {
        files: t.files.path.clone(),
        ..Part::default()
    };
    out.analyses.evidence = facts;
    out.job_facts = job;
    for (a, mut part) in order.iter().zip(parts) {
        (a.merge)(&mut out, &mut part);
    }
    out
}

/// The run's analyses from its parts (in input order): per-file lists concatenated, then each
/// selected analysis's run-level result (the batch verdict over all files, ranks, cross_rank),
/// the communication summary and the vendor agreement.
pub fn finish(mut parts: Vec<Part>, o: &AnalyzeOpts) -> Analyses {
    let res = {
        let x: Vec<&GraphExtract> = parts.iter().flat_map(|p| &p.graph).collect();
        graph_mode::companions::resolve(&x, &o.eager_map, &o.eager_beside)
    };
    for p in parts.iter_mut() {
        if let [file] = p.files.as_slice()
            && res.of(file).is_some()
        {
            *p = companion_part(std::mem::take(p));
        }
    }
    let mut run = Part::default();
    for mut p in parts {
        run.analyses.evidence.append(&mut p.analyses.evidence);
        run.job_facts.append(&mut p.job_facts);
        for a in REGISTRY {
            (a.merge)(&mut run, &mut p);
        }
    }
    // Before cross_rank's finish consumes the step rows the vendor's step table is checked
    // against.
    run.analyses.vendor_agreement = vendor_agreement::compute(
        &run.analyses.device_time,
        &run.extracts,
        &run.analyses.communication_ops.devices,
        &run.analyses.evidence,
        &run.job_facts,
    );
    for a in REGISTRY.iter().filter(|a| selected(o, a.name)) {
        if let Some(f) = a.finish {
            f(&mut run, o);
        }
    }
    {
        let x: Vec<&GraphExtract> = run.graph.iter().collect();
        graph_mode::companions::apply(&mut run.analyses.graph_mode, &x, &res, o.top_n);
    }
    run.analyses.ranks.companions = res
        .companions
        .iter()
        .map(|c| ranks::CompanionFile {
            file: c.file.clone(),
            rank: c.rank,
            role: c.role.to_string(),
            of: c.of.clone(),
            why: c.why.clone(),
        })
        .collect();
    let a = &mut run.analyses;
    let offsets: Vec<(&str, i32, i64)> = a
        .cross_rank
        .cohorts
        .iter()
        .flat_map(|c| {
            c.clock
                .ranks
                .iter()
                .map(move |r| (c.format, r.rank, r.applied_ns))
        })
        .filter(|o| o.2 != 0)
        .collect();
    ranks::apply_clock_offsets(&mut a.ranks, &offsets);
    a.communication_ops.summary = communication_ops::summarize(&a.communication_ops.devices);
    run.analyses
}

/// A companion file's part: its graph mode and extract only (it is read for the ops of another
/// file's replays, not summed with it: no device time, bubbles, causes, advice, evidence or
/// rank row of its own).
fn companion_part(p: Part) -> Part {
    Part {
        analyses: Analyses {
            graph_mode: p.analyses.graph_mode,
            ..Analyses::default()
        },
        graph: p.graph,
        files: p.files,
        ..Part::default()
    }
}
