//! COMMUNICATION_OP: the big collective ops (`hcom_allReduce__210_0_1`), on HCCL
//! `Group <group> Communication` threads, as trace_view.json shows them.

use super::Ctx;
use super::scan::{Spec, for_each_rows};
use crate::ingest::builder::NewEvent;
use crate::ingest::error::IngestError;

pub(super) fn ingest(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    if !cx.schema.has("COMMUNICATION_OP") {
        cx.missing("COMMUNICATION_OP", "no collective ops");
        return Ok(());
    }
    const COLS: [Spec; 5] = [
        &["opName"],
        &["startNs"],
        &["endNs"],
        &["connectionId"],
        &["groupName"],
    ];
    for_each_rows(cx, "COMMUNICATION_OP", &COLS, |cx, rows| {
        for r in rows.chunks_exact(COLS.len()) {
            if !cx.span_ok("COMMUNICATION_OP", r[1], r[2]) {
                continue;
            }
            // A NULL group (-1) shares group id 0's thread.
            let gid = r[4].max(0);
            let group = cx.strings.get(gid);
            let thread = cx.thread(
                (super::PID_HCCL, super::tasks::GROUP_TID_BASE + gid),
                ("HCCL", "NPU"),
                None,
                |t| format!("Group {} Communication", t.str(group)),
            );
            let name = cx.strings.get(r[0]);
            cx.b.push_event(NewEvent::span(thread, r[1], r[2], name, r[3]));
        }
    })
}
