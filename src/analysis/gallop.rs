//! A partition point searched outward from the previous answer: a device's events ask for their
//! step (or phase) nearly in time order, so each answer sits at or next to the last one, and a
//! binary search over every window for each of millions of events costs more than the rest of
//! the pass (json1g: 2 M device events against 49,700 steps). The answer is exactly
//! `slice::partition_point`'s for any order of queries; only the cost depends on the order.

/// Where the last search ended, for the next one to start from.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gallop {
    at: usize,
}

impl Gallop {
    /// The number of leading items of `s` whose key is at or before `ts`, as
    /// `s.partition_point(|x| key(x) <= ts)`: `s` must be sorted by `key` (ties allowed).
    #[inline]
    pub fn count_at_or_before<T>(&mut self, s: &[T], key: impl Fn(&T) -> i64, ts: i64) -> usize {
        self.partition_point(s, |x| key(x) <= ts)
    }

    /// `s.partition_point(below)`: `below` must hold for a leading run of `s` and for nothing
    /// after it.
    #[inline]
    pub fn partition_point<T>(&mut self, s: &[T], below: impl Fn(&T) -> bool) -> usize {
        let at = |k: usize| below(&s[k]);
        let mut p = self.at.min(s.len());
        if p < s.len() && at(p) {
            // The answer lies after `p`: widen the step until an item past the run bounds it.
            let (mut lo, mut step) = (p + 1, 1usize);
            let hi = loop {
                let probe = p.saturating_add(step);
                if probe >= s.len() {
                    break s.len();
                }
                if !at(probe) {
                    break probe;
                }
                lo = probe + 1;
                step = step.saturating_mul(2);
            };
            p = lo + s[lo..hi].partition_point(&below);
        } else if p > 0 && !at(p - 1) {
            // The answer lies before `p`: widen the step until an item inside the run.
            let (mut hi, mut step) = (p - 1, 1usize);
            let lo = loop {
                if step > hi {
                    break 0;
                }
                let probe = hi - step;
                if at(probe) {
                    break probe + 1;
                }
                hi = probe;
                step = step.saturating_mul(2);
            };
            p = lo + s[lo..hi].partition_point(&below);
        }
        self.at = p;
        p
    }

    /// The position of the last item whose key is at or before `ts` (None before the first).
    #[inline]
    pub fn last_at_or_before<T>(
        &mut self,
        s: &[T],
        key: impl Fn(&T) -> i64,
        ts: i64,
    ) -> Option<usize> {
        self.count_at_or_before(s, key, ts).checked_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (no dependency): xorshift64*.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> i64 {
            (self.next() % n) as i64
        }
    }

    /// Every answer equals `partition_point`'s (with `<=` and with `<`), for sorted starts with
    /// runs of ties, over
    /// queries in order, nearly in order, reversed and at random, including before the first
    /// start, after the last and exactly on starts; and for empty and one-item slices.
    #[test]
    fn answers_equal_partition_point_for_any_query_order() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for n in [0usize, 1, 2, 3, 7, 64, 1000] {
            let mut starts: Vec<(i64, u8)> = Vec::new();
            let mut at = -50;
            for _ in 0..n {
                // Ties in about one case of four.
                at += if r.below(4) == 0 { 0 } else { 1 + r.below(20) };
                starts.push((at, 0));
            }
            let top = at + 60;
            let mut in_order: Vec<i64> = (-80..top).collect();
            let mut nearly = in_order.clone();
            for k in (1..nearly.len()).step_by(3) {
                nearly.swap(k - 1, k);
            }
            let reversed: Vec<i64> = in_order.iter().rev().copied().collect();
            let random: Vec<i64> = (0..500).map(|_| r.below((top + 90) as u64) - 85).collect();
            in_order.extend(starts.iter().map(|s| s.0));
            for queries in [&in_order, &nearly, &reversed, &random] {
                let (mut g, mut strict) = (Gallop::default(), Gallop::default());
                for &q in queries {
                    assert_eq!(
                        strict.partition_point(&starts, |s| s.0 < q),
                        starts.partition_point(|s| s.0 < q)
                    );
                    let want = starts.partition_point(|s| s.0 <= q);
                    assert_eq!(
                        g.count_at_or_before(&starts, |s| s.0, q),
                        want,
                        "n {n} q {q}"
                    );
                    assert_eq!(
                        g.last_at_or_before(&starts, |s| s.0, q),
                        want.checked_sub(1)
                    );
                }
            }
        }
    }

    /// A cursor reused on a shorter slice than it last searched starts within it.
    #[test]
    fn a_cursor_moved_to_a_shorter_slice_stays_exact() {
        let long: Vec<i64> = (0..100).map(|k| k * 10).collect();
        let short: Vec<i64> = (0..5).map(|k| k * 10).collect();
        let mut g = Gallop::default();
        assert_eq!(g.count_at_or_before(&long, |&x| x, 995), 100);
        assert_eq!(g.count_at_or_before(&short, |&x| x, 995), 5);
        assert_eq!(g.count_at_or_before(&short, |&x| x, 15), 2);
        assert_eq!(g.count_at_or_before(&short, |&x| x, -1), 0);
    }
}
