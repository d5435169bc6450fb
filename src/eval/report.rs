//! The result of `toolbudget eval` as one serializable value: the json of CONTRACT.md
//! (`tool_count`, `query_count`, `results[].scorer/metrics/latency_us`) plus what a reader
//! needs to trust the numbers (settings, cutoffs, depth, intervals, refused queries).

use indexmap::IndexMap;
use serde::Serialize;

use super::metrics::round_metric;
use super::queries::QuerySet;
use super::run::{EvalOptions, QueryRow, ScorerEval, micros};

#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub tool_count: usize,
    pub query_count: usize,
    /// The labeled query file, as given.
    pub queries: String,
    pub ks: Vec<usize>,
    /// Results requested per query; MRR is MRR@depth.
    pub depth: usize,
    pub results: Vec<ScorerResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScorerResult {
    pub scorer: String,
    pub settings: IndexMap<String, String>,
    /// Means over all queries, rounded to 6 decimals.
    pub metrics: IndexMap<String, f64>,
    /// 95% percentile-bootstrap interval of the mean of recall@k, mrr and ndcg@10 (10,000
    /// resamples, fixed seed).
    pub ci95: IndexMap<String, [f64; 2]>,
    /// Per-query search latency in microseconds (a measurement: varies run to run).
    pub latency_us: Latency,
    /// Queries the scorer refused (each scored 0).
    pub refused_queries: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_query: Option<Vec<QueryRow>>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Latency {
    pub p50: f64,
    pub p95: f64,
}

impl EvalReport {
    pub fn new(
        tool_count: usize,
        set: &QuerySet,
        options: &EvalOptions,
        evals: &[ScorerEval],
    ) -> EvalReport {
        EvalReport {
            tool_count,
            query_count: set.queries.len(),
            queries: set.path.display().to_string(),
            ks: options.ks.clone(),
            depth: options.depth,
            results: evals
                .iter()
                .map(|e| scorer_result(e, set, options.per_query))
                .collect(),
        }
    }
}

fn named(names: &[String], values: &[f64]) -> IndexMap<String, f64> {
    names
        .iter()
        .cloned()
        .zip(values.iter().map(|&v| round_metric(v)))
        .collect()
}

fn scorer_result(e: &ScorerEval, set: &QuerySet, per_query: bool) -> ScorerResult {
    let per_query = per_query.then(|| {
        set.queries
            .iter()
            .zip(&e.per_query)
            .map(|(q, o)| QueryRow {
                id: q.id.clone(),
                query: q.query.clone(),
                expected: q.expected.clone(),
                ranks: o.ranks.clone(),
                top: o.top.clone(),
                metrics: named(&e.metric_names, &o.metrics),
                error: o.error.clone(),
            })
            .collect()
    });
    ScorerResult {
        scorer: e.scorer.clone(),
        settings: e.settings.iter().cloned().collect(),
        metrics: named(&e.metric_names, &e.means),
        ci95: e
            .metric_names
            .iter()
            .zip(&e.intervals)
            .filter_map(|(n, i)| {
                i.map(|i| (n.clone(), [round_metric(i.low), round_metric(i.high)]))
            })
            .collect(),
        latency_us: Latency {
            p50: micros(e.latency_p50),
            p95: micros(e.latency_p95),
        },
        refused_queries: e.failed,
        per_query,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::run::evaluate;
    use crate::eval::run::tests::{fake_clock, fixture};

    #[test]
    fn json_has_the_contract_keys_and_is_stable() {
        let (scorer, queries) = fixture();
        let set = QuerySet {
            path: "q.jsonl".into(),
            queries,
        };
        let options = EvalOptions::new(&[1, 3, 5, 10], None, true).unwrap();
        let render = || {
            let e = evaluate(
                &scorer,
                &scorer.catalog,
                &set.queries,
                &options,
                fake_clock(),
            );
            crate::output::to_json(&EvalReport::new(scorer.catalog.len(), &set, &options, &[e]))
        };
        let json = render();
        assert_eq!(json, render());
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["tool_count"], 5);
        assert_eq!(v["query_count"], 4);
        let r = &v["results"][0];
        assert_eq!(r["scorer"], "keyword");
        let keys: Vec<&str> = r["metrics"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "recall@1",
                "recall@3",
                "recall@5",
                "recall@10",
                "hit@1",
                "hit@3",
                "hit@5",
                "hit@10",
                "complete@1",
                "complete@3",
                "complete@5",
                "complete@10",
                "mrr",
                "ndcg@10"
            ]
        );
        assert_eq!(r["metrics"]["recall@1"], 0.375);
        assert_eq!(
            r["metrics"]["ndcg@10"],
            round_metric((1.0 + 1.5 / (1.0 + 1.0 / 3f64.log2())) / 4.0)
        );
        assert_eq!(r["latency_us"]["p50"], 2.0);
        assert_eq!(r["refused_queries"], 1);
        assert_eq!(r["per_query"][1]["ranks"], serde_json::json!([3, 1]));
        assert_eq!(r["per_query"][2]["ranks"], serde_json::json!([null]));
        assert_eq!(r["per_query"][0]["metrics"]["mrr"], 1.0);
        assert!(r["ci95"]["recall@5"].is_array());
        assert!(r["ci95"]["ndcg@10"].is_array());
        assert!(r["ci95"].get("hit@1").is_none());
    }
}
