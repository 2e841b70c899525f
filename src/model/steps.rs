//! Training/serving steps as the profiler recorded them (db STEP_TIME: host time of
//! `ProfilerStep#N`), per file.

use super::ids::FileId;
use super::strings::StrId;

#[derive(Debug, Clone, Default)]
pub struct StepTable {
    pub file: Vec<FileId>,
    /// N of `ProfilerStep#N`.
    pub step: Vec<i64>,
    pub start_ns: Vec<i64>,
    pub end_ns: Vec<i64>,
    /// Where the row came from (`STEP_TIME`).
    pub source: Vec<StrId>,
}

impl StepTable {
    pub fn len(&self) -> usize {
        self.step.len()
    }
    pub fn is_empty(&self) -> bool {
        self.step.is_empty()
    }
}
