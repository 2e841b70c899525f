//! The devices of a profile, as the analyses see them: one per device process (Ascend
//! `Ascend Hardware`, or a Kineto GPU process), with its device events sorted by start, and the
//! collective ops that count as its communication (HCCL group ops of the same file when present,
//! else the device's own communication kernels).

pub mod busy;
pub mod decode_steps;
pub mod launches;

use super::intervals::Iv;
pub use crate::contract::devices::*;
use crate::model::category::WaitKind;
use crate::model::hash::FxHashMap;
use crate::model::{Category, FileId, ProcessId, ProcessRole, StrId, Tables};
use decode_steps::DecodeSteps;
use rayon::slice::ParallelSliceMut;
use std::sync::OnceLock;

impl DeviceRef {
    /// `rank R` when the rank is known, else the full [`Self::title`]: the short name a
    /// one-line statement uses.
    pub fn short(&self) -> String {
        if self.rank >= 0 {
            format!("rank {}", self.rank)
        } else {
            self.title()
        }
    }

    /// `rank R device D <process>`, the known parts only.
    pub fn title(&self) -> String {
        let mut s = String::new();
        if self.rank >= 0 {
            s += &format!("rank {} ", self.rank);
        }
        if self.device_id >= 0 {
            s += &format!("device {} ", self.device_id);
        }
        s + &self.process
    }
}

pub struct Device {
    pub file: FileId,
    pub process: ProcessId,
    pub evidence: DeviceRef,
    /// Device events (compute, comm, wait/sync, data movement) of this process, by start time.
    pub events: Vec<u32>,
    /// Collective-op events that define communication time, by start time.
    pub comm_ops: Vec<u32>,
    /// Which events define communication time.
    pub comm_source: CommSource,
    /// The time spans the capture observed, when its file was written in pieces with time
    /// between them that no piece covers (`files.captured_spans`); empty: one span.
    pub spans: Vec<Iv>,
    /// Derived once on first use, shared by the analyses that need them (they run in parallel).
    pub(super) busy: OnceLock<(Vec<Iv>, Vec<Iv>)>,
    pub(super) decode_steps: OnceLock<DecodeSteps>,
    pub(super) launches: OnceLock<launches::Launches>,
}

/// Every device with at least one device event.
pub fn devices(t: &Tables) -> Vec<Device> {
    let (by_process, hccl_by_file) = gather(t);
    let mut out = Vec::new();
    for (p, mut events) in by_process.into_iter().enumerate() {
        if events.is_empty() {
            continue;
        }
        sort_by_start(t, &mut events);
        // Kept for the whole run: drop the spare capacity of the pushes.
        events.shrink_to_fit();
        let process = ProcessId(p as u32);
        let file = t.process_file(process);
        let hccl = &hccl_by_file[file.idx()];
        let (mut comm_ops, comm_source) =
            if t.processes.role[p] == ProcessRole::AscendHardware && !hccl.is_empty() {
                (hccl.clone(), CommSource::HcclGroupOps)
            } else {
                let own: Vec<u32> = events
                    .iter()
                    .copied()
                    .filter(|&i| t.events.category[i as usize] == Category::CommKernel)
                    .collect();
                (own, CommSource::DeviceCommKernels)
            };
        sort_by_start(t, &mut comm_ops);
        out.push(Device {
            file,
            process,
            evidence: DeviceRef {
                file: t.files.path[file.idx()].clone(),
                rank: t.files.rank[file.idx()],
                device_id: t.processes.device_id[p],
                process: t.process_label(process),
            },
            events,
            comm_ops,
            comm_source,
            spans: t.files.captured_spans[file.idx()].clone(),
            busy: OnceLock::new(),
            decode_steps: OnceLock::new(),
            launches: OnceLock::new(),
        });
    }
    out
}

/// Where an event of a thread may go, decided once per thread.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gathers {
    Nothing,
    /// Its device events are this process's device events.
    Device(ProcessId),
    /// Its communication kernels are this file's HCCL group ops.
    HcclGroup(FileId),
}

/// Device events per process, and HCCL group ops per file.
type Gathered = (Vec<Vec<u32>>, Vec<Vec<u32>>);

/// Device events per process and HCCL group ops per file, each in event order: one pass over the
/// events in pieces on the pool, concatenated in order.
fn gather(t: &Tables) -> Gathered {
    use rayon::prelude::*;
    let gathers: Vec<Gathers> = (0..t.threads.len())
        .map(|th| {
            let p = t.threads.process[th];
            match t.processes.role[p.idx()] {
                ProcessRole::AscendHardware | ProcessRole::KinetoDevice => Gathers::Device(p),
                ProcessRole::Hccl => {
                    let thread = t.str(t.threads.name[th]);
                    // `Group … Communication` (torch_npu), `Communication Kernel` (legacy CANN).
                    if thread.starts_with("Group") || thread == "Communication Kernel" {
                        Gathers::HcclGroup(t.process_file(p))
                    } else {
                        Gathers::Nothing
                    }
                }
                _ => Gathers::Nothing,
            }
        })
        .collect();
    let empty = || {
        (
            vec![Vec::new(); t.processes.len()],
            vec![Vec::new(); t.files.len()],
        )
    };
    let e = &t.events;
    const PIECE: usize = 1 << 20;
    let pieces: Vec<Gathered> = (0..e.len().div_ceil(PIECE))
        .into_par_iter()
        .map(|k| {
            let (mut by_process, mut hccl_by_file) = empty();
            for i in k * PIECE..((k + 1) * PIECE).min(e.len()) {
                match gathers[e.thread[i].idx()] {
                    Gathers::Device(p) if e.category[i].is_device() => {
                        by_process[p.idx()].push(i as u32)
                    }
                    Gathers::HcclGroup(f) if e.category[i] == Category::CommKernel => {
                        hccl_by_file[f.idx()].push(i as u32)
                    }
                    _ => {}
                }
            }
            (by_process, hccl_by_file)
        })
        .collect();
    let mut pieces = pieces.into_iter();
    let Some(first) = pieces.next() else {
        return empty();
    };
    pieces.fold(first, |(mut by_process, mut hccl), (p, h)| {
        for (to, from) in by_process.iter_mut().zip(p) {
            to.extend(from);
        }
        for (to, from) in hccl.iter_mut().zip(h) {
            to.extend(from);
        }
        (by_process, hccl)
    })
}

/// Sorts event indexes by (start, index). The keys are sorted next to the indexes (a key
/// closure would chase `ts_ns[i]` at random for every comparison): packed into one u64 (start
/// offset from the earliest above the index bits) when that fits, 8 bytes per event, else as
/// (start, index) pairs, 16.
fn sort_by_start(t: &Tables, v: &mut Vec<u32>) {
    let ts = |i: u32| t.events.ts_ns[i as usize];
    if v.is_sorted_by_key(|&i| (ts(i), i)) {
        return;
    }
    if let Some(merged) = merge_thread_runs(t, v) {
        *v = merged;
        return;
    }
    let (lo, hi) = v.iter().fold((i64::MAX, i64::MIN), |(lo, hi), &i| {
        (lo.min(ts(i)), hi.max(ts(i)))
    });
    let idx_bits = 32 - v.iter().max().map_or(0, |m| m.leading_zeros());
    let span = hi.abs_diff(lo);
    let span_bits = 64 - span.leading_zeros();
    if span_bits + idx_bits <= 64 {
        let mut keyed: Vec<u64> = v
            .iter()
            .map(|&i| (ts(i).abs_diff(lo) << idx_bits) | i as u64)
            .collect();
        keyed.par_sort_unstable();
        let mask = (1u64 << idx_bits) - 1;
        v.clear();
        v.extend(keyed.into_iter().map(|k| (k & mask) as u32));
    } else {
        let mut keyed: Vec<(i64, u32)> = v.iter().map(|&i| (ts(i), i)).collect();
        keyed.par_sort_unstable();
        v.clear();
        v.extend(keyed.into_iter().map(|(_, i)| i));
    }
}

/// `v` by (start, index) when each thread's events in it already come in that order (a device
/// stream's tasks are written as they ran): the threads' runs merged two at a time, the two
/// shortest first, O(n log k) for k threads instead of a sort. None when a run is out of order or
/// `v` has more than 64 threads.
fn merge_thread_runs(t: &Tables, v: &[u32]) -> Option<Vec<u32>> {
    let key = |i: u32| (t.events.ts_ns[i as usize], i);
    let mut runs: Vec<(crate::model::ThreadId, Vec<u32>)> = Vec::new();
    let mut at = 0;
    for &i in v {
        let th = t.events.thread[i as usize];
        if runs.get(at).is_none_or(|r| r.0 != th) {
            at = match runs.iter().position(|r| r.0 == th) {
                Some(k) => k,
                None if runs.len() == 64 => return None,
                None => {
                    runs.push((th, Vec::new()));
                    runs.len() - 1
                }
            };
        }
        let run = &mut runs[at].1;
        if run.last().is_some_and(|&l| key(l) > key(i)) {
            return None;
        }
        run.push(i);
    }
    let mut lists: Vec<Vec<u32>> = runs.into_iter().map(|r| r.1).collect();
    while lists.len() > 1 {
        lists.sort_by_key(|l| std::cmp::Reverse(l.len()));
        let (a, b) = (lists.pop()?, lists.pop()?);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            if key(a[i]) < key(b[j]) {
                out.push(a[i]);
                i += 1;
            } else {
                out.push(b[j]);
                j += 1;
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        lists.push(out);
    }
    lists.pop()
}

/// The windows of `busy` (sorted, disjoint) the device was observed in: first start to last end
/// of the busy time inside each captured span, or one window over all of it when the capture is
/// one piece. Time between pieces was not captured, so it is neither busy nor free.
pub fn windows(d: &Device, busy: &[Iv]) -> Vec<Iv> {
    let (Some(first), Some(last)) = (busy.first(), busy.last()) else {
        return Vec::new();
    };
    if d.spans.len() < 2 {
        return vec![(first.0, last.1)];
    }
    d.spans
        .iter()
        .filter_map(|&(a, b)| {
            let lo = busy.partition_point(|x| x.1 <= a);
            let hi = busy.partition_point(|x| x.0 < b);
            (lo < hi).then(|| (busy[lo].0.max(a), busy[hi - 1].1.min(b)))
        })
        .collect()
}

/// `[ts, end)` of event `i`.
pub fn iv(t: &Tables, i: u32) -> (i64, i64) {
    let i = i as usize;
    (t.events.ts_ns[i], t.events.ts_ns[i] + t.events.dur_ns.at(i))
}

/// Wait kinds of events: the kind's string test once per distinct (task type, name), not per
/// event (a device can have millions of wait tasks under a handful of names).
#[derive(Default)]
pub struct WaitKinds {
    buf: String,
    memo: FxHashMap<(StrId, StrId), WaitKind>,
    last: Option<((StrId, StrId), WaitKind)>,
}

impl WaitKinds {
    /// The wait kind of event `i`, or None when it is not a wait/sync task.
    pub fn of(&mut self, t: &Tables, i: usize) -> Option<WaitKind> {
        if t.events.category[i] != Category::WaitSync {
            return None;
        }
        let key = (t.events.task_type.at(i), t.events.name[i]);
        if let Some((k, w)) = self.last
            && k == key
        {
            return Some(w);
        }
        let buf = &mut self.buf;
        let w = *self
            .memo
            .entry(key)
            .or_insert_with(|| WaitKind::of(t.str(key.0), t.str(key.1), buf));
        self.last = Some((key, w));
        Some(w)
    }
}

/// Async copies: `MEMCPY_ASYNC` by task type or name (msprof-analyze's "memory"). The string is
/// interned once, so the per-event test compares integers.
pub struct AsyncCopy(Option<crate::model::StrId>);

impl AsyncCopy {
    pub fn new(t: &Tables) -> AsyncCopy {
        AsyncCopy(t.strings.lookup("MEMCPY_ASYNC"))
    }

    pub fn is(&self, t: &Tables, i: usize) -> bool {
        self.0
            .is_some_and(|m| t.events.task_type.at(i) == m || t.events.name[i] == m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both key layouts give the order of a plain sort by (start, index): a span that packs
    /// (starts within 2^20 ns) and one that does not (starts 2^62 ns apart); and the merge of
    /// threads whose events come in order, with ties across threads, against the same sort,
    /// for 1 to 70 threads (past 64 the sort is used).
    #[test]
    fn sort_by_start_orders_by_start_then_index() {
        for spread in [1i64 << 20, 1i64 << 62] {
            let mut t = Tables::default();
            let mut rnd = super::super::intervals::test_rng(99);
            for k in 0..5000 {
                // Few distinct starts, so ties are frequent.
                let ts = rnd(97) * (spread / 97) - (1 << 40);
                t.events.ts_ns.push(ts);
                t.events.thread.push(crate::model::ThreadId(k % 3));
            }
            let mut v: Vec<u32> = (0..5000u32).rev().collect();
            let mut want = v.clone();
            want.sort_by_key(|&i| (t.events.ts_ns[i as usize], i));
            sort_by_start(&t, &mut v);
            assert_eq!(v, want, "spread {spread}");
        }
        for threads in [1u32, 2, 3, 17, 64, 65, 70] {
            let mut t = Tables::default();
            let mut rnd = super::super::intervals::test_rng(7);
            let mut next = vec![0i64; threads as usize];
            for _ in 0..6000 {
                let th = rnd(threads as i64) as usize;
                // Each thread's starts rise (by 0 to 4 ns: ties within and across threads).
                next[th] += rnd(5);
                t.events.ts_ns.push(next[th]);
                t.events.thread.push(crate::model::ThreadId(th as u32));
            }
            let mut v: Vec<u32> = (0..6000u32).filter(|i| i % 7 != 3).collect();
            let mut want = v.clone();
            want.sort_by_key(|&i| (t.events.ts_ns[i as usize], i));
            let merged = merge_thread_runs(&t, &v);
            assert_eq!(merged.is_some(), threads <= 64, "{threads} threads");
            sort_by_start(&t, &mut v);
            assert_eq!(v, want, "{threads} threads");
        }
        // A thread out of order: not merged, sorted.
        let mut t = Tables::default();
        for (k, ts) in [5i64, 3, 4, 1].into_iter().enumerate() {
            t.events.ts_ns.push(ts);
            t.events.thread.push(crate::model::ThreadId(k as u32 % 2));
        }
        assert_eq!(merge_thread_runs(&t, &[0, 1, 2, 3]), None);
        let mut v = vec![0, 1, 2, 3];
        sort_by_start(&t, &mut v);
        assert_eq!(v, vec![3, 1, 2, 0]);
    }
}
