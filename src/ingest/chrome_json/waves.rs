//! The parse engine shared by the mapped and the streamed paths: chunks of a buffer are parsed
//! in parallel waves while the previous wave is verified and merged in order, so only two waves
//! of chunk columns are alive at once and both cores stay busy.

use super::chunk::{ChunkEnd, ChunkOut, Spare, parse_chunk};
use super::merge::merge_chunk;
use super::structural::ScanMode;
use crate::ingest::builder::TablesBuilder;
use crate::ingest::progress::Progress;
use crate::ingest::source::Source;
use crate::model::FileId;
use rayon::prelude::*;

/// Where the in-order merge of verified chunks stands (offsets relative to the current buffer).
pub struct MergeState {
    /// Offset of the next event the next chunk must start at.
    pub expected: usize,
    /// How the array ended, once a chunk has said so.
    pub end: Option<ChunkEnd>,
    /// Whether event capacity was reserved from the first wave's bytes per event.
    pub reserved: bool,
    /// Estimated bytes of the whole event array from `expected`'s origin (for the reservation).
    pub total_estimate: usize,
    /// Offset where this buffer's events began (for the bytes-per-event estimate).
    pub origin: usize,
    /// How chunks are tokenised.
    pub scan: ScanMode,
}

impl MergeState {
    pub fn new(first: usize, total_estimate: usize, scan: ScanMode) -> MergeState {
        MergeState {
            expected: first,
            end: None,
            reserved: false,
            total_estimate,
            origin: first,
            scan,
        }
    }
}

/// The limit of chunk `i`: the next chunk's start, or no limit for the last one.
pub fn limit(starts: &[usize], i: usize) -> usize {
    starts.get(i + 1).copied().unwrap_or(usize::MAX)
}

/// Parses and merges chunks `0..count` of `starts` in `b`. Stops early when a chunk ends the array
/// (closing bracket, truncation or syntax error); `st.end` then says how.
#[allow(clippy::too_many_arguments)] // the engine's whole context; grouped further it only hides it
pub fn run(
    b: &[u8],
    starts: &[usize],
    count: usize,
    file: FileId,
    st: &mut MergeState,
    builder: &mut TablesBuilder,
    src: Option<&Source>,
    progress: &Progress,
) {
    let scan = st.scan;
    let spares = std::sync::Mutex::new(Vec::<Spare>::new());
    let spare = || {
        spares
            .lock()
            .map(|mut s| s.pop())
            .ok()
            .flatten()
            .unwrap_or_default()
    };
    let parse = |i: usize| {
        let out = parse_chunk(b, starts[i], limit(starts, i), scan, spare());
        let end = match out.end {
            Some(ChunkEnd::NextEvent(p)) | Some(ChunkEnd::ArrayEnd(p)) => p,
            _ => limit(starts, i).min(b.len()),
        };
        if let Some(src) = src {
            src.release(starts[i], end);
        }
        progress.add((end.saturating_sub(starts[i])) as u64);
        (i, out)
    };
    let wave = (rayon::current_num_threads() * 2).max(2);
    let mut pending: Vec<(usize, ChunkOut<'_>)> = Vec::new();
    let mut next = 0;
    while st.end.is_none() && (next < count || !pending.is_empty()) {
        let hi = (next + wave).min(count);
        let to_merge = std::mem::take(&mut pending);
        let (parsed, ()) = rayon::join(
            || (next..hi).into_par_iter().map(parse).collect::<Vec<_>>(),
            || {
                let used = merge_wave(to_merge, b, starts, file, st, builder, &spare);
                if let Ok(mut s) = spares.lock() {
                    s.extend(used);
                }
            },
        );
        pending = parsed;
        next = hi;
    }
}

/// Verifies and merges one wave in order; re-parses a chunk that started at a false boundary
/// from where its predecessor really ended. Returns the merged chunks' emptied columns.
fn merge_wave<'a>(
    outs: Vec<(usize, ChunkOut<'a>)>,
    b: &'a [u8],
    starts: &[usize],
    file: FileId,
    st: &mut MergeState,
    builder: &mut TablesBuilder,
    spare: &dyn Fn() -> Spare,
) -> Vec<Spare> {
    let mut used = Vec::with_capacity(outs.len());
    for (i, out) in outs {
        if st.end.is_some() {
            return used;
        }
        let mut out = if out.start == st.expected {
            out
        } else {
            used.push(out.into_spare());
            parse_chunk(b, st.expected, limit(starts, i), st.scan, spare())
        };
        let this_end = out.end.expect("a parsed chunk always records its end");
        merge_chunk(builder, file, &mut out);
        used.push(out.into_spare());
        match this_end {
            ChunkEnd::NextEvent(p) => st.expected = p,
            other => st.end = Some(other),
        }
    }
    let consumed = st.expected.saturating_sub(st.origin);
    if !st.reserved && consumed > 0 && st.end.is_none() {
        st.reserved = true;
        let n = builder.tables().events.len();
        let estimate = (n as f64 * st.total_estimate as f64 / consumed as f64 * 1.02) as usize;
        builder.reserve_events(estimate.saturating_sub(n) + 1024);
    }
    used
}
