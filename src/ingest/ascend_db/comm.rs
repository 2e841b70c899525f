//! COMMUNICATION_OP: the big collective ops (`hcom_allReduce__210_0_1`), on HCCL
//! `Group <group> Communication` threads, as trace_view.json shows them.

use super::Ctx;
use super::open::err;
use super::rows;
use crate::ingest::builder::NewEvent;
use crate::ingest::error::IngestError;

pub(super) fn ingest(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    if !cx.schema.has("COMMUNICATION_OP") {
        cx.missing("COMMUNICATION_OP", "no collective ops");
        return Ok(());
    }
    let path = cx.path;
    let mut st = cx
        .c
        .prepare("SELECT opName, startNs, endNs, connectionId, groupName FROM COMMUNICATION_OP")
        .map_err(|e| err(path, e))?;
    let mut q = st.query([]).map_err(|e| err(path, e))?;
    while let Some(r) = q.next().map_err(|e| err(path, e))? {
        let gid = rows::int_or(r, 4, 0);
        let group = cx.strings.get(gid);
        let thread = cx.thread(
            (super::PID_HCCL, super::tasks::GROUP_TID_BASE + gid),
            ("HCCL", "NPU"),
            None,
            |t| format!("Group {} Communication", t.str(group)),
        );
        let name = cx.strings.get(rows::int(r, 0));
        cx.b.push_event(NewEvent::span(
            thread,
            rows::int(r, 1),
            rows::int(r, 2),
            name,
            rows::int(r, 3),
        ));
    }
    Ok(())
}
