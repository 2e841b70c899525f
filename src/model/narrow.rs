//! An `i64` column stored in 4 bytes per row: the values of event durations and link ids
//! nearly always fit in an `i32`, and the events table is most of a run's memory (a 20 M-row db
//! holds 25 M events). Rows whose value does not fit keep it in a side list, so any value
//! round-trips; reading such a row costs a binary search, every other row a compare.

/// Marks a row whose value is in [`NarrowI64::wide`].
const WIDE: i32 = i32::MIN;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NarrowI64 {
    small: Vec<i32>,
    /// (row, value) of the rows marked [`WIDE`], by row (rows are only appended).
    wide: Vec<(u64, i64)>,
}

impl NarrowI64 {
    pub fn len(&self) -> usize {
        self.small.len()
    }

    pub fn is_empty(&self) -> bool {
        self.small.is_empty()
    }

    pub fn reserve(&mut self, n: usize) {
        self.small.reserve(n);
    }

    /// The value of row `i` (panics when out of range, as indexing a `Vec` does).
    #[inline]
    pub fn at(&self, i: usize) -> i64 {
        let v = self.small[i];
        if v != WIDE { v as i64 } else { self.wide_at(i) }
    }

    #[cold]
    fn wide_at(&self, i: usize) -> i64 {
        let k = self.wide.partition_point(|w| w.0 < i as u64);
        self.wide[k].1
    }

    #[inline]
    pub fn push(&mut self, v: i64) {
        match i32::try_from(v) {
            Ok(s) if s != WIDE => self.small.push(s),
            _ => {
                self.wide.push((self.small.len() as u64, v));
                self.small.push(WIDE);
            }
        }
    }

    pub fn extend_from_slice(&mut self, v: &[i64]) {
        // Blocks whose values all fit are copied narrowed in one pass (no branch per row).
        const BLOCK: usize = 256;
        let fits = |x: i64| x > WIDE as i64 && x <= i32::MAX as i64;
        self.small.reserve(v.len());
        for block in v.chunks(BLOCK) {
            if block.iter().fold(true, |ok, &x| ok & fits(x)) {
                self.small.extend(block.iter().map(|&x| x as i32));
            } else {
                for &x in block {
                    self.push(x);
                }
            }
        }
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = i64> + '_ {
        (0..self.len()).map(|i| self.at(i))
    }

    /// The rows where `keep` is true.
    pub fn pick(&self, keep: &[bool]) -> NarrowI64 {
        let mut out = NarrowI64::default();
        for (i, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
            out.push(self.at(i));
        }
        out
    }

    /// Bytes held (both parts, by length).
    pub fn heap_bytes(&self) -> usize {
        self.small.len() * 4 + self.wide.len() * 16
    }
}

impl FromIterator<i64> for NarrowI64 {
    fn from_iter<I: IntoIterator<Item = i64>>(it: I) -> Self {
        let mut out = NarrowI64::default();
        for v in it {
            out.push(v);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_round_trips_and_narrow_rows_take_four_bytes() {
        let vals = [
            0,
            -1,
            1,
            i32::MAX as i64,
            i32::MIN as i64,
            i32::MIN as i64 + 1,
            i32::MAX as i64 + 1,
            i64::MIN,
            i64::MAX,
            -5 << 28,
            1_700_000_000_000_000_000,
        ];
        let mut c = NarrowI64::default();
        c.extend_from_slice(&vals);
        c.push(7);
        let got: Vec<i64> = c.iter().collect();
        assert_eq!(&got[..vals.len()], &vals);
        assert_eq!(got[vals.len()], 7);
        // Wide: i32::MIN itself (the marker), MAX + 1, i64::MIN, i64::MAX, 1.7e18.
        assert_eq!(c.wide.len(), 5);
        assert_eq!(c.heap_bytes(), 12 * 4 + 5 * 16);
        let keep: Vec<bool> = (0..c.len()).map(|i| i % 2 == 0).collect();
        let picked = c.pick(&keep);
        let want: Vec<i64> = got.iter().step_by(2).copied().collect();
        assert_eq!(picked.iter().collect::<Vec<_>>(), want);
        assert_eq!(picked, want.into_iter().collect());
    }

    #[test]
    fn bulk_extend_equals_pushing_row_by_row() {
        // 1,000 rows in blocks of 256 from row 10: narrow blocks, and wide values (i64::MAX,
        // the marker i32::MIN itself, i32::MAX + 1) in the third and fourth blocks.
        let mut vals: Vec<i64> = (0..1000).map(|i| i * 1_000_003 - 500_000_000).collect();
        vals[600] = i64::MAX;
        vals[700] = i32::MIN as i64;
        vals[999] = i32::MAX as i64 + 1;
        let mut bulk = NarrowI64::default();
        bulk.extend_from_slice(&vals[..10]);
        bulk.extend_from_slice(&vals[10..]);
        let mut one = NarrowI64::default();
        vals.iter().for_each(|&v| one.push(v));
        assert_eq!(bulk, one);
        assert_eq!(bulk.iter().collect::<Vec<_>>(), vals);
        assert_eq!(bulk.wide.len(), 3);
    }
}
