//! The composition section: what the compute stream spends its time on.

use super::{FAMILY_ROWS, Section, count_of, dev, pct, sec};
use crate::render::human_ns;
use crate::report::Report;

/// Per device: compute time per stream and per kernel family.
pub(super) fn composition(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    for c in &a.composition {
        let mut s = sec(
            format!("Compute-stream composition: {}", dev(&c.device)),
            vec!["stream / family", "kernels", "compute time", "% of compute"],
        );
        for x in &c.streams {
            s.rows.push(vec![
                format!("stream {}", x.stream),
                x.kernels.to_string(),
                human_ns(x.compute_ns),
                pct(x.pct_of_compute),
            ]);
        }
        for x in c.families.iter().take(FAMILY_ROWS) {
            s.rows.push(vec![
                format!("family {}", x.name),
                x.count.to_string(),
                human_ns(x.sum_ns),
                pct(x.pct_of_compute),
            ]);
        }
        let rest = c.families.get(FAMILY_ROWS..).unwrap_or_default();
        if !rest.is_empty() {
            s.rows.push(vec![
                format!("other ({})", count_of(rest.len() as u64, "family")),
                rest.iter().map(|x| x.count).sum::<u64>().to_string(),
                human_ns(rest.iter().map(|x| x.sum_ns).sum()),
                pct(rest.iter().map(|x| x.pct_of_compute).sum()),
            ]);
        }
        s.notes.push(format!(
            "denominator: {} of compute kernels ({} kernels); busiest stream {}",
            human_ns(c.compute_ns),
            c.compute_kernels,
            c.busiest_stream.map_or("-".into(), |s| s.to_string())
        ));
        out.push(s);
    }
}
