//! `profscope query PATH... (--sql 'SELECT ...' | --query NAME | FILE.sql) [--format table|json|csv]
//! [--limit N] [--run TAG]`, and `profscope query --list`: SQL over the normalized tables of any
//! input (query::engine, cargo feature `sql`). Builds without the feature list the named queries
//! and say how to get the engine (exit 2) instead of running.

use crate::query::named::{self, NAMED};
use crate::render::query::QueryFormat;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct QueryArgs {
    /// Files or folders (any input analyze reads); a path ending in .sql is the query to run.
    #[arg(required_unless_present = "list")]
    pub paths: Vec<PathBuf>,
    /// The SQL to run (tables: events, steps; docs/query.md).
    #[arg(long, conflicts_with = "query")]
    pub sql: Option<String>,
    /// A named query (`profscope query --list`) or a .sql file.
    #[arg(long)]
    pub query: Option<String>,
    /// List the named queries and exit.
    #[arg(long)]
    pub list: bool,
    /// Output format (csv: every row of the result up to --limit; json: the result contract).
    #[arg(long, value_enum, default_value_t = QueryFormat::Table)]
    pub format: QueryFormat,
    /// Rows to print at most (0: all). The result always says how many rows there were.
    #[arg(long, default_value_t = 1000)]
    pub limit: usize,
    /// The value of the `run` column (default: the first input's folder name, as export).
    #[arg(long)]
    pub run: Option<String>,
}

/// The SQL and its label from --sql, --query or a positional .sql file; the rest are inputs.
fn resolve(a: &QueryArgs) -> anyhow::Result<(String, String, Vec<PathBuf>)> {
    let (files, inputs): (Vec<PathBuf>, Vec<PathBuf>) = a
        .paths
        .iter()
        .cloned()
        .partition(|p| p.extension().is_some_and(|e| e == "sql"));
    anyhow::ensure!(
        !inputs.is_empty(),
        "give at least one profile file or folder"
    );
    let choices = usize::from(a.sql.is_some()) + usize::from(a.query.is_some()) + files.len();
    anyhow::ensure!(
        choices == 1,
        "give exactly one query: --sql 'SELECT ...', --query NAME (see --list) or one FILE.sql"
    );
    if let Some(sql) = &a.sql {
        return Ok(("adhoc".into(), sql.clone(), inputs));
    }
    let q = a
        .query
        .clone()
        .unwrap_or_else(|| files[0].display().to_string());
    let path = PathBuf::from(&q);
    if path.is_file() {
        let sql = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        return Ok((q, sql, inputs));
    }
    match named::find(&q) {
        Some(n) => Ok((n.name.to_string(), n.sql.to_string(), inputs)),
        None => anyhow::bail!(
            "`{q}` is neither a file nor a named query ({})",
            NAMED.iter().map(|n| n.name).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn list() -> String {
    let w = NAMED.iter().map(|n| n.name.len()).max().unwrap_or(0);
    NAMED
        .iter()
        .map(|n| format!("{:w$}  {}\n", n.name, n.summary()))
        .collect()
}

pub fn run(a: QueryArgs) -> anyhow::Result<ExitCode> {
    if a.list {
        crate::cli::write_stdout(&list())?;
        return Ok(ExitCode::SUCCESS);
    }
    let (name, sql, inputs) = resolve(&a)?;
    execute(&a, &name, &sql, &inputs)
}

#[cfg(not(feature = "sql"))]
fn execute(_: &QueryArgs, _: &str, _: &str, _: &[PathBuf]) -> anyhow::Result<ExitCode> {
    anyhow::bail!("{}", crate::query::NO_SQL_HINT)
}

#[cfg(feature = "sql")]
fn execute(a: &QueryArgs, name: &str, sql: &str, inputs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let limit = (a.limit > 0).then_some(a.limit);
    let r = crate::pipeline::query::query_paths(inputs, name, sql, a.run.clone(), limit)?;
    for c in &r.caveats {
        if a.format != QueryFormat::Table {
            eprintln!("profscope query: caveat: {c}");
        }
    }
    crate::cli::write_stdout(&crate::render::query::render(&r, a.format))?;
    Ok(ExitCode::SUCCESS)
}
