//! Host tables: CANN_API (named `<Level>@<api>` as trace_view.json names them: AscendCL, Node,
//! Hccl, Runtime, Model), PYTORCH_API (TEXT ns times; `cat` from its type: cpu_op, enqueue /
//! dequeue, python_function) with its CONNECTION_IDS links, and MSTX_EVENTS.
//!
//! PYTORCH_API.connectionId indexes CONNECTION_IDS. Ids >= 5<<28 are framework-internal:
//! for queue rows, `id - (5<<28)` is the enqueue/dequeue correlation id (the JSON's
//! `correlation_id`). Smaller ids are CANN connection ids: each becomes an `async_npu` flow from
//! the torch op to the first device task with that id.

use super::Ctx;
use super::open::err;
use super::rows;
use super::scan::{Spec, for_each_rows};
use crate::ingest::builder::NewEvent;
use crate::ingest::error::IngestError;
use crate::model::flows::FlowPhase;
use crate::model::hash::{FxHashMap, FxHashSet};
use crate::model::{StrId, ThreadId};

/// First framework-internal connection id (torch_npu START_CONNECTION_ID_FWK_API).
pub const FWK_CONNECTION_BASE: i64 = 5 << 28;

/// CANN connection ids that PYTORCH_API rows point at, and the first device task of each.
#[derive(Default)]
pub struct Links {
    /// CONNECTION_IDS: index → connection ids.
    by_index: FxHashMap<i64, Vec<i64>>,
    wanted: FxHashSet<i64>,
    first_task: FxHashMap<i64, (ThreadId, i64)>,
}

impl Links {
    pub(super) fn load(cx: &Ctx<'_>) -> Result<Links, IngestError> {
        let mut l = Links::default();
        if !cx.schema.has("CONNECTION_IDS") {
            return Ok(l);
        }
        let path = cx.path;
        let mut st =
            cx.c.prepare("SELECT id, connectionId FROM CONNECTION_IDS")
                .map_err(|e| err(path, e))?;
        let mut q = st.query([]).map_err(|e| err(path, e))?;
        while let Some(r) = q.next().map_err(|e| err(path, e))? {
            let conn = rows::int(r, 1);
            l.by_index.entry(rows::int(r, 0)).or_default().push(conn);
            if (0..FWK_CONNECTION_BASE).contains(&conn) {
                l.wanted.insert(conn);
            }
        }
        Ok(l)
    }

    pub(super) fn task_seen(&mut self, conn: i64, thread: ThreadId, ts: i64) {
        if !self.wanted.is_empty() && self.wanted.contains(&conn) {
            let e = self.first_task.entry(conn).or_insert((thread, ts));
            if ts < e.1 {
                *e = (thread, ts);
            }
        }
    }
}

/// CANN_API.type → the level prefix trace_view.json gives the event name.
fn cann_level(t: i64) -> &'static str {
    match t {
        20000 => "AscendCL",
        15000 => "Model",
        10000 => "Node",
        5500 => "Hccl",
        5000 => "Runtime",
        _ => "",
    }
}

pub(super) fn ingest(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    cann(cx)?;
    pytorch(cx)?;
    mstx(cx)
}

/// startNs, endNs, globalTid (pid << 32 | tid), connectionId, name, type.
const HOST_COLS: [Spec; 6] = [
    &["startNs"],
    &["endNs"],
    &["globalTid"],
    &["connectionId"],
    &["name"],
    &["type"],
];

fn host_thread(cx: &mut Ctx<'_>, pid: i64, process: &str, gtid: i64) -> ThreadId {
    let tid = gtid.max(0) & 0xffff_ffff;
    cx.thread((pid, tid), (process, "CPU"), None, |_| {
        format!("Thread {tid}")
    })
}

fn cann(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    if !cx.schema.has("CANN_API") {
        cx.missing("CANN_API", "no CANN host APIs");
        return Ok(());
    }
    let mut names: FxHashMap<(StrId, i64), StrId> = FxHashMap::default();
    for_each_rows(cx, "CANN_API", &HOST_COLS, |cx, rows| {
        for r in rows.chunks_exact(HOST_COLS.len()) {
            if !cx.span_ok("CANN_API", r[0], r[1]) {
                continue;
            }
            let thread = host_thread(cx, super::PID_CANN, "CANN", r[2]);
            let raw = cx.strings.get(r[4]);
            let level = r[5];
            let name = *names.entry((raw, level)).or_insert_with(|| {
                let api = cx.b.tables().str(raw).to_string();
                match cann_level(level) {
                    "" => cx.b.intern(&api),
                    l => cx.b.intern(&format!("{l}@{api}")),
                }
            });
            cx.b.push_event(NewEvent::span(thread, r[0], r[1], name, r[3]));
        }
    })
}

fn pytorch(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    if !cx.schema.has("PYTORCH_API") {
        cx.missing("PYTORCH_API", "no framework host events");
        return Ok(());
    }
    let cats = [
        cx.b.intern("cpu_op"),
        cx.b.intern("enqueue"),
        cx.b.intern("dequeue"),
        cx.b.intern("python_function"),
        cx.b.intern("MsTx"),
    ];
    let (flow_cat, flow_name) = (cx.b.intern("async_npu"), cx.b.intern("async_npu"));
    let mut flow_id = 0u64;
    for_each_rows(cx, "PYTORCH_API", &HOST_COLS, |cx, rows| {
        for r in rows.chunks_exact(HOST_COLS.len()) {
            let thread = host_thread(cx, super::PID_PYTHON, "Python", r[2]);
            let name = cx.strings.get(r[4]);
            let cat = match r[5] {
                50001 => cats[0],
                50002 if cx.b.tables().str(name).starts_with("Enqueue") => cats[1],
                50002 => cats[2],
                50003 => cats[3],
                50004 => cats[4],
                _ => StrId::EMPTY,
            };
            let start = r[0];
            if !cx.span_ok("PYTORCH_API", start, r[1]) {
                continue;
            }
            let mut e = NewEvent::span(thread, start, r[1], name, -1);
            e.cat = cat;
            let index = r[3];
            if let Some(ids) = cx.links.by_index.get(&index) {
                for &id in ids {
                    if id >= FWK_CONNECTION_BASE {
                        if cat == cats[1] || cat == cats[2] {
                            e.correlation_id = id - FWK_CONNECTION_BASE;
                        }
                    } else if let Some(&(dev_thread, dev_ts)) = cx.links.first_task.get(&id) {
                        flow_id += 1;
                        let f = &mut cx.b.t.flows;
                        for (th, ph, ts) in [
                            (thread, FlowPhase::Start, start),
                            (dev_thread, FlowPhase::Finish, dev_ts),
                        ] {
                            f.thread.push(th);
                            f.phase.push(ph);
                            f.cat.push(flow_cat);
                            f.name.push(flow_name);
                            f.id.push(flow_id);
                            f.ts_ns.push(ts);
                            f.bind_enclosing.push(ph == FlowPhase::Finish);
                        }
                    }
                }
            }
            cx.b.push_event(e);
        }
    })
}

fn mstx(cx: &mut Ctx<'_>) -> Result<(), IngestError> {
    let cat = cx.b.intern("MsTx");
    const COLS: [Spec; 5] = [
        &["startNs"],
        &["endNs"],
        &["globalTid"],
        &["message"],
        &["connectionId"],
    ];
    for_each_rows(cx, "MSTX_EVENTS", &COLS, |cx, rows| {
        for r in rows.chunks_exact(COLS.len()) {
            let thread = host_thread(cx, super::PID_PYTHON, "Python", r[2]);
            let name = cx.strings.get(r[3]);
            // 4000000000: a host-only marker without a device link.
            let conn = if r[4] == 4_000_000_000 { -1 } else { r[4] };
            // An instant marker has no endNs.
            if !cx.span_ok("MSTX_EVENTS", r[0], r[1].max(r[0])) {
                continue;
            }
            let mut e = NewEvent::span(thread, r[0], r[1].max(r[0]), name, conn);
            e.cat = cat;
            cx.b.push_event(e);
        }
    })
}
