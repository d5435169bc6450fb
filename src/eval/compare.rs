//! Compares two `eval --format json` results: per scorer present in both and per metric, the
//! baseline, the candidate and their difference (candidate − baseline).
//!
//! When both files carry `per_query` rows for a scorer (`eval --per-query`), queries are paired
//! by id and each difference gets a 95% paired bootstrap interval of the mean per-query
//! difference (10,000 resamples, fixed seed), and the queries that got worse or better on the
//! checked metric are listed. Without rows only the aggregates are compared, and the result
//! says so (`paired: false`).
//!
//! A regression is a difference below −max_drop on the checked metric (rounded to 6 decimals
//! first, so 0.51 → 0.50 with max_drop 0.01 is not a regression however floats round).

use std::collections::HashMap;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use super::bootstrap::{self, mean_intervals};
use super::metrics::round_metric;
use crate::document::Document;
use crate::error::{Error, Result};
use crate::path;

/// The metric checked when `--metric` is not given.
pub const DEFAULT_METRIC: &str = "recall@5";
/// Tolerated drop when `--max-drop` is not given: one percentage point. Evaluations are
/// deterministic, so any drop is a real change; this tolerance lets a change that trades a
/// few queries pass while a real loss fails.
pub const DEFAULT_MAX_DROP: f64 = 0.01;

/// What `eval` wrote for one scorer, as read back.
#[derive(Debug, Clone)]
struct ScorerData {
    metrics: IndexMap<String, f64>,
    /// query id → metric → value, in file order.
    per_query: Option<IndexMap<String, HashMap<String, f64>>>,
}

#[derive(Debug, Clone)]
pub struct EvalFile {
    pub path: String,
    pub query_count: Option<u64>,
    pub tool_count: Option<u64>,
    scorers: IndexMap<String, ScorerData>,
}

/// Reads the parts of an eval json `compare` needs; anything else is ignored.
pub fn read_eval_file(doc: &Document) -> Result<EvalFile> {
    let Some(results) = doc.value.get("results").and_then(Value::as_array) else {
        return Err(doc.error_at(
            &path!["results"],
            "expected the json output of `toolbudget eval` (an object with a `results` array)",
        ));
    };
    let mut scorers = IndexMap::new();
    for (i, r) in results.iter().enumerate() {
        let Some(name) = r.get("scorer").and_then(Value::as_str) else {
            return Err(doc.error_at(&path!["results", i], "expected a `scorer` name"));
        };
        let metrics = number_map(doc, r.get("metrics"), &path!["results", i, "metrics"])?;
        let per_query = match r.get("per_query") {
            None | Some(Value::Null) => None,
            Some(Value::Array(rows)) => {
                let mut by_id = IndexMap::with_capacity(rows.len());
                for (j, row) in rows.iter().enumerate() {
                    let at = path!["results", i, "per_query", j];
                    let Some(id) = row.get("id").and_then(Value::as_str) else {
                        return Err(doc.error_at(&at, "expected a query `id`"));
                    };
                    let mut at_metrics = at.to_vec();
                    at_metrics.push("metrics".into());
                    let m = number_map(doc, row.get("metrics"), &at_metrics)?;
                    if by_id
                        .insert(id.to_string(), m.into_iter().collect())
                        .is_some()
                    {
                        return Err(doc.error_at(&at, format!("duplicate query id {id:?}")));
                    }
                }
                Some(by_id)
            }
            Some(_) => {
                return Err(doc.error_at(
                    &path!["results", i, "per_query"],
                    "expected a list of per-query rows",
                ));
            }
        };
        if scorers
            .insert(name.to_string(), ScorerData { metrics, per_query })
            .is_some()
        {
            return Err(doc.error_at(
                &path!["results", i, "scorer"],
                format!("scorer {name:?} appears twice"),
            ));
        }
    }
    Ok(EvalFile {
        path: doc.path.display().to_string(),
        query_count: doc.value.get("query_count").and_then(Value::as_u64),
        tool_count: doc.value.get("tool_count").and_then(Value::as_u64),
        scorers,
    })
}

fn number_map(
    doc: &Document,
    v: Option<&Value>,
    at: &[crate::document::Seg],
) -> Result<IndexMap<String, f64>> {
    let Some(Value::Object(map)) = v else {
        return Err(doc.error_at(at, "expected an object of metric values"));
    };
    let mut out = IndexMap::with_capacity(map.len());
    for (k, v) in map {
        let Some(x) = v.as_f64() else {
            let mut p = at.to_vec();
            p.push(k.as_str().into());
            return Err(doc.error_at(&p, format!("metric {k:?} is not a number")));
        };
        out.insert(k.clone(), x);
    }
    Ok(out)
}

#[derive(Debug, Clone, Serialize)]
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

#[derive(Debug, Clone, Serialize)]
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

#[derive(Debug, Clone, Serialize)]
pub struct MetricDiff {
    pub metric: String,
    pub base: f64,
    pub candidate: f64,
    pub difference: f64,
    /// 95% paired bootstrap interval of the mean per-query difference.
    pub ci95: Option<[f64; 2]>,
}

#[derive(Debug, Clone, Serialize)]
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
    let mut notes = Vec::new();
    if base.query_count != candidate.query_count {
        notes.push(format!(
            "the files evaluate different numbers of queries ({} vs {})",
            show(base.query_count),
            show(candidate.query_count)
        ));
    }
    if base.tool_count != candidate.tool_count {
        notes.push(format!(
            "the files rank different numbers of tools ({} vs {})",
            show(base.tool_count),
            show(candidate.tool_count)
        ));
    }
    let mut results = Vec::new();
    let mut regressions = Vec::new();
    for (name, b) in &base.scorers {
        let Some(c) = candidate.scorers.get(name) else {
            continue;
        };
        let (Some(&b_checked), Some(&c_checked)) = (b.metrics.get(metric), c.metrics.get(metric))
        else {
            let known: Vec<&str> = b.metrics.keys().map(String::as_str).collect();
            return Err(Error::usage(format!(
                "metric {metric:?} is not in both results for scorer {name:?}; the baseline has: {}",
                known.join(", ")
            )));
        };
        let metrics: Vec<&String> = b
            .metrics
            .keys()
            .filter(|k| c.metrics.contains_key(*k))
            .collect();
        let mut diffs: Vec<MetricDiff> = metrics
            .iter()
            .map(|m| {
                let (x, y) = (b.metrics[*m], c.metrics[*m]);
                MetricDiff {
                    metric: (*m).clone(),
                    base: x,
                    candidate: y,
                    difference: round_metric(y - x),
                    ci95: None,
                }
            })
            .collect();
        let mut paired_queries = 0;
        let mut worse = Vec::new();
        let mut better = Vec::new();
        let paired = match (&b.per_query, &c.per_query) {
            (Some(bq), Some(cq)) => {
                let ids: Vec<&String> = bq.keys().filter(|id| cq.contains_key(*id)).collect();
                paired_queries = ids.len();
                if ids.len() != bq.len() || ids.len() != cq.len() {
                    notes.push(format!(
                        "{name}: {} queries paired by id ({} in baseline rows, {} in candidate rows)",
                        ids.len(),
                        bq.len(),
                        cq.len()
                    ));
                }
                let value = |rows: &IndexMap<String, HashMap<String, f64>>, id: &str, m: &str| {
                    rows[id].get(m).copied()
                };
                // One column of per-query differences per metric (rows lacking it skip the CI).
                let columns: Vec<Option<Vec<f64>>> = metrics
                    .iter()
                    .map(|m| {
                        ids.iter()
                            .map(|id| Some(value(cq, id, m)? - value(bq, id, m)?))
                            .collect()
                    })
                    .collect();
                let present: Vec<Vec<f64>> = columns.iter().flatten().cloned().collect();
                let mut intervals =
                    mean_intervals(&present, bootstrap::RESAMPLES, bootstrap::SEED).into_iter();
                for (d, col) in diffs.iter_mut().zip(&columns) {
                    if col.is_some() {
                        d.ci95 = intervals
                            .next()
                            .flatten()
                            .map(|i| [round_metric(i.low), round_metric(i.high)]);
                    }
                }
                for id in &ids {
                    let (Some(x), Some(y)) = (value(bq, id, metric), value(cq, id, metric)) else {
                        continue;
                    };
                    let row = QueryDiff {
                        id: (*id).clone(),
                        base: x,
                        candidate: y,
                    };
                    if y < x {
                        worse.push(row);
                    } else if y > x {
                        better.push(row);
                    }
                }
                let by_change = |a: &QueryDiff, b: &QueryDiff| {
                    let (da, db) = ((a.candidate - a.base).abs(), (b.candidate - b.base).abs());
                    db.total_cmp(&da).then_with(|| a.id.cmp(&b.id))
                };
                worse.sort_by(by_change);
                better.sort_by(by_change);
                true
            }
            _ => {
                notes.push(format!(
                    "{name}: no per-query rows in {}; aggregates compared only, no intervals \
                     (run `eval --per-query` for both)",
                    if b.per_query.is_none() && c.per_query.is_none() {
                        "either file"
                    } else if b.per_query.is_none() {
                        "the baseline"
                    } else {
                        "the candidate"
                    }
                ));
                false
            }
        };
        let regression = round_metric(c_checked - b_checked) < -max_drop;
        if regression {
            regressions.push(name.clone());
        }
        results.push(ScorerComparison {
            scorer: name.clone(),
            paired,
            paired_queries,
            metrics: diffs,
            regression,
            worse,
            better,
        });
    }
    let only_in_baseline: Vec<String> = base
        .scorers
        .keys()
        .filter(|s| !candidate.scorers.contains_key(*s))
        .cloned()
        .collect();
    let only_in_candidate: Vec<String> = candidate
        .scorers
        .keys()
        .filter(|s| !base.scorers.contains_key(*s))
        .cloned()
        .collect();
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
        results,
        regressions,
        only_in_baseline,
        only_in_candidate,
        notes,
    })
}

fn show(n: Option<u64>) -> String {
    n.map_or_else(|| "unknown".to_string(), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn file(name: &str, json: &str) -> EvalFile {
        let doc = Document::parse(Path::new(name), json.as_bytes().to_vec()).unwrap();
        read_eval_file(&doc).unwrap()
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

    #[test]
    fn bad_files_are_located_errors() {
        let doc = Document::parse(
            Path::new("x.json"),
            br#"{"results": [{"metrics": {}}]}"#.to_vec(),
        )
        .unwrap();
        let e = read_eval_file(&doc).unwrap_err().to_string();
        assert!(e.starts_with("x.json:1:14: expected a `scorer`"), "{e}");
        let doc = Document::parse(
            Path::new("x.json"),
            b"{\"results\": [{\"scorer\": \"bm25\",\n \"metrics\": {\"mrr\": \"high\"}}]}".to_vec(),
        )
        .unwrap();
        let e = read_eval_file(&doc).unwrap_err().to_string();
        assert!(
            e.starts_with("x.json:2:21: metric \"mrr\" is not a number"),
            "{e}"
        );
        let doc = Document::parse(Path::new("x.json"), b"[]".to_vec()).unwrap();
        assert!(read_eval_file(&doc).is_err());
    }
}
