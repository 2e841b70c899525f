//! The export use cases on the one per-file loop: files are read in parallel within the limits
//! and written in input order by the Perfetto writer or the Parquet writer (export/), which see
//! only each file's tables.

use super::drive::{Limits, each_file};
use crate::export::parquet::{ParquetFile, ParquetWriter};
use crate::export::perfetto::{FileExport, PerfettoOpts, PerfettoWriter};
use crate::ingest::detect::Input;
use crate::ingest::{IngestOpts, Progress};
use std::io::Write;
use std::path::Path;

/// Every input into one Chrome-trace JSON array written to `out`; the output and what was
/// written per file (a file that cannot be read is listed with its error).
pub fn perfetto<W: Write + Send>(
    inputs: &[Input],
    o: &PerfettoOpts,
    out: W,
    limits: Limits,
    progress: &Progress,
) -> std::io::Result<(W, Vec<FileExport>)> {
    let mut w = PerfettoWriter::new(o, out)?;
    let mut fi = 0;
    let mut error: Option<std::io::Error> = None;
    each_file(
        inputs,
        limits,
        IngestOpts::default(),
        progress,
        |_, read| read.tables,
        |input, tables| {
            if error.is_some() {
                return;
            }
            match tables {
                Ok(t) => error = w.file(fi, &input.path, &t).err(),
                Err(e) => w.failed(&input.path, e.to_string()),
            }
            fi += 1;
        },
    );
    match error {
        Some(e) => Err(e),
        None => w.finish(),
    }
}

/// Every input's events as Parquet under `dir/run=<tag>/rank=<n>/`; what was written per file.
pub fn parquet(
    inputs: &[Input],
    dir: &Path,
    tag: &str,
    limits: Limits,
    progress: &Progress,
) -> Vec<ParquetFile> {
    let mut w = ParquetWriter::new(dir, tag);
    each_file(
        inputs,
        limits,
        IngestOpts::default(),
        progress,
        |_, read| read.tables,
        |input, tables| match tables {
            Ok(t) => w.file(&input.path, &t),
            Err(e) => w.failed(&input.path, e.to_string()),
        },
    );
    w.files
}
