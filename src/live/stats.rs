//! The statistics of the accuracy table: the Wilson score interval for a proportion (95%),
//! and the exact McNemar test on paired turns (two-sided binomial test on the discordant
//! pairs). Both are closed forms: no resampling, the same numbers on every platform.
//!
//! Repeated runs of one turn are counted as separate trials; they are not independent (the
//! same prompt), so the interval is narrower than the model's behaviour on new turns warrants.

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval of `successes` out of `n` (`None` for n = 0), in [0, 1].
pub fn wilson(successes: usize, n: usize) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n_f = n as f64;
    let p = successes as f64 / n_f;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denom;
    let half = Z95 * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denom;
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// ln C(n, k).
fn ln_choose(n: usize, k: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..k {
        s += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    s
}

/// The exact McNemar p-value for `b` pairs that only the first side got right and `c` that
/// only the second did: 2 · P(X ≤ min(b, c)) for X ~ Binomial(b + c, ½), at most 1; 1 when
/// no pair is discordant.
pub fn mcnemar_exact(b: usize, c: usize) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    let half_n = n as f64 * std::f64::consts::LN_2;
    let tail: f64 = (0..=k).map(|i| (ln_choose(n, i) - half_n).exp()).sum();
    (2.0 * tail).min(1.0)
}

/// Nearest-rank percentile of `values` (`p` in (0, 100]); 0 for none.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    crate::number::percentile(&v, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }

    #[test]
    fn wilson_matches_the_textbook_values() {
        // 8 of 10: 0.4902 to 0.9433 (Newcombe 1998, method 3).
        let (lo, hi) = wilson(8, 10).unwrap();
        assert!(close(lo, 0.4902) && close(hi, 0.9433), "{lo} {hi}");
        let (lo, hi) = wilson(0, 10).unwrap();
        assert!(close(lo, 0.0) && close(hi, 0.2775), "{lo} {hi}");
        let (lo, hi) = wilson(10, 10).unwrap();
        assert!(close(lo, 0.7225) && close(hi, 1.0), "{lo} {hi}");
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn mcnemar_is_the_two_sided_binomial_tail() {
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // 0 vs 5: 2 / 32.
        assert!(close(mcnemar_exact(0, 5), 0.0625));
        assert!(close(mcnemar_exact(5, 0), 0.0625));
        // 1 vs 9: 2 · (1 + 10) / 1024.
        assert!(close(mcnemar_exact(1, 9), 22.0 / 1024.0));
        assert_eq!(mcnemar_exact(3, 3), 1.0);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&v, 50.0), 3.0);
        assert_eq!(percentile(&v, 95.0), 5.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }
}
