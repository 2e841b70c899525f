//! `profscope export PATH --parquet DIR [--run TAG]`: the events table of every input as Parquet,
//! Hive-partitioned by run and rank (`DIR/run=<tag>/rank=<n>/events-<k>.parquet`), so DuckDB,
//! Spark or DataFusion can query many archived runs at once. One row per event, denormalized
//! (file, rank, process, thread, category, op type beside the event's own columns); the columns
//! go from the model's vectors straight into Arrow arrays. pipeline::export drives it, file by
//! file in input order.

use super::event_view::{COLUMNS, EventView, Kind, Values};
use crate::model::Tables;
use ::parquet::arrow::ArrowWriter;
use ::parquet::basic::Compression;
use ::parquet::file::properties::WriterProperties;
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, serde::Serialize)]
pub struct ParquetFile {
    pub input: String,
    pub rank: i32,
    pub path: Option<String>,
    pub rows: u64,
    pub bytes: u64,
    pub error: Option<String>,
}

/// The events schema (documented in docs/export.md, "Parquet columns").
pub fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(
        COLUMNS
            .iter()
            .map(|&(name, kind)| {
                let ty = match kind {
                    Kind::Str => DataType::Utf8,
                    Kind::I32 => DataType::Int32,
                    Kind::I64 => DataType::Int64,
                };
                Field::new(name, ty, false)
            })
            .collect::<Vec<_>>(),
    ))
}

/// The events view of `t` as one record batch ([`schema`]).
pub fn events_batch(t: &Tables) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let view = EventView::new(t);
    let n = view.rows();
    let cols: Vec<ArrayRef> = view
        .columns()
        .into_iter()
        .map(|v| -> ArrayRef {
            match v {
                Values::Str(f) => Arc::new((0..n).map(|i| Some(f(i))).collect::<StringArray>()),
                Values::I32(f) => Arc::new(Int32Array::from_iter_values((0..n).map(f))),
                Values::I64(f) => Arc::new(Int64Array::from_iter_values((0..n).map(f))),
            }
        })
        .collect();
    RecordBatch::try_new(schema(), cols)
}

/// `run=<tag>` with characters Hive paths cannot hold replaced.
fn run_dir(tag: &str) -> String {
    tag.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes one input's events into the next free `events-<k>.parquet` of its rank's partition
/// (`per_rank` counts the files written per rank so far).
pub struct ParquetWriter<'a> {
    dir: &'a Path,
    tag: &'a str,
    per_rank: std::collections::HashMap<i32, u32>,
    pub files: Vec<ParquetFile>,
}

impl<'a> ParquetWriter<'a> {
    pub fn new(dir: &'a Path, tag: &'a str) -> Self {
        ParquetWriter {
            dir,
            tag,
            per_rank: Default::default(),
            files: Vec::new(),
        }
    }

    /// A file that could not be read: listed with its error.
    pub fn failed(&mut self, input: &str, error: String) {
        self.files.push(ParquetFile {
            input: input.to_string(),
            rank: -1,
            path: None,
            rows: 0,
            bytes: 0,
            error: Some(error),
        });
    }

    pub fn file(&mut self, input: &str, t: &Tables) {
        let rank = t.files.rank.first().copied().unwrap_or(-1);
        let k = self.per_rank.entry(rank).or_insert(0);
        let target: PathBuf = self
            .dir
            .join(format!("run={}", run_dir(self.tag)))
            .join(format!("rank={rank}"))
            .join(format!("events-{k}.parquet"));
        *k += 1;
        let (path, rows, bytes, error) = match write(t, &target) {
            Ok(bytes) => (
                Some(target.display().to_string()),
                t.events.len() as u64,
                bytes,
                None,
            ),
            Err(e) => (None, 0, 0, Some(e.to_string())),
        };
        self.files.push(ParquetFile {
            input: input.to_string(),
            rank,
            path,
            rows,
            bytes,
            error,
        });
    }
}

/// The events of `t` as one Parquet file at `target`; its size in bytes.
fn write(t: &Tables, target: &Path) -> Result<u64, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(target.parent().unwrap_or(Path::new(".")))?;
    let f = std::fs::File::create(target)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut w = ArrowWriter::try_new(f, schema(), Some(props))?;
    w.write(&events_batch(t)?)?;
    w.close()?;
    Ok(std::fs::metadata(target)?.len())
}
