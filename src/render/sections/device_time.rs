//! The device-time section: window, computing, communication and free time per device.

use super::{Section, dev, pct, sec};
use crate::render::human_ns;
use crate::report::Report;

/// Per device: window, computing, communication, free, beside the vendor's free time.
pub(super) fn device_time(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    let mut t = sec(
        "Device time (vendor definitions; shares of the window)",
        vec![
            "device",
            "window",
            "computing",
            "communication",
            "comm not overlapped",
            "free",
            "vendor free (diff)",
        ],
    );
    for d in &a.device_time {
        let vendor = d.vendor.as_ref().map_or("-".into(), |v| {
            format!("{} ({:+.3}%)", human_ns(v.free_ns), v.free_diff_pct)
        });
        t.rows.push(vec![
            dev(&d.device),
            human_ns(d.window_ns),
            format!(
                "{} ({})",
                human_ns(d.computing_ns),
                pct(d.computing_pct_of_window)
            ),
            human_ns(d.communication_ns),
            format!(
                "{} ({})",
                human_ns(d.communication_not_overlapped_ns),
                pct(d.communication_not_overlapped_pct_of_window)
            ),
            format!("{} ({})", human_ns(d.free_ns), pct(d.free_pct_of_window)),
            vendor,
        ]);
    }
    t.notes.push("window = first start to last end of compute ∪ communication; free = window − (compute ∪ communication)".into());
    out.push(t);
}
