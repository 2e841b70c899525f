//! The integration tests, one module per area, linked into one test binary (as ripgrep's
//! `tests/` is): one link of the crate with bundled SQLite, arrow and parquet instead of one per
//! file. Run one area with `cargo test --release --test it hostile::`, one test by its path.
//! Each module's `//!` says which of its inputs are real (../shared/samples) and which generated.

mod common;

mod advisor;
mod advisor_operators;
mod analyses;
mod ascend_db;
mod begin_end;
mod budget_sweep;
mod cache;
mod chunking;
mod cli;
mod clocks;
mod cluster_scale;
mod collect;
mod collect_case;
mod collect_memory;
mod collect_msprof;
mod communication_ops;
mod db_json_identity;
mod detail;
mod device_time;
mod diff;
mod dispatch;
mod docs;
mod efficiency;
mod evidence;
mod export_parquet;
mod export_perfetto;
mod graph_companions;
mod graph_mode;
mod hostile;
mod hta_agreement;
mod html_report;
mod idle_causes;
mod integrity;
mod kineto_semantics;
mod layering;
mod layout;
mod legacy_msprof;
mod mcp;
mod memory;
mod msprof_analyze_agreement;
mod msprof_csv;
mod nesting;
mod never_panic;
mod pipeline;
mod ranks;
mod real_traces;
mod registry;
mod report_identity;
mod scan_modes;
mod sql_queries;
mod synth_truth;
mod truncation;
mod vendor_agreement;
mod vendor_files;
mod verdict;
mod weights;
