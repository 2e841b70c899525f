//! Phase validation per input file (one rank's capture): a prefill window is valid only with at
//! least one complete CPU-side `forward_eager` scope; a decode window only with at least one
//! complete `forward_cudagraph`. Both present → mixed (valid, but percentages over the whole
//! window include both phases). Decode is never inferred from batch size, output length or kernels.

use crate::model::{Category, EventKind, Tables};
use serde::Serialize;

pub const PREFILL_SCOPE: &str = "forward_eager";
pub const DECODE_SCOPE: &str = "forward_cudagraph";

#[derive(Debug, Clone, Serialize)]
pub struct PhaseWindows {
    pub scope: &'static str,
    pub count: u64,
    pub total_ns: i64,
    pub first_start_ns: Option<i64>,
    pub last_end_ns: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Phases {
    pub file: String,
    pub rank: i32,
    pub prefill: PhaseWindows,
    pub decode: PhaseWindows,
    pub prefill_valid: bool,
    pub decode_valid: bool,
    pub mixed: bool,
    /// What a reader must know before quoting percentages of this capture.
    pub statement: String,
}

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
        total_ns: idx.iter().map(|&i| t.events.dur_ns[i]).sum(),
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
