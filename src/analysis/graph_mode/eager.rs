//! An eager run of the same workload as the map of a graph run's ops (`--eager-map`, or
//! recognised beside it): serving guides keep graph mode for the measurement and profile the
//! same workload eagerly "only when needed for operator mapping". Each distinct step's device
//! events in order, with the ops that launched them, become [`Recorded`] launches that a
//! replayed sequence is aligned to (docs/analyses/graph_mode.md).

use super::calls::{device_token, labels};
use super::extract::{Label, Recorded, Strings, Token};
use crate::analysis::cross_rank::Windows;
use crate::analysis::devices::Device;
use crate::analysis::devices::launches::{NO_LAUNCH, launches};
use crate::analysis::gallop::Gallop;
use crate::model::Tables;
use crate::model::hash::FxHashSet;

/// Distinct steps kept per eager file.
pub const MAX_STEPS: usize = 8;
/// Device events kept per step (a file without step windows is one step).
pub const MAX_STEP_EVENTS: usize = 200_000;

/// The distinct steps of one file's devices (by the step of each event's launch, else its own
/// start), first seen first, at most [`MAX_STEPS`] of at most [`MAX_STEP_EVENTS`] events each.
pub fn steps(t: &Tables, devs: &[&Device], w: &Windows, s: &mut Strings) -> Vec<Recorded> {
    // (start, event, launch) over the file's devices, by start.
    let mut all: Vec<(i64, u32, u32)> = Vec::new();
    for d in devs {
        let l = launches(t, d);
        all.extend(
            d.events
                .iter()
                .zip(&l.launch)
                .map(|(&i, &c)| (t.events.ts_ns[i as usize], i, c)),
        );
    }
    all.sort_unstable();
    let mut cursor = Gallop::default();
    let step_of = |&(ts, _, c): &(i64, u32, u32)| {
        let at = if c == NO_LAUNCH {
            ts
        } else {
            t.events.ts_ns[c as usize]
        };
        w.step_near(&mut cursor, at).unwrap_or(i64::MIN)
    };
    // Steps in order of their first event; each step's events in start order.
    let mut keys: Vec<i64> = all.iter().map(step_of).collect();
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by_key(|&k| (keys[k], all[k].0, all[k].1));
    keys.sort_unstable();
    let mut seen: FxHashSet<Vec<Token>> = FxHashSet::default();
    let mut kept: Vec<Vec<(i64, u32, u32)>> = Vec::new();
    let mut k = 0;
    while k < order.len() && kept.len() < MAX_STEPS {
        let key = keys[k];
        let end = k + keys[k..].partition_point(|&x| x == key);
        let evs: Vec<(i64, u32, u32)> = order[k..end]
            .iter()
            .take(MAX_STEP_EVENTS)
            .map(|&x| all[x])
            .collect();
        k = end;
        let tokens: Vec<Token> = evs.iter().map(|e| device_token(t, e.1, s)).collect();
        if seen.insert(tokens) {
            kept.push(evs);
        }
    }
    let calls: Vec<u32> = kept
        .iter()
        .flatten()
        .map(|e| e.2)
        .filter(|&c| c != NO_LAUNCH)
        .collect();
    let mut found = labels(t, &calls, s).into_iter();
    kept.into_iter()
        .map(|evs| Recorded {
            start_ns: evs.first().map_or(0, |e| e.0),
            end_ns: evs
                .iter()
                .map(|e| t.events.end_ns(e.1 as usize))
                .max()
                .unwrap_or(0),
            pid: -1,
            graph: -1,
            tokens: evs.iter().map(|e| device_token(t, e.1, s)).collect(),
            labels: evs
                .iter()
                .map(|e| {
                    if e.2 == NO_LAUNCH {
                        Label::NONE
                    } else {
                        found.next().unwrap_or(Label::NONE)
                    }
                })
                .collect(),
            conns: Vec::new(),
        })
        .collect()
}
