//! Percentile bootstrap intervals for means, and the paired randomization (sign-flip) test,
//! with a small seeded PRNG so the same input gives the same numbers on every run and
//! platform.
//!
//! Method: draw `RESAMPLES` samples of n values with replacement (the same draws serve every
//! column, so paired columns stay paired), take the mean of each, sort, and report the 2.5th
//! and 97.5th percentiles (sorted means at positions ⌊0.025·B⌋ and ⌈0.975·B⌉ − 1).

/// Resamples per interval: enough for a stable second decimal of a 95% interval.
pub const RESAMPLES: usize = 10_000;
/// The fixed seed of every interval toolbudget prints.
pub const SEED: u64 = 0x746f_6f6c_6275_6467; // "toolbudg"

pub use crate::rng::SplitMix64;

/// A 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// 95% percentile-bootstrap intervals of the mean of each column. All columns must have the
/// same length n (one value per query); returns `None` per column when n == 0.
pub fn mean_intervals(columns: &[Vec<f64>], resamples: usize, seed: u64) -> Vec<Option<Interval>> {
    let n = columns.first().map_or(0, Vec::len);
    if n == 0 || resamples == 0 {
        return vec![None; columns.len()];
    }
    assert!(columns.iter().all(|c| c.len() == n));
    let mut rng = SplitMix64::new(seed);
    let mut means: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); columns.len()];
    let mut sums = vec![0.0; columns.len()];
    let mut draw = Vec::with_capacity(n);
    for _ in 0..resamples {
        draw.clear();
        draw.extend((0..n).map(|_| rng.below(n)));
        for (c, column) in columns.iter().enumerate() {
            sums[c] = draw.iter().map(|&i| column[i]).sum();
        }
        for (c, m) in means.iter_mut().enumerate() {
            m.push(sums[c] / n as f64);
        }
    }
    means
        .into_iter()
        .map(|mut m| {
            m.sort_by(f64::total_cmp);
            let low = m[(resamples as f64 * 0.025).floor() as usize];
            let high = m[((resamples as f64 * 0.975).ceil() as usize).saturating_sub(1)];
            Some(Interval { low, high })
        })
        .collect()
}

/// The interval of one column's mean.
pub fn mean_interval(values: &[f64], resamples: usize, seed: u64) -> Option<Interval> {
    mean_intervals(&[values.to_vec()], resamples, seed)[0]
}

/// Two-sided p-values of the paired randomization test, one per column of per-query
/// differences (candidate − baseline): under the null hypothesis that the two systems are
/// exchangeable, each difference is as likely to carry the other sign. `resamples` times, every
/// difference's sign is flipped with probability 1/2 (the same flips for every column, so
/// columns of one comparison stay paired) and the mean recomputed; the p-value is
/// (1 + flipped means at least as far from 0 as the observed one) / (1 + resamples), which is
/// never 0. A column of zero differences gets 1. `None` for an empty column.
pub fn sign_flip_p_values(columns: &[Vec<f64>], resamples: usize, seed: u64) -> Vec<Option<f64>> {
    let n = columns.first().map_or(0, Vec::len);
    if n == 0 || resamples == 0 {
        return vec![None; columns.len()];
    }
    assert!(columns.iter().all(|c| c.len() == n));
    // Compare sums, not means; a tolerance keeps floating-point ties from counting as less.
    let observed: Vec<f64> = columns
        .iter()
        .map(|c| c.iter().sum::<f64>().abs())
        .collect();
    let mut extreme = vec![0usize; columns.len()];
    let mut rng = SplitMix64::new(seed);
    let mut signs = vec![1.0; n];
    for _ in 0..resamples {
        for chunk in signs.chunks_mut(64) {
            let bits = rng.next_u64();
            for (i, s) in chunk.iter_mut().enumerate() {
                *s = if bits >> i & 1 == 1 { -1.0 } else { 1.0 };
            }
        }
        for (c, column) in columns.iter().enumerate() {
            let sum: f64 = column.iter().zip(&signs).map(|(d, s)| d * s).sum();
            if sum.abs() >= observed[c] - 1e-9 {
                extreme[c] += 1;
            }
        }
    }
    extreme
        .into_iter()
        .map(|e| Some((1 + e) as f64 / (1 + resamples) as f64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_flips_find_a_consistent_gain_and_not_noise() {
        // 40 queries all better by 0.5: every flip pattern but the observed one is smaller.
        let gain = vec![0.5; 40];
        // Balanced noise: +1 and -1 alternate, mean 0.
        let noise: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let zero = vec![0.0; 40];
        let p = sign_flip_p_values(&[gain, noise, zero], RESAMPLES, SEED);
        let p: Vec<f64> = p.into_iter().map(Option::unwrap).collect();
        assert!(p[0] < 0.001, "{p:?}");
        assert!(p[0] >= 1.0 / (1.0 + RESAMPLES as f64));
        assert!(p[1] > 0.5, "{p:?}");
        assert_eq!(p[2], 1.0);
        // Few queries cannot be significant: 3 gains have 2^3 sign patterns, 2 as extreme.
        let few = sign_flip_p_values(&[vec![1.0, 1.0, 1.0]], RESAMPLES, SEED)[0].unwrap();
        assert!((few - 0.25).abs() < 0.02, "{few}");
        assert_eq!(sign_flip_p_values(&[vec![]], RESAMPLES, SEED), [None]);
        assert_eq!(
            sign_flip_p_values(&[vec![0.3, -0.1, 0.2]], 500, SEED),
            sign_flip_p_values(&[vec![0.3, -0.1, 0.2]], 500, SEED)
        );
    }

    #[test]
    fn splitmix_matches_reference_values() {
        // First outputs of SplitMix64 seeded with 0 (reference implementation by Vigna).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn same_seed_same_interval_other_seed_other_interval() {
        let values: Vec<f64> = (0..200).map(|i| f64::from((i * 37) % 11) / 10.0).collect();
        let a = mean_interval(&values, RESAMPLES, SEED).unwrap();
        let b = mean_interval(&values, RESAMPLES, SEED).unwrap();
        assert_eq!(a, b);
        let c = mean_interval(&values, RESAMPLES, SEED + 1).unwrap();
        assert_ne!(a, c);
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        assert!(a.contains(mean) && a.low < a.high, "{a:?} around {mean}");
    }

    #[test]
    fn constant_values_give_a_point_interval() {
        let i = mean_interval(&[0.25; 50], 1000, SEED).unwrap();
        assert_eq!(
            i,
            Interval {
                low: 0.25,
                high: 0.25
            }
        );
        assert_eq!(mean_interval(&[], 1000, SEED), None);
    }

    #[test]
    fn interval_width_shrinks_with_more_data() {
        let small: Vec<f64> = (0..20).map(|i| f64::from(i % 2)).collect();
        let large: Vec<f64> = (0..2000).map(|i| f64::from(i % 2)).collect();
        let s = mean_interval(&small, RESAMPLES, SEED).unwrap();
        let l = mean_interval(&large, RESAMPLES, SEED).unwrap();
        assert!(l.high - l.low < (s.high - s.low) / 5.0, "{s:?} {l:?}");
    }
}
