//! Billed vs modeled: each billed request paired with the simulator's request for it (same
//! agent, turn and position, in the mode the session really ran), the unknowns fitted from
//! the pairs, and the error of the model against the bill.

use std::collections::{BTreeMap, HashMap};

use super::convert::BilledRequest;
use super::fit::{self, fit_intercept, fit_line};
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
/// turn is compared only when the replay sent as many requests in it as the session did.
pub fn align(billed: &[BilledRequest], rows: &[RequestRow], mode: &str) -> Alignment {
    let mut by_turn: HashMap<(usize, usize), Vec<&RequestRow>> = HashMap::new();
    for r in rows.iter().filter(|r| r.mode.name() == mode) {
        by_turn.entry((r.agent, r.turn)).or_default().push(r);
    }
    let mut out = Alignment::default();
    for b in billed {
        let row = match (b.agent, b.turn) {
            (Some(a), Some(t)) => by_turn
                .get(&(a, t))
                .filter(|rs| rs.len() == b.of)
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
    let (intercept, scale, r2, rms) = match fit_line(&main) {
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
        system_prompt_tokens: round(intercept - overhead as f64),
        subagent_system_prompt_tokens: fit_intercept(&subs, scale)
            .map(|a| round(a - overhead as f64)),
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
