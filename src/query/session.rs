//! One `profscope query` run (feature `sql`): each input's tables become its frames (pipeline::query
//! reads them on the one per-file loop and drops each file's tables once its frames are built),
//! then the SQL runs and the rows are wrapped in the [`QueryResult`] contract. A file that cannot
//! be read, or that lost data while being read, becomes a caveat; the query runs over the rest.

use super::engine::{self, FileFrames, Frames, QueryError, Wanted};
use crate::diag::Severity;
use crate::report::query::QueryResult;

/// One file's frames and its data-loss caveats.
pub type FilePart = (FileFrames, Vec<String>);

pub struct QueryRequest<'a> {
    /// `adhoc`, a named query or a .sql file.
    pub name: &'a str,
    pub sql: &'a str,
    pub run: &'a str,
    pub limit: Option<usize>,
}

/// One file's frames (the columns `wanted` names) and its data-loss caveats, from its tables.
pub fn file_part(
    path: &str,
    t: &crate::model::Tables,
    run: &str,
    wanted: &Wanted,
) -> Result<FilePart, String> {
    let lost: Vec<String> = t
        .diagnostics
        .iter()
        .filter(|d| d.severity >= Severity::DataLoss)
        .map(|d| {
            format!(
                "{path}: {} ({}×){}",
                d.code,
                d.count,
                d.examples
                    .first()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    engine::file_frames(t, run, wanted)
        .map(|f| (f, lost))
        .map_err(|e| e.to_string())
}

/// Runs the SQL over the files' frames (a file that could not be read is a caveat) and wraps the
/// rows in the result contract.
pub fn finish(
    parts: Vec<(String, Result<FilePart, String>)>,
    inputs: Vec<String>,
    q: &QueryRequest<'_>,
    started: std::time::Instant,
) -> Result<QueryResult, QueryError> {
    let mut frames = Frames::default();
    let mut caveats = Vec::new();
    let mut read = 0;
    for (path, part) in parts {
        match part {
            Ok((f, lost)) => {
                frames.push(f)?;
                caveats.extend(lost);
                read += 1;
            }
            Err(e) => caveats.push(format!("{path}: {e}")),
        }
    }
    if read == 0 {
        return Err(QueryError::NoInput);
    }
    let out = engine::run(&frames, q.sql, q.limit)?;
    Ok(QueryResult {
        schema_version: crate::report::SCHEMA_VERSION,
        query: q.name.to_string(),
        sql: q.sql.to_string(),
        inputs,
        run: q.run.to_string(),
        tables: frames.tables(),
        truncated: (out.rows.len() as u64) < out.total_rows,
        columns: out.columns,
        rows: out.rows,
        total_rows: out.total_rows,
        limit: q.limit,
        caveats,
        elapsed_ms: started.elapsed().as_millis() as u64,
    })
}
