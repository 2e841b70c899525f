//! Interval algebra on half-open `[start, end)` nanosecond intervals, shared by every timeline
//! analysis: union, total length, intersection length, difference, gaps within a window.
//! A "union" here is always sorted, merged and non-empty-interval.

/// `[start, end)` in ns.
pub type Iv = (i64, i64);

/// Sorts and merges in place; drops empty intervals. Touching intervals merge. The result's
/// capacity is its length: unions of device kernels are kept for the whole run (one per device),
/// and a merged union is often a fraction of its input.
pub fn union(mut v: Vec<Iv>) -> Vec<Iv> {
    union_in_place(&mut v);
    v.shrink_to_fit();
    v
}

/// [`union`] in `v`'s own buffer, its capacity kept (a buffer reused group after group).
pub fn union_in_place(v: &mut Vec<Iv>) {
    v.retain(|&(a, b)| b > a);
    v.sort_unstable();
    let mut w = 0;
    for r in 0..v.len() {
        let (a, b) = v[r];
        if w > 0 && a <= v[w - 1].1 {
            v[w - 1].1 = v[w - 1].1.max(b);
        } else {
            v[w] = (a, b);
            w += 1;
        }
    }
    v.truncate(w);
}

/// The lengths of the gaps between consecutive intervals of the union `u`, in order: the
/// lengths of `gaps(u, (first start, last end))`, without storing them.
pub fn inner_gaps(u: &[Iv]) -> impl Iterator<Item = i64> + '_ {
    u.windows(2).map(|w| w[1].0 - w[0].1)
}

/// The union of two unions, by one merge pass (no sort); capacity fitted to the result.
pub fn union_of(a: &[Iv], b: &[Iv]) -> Vec<Iv> {
    let mut out: Vec<Iv> = Vec::with_capacity(a.len() + b.len());
    out.extend(merged(a, b));
    out.shrink_to_fit();
    out
}

/// The union of two unions as it is merged, without storing it.
pub fn merged<'a>(a: &'a [Iv], b: &'a [Iv]) -> impl Iterator<Item = Iv> + 'a {
    let (mut i, mut j) = (0, 0);
    let mut open: Option<Iv> = None;
    std::iter::from_fn(move || {
        loop {
            let next = if i < a.len() && (j == b.len() || a[i] <= b[j]) {
                i += 1;
                a[i - 1]
            } else if j < b.len() {
                j += 1;
                b[j - 1]
            } else {
                return open.take();
            };
            match &mut open {
                Some(cur) if next.0 <= cur.1 => cur.1 = cur.1.max(next.1),
                Some(cur) => return Some(std::mem::replace(cur, next)),
                None => open = Some(next),
            }
        }
    })
}

/// [`union`] of intervals that come by start, merged as they come (no copy of the input, no
/// sort); should one come before the one before it, the input is collected and sorted after all.
pub fn union_by_start<I: Iterator<Item = Iv> + Clone>(v: I) -> Vec<Iv> {
    let mut out: Vec<Iv> = Vec::new();
    let mut last_start = i64::MIN;
    for (a, b) in v.clone() {
        if a < last_start {
            return union(v.collect());
        }
        last_start = a;
        if b <= a {
            continue;
        }
        match out.last_mut() {
            Some(l) if a <= l.1 => l.1 = l.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out.shrink_to_fit();
    out
}

/// `total(&union(v))` for intervals that come by start, swept as they come ([`RunningUnion`]: no
/// copy, no allocation); should one come before the one before it, [`union`] after all.
pub fn union_total_by_start<I: Iterator<Item = Iv> + Clone>(v: I) -> i64 {
    let mut run = RunningUnion::new(0);
    let mut last_start = i64::MIN;
    for x in v.clone() {
        if x.0 < last_start {
            return total(&union(v.collect()));
        }
        last_start = x.0;
        run.add(x);
    }
    run.busy_ns()
}

/// A union built as intervals arrive in start order, without storing it: its total length and
/// the gaps of at least `min_gap` between its merged intervals (what `total(&union(v))` and
/// `gaps(&union(v), window)` filtered by length give, for `v` sorted by start).
#[derive(Debug, Clone, Default)]
pub struct RunningUnion {
    min_gap: i64,
    open: Option<Iv>,
    closed_ns: i64,
    pub idle_ns: i64,
    pub gaps: u64,
}

impl RunningUnion {
    pub fn new(min_gap: i64) -> RunningUnion {
        RunningUnion {
            min_gap,
            ..Default::default()
        }
    }

    /// Adds `[a, b)`; `a` must not be before the previous interval's start. Empty ones are
    /// ignored, touching ones merge.
    pub fn add(&mut self, (a, b): Iv) {
        if b <= a {
            return;
        }
        match &mut self.open {
            Some(cur) if a <= cur.1 => cur.1 = cur.1.max(b),
            Some(cur) => {
                self.closed_ns += cur.1 - cur.0;
                if a - cur.1 >= self.min_gap {
                    self.idle_ns += a - cur.1;
                    self.gaps += 1;
                }
                *cur = (a, b);
            }
            None => self.open = Some((a, b)),
        }
    }

    /// Total length of the union so far.
    pub fn busy_ns(&self) -> i64 {
        self.closed_ns + self.open.map_or(0, |(a, b)| b - a)
    }
}

pub fn total(u: &[Iv]) -> i64 {
    u.iter().map(|&(a, b)| b - a).sum()
}

/// Length of the intersection of two unions.
pub fn intersect_total(a: &[Iv], b: &[Iv]) -> i64 {
    let (mut i, mut j, mut sum) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            sum += hi - lo;
        }
        if a[i].1 < b[j].1 { i += 1 } else { j += 1 }
    }
    sum
}

/// Length of the intersection of the union `a` with a union given as a sorted iterator (read
/// to its end).
pub fn intersect_total_iter(a: &[Iv], b: impl IntoIterator<Item = Iv>) -> i64 {
    let (mut i, mut sum) = (0, 0);
    for (s, e) in b {
        while i < a.len() && a[i].1 <= s {
            i += 1;
        }
        let mut j = i;
        while j < a.len() && a[j].0 < e {
            sum += a[j].1.min(e) - a[j].0.max(s);
            j += 1;
        }
    }
    sum
}

/// `a` minus `b` (both unions); the result is a union.
pub fn subtract(a: &[Iv], b: &[Iv]) -> Vec<Iv> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(mut s, e) in a {
        while j < b.len() && b[j].1 <= s {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > s {
                out.push((s, b[k].0));
            }
            s = s.max(b[k].1);
            k += 1;
        }
        if s < e {
            out.push((s, e));
        }
    }
    out
}

/// Length of the union `u` outside the union `cover`.
pub fn uncovered_total(u: &[Iv], cover: &[Iv]) -> i64 {
    total(u) - intersect_total(u, cover)
}

/// The idle parts of `window` not covered by the union `u`.
pub fn gaps(u: &[Iv], window: Iv) -> Vec<Iv> {
    subtract(&[window], u)
}

/// Length of `u` inside `[lo, hi)`.
pub fn covered_within(u: &[Iv], lo: i64, hi: i64) -> i64 {
    let start = u.partition_point(|&(_, e)| e <= lo);
    u[start..]
        .iter()
        .take_while(|&&(s, _)| s < hi)
        .map(|&(s, e)| e.min(hi) - s.max(lo))
        .filter(|&d| d > 0)
        .sum()
}

/// A small deterministic generator for property tests: `rnd(n)` is in `0..n`.
#[cfg(test)]
pub(crate) fn test_rng(seed: u64) -> impl FnMut(i64) -> i64 {
    let mut x = seed;
    move |n: i64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 33) % n as u64) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trivially correct model: a bitmap over a small time range.
    fn bits(v: &[Iv]) -> Vec<bool> {
        let mut m = vec![false; 256];
        for &(a, b) in v {
            for t in a.max(0)..b.min(256) {
                m[t as usize] = true;
            }
        }
        m
    }

    #[test]
    fn prop_interval_algebra_matches_a_bitmap() {
        let mut rnd = test_rng(1);
        for _ in 0..500 {
            let mut mk = || {
                (0..rnd(12))
                    .map(|_| {
                        let a = rnd(190);
                        (a, a + rnd(30))
                    })
                    .collect::<Vec<_>>()
            };
            let (ra, rb) = (mk(), mk());
            let (a, b) = (union(ra.clone()), union(rb.clone()));
            let (ba, bb) = (bits(&ra), bits(&rb));
            assert_eq!(total(&a), ba.iter().filter(|&&v| v).count() as i64);
            assert_eq!(bits(&a), ba);
            assert!(a.windows(2).all(|w| w[0].1 < w[1].0), "merged and sorted");
            let both = ba.iter().zip(&bb).filter(|(x, y)| **x && **y).count() as i64;
            assert_eq!(intersect_total(&a, &b), both);
            assert_eq!(intersect_total_iter(&a, b.iter().copied()), both);
            let either: Vec<bool> = ba.iter().zip(&bb).map(|(x, y)| *x || *y).collect();
            let ab = union_of(&a, &b);
            assert_eq!(bits(&ab), either);
            assert_eq!(ab, union(ra.iter().chain(&rb).copied().collect()));
            let mut sorted = ra.clone();
            sorted.sort_by_key(|x| x.0);
            assert_eq!(
                union_by_start(sorted.iter().copied()),
                a,
                "merged as they come"
            );
            assert_eq!(
                union_by_start(ra.iter().copied()),
                a,
                "sorted when out of order"
            );
            assert_eq!(union_total_by_start(sorted.iter().copied()), total(&a));
            assert_eq!(union_total_by_start(ra.iter().copied()), total(&a));
            // A reused buffer (holding the last group's union) gives the same union.
            let mut reused = b.clone();
            reused.clear();
            reused.extend(&ra);
            union_in_place(&mut reused);
            assert_eq!(reused, a, "in place");
            if let (Some(f), Some(l)) = (ab.first(), ab.last()) {
                // The gaps between the union's intervals: the bitmap's idle runs inside its span.
                let idle: Vec<i64> = either[f.0 as usize..l.1 as usize]
                    .split(|&busy| busy)
                    .filter(|run| !run.is_empty())
                    .map(|run| run.len() as i64)
                    .collect();
                assert_eq!(inner_gaps(&ab).collect::<Vec<_>>(), idle);
                let g: Vec<i64> = gaps(&ab, (f.0, l.1)).iter().map(|g| g.1 - g.0).collect();
                assert_eq!(inner_gaps(&ab).collect::<Vec<_>>(), g);
            }
            let min_gap = rnd(6);
            let mut run = RunningUnion::new(min_gap);
            sorted.iter().for_each(|&x| run.add(x));
            let w = (a.first().map_or(0, |x| x.0), a.last().map_or(0, |x| x.1));
            let g: Vec<Iv> = gaps(&a, w)
                .into_iter()
                .filter(|&(s, e)| e - s >= min_gap)
                .collect();
            assert_eq!(run.busy_ns(), total(&a));
            assert_eq!((run.idle_ns, run.gaps), (total(&g), g.len() as u64));
            let diff: Vec<bool> = ba.iter().zip(&bb).map(|(x, y)| *x && !*y).collect();
            assert_eq!(bits(&subtract(&a, &b)), diff);
            let w = (rnd(50), 150 + rnd(50));
            let idle = total(&gaps(&a, w));
            assert_eq!(idle, (w.1 - w.0) - covered_within(&a, w.0, w.1));
        }
    }
}
