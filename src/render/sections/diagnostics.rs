//! The diagnostics section: every diagnostic code with its severity, count and first example.

use super::{Section, sec};
use crate::report::Report;

pub(super) fn diagnostics(r: &Report, out: &mut Vec<Section>) {
    let mut d = sec(
        "Diagnostics",
        vec!["code", "severity", "count", "first example"],
    );
    for x in &r.diagnostics {
        d.rows.push(vec![
            x.code.to_string(),
            x.severity.as_str().into(),
            x.count.to_string(),
            x.examples.first().cloned().unwrap_or_default(),
        ]);
    }
    if d.rows.is_empty() {
        d.notes.push("none".into());
    }
    out.push(d);
}
