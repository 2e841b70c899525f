//! A column of few distinct values (an event's cat, task type and stream): one byte per row,
//! an index into a dictionary of at most 256 values in first-seen order. A column that meets a
//! 257th distinct value switches to plain storage, so any sequence of values is kept.

use super::hash::FxHashMap;
use std::hash::Hash;

#[derive(Clone)]
enum Repr<T> {
    Coded { codes: Vec<u8>, dict: Vec<T> },
    Plain(Vec<T>),
}

#[derive(Clone)]
pub struct Coded<T> {
    repr: Repr<T>,
    /// Code of each dictionary value (while coded).
    index: FxHashMap<T, u8>,
    /// The last value pushed and its code: runs of one value skip the hash.
    last: Option<(T, u8)>,
}

impl<T> Default for Coded<T> {
    fn default() -> Self {
        Coded {
            repr: Repr::Coded {
                codes: Vec::new(),
                dict: Vec::new(),
            },
            index: FxHashMap::default(),
            last: None,
        }
    }
}

impl<T: Copy + Eq + Hash> Coded<T> {
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Coded { codes, .. } => codes.len(),
            Repr::Plain(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn reserve(&mut self, n: usize) {
        match &mut self.repr {
            Repr::Coded { codes, .. } => codes.reserve(n),
            Repr::Plain(v) => v.reserve(n),
        }
    }

    /// The value of row `i` (panics when out of range, as indexing a `Vec` does).
    #[inline]
    pub fn at(&self, i: usize) -> T {
        match &self.repr {
            Repr::Coded { codes, dict } => dict[codes[i] as usize],
            Repr::Plain(v) => v[i],
        }
    }

    #[inline]
    pub fn push(&mut self, x: T) {
        let Repr::Coded { codes, dict } = &mut self.repr else {
            let Repr::Plain(v) = &mut self.repr else {
                unreachable!()
            };
            v.push(x);
            return;
        };
        let code = match self.last {
            Some((v, c)) if v == x => c,
            // Small dictionaries (the usual case) are scanned; larger ones hashed.
            _ => {
                let found = if dict.len() <= 16 {
                    dict.iter().position(|&v| v == x).map(|c| c as u8)
                } else {
                    self.index.get(&x).copied()
                };
                match code_or_new(&mut self.index, dict, x, found) {
                    Some(c) => c,
                    None => {
                        self.widen();
                        self.push(x);
                        return;
                    }
                }
            }
        };
        self.last = Some((x, code));
        codes.push(code);
    }

    /// Sets row `i` to `x` (panics when out of range, as indexing a `Vec` does). A value new to
    /// the dictionary joins it; the 257th switches the column to plain storage.
    pub fn set(&mut self, i: usize, x: T) {
        let Repr::Coded { codes, dict } = &mut self.repr else {
            let Repr::Plain(v) = &mut self.repr else {
                unreachable!()
            };
            v[i] = x;
            return;
        };
        assert!(i < codes.len(), "row {i} of {}", codes.len());
        let found = self.index.get(&x).copied();
        let Some(code) = code_or_new(&mut self.index, dict, x, found) else {
            self.widen();
            self.set(i, x);
            return;
        };
        codes[i] = code;
    }

    /// Pushes `x` `n` times (one dictionary lookup for the run).
    pub fn push_n(&mut self, x: T, n: usize) {
        if n == 0 {
            return;
        }
        self.push(x);
        match &mut self.repr {
            Repr::Coded { codes, .. } => {
                let c = codes[codes.len() - 1];
                codes.resize(codes.len() + n - 1, c);
            }
            Repr::Plain(v) => v.resize(v.len() + n - 1, x),
        }
    }

    /// Plain storage from here on.
    #[cold]
    fn widen(&mut self) {
        let plain: Vec<T> = self.iter().collect();
        self.repr = Repr::Plain(plain);
        self.index = FxHashMap::default();
        self.last = None;
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = T> + '_ {
        (0..self.len()).map(|i| self.at(i))
    }

    /// The rows where `keep` is true.
    pub fn pick(&self, keep: &[bool]) -> Coded<T> {
        let mut out = Coded::default();
        for (i, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
            out.push(self.at(i));
        }
        out
    }

    /// Bytes per row of the storage in use: 1 coded, `size_of::<T>()` plain.
    pub fn row_bytes(&self) -> usize {
        match &self.repr {
            Repr::Coded { .. } => 1,
            Repr::Plain(_) => std::mem::size_of::<T>(),
        }
    }
}

/// The code of `x` from its lookup (`found`), or a new one while the dictionary has room; None
/// when it is full (the column turns plain).
#[inline]
fn code_or_new<T: Copy + Eq + Hash>(
    index: &mut FxHashMap<T, u8>,
    dict: &mut Vec<T>,
    x: T,
    found: Option<u8>,
) -> Option<u8> {
    match found {
        Some(c) => Some(c),
        None if dict.len() < 256 => {
            let c = dict.len() as u8;
            dict.push(x);
            index.insert(x, c);
            Some(c)
        }
        None => None,
    }
}

impl<T: Copy + Eq + Hash> Extend<T> for Coded<T> {
    /// Pushes the values a run of equal ones at a time (a chunk's cat, task types and streams
    /// come in runs): one lookup per run.
    fn extend<I: IntoIterator<Item = T>>(&mut self, it: I) {
        let mut it = it.into_iter();
        self.reserve(it.size_hint().0);
        let Some(mut run) = it.next() else {
            return;
        };
        let mut n = 1;
        for x in it {
            if x == run {
                n += 1;
            } else {
                self.push_n(run, n);
                (run, n) = (x, 1);
            }
        }
        self.push_n(run, n);
    }
}

impl<T: Copy + Eq + Hash> FromIterator<T> for Coded<T> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Self {
        let mut out = Coded::default();
        out.extend(it);
        out
    }
}

/// Equal when the values are, whatever the storage.
impl<T: Copy + Eq + Hash> PartialEq for Coded<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Copy + Eq + Hash> Eq for Coded<T> {}

/// The values, as a list (the storage is not part of the value).
impl<T: Copy + Eq + Hash + std::fmt::Debug> std::fmt::Debug for Coded<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_values_take_one_byte_and_many_switch_to_plain_without_loss() {
        let few: Vec<i32> = (0..10_000i32).map(|i| i * 7919 % 13 - 1).collect();
        let c: Coded<i32> = few.iter().copied().collect();
        assert_eq!(c.row_bytes(), 1);
        assert_eq!(c.iter().collect::<Vec<_>>(), few);
        // 300 distinct values: the 257th switches the column to plain storage.
        let many: Vec<i32> = (0..600).map(|i| (i % 300) * 3).collect();
        let mut m = Coded::default();
        for (k, &x) in many.iter().enumerate() {
            m.push(x);
            assert_eq!(m.row_bytes(), if k < 256 { 1 } else { 4 }, "row {k}");
        }
        assert_eq!(m.iter().collect::<Vec<_>>(), many);
        assert_eq!(m, many.iter().copied().collect::<Coded<i32>>());
        let keep: Vec<bool> = (0..many.len()).map(|i| i % 3 == 0).collect();
        let want: Vec<i32> = many.iter().step_by(3).copied().collect();
        assert_eq!(m.pick(&keep).iter().collect::<Vec<_>>(), want);
        assert_eq!(format!("{:?}", m.pick(&keep)), format!("{want:?}"));
    }

    /// Rows set in place equal the column pushed with the new values, coded and plain (the
    /// 257th distinct value arrives through `set`).
    #[test]
    fn set_rows_equal_the_column_pushed_with_them() {
        let mut want: Vec<i32> = (0..1000).map(|i| i % 5 - 1).collect();
        let mut c: Coded<i32> = want.iter().copied().collect();
        // 334 new values beside the 5 pushed: the column turns plain on the way.
        for i in (0..1000).step_by(3) {
            c.set(i, 1000 + i as i32);
            want[i] = 1000 + i as i32;
        }
        assert_eq!(c.iter().collect::<Vec<_>>(), want);
        assert_eq!(c.row_bytes(), 4);
        let mut small: Coded<i32> = [-1, -1, 3].into_iter().collect();
        small.set(0, 9);
        small.set(1, 3);
        assert_eq!(small.iter().collect::<Vec<_>>(), vec![9, 3, 3]);
        assert_eq!(small.row_bytes(), 1);
        small.push(9);
        assert_eq!(small.iter().collect::<Vec<_>>(), vec![9, 3, 3, 9]);
    }

    /// Runs pushed with `push_n` equal the same values pushed one by one, coded and plain
    /// (the 257th distinct value arrives inside a run).
    #[test]
    fn runs_equal_single_pushes() {
        let runs: Vec<(i32, usize)> = (0..300).map(|i| (i * 3, (i as usize * 7) % 5)).collect();
        // 300 values, 240 of them pushed (runs of 0 push nothing): 257 distinct only with the
        // second pass below.
        let (mut by_run, mut by_one) = (Coded::default(), Coded::default());
        for pass in 0..2 {
            for &(x, n) in &runs {
                by_run.push_n(x + pass, n);
                for _ in 0..n {
                    by_one.push(x + pass);
                }
            }
        }
        assert_eq!(by_run.len(), 2 * runs.iter().map(|r| r.1).sum::<usize>());
        assert_eq!(
            by_run.iter().collect::<Vec<_>>(),
            by_one.iter().collect::<Vec<_>>()
        );
        assert_eq!(by_run.row_bytes(), 4);
        // `extend` (runs found in the input) keeps the same rows, across the switch to plain
        // storage and onto a column that already holds rows.
        let flat: Vec<i32> = (0..2)
            .flat_map(|pass| {
                runs.iter()
                    .flat_map(move |&(x, n)| std::iter::repeat_n(x + pass, n))
            })
            .collect();
        let mut extended: Coded<i32> = Coded::default();
        extended.extend(flat[..100].iter().copied());
        extended.extend(flat[100..].iter().copied());
        extended.extend(std::iter::empty());
        assert_eq!(extended.iter().collect::<Vec<_>>(), flat);
        assert_eq!(extended.row_bytes(), 4);
    }
}
