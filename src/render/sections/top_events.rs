//! The top-events section: per device and subset, the events with the most total time.

use super::{Section, dev, pct, sec};
use crate::render::human_ns;
use crate::report::Report;

/// Per device and subset: the events with the most total time.
pub(super) fn top_events(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    for t in &a.top_events {
        let title = format!(
            "Top {} events by total time: {}",
            t.subset.as_str().replace('_', " "),
            dev(&t.device)
        );
        let mut s = sec(
            title,
            vec!["name", "count", "sum", "% of subset", "mean", "p50", "max"],
        );
        for x in &t.by_sum {
            s.rows.push(vec![
                x.name.clone(),
                x.count.to_string(),
                human_ns(x.sum_ns),
                pct(x.pct_of_total),
                human_ns(x.mean_ns as i64),
                human_ns(x.p50_ns as i64),
                human_ns(x.max_ns),
            ]);
        }
        s.notes.push(format!(
            "subset: {} events, {} (denominator of %)",
            t.subset_events,
            human_ns(t.subset_sum_ns)
        ));
        if !s.rows.is_empty() {
            out.push(s);
        }
    }
}
