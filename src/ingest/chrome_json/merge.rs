//! Appends one parsed chunk's columns to the shared [`TablesBuilder`]: chunk-local string and
//! thread ids become global ones, events, HCCL task details, recorded op inputs (`op_args`), `B`/`E` events, metadata, counters
//! and flows are appended, and what the chunk skipped becomes diagnostics. The Chrome JSON
//! reader's half of the builder; the builder itself knows no input format.

use super::chunk::{ChunkOut, MetaKind};
use super::local::IdKey;
use crate::diag::Severity;
use crate::ingest::builder::{Key, TablesBuilder};
use crate::ingest::postpass::PendingBe;
use crate::model::{Category, FileId, StrId, ThreadId};

/// Chunk-local ids mapped to global ones.
struct Ids {
    strings: Vec<StrId>,
    threads: Vec<ThreadId>,
}

impl Ids {
    fn str(&self, local: u32) -> StrId {
        self.strings[local as usize]
    }

    fn thread(&self, local: u32) -> ThreadId {
        self.threads[local as usize]
    }

    fn key(&self, k: IdKey) -> Key {
        match k {
            IdKey::Num(n) => Key::Num(n),
            IdKey::Text(s) => Key::Text(self.str(s as u32)),
        }
    }
}

/// Appends one parsed chunk of `file` (chunks must come in file order).
pub fn merge_chunk(b: &mut TablesBuilder, file: FileId, out: &mut ChunkOut<'_>) {
    let path = b.current_path(file);
    let strings = intern_arena(b, out, &path);
    let mut ids = Ids {
        strings,
        threads: Vec::new(),
    };
    ids.threads = out
        .threads
        .keys
        .iter()
        .map(|&(p, t)| b.thread(file, ids.key(p), ids.key(t)))
        .collect();
    // Names first: they decide which threads are the vendor's overlap rows.
    apply_metadata(b, file, out, &ids);
    sum_vendor_overlap(b, file, out, &ids, &path);
    let base = b.t.events.len();
    append_events(b, out, &ids);
    append_comm_tasks(b, out, &ids, base);
    for r in &out.op_args {
        b.t.op_args.push(
            (base + r.event as usize) as u32,
            ids.str(r.dims),
            ids.str(r.types),
            ids.str(r.concrete),
        );
    }
    b.pending_be
        .extend(out.begin_end.iter().map(|be| PendingBe {
            thread: ids.thread(be.thread),
            begin: be.begin,
            ts_ns: be.ts_ns,
            name: ids.str(be.name),
            cat: ids.str(be.cat),
            offset: be.offset,
        }));
    append_counters(b, file, out, &ids);
    append_flows(b, out, &ids);
    for &(t, dev) in &out.device_hints {
        let p = b.t.threads.process[ids.thread(t).idx()].idx();
        if b.t.processes.device_id[p] < 0 {
            b.t.processes.device_id[p] = dev;
        }
    }
    let pc = &mut b.phase_counts[file.idx()];
    for (a, n) in pc.iter_mut().zip(out.phase_counts.iter()) {
        *a += n;
    }
    report_skipped(b, out, &path);
}

/// The chunk's strings as global ids; invalid UTF-8 is decoded lossily and counted.
fn intern_arena(b: &mut TablesBuilder, out: &ChunkOut<'_>, path: &str) -> Vec<StrId> {
    let mut non_utf8 = 0u64;
    let ids = out
        .arena
        .iter()
        .map(|s| match std::str::from_utf8(s) {
            Ok(s) => b.t.strings.intern(s),
            Err(_) => {
                non_utf8 += 1;
                b.t.strings.intern(&String::from_utf8_lossy(s))
            }
        })
        .collect();
    b.t.diagnostics
        .add_n("non_utf8_string", Severity::Info, non_utf8, || {
            format!("{path}: strings with invalid UTF-8 were decoded lossily (U+FFFD)")
        });
    ids
}

fn append_events(b: &mut TablesBuilder, out: &ChunkOut<'_>, ids: &Ids) {
    let e = &mut b.t.events;
    e.reserve(out.ev_ts.len());
    e.thread
        .extend(out.ev_thread.iter().map(|&t| ids.thread(t)));
    e.ts_ns.extend_from_slice(&out.ev_ts);
    e.dur_ns.extend_from_slice(&out.ev_dur);
    e.name.extend(out.ev_name.iter().map(|&s| ids.str(s)));
    e.cat.extend(out.ev_cat.iter().map(|&s| ids.str(s)));
    e.task_type
        .extend(out.ev_task_type.iter().map(|&s| ids.str(s)));
    e.stream.extend(
        out.ev_stream
            .iter()
            .map(|&s| s.clamp(-1, i32::MAX as i64) as i32),
    );
    e.category
        .extend(std::iter::repeat_n(Category::Other, out.ev_ts.len()));
    e.kind.extend_from_slice(&out.ev_kind);
    e.connection_id.extend_from_slice(&out.ev_conn);
    e.correlation_id.extend_from_slice(&out.ev_corr);
    // Runs of one graph id (most events have none) and the launched names between the few
    // launches are pushed a run at a time.
    let mut run = (-1, 0);
    for &g in &out.ev_graph {
        let g = crate::model::events::graph_id_of(g);
        if g == run.0 {
            run.1 += 1;
        } else {
            e.graph_id.push_n(run.0, run.1);
            run = (g, 1);
        }
    }
    e.graph_id.push_n(run.0, run.1);
    let mut next = 0u32;
    for &(k, s) in &out.launched {
        if k < next || k as usize >= out.ev_ts.len() {
            continue;
        }
        e.launched.push_n(StrId::EMPTY, (k - next) as usize);
        e.launched.push(ids.str(s));
        next = k + 1;
    }
    e.launched.push_n(
        StrId::EMPTY,
        (out.ev_ts.len() as u32).saturating_sub(next) as usize,
    );
    e.pad_links();
}

/// When the builder asks for sums ([`TablesBuilder::vendor_overlap_sums`]), the events of the
/// chunk's vendor `Overlap Analysis` threads (named so by metadata in this or an earlier chunk)
/// are added to the vendor_overlap sums and removed from the chunk. Threads named only later in
/// the file stay events (device_time and ranks read both).
fn sum_vendor_overlap(
    b: &mut TablesBuilder,
    file: FileId,
    out: &mut ChunkOut<'_>,
    ids: &Ids,
    path: &str,
) {
    if !b.vendor_overlap_sums() {
        return;
    }
    let kinds: Vec<Option<u8>> = ids
        .threads
        .iter()
        .map(|&t| b.vendor_overlap_kind(t))
        .collect();
    if kinds.iter().all(Option::is_none) {
        return;
    }
    let mut sums = vec![(0u64, 0i64); kinds.len()];
    // Summed while parsing (the waves re-parse a chunk whose list went stale, so the kinds agree).
    for (t, kind, n, dur) in out.overlap.summed() {
        debug_assert_eq!(kinds[t as usize], Some(kind));
        sums[t as usize] = (n, dur);
    }
    b.count_overlap_rows_summed_while_parsing(out.overlap.rows);
    let mut removed = false;
    let keep: Vec<bool> = out
        .ev_thread
        .iter()
        .zip(&out.ev_dur)
        .map(|(&t, &dur)| {
            let vendor = kinds[t as usize].is_some();
            if vendor {
                let s = &mut sums[t as usize];
                *s = (s.0 + 1, s.1 + dur);
                removed = true;
            }
            !vendor
        })
        .collect();
    let mut rows = 0;
    for (local, (n, dur)) in sums.into_iter().enumerate().filter(|x| x.1.0 > 0) {
        let kind = kinds[local].expect("summed threads have a kind");
        b.add_vendor_overlap(file, ids.thread(local as u32), kind, n, dur);
        rows += n;
    }
    b.diag().add_n("vendor_overlap_as_sums", Severity::Info, rows, || {
        format!("{path}: `Overlap Analysis` events read as per-device sums (device_time's vendor comparison), not as events; `export` and `query` read them as events")
    });
    if removed {
        keep_events(out, &keep);
    }
}

/// Keeps the chunk's events that `keep` says, in order; its HCCL task records follow their
/// events (renumbered; a record whose event goes, goes too).
fn keep_events(out: &mut ChunkOut<'_>, keep: &[bool]) {
    fn retain<T>(v: &mut Vec<T>, keep: &[bool]) {
        let mut k = keep.iter();
        v.retain(|_| k.next().copied().unwrap_or(true));
    }
    if !out.comm.is_empty() || !out.op_args.is_empty() || !out.launched.is_empty() {
        // Chunk event → its row among the kept ones.
        let row: Vec<u32> = keep
            .iter()
            .scan(0u32, |n, &kept| {
                let r = *n;
                *n += kept as u32;
                Some(r)
            })
            .collect();
        let renumber = |event: &mut u32| {
            let i = *event as usize;
            let kept = keep.get(i) == Some(&true);
            if kept {
                *event = row[i];
            }
            kept
        };
        out.comm.retain_mut(|c| renumber(&mut c.event));
        out.op_args.retain_mut(|c| renumber(&mut c.event));
        out.launched.retain_mut(|c| renumber(&mut c.0));
    }
    retain(&mut out.ev_thread, keep);
    retain(&mut out.ev_ts, keep);
    retain(&mut out.ev_dur, keep);
    retain(&mut out.ev_name, keep);
    retain(&mut out.ev_cat, keep);
    retain(&mut out.ev_task_type, keep);
    retain(&mut out.ev_stream, keep);
    retain(&mut out.ev_kind, keep);
    retain(&mut out.ev_conn, keep);
    retain(&mut out.ev_corr, keep);
    retain(&mut out.ev_graph, keep);
}

/// HCCL plane task details and Kineto NCCL kernels' groups, linked from their events (the chunk's events start at row `base`).
fn append_comm_tasks(b: &mut TablesBuilder, out: &ChunkOut<'_>, ids: &Ids, base: usize) {
    for c in &out.comm {
        let ct = &mut b.t.comm_tasks;
        let row = ct.len() as u32;
        ct.op_name.push(ids.str(c.op_name));
        ct.group.push(ids.str(c.group));
        ct.plane.push(-1);
        ct.src_rank.push(c.src_rank);
        ct.dst_rank.push(c.dst_rank);
        ct.transport.push(ids.str(c.transport));
        ct.link.push(ids.str(c.link));
        ct.data_type.push(ids.str(c.data_type));
        ct.size_bytes.push(c.size_bytes);
        ct.bandwidth_bytes_per_s.push(c.bandwidth_bytes_per_s);
        ct.notify_id.push(c.notify_id);
        b.t.events.comm_task[base + c.event as usize] = row;
    }
}

/// Process and thread names, labels and sort indexes from `M` events.
fn apply_metadata(b: &mut TablesBuilder, file: FileId, out: &ChunkOut<'_>, ids: &Ids) {
    for m in &out.metas {
        let text = ids.str(m.text);
        match m.kind {
            MetaKind::ProcessName | MetaKind::ProcessLabels | MetaKind::ProcessSortIndex => {
                let p = b.process(file, ids.key(m.pid)).idx();
                let pt = &mut b.t.processes;
                match m.kind {
                    MetaKind::ProcessName => pt.name[p] = text,
                    MetaKind::ProcessLabels => pt.labels[p] = text,
                    _ => pt.sort_index[p] = m.int,
                }
            }
            MetaKind::ThreadName | MetaKind::ThreadSortIndex => {
                let t = b.thread(file, ids.key(m.pid), ids.key(m.tid)).idx();
                if m.kind == MetaKind::ThreadName {
                    b.t.threads.name[t] = text;
                } else {
                    b.t.threads.sort_index[t] = m.int;
                }
            }
        }
    }
}

fn append_counters(b: &mut TablesBuilder, file: FileId, out: &ChunkOut<'_>, ids: &Ids) {
    for i in 0..out.ctr_ts.len() {
        let p = b.process(file, ids.key(out.ctr_pid[i]));
        let c = &mut b.t.counters;
        c.process.push(p);
        c.name.push(ids.str(out.ctr_name[i]));
        c.series.push(ids.str(out.ctr_series[i]));
        c.ts_ns.push(out.ctr_ts[i]);
        c.value.push(out.ctr_value[i]);
    }
}

fn append_flows(b: &mut TablesBuilder, out: &ChunkOut<'_>, ids: &Ids) {
    let f = &mut b.t.flows;
    f.thread
        .extend(out.flow_thread.iter().map(|&t| ids.thread(t)));
    f.phase.extend_from_slice(&out.flow_phase);
    f.cat.extend(out.flow_cat.iter().map(|&s| ids.str(s)));
    f.name.extend(out.flow_name.iter().map(|&s| ids.str(s)));
    f.id.extend_from_slice(&out.flow_id);
    f.ts_ns.extend_from_slice(&out.flow_ts);
    f.bind_enclosing.extend_from_slice(&out.flow_bp);
}

/// Events the chunk skipped (the first few with their byte offsets) and metadata it ignored.
fn report_skipped(b: &mut TablesBuilder, out: &ChunkOut<'_>, path: &str) {
    for &(offset, why) in out.skipped.iter() {
        b.t.diagnostics
            .add("skipped_event", Severity::DataLoss, || {
                format!("{path}: byte {offset}: {why}")
            });
    }
    let extra = out.skipped_count.saturating_sub(out.skipped.len() as u64);
    b.t.diagnostics
        .add_n("skipped_event", Severity::DataLoss, extra, || {
            format!("{path}: more skipped events")
        });
    b.t.diagnostics
        .add_n("graph_id_invalid", Severity::DataLoss, out.graph_invalid, || {
            format!(
                "{path}: byte {}: args `Model Id` / `model id` / `graph id` holds a value no graph id can be (an integer 0 to 4294967295); such events are read as replayed from no graph, so graph-mode replay counts and shares can be short",
                out.graph_invalid_at
            )
        });
    b.t.diagnostics
        .add_n("ignored_metadata", Severity::Info, out.ignored_meta, || {
            format!("{path}: M events other than process/thread name, labels and sort index")
        });
}
