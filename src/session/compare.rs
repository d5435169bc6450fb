//! Billed vs modeled: each billed request paired with the simulator's request for it (same
//! agent, turn and position, in the mode the session really ran), the unknowns fitted from
//! the pairs, and the error of the model against the bill.

use std::collections::{BTreeMap, HashMap};

use super::convert::BilledRequest;
use super::fit::{self, fit_intercept, fit_line, fit_slope};
use crate::simulate::RequestRow;
use crate::simulate::calibration::Calibration;

/// One billed request and the simulator's request for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub agent: usize,
    /// The billed prompt.
    pub billed: u64,
    /// The simulator's input tokens.
    pub modeled: usize,
    /// The same minus the system prompt and the tool-use preamble: what the counter counted.
    pub counted: usize,
    pub overhead: usize,
}

/// Pairs and the billed requests left without a partner.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Alignment {
    pub pairs: Vec<Pair>,
    /// Billed requests with no simulator request: an unlinked subagent, or a turn whose
    /// request count differs between the log and the replay (an interrupted turn, a call the
    /// replay could not make as logged).
    pub unaligned: usize,
}

/// Pairs billed requests with the rows of `mode` (`eager` or `deferred`) of one replay: a
/// turn is compared only when the replay sent as many requests in it as the session did (one
/// more in a turn the user interrupted: the replay sends the reply the user cut off). Warm-up
/// requests are not part of the conversation and are neither paired nor counted unpaired.
pub fn align(billed: &[BilledRequest], rows: &[RequestRow], mode: &str) -> Alignment {
    let mut by_turn: HashMap<(usize, usize), Vec<&RequestRow>> = HashMap::new();
    for r in rows.iter().filter(|r| r.mode.name() == mode) {
        by_turn.entry((r.agent, r.turn)).or_default().push(r);
    }
    let mut out = Alignment::default();
    for b in billed.iter().filter(|b| !b.warmup) {
        let row = match (b.agent, b.turn) {
            (Some(a), Some(t)) => by_turn
                .get(&(a, t))
                .filter(|rs| rs.len() == b.of || (b.interrupted && rs.len() == b.of + 1))
                .map(|rs| rs[b.index]),
            _ => None,
        };
        match row {
            Some(r) => out.pairs.push(Pair {
                agent: r.agent,
                billed: b.usage.prompt(),
                modeled: r.input_tokens,
                counted: r.input_tokens - r.parts.system - r.parts.tool_overhead,
                overhead: r.parts.tool_overhead,
            }),
            None => out.unaligned += 1,
        }
    }
    out
}

/// Fits one model's calibration from uncalibrated pairs (system prompt 0, scale 1): a line
/// through the main agent's requests gives the scale and the system prompt (the intercept
/// less the preamble); with that scale, the subagents' requests give their prompt.
/// Too few distinct requests for a line: scale 1 and the mean residual as the prompt.
pub fn calibrate(
    model: &str,
    counter: &str,
    pairs: &[Pair],
    overhead: usize,
) -> Option<Calibration> {
    let point = |p: &Pair| (p.counted as f64, p.billed as f64);
    let main: Vec<(f64, f64)> = pairs.iter().filter(|p| p.agent == 0).map(point).collect();
    let subs: Vec<(f64, f64)> = pairs.iter().filter(|p| p.agent > 0).map(point).collect();
    // A system prompt cannot be negative: when the free line's intercept falls below the
    // preamble, the best fit with the prompt at 0 is the line through (0, O).
    let free = fit_line(&main);
    let constrained = free.is_some_and(|f| f.intercept < overhead as f64);
    let line = if constrained {
        fit_slope(&main, overhead as f64)
    } else {
        free
    };
    let (intercept, scale, r2, rms) = match line {
        Some(f) => (f.intercept, f.scale, f.r2, f.rms_residual),
        None => {
            let a = fit_intercept(&main, 1.0).or_else(|| fit_intercept(&subs, 1.0))?;
            let rss: f64 = main.iter().map(|&(x, y)| (y - a - x).powi(2)).sum();
            let rms = if main.is_empty() {
                0.0
            } else {
                (rss / main.len() as f64).sqrt()
            };
            (a, 1.0, 0.0, rms)
        }
    };
    let round = |x: f64| crate::simulate::result::round(x, 4);
    Some(Calibration {
        model: model.to_string(),
        counter: counter.to_string(),
        system_prompt_tokens: round((intercept - overhead as f64).max(0.0)),
        subagent_system_prompt_tokens: fit_intercept(&subs, scale)
            .map(|a| round((a - overhead as f64).max(0.0))),
        constrained,
        scale: round_scale(scale),
        tool_overhead_tokens: overhead,
        requests: main.len(),
        r2: round(r2),
        rms_residual_tokens: round(rms),
        subagent_requests: subs.len(),
    })
}

/// Six decimals: the scale multiplies sizes of hundreds of thousands of tokens.
fn round_scale(x: f64) -> f64 {
    crate::simulate::result::round(x, 6)
}

/// Error of calibrated pairs, per model of a set of sessions.
pub fn error_by_model(pairs: &BTreeMap<String, Vec<Pair>>) -> BTreeMap<String, fit::ErrorStats> {
    pairs
        .iter()
        .map(|(m, ps)| {
            let v: Vec<(u64, u64)> = ps.iter().map(|p| (p.billed, p.modeled as u64)).collect();
            (m.clone(), fit::error_stats(&v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(agent: usize, counted: usize, billed: u64) -> Pair {
        Pair {
            agent,
            billed,
            modeled: counted,
            counted,
            overhead: 346,
        }
    }

    #[test]
    fn the_main_line_gives_prompt_and_scale_and_subagents_their_prompt() {
        // Main: billed = 5,346 + 1.2·x; subagents: 2,346 + 1.2·x.
        let mut pairs: Vec<Pair> = [1000, 4000, 9000, 20_000]
            .iter()
            .map(|&x| pair(0, x, 5346 + (1.2 * x as f64) as u64))
            .collect();
        pairs.extend(
            [3000, 7000]
                .iter()
                .map(|&x| pair(1, x, 2346 + (1.2 * x as f64) as u64)),
        );
        let c = calibrate("m", "o200k_base", &pairs, 346).unwrap();
        assert!((c.system_prompt_tokens - 5000.0).abs() < 1e-6, "{c:?}");
        assert!((c.scale - 1.2).abs() < 1e-9, "{c:?}");
        assert_eq!(c.subagent_system_prompt_tokens, Some(2000.0));
        assert!(!c.constrained);
        assert_eq!((c.requests, c.subagent_requests), (4, 2));
    }

    #[test]
    fn a_negative_prompt_is_fixed_at_zero_and_the_scale_refitted() {
        // billed = 100 + 0.9·x: the free intercept (100) is below the 346-token preamble.
        let pairs: Vec<Pair> = [1000, 5000, 12_000]
            .iter()
            .map(|&x| pair(0, x, 100 + (0.9 * x as f64) as u64))
            .collect();
        let c = calibrate("m", "o200k_base", &pairs, 346).unwrap();
        assert!(c.constrained, "{c:?}");
        assert_eq!(c.system_prompt_tokens, 0.0);
        let (sxy, sxx) = pairs.iter().fold((0.0, 0.0), |(a, b), p| {
            let x = p.counted as f64;
            (a + x * (p.billed as f64 - 346.0), b + x * x)
        });
        assert!((c.scale - sxy / sxx).abs() < 1e-6, "{c:?}");
    }
}
