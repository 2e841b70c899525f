//! A rank kept as the vendor's summaries only: an `ASCEND_PROFILER_OUTPUT/` holding
//! `analysis.db`, `step_trace_time.csv` and / or `communication.json` but no timeline, profiler db
//! or kernel CSV (what trimmed archives and the vendor's own test data keep for some ranks;
//! ../shared/formats/parallel-layout.md section 3). The rank gets a file row of format
//! `vendor_summary` with no events; `analysis.db`'s tables go to the reference table here, the
//! CSV and JSON summaries through the companions every text export reads
//! (`msprof_csv::companions`), and `profiler_metadata.json` through the caller, as for every
//! torch_npu export.

use super::builder::{FileMeta, TablesBuilder};
use super::error::IngestError;
use crate::diag::Severity;
use crate::model::files::SourceFormat;

/// Adds the file row of the summary-only rank whose input is `path` (one of
/// `detect::SUMMARY_FILES`) and reads its `analysis.db` when there is one.
pub fn ingest(path: &str, size_bytes: u64, b: &mut TablesBuilder) -> Result<(), IngestError> {
    let meta = FileMeta {
        format: Some(SourceFormat::VendorSummary),
        size_bytes,
        parsed_bytes: size_bytes,
        rank: super::rank::rank_from_path(path),
        ..FileMeta::default()
    };
    let file = b.add_file(path, meta);
    let adb = std::path::Path::new(path).with_file_name("analysis.db");
    if adb.is_file()
        && let Err(e) = super::ascend_db::read_analysis_db(&adb.display().to_string(), file, b)
    {
        b.diag()
            .add("companion_unreadable", Severity::DataLoss, || {
                format!(
                    "{e} (the summary-only rank's analysis.db; its CSV and JSON summaries are read)"
                )
            });
    }
    Ok(())
}
