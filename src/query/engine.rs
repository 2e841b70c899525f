//! The SQL engine (cargo feature `sql`): the model's tables as polars frames, SQL through polars'
//! SQL front end on lazy frames. Tables: `events` (the [`EventView`] columns plus `rank` and
//! `run`, in the column order DuckDB gives a Hive-partitioned Parquet export, so `SELECT *` agrees
//! too) and `steps`. Files are added one at a time; their frames are stacked.

use crate::export::event_view::{COLUMNS, EventView, Values};
use crate::model::Tables;
use crate::report::query::{QueryColumn, TableRows};
use polars::prelude::*;
use polars::sql::SQLContext;

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("no input could be read")]
    NoInput,
    #[error("building the `{table}` frame: {message}")]
    Frame {
        table: &'static str,
        message: String,
    },
    #[error("SQL: {0}")]
    Sql(String),
}

fn frame_err(table: &'static str) -> impl Fn(PolarsError) -> QueryError {
    move |e| QueryError::Frame {
        table,
        message: e.to_string(),
    }
}

/// The frames of every file read so far.
#[derive(Default)]
pub struct Frames {
    events: Option<DataFrame>,
    steps: Option<DataFrame>,
}

/// One output column as a polars column.
fn column(name: &str, n: usize, values: Values<'_>) -> Column {
    let name = PlSmallStr::from_str(name);
    match values {
        Values::Str(f) => StringChunked::from_iter_values(name, (0..n).map(f)).into_column(),
        Values::I32(f) => Int32Chunked::from_vec(name, (0..n).map(f).collect()).into_column(),
        Values::I64(f) => Int64Chunked::from_vec(name, (0..n).map(f).collect()).into_column(),
    }
}

fn stack(into: &mut Option<DataFrame>, df: DataFrame) -> PolarsResult<()> {
    match into {
        Some(all) => {
            all.vstack_mut_owned(df)?;
        }
        None => *into = Some(df),
    }
    Ok(())
}

impl Frames {
    /// Adds one file's tables, with `run` as the run column.
    pub fn add(&mut self, t: &Tables, run: &str) -> Result<(), QueryError> {
        let view = EventView::new(t);
        let n = view.rows();
        let rank = i64::from(t.files.rank.first().copied().unwrap_or(-1));
        let mut cols: Vec<Column> = COLUMNS
            .iter()
            .zip(view.columns())
            .map(|(&(name, _), values)| column(name, n, values))
            .collect();
        cols.push(Int64Chunked::from_vec("rank".into(), vec![rank; n]).into_column());
        cols.push(StringChunked::from_iter_values("run".into(), (0..n).map(|_| run)).into_column());
        let events = DataFrame::new(n, cols).map_err(frame_err("events"))?;
        stack(&mut self.events, events).map_err(frame_err("events"))?;

        let s = &t.steps;
        let m = s.len();
        let file = |i: usize| s.file[i].idx();
        let steps = DataFrame::new(
            m,
            vec![
                StringChunked::from_iter_values(
                    "file".into(),
                    (0..m).map(|i| t.files.path[file(i)].as_str()),
                )
                .into_column(),
                Int64Chunked::from_vec("step".into(), s.step.clone()).into_column(),
                Int64Chunked::from_vec("start_ns".into(), s.start_ns.clone()).into_column(),
                Int64Chunked::from_vec("end_ns".into(), s.end_ns.clone()).into_column(),
                Int64Chunked::from_vec(
                    "dur_ns".into(),
                    (0..m).map(|i| s.end_ns[i] - s.start_ns[i]).collect(),
                )
                .into_column(),
                StringChunked::from_iter_values(
                    "source".into(),
                    (0..m).map(|i| t.str(s.source[i])),
                )
                .into_column(),
                Int64Chunked::from_vec(
                    "rank".into(),
                    (0..m).map(|i| i64::from(t.files.rank[file(i)])).collect(),
                )
                .into_column(),
                StringChunked::from_iter_values("run".into(), (0..m).map(|_| run)).into_column(),
            ],
        )
        .map_err(frame_err("steps"))?;
        stack(&mut self.steps, steps).map_err(frame_err("steps"))?;
        Ok(())
    }

    pub fn tables(&self) -> Vec<TableRows> {
        [("events", &self.events), ("steps", &self.steps)]
            .into_iter()
            .map(|(name, df)| TableRows {
                table: name.to_string(),
                rows: df.as_ref().map_or(0, |d| d.height() as u64),
            })
            .collect()
    }
}

/// Rows of a result, cut at `limit`.
pub struct Output {
    pub columns: Vec<QueryColumn>,
    pub rows: Vec<Vec<serde_json::Value>>,
    pub total_rows: u64,
}

fn json(v: AnyValue<'_>) -> serde_json::Value {
    use serde_json::Value;
    match v {
        AnyValue::Null => Value::Null,
        AnyValue::Boolean(b) => Value::Bool(b),
        AnyValue::String(s) => Value::String(s.to_string()),
        AnyValue::StringOwned(s) => Value::String(s.to_string()),
        AnyValue::UInt8(x) => x.into(),
        AnyValue::UInt16(x) => x.into(),
        AnyValue::UInt32(x) => x.into(),
        AnyValue::UInt64(x) => x.into(),
        AnyValue::Int8(x) => x.into(),
        AnyValue::Int16(x) => x.into(),
        AnyValue::Int32(x) => x.into(),
        AnyValue::Int64(x) => x.into(),
        AnyValue::Float32(x) => {
            serde_json::Number::from_f64(f64::from(x)).map_or(Value::Null, Value::Number)
        }
        AnyValue::Float64(x) => serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number),
        other => Value::String(other.to_string()),
    }
}

/// Runs `sql` over the frames (read-only: every query sees fresh lazy frames).
pub fn run(frames: &Frames, sql: &str, limit: Option<usize>) -> Result<Output, QueryError> {
    let events = frames.events.clone().ok_or(QueryError::NoInput)?;
    let steps = frames.steps.clone().ok_or(QueryError::NoInput)?;
    let mut ctx = SQLContext::new();
    ctx.register("events", events.lazy());
    ctx.register("steps", steps.lazy());
    let sql_err = |e: PolarsError| QueryError::Sql(e.to_string());
    let df = ctx
        .execute(sql)
        .map_err(sql_err)?
        .collect()
        .map_err(sql_err)?;
    let total = df.height();
    let shown = limit.map_or(total, |l| l.min(total));
    let columns: Vec<QueryColumn> = df
        .columns()
        .iter()
        .map(|c| QueryColumn {
            name: c.name().to_string(),
            ty: c.dtype().to_string(),
        })
        .collect();
    let mut rows = Vec::with_capacity(shown);
    for i in 0..shown {
        rows.push(
            df.columns()
                .iter()
                .map(|c| c.get(i).map(json).unwrap_or(serde_json::Value::Null))
                .collect(),
        );
    }
    Ok(Output {
        columns,
        rows,
        total_rows: total as u64,
    })
}
