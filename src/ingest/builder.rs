//! The one way into [`Tables`], knowing no input format: every reader adds its files, threads
//! and events here (row readers through [`NewEvent`], the Chrome JSON reader by appending its
//! chunk columns in `chrome_json::merge`), then [`TablesBuilder::finish`] runs the post-passes
//! that need the whole file (metadata roles, `B`/`E` matching, stream fill, classification,
//! overlap and phase accounting).

use super::postpass::{self, Merged, PendingBe};
use crate::model::events::NO_ROW;
use crate::model::files::SourceFormat;
use crate::model::hash::{FxHashMap, FxHasher};
use crate::model::kernels::KernelRow;
use crate::model::vendor_overlap::OVERLAP_KINDS;
use crate::model::{FileId, ProcessId, ProcessRole, StrId, Tables, ThreadId};
use std::hash::{Hash, Hasher};

/// A pid or tid as written (a number or a string), with global string ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Key {
    Num(i64),
    Text(StrId),
}

/// What a file's header said, recorded in the files table.
#[derive(Debug, Clone, Default)]
pub struct FileMeta {
    pub format: Option<SourceFormat>,
    pub size_bytes: u64,
    pub parsed_bytes: u64,
    pub gzip: bool,
    pub rank: Option<i32>,
    pub world_size: Option<i32>,
    pub base_time_ns: i64,
    pub display_time_unit: String,
    /// Kineto `distributedInfo.pg_config` as `parallel_group_info` (each `pg_name` with its
    /// `pg_desc` as `group_name`); empty when absent.
    pub process_groups: String,
    /// Kineto `deviceProperties` (name, SM count, memory per GPU) as compact JSON; empty when
    /// absent.
    pub device_properties: String,
}

#[derive(Default)]
pub struct TablesBuilder {
    pub(super) t: Tables,
    processes: FxHashMap<(FileId, Key), ProcessId>,
    threads: FxHashMap<(ProcessId, Key), ThreadId>,
    pub(super) pending_be: Vec<PendingBe>,
    /// Per file: events per phase byte.
    pub(super) phase_counts: Vec<[u64; 128]>,
    /// Paths whose data ended mid-event (applied to `files.truncated` at finish).
    truncated: Vec<String>,
    /// Set while the pieces of one capture are read ([`Self::begin_parts`]).
    parts: Option<Parts>,
    /// The kernels table's rows by the hash of their values (rows are compared in the table).
    kernel_rows: hashbrown::HashTable<u32>,
    /// Vendor `Overlap Analysis` events become per-device sums in vendor_overlap (what
    /// `analyze` asks for: they only feed device_time's vendor comparison).
    vendor_overlap_sums: bool,
    /// Vendor overlap rows a reader summed while parsing, before the merge (tests read it).
    overlap_rows_summed_while_parsing: u64,
    op_inputs: super::OpInputs,
    overlaps_later: bool,
}

/// The pieces of one capture being read as one files row.
#[derive(Default)]
struct Parts {
    /// The shared row, once the first piece added it.
    file: Option<FileId>,
    /// Bytes parsed by the pieces before the current one.
    bytes_before: u64,
    /// The piece being read (named in diagnostics).
    path: String,
    /// First event row of the current piece.
    first_event: usize,
    /// [first start, last end] of each piece read so far.
    spans: Vec<(i64, i64)>,
}

impl TablesBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn tables(&self) -> &Tables {
        &self.t
    }

    /// The kernels-table row holding `r`'s values, added when new: tasks with the same details
    /// share one row.
    pub fn kernel_row(&mut self, r: KernelRow) -> u32 {
        let hash = |r: &KernelRow| {
            let mut h = FxHasher::default();
            r.hash(&mut h);
            h.finish()
        };
        let k = &self.t.kernels;
        let entry = self.kernel_rows.entry(
            hash(&r),
            |&i| k.row(i as usize) == r,
            |&i| hash(&k.row(i as usize)),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(e) => *e.get(),
            hashbrown::hash_table::Entry::Vacant(e) => *e.insert(self.t.kernels.push(&r)).get(),
        }
    }

    /// Whose recorded op inputs the readers keep ([`super::OpInputs`]).
    pub fn set_op_inputs(&mut self, keep: super::OpInputs) {
        self.op_inputs = keep;
    }

    pub fn op_inputs(&self) -> super::OpInputs {
        self.op_inputs
    }

    /// Leaves the overlap counts to the caller ([`super::IngestOpts::overlaps_later`]).
    pub fn set_overlaps_later(&mut self, later: bool) {
        self.overlaps_later = later;
    }

    /// Whether readers turn vendor `Overlap Analysis` events into per-device sums
    /// ([`Self::add_vendor_overlap`]) instead of events.
    pub fn set_vendor_overlap_sums(&mut self, on: bool) {
        self.vendor_overlap_sums = on;
    }

    pub fn vendor_overlap_sums(&self) -> bool {
        self.vendor_overlap_sums
    }

    /// Vendor overlap rows summed while parsing ([`Self::add_vendor_overlap`] counts them all).
    pub fn overlap_rows_summed_while_parsing(&self) -> u64 {
        self.overlap_rows_summed_while_parsing
    }

    pub fn count_overlap_rows_summed_while_parsing(&mut self, rows: u64) {
        self.overlap_rows_summed_while_parsing += rows;
    }

    /// The vendor overlap kind (index into `OVERLAP_KINDS`) of `thread` when its process's
    /// metadata gives it the `Overlap Analysis` role and it is named after a kind, as far as metadata has said so far.
    pub fn vendor_overlap_kind(&self, thread: ThreadId) -> Option<u8> {
        let t = &self.t;
        let p = t.threads.process[thread.idx()].idx();
        let (name, labels) = (t.processes.name[p], t.processes.labels[p]);
        if ProcessRole::from_metadata(t.str(name), t.str(labels)) != ProcessRole::OverlapAnalysis {
            return None;
        }
        let name = t.str(t.threads.name[thread.idx()]);
        OVERLAP_KINDS
            .iter()
            .position(|k| *k == name)
            .map(|k| k as u8)
    }

    /// The threads of `file` with numeric pid and tid that metadata so far names as vendor
    /// overlap rows ([`Self::vendor_overlap_kind`]): ((pid, tid), kind), in no particular order.
    pub fn vendor_overlap_threads(&self, file: FileId) -> Vec<((i64, i64), u8)> {
        let pids: FxHashMap<ProcessId, i64> = self
            .processes
            .iter()
            .filter_map(|(&(f, key), &p)| match key {
                Key::Num(pid) if f == file => Some((p, pid)),
                _ => None,
            })
            .collect();
        self.threads
            .iter()
            .filter_map(|(&(p, key), &t)| {
                let (Key::Num(tid), Some(&pid)) = (key, pids.get(&p)) else {
                    return None;
                };
                Some(((pid, tid), self.vendor_overlap_kind(t)?))
            })
            .collect()
    }

    /// Adds `rows` vendor overlap rows of `kind` lasting `dur_ns` in all to `thread`'s process's
    /// sums in the vendor_overlap table.
    pub fn add_vendor_overlap(
        &mut self,
        file: FileId,
        thread: ThreadId,
        kind: u8,
        rows: u64,
        dur_ns: i64,
    ) {
        let p = self.t.threads.process[thread.idx()].idx();
        let device = self.t.processes.device_id[p];
        let v = &mut self.t.vendor_overlap;
        match (0..v.len())
            .find(|&r| v.file[r] == file && v.device_id[r] == device && v.kind[r] == kind)
        {
            Some(r) => {
                v.rows[r] += rows;
                v.dur_ns[r] += dur_ns;
            }
            None => v.push(file, device, kind, rows, dur_ns),
        }
    }

    /// Reserves room for `n` more events (from an estimate), so the columns do not grow by doubling.
    pub fn reserve_events(&mut self, n: usize) {
        self.t.events.reserve(n);
    }

    pub fn diag(&mut self) -> &mut crate::diag::Diagnostics {
        &mut self.t.diagnostics
    }

    /// Starts reading the pieces of one capture: every [`Self::add_file`] until
    /// [`Self::end_parts`] adds to one files row (sizes summed, `parts` counted), and each piece's
    /// time span is kept in `captured_spans`. Call [`Self::end_part`] after each piece.
    pub fn begin_parts(&mut self) {
        self.parts = Some(Parts::default());
    }

    /// Closes the piece just read: records its span of event times.
    pub fn end_part(&mut self) {
        let n = self.t.events.len();
        let Some(ps) = self.parts.as_mut() else {
            return;
        };
        let e = &self.t.events;
        let span = (ps.first_event..n).fold(None, |acc: Option<(i64, i64)>, i| {
            let (a, b) = (e.ts_ns[i], e.ts_ns[i] + e.dur_ns.at(i).max(0));
            Some(acc.map_or((a, b), |(x, y)| (x.min(a), y.max(b))))
        });
        ps.spans.extend(span);
        ps.first_event = n;
    }

    /// Ends [`Self::begin_parts`]: the row's `captured_spans` become the union of the pieces'.
    pub fn end_parts(&mut self) {
        let Some(mut ps) = self.parts.take() else {
            return;
        };
        let Some(f) = ps.file else {
            return;
        };
        ps.spans.sort_unstable();
        let mut union: Vec<(i64, i64)> = Vec::new();
        for (a, b) in ps.spans {
            match union.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => union.push((a, b)),
            }
        }
        self.t.files.captured_spans[f.idx()] = union;
    }

    pub fn add_file(&mut self, path: &str, meta: FileMeta) -> FileId {
        if let Some(ps) = self.parts.as_mut() {
            ps.path = path.to_string();
            ps.first_event = self.t.events.len();
            if let Some(id) = ps.file {
                let f = &mut self.t.files;
                let i = id.idx();
                ps.bytes_before = f.parsed_bytes[i];
                f.size_bytes[i] += meta.size_bytes;
                f.parsed_bytes[i] += meta.parsed_bytes;
                f.parts[i] += 1;
                if f.rank[i] < 0 {
                    f.rank[i] = meta.rank.unwrap_or(-1);
                }
                return id;
            }
        }
        let id = self.new_file(path, meta);
        if let Some(ps) = self.parts.as_mut() {
            ps.file = Some(id);
        }
        id
    }

    fn new_file(&mut self, path: &str, meta: FileMeta) -> FileId {
        let f = &mut self.t.files;
        let id = FileId(f.len() as u32);
        f.path.push(path.to_string());
        f.format.push(meta.format);
        f.size_bytes.push(meta.size_bytes);
        f.parsed_bytes.push(meta.parsed_bytes);
        f.gzip.push(meta.gzip);
        f.rank.push(meta.rank.unwrap_or(-1));
        f.world_size.push(meta.world_size.unwrap_or(-1));
        f.base_time_ns.push(meta.base_time_ns);
        let unit = self.t.strings.intern(&meta.display_time_unit);
        self.t.files.display_time_unit.push(unit);
        self.phase_counts.push([0; 128]);
        self.t.files.truncated.push(false);
        self.t.files.parts.push(1);
        self.t.files.captured_spans.push(Vec::new());
        id
    }

    /// Whether `file` has a meta row of `key`.
    pub fn has_meta(&self, file: FileId, key: &str) -> bool {
        self.t
            .strings
            .lookup(key)
            .is_some_and(|k| self.t.meta.get(file, k).is_some())
    }

    /// One key / value row of run metadata for `file` (the meta table).
    pub fn add_meta(&mut self, file: FileId, key: &str, value: &str) {
        let (k, v) = (self.t.strings.intern(key), self.t.strings.intern(value));
        let m = &mut self.t.meta;
        m.file.push(file);
        m.key.push(k);
        m.value.push(v);
    }

    /// Updates header fields learnt after the events (Kineto keys after `traceEvents`).
    pub fn update_file(&mut self, file: FileId, meta: &FileMeta) {
        let before = self.parts.as_ref().map_or(0, |p| p.bytes_before);
        let f = &mut self.t.files;
        let i = file.idx();
        f.format[i] = meta.format;
        f.parsed_bytes[i] = before + meta.parsed_bytes;
        if let Some(r) = meta.rank {
            f.rank[i] = r;
        }
        if let Some(w) = meta.world_size {
            f.world_size[i] = w;
        }
        f.base_time_ns[i] = meta.base_time_ns;
        let unit = self.t.strings.intern(&meta.display_time_unit);
        self.t.files.display_time_unit[i] = unit;
    }

    /// The process `pid` of `file`, added on first sight.
    pub(super) fn process(&mut self, file: FileId, pid: Key) -> ProcessId {
        if let Some(&p) = self.processes.get(&(file, pid)) {
            return p;
        }
        let (num, text) = match pid {
            Key::Num(n) => (n, StrId::EMPTY),
            Key::Text(s) => (-1 - s.0 as i64, s),
        };
        let p = self.t.processes.push(file, num, text);
        self.processes.insert((file, pid), p);
        p
    }

    /// The thread (`pid`, `tid`) of `file`, added (with its process) on first sight.
    pub(super) fn thread(&mut self, file: FileId, pid: Key, tid: Key) -> ThreadId {
        let p = self.process(file, pid);
        if let Some(&t) = self.threads.get(&(p, tid)) {
            return t;
        }
        let (num, text) = match tid {
            Key::Num(n) => (n, StrId::EMPTY),
            Key::Text(s) => (-1 - s.0 as i64, s),
        };
        let t = self.t.threads.push(p, num, text);
        self.threads.insert((p, tid), t);
        t
    }

    /// The path being read into `file`: the current piece of a capture read in pieces.
    pub(super) fn current_path(&self, file: FileId) -> String {
        match &self.parts {
            Some(ps) if ps.file == Some(file) => ps.path.clone(),
            _ => self.t.files.path[file.idx()].clone(),
        }
    }

    /// Records that `path` ended mid-event (before or after its file row exists).
    pub fn note_truncated(&mut self, path: &str) {
        match self.parts.as_ref().and_then(|p| p.file) {
            Some(f) => {
                let first = self.t.files.path[f.idx()].clone();
                self.truncated.push(first);
            }
            None => self.truncated.push(path.to_string()),
        }
    }

    /// Runs the whole-table post-passes and returns the tables.
    pub fn finish(mut self) -> Tables {
        let f = &mut self.t.files;
        for (i, p) in f.path.iter().enumerate() {
            f.truncated[i] = self.truncated.iter().any(|t| t == p);
        }
        postpass::run(Merged {
            t: self.t,
            pending_be: self.pending_be,
            phase_counts: self.phase_counts,
            overlaps_later: self.overlaps_later,
        })
    }
}

pub use crate::units::{MAX_SPAN_NS, MAX_TS_NS};

/// Why a row's span (start, end in ns) is not a time, if it is not: a missing (-1) or negative
/// start, a start past 2096, an end before the start, a span over a week. Row readers skip such
/// rows as `skipped_event` (their sums would overflow and their windows span centuries).
pub fn implausible_span(start: i64, end: i64) -> Option<&'static str> {
    if start < 0 {
        Some("the start is missing, not a number or negative")
    } else if start > MAX_TS_NS {
        Some("the start is past the year 2096")
    } else if end < start {
        Some("the end is missing, not a number or before the start")
    } else if end - start > MAX_SPAN_NS {
        Some("the span is longer than a week")
    } else {
        None
    }
}

/// One event from a row-oriented reader (db, CSV): what the chunk columns carry, with global ids.
pub struct NewEvent {
    pub thread: ThreadId,
    pub ts_ns: i64,
    pub dur_ns: i64,
    pub name: StrId,
    pub cat: StrId,
    pub task_type: StrId,
    /// -1 when the event has no stream (filled from the tid for device threads).
    pub stream: i32,
    pub connection_id: i64,
    pub correlation_id: i64,
    /// The graph the event was replayed from ([`crate::model::events::graph_id_of`]); -1 none.
    pub graph_id: i64,
    /// Row of the kernels table, or `NO_ROW`.
    pub kernel: u32,
    /// Row of the comm_tasks table, or `NO_ROW`.
    pub comm_task: u32,
}

impl NewEvent {
    /// A plain span (host API call, collective op): no cat, task type, stream or correlation.
    pub fn span(
        thread: ThreadId,
        start_ns: i64,
        end_ns: i64,
        name: StrId,
        connection_id: i64,
    ) -> NewEvent {
        NewEvent {
            thread,
            ts_ns: start_ns,
            dur_ns: end_ns - start_ns,
            name,
            cat: StrId::EMPTY,
            task_type: StrId::EMPTY,
            stream: -1,
            connection_id,
            correlation_id: -1,
            graph_id: -1,
            kernel: NO_ROW,
            comm_task: NO_ROW,
        }
    }
}

impl TablesBuilder {
    pub fn intern(&mut self, s: &str) -> StrId {
        self.t.strings.intern(s)
    }

    /// The thread (pid, tid) of `file`, named, with its process named and labelled (row readers
    /// synthesise the same metadata a Chrome trace carries, so roles come out the same).
    pub fn named_thread(
        &mut self,
        file: FileId,
        pid: i64,
        tid: i64,
        process: (&str, &str),
        thread: &str,
    ) -> ThreadId {
        let th = self.thread(file, Key::Num(pid), Key::Num(tid));
        let p = self.t.threads.process[th.idx()].idx();
        if self.t.processes.name[p].is_empty() {
            self.t.processes.name[p] = self.t.strings.intern(process.0);
            self.t.processes.labels[p] = self.t.strings.intern(process.1);
        }
        if self.t.threads.name[th.idx()].is_empty() {
            self.t.threads.name[th.idx()] = self.t.strings.intern(thread);
        }
        th
    }

    /// Sets the device id of `thread`'s process (row readers know it; Chrome traces hint it).
    pub fn set_process_device(&mut self, thread: ThreadId, device: i32) {
        let p = self.t.threads.process[thread.idx()].idx();
        self.t.processes.device_id[p] = device;
    }

    pub fn push_event(&mut self, e: NewEvent) {
        let t = &mut self.t.events;
        t.thread.push(e.thread);
        t.ts_ns.push(e.ts_ns);
        t.dur_ns.push(e.dur_ns);
        t.name.push(e.name);
        t.cat.push(e.cat);
        t.task_type.push(e.task_type);
        t.stream.push(e.stream);
        t.category.push(crate::model::Category::Other);
        t.kind.push(crate::model::EventKind::Complete);
        t.connection_id.push(e.connection_id);
        t.correlation_id.push(e.correlation_id);
        t.graph_id
            .push(crate::model::events::graph_id_of(e.graph_id));
        t.launched.push(crate::model::StrId::EMPTY);
        t.kernel.push(e.kernel);
        t.comm_task.push(e.comm_task);
    }
}
