//! torch_npu `ascend_pytorch_profiler_<rank>.db` and CANN `msprof_*.db` ingest (first slice of
//! issue 4). Opened read-only and immutable: no lock, no journal or WAL file touched or created.
//! Maps, through the builder, into the same tables the Chrome-trace reader fills:
//! TASK → `Ascend Hardware` device events (thread = stream, name from COMPUTE_TASK_INFO or
//! COMMUNICATION_SCHEDULE_TASK_INFO, else the task type; task type via STRING_IDS);
//! COMMUNICATION_OP → `HCCL` group ops; CANN_API → `CANN` host events; PYTORCH_API (TEXT ns) →
//! `Python` host events. Missing optional tables are diagnostics; a db without TASK is an error.

use super::builder::{FileMeta, NewEvent, TablesBuilder};
use super::error::IngestError;
use crate::diag::Severity;
use crate::model::StrId;
use rusqlite::{Connection, OpenFlags};
use std::collections::HashMap;

/// Synthetic pids (a db has no trace pids): distinct per role and device.
const PID_HARDWARE: i64 = 1 << 40;
const PID_HCCL: i64 = 2 << 40;
const PID_CANN: i64 = 3 << 40;
const PID_PYTHON: i64 = 4 << 40;

/// The `cat` given to kernel-type TASK rows that have no kernel info (classified `other`).
pub const TASK_WITHOUT_KERNEL_INFO: &str = "task_without_kernel_info";

fn is_kernel_task_type(tt: &str) -> bool {
    [
        "AI_CORE",
        "AI_VECTOR_CORE",
        "AI_CPU",
        "MIX_AIC",
        "MIX_AIV",
        "KERNEL_",
    ]
    .iter()
    .any(|p| tt.starts_with(p))
}

fn err(path: &str, e: rusqlite::Error) -> IngestError {
    IngestError::Db {
        path: path.to_string(),
        what: e.to_string(),
    }
}

/// Opens a db read-only and immutable (the URI form keeps SQLite from locking or journaling).
pub fn open(path: &str) -> Result<Connection, IngestError> {
    let abs = std::fs::canonicalize(path).map_err(|e| IngestError::Io {
        path: path.to_string(),
        source: e,
    })?;
    let uri = format!(
        "file:{}?immutable=1",
        abs.display()
            .to_string()
            .replace('?', "%3f")
            .replace('#', "%23")
    );
    Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| err(path, e))
}

fn has_table(c: &Connection, name: &str) -> bool {
    c.query_row(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1",
        [name],
        |_| Ok(()),
    )
    .is_ok()
}

/// Ingests one profiler db into `builder`.
pub fn ingest_file(path: &str, builder: &mut TablesBuilder) -> Result<(), IngestError> {
    let c = open(path)?;
    if !has_table(&c, "TASK") {
        return Err(IngestError::Db {
            path: path.to_string(),
            what: "no TASK table: not a profiler db".into(),
        });
    }
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let rank = if has_table(&c, "RANK_DEVICE_MAP") {
        c.query_row(
            "SELECT rankId FROM RANK_DEVICE_MAP WHERE rankId >= 0 LIMIT 1",
            [],
            |r| r.get::<_, i64>(0),
        )
        .ok()
        .map(|r| r as i32)
    } else {
        None
    };
    let rank = rank.or_else(|| super::rank::rank_from_path(path));
    let file = builder.add_file(
        path,
        FileMeta {
            format: Some(crate::model::files::SourceFormat::AscendDb),
            size_bytes: size,
            parsed_bytes: size,
            rank,
            ..Default::default()
        },
    );

    // STRING_IDS once, into the interner.
    let mut strings: HashMap<i64, StrId> = HashMap::new();
    if has_table(&c, "STRING_IDS") {
        let mut st = c
            .prepare("SELECT id, value FROM STRING_IDS")
            .map_err(|e| err(path, e))?;
        let rows = st
            .query_map([], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?))
            })
            .map_err(|e| err(path, e))?;
        for row in rows {
            let (id, v) = row.map_err(|e| err(path, e))?;
            strings.insert(id, builder.intern(v.as_deref().unwrap_or("")));
        }
    } else {
        builder.diag().add("missing_table", Severity::DataLoss, || {
            format!("{path}: no STRING_IDS: names and task types are unknown")
        });
    }
    let s = |id: Option<i64>| {
        id.and_then(|i| strings.get(&i).copied())
            .unwrap_or(StrId::EMPTY)
    };
    let missing = |b: &mut TablesBuilder, t: &str, what: &str| {
        let p = path.to_string();
        let (t, what) = (t.to_string(), what.to_string());
        b.diag().add("missing_table", Severity::Info, || {
            format!("{p}: no {t} ({what})")
        });
    };

    // TASK with kernel names.
    let compute = has_table(&c, "COMPUTE_TASK_INFO");
    let sched = has_table(&c, "COMMUNICATION_SCHEDULE_TASK_INFO");
    if !compute {
        missing(
            builder,
            "COMPUTE_TASK_INFO",
            "kernel names fall back to task types",
        );
    }
    let sql = format!(
        "SELECT t.startNs, t.endNs, t.deviceId, t.connectionId, t.taskType, t.streamId, {} FROM TASK t {} {}",
        match (compute, sched) {
            (true, true) => "COALESCE(ci.name, si.name)",
            (true, false) => "ci.name",
            (false, true) => "si.name",
            (false, false) => "NULL",
        },
        if compute {
            "LEFT JOIN COMPUTE_TASK_INFO ci ON ci.globalTaskId = t.globalTaskId"
        } else {
            ""
        },
        if sched {
            "LEFT JOIN COMMUNICATION_SCHEDULE_TASK_INFO si ON si.globalTaskId = t.globalTaskId"
        } else {
            ""
        },
    );
    let mut st = c.prepare(&sql).map_err(|e| err(path, e))?;
    let mut rows = st.query([]).map_err(|e| err(path, e))?;
    let mut threads: HashMap<(i64, i64), crate::model::ThreadId> = HashMap::new();
    let no_info = builder.intern(TASK_WITHOUT_KERNEL_INFO);
    let mut unnamed_kernels = 0u64;
    while let Some(r) = rows.next().map_err(|e| err(path, e))? {
        let (start, end): (i64, i64) = (
            r.get(0).map_err(|e| err(path, e))?,
            r.get(1).map_err(|e| err(path, e))?,
        );
        let device: i64 = r.get(2).map_err(|e| err(path, e))?;
        let stream: i64 = r.get(5).map_err(|e| err(path, e))?;
        let tt = s(r.get(4).map_err(|e| err(path, e))?);
        let name = s(r.get(6).map_err(|e| err(path, e))?);
        let thread = *threads.entry((device, stream)).or_insert_with(|| {
            builder.named_thread(
                file,
                PID_HARDWARE + device,
                stream,
                ("Ascend Hardware", &format!("NPU {device}")),
                &format!("Stream {stream}"),
            )
        });
        // A kernel-type task with no kernel info row (real dbs: the task envelope of each HCCL
        // collective on its stream) is not a compute kernel: keep it, say what it is.
        let unnamed = name.is_empty() && is_kernel_task_type(builder.tables().str(tt));
        unnamed_kernels += unnamed as u64;
        builder.push_event(NewEvent {
            thread,
            ts_ns: start,
            dur_ns: end - start,
            name: if name.is_empty() { tt } else { name },
            cat: if unnamed { no_info } else { StrId::EMPTY },
            task_type: tt,
            stream: stream.clamp(-1, i32::MAX as i64) as i32,
            connection_id: r.get(3).map_err(|e| err(path, e))?,
            correlation_id: -1,
        });
    }

    builder.diag().add_n("task_without_kernel_info", Severity::Info, unnamed_kernels, || {
        format!("{path}: kernel-type TASK rows without COMPUTE_TASK_INFO (e.g. collective envelopes); kept as category other")
    });

    // Big collective ops, on HCCL group threads.
    if has_table(&c, "COMMUNICATION_OP") {
        let mut st = c
            .prepare("SELECT opName, startNs, endNs, connectionId, groupName FROM COMMUNICATION_OP")
            .map_err(|e| err(path, e))?;
        let mut rows = st.query([]).map_err(|e| err(path, e))?;
        while let Some(r) = rows.next().map_err(|e| err(path, e))? {
            let group = s(r.get(4).map_err(|e| err(path, e))?);
            let gid = r
                .get::<_, Option<i64>>(4)
                .map_err(|e| err(path, e))?
                .unwrap_or(0);
            let label = format!("Group {} Communication", builder.tables().str(group));
            let thread = builder.named_thread(file, PID_HCCL, gid, ("HCCL", "NPU"), &label);
            let (start, end): (i64, i64) = (
                r.get(1).map_err(|e| err(path, e))?,
                r.get(2).map_err(|e| err(path, e))?,
            );
            let name = s(r.get(0).map_err(|e| err(path, e))?);
            let conn = r.get(3).map_err(|e| err(path, e))?;
            builder.push_event(NewEvent::span(thread, start, end, name, conn));
        }
    } else {
        missing(builder, "COMMUNICATION_OP", "no collective ops");
    }

    for source in HOST_TABLES {
        host_table(&c, path, builder, file, &s, source)?;
    }
    Ok(())
}

/// A host API table read as host events: (table, synthetic pid, process name, the columns
/// startNs, endNs, globalTid = pid << 32 | tid, connectionId, name). PYTORCH_API stores its times as
/// TEXT and its connectionId indexes CONNECTION_IDS, so it gets -1.
type HostTable = (&'static str, i64, &'static str, &'static str);

const HOST_TABLES: &[HostTable] = &[
    (
        "CANN_API",
        PID_CANN,
        "CANN",
        "CAST(startNs AS INTEGER), CAST(endNs AS INTEGER), globalTid, connectionId, name",
    ),
    (
        "PYTORCH_API",
        PID_PYTHON,
        "Python",
        "CAST(startNs AS INTEGER), CAST(endNs AS INTEGER), globalTid, -1, name",
    ),
];

fn host_table(
    c: &Connection,
    path: &str,
    builder: &mut TablesBuilder,
    file: crate::model::FileId,
    s: &dyn Fn(Option<i64>) -> StrId,
    &(table, pid, process, cols): &HostTable,
) -> Result<(), IngestError> {
    if !has_table(c, table) {
        let p = path.to_string();
        builder.diag().add("missing_table", Severity::Info, || {
            format!("{p}: no {table}")
        });
        return Ok(());
    }
    let mut st = c
        .prepare(&format!("SELECT {cols} FROM {table}"))
        .map_err(|e| err(path, e))?;
    let mut rows = st.query([]).map_err(|e| err(path, e))?;
    while let Some(r) = rows.next().map_err(|e| err(path, e))? {
        let gtid: i64 = r
            .get::<_, Option<i64>>(2)
            .map_err(|e| err(path, e))?
            .unwrap_or(0);
        let tid = gtid & 0xffff_ffff;
        let thread =
            builder.named_thread(file, pid, tid, (process, "CPU"), &format!("Thread {tid}"));
        let (start, end): (i64, i64) = (
            r.get(0).map_err(|e| err(path, e))?,
            r.get(1).map_err(|e| err(path, e))?,
        );
        let name = s(r.get(4).map_err(|e| err(path, e))?);
        let conn = r
            .get::<_, Option<i64>>(3)
            .map_err(|e| err(path, e))?
            .unwrap_or(-1);
        builder.push_event(NewEvent::span(thread, start, end, name, conn));
    }
    Ok(())
}
