//! The pipeline across stages: per step, each stage's computing and its time in pipeline
//! receives (waiting for the stage before it in the forward pass, after it in the backward
//! pass; torch_npu's `Bubble`), and the stage the others wait for: the one that computes the
//! most in more steps than stages taking turns would (a binomial tail with chance 1 / stages,
//! times the stage count, below cross_rank's significance, as for ranks). A member's numbers are
//! profscope's (its device steps and its HCCL send / receive ops) when it has device events, the
//! vendor's step table (Computing, Bubble) when it has only summaries.

use super::facts::JobFacts;
use crate::analysis::cross_rank::{DeviceExtract, SIGNIFICANCE};
use crate::analysis::evidence::FileEvidence;
use crate::analysis::stats::{binomial_tail, median};
use crate::contract::layout::*;
use crate::units::human_duration;
use std::collections::BTreeMap;

/// One rank's numbers per step: step key → (computing, receive, send, step window), ns.
type PerStep = BTreeMap<i64, [i64; 4]>;

/// The pipeline view when the layout has two stages or more.
pub fn pipeline(
    l: &Layout,
    facts: &[JobFacts],
    extracts: &[DeviceExtract],
    evidence: &[FileEvidence],
) -> Option<Pipeline> {
    let mut stages: BTreeMap<u32, Vec<i32>> = BTreeMap::new();
    for r in l.ranks.iter().filter(|r| r.present) {
        if let Some(s) = r.pp_stage {
            stages.entry(s).or_default().push(r.rank);
        }
    }
    if stages.len() < 2 {
        return None;
    }
    let mut per_rank: BTreeMap<i32, (CompareSource, PerStep)> = BTreeMap::new();
    for f in facts.iter().filter(|f| f.rank >= 0) {
        if let Some(x) = ours(f, extracts) {
            per_rank.insert(f.rank, (CompareSource::Events, x));
        } else if let Some(x) = vendor(f, evidence) {
            per_rank.entry(f.rank).or_insert((CompareSource::Vendor, x));
        }
    }
    // Steps every member with numbers has.
    let mut keys: Option<Vec<i64>> = None;
    for (_, s) in per_rank.values() {
        let k: Vec<i64> = s.keys().copied().collect();
        keys = Some(match keys {
            None => k,
            Some(prev) => prev.into_iter().filter(|x| s.contains_key(x)).collect(),
        });
    }
    let keys = keys.unwrap_or_default();
    if keys.is_empty() {
        return None;
    }
    let n = stages.len();
    let stage_list: Vec<(u32, Vec<i32>)> = stages
        .into_iter()
        .map(|(s, rs)| {
            (
                s,
                rs.into_iter()
                    .filter(|r| per_rank.contains_key(r))
                    .collect::<Vec<i32>>(),
            )
        })
        .filter(|(_, rs)| !rs.is_empty())
        .collect();
    if stage_list.len() < 2 {
        return None;
    }
    // Per stage and step: the members' mean of each number.
    let mean = |rs: &[i32], k: i64, i: usize| -> f64 {
        rs.iter().map(|r| per_rank[r].1[&k][i] as f64).sum::<f64>() / rs.len() as f64
    };
    let mut slowest = vec![0u64; stage_list.len()];
    let mut excess = vec![0f64; stage_list.len()];
    for &k in &keys {
        let comp: Vec<f64> = stage_list.iter().map(|(_, rs)| mean(rs, k, 0)).collect();
        let top = comp.iter().copied().fold(f64::MIN, f64::max);
        let at: Vec<usize> = (0..comp.len()).filter(|&i| comp[i] == top).collect();
        if at.len() == 1 {
            slowest[at[0]] += 1;
            let others: Vec<i64> = (0..comp.len())
                .filter(|&i| i != at[0])
                .map(|i| comp[i] as i64)
                .collect();
            excess[at[0]] += top - median(others);
        }
    }
    let m = keys.len() as f64;
    let per_stage: Vec<StageRow> = stage_list
        .iter()
        .enumerate()
        .map(|(i, (s, rs))| StageRow {
            stage: *s,
            ranks: rs.clone(),
            source: if rs.iter().all(|r| per_rank[r].0 == CompareSource::Events) {
                CompareSource::Events
            } else {
                CompareSource::Vendor
            },
            computing_ns_per_step: keys.iter().map(|&k| mean(rs, k, 0)).sum::<f64>() / m,
            receive_ns_per_step: keys.iter().map(|&k| mean(rs, k, 1)).sum::<f64>() / m,
            send_ns_per_step: keys.iter().map(|&k| mean(rs, k, 2)).sum::<f64>() / m,
            step_ns_per_step: keys.iter().map(|&k| mean(rs, k, 3)).sum::<f64>() / m,
            slowest_in_steps: slowest[i],
        })
        .collect();
    let slow_stage = slow_stage(&per_stage, &excess, keys.len() as u64);
    let bubble: f64 = per_stage.iter().map(|s| s.receive_ns_per_step).sum();
    let statement = statement(&per_stage, slow_stage.as_ref(), keys.len(), n);
    Some(Pipeline {
        stages: n as u32,
        steps_compared: keys.len() as u64,
        per_stage,
        slow_stage,
        bubble_ns_per_step: bubble,
        statement,
    })
}

/// The stage most often the slowest, with its p-value.
fn slow_stage(rows: &[StageRow], excess: &[f64], of: u64) -> Option<SlowStage> {
    let top = rows.iter().map(|r| r.slowest_in_steps).max()?;
    let at: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].slowest_in_steps == top)
        .collect();
    if top == 0 || at.len() != 1 {
        return None;
    }
    let i = at[0];
    let n = rows.len();
    let p = (binomial_tail(top, of, 1.0 / n as f64) * n as f64).min(1.0);
    Some(SlowStage {
        stage: rows[i].stage,
        steps: top,
        of_steps: of,
        mean_excess_ns: excess[i] / top as f64,
        p_value: p,
        stands_out: p < SIGNIFICANCE,
    })
}

fn statement(rows: &[StageRow], slow: Option<&SlowStage>, steps: usize, n: usize) -> String {
    let waits = |except: u32| -> f64 {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r.stage != except)
            .map(|r| r.receive_ns_per_step)
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    match slow {
        Some(s) if s.stands_out => format!(
            "pipeline: stage {} holds it, computing the most in {} of {steps} steps (+{} per step over the other stages' median; p = {:.1e}); the other stages wait {} per step in receives",
            s.stage,
            s.steps,
            human_duration(s.mean_excess_ns),
            s.p_value,
            human_duration(waits(s.stage))
        ),
        Some(s) => format!(
            "pipeline: no stage stands out (stage {} computes the most in {} of {steps} steps; p = {:.2}, {n} stages taking turns); receives {} per step over the stages",
            s.stage,
            s.steps,
            s.p_value,
            human_duration(rows.iter().map(|r| r.receive_ns_per_step).sum())
        ),
        None => format!(
            "pipeline: no stage stands out over {steps} steps ({n} stages); receives {} per step over the stages",
            human_duration(rows.iter().map(|r| r.receive_ns_per_step).sum())
        ),
    }
}

/// A rank's numbers from its device events: its step rows (computing, window) and its HCCL
/// sends and receives per step.
fn ours(f: &JobFacts, extracts: &[DeviceExtract]) -> Option<PerStep> {
    let x = extracts
        .iter()
        .find(|x| x.device.file == f.file && !x.steps.is_empty())?;
    let p2p: BTreeMap<i64, (i64, i64)> = f.p2p.iter().map(|&(k, r, s)| (k, (r, s))).collect();
    Some(
        x.steps
            .iter()
            .map(|s| {
                let (r, snd) = p2p.get(&s.key).copied().unwrap_or((0, 0));
                (s.key, [s.computing_ns, r, snd, s.end_ns - s.start_ns])
            })
            .collect(),
    )
}

/// A rank's numbers from the vendor's step table (Computing, Bubble; the window is computing +
/// communication not overlapped + free).
fn vendor(f: &JobFacts, evidence: &[FileEvidence]) -> Option<PerStep> {
    let ev = evidence.iter().find(|e| e.file == f.file)?;
    let out: PerStep = ev
        .vendor_steps
        .iter()
        .filter_map(|v| {
            Some((
                v.step?,
                [
                    v.computing_ns,
                    v.bubble_ns,
                    0,
                    v.computing_ns + v.communication_not_overlapped_ns + v.free_ns,
                ],
            ))
        })
        .collect();
    (!out.is_empty()).then_some(out)
}
