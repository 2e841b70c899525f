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

/// One file's frames.
pub struct FileFrames {
    events: DataFrame,
    steps: DataFrame,
}

/// The `events` columns a query can reach: those whose names appear in its text as identifiers,
/// or all of them when it has a `*` that is not `COUNT(*)`. Materializing only those keeps a
/// named query over a multi-GB root to a few columns (polars would prune the rest of the plan
/// anyway, but only after every column was built).
pub struct Wanted {
    all: bool,
    names: std::collections::HashSet<String>,
}

impl Wanted {
    pub fn from_sql(sql: &str) -> Wanted {
        let b = sql.as_bytes();
        let all = b.iter().enumerate().any(|(i, &c)| {
            c == b'*' && {
                let before = b[..i].iter().rev().find(|c| !c.is_ascii_whitespace());
                before != Some(&b'(')
            }
        });
        let names = sql
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect();
        Wanted { all, names }
    }

    pub fn has(&self, column: &str) -> bool {
        self.all || self.names.contains(column)
    }
}

/// A string column whose repeated values share bytes: the view of a value longer than 12 bytes
/// points into one buffer that holds each distinct value once (keyed by the address of the
/// source string: the interner's and the label tables' strings do not move). A file path
/// repeated on 11 M rows costs 16 bytes a row, not a copy of the path.
fn shared_strings<'a>(name: PlSmallStr, n: usize, f: impl Fn(usize) -> &'a str) -> Column {
    use polars_arrow::array::{Utf8ViewArray, View};
    use polars_arrow::datatypes::ArrowDataType;
    let mut offsets: std::collections::HashMap<(usize, usize), u32> = Default::default();
    let mut bytes: Vec<u8> = Vec::new();
    let mut views: Vec<View> = Vec::with_capacity(n);
    let mut last: Option<((usize, usize), View)> = None;
    for i in 0..n {
        let s = f(i);
        let key = (s.as_ptr() as usize, s.len());
        let view = match last {
            Some((k, v)) if k == key => v,
            _ if s.len() <= View::MAX_INLINE_SIZE as usize => View::new_inline(s.as_bytes()),
            _ => {
                let offset = *offsets.entry(key).or_insert_with(|| {
                    let o = bytes.len() as u32;
                    bytes.extend_from_slice(s.as_bytes());
                    o
                });
                View::new_from_bytes(s.as_bytes(), 0, offset)
            }
        };
        last = Some((key, view));
        views.push(view);
    }
    let buffer_len = bytes.len();
    let buffers: polars_buffer::Buffer<polars_buffer::Buffer<u8>> = vec![bytes.into()].into();
    // SAFETY: every view was made from a &str (valid UTF-8) by View::new_inline or points at
    // that string's bytes, copied whole into buffer 0 at `offset`.
    let array = unsafe {
        Utf8ViewArray::new_unchecked_unknown_md(
            ArrowDataType::Utf8View,
            views.into(),
            buffers,
            None,
            Some(buffer_len),
        )
    };
    StringChunked::with_chunk(name, array).into_column()
}

/// One output column as a polars column.
fn column(name: &str, n: usize, values: Values<'_>) -> Column {
    let name = PlSmallStr::from_str(name);
    match values {
        Values::Str(f) => shared_strings(name, n, f),
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

/// One file's tables as frames, with `run` as the run column and only the wanted event columns.
pub fn file_frames(t: &Tables, run: &str, wanted: &Wanted) -> Result<FileFrames, QueryError> {
    let view = EventView::new(t);
    let n = view.rows();
    let rank = i64::from(t.files.rank.first().copied().unwrap_or(-1));
    let mut cols: Vec<Column> = COLUMNS
        .iter()
        .zip(view.columns())
        // ts_ns always: a frame needs one column to carry its height (`COUNT(*)`).
        .filter(|((name, _), _)| wanted.has(name) || *name == "ts_ns")
        .map(|(&(name, _), values)| column(name, n, values))
        .collect();
    if wanted.has("rank") {
        cols.push(Int64Chunked::from_vec("rank".into(), vec![rank; n]).into_column());
    }
    if wanted.has("run") {
        cols.push(shared_strings("run".into(), n, |_| run));
    }
    let events = DataFrame::new(n, cols).map_err(frame_err("events"))?;

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
            StringChunked::from_iter_values("source".into(), (0..m).map(|i| t.str(s.source[i])))
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
    Ok(FileFrames { events, steps })
}

impl Frames {
    /// Appends one file's frames (files in input order).
    pub fn push(&mut self, f: FileFrames) -> Result<(), QueryError> {
        stack(&mut self.events, f.events).map_err(frame_err("events"))?;
        stack(&mut self.steps, f.steps).map_err(frame_err("steps"))
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
