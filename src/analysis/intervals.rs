//! Interval algebra on half-open `[start, end)` nanosecond intervals, shared by every timeline
//! analysis: union, total length, intersection length, difference, gaps within a window.
//! A "union" here is always sorted, merged and non-empty-interval.

/// `[start, end)` in ns.
pub type Iv = (i64, i64);

/// Sorts and merges; drops empty intervals. Touching intervals merge.
pub fn union(mut v: Vec<Iv>) -> Vec<Iv> {
    v.retain(|&(a, b)| b > a);
    v.sort_unstable();
    let mut out: Vec<Iv> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The union of two unions, by one merge pass (no sort).
pub fn union_of(a: &[Iv], b: &[Iv]) -> Vec<Iv> {
    let mut out: Vec<Iv> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = if j == b.len() || (i < a.len() && a[i] <= b[j]) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        match out.last_mut() {
            Some(last) if next.0 <= last.1 => last.1 = last.1.max(next.1),
            _ => out.push(next),
        }
    }
    out
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
        let mut x: u64 = 1;
        let mut rnd = |n: i64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % n as u64) as i64
        };
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
            let either: Vec<bool> = ba.iter().zip(&bb).map(|(x, y)| *x || *y).collect();
            let ab = union_of(&a, &b);
            assert_eq!(bits(&ab), either);
            assert_eq!(ab, union(ra.iter().chain(&rb).copied().collect()));
            let diff: Vec<bool> = ba.iter().zip(&bb).map(|(x, y)| *x && !*y).collect();
            assert_eq!(bits(&subtract(&a, &b)), diff);
            let w = (rnd(50), 150 + rnd(50));
            let idle = total(&gaps(&a, w));
            assert_eq!(idle, (w.1 - w.0) - covered_within(&a, w.0, w.1));
        }
    }
}
