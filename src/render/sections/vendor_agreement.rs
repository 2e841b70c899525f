//! The vendor-agreement section: our free time beside the vendor's, per device.

use super::{Section, dev, sec};
use crate::render::human_ns;
use crate::report::Report;

pub(super) fn vendor_agreement(r: &Report, out: &mut Vec<Section>) {
    let v = &r.analyses.vendor_agreement;
    if v.checks.is_empty() {
        return;
    }
    let mut t = sec(
        "Vendor agreement (ours against the vendor's own numbers in the same input)",
        vec![
            "device",
            "source",
            "step",
            "metric",
            "ours",
            "vendor",
            "diff (% of window)",
            "agrees",
        ],
    );
    for c in &v.checks {
        t.rows.push(vec![
            dev(&c.device),
            c.source
                .split(" of ")
                .next()
                .unwrap_or(&c.source)
                .to_string(),
            c.step.map_or_else(|| "window".into(), |k| k.to_string()),
            c.metric.to_string(),
            human_ns(c.ours_ns),
            human_ns(c.vendor_ns),
            format!("{:+.3}%", c.diff_pct_of_window),
            if c.agrees { "yes" } else { "NO" }.into(),
        ]);
    }
    t.notes.push(v.verdict.clone());
    t.notes.push(format!(
        "a check agrees when |ours − vendor| ≤ {}% of the window compared (the device's, or the step's)",
        v.tolerance_pct_of_window
    ));
    out.push(t);
}
