//! The refusal curve (`eval --thresholds`): what a score threshold would buy. A scorer that
//! returns nothing below a threshold stops offering tools for questions no tool answers
//! (`no-match` queries) and loses the right tools that score below it on the others. Each
//! point of the curve drops every result scoring below `threshold` and reports
//! - `false_positive_rate`: the no-match queries still answered (a result at or above it);
//! - `answered`: the other queries still answered;
//! - `recall@k`: recall of the other queries counting only expected tools in the top k that
//!   score at or above the threshold.
//!
//! Thresholds are read off the scores themselves: none, then the no-match queries' top scores
//! at each tenth (so the false-positive rate falls by about a tenth a point), then just above
//! the highest (no false positive left). Without no-match queries, the answered queries' top
//! scores at each tenth. A query whose ranking is empty (nothing matched) is refused at every
//! threshold.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::metrics::{Metric, round_metric};
use super::result::QueryResult;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdPoint {
    /// Least score a result keeps; `null`: no threshold (the scorer as it is).
    pub threshold: Option<f64>,
    /// Share of the no-match queries that still get a result (`null` without such queries).
    pub false_positive_rate: Option<f64>,
    /// Share of the other queries that still get a result.
    pub answered: f64,
    /// recall@k of the other queries with results below the threshold dropped.
    pub recall: IndexMap<Metric, f64>,
}

/// The curve over one scorer's per-query rows (`scores` beside `top`, `ranks` of the
/// expected tools; a row with no expected tool is a no-match query).
pub fn curve(rows: &[QueryResult], ks: &[usize]) -> Vec<ThresholdPoint> {
    let (no_match, answerable): (Vec<&QueryResult>, Vec<&QueryResult>) =
        rows.iter().partition(|r| r.expected.is_empty());
    let source = if no_match.is_empty() {
        &answerable
    } else {
        &no_match
    };
    let mut tops: Vec<f64> = source
        .iter()
        .filter_map(|r| r.scores.first().copied())
        .collect();
    tops.sort_by(f64::total_cmp);
    let mut thresholds: Vec<Option<f64>> = vec![None];
    if let (Some(_), Some(&max)) = (tops.first(), tops.last()) {
        for tenth in 1..10 {
            let at = (tops.len() * tenth).div_ceil(10).saturating_sub(1);
            thresholds.push(Some(tops[at]));
        }
        if !no_match.is_empty() {
            thresholds.push(Some(max.next_up()));
        }
    }
    thresholds.dedup();
    thresholds
        .into_iter()
        .map(|t| point(t, &no_match, &answerable, ks))
        .collect()
}

fn point(
    threshold: Option<f64>,
    no_match: &[&QueryResult],
    answerable: &[&QueryResult],
    ks: &[usize],
) -> ThresholdPoint {
    let keeps = |score: f64| threshold.is_none_or(|t| score >= t);
    let answered = |r: &&&QueryResult| r.scores.first().is_some_and(|&s| keeps(s));
    let share = |n: usize, of: usize| {
        if of == 0 {
            0.0
        } else {
            round_metric(n as f64 / of as f64)
        }
    };
    let recall = ks
        .iter()
        .map(|&k| {
            let sum: f64 = answerable
                .iter()
                .map(|r| {
                    let kept = r
                        .ranks
                        .iter()
                        .flatten()
                        .filter(|&&rank| {
                            rank <= k && r.scores.get(rank - 1).is_some_and(|&s| keeps(s))
                        })
                        .count();
                    kept as f64 / r.ranks.len().max(1) as f64
                })
                .fold(0.0, |a, b| a + b);
            let mean = if answerable.is_empty() {
                0.0
            } else {
                sum / answerable.len() as f64
            };
            (Metric::Recall(k), round_metric(mean))
        })
        .collect();
    ThresholdPoint {
        threshold,
        false_positive_rate: (!no_match.is_empty())
            .then(|| share(no_match.iter().filter(answered).count(), no_match.len())),
        answered: share(answerable.iter().filter(answered).count(), answerable.len()),
        recall,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(expected: usize, ranks: &[Option<usize>], scores: &[f64]) -> QueryResult {
        QueryResult {
            id: String::new(),
            query: String::new(),
            class: "".into(),
            expected: vec!["x".to_string(); expected],
            ranks: ranks.to_vec(),
            top: vec![String::new(); scores.len()],
            scores: scores.to_vec(),
            metrics: IndexMap::new(),
            refused: None,
        }
    }

    #[test]
    fn the_curve_trades_false_positives_for_recall() {
        let rows = [
            row(0, &[], &[0.5, 0.2]),
            row(0, &[], &[0.3]),
            row(0, &[], &[]), // nothing matched: refused at every threshold
            row(1, &[Some(1)], &[0.9, 0.1]),
            row(1, &[Some(2)], &[0.6, 0.4]),
            row(2, &[Some(1), None], &[0.35]),
        ];
        let c = curve(&rows, &[1, 5]);
        let first = &c[0];
        assert_eq!(first.threshold, None);
        assert_eq!(first.false_positive_rate, Some(round_metric(2.0 / 3.0)));
        assert_eq!(first.answered, 1.0);
        assert_eq!(
            first.recall[&Metric::Recall(1)],
            round_metric((1.0 + 0.0 + 0.5) / 3.0)
        );
        assert_eq!(
            first.recall[&Metric::Recall(5)],
            round_metric((1.0 + 1.0 + 0.5) / 3.0)
        );
        // Tenths of the two no-match tops (0.3, 0.5): 0.3 up to the fifth, then 0.5.
        let ts: Vec<Option<f64>> = c.iter().map(|p| p.threshold).collect();
        assert_eq!(ts, [None, Some(0.3), Some(0.5), Some(0.5f64.next_up())]);
        let at = |t: usize| &c[t];
        assert_eq!(at(1).false_positive_rate, Some(round_metric(2.0 / 3.0)));
        assert_eq!(at(2).false_positive_rate, Some(round_metric(1.0 / 3.0)));
        // At 0.5: query 5's expected tool (0.4) and query 6's (0.35) are dropped.
        assert_eq!(at(2).recall[&Metric::Recall(5)], round_metric(1.0 / 3.0));
        assert_eq!(at(2).answered, round_metric(2.0 / 3.0));
        let last = at(3);
        assert_eq!(last.false_positive_rate, Some(0.0));
        assert_eq!(last.recall[&Metric::Recall(5)], round_metric(1.0 / 3.0));
    }

    #[test]
    fn without_no_match_queries_the_curve_follows_the_answered_tops() {
        let rows = [row(1, &[Some(1)], &[2.0]), row(1, &[None], &[1.0])];
        let c = curve(&rows, &[1]);
        assert!(c.iter().all(|p| p.false_positive_rate.is_none()));
        assert_eq!(c.last().unwrap().threshold, Some(2.0));
        assert_eq!(c.last().unwrap().answered, 0.5);
        assert!(curve(&[], &[1]).len() == 1);
    }
}
