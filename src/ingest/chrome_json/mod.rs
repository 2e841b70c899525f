//! Chrome-trace JSON ingest (torch_npu `trace_view.json`, CANN `msprof_*.json`, Kineto and
//! lmdeploy `*.json(.gz)`). The file is memory-mapped (or gunzipped into memory), the event array
//! is cut into ~8 MB chunks at event boundaries, chunks are parsed in parallel by a hand-written
//! scanner that extracts only the fields the model keeps, and the chunk columns are merged in file
//! order through the builder. No DOM of the file is ever built.
//!
//! Robustness: a file that ends mid-event yields every complete event plus a `truncated`
//! diagnostic with the byte offset; a syntax error elsewhere is an error naming file and offset;
//! an empty file is a diagnostic.

pub mod chunk;
pub mod keys;
pub mod layout;
pub mod lexer;
pub mod local;
pub mod number;
pub mod split;

use super::builder::{FileMeta, TablesBuilder};
use super::error::IngestError;
use super::progress::Progress;
use super::source::Source;
use crate::diag::Severity;
use chunk::{ChunkEnd, ChunkOut, parse_chunk};
use layout::Head;
use rayon::prelude::*;

/// Ingests one Chrome-trace file into `builder`.
pub fn ingest_file(
    path: &str,
    builder: &mut TablesBuilder,
    progress: &Progress,
) -> Result<(), IngestError> {
    let src = Source::open(path)?;
    if let Some(note) = src.gzip_note() {
        builder.diag().add("truncated", Severity::DataLoss, || {
            format!("{path}: {note}")
        });
    }
    let mut meta = FileMeta {
        size_bytes: src.size_on_disk,
        parsed_bytes: src.bytes().len() as u64,
        gzip: src.gzip,
        rank: rank_from_path(path),
        ..Default::default()
    };
    ingest_bytes(
        path,
        src.bytes(),
        Some(&src),
        &mut meta,
        builder,
        progress,
        split::CHUNK_BYTES,
    )
}

/// Ingests one trace held in memory, with a chosen chunk size, into fresh tables (tests, fuzzing).
pub fn ingest_slice(
    path: &str,
    b: &[u8],
    chunk_bytes: usize,
) -> Result<crate::model::Tables, IngestError> {
    let mut builder = TablesBuilder::new();
    let mut meta = FileMeta {
        size_bytes: b.len() as u64,
        parsed_bytes: b.len() as u64,
        ..Default::default()
    };
    ingest_bytes(
        path,
        b,
        None,
        &mut meta,
        &mut builder,
        &Progress::default(),
        chunk_bytes,
    )?;
    Ok(builder.finish())
}

/// Ingests loaded bytes; `src` (when the bytes are its mapping) lets parsed pages be released.
pub fn ingest_bytes(
    path: &str,
    b: &[u8],
    src: Option<&Source>,
    meta: &mut FileMeta,
    builder: &mut TablesBuilder,
    progress: &Progress,
    chunk_bytes: usize,
) -> Result<(), IngestError> {
    let syntax = |offset: usize, what: String| IngestError::Syntax {
        path: path.to_string(),
        offset,
        what,
    };
    let head = layout::read_head(b, meta).map_err(|e| match e {
        layout::LayoutError::Syntax { offset, what } => syntax(offset, what.to_string()),
        layout::LayoutError::NoTraceEvents => IngestError::NotATrace {
            path: path.to_string(),
        },
    })?;
    let file = builder.add_file(path, meta.clone());
    let first = match head {
        Head::Events { first } => first,
        Head::Empty => {
            builder.diag().add("empty_file", Severity::DataLoss, || {
                format!("{path}: no events (empty file)")
            });
            return Ok(());
        }
        Head::TruncatedBeforeEvents { offset } => {
            builder.diag().add("truncated", Severity::DataLoss, || {
                format!("{path}: ends at byte {offset} before any event")
            });
            return Ok(());
        }
    };

    let starts = split::plan(b, first, chunk_bytes.max(1));
    let parse = |i: usize| {
        let out = parse_chunk(b, starts[i], limit(&starts, i));
        let end = match out.end {
            Some(ChunkEnd::NextEvent(p)) | Some(ChunkEnd::ArrayEnd(p)) => p,
            _ => limit(&starts, i).min(b.len()),
        };
        if let Some(src) = src {
            src.release(starts[i], end);
        }
        progress.add((end.saturating_sub(starts[i])) as u64);
        (i, out)
    };
    // Waves of chunks: the next wave parses in parallel while the previous one merges, so only
    // two waves of chunk columns are ever alive (bounded memory, both cores busy).
    let wave = (rayon::current_num_threads() * 2).max(2);
    let mut st = MergeState {
        expected: first,
        end: None,
        reserved: false,
    };
    let mut pending: Vec<(usize, ChunkOut<'_>)> = Vec::new();
    let mut next = 0;
    while st.end.is_none() && (next < starts.len() || !pending.is_empty()) {
        let hi = (next + wave).min(starts.len());
        let to_merge = std::mem::take(&mut pending);
        let (parsed, ()) = rayon::join(
            || (next..hi).into_par_iter().map(parse).collect::<Vec<_>>(),
            || merge_wave(to_merge, b, &starts, first, file, &mut st, builder),
        );
        pending = parsed;
        next = hi;
    }
    let end = st.end;
    match end {
        Some(ChunkEnd::ArrayEnd(p)) => {
            let complete = layout::read_tail(b, p, meta).map_err(|e| syntax(p, e.to_string()))?;
            if !complete {
                builder.diag().add("truncated", Severity::Info, || {
                    format!("{path}: ends in the members after traceEvents (all events read)")
                });
            }
            builder.update_file(file, meta);
        }
        Some(ChunkEnd::Truncated(offset)) => {
            let n = b.len();
            builder.diag().add("truncated", Severity::DataLoss, || {
                format!("{path}: truncated at byte {offset} of {n}: the incomplete event and everything after it are missing")
            });
        }
        Some(ChunkEnd::Error { offset, what }) => return Err(syntax(offset, what.to_string())),
        Some(ChunkEnd::NextEvent(_)) | None => unreachable!("the last chunk has no limit"),
    }
    Ok(())
}

fn limit(starts: &[usize], i: usize) -> usize {
    starts.get(i + 1).copied().unwrap_or(usize::MAX)
}

/// Where the in-order merge of verified chunks stands.
struct MergeState {
    /// Offset of the next event the next chunk must start at.
    expected: usize,
    /// How the array ended, once a chunk has said so.
    end: Option<ChunkEnd>,
    /// Whether event capacity was reserved from the first wave's bytes per event.
    reserved: bool,
}

/// Verifies and merges one wave of chunks in order; re-parses a chunk that started at a false
/// boundary from where its predecessor really ended.
fn merge_wave<'a>(
    outs: Vec<(usize, ChunkOut<'a>)>,
    b: &'a [u8],
    starts: &[usize],
    first: usize,
    file: crate::model::FileId,
    st: &mut MergeState,
    builder: &mut TablesBuilder,
) {
    for (i, out) in outs {
        if st.end.is_some() {
            return;
        }
        let out = if out.start == st.expected {
            out
        } else {
            parse_chunk(b, st.expected, limit(starts, i))
        };
        let this_end = out.end.expect("a parsed chunk always records its end");
        builder.merge_chunk(file, out);
        match this_end {
            ChunkEnd::NextEvent(p) => st.expected = p,
            other => st.end = Some(other),
        }
    }
    let consumed = st.expected.saturating_sub(first);
    if !st.reserved && consumed > 0 && st.end.is_none() {
        st.reserved = true;
        let n = builder.tables().events.len();
        let estimate = (n as f64 * (b.len() - first) as f64 / consumed as f64 * 1.02) as usize;
        builder.reserve_events(estimate.saturating_sub(n) + 1024);
    }
}

/// Rank from the path when nothing inside the file says it: a torch_npu root's
/// `profiler_info_<rank>.json` beside `ASCEND_PROFILER_OUTPUT/` (what msprof-analyze uses too), or
/// a rank file name (`lmdeploy_profile_<rank>`, `rank<N>`, `rank-<N>`, `msprof_<N>`).
pub fn rank_from_path(path: &str) -> Option<i32> {
    let p = std::path::Path::new(path);
    let parent = p.parent()?;
    if parent
        .file_name()
        .is_some_and(|n| n == "ASCEND_PROFILER_OUTPUT")
        && let Some(root) = parent.parent()
        && let Some(r) = profiler_info_rank(root)
    {
        return Some(r);
    }
    let stem = p.file_name()?.to_str()?;
    let stem = stem.trim_end_matches(".gz").trim_end_matches(".json");
    let digits_at = stem.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (prefix, digits) = stem.split_at(digits_at);
    let known = ["lmdeploy_profile_", "rank", "rank-", "rank_", "msprof_"];
    if !digits.is_empty() && known.contains(&prefix) {
        return digits.parse().ok();
    }
    None
}

/// The rank in the name of the single `profiler_info_<rank>.json` of a torch_npu root.
fn profiler_info_rank(root: &std::path::Path) -> Option<i32> {
    let mut found = None;
    for entry in std::fs::read_dir(root).ok()?.flatten() {
        let name = entry.file_name();
        let name = name.to_str()?;
        if let Some(r) = name
            .strip_prefix("profiler_info_")
            .and_then(|s| s.strip_suffix(".json"))
        {
            if found.is_some() {
                return None; // ambiguous
            }
            found = r.parse().ok();
        }
    }
    found
}
