//! The one seeded random number generator of the project. Every random choice (generated
//! catalogs, scenario failure rates, bootstrap resamples) draws from it, so a seed fixes the output.

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and fully specified, so the same seed
/// gives the same stream everywhere.
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

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        // Multiply-shift: unbiased enough for picking words, and exact for the same seed.
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Index drawn with the given weights.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut r = self.below(total as usize) as u32;
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        weights.len() - 1
    }

    /// A draw from an empirical distribution given by quantiles `(p, value)`, interpolated
    /// linearly between them (inverse-CDF sampling).
    pub fn quantile(&mut self, table: &[(f64, f64)]) -> f64 {
        let u = self.unit();
        for w in table.windows(2) {
            let ((p0, v0), (p1, v1)) = (w[0], w[1]);
            if u <= p1 {
                return v0 + (v1 - v0) * (u - p0) / (p1 - p0);
            }
        }
        table.last().map_or(0.0, |t| t.1)
    }
}
