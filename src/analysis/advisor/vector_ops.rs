//! Vector operator performance, after msprof-analyze advisor's AI Core performance check, vector
//! part (analyzer/computation/ai_core_performance/ai_core_performance_checker.py,
//! rules/en/aicore_performance.yaml `vector_operators`): the AI_VECTOR_CORE / MIX_AIV tasks of
//! op types that take at least 1% of the file's op time (compute tasks plus collective ops) or
//! 1 s, grouped by kernel name and input-output shapes, with their mean aiv_vec / aiv_mte2 /
//! aiv_mte3 ratios. A group is bound when vec + mte2 + mte3 ≥ 0.9 (`vec_mte2_mte3`), else
//! mte2 ≥ 0.7, mte3 ≥ 0.7 or vec ≥ 0.7; otherwise its "optimization space" is
//! max(0.7 − each ratio). Reported as msprof-analyze does: the 5 groups with the most space, the
//! 5 bound groups with the most time. (The cube and FlashAttention parts of that checker are not
//! ported: no shared capture has a matmul of 100 MB or a FlashAttention operator to check
//! them on.)
//!
//! Time at stake (profscope's estimate): per unbound group, its time × (1 − busiest of the three
//! ratios / 0.7): the time saved if its busiest pipe reached the 70% the rule calls bound.

use super::op_rows::{ascend_files, comm_ns, duration, rows, shown};
use super::{FileRule, Keyed, finding, not_checked, where_file};
use crate::analysis::devices::Device;
use crate::contract::Finding;
use crate::model::op_metrics::pipe;
use crate::model::{Category, FileId, StrId, Tables};
use std::collections::BTreeMap;

pub const RULE: FileRule = FileRule {
    name: "vector_operators",
    run,
};

const TYPE_SHARE: f64 = 0.01;
const TYPE_MIN_NS: i64 = 1_000_000_000;
const TOTAL_BOUND: f64 = 0.9;
const PIPE_BOUND: f64 = 0.7;

/// One (kernel name, shapes) group.
struct Group {
    name: String,
    shape: String,
    dtype: String,
    tasks: u64,
    ns: i64,
    /// Sums of aiv_vec, aiv_mte2, aiv_mte3 (NaN counts as 0, as msprof-analyze reads `N/A`,
    /// in a task that has at least one of the three).
    sums: [f64; 3],
}

impl Group {
    fn means(&self) -> [f64; 3] {
        self.sums.map(|s| s / self.tasks.max(1) as f64)
    }
    /// The bound type, or the optimization space.
    fn verdict(&self) -> Result<&'static str, f64> {
        let [vec, mte2, mte3] = self.means();
        if vec + mte2 + mte3 >= TOTAL_BOUND {
            Ok("vec_mte2_mte3")
        } else if mte2 >= PIPE_BOUND {
            Ok("mte2")
        } else if mte3 >= PIPE_BOUND {
            Ok("mte3")
        } else if vec >= PIPE_BOUND {
            Ok("vec")
        } else {
            Err((PIPE_BOUND - vec)
                .max(PIPE_BOUND - mte2)
                .max(PIPE_BOUND - mte3))
        }
    }
}

/// The aiv_vec, aiv_mte2 and aiv_mte3 columns of `op_metrics.ratios`.
fn columns() -> [usize; 3] {
    ["aiv_vec_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio"].map(|p| pipe(p).expect("a pipe"))
}

fn run(t: &Tables, devices: &[Device]) -> Vec<Keyed> {
    let m = &t.op_metrics;
    let cols = columns();
    let mut out = Vec::new();
    for file in ascend_files(t, devices) {
        let mine = rows(t, file);
        if !mine
            .iter()
            .any(|&i| cols.iter().any(|&c| !m.ratios[i][c].is_nan()))
        {
            out.push(not_checked(
                "vector_operators",
                "no vector-core pipe ratios per task (capture with aic_metrics=PipeUtilization, torch_npu's default at Level1 / Level2)",
                where_file(t, file),
            ));
            continue;
        }
        let (groups, unmeasured) = groups(t, devices, file, mine);
        if let Some(mut f) = judge(where_file(t, file), &groups) {
            if unmeasured > 0 {
                f.evidence.insert(
                    0,
                    format!(
                        "{}: {unmeasured} vector task(s) without vector pipe ratios: not priced",
                        where_file(t, file)
                    ),
                );
            }
            out.push(Keyed {
                key: "vector_operators".into(),
                finding: f,
            });
        }
    }
    out
}

/// A group's key: kernel name, input shapes, output shapes.
type GroupKey = (StrId, StrId, StrId);

/// The vector tasks (`mine`: the file's op_metrics rows) of the op types that take at least
/// [`TYPE_SHARE`] of the file's op time or [`TYPE_MIN_NS`], grouped by kernel name and shapes.
fn groups(
    t: &Tables,
    devices: &[Device],
    file: FileId,
    mine: Vec<usize>,
) -> (BTreeMap<GroupKey, Group>, u64) {
    let m = &t.op_metrics;
    let cols = columns();
    let compute = crate::units::sum_ns(
        devices
            .iter()
            .filter(|d| d.file == file)
            .flat_map(|d| d.events.iter())
            .filter(|&&i| t.events.category[i as usize] == Category::ComputeKernel)
            .map(|&i| t.events.dur_ns.at(i as usize)),
    );
    let total = compute.saturating_add(comm_ns(t, devices, file));
    let vector: Vec<usize> = mine
        .into_iter()
        .filter(|&i| {
            matches!(t.str(m.task_type[i]), "AI_VECTOR_CORE" | "MIX_AIV")
                && !m.input_shapes[i].is_empty()
                && !m.output_shapes[i].is_empty()
        })
        .collect();
    let mut type_ns: BTreeMap<StrId, i64> = BTreeMap::new();
    for &i in &vector {
        let e = type_ns.entry(m.op_type[i]).or_default();
        *e = e.saturating_add(m.dur_ns[i]);
    }
    let mut groups: BTreeMap<GroupKey, Group> = BTreeMap::new();
    // A task with none of the three ratios (not written, or dropped as impossible by the
    // reader) has nothing to price: left out, and counted.
    let mut unmeasured = 0u64;
    for &i in &vector {
        if cols.iter().all(|&c| m.ratios[i][c].is_nan()) {
            unmeasured += 1;
            continue;
        }
        let ns = type_ns[&m.op_type[i]];
        if (total <= 0 || (ns as f64) < TYPE_SHARE * total as f64) && ns < TYPE_MIN_NS {
            continue;
        }
        let g = groups
            .entry((m.name[i], m.input_shapes[i], m.output_shapes[i]))
            .or_insert_with(|| Group {
                name: t.str(m.name[i]).to_string(),
                shape: shown(t.str(m.input_shapes[i])),
                dtype: String::new(),
                tasks: 0,
                ns: 0,
                sums: [0.0; 3],
            });
        g.tasks += 1;
        g.ns = g.ns.saturating_add(m.dur_ns[i]);
        g.dtype = shown(t.str(m.input_dtypes[i]));
        for (k, &c) in cols.iter().enumerate() {
            let v = m.ratios[i][c];
            g.sums[k] += if v.is_nan() { 0.0 } else { f64::from(v) };
        }
    }
    (groups, unmeasured)
}

/// The finding of one file's groups (`w`: where the file is): the groups with the most room
/// and the bound ones with the most time, and the time at stake; None without a group.
fn judge(w: String, groups: &BTreeMap<GroupKey, Group>) -> Option<Finding> {
    let mut bound: Vec<(&Group, &str)> = Vec::new();
    let mut open: Vec<(&Group, f64)> = Vec::new();
    for g in groups.values() {
        match g.verdict() {
            Ok(b) => bound.push((g, b)),
            Err(space) => open.push((g, space)),
        }
    }
    if bound.is_empty() && open.is_empty() {
        return None;
    }
    bound.sort_by(|a, b| b.0.ns.cmp(&a.0.ns).then(a.0.name.cmp(&b.0.name)));
    open.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.name.cmp(&b.0.name)));
    let stake: f64 = open
        .iter()
        .map(|(g, _)| {
            let busiest = g.means().into_iter().fold(0.0, f64::max);
            g.ns as f64 * (1.0 - busiest / PIPE_BOUND).max(0.0)
        })
        .sum();
    let mut f = finding(
        "vector_operators",
        "msprof-analyze advisor: computation/ai_core_performance/ai_core_performance_checker.py (vector part), rules/en/aicore_performance.yaml vector_operators",
    );
    f.time_at_stake_ns = stake.round() as i64;
    f.statement = format!(
        "{} vector operator shape(s) of the busiest vector op types leave every vector pipe below 70% (most room {:.1}%); {} are bound",
        open.len(),
        open.first().map_or(0.0, |o| o.1 * 100.0),
        bound.len()
    );
    f.estimate = "Σ over the unbound shapes: their time × (1 − busiest of aiv_vec / aiv_mte2 / aiv_mte3 ratio / 0.7)".into();
    let line = |g: &Group, what: String| {
        format!(
            "{w}: {} shape {} {}: {what}, {} task(s), {}",
            g.name,
            g.shape,
            g.dtype,
            g.tasks,
            duration(g.ns)
        )
    };
    for (g, space) in open.iter().take(5) {
        f.evidence
            .push(line(g, format!("optimization space {:.1}%", space * 100.0)));
    }
    for (g, b) in bound.iter().take(5) {
        f.evidence.push(line(g, format!("{b} bound")));
    }
    f.recommendation = "for the shapes with room: tune their tiling / block count for these shapes or pick a better-fitting kernel (AOE operator tuning); for the bound ones: cut the data they move (fuse with neighbours, avoid the TransData format conversions, e.g. torch_npu.npu.config.allow_internal_format = False)".into();
    Some(f)
}
