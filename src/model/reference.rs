//! Vendor-derived reference values, kept to compare against, never used as input to an
//! analysis: torch_npu's `analysis.db` (StepTraceTime, CommAnalyzerTime, CommAnalyzerBandwidth,
//! CommAnalyzerMatrix), one row per cell (long format), numbers and text as written.

use super::ids::FileId;
use super::strings::StrId;

#[derive(Debug, Clone, Default)]
pub struct ReferenceTable {
    pub file: Vec<FileId>,
    /// The vendor table (`StepTraceTime`).
    pub table: Vec<StrId>,
    /// Row number inside that table (0-based, in rowid order).
    pub row: Vec<u32>,
    pub column: Vec<StrId>,
    /// The value when numeric (the vendor's unit: µs for StepTraceTime and CommAnalyzerTime); NaN
    /// for text.
    pub number: Vec<f64>,
    /// The value when text; empty for numbers.
    pub text: Vec<StrId>,
}

impl ReferenceTable {
    pub fn len(&self) -> usize {
        self.row.len()
    }
    pub fn is_empty(&self) -> bool {
        self.row.is_empty()
    }
}
