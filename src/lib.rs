//! profscope: turns accelerator profiles (Ascend NPU, PyTorch/Kineto) into answers.
//!
//! The pipeline, in one direction only:
//!
//! ```text
//!   files ──ingest/──▶ model::Tables ──analysis/──▶ results ──report/──▶ Report ──render/──▶ text/JSON/md
//!                 (one module per format,   (pure functions,        (what every renderer
//!                  one builder)               no I/O)                 consumes)
//! ```
//!
//! * [`ingest`] detects a file's format and fills the normalized [`model::Tables`] through
//!   [`ingest::builder`]. It never modifies its inputs. Anomalies become [`diag::Diagnostics`].
//! * [`model`] holds struct-of-arrays tables with interned strings and integer nanoseconds;
//!   [`model::schema`] declares every column once (docs/tables.md mirrors it).
//! * [`analysis`] computes results from tables; it never reads files.
//! * [`report`] assembles results into a [`report::Report`]; [`render`] prints it.
//! * [`pipeline`] runs ingest and analysis file by file (bounded parallel) and combines the parts.
//! * [`export`] writes the tables for other tools (Perfetto, Parquet); [`query`] runs SQL over
//!   them (the engine only with the cargo feature `sql`).
//! * [`cli`] parses arguments, wires the layers together and picks exit codes.
//! * [`synth`] writes deterministic, realistic profiling roots with a ground truth (tests, benches, demo).
//! * [`units`] defines the time and byte units (binary and decimal multiples) and parses sizes.
//!
//! Layering rule: cli → everything; pipeline → ingest, analysis, report; ingest → model; analysis → model and
//! contract (the result types it returns); report → analysis; render → report. Nothing imports cli; analysis never does I/O; render never sees the model.

pub mod analysis;
pub mod cli;
pub mod collect;
pub mod contract;
pub mod diag;
pub mod export;
pub mod ingest;
pub mod model;
pub mod pipeline;
pub mod query;
pub mod registry;
pub mod render;
pub mod report;
pub mod static_names;
pub mod synth;
pub mod units;

/// The precondition of the test suite, checked first: `cargo test` runs the library's unit tests
/// before the integration tests, and stops at the first failing binary, so without the real
/// samples a developer reads this one message instead of dozens of file-not-found failures.
#[cfg(test)]
mod shared_samples {
    #[test]
    fn real_samples_are_beside_the_repository() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples");
        assert!(
            p.join("README.md").is_file(),
            "the real sample files are not at {}: most integration tests read them. Lay the \
             shared folder beside the repository (CI does: `../shared/samples`, see \
             ../shared/samples/README.md), or run the unit tests alone: `cargo test --lib -- --skip real_samples`",
            p.display()
        );
    }
}
