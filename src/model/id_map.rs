//! Integer id → value lookups for ids that profilers hand out counting up from some base
//! (globalTaskId, connection and correlation ids): a vector indexed by `id - min` when the ids
//! are compact, else the ids sorted beside their values. Built once, read per event.
//!
//! Readers mostly ask in id order (a TASK scan asks for its globalTaskIds as they rise), so
//! [`IdMap::get_from`] keeps a position between calls and looks a few slots ahead of it before it
//! searches: a sequential walk of the sorted ids instead of a cache miss per lookup (a hash map
//! of 3 M ids cost 0.9 s of a 20 M-row TASK scan).

#[derive(Debug, Clone, Default)]
pub struct IdMap<V> {
    base: i64,
    /// `none` marks the ids without a value.
    dense: Vec<V>,
    /// Ascending, unique; `sparse_values[k]` belongs to `sparse_ids[k]`.
    sparse_ids: Vec<i64>,
    sparse_values: Vec<V>,
    none: V,
}

/// Slots after the last hit tried before a binary search.
const LOOK_AHEAD: usize = 4;

impl<V: Copy + PartialEq + Default> IdMap<V> {
    /// The value of each id `ids[k]` is `value(k)`; an id given twice keeps
    /// `combine(earlier, later)`. `none` must be a value `value` never returns.
    pub fn build(
        ids: &[i64],
        value: impl Fn(usize) -> V,
        combine: impl Fn(V, V) -> V,
        none: V,
    ) -> IdMap<V> {
        let mut m = IdMap {
            base: 0,
            dense: Vec::new(),
            sparse_ids: Vec::new(),
            sparse_values: Vec::new(),
            none,
        };
        let (Some(&lo), Some(&hi)) = (ids.iter().min(), ids.iter().max()) else {
            return m;
        };
        m.base = lo;
        if ((hi as i128 - lo as i128) as u128) < 4 * ids.len() as u128 + 4096 {
            m.dense = vec![none; (hi - lo + 1) as usize];
            for (k, &id) in ids.iter().enumerate() {
                let x = &mut m.dense[(id - lo) as usize];
                *x = if *x == none {
                    value(k)
                } else {
                    combine(*x, value(k))
                };
            }
            return m;
        }
        let mut order: Vec<u32> = (0..ids.len() as u32).collect();
        if !ids.is_sorted() {
            // Stable: an id's occurrences stay in input order for `combine`.
            order.sort_by_key(|&k| ids[k as usize]);
        }
        m.sparse_ids.reserve_exact(ids.len());
        m.sparse_values.reserve_exact(ids.len());
        for k in order {
            let (id, v) = (ids[k as usize], value(k as usize));
            if m.sparse_ids.last() == Some(&id) {
                let last = m.sparse_values.last_mut().expect("beside its id");
                *last = combine(*last, v);
            } else {
                m.sparse_ids.push(id);
                m.sparse_values.push(v);
            }
        }
        m.sparse_ids.shrink_to_fit();
        m.sparse_values.shrink_to_fit();
        m
    }

    pub fn get(&self, id: i64) -> Option<V> {
        self.get_from(id, &mut 0)
    }

    /// [`Self::get`] starting from `hint`, a position this map returned through it before (0 at
    /// first): fast when ids are asked in ascending order, correct in any order.
    pub fn get_from(&self, id: i64, hint: &mut usize) -> Option<V> {
        if !self.dense.is_empty() {
            let k = usize::try_from(id.wrapping_sub(self.base)).ok()?;
            return self.dense.get(k).copied().filter(|&v| v != self.none);
        }
        let ids = &self.sparse_ids;
        let from = (*hint).min(ids.len());
        let ahead = &ids[from..(from + LOOK_AHEAD).min(ids.len())];
        let at = match ahead.iter().position(|&x| x >= id) {
            Some(p) if from == 0 || ids[from - 1] < id => {
                let k = from + p;
                if ids[k] == id { Ok(k) } else { Err(k) }
            }
            _ => ids.binary_search(&id),
        };
        match at {
            Ok(k) => {
                *hint = k + 1;
                Some(self.sparse_values[k])
            }
            Err(k) => {
                *hint = k;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sparse and dense maps answer as a linear search over the input does (last occurrence
    /// combined by max), for ids asked in ascending, descending and scattered order.
    #[test]
    fn lookups_match_a_linear_search_in_any_order() {
        let mut rnd = crate::analysis::intervals::test_rng(7);
        let mut sparse = 0;
        for case in 0..200 {
            let n = 1 + rnd(300);
            let spread = if case % 2 == 0 { 3 } else { 1_000_000 };
            let ids: Vec<i64> = (0..n).map(|_| rnd(spread) * n - 5).collect();
            let m = IdMap::build(&ids, |k| k as u32, u32::max, u32::MAX);
            sparse += m.dense.is_empty() as usize;
            let truth = |id: i64| ids.iter().rposition(|&x| x == id).map(|k| k as u32);
            let mut asks: Vec<i64> = ids.iter().flat_map(|&i| [i - 1, i, i + 1]).collect();
            asks.sort_unstable();
            let mut hint = 0;
            for &a in &asks {
                assert_eq!(m.get_from(a, &mut hint), truth(a), "case {case} asc {a}");
            }
            for &a in asks.iter().rev() {
                assert_eq!(m.get_from(a, &mut hint), truth(a), "case {case} desc {a}");
            }
            for k in 0..asks.len() {
                let a = asks[(k * 7919) % asks.len()];
                assert_eq!(
                    m.get_from(a, &mut hint),
                    truth(a),
                    "case {case} scattered {a}"
                );
                assert_eq!(m.get(a), truth(a));
            }
        }
        assert!(sparse > 90, "{sparse} of 200 maps sparse");
    }
}
