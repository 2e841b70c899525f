//! The audit sections: phase validation, fixed-batch decode audit and MTP.

use super::{Section, count_of, rel, sec};
use crate::report::Report;

pub(super) fn audits(r: &Report, out: &mut Vec<Section>) {
    let a = &r.analyses;
    let mut p = sec(
        "Phase validation",
        vec![
            "file",
            "rank",
            "forward_eager",
            "forward_cudagraph",
            "prefill valid",
            "decode valid",
            "statement",
        ],
    );
    for x in &a.phases {
        p.rows.push(vec![
            rel(r, &x.file).to_string(),
            x.rank.to_string(),
            x.prefill.count.to_string(),
            x.decode.count.to_string(),
            x.prefill_valid.to_string(),
            x.decode_valid.to_string(),
            x.statement.clone(),
        ]);
    }
    let markers = a
        .phases
        .iter()
        .any(|x| x.prefill.count > 0 || x.decode.count > 0);
    if !a.phases.is_empty() && !markers {
        out.push(sec(
            format!(
                "Phase validation: no vLLM phase markers (forward_eager / forward_cudagraph) in {}: phase validation and decode audit do not apply",
                count_of(a.phases.len() as u64, "file")
            ),
            Vec::new(),
        ));
        let replays = a
            .batch_audit
            .as_ref()
            .is_some_and(|b| b.ranks.iter().any(|x| x.replays > 0));
        if !replays {
            return;
        }
    }
    if !p.rows.is_empty() {
        out.push(p);
    }
    let Some(b) = &a.batch_audit else { return };
    let mut s = sec(
        "Fixed real-batch decode audit",
        vec![
            "file",
            "rank",
            "replays",
            "qualified",
            "bare / one marker / not 1:1 / other B",
            "KV min range",
            "KV max range",
            "KV mean range",
        ],
    );
    let rg = |r: &Option<crate::contract::Range>| {
        r.as_ref()
            .map_or("-".into(), |r| format!("{}..{}", r.lo, r.hi))
    };
    for x in &b.ranks {
        s.rows.push(vec![
            rel(r, &x.file).to_string(),
            x.rank.to_string(),
            x.replays.to_string(),
            x.qualified.to_string(),
            format!(
                "{} / {} / {} / {}",
                x.bare, x.one_marker, x.not_one_to_one, x.other_batch
            ),
            rg(&x.kv_min_range),
            rg(&x.kv_max_range),
            rg(&x.kv_mean_range),
        ]);
    }
    s.notes.push(format!(
        "batch {}; proven {}; ranks agree {}: {}",
        b.batch.map_or("not determined".into(), |x| x.to_string()),
        b.fixed_batch_proven,
        b.ranks_agree,
        b.statement
    ));
    out.push(s);
}
