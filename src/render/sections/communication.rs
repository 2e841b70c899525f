//! The communication section: communication shares of compute-kernel and device-task time.

use super::{Section, against_compute, dev, pct, sec};
use crate::render::human_ns;
use crate::report::Report;

/// Communication shares, each with its denominator.
pub(super) fn communication(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    let mut m = sec(
        "Communication (two denominators)",
        vec![
            "device",
            "(a) comm kernels",
            "(a) against compute kernels",
            "(b) EVENT/MEM waits",
            "(b) NOTIFY_WAIT",
            "(b) data movement",
            "comm overlapped with compute",
        ],
    );
    for c in &a.communication {
        m.rows.push(vec![
            dev(&c.device),
            format!(
                "{} × {} (max {}; {})",
                c.comm_kernels.count,
                human_ns(c.comm_kernels.sum_ns),
                human_ns(c.comm_kernels.max_ns),
                c.comm_kernels_source
            ),
            against_compute(c.comm_kernels.pct),
            format!(
                "{} ({})",
                human_ns(c.event_and_mem_waits.sum_ns),
                pct(c.event_and_mem_waits.pct)
            ),
            format!(
                "{} ({})",
                human_ns(c.notify_wait.sum_ns),
                pct(c.notify_wait.pct)
            ),
            format!(
                "{} ({})",
                human_ns(c.data_movement.sum_ns),
                pct(c.data_movement.pct)
            ),
            format!(
                "{} ({} of comm)",
                human_ns(c.overlapped_with_compute_ns),
                pct(c.overlapped_pct_of_comm)
            ),
        ]);
    }
    m.notes.push("(a) denominator: sum of compute-kernel durations; (b) denominator: sum of all device-task durations; host Dequeue@Hccl* rows never count".into());
    if !m.rows.is_empty() {
        out.push(m);
    }
}
