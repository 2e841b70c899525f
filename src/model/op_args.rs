//! The recorded inputs of host operator events (PyTorch profiler `record_shapes`): Kineto's and
//! torch_npu's `Input Dims`, `Input type` and `Concrete Inputs` args, one row per event that has
//! them, sorted by event row. A side table, not an events column: most events have none, and
//! an events column would cost 4 bytes on every row. Values are kept as written (Kineto: the
//! JSON array text, `[[1024, 1705], [512, 1705], [512]]`; torch_npu trace_view.json: its
//! `;\r\n`-separated string), parsed by the analyses that read them (`efficiency`).

use super::strings::StrId;

#[derive(Debug, Clone, Default)]
pub struct OpArgsTable {
    /// Row of the events table, rising.
    pub event: Vec<u32>,
    /// `Input Dims` as written.
    pub dims: Vec<StrId>,
    /// `Input type` as written.
    pub types: Vec<StrId>,
    /// `Concrete Inputs` as written (scalar arguments: strides, `is_causal`); empty when absent.
    pub concrete: Vec<StrId>,
}

impl OpArgsTable {
    pub fn push(&mut self, event: u32, dims: StrId, types: StrId, concrete: StrId) {
        self.event.push(event);
        self.dims.push(dims);
        self.types.push(types);
        self.concrete.push(concrete);
    }
    pub fn len(&self) -> usize {
        self.event.len()
    }
    pub fn is_empty(&self) -> bool {
        self.event.is_empty()
    }

    /// The rows whose events `keep` keeps, their event rows renumbered to the kept events'
    /// (what `EventTable::retain` does to the events).
    pub fn retain(&self, keep: &[bool]) -> OpArgsTable {
        let mut row = Vec::with_capacity(keep.len());
        let mut n = 0u32;
        for &k in keep {
            row.push(n);
            n += k as u32;
        }
        let mut out = OpArgsTable::default();
        for i in 0..self.len() {
            let e = self.event[i] as usize;
            if keep.get(e) == Some(&true) {
                out.push(row[e], self.dims[i], self.types[i], self.concrete[i]);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retain_renumbers_kept_events_and_drops_the_others() {
        let mut t = OpArgsTable::default();
        t.push(1, StrId(5), StrId(6), StrId::EMPTY);
        t.push(3, StrId(7), StrId(8), StrId(9));
        let kept = t.retain(&[false, false, true, true]);
        assert_eq!(kept.event, vec![1]);
        assert_eq!(kept.dims, vec![StrId(7)]);
        assert_eq!(kept.concrete, vec![StrId(9)]);
    }
}
