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
        let span = |i: usize| {
            let s = t.events.ts_ns[i];
            (s, s + t.events.dur_ns.at(i), i as u32)
        };
        let mut has_shapes = false;
        let mut modelled: FxHashMap<ThreadId, Spans> = FxHashMap::default();
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
                modelled
                    .entry(t.events.thread[i])
                    .or_default()
                    .push(span(i));
            }
        }
        let mut top: FxHashMap<ThreadId, Spans> = FxHashMap::default();
        if let Some(cpu_op) = t.strings.lookup("cpu_op") {
            for i in 0..t.events.len() {
                if t.events.cat.at(i) == cpu_op
                    && t.events.category[i] == Category::HostOp
                    && t.event_file(i) == file
                {
                    top.entry(t.events.thread[i]).or_default().push(span(i));
                }
            }
        }
        AtenIndex {
            modelled: modelled
                .into_iter()
                .map(|(k, v)| (k, outermost(v)))
                .collect(),
            top: top.into_iter().map(|(k, v)| (k, outermost(v))).collect(),
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
