//! Streamed ingest for compressed traces (`.json.gz`, lmdeploy's default): a decoder thread
//! inflates fixed-size blocks into a bounded channel while the main thread parses the complete
//! chunks of the blocks it has, carrying the unfinished tail into the next block. Memory stays at a
//! few blocks plus the tables, whatever the decompressed size.

use super::layout::{self, Head};
use super::split;
use super::structural::ScanMode;
use super::waves::{self, MergeState};
use crate::diag::Severity;
use crate::ingest::builder::{FileMeta, TablesBuilder};
use crate::ingest::error::IngestError;
use crate::ingest::progress::Progress;
use flate2::read::MultiGzDecoder;
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};

/// Decompressed bytes per block handed from the decoder to the parser.
pub const BLOCK_BYTES: usize = 32 << 20;
/// Chunk size within a block (smaller than for mapped files: a block holds several).
pub const STREAM_CHUNK_BYTES: usize = 4 << 20;
/// The most decompressed bytes held for one unfinished event (or the header before the events):
/// a small `.json.gz` can inflate to one giant string, which must not take the machine's memory.
pub const MAX_PENDING_BYTES: usize = 256 << 20;

/// How a stream is cut and what is known of its compressed size.
pub struct StreamOpts {
    /// Decompressed bytes per block handed from the decoder to the parser.
    pub block: usize,
    /// Chunk size within a block.
    pub chunk_bytes: usize,
    /// Compressed bytes consumed so far (shared with the decoder) and the compressed total.
    pub compressed: Option<(Arc<AtomicU64>, u64)>,
    /// How chunks are tokenised.
    pub scan: ScanMode,
}

/// Counts the compressed bytes the decoder has consumed (for progress and size estimates).
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Ingests a gzip-compressed Chrome trace.
pub fn ingest_gz(
    path: &str,
    builder: &mut TablesBuilder,
    progress: &Progress,
    meta: &mut FileMeta,
) -> Result<(), IngestError> {
    let io = |e: std::io::Error| IngestError::Io {
        path: path.to_string(),
        source: e,
    };
    let file =
        crate::ingest::source::open_regular(std::path::Path::new(path), u64::MAX).map_err(io)?;
    let count = Arc::new(AtomicU64::new(0));
    let reader = MultiGzDecoder::new(std::io::BufReader::with_capacity(
        1 << 20,
        Counting {
            inner: file,
            count: count.clone(),
        },
    ));
    let opts = StreamOpts {
        block: BLOCK_BYTES,
        chunk_bytes: STREAM_CHUNK_BYTES,
        compressed: Some((count, meta.size_bytes)),
        scan: ScanMode::from_env(),
    };
    ingest_stream(path, reader, opts, meta, builder, progress)
}

enum Block {
    Data(Vec<u8>),
    /// The stream failed or ended early; the text says how.
    Broken(String),
}

struct Feed {
    rx: Receiver<Block>,
    eof: bool,
    broken: Option<String>,
}

impl Feed {
    /// Appends the next block to `buf`; false at the end of the stream.
    fn more(&mut self, buf: &mut Vec<u8>) -> bool {
        if self.eof {
            return false;
        }
        match self.rx.recv() {
            Ok(Block::Data(b)) => {
                buf.extend_from_slice(&b);
                true
            }
            Ok(Block::Broken(note)) => {
                self.broken = Some(note);
                self.eof = true;
                false
            }
            Err(_) => {
                self.eof = true;
                false
            }
        }
    }
}

/// Ingests a trace read from `reader` in blocks of `block` bytes (any reader: tests pass plain
/// bytes with tiny blocks to check that block boundaries change nothing).
pub fn ingest_stream<R: Read + Send>(
    path: &str,
    mut reader: R,
    opts: StreamOpts,
    meta: &mut FileMeta,
    builder: &mut TablesBuilder,
    progress: &Progress,
) -> Result<(), IngestError> {
    let block = opts.block;
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<Block>(2);
        scope.spawn(move || {
            let mut total = 0u64;
            loop {
                let mut buf = Vec::with_capacity(block);
                let r = (&mut reader).take(block as u64).read_to_end(&mut buf);
                total += buf.len() as u64;
                let got = !buf.is_empty();
                if got && tx.send(Block::Data(buf)).is_err() {
                    return;
                }
                match r {
                    Err(e) => {
                        let what = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                            "ends early".to_string()
                        } else {
                            format!("is corrupt ({e})")
                        };
                        let _ = tx.send(Block::Broken(format!(
                            "gzip stream {what} after {total} decompressed bytes"
                        )));
                        return;
                    }
                    Ok(_) if !got => return,
                    Ok(_) => {}
                }
            }
        });
        let mut feed = Feed {
            rx,
            eof: false,
            broken: None,
        };
        let result = parse_feed(path, &mut feed, opts, meta, builder, progress);
        drop(feed); // lets the decoder thread end if we stopped early
        result
    })
}

fn parse_feed(
    path: &str,
    feed: &mut Feed,
    opts: StreamOpts,
    meta: &mut FileMeta,
    builder: &mut TablesBuilder,
    progress: &Progress,
) -> Result<(), IngestError> {
    let StreamOpts {
        block,
        chunk_bytes,
        compressed,
        scan,
    } = opts;
    let mut buf: Vec<u8> = Vec::new();
    feed.more(&mut buf);
    let first = loop {
        match layout::read_head(&buf, meta) {
            Ok(Head::Events { first }) => break first,
            Ok(_) if buf.len() > MAX_PENDING_BYTES => {
                return Err(IngestError::Syntax {
                    path: path.to_string(),
                    offset: buf.len(),
                    what: format!(
                        "no event array in the first {} MiB: not read further",
                        MAX_PENDING_BYTES >> 20
                    ),
                });
            }
            Ok(_) if feed.more(&mut buf) => continue,
            Ok(head) => {
                note_broken(path, feed, builder);
                builder.add_file(path, meta.clone());
                super::report_no_events(path, head, builder);
                return Ok(());
            }
            Err(e) => return Err(super::layout_error(path, 0, e)),
        }
    };
    let estimate = match &compressed {
        Some((count, total)) if count.load(Ordering::Relaxed) > 0 => {
            (buf.len() as f64 * *total as f64 / count.load(Ordering::Relaxed) as f64) as usize
        }
        _ => buf.len(),
    };
    let file = builder.add_file(path, meta.clone());
    super::kineto_groups(builder, file, meta);
    let read = super::chunk::ChunkRead {
        scan,
        op_inputs: builder.op_inputs(),
    };
    let mut st = MergeState::new(first, estimate, read);
    let mut base = 0usize;
    // Bytes wanted beyond `expected` before parsing. It doubles whenever a parse could not finish
    // for lack of data (no boundary found, or an event running past the buffer), so a giant or
    // malformed event costs linear time and every round either consumes bytes or reads more.
    let mut need = block;
    loop {
        if !feed.eof && buf.len() - st.expected < need {
            if buf.len() - st.expected > MAX_PENDING_BYTES {
                // An event larger than any real one: read no further; what is held is parsed as
                // the end of the stream (complete events kept, the giant one cut).
                let at = base + st.expected;
                builder.diag().add("input_too_large", Severity::DataLoss, || {
                    format!(
                        "{path}: an event at or after decompressed byte {at} is larger than {} MiB; reading stopped there (events before it are kept)",
                        MAX_PENDING_BYTES >> 20
                    )
                });
                feed.eof = true;
                continue;
            }
            feed.more(&mut buf);
            continue;
        }
        let starts = split::plan(&buf, st.expected, chunk_bytes);
        let count = if feed.eof {
            starts.len()
        } else {
            starts.len() - 1
        };
        if count == 0 {
            need = need.max(buf.len() - st.expected).saturating_mul(2);
            continue;
        }
        waves::run(&buf, &starts, count, file, &mut st, builder, None, progress);
        if let Some(super::chunk::ChunkEnd::Truncated(at)) = st.end
            && !feed.eof
        {
            // The block ended mid-event, not the stream: carry the incomplete event forward and
            // read more before trying it again.
            st.end = None;
            st.expected = at;
            need = need.max(buf.len() - at).saturating_mul(2);
        } else {
            need = block;
        }
        if st.end.is_some() {
            break;
        }
        let keep = st.expected;
        buf.drain(..keep);
        base += keep;
        st.expected = 0;
        st.origin = 0;
        st.reserved = true;
    }
    let end = st.end.expect("the loop ends only with an end");
    if let super::chunk::ChunkEnd::ArrayEnd(_) = end {
        // The members after the array are small; read them all (bounded).
        while buf.len() < (64 << 20) && feed.more(&mut buf) {}
    }
    note_broken(path, feed, builder);
    meta.parsed_bytes = (base + buf.len()) as u64;
    super::finish(path, &buf, base, end, meta, file, builder)
}

fn note_broken(path: &str, feed: &Feed, builder: &mut TablesBuilder) {
    if let Some(note) = &feed.broken {
        builder.note_truncated(path);
        builder.diag().add("truncated", Severity::DataLoss, || {
            format!("{path}: {note}")
        });
    }
}
