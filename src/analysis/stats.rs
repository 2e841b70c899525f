//! Duration statistics of a group of events (count, sum, mean, population std, min, quartiles by
//! linear interpolation as numpy's default, max), in integer ns where exact.

pub use crate::contract::stats::*;

pub use crate::units::percent as pct;

/// The `q` quantile of sorted values by linear interpolation between closest ranks (numpy's
/// default, "type 7"): the one quantile rule of every analysis. The median of 8 values is the mean
/// of the 4th and 5th.
pub fn quantile(sorted: &[i64], q: f64) -> f64 {
    let (lo, hi, pos) = ranks_of(sorted.len(), q);
    interpolate(sorted[lo], sorted[hi], lo, pos)
}

/// The closest ranks of the `q` quantile among `n` values and its position between them.
fn ranks_of(n: usize, q: f64) -> (usize, usize, f64) {
    let pos = q * (n - 1) as f64;
    (pos.floor() as usize, pos.ceil() as usize, pos)
}

fn interpolate(at_lo: i64, at_hi: i64, lo: usize, pos: f64) -> f64 {
    at_lo as f64 + (at_hi - at_lo) as f64 * (pos - lo as f64)
}

/// Below this many values the quantiles sort; above it they select (linear time).
const SORT_BELOW: usize = 64;

/// The `qs` quantiles of `v` (not empty) by [`quantile`]'s rule, without sorting all of it:
/// each closest rank is selected in the part of `v` above the previous one (every value at
/// positions past a selected rank `p` is at least `v[p]`, so the part holds ranks `p + 1..`).
/// `v` is reordered; `qs` ascending.
pub fn quantiles<const N: usize>(v: &mut [i64], qs: [f64; N]) -> [f64; N] {
    if v.len() < SORT_BELOW {
        v.sort_unstable();
        return qs.map(|q| quantile(v, q));
    }
    let mut settled = 0;
    let mut select = |p: usize, v: &mut [i64]| {
        if p >= settled {
            v[settled..].select_nth_unstable(p - settled);
            settled = p + 1;
        }
    };
    for &q in &qs {
        let (lo, hi, _) = ranks_of(v.len(), q);
        select(lo, v);
        select(hi, v);
    }
    qs.map(|q| {
        let (lo, hi, pos) = ranks_of(v.len(), q);
        interpolate(v[lo], v[hi], lo, pos)
    })
}

/// [`quantile`] of sorted f64 values (shares, means), the same rule.
pub fn quantile_f64(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The median of `v` by [`quantile`]; 0 when empty.
pub fn median(mut v: Vec<i64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    quantiles(&mut v, [0.5])[0]
}

/// The sum of `durs` in 128 bits (no wrap however many and long they are).
pub fn wide_sum(durs: impl IntoIterator<Item = i64>) -> i128 {
    durs.into_iter().map(i128::from).sum()
}

/// `x` as i64, saturated at the limits (a 128-bit sum written into an i64 field).
pub fn saturated(x: i128) -> i64 {
    x.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// The durations of one group, 4 bytes each when they fit an i32 (a device's kernels of one
/// name can number millions, and every group is held until its statistics are taken).
pub type Durations = crate::model::narrow::NarrowI64;

/// Statistics of `durs` (not empty); `total` is the denominator of `pct_of_total` (128 bits:
/// a sum of many long events passes the i64 range; see [`wide_sum`]).
pub fn dur_stats(name: String, mut durs: Vec<i64>, total: impl Into<i128>) -> DurStats {
    dur_stats_of(name, &mut durs, total)
}

/// [`dur_stats`] of a slice (reordered), for callers that reuse one buffer across groups.
pub fn dur_stats_of(name: String, durs: &mut [i64], total: impl Into<i128>) -> DurStats {
    let total: i128 = total.into();
    let n = durs.len();
    let (mut min, mut max) = (i64::MAX, i64::MIN);
    let (mut sum, mut squares) = (0i128, Some(0i128));
    for &d in durs.iter() {
        min = min.min(d);
        max = max.max(d);
        sum += i128::from(d);
        squares = squares.and_then(|s| s.checked_add(i128::from(d) * i128::from(d)));
    }
    let mean = sum as f64 / n as f64;
    let [p25, p50, p75] = quantiles(durs, [0.25, 0.5, 0.75]);
    DurStats {
        name,
        count: n as u64,
        // In 128 bits: the mean and share stay right however long and many the events are; the
        // sum field saturates at the i64 limit.
        sum_ns: saturated(sum),
        mean_ns: mean,
        std_ns: population_std(durs, sum, squares, mean),
        min_ns: min,
        p25_ns: p25,
        p50_ns: p50,
        p75_ns: p75,
        max_ns: max,
        pct_of_total: if total == 0 {
            0.0
        } else {
            sum as f64 * 100.0 / total as f64
        },
    }
}

/// The population standard deviation: exact in integers (n·Σd² − (Σd)², whatever the order of
/// the values), or two passes in f64 when those sums pass 128 bits.
fn population_std(durs: &[i64], sum: i128, squares: Option<i128>, mean: f64) -> f64 {
    let n = durs.len() as i128;
    let exact = squares
        .and_then(|s| s.checked_mul(n))
        .zip(sum.checked_mul(sum))
        .and_then(|(a, b)| a.checked_sub(b));
    match exact {
        Some(num) => (num as f64 / (n as f64 * n as f64)).sqrt(),
        None => {
            let var = durs.iter().map(|&d| (d as f64 - mean).powi(2)).sum::<f64>() / n as f64;
            var.sqrt()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy() {
        // numpy: np.percentile([1, 2, 3, 4, 10], [25, 50, 75]) -> [2., 3., 4.]; np.std -> 3.1622776601683795
        let s = dur_stats("x".into(), vec![10, 2, 1, 4, 3], 40);
        assert_eq!((s.count, s.sum_ns, s.min_ns, s.max_ns), (5, 20, 1, 10));
        assert_eq!((s.p25_ns, s.p50_ns, s.p75_ns), (2.0, 3.0, 4.0));
        assert!((s.std_ns - 3.1622776601683795).abs() < 1e-12);
        assert_eq!(s.pct_of_total, 50.0);
        // np.percentile([1, 2], 25) -> 1.25
        assert_eq!(dur_stats("y".into(), vec![2, 1], 3).p25_ns, 1.25);
        // Wide values keep their place in the statistics.
        let mut d = Durations::default();
        for v in [10, 1 << 40, 1, -(1 << 35), 3] {
            d.push(v);
        }
        assert_eq!(
            (d.len(), d.iter().sum::<i64>()),
            (5, 14 + (1 << 40) - (1 << 35))
        );
        let s = dur_stats("z".into(), d.iter().collect(), 0);
        assert_eq!((s.min_ns, s.p50_ns, s.max_ns), (-(1 << 35), 3.0, 1 << 40));
        // np.median of 8 values is the mean of the middle two, not the upper middle one.
        assert_eq!(median(vec![8, 1, 7, 2, 6, 3, 5, 4]), 4.5);
        assert_eq!(median(vec![3, 1, 2]), 2.0);
        assert_eq!(median(Vec::new()), 0.0);
    }

    #[test]
    fn selected_quantiles_equal_sorted_ones() {
        // Generated values (a fixed LCG, many repeats, both signs) against quantile() over a full
        // sort, at lengths on both sides of the sort/select threshold.
        let mut x: u64 = 12345;
        for n in [1usize, 2, 7, 63, 64, 65, 1000, 4099] {
            let v: Vec<i64> = (0..n)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((x >> 33) % 997) as i64 - 300
                })
                .collect();
            let mut sorted = v.clone();
            sorted.sort_unstable();
            let qs = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0];
            let mut w = v.clone();
            assert_eq!(
                quantiles(&mut w, qs),
                qs.map(|q| quantile(&sorted, q)),
                "n={n}"
            );
            let s = dur_stats("v".into(), v, 0);
            assert_eq!((s.min_ns, s.max_ns), (sorted[0], sorted[n - 1]));
            // numpy's population std, two passes in f64 over the sorted values.
            let mean = sorted.iter().sum::<i64>() as f64 / n as f64;
            let var = sorted
                .iter()
                .map(|&d| (d as f64 - mean).powi(2))
                .sum::<f64>()
                / n as f64;
            assert!(
                (s.std_ns - var.sqrt()).abs() <= 1e-9 * var.sqrt().max(1.0),
                "n={n}"
            );
        }
        // The integer std is exact where two f64 passes lose digits: values 2^53 + {0, 2}
        // have std 1 exactly.
        let big = 1i64 << 53;
        assert_eq!(dur_stats("b".into(), vec![big, big + 2], 0).std_ns, 1.0);
        // Sums past 128 bits fall back to f64 (no overflow, no panic).
        let s = dur_stats("m".into(), vec![i64::MAX, i64::MIN, i64::MAX], 0);
        assert!(s.std_ns.is_finite() && s.std_ns > 0.0);
    }
}

/// P(X ≥ k) for X ~ Binomial(m, p): the chance that one of ranks taking turns at random is
/// "the slowest" or "the last" in at least `k` of `m` trials. Summed from the k-th term upward
/// in log space (exact to rounding for any m).
pub fn binomial_tail(k: u64, m: u64, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > m || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    // ln C(m, k) by the shorter product.
    let r = k.min(m - k);
    let ln_choose: f64 = (0..r)
        .map(|j| ((m - j) as f64).ln() - ((j + 1) as f64).ln())
        .sum();
    let mut term = (ln_choose + k as f64 * p.ln() + (m - k) as f64 * (1.0 - p).ln()).exp();
    let mut sum = 0.0;
    let ratio = p / (1.0 - p);
    for j in k..=m {
        sum += term;
        if term < sum * 1e-17 {
            break;
        }
        term *= (m - j) as f64 / (j + 1) as f64 * ratio;
    }
    sum.min(1.0)
}

#[cfg(test)]
mod binomial_tests {
    use super::binomial_tail;

    #[test]
    fn binomial_tail_matches_hand_computed_values() {
        // P(X >= 4 | 4, 1/2) = 1/16; P(X >= 8 | 10, 1/2) = (45 + 10 + 1) / 1024.
        assert!((binomial_tail(4, 4, 0.5) - 0.0625).abs() < 1e-12);
        assert!((binomial_tail(8, 10, 0.5) - 56.0 / 1024.0).abs() < 1e-12);
        // P(X >= 1 | 3, 1/4) = 1 - (3/4)^3.
        assert!((binomial_tail(1, 3, 0.25) - (1.0 - 0.421875)).abs() < 1e-12);
        assert_eq!(binomial_tail(0, 5, 0.5), 1.0);
        assert_eq!(binomial_tail(6, 5, 0.5), 0.0);
        // Large m stays finite: P(X >= 31 | 61, 1/2) = 1/2 (61 is odd, symmetric).
        assert!((binomial_tail(31, 61, 0.5) - 0.5).abs() < 1e-9);
        assert!(binomial_tail(60_000, 100_000, 0.5) < 1e-300_f64.max(0.0) + 1e-100);
    }
}
