//! Per-task operator metrics for the advisor's operator rules: the op state (static / dynamic
//! shape) and the PMU pipe ratios of each device compute task that has them (db
//! COMPUTE_TASK_INFO.opState + TASK_PMU_INFO; kernel_details.csv / op_summary's `OP State` and
//! `aic_*_ratio` / `aiv_*_ratio` columns, read beside a text export's trace_view.json too). One
//! row per task, self-contained (name, type, duration, shapes), so it needs no event link.

use super::ids::FileId;
use super::strings::StrId;

/// The pipe ratios kept, in column order: the AI Core's (cube) pipes, then the AI Vector core's.
pub const PIPES: [&str; 9] = [
    "aic_mac_ratio",
    "aic_scalar_ratio",
    "aic_mte1_ratio",
    "aic_mte2_ratio",
    "aic_fixpipe_ratio",
    "aiv_vec_ratio",
    "aiv_scalar_ratio",
    "aiv_mte2_ratio",
    "aiv_mte3_ratio",
];

/// Index of a pipe in [`PIPES`].
pub fn pipe(name: &str) -> Option<usize> {
    PIPES.iter().position(|p| *p == name)
}

#[derive(Debug, Clone, Default)]
pub struct OpMetricsTable {
    pub file: Vec<FileId>,
    /// Kernel name (`trans_TransData_23`).
    pub name: Vec<StrId>,
    pub op_type: Vec<StrId>,
    /// `AI_CORE`, `AI_VECTOR_CORE`, `MIX_AIV`, ... (kernel_details `Accelerator Core`, db taskType).
    pub task_type: Vec<StrId>,
    pub dur_ns: Vec<i64>,
    /// `static` / `dynamic` as written; empty when the source has no op state.
    pub op_state: Vec<StrId>,
    pub input_shapes: Vec<StrId>,
    pub input_dtypes: Vec<StrId>,
    pub output_shapes: Vec<StrId>,
    /// [`PIPES`] in order, each a fraction of the task's core time; NaN when not written.
    pub ratios: Vec<[f32; 9]>,
}

/// One row's values.
#[derive(Debug, Clone, Copy)]
pub struct OpMetricsRow {
    pub file: FileId,
    pub name: StrId,
    pub op_type: StrId,
    pub task_type: StrId,
    pub dur_ns: i64,
    pub op_state: StrId,
    pub input_shapes: StrId,
    pub input_dtypes: StrId,
    pub output_shapes: StrId,
    pub ratios: [f32; 9],
}

impl OpMetricsTable {
    pub fn push(&mut self, r: OpMetricsRow) {
        self.file.push(r.file);
        self.name.push(r.name);
        self.op_type.push(r.op_type);
        self.task_type.push(r.task_type);
        self.dur_ns.push(r.dur_ns);
        self.op_state.push(r.op_state);
        self.input_shapes.push(r.input_shapes);
        self.input_dtypes.push(r.input_dtypes);
        self.output_shapes.push(r.output_shapes);
        self.ratios.push(r.ratios);
    }
    pub fn len(&self) -> usize {
        self.file.len()
    }
    pub fn is_empty(&self) -> bool {
        self.file.is_empty()
    }
}
