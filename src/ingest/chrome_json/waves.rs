//! The parse engine shared by the mapped and the streamed paths: chunks of a buffer are parsed
//! in parallel while the parsed ones are verified and merged in file order by whichever thread
//! is free, so a bounded window of chunk columns is alive at once and every core stays busy.

use super::chunk::{ChunkEnd, ChunkOut, ChunkRead, Spare, parse_chunk};
use super::merge::merge_chunk;
use super::overlap_sums::KnownOverlap;
use crate::ingest::builder::TablesBuilder;
use crate::ingest::progress::Progress;
use crate::ingest::source::Source;
use crate::model::FileId;
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};

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
    /// How chunks are read.
    pub read: ChunkRead,
    /// The vendor overlap threads named by the metadata merged so far, for chunks parsed from now
    /// on to sum ([`super::overlap_sums`]).
    pub known: Arc<KnownOverlap>,
    /// Whether `known` is kept (tests turn it off to compare with the merge's sums alone).
    pub sum_while_parsing: bool,
}

impl MergeState {
    pub fn new(first: usize, total_estimate: usize, read: ChunkRead) -> MergeState {
        MergeState {
            expected: first,
            end: None,
            reserved: false,
            total_estimate,
            origin: first,
            read,
            known: Arc::default(),
            sum_while_parsing: true,
        }
    }
}

/// The limit of chunk `i`: the next chunk's start, or no limit for the last one.
pub fn limit(starts: &[usize], i: usize) -> usize {
    starts.get(i + 1).copied().unwrap_or(usize::MAX)
}

/// Parses and merges chunks `0..count` of `starts` in `b`. Stops early when a chunk ends the array
/// (closing bracket, truncation or syntax error); `st.end` then says how.
///
/// Every pool thread runs the same loop: merge the next chunk in file order when it is parsed and
/// nobody is merging, else parse the next unclaimed chunk, else wait. No wave barrier: a thread
/// that finishes its chunk goes on with the next one instead of waiting for the slowest chunk
/// of a wave. At most `window` chunks are parsed ahead of the merge (memory stays bounded).
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
    let read = st.read;
    // The merge's current list, which each parse takes when it starts.
    let known = Mutex::new(st.known.clone());
    let spares = Mutex::new(Vec::<Spare>::new());
    let spare = || {
        spares
            .lock()
            .map(|mut s| s.pop())
            .ok()
            .flatten()
            .unwrap_or_default()
    };
    let parse = |i: usize| {
        if let Some(src) = src {
            src.prefault(starts[i], limit(starts, i));
        }
        let list = lock(&known).clone();
        let out = parse_chunk(b, starts[i], limit(starts, i), read, spare(), list);
        let end = match out.end {
            Some(ChunkEnd::NextEvent(p)) | Some(ChunkEnd::ArrayEnd(p)) => p,
            _ => limit(starts, i).min(b.len()),
        };
        if let Some(src) = src {
            src.release(starts[i], end);
        }
        progress.add((end.saturating_sub(starts[i])) as u64);
        out
    };
    let threads = rayon::current_num_threads().max(1);
    // The first `reserve_after` chunks' bytes per event size the event columns once.
    let reserve_after = (threads * 2).max(2);
    let window = (threads * 3).max(4);
    let shared = Mutex::new(Pipeline {
        parsed: BTreeMap::new(),
        next_merge: 0,
        claimed: 0,
        merging: false,
        stop: st.end.is_some(),
    });
    let wake = Condvar::new();
    // Only the thread that set `merging` locks this (never contended).
    let sink = Mutex::new((st, builder));
    let work = || {
        let mut g = lock(&shared);
        loop {
            if !g.merging && !g.stop && g.parsed.contains_key(&g.next_merge) {
                let i = g.next_merge;
                let out = g.parsed.remove(&i).expect("checked above");
                g.merging = true;
                drop(g);
                let (used, ended) = {
                    let mut k = lock(&sink);
                    let (st, builder) = &mut *k;
                    let r = merge_one(i, out, b, starts, file, st, builder, &spare);
                    if i + 1 == reserve_after.min(count) {
                        reserve(st, builder);
                    }
                    *lock(&known) = st.known.clone();
                    r
                };
                if let Ok(mut s) = spares.lock() {
                    s.extend(used);
                }
                g = lock(&shared);
                g.merging = false;
                g.next_merge = i + 1;
                g.stop |= ended;
                wake.notify_all();
                continue;
            }
            if !g.stop && g.claimed < count && g.claimed < g.next_merge + window {
                let i = g.claimed;
                g.claimed += 1;
                drop(g);
                let out = parse(i);
                g = lock(&shared);
                g.parsed.insert(i, out);
                wake.notify_all();
                continue;
            }
            if g.stop || g.next_merge >= count {
                return;
            }
            g = wake.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    };
    rayon::scope(|s| {
        for _ in 1..threads {
            s.spawn(|_| work());
        }
        work();
    });
}

/// The chunks parsed and not yet merged, and who does what next.
struct Pipeline<'a> {
    parsed: BTreeMap<usize, ChunkOut<'a>>,
    /// The chunk the merge needs next.
    next_merge: usize,
    /// Chunks handed out for parsing (`0..claimed`).
    claimed: usize,
    /// A thread is merging (only one at a time: chunks merge in file order).
    merging: bool,
    /// A merged chunk ended the array: nothing after it is wanted.
    stop: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Verifies and merges chunk `i`; re-parses it when it started at a false boundary, from where
/// its predecessor really ended. Returns the emptied columns and whether the array ended here.
#[allow(clippy::too_many_arguments)]
fn merge_one<'a>(
    i: usize,
    out: ChunkOut<'a>,
    b: &'a [u8],
    starts: &[usize],
    file: FileId,
    st: &mut MergeState,
    builder: &mut TablesBuilder,
    spare: &dyn Fn() -> Spare,
) -> (Vec<Spare>, bool) {
    let mut used = Vec::with_capacity(2);
    // A chunk that summed overlap rows under names that changed since (or that its own
    // metadata may change) is read again without the list, as is one that started at a false
    // boundary (rare).
    let stale = out.overlap.rows > 0
        && (out.overlap.generation() != st.known.generation
            || out.metas.iter().any(|m| out.overlap.listed_process(m.pid)));
    let mut out = if out.start == st.expected && !stale {
        out
    } else {
        used.push(out.into_spare());
        parse_chunk(
            b,
            st.expected,
            limit(starts, i),
            st.read,
            spare(),
            Arc::default(),
        )
    };
    let this_end = out.end.expect("a parsed chunk always records its end");
    let named = !out.metas.is_empty();
    merge_chunk(builder, file, &mut out);
    if named && st.sum_while_parsing && builder.vendor_overlap_sums() {
        let mut threads = builder.vendor_overlap_threads(file);
        threads.sort_unstable();
        if threads != st.known.threads {
            st.known = Arc::new(KnownOverlap {
                threads,
                generation: st.known.generation + 1,
            });
        }
    }
    used.push(out.into_spare());
    match this_end {
        ChunkEnd::NextEvent(p) => st.expected = p,
        other => st.end = Some(other),
    }
    (used, st.end.is_some())
}

/// Reserves the event columns for the whole array, estimated from the bytes per event so far.
fn reserve(st: &mut MergeState, builder: &mut TablesBuilder) {
    let consumed = st.expected.saturating_sub(st.origin);
    if !st.reserved && consumed > 0 && st.end.is_none() {
        st.reserved = true;
        let n = builder.tables().events.len();
        let estimate = (n as f64 * st.total_estimate as f64 / consumed as f64 * 1.02) as usize;
        builder.reserve_events(estimate.saturating_sub(n) + 1024);
    }
}
