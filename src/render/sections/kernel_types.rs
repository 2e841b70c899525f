//! The kernel-types section (HTA definitions): idle, compute and non-compute shares of each device's kernel span.

use super::{Section, dev, pct, sec};
use crate::render::human_ns;
use crate::report::Report;

/// HTA's kernel-type breakdown, whole capture and complete steps only.
pub(super) fn kernel_types(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    for (title, rows) in [
        (
            "Kernel types, whole capture (HTA definitions; shares of the kernel span)",
            &a.kernel_types,
        ),
        (
            "Kernel types, complete ProfilerSteps only (HTA's default window)",
            &a.kernel_types_complete_steps,
        ),
    ] {
        let mut k = sec(
            title,
            vec![
                "device",
                "span",
                "idle",
                "compute",
                "non-compute",
                "overlap classes (% of busy)",
            ],
        );
        for x in rows {
            k.rows.push(vec![
                dev(&x.device),
                human_ns(x.span_ns),
                pct(x.idle_pct_of_span),
                pct(x.compute_pct_of_span),
                pct(x.non_compute_pct_of_span),
                x.classes
                    .iter()
                    .map(|c| format!("{} {:.1}%", c.class, c.pct_of_busy))
                    .collect::<Vec<_>>()
                    .join("; "),
            ]);
        }
        if !k.rows.is_empty() && !a.device_time.is_empty() {
            k.notes.push("idle here is HTA's: the span minus the union of kernels, and a collective's waits (Notify Wait, EVENT_WAIT) are not kernels, so time spent waiting in a collective is idle; the vendor's free time above counts the whole collective as busy: the two differ mostly by the time spent waiting inside collectives".into());
        }
        if !k.rows.is_empty() {
            out.push(k);
        }
    }
}
