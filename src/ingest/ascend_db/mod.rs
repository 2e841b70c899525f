//! torch_npu `ascend_pytorch_profiler_<rank>.db` and CANN `msprof_*.db` ingest. Opened
//! read-only and immutable (no lock, no journal or WAL file touched or created); the schema is
//! probed once (`PRAGMA table_info`) so older CANN column names work and missing optional tables
//! become diagnostics; a db without TASK is an error naming the file.
//!
//! Everything maps, through the builder, into the tables the Chrome-trace reader fills, with the
//! process, thread and event names trace_view.json uses, so analyses answer the same from
//! either format:
//! - [`tasks`]: TASK (+ COMPUTE_TASK_INFO, COMMUNICATION_SCHEDULE_TASK_INFO,
//!   COMMUNICATION_TASK_INFO) → `Ascend Hardware` streams and HCCL planes, kernels, comm_tasks;
//! - [`comm`]: COMMUNICATION_OP → HCCL group ops;
//! - [`host`]: CANN_API, PYTORCH_API (+ CONNECTION_IDS), MSTX_EVENTS → host events and flows;
//! - [`vendor`]: OVERLAP_ANALYSIS → `Overlap Analysis`; `analysis.db` → reference;
//! - [`meta`]: META_DATA, NPU_INFO, SESSION_TIME_INFO, HOST_INFO, RANK_DEVICE_MAP, STEP_TIME;
//! - [`memory`]: NPU_MEM, NPU_MODULE_MEM, MEMORY_RECORD, OP_MEMORY.

mod btree;
mod comm;
mod host;
mod memory;
mod meta;
mod open;
mod rows;
mod scan;
mod strings;
mod tasks;
mod vendor;

pub use host::FWK_CONNECTION_BASE;
pub use open::open;
pub use tasks::TASK_WITHOUT_KERNEL_INFO;
pub use vendor::read_analysis_db;

use super::builder::{FileMeta, TablesBuilder};
use super::error::IngestError;
use crate::diag::Severity;
use crate::model::hash::FxHashMap;
use crate::model::{FileId, ThreadId};
use open::Schema;
use rusqlite::Connection;
use strings::StringIds;

/// Synthetic pids (a db has no trace pids): distinct per role and device.
pub(crate) const PID_HARDWARE: i64 = 1 << 40;
const PID_HCCL: i64 = 2 << 40;
const PID_CANN: i64 = 3 << 40;
const PID_PYTHON: i64 = 4 << 40;
const PID_OVERLAP: i64 = 5 << 40;

/// Tables whose rows become events (COMMUNICATION_TASK_INFO rows add HCCL plane events).
const EVENT_TABLES: [&str; 7] = [
    "TASK",
    "COMMUNICATION_TASK_INFO",
    "COMMUNICATION_OP",
    "CANN_API",
    "PYTORCH_API",
    "MSTX_EVENTS",
    "OVERLAP_ANALYSIS",
];

/// What every table reader needs.
struct Ctx<'a> {
    c: &'a Connection,
    path: &'a str,
    schema: &'a Schema,
    strings: &'a StringIds,
    b: &'a mut TablesBuilder,
    file: FileId,
    links: host::Links,
    /// Threads made so far, by synthetic (pid, tid), and the last one asked for (consecutive
    /// rows of a big table mostly share a thread).
    threads: FxHashMap<(i64, i64), ThreadId>,
    last_thread: Option<((i64, i64), ThreadId)>,
    /// The direct b-tree reader, unless the file needs SQLite.
    btree: Option<std::sync::Arc<btree::BTreeFile>>,
    /// OVERLAP_ANALYSIS rows as events (else per-device sums: [`DbOpts::overlap_events`]).
    overlap_events: bool,
    /// The file's size: bounds every row-count estimate.
    size_bytes: u64,
}

impl<'a> Ctx<'a> {
    fn new(
        c: &'a Connection,
        path: &'a str,
        schema: &'a Schema,
        strings: &'a StringIds,
        b: &'a mut TablesBuilder,
        file: FileId,
    ) -> Ctx<'a> {
        Ctx {
            c,
            path,
            schema,
            strings,
            b,
            file,
            links: host::Links::default(),
            threads: FxHashMap::default(),
            last_thread: None,
            btree: None,
            overlap_events: true,
            size_bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
        }
    }

    /// Reserves the event rows every event table will add, from their rowid spans (b-tree
    /// lookups, not counts), so the columns are allocated once instead of growing by doubling
    /// (each doubling touches fresh pages: the dominant ingest cost on big dbs).
    fn reserve_events(&mut self) {
        let mut total = 0i64;
        for table in EVENT_TABLES {
            if table == "OVERLAP_ANALYSIS" && !self.overlap_events {
                continue;
            }
            if self.schema.has(table) {
                let (lo, hi) = scan::rowid_span(self.c, table);
                total += (hi - lo + 1).max(0);
            }
        }
        // Rowids can be sparse (one row at rowid 2^40): never reserve more rows than the file
        // could hold.
        let most = (self.size_bytes / scan::MIN_ROW_BYTES).min(1 << 33) as i64;
        self.b.reserve_events(total.clamp(0, most) as usize);
    }

    /// The named thread (pid, tid) of this file; on first use its process gets `device` (when
    /// known) and `label` is built.
    fn thread(
        &mut self,
        (pid, tid): (i64, i64),
        process: (&str, &str),
        device: Option<i32>,
        label: impl FnOnce(&crate::model::Tables) -> String,
    ) -> ThreadId {
        if let Some((k, t)) = self.last_thread
            && k == (pid, tid)
        {
            return t;
        }
        let t = match self.threads.get(&(pid, tid)) {
            Some(&t) => t,
            None => {
                let l = label(self.b.tables());
                let t = self.b.named_thread(self.file, pid, tid, process, &l);
                if let Some(d) = device {
                    self.b.set_process_device(t, d);
                }
                self.threads.insert((pid, tid), t);
                t
            }
        };
        self.last_thread = Some(((pid, tid), t));
        t
    }

    /// False (and counted as a `skipped_event` with the row's values) when a row's span is not a
    /// time: a NULL, TEXT or negative start, an end before the start, a start past 2096 or a
    /// duration over a week. Such rows would become `ts = -1` events with absurd durations.
    fn span_ok(&mut self, table: &str, start: i64, end: i64) -> bool {
        let Some(why) = super::builder::implausible_span(start, end) else {
            return true;
        };
        let p = self.path.to_string();
        let t = table.to_string();
        self.b.diag().add("skipped_event", Severity::DataLoss, || {
            format!("{p}: {t} row with startNs {start}, endNs {end}: {why}; row skipped")
        });
        false
    }

    /// Records a missing optional table.
    fn missing(&mut self, table: &str, what: &str) {
        let p = self.path.to_string();
        let (t, what) = (table.to_string(), what.to_string());
        self.b.diag().add("missing_table", Severity::Info, || {
            format!("{p}: no {t} ({what})")
        });
    }
}

/// How to read a db.
#[derive(Debug, Clone, Copy)]
pub struct DbOpts {
    /// Decode the big tables' b-trees directly (else everything through SQLite).
    pub direct: bool,
    /// OVERLAP_ANALYSIS rows become `Overlap Analysis` events (what exports and SQL show);
    /// `false` reads them as per-device sums into the vendor_overlap table, all the analyses
    /// need (on big dbs the table has more rows than TASK).
    pub overlap_events: bool,
}

impl Default for DbOpts {
    /// Direct decoding, unless `PROFSCOPE_DB_SQLITE_ONLY` is set; overlap rows as events.
    fn default() -> Self {
        DbOpts {
            direct: std::env::var_os("PROFSCOPE_DB_SQLITE_ONLY").is_none(),
            overlap_events: true,
        }
    }
}

/// Ingests one profiler db into `builder`.
pub fn ingest_file(path: &str, builder: &mut TablesBuilder) -> Result<(), IngestError> {
    ingest_file_with(path, builder, DbOpts::default())
}

/// [`ingest_file`] with explicit options.
pub fn ingest_file_with(
    path: &str,
    builder: &mut TablesBuilder,
    opts: DbOpts,
) -> Result<(), IngestError> {
    let c = open(path)?;
    let schema = Schema::probe(&c, path)?;
    if !schema.has("TASK") {
        return Err(IngestError::Db {
            path: path.to_string(),
            what: "no TASK table: not a profiler db".into(),
        });
    }
    let file = add_file(&c, &schema, path, builder);
    let strings = load_strings(&c, &schema, path, builder);
    let mut cx = Ctx::new(&c, path, &schema, &strings, builder, file);
    cx.overlap_events = opts.overlap_events;
    if opts.direct {
        attach_btree(&mut cx, path);
    }
    note_wal(&mut cx, path);
    cx.reserve_events();
    read_tables(&mut cx);
    Ok(())
}

/// The db's files row; the rank from the path's `profiler_info_<rank>.json` (what msprof-analyze
/// and the folder selection use), else RANK_DEVICE_MAP, else the file name. A RANK_DEVICE_MAP
/// that disagrees with the folder's profiler_info is a `rank_mismatch` warning: two rank folders
/// whose dbs both say rank 0 stay two ranks, as the folders say.
fn add_file(c: &Connection, schema: &Schema, path: &str, builder: &mut TablesBuilder) -> FileId {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let rank = if schema.has("RANK_DEVICE_MAP") {
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
    let folder = super::rank::profiler_info_rank_of(path);
    if let (Some(db), Some(f)) = (rank, folder)
        && db != f
    {
        builder.diag().add("rank_mismatch", Severity::Warning, || {
            format!("{path}: RANK_DEVICE_MAP says rank {db}, the folder's profiler_info_{f}.json says {f}: read as rank {f}")
        });
    }
    let rank = folder
        .or(rank)
        .or_else(|| super::rank::rank_from_path(path));

    builder.add_file(
        path,
        FileMeta {
            format: Some(crate::model::files::SourceFormat::AscendDb),
            size_bytes: size,
            parsed_bytes: size,
            rank,
            ..Default::default()
        },
    )
}

/// STRING_IDS, or none (with a diagnostic) when the table is missing or unreadable.
fn load_strings(
    c: &Connection,
    schema: &Schema,
    path: &str,
    builder: &mut TablesBuilder,
) -> StringIds {
    if !schema.has("STRING_IDS") {
        builder.diag().add("missing_table", Severity::DataLoss, || {
            format!("{path}: no STRING_IDS: names and task types are unknown")
        });
        return StringIds::default();
    }
    match StringIds::load(c, path, builder) {
        Ok(s) => s,
        Err(e) => {
            unreadable(builder, "STRING_IDS", &e);
            StringIds::default()
        }
    }
}

/// The direct b-tree reader for the big tables, or SQLite (with a note) when it cannot open.
fn attach_btree(cx: &mut Ctx<'_>, path: &str) {
    match btree::BTreeFile::open(path) {
        Ok(b) => cx.btree = Some(std::sync::Arc::new(b)),
        Err(why) => {
            cx.b.diag()
                .add("db_direct_read_fallback", Severity::Info, || {
                    format!("{path}: read through SQLite ({})", why.0)
                })
        }
    }
}

/// A non-empty `-wal` beside the db holds changes this read does not see: say so.
fn note_wal(cx: &mut Ctx<'_>, path: &str) {
    let wal = open::wal_path(path);
    if let Ok(m) = std::fs::metadata(&wal)
        && m.len() > 0
    {
        let n = m.len();
        cx.b.diag().add("db_wal_not_read", Severity::DataLoss, || {
            format!("{wal}: {n} bytes of changes not yet checkpointed into the db are not read (reading them would need a writable -shm beside the user's file)")
        });
    }
}

/// Reads each table family on its own: one that cannot be read (a damaged page, a renamed
/// column, an unreadable analysis.db) is a diagnostic, and the rest of the rank is kept.
/// `PROFSCOPE_DB_TIMING` prints the time of each step to stderr.
fn read_tables(cx: &mut Ctx<'_>) {
    let timing = std::env::var_os("PROFSCOPE_DB_TIMING").is_some();
    let mut t0 = (std::time::Instant::now(), cpu_seconds());
    let mut lap = |what: &str| {
        if timing {
            let cpu = cpu_seconds();
            eprintln!(
                "db {what}: {:.3} s, {:.3} s CPU",
                t0.0.elapsed().as_secs_f64(),
                cpu - t0.1
            );
            t0 = (std::time::Instant::now(), cpu);
        }
    };
    lap("open + strings + reserve");
    let soft = |cx: &mut Ctx<'_>, what: &str, r: Result<(), IngestError>| {
        if let Err(e) = r {
            unreadable(cx.b, what, &e);
        }
    };
    let r = meta::ingest(cx);
    soft(
        cx,
        "META_DATA / NPU_INFO / SESSION_TIME_INFO / HOST_INFO / STEP_TIME",
        r,
    );
    match host::Links::load(cx) {
        Ok(l) => cx.links = l,
        Err(e) => unreadable(cx.b, "CONNECTION_IDS", &e),
    }
    lap("meta + links");
    let infos = match tasks::load_infos(cx) {
        Ok(i) => i,
        Err(e) => {
            unreadable(cx.b, "COMPUTE_TASK_INFO / COMMUNICATION_*_TASK_INFO", &e);
            tasks::Infos::default()
        }
    };
    lap("task infos");
    let r = tasks::ingest(cx, infos);
    soft(cx, "TASK", r);
    lap("tasks");
    let r = comm::ingest(cx);
    soft(cx, "COMMUNICATION_OP", r);
    let r = host::ingest(cx);
    soft(cx, "CANN_API / PYTORCH_API / MSTX_EVENTS", r);
    lap("comm + host");
    let r = vendor::overlap_analysis(cx);
    soft(cx, "OVERLAP_ANALYSIS", r);
    let r = memory::ingest(cx);
    soft(
        cx,
        "NPU_MEM / NPU_MODULE_MEM / MEMORY_RECORD / OP_MEMORY",
        r,
    );
    let r = vendor::analysis_db(cx);
    soft(cx, "analysis.db", r);
    lap("vendor + memory");
}

/// User + system CPU time of this process so far (`getrusage`; 0 where it fails), for
/// `PROFSCOPE_DB_TIMING`.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the zeroed struct it is given, nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// Records a table (or companion) of a db that could not be read; the rest of the file is kept.
fn unreadable(b: &mut TablesBuilder, what: &str, e: &IngestError) {
    let (what, e) = (what.to_string(), e.to_string());
    b.diag().add("table_unreadable", Severity::DataLoss, || {
        format!("{e} (reading {what}; the rest of the file is kept)")
    });
}

/// Fuzzing entry (fuzz/fuzz_targets/btree.rs): the direct b-tree reader over `bytes`, every page
/// tried as a table root with a few columns (rowid, leading, past the 64th, missing). Returns the
/// values decoded; never panics or loops, whatever the bytes.
#[doc(hidden)]
pub fn fuzz_btree(bytes: &[u8]) -> usize {
    let Ok(bt) = btree::BTreeFile::from_bytes(bytes.to_vec()) else {
        return 0;
    };
    let cols = [
        btree::Col::Rowid,
        btree::Col::Field(0),
        btree::Col::Field(3),
        btree::Col::Field(70),
        btree::Col::Null,
        btree::Col::Millionths(2),
    ];
    let mut values = 0;
    for root in 1..=bt.page_count().min(64) as u32 {
        let _ = bt.scan_chunks(root, &cols, |c| values += c.len());
    }
    values
}

/// Bench helper: scans TASK's seven ingest columns and nothing else (direct b-tree or SQLite),
/// returning the row count, so benches can compare the raw scan with the `sqlite3` CLI.
#[doc(hidden)]
pub fn bench_scan_task(path: &str, direct: bool) -> Result<usize, IngestError> {
    let c = open(path)?;
    let schema = Schema::probe(&c, path)?;
    let strings = StringIds::default();
    let mut b = TablesBuilder::new();
    let file = b.add_file(path, FileMeta::default());
    let mut cx = Ctx::new(&c, path, &schema, &strings, &mut b, file);
    if direct {
        cx.btree = btree::BTreeFile::open(path).ok().map(std::sync::Arc::new);
    }
    let mut values = 0;
    scan::for_each_rows(&mut cx, "TASK", &tasks::TASK_COLS, |_, rows| {
        values += rows.len()
    })?;
    Ok(values / tasks::TASK_COLS.len())
}

/// Reads only the memory tables (NPU_MEM, NPU_MODULE_MEM, MEMORY_RECORD, OP_MEMORY) of a
/// profiler or msprof db: what the HBM attribution needs, without the timeline.
pub fn ingest_memory_only(path: &str, builder: &mut TablesBuilder) -> Result<FileId, IngestError> {
    let c = open(path)?;
    let schema = Schema::probe(&c, path)?;
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let file = builder.add_file(
        path,
        FileMeta {
            format: Some(crate::model::files::SourceFormat::AscendDb),
            size_bytes: size,
            parsed_bytes: 0,
            rank: super::rank::rank_from_path(path),
            ..Default::default()
        },
    );
    let strings = if schema.has("STRING_IDS") {
        StringIds::load(&c, path, builder)?
    } else {
        StringIds::default()
    };
    let mut cx = Ctx::new(&c, path, &schema, &strings, builder, file);
    memory::ingest(&mut cx)?;
    Ok(file)
}
