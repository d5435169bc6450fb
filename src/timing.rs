//! The one latency harness. `eval`, `simulate`, the report's sweep and the benches time
//! searches here, with a clock the caller passes in (the binary passes a monotonic clock,
//! tests a fake one), and summarize the times with one percentile definition (nearest rank).
//! Measured times are never part of a deterministic output unless the caller asks for them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::search::{Scorer, SearchOutcome, SearchRequest};

/// A monotonic clock: the time elapsed since some fixed origin.
pub type Clock<'a> = &'a dyn Fn() -> Duration;

/// One search and how long `Scorer::search` took to answer it (a refusal is timed too: the
/// time it took to refuse).
#[derive(Debug, Clone)]
pub struct Timed {
    pub outcome: Result<SearchOutcome, crate::search::SearchError>,
    pub elapsed: Duration,
}

/// Times one search; only `Scorer::search` is inside the two clock readings.
pub fn time_search(scorer: &dyn Scorer, request: &SearchRequest<'_>, clock: Clock<'_>) -> Timed {
    let start = clock();
    let outcome = scorer.search(request);
    let elapsed = clock().saturating_sub(start);
    Timed { outcome, elapsed }
}

/// Times each request in order.
pub fn time_searches(
    scorer: &dyn Scorer,
    requests: &[SearchRequest<'_>],
    clock: Clock<'_>,
) -> Vec<Timed> {
    requests
        .iter()
        .map(|r| time_search(scorer, r, clock))
        .collect()
}

/// Microseconds rounded to 0.1, for output.
pub fn micros(d: Duration) -> f64 {
    (d.as_nanos() as f64 / 100.0).round() / 10.0
}

/// Measured search times in microseconds (a measurement: varies run to run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyUs {
    /// Searches timed.
    #[serde(default)]
    pub searches: usize,
    pub p50: f64,
    pub p95: f64,
    #[serde(default)]
    pub max: f64,
}

impl LatencyUs {
    /// Summarizes durations in any order.
    pub fn of(durations: &[Duration]) -> LatencyUs {
        let mut sorted = durations.to_vec();
        sorted.sort_unstable();
        LatencyUs {
            searches: sorted.len(),
            p50: micros(crate::number::percentile(&sorted, 50.0)),
            p95: micros(crate::number::percentile(&sorted, 95.0)),
            max: micros(sorted.last().copied().unwrap_or_default()),
        }
    }

    /// Summarizes times given in microseconds (an external scorer's own `elapsed_us`).
    pub fn of_micros(us: &[f64]) -> LatencyUs {
        let mut sorted: Vec<f64> = us.iter().copied().filter(|x| x.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let at = |p: f64| {
            if sorted.is_empty() {
                return 0.0;
            }
            let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
            (sorted[rank.clamp(1, sorted.len()) - 1] * 10.0).round() / 10.0
        };
        LatencyUs {
            searches: sorted.len(),
            p50: at(50.0),
            p95: at(95.0),
            max: at(100.0),
        }
    }

    /// Summarizes the times of timed searches.
    pub fn of_timed(timed: &[Timed]) -> LatencyUs {
        LatencyUs::of(&timed.iter().map(|t| t.elapsed).collect::<Vec<_>>())
    }
}

/// A fake clock for tests: the n-th reading is `step × n`, so every timed search takes
/// exactly `step`.
pub fn ticking_clock(step: Duration) -> impl Fn() -> Duration {
    let readings = std::cell::Cell::new(0u32);
    move || {
        let n = readings.get();
        readings.set(n + 1);
        step * n
    }
}

/// The machine latencies were measured on, for the report beside them: the CPU model (Linux's
/// `/proc/cpuinfo`; the architecture elsewhere) and the logical CPUs this process may use.
pub fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines().find_map(|l| {
                l.strip_prefix("model name")?
                    .split_once(':')
                    .map(|(_, v)| v.trim().to_string())
            })
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    format!("{model}, {cpus} logical CPUs")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let v: Vec<Duration> = (1..=20).map(Duration::from_micros).collect();
        assert_eq!(
            crate::number::percentile(&v, 50.0),
            Duration::from_micros(10)
        );
        assert_eq!(
            crate::number::percentile(&v, 95.0),
            Duration::from_micros(19)
        );
        assert_eq!(
            crate::number::percentile::<Duration>(&[], 95.0),
            Duration::ZERO
        );
        assert_eq!(micros(Duration::from_nanos(1234)), 1.2);
        let ten: Vec<Duration> = (1..=10).rev().map(Duration::from_micros).collect();
        let s = LatencyUs::of(&ten);
        assert_eq!((s.searches, s.p50, s.p95, s.max), (10, 5.0, 10.0, 10.0));
        assert_eq!(LatencyUs::of(&[]), LatencyUs::default());
    }

    #[test]
    fn a_ticking_clock_times_every_search_alike() {
        let clock = ticking_clock(Duration::from_micros(3));
        assert_eq!(clock(), Duration::ZERO);
        assert_eq!(clock(), Duration::from_micros(3));
        assert_eq!(clock(), Duration::from_micros(6));
    }
}
