//! Compares two `eval --format json` results: per scorer present in both and per metric, the
//! baseline, the candidate and their difference (candidate − baseline).
//!
//! When both files carry `per_query` rows for a scorer (`eval --per-query`), queries are paired
//! by id and each difference gets a 95% paired bootstrap interval of the mean per-query
//! difference and the p-value of a paired randomization (sign-flip) test (10,000 resamples
//! each, fixed seeds), and the queries that got worse or better on the checked metric are
//! listed. Queries without the metric (no-match queries have only `refusal`) are left out of
//! its interval and test. Without rows only the aggregates are compared, and the result
//! says so (`paired: false`).
//!
//! A regression is a difference below −max_drop on the checked metric (rounded to 6 decimals
//! first, so 0.51 → 0.50 with max_drop 0.01 is not a regression however floats round).

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::bootstrap::{self, mean_intervals, sign_flip_p_values};
use super::metrics::round_metric;
use super::result::{EvalResult, QueryResult, ScorerResult, read_eval_result};
use crate::error::{Error, Result};

/// The metric checked when `--metric` is not given.
pub const DEFAULT_METRIC: &str = "recall@5";
/// Tolerated drop when `--max-drop` is not given: one percentage point. Evaluations are
/// deterministic, so any drop is a real change; this tolerance lets a change that trades a
/// few queries pass while a real loss fails.
pub const DEFAULT_MAX_DROP: f64 = 0.01;

/// An eval result and the file it was read from.
#[derive(Debug, Clone)]
pub struct EvalFile {
    pub path: String,
    pub result: EvalResult,
}

impl EvalFile {
    /// Reads an `eval --format json` file through the one eval type.
    pub fn read(path: &Path) -> Result<EvalFile> {
        Ok(EvalFile {
            path: path.display().to_string(),
            result: read_eval_result(path)?,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub baseline: String,
    pub candidate: String,
    /// The metric checked for regressions.
    pub metric: String,
    pub max_drop: f64,
    pub results: Vec<ScorerComparison>,
    /// Scorers that fail the check.
    pub regressions: Vec<String>,
    pub only_in_baseline: Vec<String>,
    pub only_in_candidate: Vec<String>,
    /// Caveats a reader must know (aggregates only, different query sets).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScorerComparison {
    pub scorer: String,
    /// Whether per-query rows were paired (else the intervals are null).
    pub paired: bool,
    /// Queries present in both files' rows.
    pub paired_queries: usize,
    pub metrics: Vec<MetricDiff>,
    pub regression: bool,
    /// Queries whose checked metric fell, most first (ties by id).
    pub worse: Vec<QueryDiff>,
    /// Queries whose checked metric rose, most first (ties by id).
    pub better: Vec<QueryDiff>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricDiff {
    pub metric: String,
    pub base: f64,
    pub candidate: f64,
    pub difference: f64,
    /// 95% paired bootstrap interval of the mean per-query difference.
    pub ci95: Option<[f64; 2]>,
    /// Two-sided p-value of the paired randomization test: how often randomly swapping each
    /// query's two results gives a mean difference at least this far from 0.
    #[serde(default)]
    pub p_value: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryDiff {
    pub id: String,
    pub base: f64,
    pub candidate: f64,
}

impl Comparison {
    pub fn has_regression(&self) -> bool {
        !self.regressions.is_empty()
    }
}

/// Compares `candidate` against `base`, checking `metric` with tolerance `max_drop`.
pub fn compare(
    base: &EvalFile,
    candidate: &EvalFile,
    metric: &str,
    max_drop: f64,
) -> Result<Comparison> {
    if !(max_drop.is_finite() && max_drop >= 0.0) {
        return Err(Error::usage(format!(
            "--max-drop must be a number ≥ 0, got {max_drop}"
        )));
    }
    let (b, c) = (&base.result, &candidate.result);
    let mut notes = frame_notes(b, c);
    let mut results = Vec::new();
    for rb in &b.results {
        if let Some(rc) = c.results.iter().find(|r| r.scorer == rb.scorer) {
            results.push(compare_scorer(rb, rc, metric, max_drop, &mut notes)?);
        }
    }
    let only = |x: &EvalResult, y: &EvalResult| -> Vec<String> {
        x.results
            .iter()
            .filter(|r| !y.results.iter().any(|o| o.scorer == r.scorer))
            .map(|r| r.scorer.clone())
            .collect()
    };
    if results.is_empty() {
        return Err(Error::usage(format!(
            "no scorer appears in both {} and {}",
            base.path, candidate.path
        )));
    }
    Ok(Comparison {
        baseline: base.path.clone(),
        candidate: candidate.path.clone(),
        metric: metric.to_string(),
        max_drop,
        regressions: results
            .iter()
            .filter(|r| r.regression)
            .map(|r| r.scorer.clone())
            .collect(),
        results,
        only_in_baseline: only(b, c),
        only_in_candidate: only(c, b),
        notes,
    })
}

/// Caveats about what the two files evaluated.
fn frame_notes(b: &EvalResult, c: &EvalResult) -> Vec<String> {
    let mut notes = Vec::new();
    if b.query_count != c.query_count {
        notes.push(format!(
            "the files evaluate different numbers of queries ({} vs {})",
            b.query_count, c.query_count
        ));
    }
    if b.tool_count != c.tool_count {
        notes.push(format!(
            "the files rank different numbers of tools ({} vs {})",
            b.tool_count, c.tool_count
        ));
    }
    notes
}

fn compare_scorer(
    b: &ScorerResult,
    c: &ScorerResult,
    metric: &str,
    max_drop: f64,
    notes: &mut Vec<String>,
) -> Result<ScorerComparison> {
    let name = &b.scorer;
    let (Some(b_checked), Some(c_checked)) = (b.metric(metric), c.metric(metric)) else {
        let known: Vec<&str> = b.metrics.keys().map(String::as_str).collect();
        return Err(Error::usage(format!(
            "metric {metric:?} is not in both results for scorer {name:?}; the baseline has: {}",
            known.join(", ")
        )));
    };
    let mut diffs: Vec<MetricDiff> = b
        .metrics
        .iter()
        .filter_map(|(m, &x)| {
            let y = c.metric(m)?;
            Some(MetricDiff {
                metric: m.clone(),
                base: x,
                candidate: y,
                difference: round_metric(y - x),
                ci95: None,
                p_value: None,
            })
        })
        .collect();
    let mut out = ScorerComparison {
        scorer: name.clone(),
        paired: false,
        paired_queries: 0,
        metrics: Vec::new(),
        regression: round_metric(c_checked - b_checked) < -max_drop,
        worse: Vec::new(),
        better: Vec::new(),
    };
    match (&b.per_query, &c.per_query) {
        (Some(bq), Some(cq)) => pair(&mut out, &mut diffs, bq, cq, metric, notes),
        (bq, cq) => notes.push(format!(
            "{name}: no per-query rows in {}; aggregates compared only, no intervals \
             (run `eval --per-query` for both)",
            match (bq, cq) {
                (None, None) => "either file",
                (None, _) => "the baseline",
                _ => "the candidate",
            }
        )),
    }
    out.metrics = diffs;
    Ok(out)
}

/// Pairs per-query rows by id: intervals of the mean difference per metric, and the queries
/// that got worse or better on the checked metric.
fn pair(
    out: &mut ScorerComparison,
    diffs: &mut [MetricDiff],
    bq: &[QueryResult],
    cq: &[QueryResult],
    metric: &str,
    notes: &mut Vec<String>,
) {
    let by_id: HashMap<&str, &QueryResult> = cq.iter().map(|q| (q.id.as_str(), q)).collect();
    let pairs: Vec<(&QueryResult, &QueryResult)> = bq
        .iter()
        .filter_map(|x| Some((x, *by_id.get(x.id.as_str())?)))
        .collect();
    out.paired = true;
    out.paired_queries = pairs.len();
    if pairs.len() != bq.len() || pairs.len() != cq.len() {
        notes.push(format!(
            "{}: {} queries paired by id ({} in baseline rows, {} in candidate rows)",
            out.scorer,
            pairs.len(),
            bq.len(),
            cq.len()
        ));
    }
    let delta = |(x, y): &(&QueryResult, &QueryResult), m: &str| -> Option<f64> {
        Some(y.metrics.get(m)? - x.metrics.get(m)?)
    };
    for d in diffs.iter_mut() {
        let column: Vec<f64> = pairs.iter().filter_map(|p| delta(p, &d.metric)).collect();
        (d.ci95, d.p_value) = paired_statistics(&column);
    }
    for (x, y) in &pairs {
        let (Some(&a), Some(&b)) = (x.metrics.get(metric), y.metrics.get(metric)) else {
            continue;
        };
        let row = QueryDiff {
            id: x.id.clone(),
            base: a,
            candidate: b,
        };
        if b < a {
            out.worse.push(row);
        } else if b > a {
            out.better.push(row);
        }
    }
    let by_change = |a: &QueryDiff, b: &QueryDiff| {
        let (da, db) = ((a.candidate - a.base).abs(), (b.candidate - b.base).abs());
        db.total_cmp(&da).then_with(|| a.id.cmp(&b.id))
    };
    out.worse.sort_by(by_change);
    out.better.sort_by(by_change);
}

/// The bootstrap interval and the randomization p-value of one column of differences. Each
/// metric draws with the same seeds, so metrics over the same queries resample the same
/// queries.
fn paired_statistics(column: &[f64]) -> (Option<[f64; 2]>, Option<f64>) {
    let columns = [column.to_vec()];
    let ci = mean_intervals(&columns, bootstrap::RESAMPLES, bootstrap::SEED)[0]
        .map(|i| [round_metric(i.low), round_metric(i.high)]);
    let p =
        sign_flip_p_values(&columns, bootstrap::RESAMPLES, bootstrap::SEED)[0].map(round_metric);
    (ci, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, json: &str) -> EvalFile {
        EvalFile {
            path: name.into(),
            result: serde_json::from_str(json).unwrap(),
        }
    }

    fn eval_json(recall: f64, rows: Option<&[(&str, f64)]>) -> String {
        let rows = rows.map_or(String::new(), |rows| {
            let r: Vec<String> = rows
                .iter()
                .map(|(id, v)| {
                    format!(r#"{{"id": "{id}", "metrics": {{"recall@5": {v}, "mrr": {v}}}}}"#)
                })
                .collect();
            format!(r#", "per_query": [{}]"#, r.join(","))
        });
        format!(
            r#"{{"tool_count": 5, "query_count": 4, "results": [{{"scorer": "bm25", "metrics": {{"recall@5": {recall}, "mrr": 0.5}}{rows}}}]}}"#
        )
    }

    #[test]
    fn itself_gives_zero_differences() {
        let rows = [("q1", 1.0), ("q2", 0.0), ("q3", 0.5), ("q4", 1.0)];
        let f = file("a.json", &eval_json(0.625, Some(&rows)));
        let c = compare(&f, &f, DEFAULT_METRIC, DEFAULT_MAX_DROP).unwrap();
        assert!(!c.has_regression());
        let r = &c.results[0];
        assert!(r.paired);
        assert!(r.metrics.iter().all(|m| m.difference == 0.0));
        assert!(r.metrics.iter().all(|m| m.ci95 == Some([0.0, 0.0])));
        assert!(r.worse.is_empty() && r.better.is_empty());
        assert!(c.notes.is_empty(), "{:?}", c.notes);
    }

    #[test]
    fn a_drop_beyond_tolerance_is_a_regression() {
        let base = file("a.json", &eval_json(0.80, None));
        let within = file("b.json", &eval_json(0.79, None));
        let beyond = file("c.json", &eval_json(0.7899, None));
        assert!(
            !compare(&base, &within, "recall@5", 0.01)
                .unwrap()
                .has_regression()
        );
        let c = compare(&base, &beyond, "recall@5", 0.01).unwrap();
        assert_eq!(c.regressions, vec!["bm25"]);
        assert_eq!(c.results[0].metrics[0].difference, -0.0101);
        assert!(!c.results[0].paired);
        assert!(
            c.notes[0].contains("aggregates compared only"),
            "{:?}",
            c.notes
        );
        // A rise never fails, and the other metric is not checked unless asked.
        assert!(
            !compare(&beyond, &base, "recall@5", 0.0)
                .unwrap()
                .has_regression()
        );
        assert!(compare(&base, &beyond, "nope", 0.0).is_err());
    }

    #[test]
    fn paired_rows_list_worse_and_better_queries_with_an_interval() {
        let b = [("q1", 1.0), ("q2", 1.0), ("q3", 0.0), ("q4", 0.5)];
        let c = [("q1", 0.0), ("q2", 1.0), ("q3", 0.5), ("q4", 0.0)];
        let base = file("a.json", &eval_json(0.625, Some(&b)));
        let cand = file("b.json", &eval_json(0.375, Some(&c)));
        let cmp = compare(&base, &cand, "recall@5", 0.01).unwrap();
        let r = &cmp.results[0];
        assert!(r.regression && r.paired);
        assert_eq!(r.paired_queries, 4);
        let ids = |v: &[QueryDiff]| v.iter().map(|q| q.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&r.worse), vec!["q1", "q4"]);
        assert_eq!(ids(&r.better), vec!["q3"]);
        let ci = r.metrics[0].ci95.unwrap();
        // per-query differences -1, 0, 0.5, -0.5: mean -0.25, bounded by -1 and 0.5
        assert!(
            ci[0] < -0.25 && -0.25 < ci[1] && ci[0] >= -1.0 && ci[1] <= 0.5,
            "{ci:?}"
        );
        assert_eq!(
            compare(&base, &cand, "recall@5", 0.01).unwrap().results[0].metrics[0].ci95,
            Some(ci)
        );
    }
}
