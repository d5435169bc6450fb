//! Least squares for the two unknowns of the bill, and the error statistics printed with it.
//!
//! The model of one request's billed prompt is `y = a + k·x`: `x` is what the simulator counts
//! for the request apart from the system prompt and the tool-use preamble (tools, deferred
//! list, history, new message, in the counter's tokens), `k` the provider's tokens per counted
//! token, and `a` the system prompt plus the preamble in the provider's tokens.

use serde::{Deserialize, Serialize};

use crate::number::round;

/// A fitted line `y = intercept + scale · x` and how well it fits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LineFit {
    pub intercept: f64,
    pub scale: f64,
    /// Points fitted.
    pub n: usize,
    /// Coefficient of determination (1 − residual / total sum of squares).
    pub r2: f64,
    /// Root mean square of the residuals, in billed tokens.
    pub rms_residual: f64,
}

/// Solves the normal equations of `y = a + k·x`:
///
/// ```text
/// | n    Σx  | |a|   | Σy  |
/// | Σx   Σx² | |k| = | Σxy |
/// ```
///
/// in their centred form (`k = Sxy / Sxx`, `a = ȳ − k·x̄`), which is the same solution with
/// no cancellation between large sums. `None` with fewer than two distinct `x`.
pub fn fit_line(points: &[(f64, f64)]) -> Option<LineFit> {
    let n = points.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for &(x, y) in points {
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (y - my);
        syy += (y - my) * (y - my);
    }
    if sxx <= f64::EPSILON * nf * (mx * mx).max(1.0) {
        return None;
    }
    let scale = sxy / sxx;
    let intercept = my - scale * mx;
    let rss: f64 = points
        .iter()
        .map(|&(x, y)| (y - intercept - scale * x).powi(2))
        .sum();
    Some(LineFit {
        intercept,
        scale,
        n,
        r2: if syy > 0.0 { 1.0 - rss / syy } else { 1.0 },
        rms_residual: (rss / nf).sqrt(),
    })
}

/// The least-squares slope of `y = a + k·x` with the intercept `a` fixed: `k = Σx(y−a) / Σx²`
/// (the constrained optimum when the free fit's intercept falls below `a`). `None` when every
/// `x` is 0.
pub fn fit_slope(points: &[(f64, f64)], intercept: f64) -> Option<LineFit> {
    let sxx: f64 = points.iter().map(|p| p.0 * p.0).sum();
    if points.is_empty() || sxx <= 0.0 {
        return None;
    }
    let scale = points
        .iter()
        .map(|&(x, y)| x * (y - intercept))
        .sum::<f64>()
        / sxx;
    let n = points.len() as f64;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let rss: f64 = points
        .iter()
        .map(|&(x, y)| (y - intercept - scale * x).powi(2))
        .sum();
    Some(LineFit {
        intercept,
        scale,
        n: points.len(),
        r2: if syy > 0.0 { 1.0 - rss / syy } else { 1.0 },
        rms_residual: (rss / n).sqrt(),
    })
}

/// With the slope known, the least-squares intercept is the mean residual `mean(y − k·x)`.
pub fn fit_intercept(points: &[(f64, f64)], scale: f64) -> Option<f64> {
    if points.is_empty() {
        return None;
    }
    Some(points.iter().map(|&(x, y)| y - scale * x).sum::<f64>() / points.len() as f64)
}

/// Per-request error of a model against the bill.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ErrorStats {
    /// Requests compared.
    pub requests: usize,
    /// Median of |modeled − billed| / billed, percent.
    pub median_abs_pct: f64,
    /// 90th percentile of the same.
    pub p90_abs_pct: f64,
    /// Mean of (modeled − billed) / billed, percent: the model's bias.
    pub mean_pct: f64,
    pub billed_tokens: u64,
    pub modeled_tokens: u64,
}

/// Error statistics of (billed, modeled) pairs; requests billed 0 tokens are skipped.
pub fn error_stats(pairs: &[(u64, u64)]) -> ErrorStats {
    let mut abs: Vec<f64> = Vec::with_capacity(pairs.len());
    let mut sum = 0.0;
    let (mut billed, mut modeled) = (0, 0);
    for &(b, m) in pairs {
        if b == 0 {
            continue;
        }
        let e = (m as f64 - b as f64) / b as f64 * 100.0;
        abs.push(e.abs());
        sum += e;
        billed += b;
        modeled += m;
    }
    abs.sort_by(f64::total_cmp);
    let n = abs.len();
    ErrorStats {
        requests: n,
        median_abs_pct: round(crate::number::percentile(&abs, 50.0), 4),
        p90_abs_pct: round(crate::number::percentile(&abs, 90.0), 4),
        mean_pct: if n == 0 {
            0.0
        } else {
            round(sum / n as f64, 4)
        },
        billed_tokens: billed,
        modeled_tokens: modeled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_through_exact_points_is_recovered() {
        let pts: Vec<(f64, f64)> = (0..10)
            .map(|i| {
                let x = 1000.0 + 731.0 * i as f64;
                (x, 4200.0 + 1.17 * x)
            })
            .collect();
        let f = fit_line(&pts).unwrap();
        assert!((f.intercept - 4200.0).abs() < 1e-6, "{f:?}");
        assert!((f.scale - 1.17).abs() < 1e-9, "{f:?}");
        assert!(f.rms_residual < 1e-6);
        assert!((f.r2 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn known_residuals_give_known_fit_statistics() {
        // By hand: x̄ = 1.5, ȳ = 4, Sxx = 5, Sxy = 8 → k = 1.6, a = 4 − 1.6·1.5 = 1.6.
        let pts = [(0.0, 2.0), (1.0, 2.0), (2.0, 6.0), (3.0, 6.0)];
        let f = fit_line(&pts).unwrap();
        assert!((f.scale - 1.6).abs() < 1e-12, "{f:?}");
        assert!((f.intercept - 1.6).abs() < 1e-12, "{f:?}");
        // Residuals 0.4, -1.2, 1.2, -0.4: RSS 3.2, RMS sqrt(0.8).
        assert!((f.rms_residual - 0.8f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn a_fixed_intercept_leaves_the_slope_to_fit() {
        // y = 10 + 2x exactly: with the intercept fixed at 10 the slope is 2, residual 0.
        let pts = [(1.0, 12.0), (2.0, 14.0), (5.0, 20.0)];
        let f = fit_slope(&pts, 10.0).unwrap();
        assert!(
            (f.scale - 2.0).abs() < 1e-12 && f.rms_residual < 1e-12,
            "{f:?}"
        );
        // Fixed at 0 instead: k = Σxy/Σx² = (12+28+100)/(1+4+25) = 140/30.
        let f = fit_slope(&pts, 0.0).unwrap();
        assert!((f.scale - 140.0 / 30.0).abs() < 1e-12, "{f:?}");
        assert!(fit_slope(&[(0.0, 1.0)], 0.0).is_none());
    }

    #[test]
    fn one_distinct_x_cannot_be_fitted() {
        assert!(fit_line(&[(5.0, 1.0), (5.0, 2.0)]).is_none());
        assert!(fit_line(&[(5.0, 1.0)]).is_none());
    }

    #[test]
    fn percentiles_are_nearest_rank_and_errors_are_relative_to_the_bill() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(crate::number::percentile(&v, 50.0), 5.0);
        assert_eq!(crate::number::percentile(&v, 90.0), 9.0);
        let s = error_stats(&[(100, 110), (200, 190), (0, 5), (50, 50)]);
        assert_eq!(s.requests, 3);
        assert_eq!(s.median_abs_pct, 5.0);
        assert_eq!(s.p90_abs_pct, 10.0);
        assert_eq!(s.mean_pct, round((10.0 - 5.0 + 0.0) / 3.0, 4));
        assert_eq!((s.billed_tokens, s.modeled_tokens), (350, 350));
    }
}
