//! The distinct sequences of device events a file's replays ran: replays of one graph run the
//! same kernels, copies and sets in the same order, so ops are matched once per sequence and
//! each replay's device time is kept per position.

use super::calls::device_token;
use super::extract::{Sequence, Strings, Token};
use super::replays::Building;
use crate::analysis::devices::launches::NO_LAUNCH;
use crate::model::Tables;
use crate::model::hash::FxHashMap;

/// The sequences of `replays` (first seen first) and the sequence of each replay. Replays are
/// grouped by graph id and token sequence.
pub fn sequences(t: &Tables, replays: &[Building], s: &mut Strings) -> (Vec<Sequence>, Vec<usize>) {
    let mut out: Vec<Sequence> = Vec::new();
    let mut slot: FxHashMap<(i64, Vec<Token>), usize> = FxHashMap::default();
    let mut of = Vec::with_capacity(replays.len());
    for (n, r) in replays.iter().enumerate() {
        let launch = (r.launch != NO_LAUNCH).then(|| t.events.ts_ns[r.launch as usize]);
        // A graph replays the same tasks replay after replay: the same graph and the same
        // tokens' inputs as the replay before give its sequence without building the key.
        let k = match n.checked_sub(1).map(|p| &replays[p]) {
            Some(p) if p.graph == r.graph && same_token_inputs(t, &p.events, &r.events) => {
                of[n - 1]
            }
            _ => {
                let tokens: Vec<Token> = r.events.iter().map(|&i| device_token(t, i, s)).collect();
                let key = (r.graph, tokens);
                match slot.get(&key) {
                    Some(&k) => k,
                    None => {
                        let k = out.len();
                        out.push(Sequence {
                            graph: r.graph,
                            conns: r
                                .events
                                .iter()
                                .map(|&i| t.events.connection_id.at(i as usize))
                                .collect(),
                            tokens: key.1.clone(),
                            replays: 0,
                            first_launch_ns: -1,
                            durs: Vec::new(),
                        });
                        slot.insert(key, k);
                        k
                    }
                }
            }
        };
        let q = &mut out[k];
        q.replays += 1;
        if let Some(l) = launch
            && (q.first_launch_ns < 0 || l < q.first_launch_ns)
        {
            q.first_launch_ns = l;
        }
        of.push(k);
    }
    // The durations in a second pass, each list allocated once at its size: grown by doubling
    // they took up to twice the room (json1g: 23.6 MB of capacity for 16 MB of durations).
    for q in &mut out {
        q.durs.reserve_exact(q.replays as usize * q.tokens.len());
    }
    for (r, &k) in replays.iter().zip(&of) {
        out[k]
            .durs
            .extend(r.events.iter().map(|&i| t.events.dur_ns.at(i as usize)));
    }
    (out, of)
}

/// Whether the events of `a` and `b`, position by position, have what [`device_token`] reads
/// (name, category, category string) in common: then their tokens are the same.
fn same_token_inputs(t: &Tables, a: &[u32], b: &[u32]) -> bool {
    let e = &t.events;
    a.len() == b.len()
        && a.iter().zip(b).all(|(&i, &j)| {
            let (i, j) = (i as usize, j as usize);
            e.name[i] == e.name[j] && e.category[i] == e.category[j] && e.cat.at(i) == e.cat.at(j)
        })
}
