//! The noise of a diff metric, from the runs themselves (docs/diff.md): a bootstrap of the steps
//! of both runs, or the spread of earlier runs (a history of saved reports). Pure functions.
//!
//! Steps: each side's steps (every rank's, pooled) are resampled with replacement
//! [`RESAMPLES`] times, within two strata (the far outliers of step time, such as warm-up steps,
//! and the rest: [`strata`]), the statistic recomputed on each resample, and the 2.5th and 97.5th
//! percentiles of the resampled change (new − base, and new / base − 1) give a 95% interval. When
//! the metric itself is defined on another denominator than the steps (the shares of
//! device_time's whole window), the interval's offsets from the steps' own change are applied to
//! the metric's change (the "basic" shift), so the band is the steps' noise around the metric's
//! value. History: with n ≥ [`MIN_HISTORY`] earlier values, the new value is compared with their
//! mean within a 95% prediction interval, mean ± t(0.975, n−1) · sd · √(1 + 1/n).

/// Resamples per bootstrap (fewer on very large inputs, see [`resamples_for`]).
pub const RESAMPLES: usize = 2000;
/// Fewer steps than this on either side: the noise is unknown.
pub const MIN_STEPS: usize = 5;
/// Fewer earlier runs than this: the noise is unknown.
pub const MIN_HISTORY: usize = 3;

/// One step: its device step time, computing, exposed communication and free time (ns).
pub type Step = [f64; 4];

/// What a metric computes from a set of steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    /// The mean step time.
    MeanStep,
    /// Sum of component `k` (1 computing, 2 exposed communication, 3 free) over the sum of the
    /// step times, percent.
    Share(usize),
}

impl Stat {
    pub fn of(self, steps: &[Step]) -> f64 {
        self.of_picks(steps, 0..steps.len())
    }

    fn of_picks(self, steps: &[Step], picks: impl Iterator<Item = usize>) -> f64 {
        let (mut num, mut den, mut n) = (0.0, 0.0, 0.0);
        for i in picks {
            let s = &steps[i];
            den += s[0];
            n += 1.0;
            if let Stat::Share(k) = self {
                num += s[k];
            }
        }
        match self {
            Stat::MeanStep if n > 0.0 => den / n,
            Stat::Share(_) if den > 0.0 => 100.0 * num / den,
            _ => f64::NAN,
        }
    }
}

/// A 95% interval of a change: absolute (the metric's unit; pct metrics in points) and
/// relative (% of base, None when the base is 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    pub low_pct: Option<f64>,
    pub high_pct: Option<f64>,
}

/// splitmix64: a fixed seed, so a diff gives the same interval every time.
struct Mix(u64);

impl Mix {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z as u128 * n as u128) >> 64) as usize
    }
}

/// Resamples for `n` steps in all: [`RESAMPLES`], fewer (at least 200) past 20 M step reads.
fn resamples_for(n: usize) -> usize {
    (20_000_000 / n.max(1)).clamp(200, RESAMPLES)
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo as f64)
}

/// Tukey's far fences: a step time beyond 3 interquartile ranges from the quartiles.
const FENCE_IQR: f64 = 3.0;

/// The steps' indices in two strata: the far outliers of step time (warm-up or compile steps,
/// beyond [`FENCE_IQR`] interquartile ranges) and the rest. Resampling within each keeps the
/// number of outlier steps fixed: it belongs to the workload (every run has its warm-up), and
/// letting a resample draw it afresh would make the noise several times wider than it is.
fn strata(steps: &[Step]) -> [Vec<usize>; 2] {
    let mut t: Vec<f64> = steps.iter().map(|s| s[0]).collect();
    t.sort_by(f64::total_cmp);
    let (q1, q3) = (percentile(&t, 0.25), percentile(&t, 0.75));
    let (lo, hi) = (q1 - FENCE_IQR * (q3 - q1), q3 + FENCE_IQR * (q3 - q1));
    let (mut regular, mut outliers) = (Vec::new(), Vec::new());
    for (i, s) in steps.iter().enumerate() {
        if s[0] < lo || s[0] > hi {
            outliers.push(i);
        } else {
            regular.push(i);
        }
    }
    [regular, outliers]
}

/// One stratified resample: as many draws from each stratum as it holds.
fn resample(strata: &[Vec<usize>; 2], rng: &mut Mix, out: &mut Vec<usize>) {
    out.clear();
    for s in strata {
        out.extend((0..s.len()).map(|_| s[rng.below(s.len())]));
    }
}

/// The 95% interval of the change of `metric` (its observed base and new values) from the
/// steps of both runs; why not when the noise cannot be known: fewer than [`MIN_STEPS`] steps
/// on a side, or a single far-outlier step on a side (one warm-up step per run: its run-to-run
/// spread cannot be estimated from one value, and it can carry most of the change).
pub fn from_steps(
    stat: Stat,
    base: &[Step],
    new: &[Step],
    metric: (f64, f64),
) -> Result<Interval, String> {
    if base.len() < MIN_STEPS || new.len() < MIN_STEPS {
        return Err(format!(
            "{} vs {} steps: fewer than {MIN_STEPS} on a side",
            base.len(),
            new.len()
        ));
    }
    let (b0, n0) = (stat.of(base), stat.of(new));
    let mut rng = Mix(0x005E_ED0F_D1FF);
    let b = resamples_for(base.len() + new.len());
    let (base_strata, new_strata) = (strata(base), strata(new));
    if base_strata[1].len() == 1 || new_strata[1].len() == 1 {
        return Err(format!(
            "a single far-outlier step (warm-up?) in a run ({} and {} such steps): its spread cannot be estimated",
            base_strata[1].len(),
            new_strata[1].len()
        ));
    }
    if base.len() + new.len() > BOOTSTRAP_MAX_STEPS {
        return Ok(normal_interval(stat, base, new, metric));
    }
    let (mut abs, mut rel) = (Vec::with_capacity(b), Vec::with_capacity(b));
    let mut picks = Vec::new();
    for _ in 0..b {
        resample(&base_strata, &mut rng, &mut picks);
        let bs = stat.of_picks(base, picks.iter().copied());
        resample(&new_strata, &mut rng, &mut picks);
        let ns = stat.of_picks(new, picks.iter().copied());
        abs.push(ns - bs);
        if bs != 0.0 {
            rel.push(100.0 * (ns / bs - 1.0));
        }
    }
    abs.retain(|x| x.is_finite());
    rel.retain(|x| x.is_finite());
    if abs.is_empty() {
        return Err("the statistic is undefined on these steps (zero step time)".into());
    }
    abs.sort_by(f64::total_cmp);
    rel.sort_by(f64::total_cmp);
    let (mb, mn) = metric;
    let shift = (mn - mb) - (n0 - b0);
    let rel_obs = (mb != 0.0).then(|| 100.0 * (mn / mb - 1.0));
    let rel_steps = (b0 != 0.0).then(|| 100.0 * (n0 / b0 - 1.0));
    let rel_shift = rel_obs.zip(rel_steps).map(|(o, s)| o - s);
    let pct = |q: f64| {
        rel_shift
            .filter(|_| !rel.is_empty())
            .map(|sh| percentile(&rel, q) + sh)
    };
    Ok(Interval {
        low: percentile(&abs, 0.025) + shift,
        high: percentile(&abs, 0.975) + shift,
        low_pct: pct(0.025),
        high_pct: pct(0.975),
    })
}

/// Past this many steps in both runs together the interval is the normal approximation
/// ([`normal_interval`]): at a million steps the central limit holds, and 200 resamples of
/// millions of steps would take seconds per metric.
pub const BOOTSTRAP_MAX_STEPS: usize = 1_000_000;

/// The statistic of `steps` and its variance, by linearisation: a mean's is var/n; a share's
/// (a ratio of sums, percent) is that of (x − R·y) / ȳ, times 100², over n (the delta method).
fn stat_and_variance(stat: Stat, steps: &[Step]) -> (f64, f64) {
    let n = steps.len() as f64;
    let value = stat.of(steps);
    let z: Vec<f64> = match stat {
        Stat::MeanStep => steps.iter().map(|s| s[0]).collect(),
        Stat::Share(k) => {
            let (r, mean_y) = (value / 100.0, steps.iter().map(|s| s[0]).sum::<f64>() / n);
            steps
                .iter()
                .map(|s| 100.0 * (s[k] - r * s[0]) / mean_y)
                .collect()
        }
    };
    let m = z.iter().sum::<f64>() / n;
    let var = z.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (value, var / n)
}

/// The 95% interval of the change from the normal approximation (see [`BOOTSTRAP_MAX_STEPS`]),
/// shifted onto the metric as the bootstrap's is.
fn normal_interval(stat: Stat, base: &[Step], new: &[Step], metric: (f64, f64)) -> Interval {
    let ((b0, vb), (n0, vn)) = (stat_and_variance(stat, base), stat_and_variance(stat, new));
    let (mb, mn) = metric;
    let half = 1.96 * (vb + vn).sqrt();
    let d0 = n0 - b0;
    let shift = (mn - mb) - d0;
    let rel = (b0 != 0.0 && mb != 0.0).then(|| {
        let r0 = 100.0 * (n0 / b0 - 1.0);
        let se = 100.0 * (vn / (b0 * b0) + n0 * n0 * vb / b0.powi(4)).sqrt();
        let center = 100.0 * (mn / mb - 1.0);
        (center - 1.96 * se, center + 1.96 * se, r0)
    });
    Interval {
        low: d0 - half + shift,
        high: d0 + half + shift,
        low_pct: rel.map(|r| r.0),
        high_pct: rel.map(|r| r.1),
    }
}

/// Fewer calls than this on a side: the noise of a mean per call is unknown.
pub const MIN_CALLS: f64 = 30.0;

/// The calls behind a mean per call (a kernel's mean duration): count, mean and population
/// variance, ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calls {
    pub n: f64,
    pub mean: f64,
    pub var: f64,
}

/// The 95% interval of the change of a mean per call: the difference of the means ± 1.96
/// standard errors (Welch's normal approximation, fair for the hundreds to millions of calls of
/// a top kernel; calls inside one step are not independent, so it is the narrower, per-call
/// noise). Fewer than [`MIN_CALLS`] calls on a side: unknown.
pub fn from_calls(base: Calls, new: Calls) -> Result<Interval, String> {
    if base.n < MIN_CALLS || new.n < MIN_CALLS {
        return Err(format!(
            "{} vs {} calls: fewer than {MIN_CALLS} on a side",
            base.n, new.n
        ));
    }
    let se = (base.var / base.n + new.var / new.n).sqrt();
    let change = new.mean - base.mean;
    let (low, high) = (change - 1.96 * se, change + 1.96 * se);
    let pct = |x: f64| (base.mean != 0.0).then(|| 100.0 * x / base.mean.abs());
    Ok(Interval {
        low,
        high,
        low_pct: pct(low),
        high_pct: pct(high),
    })
}

/// t(0.975, df) for df 1..=30; 1.96 beyond.
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    T.get(df.wrapping_sub(1)).copied().unwrap_or(1.96)
}

/// The mean of the earlier values and the 95% interval of the change of `new` from it, from
/// their spread (a prediction interval); None with fewer than [`MIN_HISTORY`] values.
pub fn from_history(history: &[f64], new: f64) -> Option<(f64, Interval)> {
    let n = history.len();
    if n < MIN_HISTORY {
        return None;
    }
    let mean = history.iter().sum::<f64>() / n as f64;
    let var = history.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t975(n - 1) * var.sqrt() * (1.0 + 1.0 / n as f64).sqrt();
    let change = new - mean;
    let pct = |x: f64| (mean != 0.0).then(|| 100.0 * x / mean.abs());
    Some((
        mean,
        Interval {
            low: change - half,
            high: change + half,
            low_pct: pct(change - half),
            high_pct: pct(change + half),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(times: &[f64]) -> Vec<Step> {
        times.iter().map(|&t| [t, t / 2.0, 0.0, t / 4.0]).collect()
    }

    /// Two samples from one distribution: the interval holds 0; shifted by 10% with a spread of
    /// about 1%: the interval is about +10% and excludes 0. Values made here, not measured.
    #[test]
    fn the_step_interval_holds_zero_for_noise_and_excludes_it_for_a_shift() {
        let base: Vec<f64> = (0..60).map(|i| 1000.0 + ((i * 37) % 21) as f64).collect();
        let same: Vec<f64> = (0..60).map(|i| 1000.0 + ((i * 53) % 21) as f64).collect();
        let slow: Vec<f64> = base.iter().map(|t| t * 1.1).collect();
        let (b, s, x) = (steps(&base), steps(&same), steps(&slow));
        let m = |v: &[Step]| Stat::MeanStep.of(v);
        let i = from_steps(Stat::MeanStep, &b, &s, (m(&b), m(&s))).unwrap();
        assert!(i.low < 0.0 && i.high > 0.0, "{i:?}");
        let i = from_steps(Stat::MeanStep, &b, &x, (m(&b), m(&x))).unwrap();
        let (lo, hi) = (i.low_pct.unwrap(), i.high_pct.unwrap());
        assert!(lo > 9.0 && hi < 11.0 && lo < 10.0 && hi > 10.0, "{i:?}");
        // Shares: 50% computing on both sides, the interval of the change holds 0.
        let i = from_steps(Stat::Share(1), &b, &x, (50.0, 50.0)).unwrap();
        assert!(i.low <= 1e-9 && i.high >= -1e-9, "{i:?}");
        assert!(from_steps(Stat::MeanStep, &b[..4], &x, (1.0, 1.0)).is_err());
        // One warm-up step per run (10x the others): the noise is unknown, two per run: known.
        let mut w = b.clone();
        w[0][0] *= 10.0;
        let e = from_steps(Stat::MeanStep, &w, &w, (1.0, 1.0)).unwrap_err();
        assert!(e.contains("single far-outlier"), "{e}");
        w[1][0] *= 10.0;
        assert!(from_steps(Stat::MeanStep, &w, &w, (1.0, 1.0)).is_ok());
    }

    /// The normal approximation used past a million steps agrees with the bootstrap on a
    /// unimodal sample small enough for both (4,000 steps a side, times spread ±10%, shifted by
    /// 1%, computing 50-70% of each step): the intervals' widths within 15%, their centres
    /// within a tenth of a width.
    #[test]
    fn the_normal_interval_agrees_with_the_bootstrap() {
        let side = |scale: f64, seed: u64| -> Vec<Step> {
            let mut r = Mix(seed);
            (0..4000)
                .map(|_| {
                    let t = scale * (900.0 + r.below(201) as f64);
                    let c = t * (0.5 + r.below(201) as f64 / 1000.0);
                    [t, c, t * 0.1, t * 0.9 - c]
                })
                .collect()
        };
        let (b, n) = (side(1.0, 1), side(1.01, 2));
        for stat in [Stat::MeanStep, Stat::Share(1)] {
            let metric = (stat.of(&b), stat.of(&n));
            let boot = from_steps(stat, &b, &n, metric).unwrap();
            let norm = normal_interval(stat, &b, &n, metric);
            let (wb, wn) = (boot.high - boot.low, norm.high - norm.low);
            assert!(
                (wb - wn).abs() < 0.15 * wb.max(1e-12),
                "{stat:?}: {boot:?} vs {norm:?}"
            );
            let (cb, cn) = ((boot.high + boot.low) / 2.0, (norm.high + norm.low) / 2.0);
            assert!(
                (cb - cn).abs() < 0.1 * wb.max(1e-9),
                "{stat:?}: {boot:?} vs {norm:?}"
            );
            if stat == Stat::MeanStep {
                let (pb, pn) = (
                    boot.high_pct.unwrap() - boot.low_pct.unwrap(),
                    norm.high_pct.unwrap() - norm.low_pct.unwrap(),
                );
                assert!((pb - pn).abs() < 0.15 * pb, "{boot:?} vs {norm:?}");
            }
        }
    }

    /// Calls: means 100 and 103 ns, sd 10 ns, 400 calls each: SE = √(100/400 · 2) = 0.707,
    /// so the interval is 3 ± 1.386 ns; 20 calls are too few.
    #[test]
    fn calls_give_a_normal_interval_of_the_difference_of_means() {
        let c = |mean| Calls {
            n: 400.0,
            mean,
            var: 100.0,
        };
        let i = from_calls(c(100.0), c(103.0)).unwrap();
        let half = 1.96 * (0.5f64).sqrt();
        assert!((i.low - (3.0 - half)).abs() < 1e-9 && (i.high - (3.0 + half)).abs() < 1e-9);
        assert!((i.low_pct.unwrap() - (3.0 - half)).abs() < 1e-9);
        let few = Calls { n: 20.0, ..c(1.0) };
        assert!(from_calls(few, c(1.0)).is_err());
    }

    /// Five earlier values 100, 102, 98, 101, 99 (mean 100, sd 1.58): a new 101 is inside the
    /// prediction interval (half-width 2.776 · 1.58 · √1.2 = 4.81), a new 110 outside.
    #[test]
    fn history_gives_a_prediction_interval() {
        let h = [100.0, 102.0, 98.0, 101.0, 99.0];
        let (mean, i) = from_history(&h, 101.0).unwrap();
        assert_eq!(mean, 100.0);
        let half = 2.776 * (2.5f64).sqrt() * (1.2f64).sqrt();
        assert!((i.high - (1.0 + half)).abs() < 1e-9, "{i:?}");
        assert!(i.low < 0.0);
        let (_, i) = from_history(&h, 110.0).unwrap();
        assert!(i.low > 0.0);
        assert!(from_history(&h[..2], 1.0).is_none());
    }
}
