//! Statistics over the timed samples of one row, and between rows.
//!
//! - [`Summary`]: min, median, mean, max, sample standard deviation (n − 1),
//!   the median absolute deviation, and which samples are outliers: further
//!   than 3·MAD from the median, where MAD is scaled by 1.4826 so that it
//!   estimates σ for normal data (the usual "modified z-score" convention);
//!   only with at least [`MIN_OUTLIER_N`] samples.
//! - [`paired_ratio`]: the ratio of two peers' times from paired runs (run r
//!   of A against run r of B, which ran side by side in round r). The point
//!   estimate is the geometric mean of the per-round ratios; its 95 %
//!   confidence interval is a percentile bootstrap over those ratios with a
//!   fixed-seed RNG, so the same samples always give the same interval. The
//!   difference is *significant* when the interval excludes 1 and rests on
//!   at least [`MIN_SIGNIFICANT_N`] pairs. With 3 pairs that means all three
//!   rounds agree on the direction (a 1-in-4 event under no difference); with
//!   5, rarer still: use the full profile for decisions.
//! - [`unpaired_ratio`]: the same for two independent sets of samples (a
//!   saved baseline against the latest run): ratio of medians, bootstrap
//!   resampling each side on its own.
//! - [`geomean`].
//!
//! Invariants: every function is deterministic; empty input gives `None`
//! rather than NaN; ratios are `a / b` of times, so below 1 means A is faster.

use serde::{Deserialize, Serialize};

/// Bootstrap resamples. Enough for a stable 95 % interval, cheap for 300 rows.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
/// Fewer samples than this flag no outlier: the MAD of three values is just
/// the smaller gap between two of them, and every third row would "have" one.
pub const MIN_OUTLIER_N: usize = 5;
/// Fewer pairs (or samples a side) than this are never called significant:
/// a bootstrap over one or two values says nothing about the spread.
pub const MIN_SIGNIFICANT_N: usize = 3;
/// The fixed seed: the same samples give the same interval on every machine.
pub const BOOTSTRAP_SEED: u64 = 0x5EED_5B1D_1E00_0001;

/// Descriptive statistics of one row's samples (nanoseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub max: f64,
    pub stddev: f64,
    /// Scaled MAD (1.4826 · median |x − median|).
    pub mad: f64,
    /// Indices of samples beyond median ± 3·MAD.
    pub outliers: Vec<usize>,
}

/// The median of a slice (mean of the middle two for even lengths).
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

/// Median absolute deviation, scaled by 1.4826.
pub fn mad(xs: &[f64]) -> Option<f64> {
    let m = median(xs)?;
    let dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    Some(1.4826 * median(&dev)?)
}

pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = xs.iter().sum::<f64>() / n as f64;
    let stddev = if n > 1 {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let med = median(xs)?;
    let mad = mad(xs)?;
    let outliers = xs
        .iter()
        .enumerate()
        .filter(|(_, &x)| n >= MIN_OUTLIER_N && mad > 0.0 && (x - med).abs() > 3.0 * mad)
        .map(|(i, _)| i)
        .collect();
    Some(Summary {
        n,
        min,
        median: med,
        mean,
        max,
        stddev,
        mad,
        outliers,
    })
}

/// A small, fast, deterministic RNG (SplitMix64). Not for cryptography.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0), by multiply-shift (bias negligible here).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// A ratio with its 95 % bootstrap confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub ratio: f64,
    pub lo: f64,
    pub hi: f64,
    /// How many pairs (or, unpaired, the smaller sample count) it rests on.
    pub n: usize,
    /// The interval excludes 1.
    pub significant: bool,
}

impl Ratio {
    /// `0.85×`, or `~1.02×` when the difference is not significant.
    pub fn display(&self) -> String {
        let tilde = if self.significant { "" } else { "~" };
        format!("{tilde}{:.2}×", self.ratio)
    }
}

fn percentile_sorted(v: &[f64], p: f64) -> f64 {
    let idx = ((v.len() - 1) as f64 * p).round() as usize;
    v[idx.min(v.len() - 1)]
}

fn finish(ratio: f64, mut boots: Vec<f64>, n: usize) -> Ratio {
    boots.sort_by(f64::total_cmp);
    let lo = percentile_sorted(&boots, 0.025);
    let hi = percentile_sorted(&boots, 0.975);
    Ratio {
        ratio,
        lo,
        hi,
        n,
        significant: n >= MIN_SIGNIFICANT_N && (lo > 1.0 || hi < 1.0),
    }
}

/// Ratio of A's times to B's from paired samples (`a[r]` ran beside `b[r]`).
///
/// Pairs where either side is not positive are skipped; `None` when no pair is left.
pub fn paired_ratio(a: &[f64], b: &[f64]) -> Option<Ratio> {
    let logs: Vec<f64> = a
        .iter()
        .zip(b)
        .filter(|(x, y)| **x > 0.0 && **y > 0.0)
        .map(|(x, y)| (x / y).ln())
        .collect();
    if logs.is_empty() {
        return None;
    }
    let n = logs.len();
    let point = (logs.iter().sum::<f64>() / n as f64).exp();
    let mut rng = SplitMix64::new(BOOTSTRAP_SEED);
    let boots = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| ((0..n).map(|_| logs[rng.below(n)]).sum::<f64>() / n as f64).exp())
        .collect();
    Some(finish(point, boots, n))
}

/// Ratio of the median of `a` to the median of `b`, independent samples.
pub fn unpaired_ratio(a: &[f64], b: &[f64]) -> Option<Ratio> {
    let (ma, mb) = (median(a)?, median(b)?);
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let mut rng = SplitMix64::new(BOOTSTRAP_SEED);
    let mut ra = vec![0.0; a.len()];
    let mut rb = vec![0.0; b.len()];
    let boots = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            ra.iter_mut().for_each(|x| *x = a[rng.below(a.len())]);
            rb.iter_mut().for_each(|x| *x = b[rng.below(b.len())]);
            median(&ra).unwrap_or(f64::NAN) / median(&rb).unwrap_or(f64::NAN)
        })
        .collect();
    Some(finish(ma / mb, boots, a.len().min(b.len())))
}

/// Geometric mean of positive values; `None` when there are none.
pub fn geomean(xs: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = xs.iter().filter(|x| **x > 0.0).map(|x| x.ln()).collect();
    if logs.is_empty() {
        return None;
    }
    Some((logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn known_data_set() {
        // 2 4 4 4 5 5 7 9: mean 5, sample stddev sqrt(32/7), median 4.5,
        // |x - 4.5| = 2.5 .5 .5 .5 .5 .5 2.5 4.5 -> median .5 -> MAD .7413.
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let s = summarize(&xs).unwrap();
        assert!(close(s.mean, 5.0));
        assert!(close(s.median, 4.5));
        assert!(close(s.stddev, (32.0f64 / 7.0).sqrt()));
        assert!(close(s.mad, 1.4826 * 0.5));
        assert_eq!((s.min, s.max), (2.0, 9.0));
        // 3·MAD = 2.2239: 2 (2.5 away), 7 (2.5) and 9 (4.5) are outliers.
        assert_eq!(s.outliers, vec![0, 6, 7]);
        assert!(close(median(&[3.0, 1.0, 2.0]).unwrap(), 2.0));
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn single_sample_has_no_spread_and_no_outlier() {
        let s = summarize(&[7.0]).unwrap();
        assert_eq!((s.stddev, s.mad, s.outliers.len()), (0.0, 0.0, 0));
        // Three samples never flag an outlier, however far one is.
        assert!(summarize(&[10.0, 11.0, 50.0]).unwrap().outliers.is_empty());
        assert_eq!(
            summarize(&[10.0, 11.0, 10.5, 10.2, 50.0]).unwrap().outliers,
            vec![4]
        );
    }

    #[test]
    fn bootstrap_is_deterministic() {
        let a = [10.0, 11.0, 12.0, 10.5, 11.5];
        let b = [20.0, 21.0, 19.0, 20.5, 22.0];
        assert_eq!(paired_ratio(&a, &b), paired_ratio(&a, &b));
        assert_eq!(unpaired_ratio(&a, &b), unpaired_ratio(&a, &b));
    }

    #[test]
    fn ratio_significance() {
        // A is consistently about half of B: significant, interval below 1.
        let a = [10.0, 11.0, 12.0, 10.5, 11.5];
        let b = [20.0, 21.0, 19.0, 20.5, 22.0];
        let r = paired_ratio(&a, &b).unwrap();
        assert!(r.significant && r.hi < 1.0 && r.lo <= r.ratio && r.ratio <= r.hi);
        assert!((r.ratio - 0.53).abs() < 0.03, "{r:?}");
        assert_eq!(r.display(), format!("{:.2}×", r.ratio));
        // A is faster in some rounds and slower in others: not significant.
        let a = [10.0, 12.0, 9.0, 11.0, 10.0];
        let b = [11.0, 10.0, 10.0, 10.0, 10.5];
        let r = paired_ratio(&a, &b).unwrap();
        assert!(!r.significant && r.lo < 1.0 && r.hi > 1.0, "{r:?}");
        assert!(r.display().starts_with('~'));
        // Identical runs: ratio exactly 1, not significant.
        let r = paired_ratio(&[5.0, 5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
        assert!(close(r.ratio, 1.0) && !r.significant);
        assert!(paired_ratio(&[], &[]).is_none());
        // Two pairs, however far apart, are too few to call.
        assert!(!paired_ratio(&[1.0, 1.0], &[2.0, 2.0]).unwrap().significant);
    }

    #[test]
    fn unpaired_slowdown_is_detected() {
        let base = [100.0, 101.0, 99.0];
        let now = [150.0, 149.0, 152.0];
        let r = unpaired_ratio(&now, &base).unwrap();
        assert!(r.significant && r.lo > 1.0 && close(r.ratio, 1.5), "{r:?}");
        let noisy = [90.0, 130.0, 100.0];
        assert!(!unpaired_ratio(&noisy, &base).unwrap().significant);
    }

    #[test]
    fn geomean_of_known_values() {
        assert!(close(geomean(&[1.0, 4.0]).unwrap(), 2.0));
        assert!(close(geomean(&[0.5, 2.0, 1.0]).unwrap(), 1.0));
        assert!(geomean(&[]).is_none());
    }
}
