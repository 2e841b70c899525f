//! One `profscope query` run (feature `sql`): read each input into tables, add its frames, drop
//! the tables, run the SQL, and wrap the rows in the [`QueryResult`] contract. A file that cannot
//! be read, or that lost data while being read, becomes a caveat; the query runs over the rest.

use super::engine::{self, FileFrames, Frames, QueryError, Wanted};
use crate::diag::Severity;
use crate::ingest::{Progress, detect::Input, ingest_one};
use crate::report::query::QueryResult;
use rayon::prelude::*;

/// One file's frames and its data-loss caveats.
type FilePart = (FileFrames, Vec<String>);

pub struct QueryRequest<'a> {
    /// `adhoc`, a named query or a .sql file.
    pub name: &'a str,
    pub sql: &'a str,
    pub run: &'a str,
    pub limit: Option<usize>,
}

pub fn execute(inputs: &[Input], q: &QueryRequest<'_>) -> Result<QueryResult, QueryError> {
    let started = std::time::Instant::now();
    let wanted = Wanted::from_sql(q.sql);
    // Files are read in parallel (rayon's pool: one file per core at a time); each file's tables
    // are dropped once its frames are built.
    let parts: Vec<(String, Result<FilePart, String>)> = inputs
        .par_iter()
        .map(|input| {
            let part = match ingest_one(input, &Progress::default()) {
                Ok(t) => {
                    let lost: Vec<String> = t
                        .diagnostics
                        .iter()
                        .filter(|d| d.severity >= Severity::DataLoss)
                        .map(|d| {
                            format!(
                                "{}: {} ({}×){}",
                                input.path,
                                d.code,
                                d.count,
                                d.examples
                                    .first()
                                    .map(|e| format!(": {e}"))
                                    .unwrap_or_default()
                            )
                        })
                        .collect();
                    engine::file_frames(&t, q.run, &wanted)
                        .map(|f| (f, lost))
                        .map_err(|e| e.to_string())
                }
                Err(e) => Err(format!("not read: {e}")),
            };
            (input.path.clone(), part)
        })
        .collect();
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
        inputs: inputs.iter().map(|i| i.path.clone()).collect(),
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
