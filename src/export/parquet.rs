//! `profscope export PATH --parquet DIR [--run TAG]`: the events table of every input as Parquet,
//! Hive-partitioned by run and rank (`DIR/run=<tag>/rank=<n>/events-<k>.parquet`), so DuckDB,
//! Spark or DataFusion can query many archived runs at once. One row per event, denormalized
//! (file, rank, process, thread, category, op type beside the event's own columns); the columns
//! go from the model's vectors straight into Arrow arrays. Files are read one at a time.

use crate::ingest::{Progress, detect::Input, ingest_one};
use crate::model::Tables;
use crate::model::events::NO_ROW;
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

/// The events schema (documented in docs/tables.md, "Parquet export").
pub fn schema() -> Arc<Schema> {
    let s = |n: &str| Field::new(n, DataType::Utf8, false);
    let i64_ = |n: &str| Field::new(n, DataType::Int64, false);
    let i32_ = |n: &str| Field::new(n, DataType::Int32, false);
    Arc::new(Schema::new(vec![
        s("file"),
        i32_("file_rank"),
        s("process"),
        s("process_role"),
        i32_("device_id"),
        s("thread"),
        i64_("pid"),
        i64_("tid"),
        s("name"),
        s("cat"),
        s("category"),
        s("kind"),
        i64_("ts_ns"),
        i64_("dur_ns"),
        i32_("stream"),
        s("task_type"),
        s("op_type"),
        s("kernel_task_type"),
        i64_("connection_id"),
        i64_("correlation_id"),
    ]))
}

fn batch(t: &Tables) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let ev = &t.events;
    let n = ev.len();
    let proc_of = |i: usize| t.threads.process[ev.thread[i].idx()].idx();
    let thread_labels: Vec<String> = (0..t.threads.tid.len())
        .map(|k| t.thread_label(crate::model::ThreadId(k as u32)))
        .collect();
    let process_labels: Vec<String> = (0..t.processes.pid.len())
        .map(|k| t.process_label(crate::model::ProcessId(k as u32)))
        .collect();
    fn col<'a>(n: usize, f: impl Fn(usize) -> &'a str) -> ArrayRef {
        Arc::new((0..n).map(|i| Some(f(i))).collect::<StringArray>())
    }
    let cols: Vec<ArrayRef> = vec![
        col(n, |i| {
            t.files.path[t.processes.file[proc_of(i)].0 as usize].as_str()
        }),
        Arc::new(Int32Array::from_iter_values(
            (0..n).map(|i| t.files.rank[t.processes.file[proc_of(i)].0 as usize]),
        )),
        col(n, |i| process_labels[proc_of(i)].as_str()),
        col(n, |i| t.processes.role[proc_of(i)].as_str()),
        Arc::new(Int32Array::from_iter_values(
            (0..n).map(|i| t.processes.device_id[proc_of(i)]),
        )),
        col(n, |i| thread_labels[ev.thread[i].idx()].as_str()),
        Arc::new(Int64Array::from_iter_values(
            (0..n).map(|i| t.processes.pid[proc_of(i)]),
        )),
        Arc::new(Int64Array::from_iter_values(
            (0..n).map(|i| t.threads.tid[ev.thread[i].idx()]),
        )),
        col(n, |i| t.str(ev.name[i])),
        col(n, |i| t.str(ev.cat[i])),
        col(n, |i| ev.category[i].as_str()),
        col(n, |i| match ev.kind[i] {
            crate::model::EventKind::Complete => "complete",
            crate::model::EventKind::Instant => "instant",
        }),
        Arc::new(Int64Array::from(ev.ts_ns.clone())),
        Arc::new(Int64Array::from(ev.dur_ns.clone())),
        Arc::new(Int32Array::from(ev.stream.clone())),
        col(n, |i| t.str(ev.task_type[i])),
        col(n, |i| match ev.kernel[i] {
            NO_ROW => "",
            k => t.str(t.kernels.op_type[k as usize]),
        }),
        col(n, |i| match ev.kernel[i] {
            NO_ROW => "",
            k => t.str(t.kernels.task_type[k as usize]),
        }),
        Arc::new(Int64Array::from(ev.connection_id.clone())),
        Arc::new(Int64Array::from(ev.correlation_id.clone())),
    ];
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

pub fn export(inputs: &[Input], dir: &Path, tag: &str, progress: &Progress) -> Vec<ParquetFile> {
    let mut out = Vec::new();
    let mut per_rank: std::collections::HashMap<i32, u32> = Default::default();
    for input in inputs {
        let t = match ingest_one(input, progress) {
            Ok(t) => t,
            Err(e) => {
                out.push(ParquetFile {
                    input: input.path.clone(),
                    rank: -1,
                    path: None,
                    rows: 0,
                    bytes: 0,
                    error: Some(e.to_string()),
                });
                continue;
            }
        };
        let rank = t.files.rank.first().copied().unwrap_or(-1);
        let k = per_rank.entry(rank).or_insert(0);
        let target: PathBuf = dir
            .join(format!("run={}", run_dir(tag)))
            .join(format!("rank={rank}"))
            .join(format!("events-{k}.parquet"));
        *k += 1;
        let r = (|| -> Result<u64, Box<dyn std::error::Error>> {
            std::fs::create_dir_all(target.parent().unwrap())?;
            let f = std::fs::File::create(&target)?;
            let props = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .build();
            let mut w = ArrowWriter::try_new(f, schema(), Some(props))?;
            w.write(&batch(&t)?)?;
            w.close()?;
            Ok(std::fs::metadata(&target)?.len())
        })();
        match r {
            Ok(bytes) => out.push(ParquetFile {
                input: input.path.clone(),
                rank,
                path: Some(target.display().to_string()),
                rows: t.events.len() as u64,
                bytes,
                error: None,
            }),
            Err(e) => out.push(ParquetFile {
                input: input.path.clone(),
                rank,
                path: None,
                rows: 0,
                bytes: 0,
                error: Some(e.to_string()),
            }),
        }
    }
    out
}
