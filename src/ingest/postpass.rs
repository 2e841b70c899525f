//! Whole-table passes run once all chunks of all files are merged: process roles and device ids
//! from metadata, `B`/`E` matching, stream fill, event classification, overlap accounting and
//! phase statistics. Each pass is O(events) (per-thread sorts only where a thread is unsorted).

use crate::diag::{Diagnostics, Severity};
use crate::model::category::{ClassifyInput, KINETO_DEVICE_CATS, classify};
use crate::model::events::EventKind;
use crate::model::hash::FxHashMap;
use crate::model::{Category, ProcessRole, StrId, Tables, ThreadId};
use rayon::prelude::*;

/// What the readers merged, before the whole-table passes.
pub(super) struct Merged {
    pub t: Tables,
    /// `B` and `E` events waiting to be matched, in file order.
    pub pending_be: Vec<PendingBe>,
    /// Per file: events per phase byte.
    pub phase_counts: Vec<[u64; 128]>,
    /// The overlap counts are left to the caller ([`overlap_diagnostics`]).
    pub overlaps_later: bool,
}

/// A `B` or `E` event waiting to be matched, with global ids.
pub(super) struct PendingBe {
    pub thread: ThreadId,
    pub begin: bool,
    pub ts_ns: i64,
    pub name: StrId,
    pub cat: StrId,
    pub offset: usize,
}

pub(super) fn run(m: Merged) -> Tables {
    // `PROFSCOPE_INGEST_TIMING` prints each pass's time to stderr.
    let timing = std::env::var_os("PROFSCOPE_INGEST_TIMING").is_some();
    let t0 = std::time::Instant::now();
    let lap = |what: &str| {
        if timing {
            eprintln!("postpass {what}: {:.3} s", t0.elapsed().as_secs_f64());
        }
    };
    let mut t = m.t;
    assign_roles(&mut t);
    lap("roles");
    match_begin_end(&mut t, m.pending_be);
    report_phases(&mut t, &m.phase_counts);
    lap("begin/end");
    fill_streams(&mut t);
    lap("streams");
    classify_all(&mut t);
    lap("classify");
    if !m.overlaps_later {
        let d = overlap_diagnostics(&t);
        t.diagnostics.merge(d);
        lap("overlaps");
    }
    t
}

fn trailing_int(s: &str) -> Option<i32> {
    s.rsplit(' ').next().and_then(|w| w.parse().ok())
}

fn assign_roles(t: &mut Tables) {
    let n = t.processes.len();
    let from_path: Vec<Option<i32>> = t
        .files
        .path
        .iter()
        .map(|p| super::rank::prof_device_from_path(p))
        .collect();
    for p in 0..n {
        let name = t.strings.get(t.processes.name[p]);
        let labels = t.strings.get(t.processes.labels[p]);
        let role = ProcessRole::from_metadata(name, labels);
        t.processes.role[p] = role;
        if t.processes.device_id[p] < 0
            && role.is_device()
            && let Some(d) = trailing_int(labels)
        {
            t.processes.device_id[p] = d;
        }
        if t.processes.device_id[p] < 0
            && role.is_device()
            && let Some(d) = from_path[t.processes.file[p].idx()]
        {
            t.processes.device_id[p] = d;
        }
    }
    // Kineto traces without labels: a process with kernels / GPU copies is a device process.
    let device_cats: Vec<StrId> = KINETO_DEVICE_CATS
        .iter()
        .filter_map(|c| t.strings.lookup(c))
        .collect();
    if device_cats.is_empty() {
        return;
    }
    for i in 0..t.events.len() {
        if device_cats.contains(&t.events.cat.at(i)) {
            let p = t.event_process(i).idx();
            if matches!(
                t.processes.role[p],
                ProcessRole::Unknown | ProcessRole::Host
            ) && t.processes.labels[p].is_empty()
            {
                t.processes.role[p] = ProcessRole::KinetoDevice;
            }
        }
    }
}

fn match_begin_end(t: &mut Tables, pending: Vec<PendingBe>) {
    if pending.is_empty() {
        return;
    }
    let mut stacks: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    let mut unmatched_end = 0u64;
    for (i, be) in pending.iter().enumerate() {
        let stack = stacks.entry(be.thread.0).or_default();
        if be.begin {
            stack.push(i);
            continue;
        }
        let Some(bi) = stack.pop() else {
            unmatched_end += 1;
            continue;
        };
        let beg = &pending[bi];
        let dur = be.ts_ns - beg.ts_ns;
        if !(0..=crate::units::MAX_SPAN_NS).contains(&dur) {
            let path = t.files.path[t.process_file(t.thread_process(be.thread)).idx()].clone();
            let why = if dur < 0 {
                "ends before it begins"
            } else {
                "lasts longer than a week"
            };
            t.diagnostics.add("skipped_event", Severity::DataLoss, || {
                format!(
                    "{path}: byte {}: B/E pair {why} (B at {} ns, E at {} ns); skipped",
                    beg.offset, beg.ts_ns, be.ts_ns
                )
            });
            continue;
        }
        let e = &mut t.events;
        e.thread.push(beg.thread);
        e.ts_ns.push(beg.ts_ns);
        e.dur_ns.push(dur);
        e.name.push(beg.name);
        e.cat.push(beg.cat);
        e.task_type.push(StrId::EMPTY);
        e.stream.push(-1);
        e.category.push(Category::Other);
        e.kind.push(EventKind::Complete);
        e.connection_id.push(-1);
        e.correlation_id.push(-1);
        e.graph_id.push(-1);
        e.launched.push(StrId::EMPTY);
        e.kernel.push(crate::model::events::NO_ROW);
        e.comm_task.push(crate::model::events::NO_ROW);
    }
    let unmatched_begin: Vec<usize> = stacks.values().flatten().copied().collect();
    for &i in unmatched_begin.iter().take(crate::diag::MAX_EXAMPLES) {
        let be = &pending[i];
        let path = t.files.path[t.process_file(t.thread_process(be.thread)).idx()].clone();
        let name = t.str(be.name).to_string();
        t.diagnostics
            .add("unmatched_begin", Severity::DataLoss, || {
                format!("{path}: byte {}: B `{name}` without E", be.offset)
            });
    }
    let more = unmatched_begin
        .len()
        .saturating_sub(crate::diag::MAX_EXAMPLES) as u64;
    t.diagnostics
        .add_n("unmatched_begin", Severity::DataLoss, more, || {
            "more B without E".into()
        });
    t.diagnostics
        .add_n("unmatched_end", Severity::DataLoss, unmatched_end, || {
            "E events without an open B on their thread".into()
        });
}

const KNOWN_PHASES: &[u8] = b"XBEiIRMCstf";

fn report_phases(t: &mut Tables, phase_counts: &[[u64; 128]]) {
    for (f, counts) in phase_counts.iter().enumerate() {
        for (ph, &n) in counts.iter().enumerate() {
            if n == 0 || KNOWN_PHASES.contains(&(ph as u8)) {
                continue;
            }
            let path = &t.files.path[f];
            let shown = if ph == 0 {
                "(missing)".to_string()
            } else {
                (ph as u8 as char).to_string()
            };
            t.diagnostics.add_n("unknown_phase", Severity::Info, n, || {
                format!("{path}: {n} events with ph {shown} (not modelled, counted)")
            });
        }
    }
}

/// Device tasks without a stream arg take their tid (Ascend Hardware tid = physical stream).
fn fill_streams(t: &mut Tables) {
    // Per thread: the stream its device tasks without one take.
    let fill: Vec<Option<i32>> = (0..t.threads.len())
        .map(|th| {
            let p = t.threads.process[th].idx();
            matches!(
                t.processes.role[p],
                ProcessRole::AscendHardware | ProcessRole::KinetoDevice
            )
            .then(|| t.threads.tid[th].clamp(-1, i32::MAX as i64) as i32)
        })
        .collect();
    if fill.iter().all(Option::is_none) {
        return;
    }
    let e = &mut t.events;
    for i in 0..e.len() {
        if let Some(s) = fill[e.thread[i].idx()]
            && e.stream.at(i) < 0
        {
            e.stream.set(i, s);
        }
    }
}

/// What decides an event's category: its thread's role, cat, task type, name, and whether it is
/// an instant.
type ClassKey = (u8, u32, u32, u32, bool);

/// Slots of the recent answers of [`classify_all`] (a power of two).
const RECENT_CLASSES: usize = 64;

/// The recent slot of a key: its name, category, task type and role mixed, the top bits.
#[inline]
fn recent_slot(k: ClassKey) -> usize {
    crate::model::hash::slot_of(
        u64::from(k.3) << 32 | u64::from(k.1),
        u64::from(k.2) << 9 | u64::from(k.0) << 1 | u64::from(k.4),
        RECENT_CLASSES,
    )
}

fn classify_all(t: &mut Tables) {
    let roles: Vec<ProcessRole> = t
        .threads
        .process
        .iter()
        .map(|p| t.processes.role[p.idx()])
        .collect();
    let strings = &t.strings;
    let e = &t.events;
    let cats: Vec<Category> = (0..e.len())
        .into_par_iter()
        .with_min_len(1 << 16)
        .map_init(
            || {
                (
                    FxHashMap::<ClassKey, Category>::default(),
                    String::new(),
                    Box::new([None::<(ClassKey, Category)>; RECENT_CLASSES]),
                )
            },
            |(cache, buf, recent), i| {
                let role = roles[e.thread[i].idx()];
                let instant = e.kind[i] == EventKind::Instant;
                let key = (
                    role as u8,
                    e.cat.at(i).0,
                    e.task_type.at(i).0,
                    e.name[i].0,
                    instant,
                );
                // Events repeat a few keys (a stream's kernels, a vendor row type, a thread's
                // ops): the answer in the key's recent slot first, the map only on a miss.
                let previous = &mut recent[recent_slot(key)];
                if let Some((k, c)) = *previous
                    && k == key
                {
                    return c;
                }
                let c = *cache.entry(key).or_insert_with(|| {
                    classify(
                        ClassifyInput {
                            role,
                            cat: strings.get(e.cat.at(i)),
                            task_type: strings.get(e.task_type.at(i)),
                            name: strings.get(e.name[i]),
                            instant,
                        },
                        buf,
                    )
                });
                *previous = Some((key, c));
                c
            },
        )
        .collect();
    t.events.category = cats;
}

/// Overlaps per thread, as diagnostics: partial overlaps anywhere (improper nesting, which
/// Perfetto's JSON importer drops) and any overlap on device streams. Nothing is removed.
///
/// Each thread is walked in (start, longest first) order. One pass in event order walks every
/// thread whose events already come in that order (the threads of every trace and db seen so
/// far); a thread found out of order is then gathered, sorted and walked on its own.
pub(super) fn overlap_diagnostics(t: &Tables) -> Diagnostics {
    let mut out = Diagnostics::default();
    let n_threads = t.threads.len();
    let e = &t.events;
    // Per thread: 0 not a device stream, 1 Ascend (every device task occupies its stream),
    // 2 Kineto (kernels and copies occupy it; cuda_sync records are drawn over them).
    let mut walks: Vec<NestingWalk> = t
        .threads
        .process
        .iter()
        .map(|p| {
            NestingWalk::new(match t.processes.role[p.idx()] {
                ProcessRole::AscendHardware => 1,
                ProcessRole::KinetoDevice => 2,
                _ => 0,
            })
        })
        .collect();
    let key = |i: usize| (e.ts_ns[i], std::cmp::Reverse(e.dur_ns.at(i)));
    let mut last = vec![(i64::MIN, std::cmp::Reverse(i64::MAX)); n_threads];
    let mut in_order = vec![true; n_threads];
    for i in 0..e.len() {
        let th = e.thread[i].idx();
        if !in_order[th] {
            continue;
        }
        let k = key(i);
        if k < last[th] {
            in_order[th] = false;
            continue;
        }
        last[th] = k;
        walks[th].step(e, i);
    }
    if in_order.contains(&false) {
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n_threads];
        for (i, th) in e.thread.iter().enumerate() {
            if !in_order[th.idx()] {
                lists[th.idx()].push(i as u32);
            }
        }
        walks
            .par_iter_mut()
            .zip(lists)
            .filter(|(_, idx)| !idx.is_empty())
            .for_each(|(w, mut idx)| {
                // Stable: events with equal keys keep their file order, as in the pass above.
                // (Keys copied beside the indices sort no faster here and cost 6x the memory
                // beside the analyses: kineto5x's peak RSS rose from 0.22x to 0.255x the file.)
                super::nearly_sorted::sort_by_key(&mut idx, |i| key(i as usize));
                *w = NestingWalk::new(w.device);
                for &i in &idx {
                    w.step(e, i as usize);
                }
            });
    }
    for (th, w) in walks.iter().enumerate() {
        let (partial, overlap) = (w.partial, w.overlap);
        if partial == 0 && overlap == 0 {
            continue;
        }
        let p = t.threads.process[th];
        let where_ = format!(
            "{}: {} / {}",
            t.files.path[t.process_file(p).idx()],
            t.process_label(p),
            t.thread_label(crate::model::ThreadId(th as u32))
        );
        let label = || where_.clone();
        if partial > 0 {
            let ex = format!(
                "{} ({partial}; first at ts_ns {})",
                label(),
                w.first_partial.map_or(0, |i| t.events.ts_ns[i])
            );
            out.add_n("improperly_nested_events", Severity::Info, partial, || ex);
        }
        if overlap > 0 {
            let ex = format!(
                "{} ({overlap}; first at ts_ns {})",
                label(),
                w.first_overlap.map_or(0, |i| t.events.ts_ns[i])
            );
            out.add_n("overlapping_device_events", Severity::Info, overlap, || ex);
        }
    }
    out
}

/// One thread's events walked in (start, longest first) order: improperly nested events (one
/// that starts inside an open event and ends after it) and, on device streams, events that start
/// before an earlier one ended.
struct NestingWalk {
    /// See [`overlap_diagnostics`]: 0 not a device stream, 1 Ascend, 2 Kineto.
    device: u8,
    /// Ends of the open, properly nested events, innermost last.
    stack: Vec<i64>,
    max_end: i64,
    partial: u64,
    overlap: u64,
    first_partial: Option<usize>,
    first_overlap: Option<usize>,
}

impl NestingWalk {
    fn new(device: u8) -> NestingWalk {
        NestingWalk {
            device,
            stack: Vec::new(),
            max_end: i64::MIN,
            partial: 0,
            overlap: 0,
            first_partial: None,
            first_overlap: None,
        }
    }

    fn step(&mut self, e: &crate::model::events::EventTable, i: usize) {
        if e.kind[i] != EventKind::Complete {
            return;
        }
        let (ts, end) = (e.ts_ns[i], e.ts_ns[i] + e.dur_ns.at(i));
        while self.stack.last().is_some_and(|&top| top <= ts) {
            self.stack.pop();
        }
        if self.stack.last().is_some_and(|&top| end > top) {
            self.partial += 1;
            self.first_partial.get_or_insert(i);
        } else {
            self.stack.push(end);
        }
        // Annotations copied onto a device timeline (Kineto gpu_user_annotation, CANN Step
        // Trace markers) are not device work.
        let c = e.category[i];
        let work = match self.device {
            1 => c.is_device(),
            2 => c.is_device() && c != Category::WaitSync,
            _ => false,
        };
        if work {
            if ts < self.max_end {
                self.overlap += 1;
                self.first_overlap.get_or_insert(i);
            }
            self.max_end = self.max_end.max(end);
        }
    }
}
