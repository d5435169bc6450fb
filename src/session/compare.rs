//! Billed vs modeled: each billed request paired with the simulator's request for it (same
//! agent, turn and position, in the mode the session really ran), the unknowns fitted from
//! the pairs, and the error of the model against the bill.

use crate::counter::CounterKind;
use std::collections::{BTreeMap, HashMap};

use super::convert::BilledRequest;
use super::fit::{self, fit_intercept, fit_line, fit_slope};
use crate::number::plural;
use crate::simulate::RequestRow;
use crate::simulate::calibration::{Calibration, HeldOut, scale_problem, system_prompt_problem};

/// One billed request and the simulator's request for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub agent: usize,
    /// Its position in the session's billed requests.
    pub request: usize,
    /// Which session of an import it belongs to (held-out validation keeps sessions whole).
    pub session: usize,
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
    /// Requests an agent's fixed prefix was measured on: not compared.
    pub anchored: usize,
    /// Requests of a redacted log (its text replaced by placeholders): not compared.
    pub redacted: usize,
}

impl Alignment {
    /// A redacted log's requests, none compared: the model would be set against text it
    /// never saw.
    pub fn redacted(billed: &[BilledRequest]) -> Alignment {
        Alignment {
            redacted: billed.iter().filter(|b| !b.warmup).count(),
            ..Alignment::default()
        }
    }
}

/// Pairs billed requests with the rows of `mode` (`eager` or `deferred`) of one replay: a
/// turn is compared only when the replay sent as many requests in it as the session did (one
/// more in a turn the user interrupted or the log cut after calls: the replay sends the
/// closing reply the log never billed). Warm-up
/// requests are not part of the conversation and are neither paired nor counted unpaired;
/// anchors (a measured prefix) are counted apart.
pub fn align(billed: &[BilledRequest], rows: &[RequestRow], mode: &str) -> Alignment {
    let mut by_turn: HashMap<(usize, usize), Vec<&RequestRow>> = HashMap::new();
    for r in rows.iter().filter(|r| r.mode.name() == mode) {
        by_turn.entry((r.agent, r.turn)).or_default().push(r);
    }
    let mut out = Alignment::default();
    for (i, b) in billed.iter().enumerate().filter(|(_, b)| !b.warmup) {
        if b.anchor {
            out.anchored += 1;
            continue;
        }
        let row = match (b.agent, b.turn) {
            (Some(a), Some(t)) => by_turn
                .get(&(a, t))
                .filter(|rs| rs.len() == b.of || ((b.interrupted || b.cut) && rs.len() == b.of + 1))
                .map(|rs| rs[b.index]),
            _ => None,
        };
        match row {
            Some(r) => out.pairs.push(Pair {
                agent: r.agent,
                request: i,
                session: 0,
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

/// Unknowns of the fit: the system prompt and the counter's scale.
pub const PARAMETERS: usize = 2;

/// Fewest main-agent requests a fit is trusted on; below, the fit is still made (and applied
/// when it does better held out) but carries a warning.
pub const MIN_REQUESTS: usize = 20;

/// Fewest main-agent requests held-out validation is attempted on: every training set of
/// [`FOLDS`]-fold cross-validation then has more requests than parameters.
pub const MIN_VALIDATED: usize = 2 * PARAMETERS;

/// Folds of the cross-validation (fewer when there are fewer requests or sessions).
pub const FOLDS: usize = 5;

/// Fewest sessions (with main-agent requests) folds are made of whole sessions: a fit is
/// then judged on sessions it never saw. Fewer: folds of requests.
pub const MIN_SESSIONS: usize = 3;

/// How requests are held out, as reports name it.
pub const HELD_OUT_BY_REQUEST: &str =
    "5-fold cross-validation (request i held out in fold i mod 5)";
pub const HELD_OUT_BY_SESSION: &str =
    "cross-validation by session (every request of session j held out in fold j mod 5)";

/// The values of one fit, before validation.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fitted {
    /// System prompt + preamble, provider tokens.
    intercept: f64,
    scale: f64,
    r2: f64,
    rms: f64,
    constrained: bool,
    /// The subagents' intercept at that scale, when subagent requests were given.
    sub_intercept: Option<f64>,
    main: usize,
    subs: usize,
}

impl Fitted {
    /// The billed prompt this fit predicts for a pair.
    fn predict(&self, p: &Pair) -> f64 {
        let a = if p.agent > 0 {
            self.sub_intercept.unwrap_or(self.intercept)
        } else {
            self.intercept
        };
        a + self.scale * p.counted as f64
    }
}

/// A line through the main agent's requests gives the scale and the system prompt (the
/// intercept less the preamble); with that scale, the subagents' requests give their prompt.
/// Too few distinct requests for a line: scale 1 and the mean residual as the prompt.
fn fit(pairs: &[Pair], overhead: usize) -> Option<Fitted> {
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
    let (intercept, scale, r2, rms) = if let Some(f) = line {
        (f.intercept, f.scale, f.r2, f.rms_residual)
    } else {
        let a = fit_intercept(&main, 1.0).or_else(|| fit_intercept(&subs, 1.0))?;
        let rss: f64 = main.iter().map(|&(x, y)| (y - a - x).powi(2)).sum();
        let rms = if main.is_empty() {
            0.0
        } else {
            (rss / main.len() as f64).sqrt()
        };
        (a, 1.0, 0.0, rms)
    };
    Some(Fitted {
        intercept,
        scale,
        r2,
        rms,
        constrained,
        // Written as a prompt of at least 0 (`calibrate`): predicted as written.
        sub_intercept: fit_intercept(&subs, scale).map(|a| a.max(overhead as f64)),
        main: main.len(),
        subs: subs.len(),
    })
}

/// Fits one model's calibration from uncalibrated pairs (system prompt 0 or the logged one,
/// scale 1) and decides whether to apply it:
///
/// - fewer main-agent requests than [`PARAMETERS`]: not fitted (under-determined);
/// - a scale that is not positive: not applied (the bills do not grow with what is counted);
/// - fewer than [`MIN_VALIDATED`]: not applied (nothing can be held out to check it);
/// - otherwise every request is predicted by a fit on the other folds ([`cross_validate`]),
///   and the fit is applied only when neither the held-out median nor the 90th-percentile
///   error is above the uncalibrated model's on the same requests (folds of whole sessions
///   when there are [`MIN_SESSIONS`]);
/// - under [`MIN_REQUESTS`], a warning in its notes.
///
/// `None` only without any pair.
pub fn calibrate(
    model: &str,
    counter: CounterKind,
    pairs: &[Pair],
    overhead: usize,
) -> Option<Calibration> {
    if pairs.is_empty() {
        return None;
    }
    let round = |x: f64| crate::number::round(x, 4);
    let main = pairs.iter().filter(|p| p.agent == 0).count();
    let subs = pairs.len() - main;
    let mut notes = Vec::new();
    let refused = |why: String| Calibration {
        model: model.to_string(),
        counter,
        system_prompt_tokens: 0.0,
        subagent_system_prompt_tokens: None,
        constrained: false,
        scale: 1.0,
        tool_overhead_tokens: overhead,
        requests: main,
        r2: 0.0,
        rms_residual_tokens: 0.0,
        subagent_requests: subs,
        applied: false,
        held_out: None,
        notes: vec![why],
    };
    if main < PARAMETERS {
        return Some(refused(format!(
            "not fitted: {} for {PARAMETERS} parameters (under-determined)",
            plural(main, "main-agent request", "main-agent requests")
        )));
    }
    let f = fit(pairs, overhead)?;
    // A value the calibration file would refuse is never written: the bills are not a fit.
    let prompt = (f.intercept - overhead as f64).max(0.0);
    let sub_prompt = f.sub_intercept.map(|a| (a - overhead as f64).max(0.0));
    let out_of_range = [
        ("system prompt", system_prompt_problem(prompt)),
        (
            "subagent system prompt",
            sub_prompt.and_then(system_prompt_problem),
        ),
        ("scale", scale_problem(f.scale)),
    ]
    .into_iter()
    .find_map(|(what, p)| p.map(|p| format!("not fitted: the fitted {what} {p}")));
    if let Some(why) = out_of_range {
        return Some(refused(why));
    }
    let mut applied = true;
    if !(f.scale.is_finite() && f.scale > 0.0) {
        applied = false;
        notes.push(format!(
            "not applied: the fitted scale {} is not positive (the bills do not grow with what the scenarios count)",
            round(f.scale)
        ));
    }
    if main < MIN_REQUESTS {
        notes.push(format!(
            "fitted on {main} main-agent requests, fewer than the {MIN_REQUESTS} a fit is trusted on"
        ));
    }
    let held_out = if main >= MIN_VALIDATED {
        Some(cross_validate(pairs, overhead))
    } else {
        applied = false;
        notes.push(format!(
            "not applied: {main} main-agent requests are too few to hold any out (at least {MIN_VALIDATED})"
        ));
        None
    };
    if let Some(h) = &held_out
        && (h.median_abs_pct > h.uncalibrated_median_abs_pct
            || h.p90_abs_pct > h.uncalibrated_p90_abs_pct)
    {
        applied = false;
        notes.push(format!(
            "not applied: on held-out requests it does worse than none (median {}% vs {}%, p90 {}% vs {}% uncalibrated); the uncalibrated numbers are kept",
            h.median_abs_pct, h.uncalibrated_median_abs_pct, h.p90_abs_pct, h.uncalibrated_p90_abs_pct
        ));
    }
    Some(Calibration {
        model: model.to_string(),
        counter,
        system_prompt_tokens: round(prompt),
        subagent_system_prompt_tokens: sub_prompt.map(round),
        constrained: f.constrained,
        scale: crate::number::round(f.scale, SCALE_DECIMALS),
        tool_overhead_tokens: overhead,
        requests: f.main,
        r2: round(f.r2),
        rms_residual_tokens: round(f.rms),
        subagent_requests: f.subs,
        applied,
        held_out,
        notes,
    })
}

/// Every pair predicted by a fit on the other folds, set against the uncalibrated model on
/// the same requests. With [`MIN_SESSIONS`] sessions or more a fold is whole sessions (session
/// j in fold j mod k), so a fit is judged on sessions it did not see; else request i is in
/// fold i mod k. A training set that cannot be fitted (or fits a scale that is not positive)
/// predicts its fold uncalibrated, as the import would.
fn cross_validate(pairs: &[Pair], overhead: usize) -> HeldOut {
    let main = pairs.iter().filter(|p| p.agent == 0).count();
    let sessions: BTreeMap<usize, usize> = pairs
        .iter()
        .filter(|p| p.agent == 0)
        .map(|p| p.session)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .enumerate()
        .map(|(j, s)| (s, j))
        .collect();
    let by_session = sessions.len() >= MIN_SESSIONS;
    let k = if by_session {
        FOLDS.min(sessions.len())
    } else {
        FOLDS.min(main).max(2)
    };
    // A session with subagent requests only has no rank among the sessions: its own number.
    let fold_of = |i: usize, p: &Pair| {
        if by_session {
            sessions.get(&p.session).copied().unwrap_or(p.session) % k
        } else {
            i % k
        }
    };
    let mut calibrated: Vec<(u64, u64)> = Vec::with_capacity(pairs.len());
    let mut uncalibrated: Vec<(u64, u64)> = Vec::with_capacity(pairs.len());
    for fold in 0..k {
        let train: Vec<Pair> = pairs
            .iter()
            .enumerate()
            .filter(|(i, p)| fold_of(*i, p) != fold)
            .map(|(_, p)| *p)
            .collect();
        let f = fit(&train, overhead).filter(|f| f.scale.is_finite() && f.scale > 0.0);
        for (_, p) in pairs
            .iter()
            .enumerate()
            .filter(|(i, p)| fold_of(*i, p) == fold)
        {
            let predicted = f.map_or(p.modeled as f64, |f| {
                f.predict(p) + overhead_part(p, overhead)
            });
            calibrated.push((p.billed, predicted.max(0.0).round() as u64));
            uncalibrated.push((p.billed, p.modeled as u64));
        }
    }
    let c = fit::error_stats(&calibrated);
    let u = fit::error_stats(&uncalibrated);
    HeldOut {
        method: if by_session {
            HELD_OUT_BY_SESSION
        } else {
            HELD_OUT_BY_REQUEST
        }
        .to_string(),
        folds: k,
        requests: c.requests,
        median_abs_pct: c.median_abs_pct,
        p90_abs_pct: c.p90_abs_pct,
        uncalibrated_median_abs_pct: u.median_abs_pct,
        uncalibrated_p90_abs_pct: u.p90_abs_pct,
    }
}

/// The fitted intercept holds the preamble every request with tools carries (`overhead`);
/// a request whose own preamble differs (none sent) differs by that much.
fn overhead_part(p: &Pair, overhead: usize) -> f64 {
    p.overhead as f64 - overhead as f64
}

/// The scale multiplies sizes of hundreds of thousands of tokens.
const SCALE_DECIMALS: i32 = 6;

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
            request: 0,
            session: 0,
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
        let c = calibrate("m", CounterKind::O200kJson, &pairs, 346).unwrap();
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
        let c = calibrate("m", CounterKind::O200kJson, &pairs, 346).unwrap();
        assert!(c.constrained, "{c:?}");
        assert_eq!(c.system_prompt_tokens, 0.0);
        // Three requests: fitted, but too few to hold any out, so never applied.
        assert!(!c.applied && c.held_out.is_none(), "{c:?}");
        let (sxy, sxx) = pairs.iter().fold((0.0, 0.0), |(a, b), p| {
            let x = p.counted as f64;
            (a + x * (p.billed as f64 - 346.0), b + x * x)
        });
        assert!((c.scale - sxy / sxx).abs() < 1e-6, "{c:?}");
    }

    #[test]
    fn fewer_requests_than_parameters_are_refused() {
        let c = calibrate("m", CounterKind::O200kJson, &[pair(0, 1000, 9000)], 346).unwrap();
        assert!(!c.applied, "{c:?}");
        assert_eq!((c.scale, c.system_prompt_tokens, c.requests), (1.0, 0.0, 1));
        assert!(c.notes[0].contains("under-determined"), "{:?}", c.notes);
        // Two requests fit a line exactly (R² 1): fitted, never applied, said why.
        let two = [pair(0, 1000, 9000), pair(0, 2000, 10_500)];
        let c = calibrate("m", CounterKind::O200kJson, &two, 346).unwrap();
        assert!((c.r2 - 1.0).abs() < 1e-9 && !c.applied, "{c:?}");
        assert!(
            c.notes
                .iter()
                .any(|n| n.contains("too few to hold any out")),
            "{:?}",
            c.notes
        );
        assert!(calibrate("m", CounterKind::O200kJson, &[], 346).is_none());
    }

    /// Bills that follow the counts exactly (billed = counted + preamble) with noise around
    /// them: the uncalibrated model is right on average, a fit can only chase the noise.
    fn noisy(n: usize) -> Vec<Pair> {
        let mut rng = crate::rng::SplitMix64::new(7);
        (0..n)
            .map(|i| {
                let x = 2000 + 400 * i;
                let noise = (rng.unit() - 0.5) * 0.6 * x as f64;
                let mut p = pair(0, x, (x as f64 + 346.0 + noise).max(1.0) as u64);
                p.modeled = x + 346;
                p
            })
            .collect()
    }

    #[test]
    fn a_fit_worse_than_none_on_held_out_requests_is_not_applied() {
        let pairs = noisy(60);
        let c = calibrate("m", CounterKind::O200kJson, &pairs, 346).unwrap();
        let h = c.held_out.as_ref().unwrap();
        assert_eq!((h.folds, h.requests), (5, 60));
        assert!(
            h.median_abs_pct > h.uncalibrated_median_abs_pct
                || h.p90_abs_pct > h.uncalibrated_p90_abs_pct,
            "{h:?}"
        );
        assert!(!c.applied, "{c:?}");
        assert!(
            c.notes.iter().any(|n| n.contains("does worse than none")),
            "{:?}",
            c.notes
        );
    }

    #[test]
    fn a_fit_that_helps_on_held_out_requests_is_applied_and_warned_when_small() {
        // billed = 5,346 + 1.2·x exactly; modeled (uncalibrated) = x + 346.
        let pairs: Vec<Pair> = (0..12)
            .map(|i| {
                let x = 1000 + 900 * i;
                let mut p = pair(0, x, 5346 + (1.2 * x as f64) as u64);
                p.modeled = x + 346;
                p
            })
            .collect();
        let c = calibrate("m", CounterKind::O200kJson, &pairs, 346).unwrap();
        let h = c.held_out.as_ref().unwrap();
        assert!(
            h.p90_abs_pct < 0.01 && h.uncalibrated_median_abs_pct > 10.0,
            "{h:?}"
        );
        assert!(c.applied, "{c:?}");
        assert!(
            c.notes.iter().any(|n| n.contains("fewer than the 20")),
            "{:?}",
            c.notes
        );
        let c = calibrate(
            "m",
            CounterKind::O200kJson,
            &[pairs.clone(), pairs.clone()].concat(),
            346,
        )
        .unwrap();
        assert!(c.applied && c.notes.is_empty(), "{c:?}");
    }

    #[test]
    fn a_fit_the_calibration_file_would_refuse_is_never_written() {
        // Bills 300 times what is counted: a scale no calibration file takes.
        let pairs: Vec<Pair> = (1..=30)
            .map(|i| pair(0, 100 * i, 30_000 * i as u64 + 346))
            .collect();
        let c = calibrate("m", CounterKind::O200kJson, &pairs, 346).unwrap();
        assert!(!c.applied, "{c:?}");
        assert_eq!((c.scale, c.system_prompt_tokens), (1.0, 0.0));
        assert!(
            c.notes[0].contains("not fitted: the fitted scale"),
            "{:?}",
            c.notes
        );
        // A system prompt of 2e7 tokens: past the file's bound too.
        let pairs: Vec<Pair> = (1..=30)
            .map(|i| pair(0, 100 * i, 20_000_000 + 100 * i as u64))
            .collect();
        let c = calibrate("m", CounterKind::O200kJson, &pairs, 346).unwrap();
        assert!(
            !c.applied && c.notes[0].contains("fitted system prompt"),
            "{c:?}"
        );
        // What is written reads back.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("calibration.json");
        let file = crate::simulate::calibration::CalibrationFile {
            calibrations: vec![c],
            path: path.clone(),
        };
        std::fs::write(&path, crate::output::to_json(&file)).unwrap();
        assert_eq!(
            crate::simulate::calibration::CalibrationFile::load(&path).unwrap(),
            file
        );
    }

    #[test]
    fn three_sessions_are_held_out_whole() {
        // Session j bills 3,000·j more than the rest: a fit on the others cannot know it.
        let pairs: Vec<Pair> = (0..30)
            .map(|i| {
                let x = 1000 + 300 * i;
                let mut p = pair(0, x, (346 + x + 3000 * (i % 3)) as u64);
                p.session = i % 3;
                p.modeled = x + 346;
                p
            })
            .collect();
        let h = cross_validate(&pairs, 346);
        assert_eq!((h.method.as_str(), h.folds), (HELD_OUT_BY_SESSION, 3));
        let two: Vec<Pair> = pairs.iter().filter(|p| p.session < 2).copied().collect();
        let h = cross_validate(&two, 346);
        assert_eq!((h.method.as_str(), h.folds), (HELD_OUT_BY_REQUEST, 5));
    }

    #[test]
    fn a_turn_the_log_cut_after_calls_is_paired_up_to_its_last_bill() {
        use crate::session::transcript::Usage;
        let bill = |index: usize, input: u64, cut: bool| BilledRequest {
            agent: Some(0),
            turn: Some(1),
            index,
            of: 2,
            model: None,
            usage: Usage {
                input,
                cache_creation: 0,
                cache_read: 0,
                output: 1,
            },
            interrupted: false,
            warmup: false,
            cut,
            anchor: false,
        };
        let row = |input_tokens: usize| RequestRow {
            turn: 1,
            input_tokens,
            ..RequestRow::default()
        };
        let rows = [row(100), row(200), row(300)];
        // The replay closes the turn with a reply the log never billed.
        let cut = [bill(0, 110, true), bill(1, 210, true)];
        let a = align(&cut, &rows, "eager");
        assert_eq!((a.pairs.len(), a.unaligned), (2, 0));
        assert_eq!(a.pairs[1].modeled, 200);
        let whole = [bill(0, 110, false), bill(1, 210, false)];
        assert_eq!(align(&whole, &rows, "eager").unaligned, 2);
    }
}
