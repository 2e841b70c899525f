//! Exports of the normalized tables for other tools: [`perfetto`] (a Chrome-trace JSON the
//! Perfetto UI opens, windowed, with profscope's derived tracks) and [`parquet`] (the events
//! table, Hive-partitioned by run and rank, for DuckDB / Spark / DataFusion), both
//! built on [`event_view`], the denormalized events view `profscope query` reads too; and
//! [`arrow_tables`] (the model's tables as Arrow batches for in-process readers: the Python binding).

pub mod arrow_tables;
pub mod event_view;
pub mod parquet;
pub mod perfetto;
