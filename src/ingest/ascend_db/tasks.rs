//! TASK, the device-task table, with its per-task info tables joined by `globalTaskId`:
//! COMPUTE_TASK_INFO (kernel name, op type, block dims, shapes), COMMUNICATION_SCHEDULE_TASK_INFO
//! (AICPU / MC2 scheduling kernels) and COMMUNICATION_TASK_INFO (HCCL plane tasks). Every TASK row
//! becomes an `Ascend Hardware` event on `Stream <streamId>`; a row with communication info also
//! becomes an HCCL `Plane <planeId>` event, as trace_view.json shows both.
//!
//! The info tables are loaded first into indexes by globalTaskId (dense vectors when the ids
//! are dense), so the TASK scan is a plain table scan, not a join; every scan goes through
//! [`super::scan`] (direct b-tree decoding, else SQLite in parallel rowid ranges).

use super::Ctx;
use super::open::err;
use super::rows;
use super::scan::{BAD_NUMBER, MILLIONTHS, NO_NUMBER, Spec, for_each_rows, for_each_rows_mapped};
use super::strings::{StringIds, load_enum};
use crate::diag::Severity;
use crate::ingest::builder::NewEvent;
use crate::ingest::error::IngestError;
use crate::model::StrId;
use crate::model::events::NO_ROW;
use crate::model::hash::FxHashMap;
use crate::model::id_map::IdMap;
use crate::model::kernels::KernelRow;
use crate::model::op_metrics::{ImpossibleRatios, OpMetricsRow, PIPES};

/// The `cat` given to kernel-type TASK rows that have no kernel info (classified `other`).
pub const TASK_WITHOUT_KERNEL_INFO: &str = "task_without_kernel_info";
/// HCCL plane threads (tid = plane id) sit beside the group threads (tid = this + group id).
pub(super) const GROUP_TID_BASE: i64 = 1 << 32;

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

/// globalTaskId → row of a per-task table (the row of its last occurrence).
type GidIndex = IdMap<u32>;

fn gid_index(ids: &[i64]) -> GidIndex {
    IdMap::build(ids, |row| row as u32, |_, later| later, NO_ROW)
}

/// Names and detail rows by globalTaskId.
#[derive(Default)]
pub(super) struct Infos {
    compute: GidIndex,
    /// Per compute row: kernel name and row of the kernels table.
    compute_rows: Vec<(StrId, u32)>,
    /// Per compute row: COMPUTE_TASK_INFO.opState (`static` / `dynamic`); empty when the db has
    /// no such column.
    op_states: Vec<StrId>,
    /// TASK_PMU_INFO's pipe ratios by globalTaskId (rows of `pmu_rows`).
    pmu: GidIndex,
    pmu_rows: Vec<[f32; 9]>,
    sched: GidIndex,
    sched_names: Vec<StrId>,
    comm: GidIndex,
    /// Per comm row: plane task name, plane and row of the comm_tasks table.
    comm_rows: Vec<(StrId, i32, u32)>,
}

/// One TASK row as read.
#[derive(Clone, Copy)]
struct TaskRow {
    start: i64,
    end: i64,
    conn: i64,
    gtid: i64,
    task_type: i64,
    device: i32,
    stream: i32,
    model: i64,
}

pub(super) const TASK_COLS: [Spec; 8] = [
    &["startNs"],
    &["endNs"],
    &["connectionId"],
    &["globalTaskId"],
    &["taskType"],
    &["deviceId"],
    &["streamId"],
    &["modelId"],
];

/// TASK rows as events, named and linked through `infos` (from [`load_infos`]).
pub(super) fn ingest(cx: &mut Ctx<'_>, infos: Infos) -> Result<(), IngestError> {
    let path = cx.path;
    let mut conv = Converter::new(cx, infos);
    for_each_rows(cx, "TASK", &TASK_COLS, |cx, rows| {
        for r in rows.chunks_exact(TASK_COLS.len()) {
            conv.push(
                cx,
                TaskRow {
                    start: r[0],
                    end: r[1],
                    conn: r[2],
                    gtid: r[3],
                    task_type: r[4],
                    device: r[5].clamp(-1, i32::MAX as i64) as i32,
                    stream: r[6].clamp(-1, i32::MAX as i64) as i32,
                    model: r[7],
                },
            );
        }
    })?;
    let n = conv.unnamed_kernels;
    cx.b.diag().add_n("task_without_kernel_info", Severity::Info, n, || {
        format!("{path}: kernel-type TASK rows without COMPUTE_TASK_INFO (e.g. collective envelopes); kept as category other")
    });
    Ok(())
}

/// Turns TASK rows into events, with per-(device, stream) threads and cached task-type facts.
struct Converter {
    infos: Infos,
    kernel_type: FxHashMap<StrId, bool>,
    no_info: StrId,
    unnamed_kernels: u64,
    /// [`IdMap::get_from`] positions in `infos.compute`, `.sched`, `.comm`.
    hints: [usize; 3],
}

impl Converter {
    fn new(cx: &mut Ctx<'_>, infos: Infos) -> Converter {
        Converter {
            infos,
            kernel_type: FxHashMap::default(),
            no_info: cx.b.intern(TASK_WITHOUT_KERNEL_INFO),
            unnamed_kernels: 0,
            hints: [0; 3],
        }
    }

    fn push(&mut self, cx: &mut Ctx<'_>, r: TaskRow) {
        if !cx.span_ok("TASK", r.start, r.end) {
            return;
        }
        let thread = cx.thread(
            (super::PID_HARDWARE + r.device as i64, r.stream as i64),
            ("Ascend Hardware", "NPU"),
            Some(r.device),
            |_| format!("Stream {}", r.stream),
        );
        let tt = cx.strings.get(r.task_type);
        let (mut name, mut kernel) = (StrId::EMPTY, NO_ROW);
        let [hc, hs, _] = &mut self.hints;
        let mut compute_row = None;
        if let Some(i) = self.infos.compute.get_from(r.gtid, hc) {
            (name, kernel) = self.infos.compute_rows[i as usize];
            compute_row = Some(i);
        } else if let Some(i) = self.infos.sched.get_from(r.gtid, hs) {
            name = self.infos.sched_names[i as usize];
        }
        // A kernel-type task with no kernel info row (real dbs: the task envelope of each HCCL
        // collective on its stream) is not a compute kernel: keep it, say what it is.
        let unnamed = name.is_empty()
            && *self
                .kernel_type
                .entry(tt)
                .or_insert_with(|| is_kernel_task_type(cx.b.tables().str(tt)));
        self.unnamed_kernels += unnamed as u64;
        cx.b.push_event(NewEvent {
            thread,
            ts_ns: r.start,
            dur_ns: r.end - r.start,
            name: if name.is_empty() { tt } else { name },
            cat: if unnamed { self.no_info } else { StrId::EMPTY },
            task_type: tt,
            stream: r.stream,
            connection_id: r.conn,
            correlation_id: -1,
            graph_id: r.model,
            kernel,
            comm_task: NO_ROW,
        });
        cx.links.task_seen(r.conn, thread, r.start);
        if let Some(i) = compute_row {
            let state = self.infos.op_states.get(i as usize).copied();
            self.op_metrics(cx, r, name, kernel, state.unwrap_or(StrId::EMPTY));
        }
        let hm = &mut self.hints[2];
        if let Some(i) = self.infos.comm.get_from(r.gtid, hm) {
            let (pname, plane, row) = self.infos.comm_rows[i as usize];
            let pthread = cx.thread(
                (super::PID_HCCL, plane as i64),
                ("HCCL", "NPU"),
                None,
                |_| format!("Plane {plane}"),
            );
            cx.b.push_event(NewEvent {
                thread: pthread,
                ts_ns: r.start,
                dur_ns: r.end - r.start,
                name: pname,
                cat: StrId::EMPTY,
                task_type: pname,
                stream: r.stream,
                connection_id: -1,
                correlation_id: -1,
                graph_id: r.model,
                kernel: NO_ROW,
                comm_task: row,
            });
        }
    }
}

impl Converter {
    /// The op_metrics row of a compute task that has an op state or PMU ratios.
    fn op_metrics(&self, cx: &mut Ctx<'_>, r: TaskRow, name: StrId, kernel: u32, op_state: StrId) {
        // A task whose ratios were all dropped as impossible has none, as if it had no row.
        let ratios = self
            .infos
            .pmu
            .get(r.gtid)
            .map(|i| self.infos.pmu_rows[i as usize])
            .filter(|r| r.iter().any(|x| !x.is_nan()));
        if ratios.is_none() && op_state.is_empty() {
            return;
        }
        let k = &cx.b.t.kernels;
        let row = OpMetricsRow {
            file: cx.file,
            name,
            op_type: k.op_type[kernel as usize],
            task_type: k.task_type[kernel as usize],
            dur_ns: r.end - r.start,
            op_state,
            input_shapes: k.input_shapes[kernel as usize],
            input_dtypes: k.input_dtypes[kernel as usize],
            output_shapes: k.output_shapes[kernel as usize],
            ratios: ratios.unwrap_or([f32::NAN; 9]),
        };
        cx.b.t.op_metrics.push(row);
    }
}

/// TASK_PMU_INFO's pipe ratios ([`PIPES`]) per globalTaskId. The table holds one row per task
/// and metric (about 30 per task), written metric by metric (real dbs), so rows are gathered by
/// globalTaskId through a map.
fn load_pmu(cx: &mut Ctx<'_>, inf: &mut Infos) -> Result<(), IngestError> {
    let mut by_name: FxHashMap<i64, Option<usize>> = FxHashMap::default();
    let mut at: FxHashMap<i64, u32> = FxHashMap::default();
    let mut ids: Vec<i64> = Vec::new();
    let mut rows_out: Vec<[f32; 9]> = Vec::new();
    for_each_rows(
        cx,
        "TASK_PMU_INFO",
        &[&["globalTaskId"], &["name"], &[MILLIONTHS, "value"]],
        |cx, rows| {
            for r in rows.chunks_exact(3) {
                let pipe = *by_name.entry(r[1]).or_insert_with(|| {
                    let name = cx.b.tables().str(cx.strings.get(r[1]));
                    PIPES.iter().position(|p| *p == name)
                });
                let (Some(p), true) = (pipe, r[2] != NO_NUMBER) else {
                    continue;
                };
                let k = *at.entry(r[0]).or_insert_with(|| {
                    ids.push(r[0]);
                    rows_out.push([f32::NAN; 9]);
                    rows_out.len() as u32 - 1
                });
                rows_out[k as usize][p] = if r[2] == BAD_NUMBER {
                    f32::INFINITY
                } else {
                    (r[2] as f64 / 1e6) as f32
                };
            }
        },
    )?;
    let mut impossible = ImpossibleRatios::default();
    rows_out.iter_mut().for_each(|r| impossible.check(r));
    let path = cx.path;
    cx.b.diag()
        .add_n("pmu_ratio_invalid", Severity::DataLoss, impossible.tasks, || {
            format!(
                "{path}: TASK_PMU_INFO pipe ratios outside 0..1: {}; a ratio is a share of the task's time, so these tasks' ratios are not read (no advisor rule prices them)",
                impossible.summary()
            )
        });
    inf.pmu = gid_index(&ids);
    inf.pmu_rows = rows_out;
    Ok(())
}

/// The per-task info tables, indexed by globalTaskId (kernel rows go to the kernels table).
pub(super) fn load_infos(cx: &mut Ctx<'_>) -> Result<Infos, IngestError> {
    let mut inf = Infos::default();
    if cx.schema.has("COMPUTE_TASK_INFO") {
        let has_state = cx
            .schema
            .column("COMPUTE_TASK_INFO", &["opState"])
            .is_some();
        let mut ids = Vec::new();
        let strings = cx.strings;
        for_each_rows_mapped(
            cx,
            "COMPUTE_TASK_INFO",
            &COMPUTE_COLS,
            |rows| kernel_chunk(strings, rows),
            |cx, _, c| {
                let global: Vec<u32> = c.rows.iter().map(|&r| cx.b.kernel_row(r)).collect();
                ids.extend_from_slice(&c.ids);
                if has_state {
                    inf.op_states.extend_from_slice(&c.states);
                }
                inf.compute_rows.extend(
                    c.names
                        .iter()
                        .zip(&c.local)
                        .map(|(&name, &l)| (name, global[l as usize])),
                );
            },
        )?;
        inf.compute = gid_index(&ids);
    } else {
        cx.missing("COMPUTE_TASK_INFO", "kernel names fall back to task types");
    }
    let mut ids = Vec::new();
    for_each_rows(
        cx,
        "COMMUNICATION_SCHEDULE_TASK_INFO",
        &[&["globalTaskId"], &["name"]],
        |cx, rows| {
            for r in rows.chunks_exact(2) {
                ids.push(r[0]);
                inf.sched_names.push(cx.strings.get(r[1]));
            }
        },
    )?;
    inf.sched = gid_index(&ids);
    if cx.schema.has("TASK_PMU_INFO") {
        load_pmu(cx, &mut inf)?;
    }
    if cx.schema.has("COMMUNICATION_TASK_INFO") {
        load_comm_tasks(cx, &mut inf)?;
    }
    Ok(inf)
}

/// COMPUTE_TASK_INFO columns: globalTaskId, name, block dims, op type, shapes, task type, op
/// state (newer CANN).
const COMPUTE_COLS: [Spec; 13] = [
    &["globalTaskId"],
    &["name"],
    &["blockNum", "blockDim"],
    &["mixBlockNum", "mixBlockDim"],
    &["opType"],
    &["inputShapes"],
    &["inputDataTypes"],
    &["inputFormats"],
    &["outputShapes"],
    &["outputDataTypes"],
    &["outputFormats"],
    &["taskType"],
    &["opState"],
];

/// One chunk of COMPUTE_TASK_INFO rows, read in the pool: the chunk's distinct kernel rows
/// (first-seen order, so the kernels table fills in row order as before) and each row's index
/// among them; the builder then deduplicates a few rows per chunk instead of every row.
struct KernelChunk {
    ids: Vec<i64>,
    names: Vec<StrId>,
    states: Vec<StrId>,
    local: Vec<u32>,
    rows: Vec<KernelRow>,
}

fn kernel_chunk(s: &StringIds, rows: &[i64]) -> KernelChunk {
    let n = rows.len() / COMPUTE_COLS.len();
    let mut c = KernelChunk {
        ids: Vec::with_capacity(n),
        names: Vec::with_capacity(n),
        states: Vec::with_capacity(n),
        local: Vec::with_capacity(n),
        rows: Vec::new(),
    };
    let mut seen: FxHashMap<KernelRow, u32> = FxHashMap::default();
    for r in rows.chunks_exact(COMPUTE_COLS.len()) {
        let row = KernelRow {
            op_type: s.get(r[4]),
            task_type: s.get(r[11]),
            block_num: r[2],
            mix_block_num: r[3],
            shapes: [5, 6, 7, 8, 9, 10].map(|c| s.get(r[c])),
        };
        let l = *seen.entry(row).or_insert_with(|| {
            c.rows.push(row);
            c.rows.len() as u32 - 1
        });
        c.ids.push(r[0]);
        c.names.push(s.get(r[1]));
        c.states.push(s.get(r[12]));
        c.local.push(l);
    }
    c
}

fn load_comm_tasks(cx: &mut Ctx<'_>, inf: &mut Infos) -> Result<(), IngestError> {
    let path = cx.path;
    let mut en = |t: &str| -> Result<FxHashMap<i64, StrId>, IngestError> {
        if cx.schema.has(t) {
            load_enum(cx.c, path, t, cx.b)
        } else {
            Ok(FxHashMap::default())
        }
    };
    let transport = en("ENUM_HCCL_TRANSPORT_TYPE")?;
    let link = en("ENUM_HCCL_LINK_TYPE")?;
    let dtype = en("ENUM_HCCL_DATA_TYPE")?;
    let t = "COMMUNICATION_TASK_INFO";
    let sql = format!(
        "SELECT globalTaskId, name, taskType, {}, groupName, {}, {}, {}, {}, {}, {}, {}, {} FROM {t}",
        cx.schema.col(t, &["planeId"]),
        cx.schema.col(t, &["srcRank"]),
        cx.schema.col(t, &["dstRank"]),
        cx.schema.col(t, &["transportType"]),
        cx.schema.col(t, &["linkType"]),
        cx.schema.col(t, &["dataType"]),
        cx.schema.col(t, &["size"]),
        cx.schema.col(t, &["bandwidth"]),
        cx.schema.col(t, &["notifyId"]),
    );
    let mut st = cx.c.prepare(&sql).map_err(|e| err(path, e))?;
    let mut q = st.query([]).map_err(|e| err(path, e))?;
    let mut ids = Vec::new();
    let enum_or = |m: &FxHashMap<i64, StrId>, v: i64| m.get(&v).copied().unwrap_or(StrId::EMPTY);
    while let Some(r) = q.next().map_err(|e| err(path, e))? {
        ids.push(rows::int(r, 0));
        let s = |i| cx.strings.get(rows::int(r, i));
        let plane = rows::int(r, 3).clamp(-1, i32::MAX as i64) as i32;
        let c = &mut cx.b.t.comm_tasks;
        let row = c.len() as u32;
        c.op_name.push(s(1));
        c.group.push(s(4));
        c.plane.push(plane);
        c.src_rank.push(rows::int(r, 5));
        c.dst_rank.push(rows::int(r, 6));
        c.transport.push(enum_or(&transport, rows::int(r, 7)));
        c.link.push(enum_or(&link, rows::int(r, 8)));
        c.data_type.push(enum_or(&dtype, rows::int(r, 9)));
        c.size_bytes.push(rows::int(r, 10));
        c.bandwidth_bytes_per_s.push(rows::num(r, 11));
        c.notify_id.push(rows::int(r, 12));
        inf.comm_rows.push((s(2), plane, row));
    }
    inf.comm = gid_index(&ids);
    Ok(())
}
