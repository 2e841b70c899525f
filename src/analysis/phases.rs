//! Phase validation per input file (one rank's capture): a prefill window is valid only with at
//! least one complete CPU-side `forward_eager` scope; a decode window only with at least one
//! complete `forward_cudagraph`. Both present → mixed (valid, but percentages over the whole
//! window include both phases). Decode is never inferred from batch size, output length or kernels.
//!
//! Slicing ([`slice`], `analyze --phase`): the CPU scopes of both phases partition each file's
//! timeline at their starts (a scope's window runs to the next scope's start). A host event belongs
//! to the window its start lies in. A device event belongs to the window of the host event that
//! launched it (Ascend `connection_id` = the CANN API's, Kineto `correlation` = the runtime
//! launch's), because device work runs after its scope, often past it; a device event with no
//! launch link falls back to its own start. Events before the first scope belong to no phase.

use super::gallop::Gallop;
pub use crate::contract::phases::*;
use crate::model::id_map::IdMap;
use crate::model::{Category, EventKind, Tables};

pub const PREFILL_SCOPE: &str = "forward_eager";
pub const DECODE_SCOPE: &str = "forward_cudagraph";

/// The CPU-side scopes named `scope`, as (event index), in every file.
pub fn scopes(t: &Tables, scope: &str) -> Vec<usize> {
    let Some(id) = t.strings.lookup(scope) else {
        return Vec::new();
    };
    (0..t.events.len())
        .filter(|&i| {
            t.events.name[i] == id
                && t.events.kind[i] == EventKind::Complete
                && !t.events.category[i].is_device()
                && t.events.category[i] != Category::VendorOverlap
        })
        .collect()
}

fn windows(t: &Tables, idx: &[usize], scope: &'static str) -> PhaseWindows {
    PhaseWindows {
        scope,
        count: idx.len() as u64,
        total_ns: crate::units::sum_ns(idx.iter().map(|&i| t.events.dur_ns.at(i))),
        first_start_ns: idx.iter().map(|&i| t.events.ts_ns[i]).min(),
        last_end_ns: idx.iter().map(|&i| t.events.end_ns(i)).max(),
    }
}

pub fn compute(t: &Tables) -> Vec<Phases> {
    let eager = scopes(t, PREFILL_SCOPE);
    let graph = scopes(t, DECODE_SCOPE);
    (0..t.files.len())
        .map(|f| {
            let of_file = |v: &[usize]| v.iter().copied().filter(|&i| t.event_file(i).idx() == f).collect::<Vec<_>>();
            let (p, d) = (of_file(&eager), of_file(&graph));
            let (pv, dv) = (!p.is_empty(), !d.is_empty());
            let statement = match (pv, dv) {
                (true, true) => "mixed prefill and decode: whole-window percentages include both phases; slice by the forward_eager / forward_cudagraph intervals to separate them".to_string(),
                (false, true) => "decode window: validated by complete forward_cudagraph scopes".to_string(),
                (true, false) => "prefill window: validated by complete forward_eager scopes".to_string(),
                (false, false) => "no forward_eager or forward_cudagraph scope: the phase of this capture is unknown and is not inferred".to_string(),
            };
            Phases {
                file: t.files.path[f].clone(),
                rank: t.files.rank[f],
                prefill: windows(t, &p, PREFILL_SCOPE),
                decode: windows(t, &d, DECODE_SCOPE),
                prefill_valid: pv,
                decode_valid: dv,
                mixed: pv && dv,
                statement,
            }
        })
        .collect()
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
        }
    }
}

/// The phase of every event (None: before the first scope of its file, or no scopes).
pub fn attribute(t: &Tables) -> (Vec<Option<Phase>>, u64, u64) {
    let mut scopes: Vec<Vec<(i64, Phase)>> = vec![Vec::new(); t.files.len()];
    for (name, phase) in [
        (PREFILL_SCOPE, Phase::Prefill),
        (DECODE_SCOPE, Phase::Decode),
    ] {
        for i in self::scopes(t, name) {
            scopes[t.event_file(i).idx()].push((t.events.ts_ns[i], phase));
        }
    }
    for s in &mut scopes {
        s.sort_by_key(|x| x.0);
    }
    let launches = Launches::build(t);
    let (mut linked, mut own) = (0, 0);
    let mut cursor = Gallop::default();
    let phases = (0..t.events.len())
        .map(|i| {
            let f = t.event_file(i);
            let s = &scopes[f.idx()];
            let mut at = t.events.ts_ns[i];
            if t.event_is_device_side(i) {
                match launches.of(t, i) {
                    Some(l) => {
                        at = l;
                        linked += 1;
                    }
                    None => own += 1,
                }
            }
            let k = cursor.count_at_or_before(s, |x| x.0, at);
            (k > 0).then(|| s[k - 1].1)
        })
        .collect();
    (phases, linked, own)
}

/// The tables restricted to one phase's events (other tables unchanged).
pub fn slice(t: &Tables, phase: Phase) -> (Tables, SliceInfo) {
    let (phases, linked, own) = attribute(t);
    let keep: Vec<bool> = phases.iter().map(|p| *p == Some(phase)).collect();
    let kept = keep.iter().filter(|k| **k).count() as u64;
    let mut out = t.clone();
    out.events = t.events.retain(&keep);
    out.op_args = t.op_args.retain(&keep);
    // Whole-file sums cannot be split by phase (the rows themselves can, when read as events).
    out.vendor_overlap = Default::default();
    let info = SliceInfo {
        phase,
        events_kept: kept,
        events_dropped: t.events.len() as u64 - kept,
        device_by_launch: linked,
        device_by_own_start: own,
        method: "CPU forward_eager / forward_cudagraph scopes partition the timeline at their starts; device events follow their launch (connection_id / correlation), else their own start",
    };
    (out, info)
}

/// Start times of host events by (file, connection id) and (file, correlation id): where a device
/// event was launched from (Ascend `connection_id` = the CANN API's, Kineto `correlation` = the
/// runtime launch's). The earliest host event of an id wins.
pub struct Launches {
    /// Per file: earliest host start by connection id, then by correlation id.
    by_file: Vec<(IdMap<i64>, IdMap<i64>)>,
}

impl Launches {
    pub fn build(t: &Tables) -> Launches {
        // Per file: ids and host starts, of connection ids then of correlation ids.
        type IdTs = (Vec<i64>, Vec<i64>);
        let mut pairs: Vec<(IdTs, IdTs)> = (0..t.files.len()).map(|_| Default::default()).collect();
        for i in 0..t.events.len() {
            let (conn, corr) = (t.events.connection_id.at(i), t.events.correlation_id.at(i));
            if (conn < 0 && corr < 0) || t.event_is_device_side(i) {
                continue;
            }
            let p = &mut pairs[t.event_file(i).idx()];
            let ts = t.events.ts_ns[i];
            for (id, list) in [(conn, &mut p.0), (corr, &mut p.1)] {
                if id >= 0 {
                    list.0.push(id);
                    list.1.push(ts);
                }
            }
        }
        let earliest = |(ids, ts): IdTs| IdMap::build(&ids, |k| ts[k], i64::min, i64::MAX);
        let by_file = pairs
            .into_iter()
            .map(|(conn, corr)| (earliest(conn), earliest(corr)))
            .collect();
        Launches { by_file }
    }

    /// The launch time of device event `i`, if it links to a host event.
    pub fn of(&self, t: &Tables, i: usize) -> Option<i64> {
        let (conn, corr) = &self.by_file[t.event_file(i).idx()];
        conn.get(t.events.connection_id.at(i))
            .or_else(|| corr.get(t.events.correlation_id.at(i)))
    }
}
