//! SQL over the normalized tables (`profscope query`). [`named`] holds the documented queries of
//! `queries/` (always compiled, so every build can list them); [`engine`] runs SQL with polars
//! (lazy + sql) and exists only with the cargo feature `sql`. The tables a query sees are
//! documented in docs/query.md: `events` (the denormalized view of [`crate::export::event_view`],
//! plus `run` and `rank`, the same columns DuckDB sees over a Parquet export) and `steps`.

#[cfg(feature = "sql")]
pub mod engine;
pub mod named;
#[cfg(feature = "sql")]
pub mod session;

/// How to get the engine, for builds without it.
pub const NO_SQL_HINT: &str = "this profscope was built without the SQL engine (cargo feature `sql`, off by default). \
Rebuild with it: `cargo install --path . --features sql`, or run `cargo run --release --features sql -- query ...`. \
Without it: `profscope export PATH --parquet DIR` and run the same queries/*.sql in DuckDB (docs/query.md)";
