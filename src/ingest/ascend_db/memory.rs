//! Memory tables into the model's memory evidence: NPU_MEM (app / device HBM samples),
//! NPU_MODULE_MEM (reserved bytes per driver module, named through ENUM_MODULE), MEMORY_RECORD
//! (PTA / GE allocator totals) and OP_MEMORY (per-operator allocations).

use super::Ctx;
use super::open::err;
use super::rows;
use super::strings::load_enum;
use crate::ingest::error::IngestError;
use crate::model::StrId;

pub(super) fn ingest(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    let modules = if cx.schema.has("ENUM_MODULE") {
        load_enum(cx.c, cx.path, "ENUM_MODULE", cx.b)?
    } else {
        Default::default()
    };
    // (table, select of: component id, ts, allocated, reserved, active, hbm, device).
    let sources = [
        (
            "NPU_MEM",
            "SELECT type, timestampNs, NULL, NULL, NULL, hbm, deviceId FROM NPU_MEM",
        ),
        (
            "NPU_MODULE_MEM",
            "SELECT moduleId, timestampNs, NULL, totalReserved, NULL, NULL, deviceId FROM NPU_MODULE_MEM",
        ),
        (
            "MEMORY_RECORD",
            "SELECT component, timestamp, totalAllocated, totalReserved, totalActive, NULL, deviceId FROM MEMORY_RECORD",
        ),
    ];
    let path = cx.path;
    for (table, sql) in sources {
        if !cx.schema.has(table) {
            continue;
        }
        let source = cx.b.intern(table);
        let mut st = cx.c.prepare(sql).map_err(|e| err(path, e))?;
        let mut q = st.query([]).map_err(|e| err(path, e))?;
        while let Some(r) = q.next().map_err(|e| err(path, e))? {
            let raw = rows::int(r, 0);
            let component = if table == "NPU_MODULE_MEM" {
                match modules.get(&raw) {
                    Some(&s) => s,
                    None => cx.b.intern(&format!("module {raw}")),
                }
            } else {
                cx.strings.get(raw)
            };
            let m = &mut cx.b.t.memory;
            m.file.push(cx.file);
            m.source.push(source);
            m.component.push(component);
            m.ts_ns.push(rows::int(r, 1));
            m.allocated_bytes.push(rows::int(r, 2));
            m.reserved_bytes.push(rows::int(r, 3));
            m.active_bytes.push(rows::int(r, 4));
            m.hbm_bytes.push(rows::int(r, 5));
            m.device
                .push(rows::int(r, 6).clamp(-1, i32::MAX as i64) as i32);
        }
    }
    if cx.schema.has("OP_MEMORY") {
        let mut st = cx
            .c
            .prepare("SELECT name, size, allocationTime, releaseTime, allocationTotalAllocated, allocationTotalReserved, releaseTotalAllocated, releaseTotalReserved, deviceId FROM OP_MEMORY")
            .map_err(|e| err(path, e))?;
        let mut q = st.query([]).map_err(|e| err(path, e))?;
        while let Some(r) = q.next().map_err(|e| err(path, e))? {
            let name: StrId = cx.strings.get(rows::int(r, 0));
            let m = &mut cx.b.t.op_memory;
            m.file.push(cx.file);
            m.name.push(name);
            m.size_bytes.push(rows::int(r, 1));
            m.allocation_ns.push(rows::int(r, 2));
            m.release_ns.push(rows::int(r, 3));
            m.allocation_total_allocated.push(rows::int(r, 4));
            m.allocation_total_reserved.push(rows::int(r, 5));
            m.release_total_allocated.push(rows::int(r, 6));
            m.release_total_reserved.push(rows::int(r, 7));
            m.device
                .push(rows::int(r, 8).clamp(-1, i32::MAX as i64) as i32);
        }
    }
    Ok(())
}
