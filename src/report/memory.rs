//! The `profscope memory` report: one run's HBM attribution (analysis::memory) with the evidence
//! it was built from, and optionally a second run side by side. Bytes are bytes, MiB are 2^20
//! bytes (npu-smi's "MB"), GiB 2^30 (vLLM's GiB and its GB-that-is-GiB).

use crate::analysis::memory::{self, Attribution, CheckpointWeights, CompareRow};
use crate::model::serving::VllmRecord;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct LogUse {
    pub file: String,
    pub lines: usize,
    pub records: Vec<VllmRecord>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunMemory {
    /// What the run was given as (paths).
    pub inputs: Vec<String>,
    pub logs: Vec<LogUse>,
    pub checkpoint: Option<CheckpointWeights>,
    /// msprof files whose module memory was read.
    pub msprof_files: Vec<String>,
    pub skipped: usize,
    /// Up to 10 skipped files, with why.
    pub skipped_examples: Vec<(String, String)>,
    pub errors: Vec<String>,
    pub attribution: Attribution,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemoryReport {
    pub schema_version: &'static str,
    pub report: &'static str,
    pub run: RunMemory,
    pub compare: Option<RunMemory>,
    /// Per component, mean bytes per device of each run (where known) and the difference.
    pub side_by_side: Vec<CompareRow>,
}

/// Parallelism the checkpoint estimate assumes.
#[derive(Debug, Clone, Copy)]
pub struct Parallel {
    pub tp: u64,
    pub dp: u64,
    pub expert_parallel: bool,
}

pub fn report(run: RunMemory, compare: Option<RunMemory>) -> MemoryReport {
    let side_by_side = compare
        .as_ref()
        .map(|b| memory::compare(&run.attribution, &b.attribution))
        .unwrap_or_default();
    MemoryReport {
        schema_version: super::SCHEMA_VERSION,
        report: "memory",
        run,
        compare,
        side_by_side,
    }
}
