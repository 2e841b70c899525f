//! Which PyTorch op each GPU kernel of a Kineto trace belongs to: the kernel's launch call
//! (correlation id, `devices::launches`) lies inside host ops on its thread; the outermost one
//! with a work model is charged with the kernel (so `aten::linear` counts its `aten::addmm`'s
//! GEMM once, as TraceLens does), and a kernel under no modelled op is named after the
//! outermost `cpu_op` around its launch. One pass over the file's events, then a binary search
//! per kernel.

use super::aten_ops;
use crate::model::hash::FxHashMap;
use crate::model::{Category, FileId, Tables, ThreadId};

/// Sorted, disjoint (start, end, event) spans of one thread.
type Spans = Vec<(i64, i64, u32)>;

/// One file's host ops, by thread: the outermost modelled ops and the outermost `cpu_op`s.
pub struct AtenIndex {
    modelled: FxHashMap<ThreadId, Spans>,
    top: FxHashMap<ThreadId, Spans>,
    /// Whether any op_args row of the file is a host op (its recorded inputs).
    has_shapes: bool,
}

/// The outermost spans of each thread of `spans` ((thread, span) of events in table order), as
/// [`outermost`] gives them. A thread whose spans come in the order `outermost` sorts by (start,
/// then longest first, then event) has each span kept or dropped as it comes, so only the kept
/// ones are held (Kineto's `cpu_op`s are hundreds of thousands, their outermost far fewer); a
/// thread found out of that order is gathered again in a second pass and sorted.
fn outermost_by_thread(
    spans: impl Iterator<Item = (ThreadId, (i64, i64, u32))> + Clone,
) -> FxHashMap<ThreadId, Spans> {
    #[derive(Default)]
    struct Online {
        kept: Spans,
        last: Option<(i64, std::cmp::Reverse<i64>, u32)>,
        unsorted: bool,
    }
    let mut by: FxHashMap<ThreadId, Online> = FxHashMap::default();
    for (th, x) in spans.clone() {
        let o = by.entry(th).or_default();
        if o.unsorted {
            continue;
        }
        let key = (x.0, std::cmp::Reverse(x.1), x.2);
        if o.last.is_some_and(|l| key < l) {
            o.unsorted = true;
            o.kept = Vec::new();
            continue;
        }
        o.last = Some(key);
        if o.kept.last().is_none_or(|l| x.0 >= l.1) {
            o.kept.push(x);
        }
    }
    let mut out: FxHashMap<ThreadId, Spans> = FxHashMap::default();
    let mut again: FxHashMap<ThreadId, Spans> = FxHashMap::default();
    for (th, o) in by {
        if o.unsorted {
            again.insert(th, Vec::new());
        } else {
            out.insert(th, o.kept);
        }
    }
    if !again.is_empty() {
        for (th, x) in spans {
            if let Some(v) = again.get_mut(&th) {
                v.push(x);
            }
        }
        out.extend(again.into_iter().map(|(th, v)| (th, outermost(v))));
    }
    out
}

/// Keeps the outermost of well-nested spans (sorted by start, then longest first).
fn outermost(mut v: Spans) -> Spans {
    v.sort_unstable_by_key(|&(s, e, i)| (s, std::cmp::Reverse(e), i));
    let mut out: Spans = Vec::with_capacity(v.len());
    for x in v {
        if out.last().is_none_or(|l| x.0 >= l.1) {
            out.push(x);
        }
    }
    out
}

/// The span of `spans` that contains [s, e], if any.
fn containing(spans: &Spans, s: i64, e: i64) -> Option<u32> {
    let k = spans.partition_point(|x| x.0 <= s).checked_sub(1)?;
    let x = spans[k];
    (x.1 >= e).then_some(x.2)
}

/// The op_args row of event `e` (the column rises: a binary search, no per-row map).
fn args_row(t: &Tables, e: u32) -> Option<usize> {
    t.op_args.event.binary_search(&e).ok()
}

impl AtenIndex {
    pub fn build(t: &Tables, file: FileId) -> AtenIndex {
        let mut has_shapes = false;
        let mut modelled: Vec<usize> = Vec::new();
        // Per name: 0 not asked yet, 1 not modelled, 2 modelled (the name test once per name).
        let mut by_name = vec![0u8; t.strings.len()];
        for &e in &t.op_args.event {
            let i = e as usize;
            if i >= t.events.len()
                || t.event_file(i) != file
                || t.events.category[i] != Category::HostOp
            {
                continue;
            }
            has_shapes = true;
            let name = t.events.name[i];
            let known = &mut by_name[name.0 as usize];
            if *known == 0 {
                *known = 1 + aten_ops::is_modelled(t.str(name)) as u8;
            }
            if *known == 2 {
                modelled.push(i);
            }
        }
        let span = |i: usize| {
            let s = t.events.ts_ns[i];
            (t.events.thread[i], (s, s + t.events.dur_ns.at(i), i as u32))
        };
        let top = match t.strings.lookup("cpu_op") {
            Some(cpu_op) => outermost_by_thread(
                (0..t.events.len())
                    .filter(|&i| {
                        t.events.cat.at(i) == cpu_op
                            && t.events.category[i] == Category::HostOp
                            && t.event_file(i) == file
                    })
                    .map(span),
            ),
            None => FxHashMap::default(),
        };
        AtenIndex {
            modelled: outermost_by_thread(modelled.iter().map(|&i| span(i))),
            top,
            has_shapes,
        }
    }

    /// True when the file has recorded op inputs at all.
    pub fn has_shapes(&self) -> bool {
        self.has_shapes
    }

    /// The outermost modelled op around launch call `call` (an event index), with its op_args
    /// row.
    pub fn modelled_op(&self, t: &Tables, call: u32) -> Option<(u32, usize)> {
        let (s, e) = crate::analysis::devices::iv(t, call);
        let op = containing(self.modelled.get(&t.events.thread[call as usize])?, s, e)?;
        Some((op, args_row(t, op)?))
    }

    /// The outermost `cpu_op` around launch call `call`.
    pub fn top_op(&self, t: &Tables, call: u32) -> Option<u32> {
        let (s, e) = crate::analysis::devices::iv(t, call);
        containing(self.top.get(&t.events.thread[call as usize])?, s, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generated spans on five threads: nested, touching, partly overlapping and equal ones, in
    /// sorted order (the online path) and shuffled (the second pass), against every thread's
    /// spans gathered and passed to `outermost`.
    #[test]
    fn outermost_by_thread_equals_gathering_every_span() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n) as i64
        };
        for round in 0..40 {
            let mut v: Vec<(ThreadId, (i64, i64, u32))> = Vec::new();
            for k in 0..300u32 {
                let s = rnd(2_000);
                let e = s + [0, 1, rnd(50), rnd(400)][rnd(4) as usize];
                v.push((ThreadId(rnd(5) as u32), (s, e, k)));
            }
            if round % 2 == 0 {
                // Sorted as `outermost` sorts, ids following that order.
                v.sort_by_key(|&(_, (s, e, _))| (s, std::cmp::Reverse(e)));
                for (k, x) in v.iter_mut().enumerate() {
                    x.1.2 = k as u32;
                }
                if round % 4 == 2 {
                    // Thread 0 alone out of order: it takes the second pass, the others not.
                    let zero: Vec<usize> =
                        (0..v.len()).filter(|&k| v[k].0 == ThreadId(0)).collect();
                    if let (Some(&a), Some(&b)) = (zero.first(), zero.last()) {
                        v.swap(a, b);
                    }
                }
            }
            let got = outermost_by_thread(v.iter().copied());
            let mut want: FxHashMap<ThreadId, Spans> = FxHashMap::default();
            for &(th, x) in &v {
                want.entry(th).or_default().push(x);
            }
            assert_eq!(want.len(), got.len());
            for (th, all) in want {
                assert_eq!(got[&th], outermost(all), "round {round} thread {th:?}");
            }
        }
    }

    #[test]
    fn outermost_keeps_parents_and_drops_nested_ops() {
        // linear [0, 100] ⊃ addmm [10, 90]; a later mm [120, 130].
        let v = outermost(vec![(10, 90, 2), (0, 100, 1), (120, 130, 3)]);
        assert_eq!(v, vec![(0, 100, 1), (120, 130, 3)]);
        assert_eq!(containing(&v, 50, 60), Some(1));
        assert_eq!(containing(&v, 105, 106), None);
        assert_eq!(containing(&v, 125, 140), None);
    }
}
