//! Duration statistics of a group of events (count, sum, mean, population std, min, quartiles by
//! linear interpolation as numpy's default, max), in integer ns where exact.

pub use crate::contract::stats::*;

pub use crate::units::percent as pct;

/// The `q` quantile of sorted values by linear interpolation between closest ranks (numpy's
/// default, "type 7"): the one quantile rule of every analysis. The median of 8 values is the mean
/// of the 4th and 5th.
pub fn quantile(sorted: &[i64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] as f64 + (sorted[hi] - sorted[lo]) as f64 * (pos - lo as f64)
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
    v.sort_unstable();
    quantile(&v, 0.5)
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
    let total: i128 = total.into();
    durs.sort_unstable();
    let n = durs.len() as f64;
    // In 128 bits: the mean and share stay right however long and many the events are; the
    // sum field saturates at the i64 limit.
    let wide = wide_sum(durs.iter().copied());
    let sum = saturated(wide);
    let mean = wide as f64 / n;
    let var = durs.iter().map(|&d| (d as f64 - mean).powi(2)).sum::<f64>() / n;
    DurStats {
        name,
        count: durs.len() as u64,
        sum_ns: sum,
        mean_ns: mean,
        std_ns: var.sqrt(),
        min_ns: durs[0],
        p25_ns: quantile(&durs, 0.25),
        p50_ns: quantile(&durs, 0.5),
        p75_ns: quantile(&durs, 0.75),
        max_ns: durs[durs.len() - 1],
        pct_of_total: if total == 0 {
            0.0
        } else {
            wide as f64 * 100.0 / total as f64
        },
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
