//! The latency model (a model, not a measurement of any provider): a request's time to first
//! token is its overhead plus uncached prefill plus cached prefill plus client-side work
//! (search, definition fetches); its duration adds the decode of its output. Rates come from
//! the model profile and are printed with the results.

use super::profile::Profile;

/// Modeled time to first token, ms.
pub fn ttft_ms(profile: &Profile, input: usize, cached: usize, client_ms: f64) -> f64 {
    let uncached = input.saturating_sub(cached) as f64;
    profile.request_overhead_ms
        + uncached / profile.prefill_tokens_per_s * 1000.0
        + cached as f64 / profile.cached_prefill_tokens_per_s * 1000.0
        + client_ms
}

/// Modeled time until the last output token, ms.
pub fn duration_ms(profile: &Profile, ttft: f64, output: usize) -> f64 {
    ttft + output as f64 / profile.decode_tokens_per_s * 1000.0
}

/// Client-side cache of fetched definitions: a definition fetched within the TTL is reused.
#[derive(Debug, Clone, Default)]
pub struct FetchCache {
    fetched_at: std::collections::HashMap<usize, f64>,
}

impl FetchCache {
    /// Marks `tools` as needed at time `now_s`; returns the fetch latency to add (one
    /// parallel fetch when any of them is missing or stale, else 0).
    pub fn fetch(&mut self, profile: &Profile, now_s: f64, tools: &[usize]) -> f64 {
        if profile.definition_fetch_ms <= 0.0 {
            return 0.0;
        }
        let mut needed = false;
        for &t in tools {
            let fresh = self
                .fetched_at
                .get(&t)
                .is_some_and(|&at| now_s - at <= profile.definition_ttl_s);
            if !fresh {
                needed = true;
                self.fetched_at.insert(t, now_s);
            }
        }
        if needed {
            profile.definition_fetch_ms
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::profile;

    #[test]
    fn prefill_rates_apply_to_uncached_and_cached_tokens() {
        let mut p = profile::find("claude-sonnet-4.5").unwrap();
        p.request_overhead_ms = 100.0;
        p.prefill_tokens_per_s = 1000.0;
        p.cached_prefill_tokens_per_s = 10_000.0;
        p.decode_tokens_per_s = 50.0;
        // 1000 uncached = 1000 ms, 10000 cached = 1000 ms, + 5 ms client.
        let t = ttft_ms(&p, 11_000, 10_000, 5.0);
        assert!((t - 2105.0).abs() < 1e-9);
        assert!((duration_ms(&p, t, 50) - 3105.0).abs() < 1e-9);
    }

    #[test]
    fn fetches_are_cached_for_the_ttl() {
        let mut p = profile::find("claude-sonnet-4.5").unwrap();
        p.definition_fetch_ms = 80.0;
        p.definition_ttl_s = 60.0;
        let mut c = FetchCache::default();
        assert_eq!(c.fetch(&p, 0.0, &[1, 2]), 80.0);
        assert_eq!(c.fetch(&p, 30.0, &[2]), 0.0);
        assert_eq!(c.fetch(&p, 61.0, &[1]), 80.0);
    }
}
