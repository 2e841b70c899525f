//! Chrome-trace JSON ingest (torch_npu `trace_view.json`, CANN `msprof_*.json`, Kineto and
//! lmdeploy `*.json(.gz)`). A plain file is memory-mapped; a `.gz` file is streamed through a
//! decoder thread in blocks ([`stream`]). Either way the event array is cut into chunks at event
//! boundaries ([`split`]), chunks are parsed in parallel by a hand-written scanner that extracts
//! only the fields the model keeps ([`chunk`]), and the chunk columns are verified and merged in
//! file order into the builder ([`waves`], [`merge`]). No DOM of the file is ever built.
//!
//! Robustness: a file that ends mid-event yields every complete event plus a `truncated`
//! diagnostic with the byte offset; a syntax error elsewhere is an error naming file and offset;
//! an empty file is a diagnostic.

pub mod byte_match;
pub mod chunk;
pub mod container_memo;
pub mod key_memo;
pub mod keys;
pub mod layout;
pub mod lexer;
pub mod local;
pub mod member_memo;
pub mod merge;
pub mod number;
pub mod overlap_row;
pub mod overlap_sums;
pub mod split;
pub mod stream;
pub mod structural;
pub mod value_memo;
pub mod waves;

use super::rank::rank_from_path;

use super::builder::{FileMeta, TablesBuilder};
use super::error::IngestError;
use super::progress::Progress;
use super::source::Source;
use crate::diag::Severity;
use crate::model::FileId;
use chunk::ChunkEnd;
use layout::Head;
use structural::ScanMode;
use waves::MergeState;

/// Ingests one Chrome-trace file (plain or gzip) into `builder`.
pub fn ingest_file(
    path: &str,
    builder: &mut TablesBuilder,
    progress: &Progress,
) -> Result<(), IngestError> {
    let io = |e: std::io::Error| IngestError::Io {
        path: path.to_string(),
        source: e,
    };
    let size = std::fs::metadata(path).map_err(io)?.len();
    let mut meta = FileMeta {
        size_bytes: size,
        parsed_bytes: size,
        rank: rank_from_path(path),
        ..Default::default()
    };
    if super::source::is_gzip(path).map_err(io)? {
        meta.gzip = true;
        return stream::ingest_gz(path, builder, progress, &mut meta);
    }
    let src = Source::open(path)?;
    ingest_bytes(
        path,
        src.bytes(),
        Some(&src),
        &mut meta,
        builder,
        progress,
        ParseOpts {
            chunk_bytes: split::CHUNK_BYTES,
            scan: ScanMode::from_env(),
            sum_while_parsing: true,
        },
    )
}

/// How the event array is cut and tokenised.
#[derive(Debug, Clone, Copy)]
pub struct ParseOpts {
    /// Target bytes per chunk ([`split::CHUNK_BYTES`] outside tests).
    pub chunk_bytes: usize,
    pub scan: ScanMode,
    /// Whether chunks sum the vendor overlap rows of threads named before they are parsed
    /// ([`overlap_sums`]; tests turn it off to compare).
    pub sum_while_parsing: bool,
}

/// Ingests one trace held in memory, with a chosen chunk size, into fresh tables (tests, fuzzing).
pub fn ingest_slice(
    path: &str,
    b: &[u8],
    chunk_bytes: usize,
) -> Result<crate::model::Tables, IngestError> {
    ingest_slice_scan(path, b, chunk_bytes, ScanMode::from_env())
}

/// [`ingest_slice`] with a chosen tokeniser (tests compare the two).
pub fn ingest_slice_scan(
    path: &str,
    b: &[u8],
    chunk_bytes: usize,
    scan: ScanMode,
) -> Result<crate::model::Tables, IngestError> {
    ingest_slice_keeping(path, b, chunk_bytes, scan, None)
}

/// [`ingest_slice_scan`] keeping the recorded inputs of the ops `op_inputs` names (tests).
pub fn ingest_slice_keeping(
    path: &str,
    b: &[u8],
    chunk_bytes: usize,
    scan: ScanMode,
    op_inputs: crate::ingest::OpInputs,
) -> Result<crate::model::Tables, IngestError> {
    let mut builder = TablesBuilder::new();
    builder.set_op_inputs(op_inputs);
    let opts = ParseOpts {
        chunk_bytes,
        scan,
        sum_while_parsing: true,
    };
    ingest_slice_into(path, b, &mut builder, opts)?;
    Ok(builder.finish())
}

/// Ingests one trace held in memory as `analyze` does (the vendor overlap rows as sums), with a
/// chosen chunk size, summing overlap rows while parsing or only in the merge (tests): the
/// tables, and how many overlap rows were summed while parsing ([`overlap_sums`]).
pub fn ingest_slice_summing(
    path: &str,
    b: &[u8],
    chunk_bytes: usize,
    while_parsing: bool,
) -> Result<(crate::model::Tables, u64), IngestError> {
    let mut builder = TablesBuilder::new();
    builder.set_vendor_overlap_sums(true);
    let opts = ParseOpts {
        chunk_bytes,
        scan: ScanMode::from_env(),
        sum_while_parsing: while_parsing,
    };
    ingest_slice_into(path, b, &mut builder, opts)?;
    let summed = builder.overlap_rows_summed_while_parsing();
    Ok((builder.finish(), summed))
}

/// Ingests bytes held in memory (no mapping to release) into `builder`.
fn ingest_slice_into(
    path: &str,
    b: &[u8],
    builder: &mut TablesBuilder,
    opts: ParseOpts,
) -> Result<(), IngestError> {
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
        builder,
        &Progress::default(),
        opts,
    )
}

/// Ingests one trace through the streaming path, reading `b` in `block`-byte blocks (tests).
pub fn ingest_slice_streamed(
    path: &str,
    b: &[u8],
    block: usize,
    chunk_bytes: usize,
) -> Result<crate::model::Tables, IngestError> {
    let mut builder = TablesBuilder::new();
    let mut meta = FileMeta {
        size_bytes: b.len() as u64,
        ..Default::default()
    };
    let opts = stream::StreamOpts {
        block: block.max(1),
        chunk_bytes: chunk_bytes.max(1),
        compressed: None,
        scan: ScanMode::from_env(),
    };
    stream::ingest_stream(path, b, opts, &mut meta, &mut builder, &Progress::default())?;
    Ok(builder.finish())
}

/// Ingests bytes that are all in memory (a mapping); `src` lets parsed pages be released.
pub fn ingest_bytes(
    path: &str,
    b: &[u8],
    src: Option<&Source>,
    meta: &mut FileMeta,
    builder: &mut TablesBuilder,
    progress: &Progress,
    opts: ParseOpts,
) -> Result<(), IngestError> {
    let head = layout::read_head(b, meta).map_err(|e| layout_error(path, 0, e))?;
    let file = builder.add_file(path, meta.clone());
    // Once per capture: the later pieces of a capture read in parts share its file row.
    if !builder.has_meta(file, "host.uid")
        && let Some(host) = super::rank::prof_folder(path).and_then(super::rank::prof_host)
    {
        builder.add_meta(file, "host.uid", &host);
    }
    kineto_groups(builder, file, meta);
    let first = match head {
        Head::Events { first } => first,
        other => {
            report_no_events(path, other, builder);
            return Ok(());
        }
    };
    // Finding a boundary touches a page; where the kernel maps a whole large folio per touch
    // (Linux 6.x page cache: up to 2 MiB) that stays resident until released, and a 1 GB file's
    // 250 probes would peak at 0.5x its size: each is dropped as soon as it is read. Each chunk
    // maps its own bytes when its parse begins.
    let starts = split::plan_probing(b, first, opts.chunk_bytes.max(1), |from, to| {
        if let Some(src) = src {
            src.release_folios(from, to);
        }
    });
    let read = chunk::ChunkRead {
        scan: opts.scan,
        op_inputs: builder.op_inputs(),
    };
    let mut st = MergeState::new(first, b.len() - first, read);
    st.sum_while_parsing = opts.sum_while_parsing;
    waves::run(
        b,
        &starts,
        starts.len(),
        file,
        &mut st,
        builder,
        src,
        progress,
    );
    let end = st
        .end
        .expect("the last chunk has no limit, so it always ends the array");
    finish(path, b, 0, end, meta, file, builder)
}

/// Diagnoses a file whose event array never starts (empty, or cut before it).
fn report_no_events(path: &str, head: Head, builder: &mut TablesBuilder) {
    match head {
        Head::Empty => {
            builder.diag().add("empty_file", Severity::DataLoss, || {
                format!("{path}: no events (empty file)")
            });
        }
        Head::TruncatedBeforeEvents { offset } => {
            builder.note_truncated(path);
            builder.diag().add("truncated", Severity::DataLoss, || {
                format!("{path}: ends at byte {offset} before any event")
            });
        }
        Head::Events { .. } => {}
    }
}

/// A Kineto header's process groups as the file's `parallel_group_info` (once; torch_npu's own,
/// when the folder has one, comes first), and its `deviceProperties` as `device_properties`.
fn kineto_groups(builder: &mut TablesBuilder, file: FileId, meta: &FileMeta) {
    if !meta.process_groups.is_empty() && !builder.has_meta(file, "parallel_group_info") {
        builder.add_meta(file, "parallel_group_info", &meta.process_groups);
    }
    if !meta.device_properties.is_empty() && !builder.has_meta(file, "device_properties") {
        builder.add_meta(file, "device_properties", &meta.device_properties);
    }
}

/// Reports how the event array ended; `base` is the absolute offset of `b[0]` (streams).
fn finish(
    path: &str,
    b: &[u8],
    base: usize,
    end: ChunkEnd,
    meta: &mut FileMeta,
    file: FileId,
    builder: &mut TablesBuilder,
) -> Result<(), IngestError> {
    match end {
        ChunkEnd::ArrayEnd(p) => {
            let complete =
                layout::read_tail(b, p, meta).map_err(|e| layout_error(path, base, e))?;
            if !complete {
                builder.diag().add("truncated", Severity::Info, || {
                    format!("{path}: ends in the members after traceEvents (all events read)")
                });
            }
            builder.update_file(file, meta);
            kineto_groups(builder, file, meta);
            Ok(())
        }
        ChunkEnd::Truncated(offset) => {
            let total = base + b.len();
            builder.note_truncated(path);
            builder.diag().add("truncated", Severity::DataLoss, || {
                format!("{path}: truncated at byte {} of {total}: the incomplete event and everything after it are missing", base + offset)
            });
            Ok(())
        }
        ChunkEnd::Error { offset, what } => Err(IngestError::Syntax {
            path: path.to_string(),
            offset: base + offset,
            what: what.to_string(),
        }),
        ChunkEnd::NextEvent(_) => {
            unreachable!("a chunk without a limit never stops before an event")
        }
    }
}

fn layout_error(path: &str, base: usize, e: layout::LayoutError) -> IngestError {
    match e {
        layout::LayoutError::Syntax { offset, what } => IngestError::Syntax {
            path: path.to_string(),
            offset: base + offset,
            what: what.to_string(),
        },
        layout::LayoutError::NoTraceEvents => IngestError::NotATrace {
            path: path.to_string(),
        },
    }
}
