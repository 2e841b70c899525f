//! The result of `profscope query` (and the MCP `query` tool): column names and types, rows as
//! JSON values (integers stay integers, NULL is null), the total row count before the limit and
//! whether rows were cut. Renderers: render/query.rs.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct QueryColumn {
    pub name: String,
    /// The engine's type name (`i64`, `f64`, `str`, ...).
    #[serde(rename = "type")]
    pub ty: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TableRows {
    pub table: String,
    pub rows: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct QueryResult {
    pub schema_version: &'static str,
    /// The named query (`queries/<name>.sql`), the .sql file, or `adhoc`.
    pub query: String,
    pub sql: String,
    pub inputs: Vec<String>,
    /// The value of the `run` column.
    pub run: String,
    /// Rows in each table the query could read.
    pub tables: Vec<TableRows>,
    pub columns: Vec<QueryColumn>,
    pub rows: Vec<Vec<serde_json::Value>>,
    /// Rows of the full result, before `limit`.
    pub total_rows: u64,
    /// The row cap applied (None: every row).
    pub limit: Option<usize>,
    pub truncated: bool,
    /// Inputs that could not be read (the query ran over the others).
    pub caveats: Vec<String>,
    pub elapsed_ms: u64,
}
