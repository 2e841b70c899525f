//! Integer id → value lookups for ids that profilers hand out counting up from some base
//! (globalTaskId, connection and correlation ids): a vector indexed by `id - min` when the ids
//! are compact, else a hash map. Built once, read per event.

use super::hash::FxHashMap;

#[derive(Debug, Clone, Default)]
pub struct IdMap<V> {
    base: i64,
    /// `none` marks the ids without a value.
    dense: Vec<V>,
    sparse: FxHashMap<i64, V>,
    none: V,
}

impl<V: Copy + PartialEq + Default> IdMap<V> {
    /// The value of each id `ids[k]` is `value(k)`; an id given twice keeps
    /// `combine(earlier, later)`. `none` must be a value `value` never returns.
    pub fn build(
        ids: &[i64],
        value: impl Fn(usize) -> V,
        combine: impl Fn(V, V) -> V,
        none: V,
    ) -> IdMap<V> {
        let (Some(&lo), Some(&hi)) = (ids.iter().min(), ids.iter().max()) else {
            return IdMap {
                base: 0,
                dense: Vec::new(),
                sparse: FxHashMap::default(),
                none,
            };
        };
        let mut m = IdMap {
            base: lo,
            dense: Vec::new(),
            sparse: FxHashMap::default(),
            none,
        };
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
        } else {
            for (k, &id) in ids.iter().enumerate() {
                let v = value(k);
                m.sparse
                    .entry(id)
                    .and_modify(|x| *x = combine(*x, v))
                    .or_insert(v);
            }
        }
        m
    }

    pub fn get(&self, id: i64) -> Option<V> {
        if self.dense.is_empty() {
            return self.sparse.get(&id).copied();
        }
        let k = usize::try_from(id.wrapping_sub(self.base)).ok()?;
        self.dense.get(k).copied().filter(|&v| v != self.none)
    }
}
