//! The report contract: what every renderer consumes. JSON output is this struct serialized;
//! `schema_version` changes whenever a field changes meaning (docs/json-output.md).

pub mod budget;
pub mod capture_advice;
pub mod detail;
pub mod diff;
pub mod diff_input;
pub mod headline;
pub mod headline_efficiency;
pub mod json_view;
pub mod memory;
pub mod noise;
pub mod query;
pub mod verdict;

pub use crate::registry::{Analyses, AnalyzeOpts};

use crate::analysis::summary::Summary;
use crate::diag::{Diagnostic, Diagnostics};
use serde::Serialize;

pub const SCHEMA_VERSION: &str = "0.14.0";

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: &'static str,
    pub tool: &'static str,
    pub tool_version: &'static str,
    /// Inputs as given on the command line.
    pub inputs: Vec<String>,
    /// The answer, one short line per kind of finding (report::headline): window and steps, the bound verdict
    /// with its rule, slowest / waited-for rank, top bubble cause, vendor verdict, warnings.
    pub headline: Vec<String>,
    /// The bound verdict with its status (`confident`, `qualified`, `withheld`), the reasons and
    /// the coverage signals behind it (report::verdict, docs/evidence.md).
    pub verdict: crate::analysis::evidence::Verdict,
    /// One line: how far the numbers are from the vendor's own numbers in the input
    /// (`analyses.vendor_agreement.verdict`), first so a reader knows what to trust.
    pub vendor_verdict: String,
    /// The step-length lists cut to their first entries (`--detail capped`, the default for
    /// JSON; report::detail), each with how many entries it had; absent when none was cut.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub detail_capped: Vec<detail::CappedList>,
    pub summary: Summary,
    pub analyses: Analyses,
    /// Ingest time summed over files, ms (absent when not measured; files run in parallel, so
    /// the sums can exceed `wall_ms`).
    pub ingest_ms: Option<f64>,
    /// Per-file analysis time summed over files, ms (absent when not measured).
    pub analysis_ms: Option<f64>,
    /// Wall time of ingest and analysis together, ms (absent when not measured).
    pub wall_ms: Option<f64>,
    /// Set when the tables were sliced to one phase (`--phase`) before the analyses.
    pub phase_slice: Option<crate::analysis::phases::SliceInfo>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    pub fn build(
        inputs: Vec<String>,
        summary: Summary,
        mut analyses: Analyses,
        diagnostics: &Diagnostics,
        other_captures: &[(String, String)],
        ingest_ms: Option<f64>,
    ) -> Report {
        let verdict = verdict::build(&analyses);
        capture_advice::add(&mut analyses.advisor, &verdict);
        let mut diagnostics = diagnostics.clone();
        diagnostics.merge(verdict::clock_diagnostics(&analyses));
        diagnostics.merge(verdict::layout_diagnostics(&analyses));

        diagnostics.merge(verdict::diagnostics(&verdict));
        let listed: Vec<Diagnostic> = diagnostics.iter().cloned().collect();
        Report {
            schema_version: SCHEMA_VERSION,
            tool: "profscope",
            tool_version: env!("CARGO_PKG_VERSION"),
            inputs,
            headline: headline::build(&analyses, &verdict, &listed, other_captures),
            verdict,
            vendor_verdict: analyses.vendor_agreement.verdict.clone(),
            detail_capped: Vec::new(),
            summary,
            analyses,
            ingest_ms,
            analysis_ms: None,
            wall_ms: None,
            phase_slice: None,
            diagnostics: listed,
        }
    }
}
