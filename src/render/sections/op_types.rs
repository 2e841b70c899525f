//! The op-types section: time per operator type and its kernel families.

use super::{Section, dev, pct, sec};
use crate::render::human_ns;
use crate::report::Report;

/// Per device: compute time per op type (inputs with kernel details).
pub(super) fn op_types(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    for o in &a.op_types {
        let mut s = sec(
            format!("Compute time per op type: {}", dev(&o.device)),
            vec![
                "op type",
                "task type",
                "count",
                "sum",
                "% of tasks",
                "mean",
                "max",
            ],
        );
        for x in o.rows.iter().take(15) {
            s.rows.push(vec![
                x.op_type.clone(),
                x.task_type.clone(),
                x.stats.count.to_string(),
                human_ns(x.stats.sum_ns),
                pct(x.stats.pct_of_total),
                human_ns(x.stats.mean_ns as i64),
                human_ns(x.stats.max_ns),
            ]);
        }
        s.notes.push(format!(
            "{} tasks with kernel details, {} (denominator of %); {} op/task types, top {} shown",
            o.tasks,
            human_ns(o.sum_ns),
            o.rows.len(),
            s.rows.len()
        ));
        out.push(s);
    }
}
