//! The result of an evaluation: one type, written by `eval --format json`, read back by
//! `compare`, embedded in the report. The first keys are the contract's (`tool_count`,
//! `query_count`, `results[].scorer/metrics/latency_us`); the rest say what a reader needs to
//! trust the numbers (settings, cutoffs, depth, intervals, refused queries). Every view (table,
//! CSV, Markdown: `view::eval`) is rendered from these types.

use std::path::Path;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::classes::{self, QueryClass};
use super::metrics::Metric;
use super::pool::PoolInfo;
use super::queries::QuerySet;
use super::run::EvalOptions;
use super::runfile::{RunFormat, RunStats, TieBreak};
use super::siblings::{Siblings, WrongSibling};
use super::thresholds::ThresholdPoint;
use crate::catalog::Catalog;
use crate::document::Document;
use crate::error::{Error, Position, Result};
use crate::path;
use crate::search::ScorerName;
use crate::timing::LatencyUs;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalResult {
    /// Every tool of the catalog, the search tool included (as `count` counts them).
    pub tool_count: usize,
    pub query_count: usize,
    /// The query set's name: its file stem.
    #[serde(default)]
    pub set: String,
    /// The labeled query file, as given.
    #[serde(default)]
    pub queries: String,
    /// Tools a search may return: all but the search tool, which is never a result.
    #[serde(default)]
    pub ranked_tools: usize,
    /// The catalog's search tool, when it has one (not ranked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_tool: Option<String>,
    #[serde(default)]
    pub ks: Vec<usize>,
    /// Results requested per query; MRR is MRR@depth.
    #[serde(default)]
    pub depth: usize,
    /// Queries per class (`eval::classes`), in output order.
    #[serde(default)]
    pub classes: IndexMap<QueryClass, usize>,
    /// Set when the queries were ranked inside a pool of distractors (`--pool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolInfo>,
    /// Near-duplicate clusters among the ranked tools (`eval::siblings`).
    #[serde(default)]
    pub near_duplicates: NearDuplicates,
    pub results: Vec<ScorerResult>,
}

/// How many ranked tools have a near-duplicate on another server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct NearDuplicates {
    pub clusters: usize,
    pub tools: usize,
}

/// One class's share of a scorer's result: means over the class's queries. A `no-match`
/// class has one metric, `refusal`: the share of its queries answered with no result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassResult {
    pub queries: usize,
    pub metrics: IndexMap<Metric, f64>,
}

/// One scorer over every query of the set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScorerResult {
    pub scorer: ScorerName,
    #[serde(default)]
    pub settings: IndexMap<String, String>,
    /// Means over the queries that expect a tool, rounded to 6 decimals, in
    /// `EvalOptions::metric_names` order; `null` (n/a, never 0) when no query of the set
    /// expects one (every query is no-match): there is nothing to average.
    pub metrics: IndexMap<Metric, Option<f64>>,
    /// 95% percentile-bootstrap interval of the mean of recall@k, mrr and ndcg@10 (10,000
    /// resamples, fixed seed).
    #[serde(default)]
    pub ci95: IndexMap<Metric, [f64; 2]>,
    /// Per-query search latency, measured (absent where measured numbers are kept apart, as
    /// in the report's deterministic `report.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<LatencyUs>,
    /// An external scorer's own account of its time per query (its `elapsed_us`), beside the
    /// round trip above; the difference is the protocol's cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_latency_us: Option<LatencyUs>,
    /// Set when the rankings came from a run file (`eval --run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunSummary>,
    /// Queries the scorer refused (each scored 0, like a query with no results).
    #[serde(default)]
    pub refused_queries: usize,
    /// The metrics per query class, classes in `EvalResult::classes` order. `metrics` above
    /// average the queries that expect a tool; no-match queries count only here.
    #[serde(default)]
    pub classes: IndexMap<QueryClass, ClassResult>,
    /// How often the first result is a near-duplicate of the expected tool instead.
    #[serde(default)]
    pub wrong_sibling: WrongSibling,
    /// The refusal curve (`--thresholds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<Vec<ThresholdPoint>>,
    /// One row per query, in query order (`--per-query`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_query: Option<Vec<QueryResult>>,
    /// Every query's whole ranking, kept in memory only when asked (`EvalOptions::keep_rankings`).
    #[serde(skip)]
    pub rankings: Vec<KeptRanking>,
}

/// One query's outcome for one scorer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryResult {
    pub id: String,
    #[serde(default)]
    pub query: String,
    /// The query's class, given or derived.
    #[serde(default = "no_class")]
    pub class: QueryClass,
    #[serde(default)]
    pub expected: Vec<String>,
    /// 1-based rank of each expected tool, `null` when not in the ranking.
    #[serde(default)]
    pub ranks: Vec<Option<usize>>,
    /// Ids of the first max(k) results.
    #[serde(default)]
    pub top: Vec<String>,
    /// The scores of `top`, on the scorer's own scale, rounded to 6 decimals (so the json
    /// reads back into the same numbers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scores: Vec<f64>,
    pub metrics: IndexMap<Metric, f64>,
    /// Why the scorer refused the query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// The class of a per-query row written without one (an empty name, as before).
fn no_class() -> QueryClass {
    QueryClass::new("")
}

/// One query's whole ranking to the depth, with unrounded scores: what `--write-run` writes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeptRanking {
    pub id: String,
    pub query: String,
    pub results: Vec<(String, f64)>,
}

/// Where a run file's rankings came from and what it lacked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub file: String,
    pub format: RunFormat,
    /// How tied scores were ordered.
    pub ties: TieBreak,
    #[serde(flatten)]
    pub stats: RunStats,
}

impl ScorerResult {
    pub fn metric(&self, metric: &Metric) -> Option<f64> {
        self.metrics.get(metric).copied().flatten()
    }
}

impl EvalResult {
    /// The frame of one evaluation of `set` over `catalog`; scorers' results go in `results`.
    pub fn new(
        catalog: &Catalog,
        set: &QuerySet,
        options: &EvalOptions,
        siblings: &Siblings,
        results: Vec<ScorerResult>,
    ) -> EvalResult {
        let search_tool = catalog.search_tool();
        let names = classes::ordered(set.queries.iter().map(|q| &q.class));
        let classes = names
            .into_iter()
            .map(|c| {
                let n = set.queries.iter().filter(|q| q.class == c).count();
                (c, n)
            })
            .collect();
        EvalResult {
            classes,
            pool: None,
            near_duplicates: NearDuplicates {
                clusters: siblings.clusters().len(),
                tools: siblings.tools_in_clusters(),
            },
            tool_count: catalog.len(),
            query_count: set.queries.len(),
            set: set_name(&set.path),
            queries: set.path.display().to_string(),
            ranked_tools: catalog.len() - usize::from(search_tool.is_some()),
            search_tool: search_tool.map(|i| catalog.get(i).id.clone()),
            ks: options.ks.clone(),
            depth: options.depth,
            results,
        }
    }
}

impl EvalResult {
    /// `own` or `pooled`: where the expected tools were ranked.
    pub fn setting(&self) -> &'static str {
        if self.pool.is_some() { "pooled" } else { "own" }
    }
}

/// A query set's name: the stem of its file (`fixtures.jsonl` → `fixtures`).
pub fn set_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Reads an `eval --format json` file back into the one eval type. Syntax and type errors are
/// located by serde_json; duplicate scorers and query ids at their place in the file.
pub fn read_eval_result(path: &Path) -> Result<EvalResult> {
    parse_eval_result(&Document::read(path)?)
}

/// Reads an already-read document as an eval result (the fuzz target feeds it any bytes).
pub fn parse_eval_result(doc: &Document) -> Result<EvalResult> {
    let path = doc.path.as_path();
    let result: EvalResult = serde_json::from_str(doc.text()).map_err(|e| {
        let position = (e.line() > 0).then(|| Position {
            line: e.line(),
            column: e.column().max(1),
        });
        let msg = e.to_string();
        let msg = msg.rfind(" at line ").map_or(&msg[..], |i| &msg[..i]);
        Error::input(
            path,
            position,
            format!("expected the json output of `toolbudget eval`: {msg}"),
        )
    })?;
    for (i, r) in result.results.iter().enumerate() {
        if result.results[..i].iter().any(|o| o.scorer == r.scorer) {
            return Err(doc.error_at(
                &path!["results", i, "scorer"],
                format!("scorer {:?} appears twice", r.scorer.as_str()),
            ));
        }
        let rows = r.per_query.as_deref().unwrap_or_default();
        let mut seen = std::collections::HashSet::new();
        for (j, q) in rows.iter().enumerate() {
            if !seen.insert(q.id.as_str()) {
                return Err(doc.error_at(
                    &path!["results", i, "per_query", j, "id"],
                    format!("duplicate query id {:?}", q.id),
                ));
            }
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::metrics::round_metric;
    use crate::eval::run::tests::fixture_result;

    fn result(per_query: bool) -> EvalResult {
        fixture_result(&[1, 3, 5, 10], per_query)
    }

    #[test]
    fn json_has_the_contract_keys_and_is_stable() {
        let json = crate::output::to_json(&result(true));
        assert_eq!(json, crate::output::to_json(&result(true)));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["tool_count"], 5);
        assert_eq!(v["query_count"], 4);
        assert_eq!(v["set"], "q");
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
        assert_eq!(r["latency_us"]["p95"], 4.0);
        assert_eq!(r["refused_queries"], 1);
        assert!(r.get("failed_queries").is_none());
        assert_eq!(r["per_query"][1]["ranks"], serde_json::json!([3, 1]));
        assert_eq!(r["per_query"][2]["ranks"], serde_json::json!([null]));
        assert_eq!(r["per_query"][0]["metrics"]["mrr"], 1.0);
        assert!(
            r["per_query"][3]["refused"]
                .as_str()
                .unwrap()
                .contains("parenthesis")
        );
        assert!(r["ci95"]["recall@5"].is_array());
        assert!(r["ci95"]["ndcg@10"].is_array());
        assert!(r["ci95"].get("hit@1").is_none());
    }

    #[test]
    fn json_round_trips_through_the_one_type() {
        for per_query in [false, true] {
            let r = result(per_query);
            let json = crate::output::to_json(&r);
            let back: EvalResult = serde_json::from_str(&json).unwrap();
            assert_eq!(back, r);
            assert_eq!(crate::output::to_json(&back), json);
        }
    }

    #[test]
    fn bad_files_are_located_errors() {
        let dir = tempfile::tempdir().unwrap();
        let write = |text: &str| {
            let p = dir.path().join("x.json");
            std::fs::write(&p, text).unwrap();
            p
        };
        let p = write("{\"tool_count\": 1, \"query_count\": 1, \"results\": [{\"metrics\": {}}]}");
        let e = read_eval_result(&p).unwrap_err().to_string();
        assert!(e.contains("x.json:1:"), "{e}");
        assert!(e.contains("missing field `scorer`"), "{e}");
        let p = write(
            "{\"tool_count\": 1, \"query_count\": 1, \"results\": [{\"scorer\": \"bm25\",\n \"metrics\": {\"mrr\": \"high\"}}]}",
        );
        let e = read_eval_result(&p).unwrap_err().to_string();
        assert!(e.contains("x.json:2:"), "{e}");
        assert!(e.contains("invalid type: string \"high\""), "{e}");
        let p = write(
            "{\"tool_count\": 1, \"query_count\": 1, \"results\": [\n{\"scorer\": \"bm25\", \"metrics\": {}},\n{\"scorer\": \"bm25\", \"metrics\": {}}]}",
        );
        let e = read_eval_result(&p).unwrap_err().to_string();
        assert!(
            e.contains("x.json:3:") && e.contains("appears twice"),
            "{e}"
        );
        assert!(read_eval_result(&write("[]")).is_err());
    }
}
