//! Compute time per operator type and task type, per device, with msprof-analyze compute_op_sum's
//! definition: every device task that has kernel details (db COMPUTE_TASK_INFO, kernel CSVs, a
//! text export's kernel_details.csv linked to its trace_view.json tasks), grouped by (op type,
//! the kernel info's task type), with count, sum, mean, std, min, quartiles and max. Empty when
//! the input carries no kernel details (Kineto traces do not). Denominator of `pct_of_total`: the
//! sum over all such tasks of the device.

use super::devices::Device;
use super::stats::{Durations, dur_stats, saturated, wide_sum};
pub use crate::contract::op_types::*;
use crate::model::events::NO_ROW;
use crate::model::hash::FxHashMap;
use crate::model::{StrId, Tables};

pub fn compute(t: &Tables, devices: &[Device]) -> Vec<OpTypes> {
    let mut out = Vec::new();
    for d in devices {
        let mut groups: FxHashMap<(StrId, StrId), Durations> = FxHashMap::default();
        for &i in &d.events {
            let i = i as usize;
            let k = t.events.kernel[i];
            if k != NO_ROW {
                let (op, tt) = (
                    t.kernels.op_type[k as usize],
                    t.kernels.task_type[k as usize],
                );
                groups
                    .entry((op, tt))
                    .or_default()
                    .push(t.events.dur_ns.at(i));
            }
        }
        if groups.is_empty() {
            continue;
        }
        let sum = wide_sum(groups.values().flat_map(Durations::iter));
        let tasks = groups.values().map(|v| v.len() as u64).sum();
        let mut rows: Vec<OpTypeRow> = groups
            .into_iter()
            .map(|((op, tt), durs)| OpTypeRow {
                op_type: t.str(op).to_string(),
                task_type: t.str(tt).to_string(),
                stats: dur_stats(t.str(op).to_string(), durs.iter().collect(), sum),
            })
            .collect();
        rows.sort_by(|a, b| {
            (b.stats.sum_ns, &a.op_type, &a.task_type).cmp(&(
                a.stats.sum_ns,
                &b.op_type,
                &b.task_type,
            ))
        });
        out.push(OpTypes {
            device: d.evidence.clone(),
            tasks,
            sum_ns: saturated(sum),
            rows,
        });
    }
    out
}
