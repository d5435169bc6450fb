//! Repeated runs of the same turns (`--repeat N`): how stable the model is, per mode.
//!
//! For a turn played k times and right c times: its pass rate is c/k; it passes^k (τ-bench's
//! pass^k, "right on every try") when c = k; it passes@k when c ≥ 1; it flips when 0 < c < k.
//! The shares are over the scenario's distinct turns, each with a Wilson 95% interval (the turns
//! are the trials here, so repeats do not narrow the interval). Searches: a query the model sent
//! in two or more runs of one turn is stable when every run returned the same tools.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::result::{Outcome, Repeats, SearchRow, TurnRow};
use super::stats;

/// One mode over the repeated runs of its turns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stability {
    /// Distinct turns (scenario and turn number), each played `runs` times.
    pub turns: usize,
    pub runs: u32,
    /// The mean over turns of (runs right / runs).
    pub pass_rate: f64,
    /// Turns right in every run, and their share with its interval.
    pub pass_all: usize,
    pub pass_hat_k: f64,
    pub pass_hat_k_low: f64,
    pub pass_hat_k_high: f64,
    /// Turns right in at least one run.
    pub pass_any: usize,
    pub pass_at_k: f64,
    pub pass_at_k_low: f64,
    pub pass_at_k_high: f64,
    /// Turns right in some runs and wrong in others.
    pub flipped: usize,
    pub flip_rate: f64,
    pub flip_rate_low: f64,
    pub flip_rate_high: f64,
    /// Queries sent in two or more runs of the same turn, and of those, the ones every run
    /// answered with the same tools.
    pub repeated_queries: usize,
    pub stable_queries: usize,
}

/// One turn over the runs: how many each mode got right.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnPasses {
    pub scenario: String,
    pub turn: usize,
    pub expected: String,
    pub runs: u32,
    pub eager_correct: u32,
    pub deferred_correct: u32,
}

/// The repeats of a set of rows; `None` for a single run.
pub fn repeats(runs: u32, turns: &[TurnRow], searches: &[SearchRow]) -> Option<Repeats> {
    if runs < 2 {
        return None;
    }
    let passes = |mode: &str| -> BTreeMap<(String, usize), u32> {
        let mut m = BTreeMap::new();
        for t in turns.iter().filter(|t| t.mode == mode) {
            *m.entry((t.scenario.clone(), t.turn)).or_insert(0) +=
                u32::from(t.outcome == Outcome::Correct);
        }
        m
    };
    let (eager, deferred) = (passes("eager"), passes("deferred"));
    let expected: BTreeMap<(String, usize), &str> = turns
        .iter()
        .map(|t| ((t.scenario.clone(), t.turn), t.expected.as_str()))
        .collect();
    let per_turn = expected
        .iter()
        .map(|((scenario, turn), expected)| TurnPasses {
            scenario: scenario.clone(),
            turn: *turn,
            expected: (*expected).to_string(),
            runs,
            eager_correct: eager.get(&(scenario.clone(), *turn)).copied().unwrap_or(0),
            deferred_correct: deferred
                .get(&(scenario.clone(), *turn))
                .copied()
                .unwrap_or(0),
        })
        .collect();
    Some(Repeats {
        eager: stability(runs, &eager, searches, "eager"),
        deferred: stability(runs, &deferred, searches, "deferred"),
        turns: per_turn,
    })
}

fn stability(
    runs: u32,
    passes: &BTreeMap<(String, usize), u32>,
    searches: &[SearchRow],
    mode: &str,
) -> Stability {
    let n = passes.len();
    let share = |k: usize| {
        let (low, high) = stats::wilson(k, n).unwrap_or((0.0, 0.0));
        let p = if n == 0 { 0.0 } else { k as f64 / n as f64 };
        (round4(p), round4(low), round4(high))
    };
    let all = passes.values().filter(|&&c| c == runs).count();
    let any = passes.values().filter(|&&c| c > 0).count();
    let flipped = passes.values().filter(|&&c| c > 0 && c < runs).count();
    let rate = if n == 0 {
        0.0
    } else {
        passes
            .values()
            .map(|&c| f64::from(c) / f64::from(runs))
            .sum::<f64>()
            / n as f64
    };
    let (repeated_queries, stable_queries) = query_stability(searches, mode);
    let (pass_hat_k, pass_hat_k_low, pass_hat_k_high) = share(all);
    let (pass_at_k, pass_at_k_low, pass_at_k_high) = share(any);
    let (flip_rate, flip_rate_low, flip_rate_high) = share(flipped);
    Stability {
        turns: n,
        runs,
        pass_rate: round4(rate),
        pass_all: all,
        pass_hat_k,
        pass_hat_k_low,
        pass_hat_k_high,
        pass_any: any,
        pass_at_k,
        pass_at_k_low,
        pass_at_k_high,
        flipped,
        flip_rate,
        flip_rate_low,
        flip_rate_high,
        repeated_queries,
        stable_queries,
    }
}

/// One query of one turn: the runs that sent it and what each search returned.
#[derive(Default)]
struct QueryAnswers<'a> {
    runs: Vec<u32>,
    returned: Vec<&'a str>,
}

/// (queries sent in ≥ 2 runs of one turn, those answered the same in every run).
fn query_stability(searches: &[SearchRow], mode: &str) -> (usize, usize) {
    let mut answers: BTreeMap<(&str, usize, &str), QueryAnswers<'_>> = BTreeMap::new();
    for s in searches.iter().filter(|s| s.mode == mode) {
        let e = answers
            .entry((s.scenario.as_str(), s.turn, s.query.as_str()))
            .or_default();
        if !e.runs.contains(&s.run) {
            e.runs.push(s.run);
        }
        e.returned.push(s.returned.as_str());
    }
    let repeated: Vec<&QueryAnswers<'_>> = answers.values().filter(|a| a.runs.len() >= 2).collect();
    let stable = repeated
        .iter()
        .filter(|a| a.returned.iter().all(|r| *r == a.returned[0]))
        .count();
    (repeated.len(), stable)
}

fn round4(x: f64) -> f64 {
    crate::number::round(x, 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(mode: &str, turn: usize, run: u32, outcome: Outcome) -> TurnRow {
        TurnRow {
            scenario: "s".into(),
            mode: mode.into(),
            run,
            turn,
            outcome,
            ..TurnRow::default()
        }
    }

    #[test]
    fn pass_hat_k_pass_at_k_and_flips_count_turns() {
        use Outcome::{Correct, WrongTool};
        // Turn 1 right in 3 of 3, turn 2 in 1 of 3, turn 3 in 0 of 3 (deferred); eager always right.
        let mut rows = Vec::new();
        for run in 1..=3 {
            rows.push(turn("deferred", 1, run, Correct));
            rows.push(turn(
                "deferred",
                2,
                run,
                if run == 2 { Correct } else { WrongTool },
            ));
            rows.push(turn("deferred", 3, run, WrongTool));
            for t in 1..=3 {
                rows.push(turn("eager", t, run, Correct));
            }
        }
        let r = repeats(3, &rows, &[]).unwrap();
        let d = &r.deferred;
        assert_eq!((d.turns, d.pass_all, d.pass_any, d.flipped), (3, 1, 2, 1));
        assert_eq!(d.pass_rate, round4((1.0 + 1.0 / 3.0) / 3.0));
        assert_eq!(d.pass_hat_k, 0.3333);
        assert_eq!(d.pass_at_k, 0.6667);
        assert!(d.flip_rate_low < d.flip_rate && d.flip_rate < d.flip_rate_high);
        assert_eq!((r.eager.pass_all, r.eager.flipped), (3, 0));
        assert_eq!(r.turns[1].deferred_correct, 1);
        assert_eq!(r.turns[1].eager_correct, 3);
        assert!(repeats(1, &rows, &[]).is_none());
    }

    #[test]
    fn a_query_is_stable_when_every_run_returned_the_same_tools() {
        let row = |run: u32, query: &str, returned: &str| SearchRow {
            scenario: "s".into(),
            mode: "deferred".into(),
            run,
            turn: 1,
            query: query.into(),
            returned: returned.into(),
        };
        let rows = [
            row(1, "read file", "a b"),
            row(2, "read file", "a b"),
            row(1, "git log", "c"),
            row(2, "git log", "d"),
            row(1, "only once", "e"),
        ];
        assert_eq!(query_stability(&rows, "deferred"), (2, 1));
        assert_eq!(query_stability(&rows, "eager"), (0, 0));
    }
}
