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

/// Whether `x` can be a pipe ratio: a share of the task's time, 0 to 1 (NaN: not written).
pub fn possible_ratio(x: f32) -> bool {
    x.is_nan() || (0.0..=1.0).contains(&x)
}

/// Tasks with a pipe ratio no ratio can be (negative, above 1, infinite: a damaged or made-up
/// file), per pipe with the first such value. Such a task keeps none of its ratios (all NaN),
/// so no rule prices it; the reader names the pipes and counts in a `pmu_ratio_invalid`
/// diagnostic ([`Self::summary`]).
#[derive(Debug, Clone, Default)]
pub struct ImpossibleRatios {
    pub tasks: u64,
    pub per_pipe: [u64; 9],
    pub first: [f32; 9],
}

impl ImpossibleRatios {
    /// Checks one task's ratios; drops them all (NaN) when one is impossible.
    pub fn check(&mut self, r: &mut [f32; 9]) {
        if r.iter().all(|&x| possible_ratio(x)) {
            return;
        }
        self.tasks += 1;
        for (p, &x) in r.iter().enumerate() {
            if !possible_ratio(x) {
                if self.per_pipe[p] == 0 {
                    self.first[p] = x;
                }
                self.per_pipe[p] += 1;
            }
        }
        *r = [f32::NAN; 9];
    }

    /// `aiv_vec_ratio on 12 tasks (first: -1), aic_mac_ratio on 1 task (first: inf)`.
    pub fn summary(&self) -> String {
        PIPES
            .iter()
            .zip(self.per_pipe.iter().zip(&self.first))
            .filter(|(_, (n, _))| **n > 0)
            .map(|(p, (n, x))| {
                let s = if *n == 1 { "" } else { "s" };
                format!("{p} on {n} task{s} (first: {x})")
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_ratios_drop_the_task_and_are_named() {
        let mut c = ImpossibleRatios::default();
        let mut ok = [0.5, 1.0, 0.0, f32::NAN, 0.2, 0.3, 0.4, 0.5, 0.6];
        c.check(&mut ok);
        assert_eq!((ok[0], c.tasks), (0.5, 0));
        for bad in [-1.0, f32::INFINITY, f32::NEG_INFINITY, 1.0001] {
            let mut r = [0.5; 9];
            r[5] = bad;
            c.check(&mut r);
            assert!(r.iter().all(|x| x.is_nan()));
        }
        assert_eq!(c.tasks, 4);
        assert_eq!(c.summary(), "aiv_vec_ratio on 4 tasks (first: -1)");
    }
}
