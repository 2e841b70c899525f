//! The query use case (feature `sql`; `profscope query`, the MCP `query` tool): the inputs under
//! the paths read on the one per-file loop, each file's frames built from its tables (which are
//! then dropped), and the SQL run over all frames.

use super::drive::{Limits, each_file};
use crate::ingest::{IngestError, IngestOpts, Progress, discover};
use crate::query::engine::{QueryError, Wanted};
use crate::query::session::{self, QueryRequest};
use crate::report::query::QueryResult;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum QueryRunError {
    #[error(transparent)]
    Discover(#[from] IngestError),
    #[error("no profiling inputs under {0}")]
    NoInputs(String),
    #[error(transparent)]
    Query(#[from] QueryError),
}

/// Discovers the inputs under `paths` and runs one query over them (`run`: the value of the
/// `run` column, default the first path's folder name).
pub fn query_paths(
    paths: &[PathBuf],
    name: &str,
    sql: &str,
    run: Option<String>,
    limit: Option<usize>,
) -> Result<QueryResult, QueryRunError> {
    let started = std::time::Instant::now();
    let d = discover(paths)?;
    if d.inputs.is_empty() {
        return Err(QueryRunError::NoInputs(format!("{paths:?}")));
    }
    let run = run.unwrap_or_else(|| super::default_run_tag(&paths[0]));
    let q = QueryRequest {
        name,
        sql,
        run: &run,
        limit,
    };
    let wanted = Wanted::from_sql(sql);
    let mut parts = Vec::with_capacity(d.inputs.len());
    each_file(
        &d.inputs,
        Limits::default(),
        IngestOpts::default(),
        &Progress::default(),
        |input, read| match read.tables {
            Ok(t) => session::file_part(&input.path, &t, &run, &wanted),
            Err(e) => Err(format!("not read: {e}")),
        },
        |input, part| parts.push((input.path.clone(), part)),
    );
    let inputs = d.inputs.iter().map(|i| i.path.clone()).collect();
    Ok(session::finish(parts, inputs, &q, started)?)
}
