//! Comparisons within roles: the ranks of one peer set (the data-parallel replicas of a stage)
//! and of one tensor-parallel group run the same work, so a slower one is a straggler and a late
//! one keeps the others waiting. Each set is compared as its own cohort by cross_rank's rules
//! (slowest by device time, arrival in the collectives its members share, the same margins), on
//! profscope's numbers when every member has device events, and also on the vendor's summaries
//! (step_trace_time.csv / StepTraceTime, communication.json / CommAnalyzerTime) when some
//! members have only those.

use super::facts::JobFacts;
use crate::analysis::cross_rank::{self, Cohort, DeviceExtract, Roles, StepRow, StepSource};
use crate::analysis::devices::DeviceRef;
use crate::analysis::evidence::FileEvidence;
use crate::analysis::stats::quantile_f64;
use crate::contract::layout::*;
use std::collections::BTreeMap;

/// Every comparison the layout makes possible: per peer set, then per TP group.
pub fn compare(
    l: &Layout,
    facts: &[JobFacts],
    extracts: &[DeviceExtract],
    evidence: &[FileEvidence],
    top_n: usize,
) -> Vec<PeerComparison> {
    let mut sets: Vec<(&str, Option<u32>, &[i32])> = l
        .peer_sets
        .iter()
        .map(|p| ("dp_replicas", p.stage, p.ranks.as_slice()))
        .collect();
    let stage_of: BTreeMap<i32, Option<u32>> =
        l.ranks.iter().map(|r| (r.rank, r.pp_stage)).collect();
    for g in l
        .groups
        .iter()
        .filter(|g| g.kind == GroupKind::Tp && g.ranks.len() > 1)
    {
        let stage = g
            .ranks
            .first()
            .and_then(|r| stage_of.get(r).copied().flatten());
        sets.push(("tp_group", stage, g.ranks.as_slice()));
    }
    let vendor = vendor_extracts(facts, evidence);
    let mut out: Vec<PeerComparison> = Vec::new();
    for (role, stage, ranks) in sets {
        let ours: Vec<DeviceExtract> = extracts
            .iter()
            .filter(|x| ranks.binary_search(&x.device.rank).is_ok())
            .cloned()
            .collect();
        let theirs: Vec<DeviceExtract> = vendor
            .iter()
            .filter(|x| ranks.binary_search(&x.device.rank).is_ok())
            .cloned()
            .collect();
        let events = one(role, stage, ranks, ours, CompareSource::Events, top_n);

        let complete = events.as_ref().is_some_and(|c| c.missing.is_empty());
        out.extend(events);
        if !complete {
            out.extend(one(
                role,
                stage,
                ranks,
                theirs,
                CompareSource::Vendor,
                top_n,
            ));
        }
    }
    for c in &mut out {
        c.explanation = explain(c, facts, evidence);
    }
    out
}

/// Why the member the others wait for is late, when its own pipeline point-to-point ops say so:
/// it spends longer per step than its peers' median in sends and receives (a send to a slow stage
/// waits for it as a receive from it does), by at least half its mean lateness. On the vendor's
/// numbers only receives are known (`Bubble`).
fn explain(c: &PeerComparison, facts: &[JobFacts], evidence: &[FileEvidence]) -> String {
    let Some(w) = c.waited_for.as_ref().filter(|w| w.stands_out) else {
        return String::new();
    };
    let receive = |rank: i32| -> Option<f64> {
        let f = facts.iter().find(|f| f.rank == rank)?;
        let per_step: Vec<i64> = match c.source {
            CompareSource::Events => f.p2p.iter().map(|x| x.1.saturating_add(x.2)).collect(),
            CompareSource::Vendor => evidence
                .iter()
                .find(|e| e.file == f.file)?
                .vendor_steps
                .iter()
                .map(|v| v.bubble_ns)
                .collect(),
        };
        (!per_step.is_empty()).then(|| per_step.iter().sum::<i64>() as f64 / per_step.len() as f64)
    };
    let Some(own) = receive(w.rank) else {
        return String::new();
    };
    let others: Vec<i64> = c
        .ranks
        .iter()
        .filter(|&&r| r != w.rank)
        .filter_map(|&r| receive(r).map(|x| x as i64))
        .collect();
    if others.is_empty() {
        return String::new();
    }
    let more = own - crate::analysis::stats::median(others);
    if more <= 0.0 || more < w.mean_lateness_ns / 2.0 {
        return String::new();
    }
    format!(
        "rank {} waits {} per step more than its peers in pipeline {}: its lateness comes from the stages it exchanges with (see the pipeline), not from its own work",
        w.rank,
        crate::units::human_duration(more),
        match c.source {
            CompareSource::Events => "sends and receives",
            CompareSource::Vendor => "receives (the vendor's Bubble)",
        }
    )
}

/// One set compared from `devs` (its members' extracts of one kind); None with fewer than two.
fn one(
    role: &str,
    stage: Option<u32>,
    members: &[i32],
    devs: Vec<DeviceExtract>,
    source: CompareSource,
    top_n: usize,
) -> Option<PeerComparison> {
    if devs.len() < 2 {
        return None;
    }
    let cr = cross_rank::combine(devs, top_n, &Roles::Peers);
    let c: Cohort = cr.cohorts.into_iter().max_by_key(|c| c.ranks.len())?;
    if c.ranks.len() < 2 {
        return None;
    }
    let mut ranks: Vec<i32> = c.ranks.iter().map(|r| r.device.rank).collect();
    ranks.sort_unstable();
    let missing = members
        .iter()
        .copied()
        .filter(|r| !ranks.contains(r))
        .collect();
    let spread = |f: &dyn Fn(&crate::analysis::cross_rank::RankSteps) -> f64| rank_spread(&c, f);
    let stands_out = c.slowest.as_ref().is_some_and(|s| s.stands_out)
        || c.waited_for.as_ref().is_some_and(|w| w.stands_out);
    Some(PeerComparison {
        role: role.to_string(),
        stage,
        missing,
        source,
        steps_compared: c.steps_compared,
        step_mean_ns: spread(&|x| x.step_mean_ns),
        computing_pct: spread(&|x| x.computing_pct),
        slowest: c.slowest,
        waited_for: c.waited_for,
        stands_out,
        ranks,
        explanation: String::new(),
    })
}

/// Min, p50, p90, max of `f` over the cohort's ranks, with the ranks at the ends.
fn rank_spread(
    c: &Cohort,
    f: &dyn Fn(&crate::analysis::cross_rank::RankSteps) -> f64,
) -> RankSpread {
    let mut v: Vec<(f64, i32)> = c.ranks.iter().map(|r| (f(r), r.device.rank)).collect();
    if v.is_empty() {
        return RankSpread::default();
    }
    v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let xs: Vec<f64> = v.iter().map(|x| x.0).collect();
    RankSpread {
        min: xs[0],
        min_rank: v[0].1,
        p50: quantile_f64(&xs, 0.5),
        p90: quantile_f64(&xs, 0.9),
        max: xs[xs.len() - 1],
        max_rank: v[v.len() - 1].1,
    }
}

/// Per file with the vendor's step table: its steps and collectives as a cross-rank extract of
/// the `vendor` cohort (step windows start at the step's first collective when it has one).
pub fn vendor_extracts(facts: &[JobFacts], evidence: &[FileEvidence]) -> Vec<DeviceExtract> {
    let by_file: BTreeMap<&str, &FileEvidence> =
        evidence.iter().map(|e| (e.file.as_str(), e)).collect();
    let mut out = Vec::new();
    for f in facts.iter().filter(|f| f.rank >= 0) {
        let Some(ev) = by_file.get(f.file.as_str()) else {
            continue;
        };
        // step_trace_time.csv before analysis.db's copy of it; one row per step.
        let mut rows: BTreeMap<i64, (bool, [i64; 4])> = BTreeMap::new();
        for v in &ev.vendor_steps {
            let Some(step) = v.step else { continue };
            let csv = !v.source.starts_with("analysis.db");
            let x = [
                v.computing_ns,
                v.communication_ns,
                v.communication_not_overlapped_ns,
                v.free_ns,
            ];
            match rows.get(&step) {
                Some((true, _)) => {}
                _ => {
                    rows.insert(step, (csv, x));
                }
            }
        }
        if rows.is_empty() {
            continue;
        }
        let (mut names, mut groups) = (Interned::default(), Interned::default());
        let mut collectives = Vec::new();
        let mut first_in_step: BTreeMap<i64, i64> = BTreeMap::new();
        for op in f.vendor_ops.iter().filter(|o| !o.p2p) {
            let n = names.id(&op.name);
            let g = groups.id(&op.group);
            collectives.push((n, g, op.start_ns, op.end_ns));
            if let Some(s) = op.step {
                let e = first_in_step.entry(s).or_insert(op.start_ns);
                *e = (*e).min(op.start_ns);
            }
        }
        collectives.sort_by_key(|c| (c.2, c.3));
        let steps = rows
            .into_iter()
            .map(|(key, (_, [c, m, nov, free]))| {
                let start = first_in_step.get(&key).copied().unwrap_or(0);
                StepRow {
                    label: format!("step {key}"),
                    key,
                    host_ns: 0,
                    start_ns: start,
                    end_ns: start + c + nov + free,
                    computing_ns: c,
                    communication_ns: m,
                    communication_not_overlapped_ns: nov,
                    free_ns: free,
                    async_copy_ns: 0,
                    async_copy_not_overlapped_ns: 0,
                    compute_kernels: 0,
                    bubbles: 0,
                    bubble_ns: 0,
                }
            })
            .collect();
        out.push(DeviceExtract {
            device: DeviceRef {
                file: f.file.clone(),
                rank: f.rank,
                device_id: -1,
                process: "vendor summary".into(),
            },
            cohort: "vendor",
            step_source: StepSource::ProfilerStep,
            steps,
            names: names.list,
            groups: groups.list,
            collectives,
            host: String::new(),
            group_kinds: Vec::new(),
        });
    }
    out
}

/// Strings numbered in first-seen order.
#[derive(Default)]
struct Interned {
    list: Vec<String>,
    ids: std::collections::HashMap<String, u32>,
}

impl Interned {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&k) = self.ids.get(s) {
            return k;
        }
        self.list.push(s.to_string());
        let k = self.list.len() as u32 - 1;
        self.ids.insert(s.to_string(), k);
        k
    }
}
