//! The model's tables as Arrow record batches, for readers in the same process (the Python
//! binding's `load`, which hands them to pyarrow through the Arrow C stream interface without a
//! copy): `events` (the Parquet export's denormalized view, docs/export.md), `steps`, `kernels`,
//! `comm_tasks`, `op_metrics`, `files`. Strings are resolved; a file index becomes its path and
//! rank. Columns as docs/tables.md describes them.

use crate::model::op_metrics::PIPES;
use crate::model::{FileId, StrId, Tables};
use arrow_array::{
    ArrayRef, BooleanArray, Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch,
    StringArray, UInt64Array,
};
use arrow_schema::ArrowError;
use std::sync::Arc;

/// Every table, in this order: events, steps, kernels, comm_tasks, op_metrics, files.
pub fn record_batches(t: &Tables) -> Result<Vec<(&'static str, RecordBatch)>, ArrowError> {
    Ok(vec![
        ("events", super::parquet::events_batch(t)?),
        ("steps", steps(t)?),
        ("kernels", kernels(t)?),
        ("comm_tasks", comm_tasks(t)?),
        ("op_metrics", op_metrics(t)?),
        ("files", files(t)?),
    ])
}

fn strs(t: &Tables, ids: &[StrId]) -> ArrayRef {
    Arc::new(ids.iter().map(|&s| Some(t.str(s))).collect::<StringArray>())
}

fn i64s(v: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(v))
}

fn i32s(v: impl IntoIterator<Item = i32>) -> ArrayRef {
    Arc::new(Int32Array::from_iter_values(v))
}

/// A file index column as the file's path and rank.
fn file_cols(t: &Tables, files: &[FileId]) -> [(&'static str, ArrayRef); 2] {
    [
        (
            "file",
            Arc::new(
                files
                    .iter()
                    .map(|f| Some(t.files.path[f.idx()].as_str()))
                    .collect::<StringArray>(),
            ),
        ),
        ("rank", i32s(files.iter().map(|f| t.files.rank[f.idx()]))),
    ]
}

fn batch(cols: Vec<(&'static str, ArrayRef)>) -> Result<RecordBatch, ArrowError> {
    RecordBatch::try_from_iter(cols)
}

fn steps(t: &Tables) -> Result<RecordBatch, ArrowError> {
    let s = &t.steps;
    let mut cols = file_cols(t, &s.file).to_vec();
    cols.extend([
        ("step", i64s(s.step.iter().copied())),
        ("start_ns", i64s(s.start_ns.iter().copied())),
        ("end_ns", i64s(s.end_ns.iter().copied())),
        ("source", strs(t, &s.source)),
    ]);
    batch(cols)
}

fn kernels(t: &Tables) -> Result<RecordBatch, ArrowError> {
    let k = &t.kernels;
    batch(vec![
        ("op_type", strs(t, &k.op_type)),
        ("task_type", strs(t, &k.task_type)),
        ("block_num", i64s(k.block_num.iter().copied())),
        ("mix_block_num", i64s(k.mix_block_num.iter().copied())),
        ("input_shapes", strs(t, &k.input_shapes)),
        ("input_dtypes", strs(t, &k.input_dtypes)),
        ("input_formats", strs(t, &k.input_formats)),
        ("output_shapes", strs(t, &k.output_shapes)),
        ("output_dtypes", strs(t, &k.output_dtypes)),
        ("output_formats", strs(t, &k.output_formats)),
    ])
}

fn comm_tasks(t: &Tables) -> Result<RecordBatch, ArrowError> {
    let c = &t.comm_tasks;
    batch(vec![
        ("op_name", strs(t, &c.op_name)),
        ("group", strs(t, &c.group)),
        ("plane", i32s(c.plane.iter().copied())),
        ("src_rank", i64s(c.src_rank.iter().copied())),
        ("dst_rank", i64s(c.dst_rank.iter().copied())),
        ("transport", strs(t, &c.transport)),
        ("link", strs(t, &c.link)),
        ("data_type", strs(t, &c.data_type)),
        ("size_bytes", i64s(c.size_bytes.iter().copied())),
        (
            "bandwidth_bytes_per_s",
            Arc::new(Float64Array::from(c.bandwidth_bytes_per_s.clone())),
        ),
        ("notify_id", i64s(c.notify_id.iter().copied())),
    ])
}

fn op_metrics(t: &Tables) -> Result<RecordBatch, ArrowError> {
    let m = &t.op_metrics;
    let mut cols = file_cols(t, &m.file).to_vec();
    cols.extend([
        ("name", strs(t, &m.name)),
        ("op_type", strs(t, &m.op_type)),
        ("task_type", strs(t, &m.task_type)),
        ("dur_ns", i64s(m.dur_ns.iter().copied())),
        ("op_state", strs(t, &m.op_state)),
        ("input_shapes", strs(t, &m.input_shapes)),
        ("input_dtypes", strs(t, &m.input_dtypes)),
        ("output_shapes", strs(t, &m.output_shapes)),
    ]);
    for (k, name) in PIPES.iter().enumerate() {
        let v: ArrayRef = Arc::new(Float32Array::from_iter_values(
            m.ratios.iter().map(|r| r[k]),
        ));
        cols.push((name, v));
    }
    batch(cols)
}

fn files(t: &Tables) -> Result<RecordBatch, ArrowError> {
    let f = &t.files;
    batch(vec![
        (
            "path",
            Arc::new(
                f.path
                    .iter()
                    .map(|p| Some(p.as_str()))
                    .collect::<StringArray>(),
            ),
        ),
        (
            "format",
            Arc::new(
                f.format
                    .iter()
                    .map(|x| x.map(|x| x.as_str()))
                    .collect::<StringArray>(),
            ),
        ),
        ("rank", i32s(f.rank.iter().copied())),
        ("world_size", i32s(f.world_size.iter().copied())),
        (
            "size_bytes",
            Arc::new(UInt64Array::from(f.size_bytes.clone())),
        ),
        ("base_time_ns", i64s(f.base_time_ns.iter().copied())),
        (
            "truncated",
            Arc::new(BooleanArray::from(f.truncated.clone())),
        ),
    ])
}
