//! Runs one scorer over every labeled query and aggregates the metrics.
//!
//! Depth: each query asks the scorer for `depth` results, by default max(largest k, 10), so
//! recall/hit/complete@k and nDCG@10 see every position they score; MRR is computed over the
//! same ranking, i.e. it is MRR@depth (`--depth` makes it deeper). Scorers may cap results
//! themselves (keyword: 20), which bounds MRR the same way it bounds a real agent's search.
//!
//! Latency is measured around `Scorer::search` only, with a clock passed in by the caller (the
//! command layer passes a monotonic clock; tests pass a fake one), so this module stays pure.

use std::time::Duration;

use serde::Serialize;

use super::bootstrap::{self, Interval};
use super::metrics::{all_metrics, expected_ranks, mean, metric_names};
use super::queries::LabeledQuery;
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::search::{Scorer, SearchRequest};

/// Cutoffs of `--k` when none are given.
pub const DEFAULT_KS: [usize; 4] = [1, 3, 5, 10];
/// Results requested per query at least (nDCG@10 needs ten).
pub const MIN_DEPTH: usize = 10;
/// Largest accepted cutoff or depth: far beyond any agent's search results.
pub const MAX_DEPTH: usize = 10_000;

/// What to compute.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalOptions {
    /// Cutoffs for recall@k, hit@k and complete@k, ascending, no repeats.
    pub ks: Vec<usize>,
    /// Results requested per query.
    pub depth: usize,
    /// Keep a row per query in the result.
    pub per_query: bool,
    /// Bootstrap resamples for the 95% intervals (0 disables them).
    pub resamples: usize,
}

impl EvalOptions {
    /// Validates the cutoffs (sorted, deduplicated) and picks the depth.
    pub fn new(ks: &[usize], depth: Option<usize>, per_query: bool) -> Result<EvalOptions> {
        let mut ks = ks.to_vec();
        ks.sort_unstable();
        ks.dedup();
        let Some(&max_k) = ks.last() else {
            return Err(Error::usage("--k needs at least one cutoff"));
        };
        if ks[0] == 0 || max_k > MAX_DEPTH {
            return Err(Error::usage(format!(
                "--k cutoffs must be between 1 and {MAX_DEPTH}"
            )));
        }
        let floor = max_k.max(MIN_DEPTH);
        let depth = match depth {
            None => floor,
            Some(d) if d < floor || d > MAX_DEPTH => {
                return Err(Error::usage(format!(
                    "--depth {d} must be between {floor} (the largest k, at least 10) and {MAX_DEPTH}"
                )));
            }
            Some(d) => d,
        };
        Ok(EvalOptions {
            ks,
            depth,
            per_query,
            resamples: bootstrap::RESAMPLES,
        })
    }

    pub fn metric_names(&self) -> Vec<String> {
        metric_names(&self.ks)
    }
}

/// One query's outcome for one scorer.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryOutcome {
    /// 1-based rank of each expected tool, `None` when not in the ranking.
    pub ranks: Vec<Option<usize>>,
    /// Ids of the first max(k) results.
    pub top: Vec<String>,
    /// Values in the order of `EvalOptions::metric_names`.
    pub metrics: Vec<f64>,
    pub latency: Duration,
    /// The scorer rejected the query (it then scores 0, like a query with no results).
    pub error: Option<String>,
}

/// One scorer's evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct ScorerEval {
    pub scorer: String,
    pub settings: Vec<(String, String)>,
    pub metric_names: Vec<String>,
    /// Mean of each metric over all queries.
    pub means: Vec<f64>,
    /// 95% bootstrap interval of each mean, for the metrics of `has_interval` (None for the
    /// others, and without queries or resamples).
    pub intervals: Vec<Option<Interval>>,
    pub latency_p50: Duration,
    pub latency_p95: Duration,
    /// Queries the scorer rejected.
    pub failed: usize,
    /// One entry per query, in query order (kept only with `per_query`).
    pub per_query: Vec<QueryOutcome>,
}

/// Ranks every query with `scorer` and computes the metrics. `clock` returns a monotonic time.
pub fn evaluate(
    scorer: &dyn Scorer,
    catalog: &Catalog,
    queries: &[LabeledQuery],
    options: &EvalOptions,
    mut clock: impl FnMut() -> Duration,
) -> ScorerEval {
    let names = options.metric_names();
    let top_n = options.ks.last().copied().unwrap_or(MIN_DEPTH);
    let mut columns: Vec<Vec<f64>> = vec![Vec::with_capacity(queries.len()); names.len()];
    let mut latencies = Vec::with_capacity(queries.len());
    let mut per_query = Vec::new();
    let mut failed = 0;
    for q in queries {
        let request = SearchRequest::new(&q.query, options.depth);
        let start = clock();
        let result = scorer.search(&request);
        let latency = clock().saturating_sub(start);
        latencies.push(latency);
        let (ranking, error) = match result {
            Ok(outcome) => {
                let mut tools: Vec<usize> = outcome.hits.iter().map(|h| h.tool).collect();
                // A scorer that ignores the limit must not score deeper than asked.
                tools.truncate(options.depth);
                (tools, None)
            }
            Err(e) => {
                failed += 1;
                (Vec::new(), Some(e.to_string()))
            }
        };
        let ranks = expected_ranks(&q.expected_tools, &ranking);
        let values = all_metrics(&ranks, &options.ks);
        for (column, v) in columns.iter_mut().zip(&values) {
            column.push(*v);
        }
        if options.per_query {
            per_query.push(QueryOutcome {
                ranks,
                top: ranking
                    .iter()
                    .take(top_n)
                    .map(|&t| catalog.get(t).id.clone())
                    .collect(),
                metrics: values,
                latency,
                error,
            });
        }
    }
    let means = columns.iter().map(|c| mean(c)).collect();
    // Intervals for the graded metrics only: hit@k and complete@k are proportions whose
    // intervals add little and would double the bootstrap's cost.
    let with_interval: Vec<bool> = names.iter().map(|n| has_interval(n)).collect();
    let chosen: Vec<Vec<f64>> = columns
        .iter()
        .zip(&with_interval)
        .filter(|(_, w)| **w)
        .map(|(c, _)| c.clone())
        .collect();
    let mut found =
        bootstrap::mean_intervals(&chosen, options.resamples, bootstrap::SEED).into_iter();
    let intervals = with_interval
        .iter()
        .map(|&w| if w { found.next().flatten() } else { None })
        .collect();
    latencies.sort_unstable();
    ScorerEval {
        scorer: scorer.kind().name().to_string(),
        settings: scorer.settings(),
        metric_names: names,
        means,
        intervals,
        latency_p50: percentile(&latencies, 50.0),
        latency_p95: percentile(&latencies, 95.0),
        failed,
        per_query,
    }
}

/// Whether `evaluate` computes a bootstrap interval for this metric: recall@k, mrr, ndcg@10.
pub fn has_interval(metric: &str) -> bool {
    metric.starts_with("recall@") || metric == "mrr" || metric.starts_with("ndcg@")
}

/// Nearest-rank percentile of sorted values: the smallest value with at least p% at or below.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Microseconds rounded to 0.1, for output.
pub fn micros(d: Duration) -> f64 {
    (d.as_nanos() as f64 / 100.0).round() / 10.0
}

/// The json row of one query (`eval --per-query`).
#[derive(Debug, Clone, Serialize)]
pub struct QueryRow {
    pub id: String,
    pub query: String,
    pub expected: Vec<String>,
    pub ranks: Vec<Option<usize>>,
    pub top: Vec<String>,
    pub metrics: indexmap::IndexMap<String, f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::InputError;
    use crate::eval::queries::tests::catalog;
    use crate::search::{Explanation, Hit, ScorerKind, SearchOutcome};
    use std::cell::Cell;
    use std::collections::HashMap;

    /// A scorer that answers each query with a fixed ranking of tool ids (score = 1/position).
    pub(crate) struct FixedScorer {
        pub catalog: Catalog,
        pub rankings: HashMap<String, Vec<&'static str>>,
    }

    impl Scorer for FixedScorer {
        fn kind(&self) -> ScorerKind {
            ScorerKind::Keyword
        }
        fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, InputError> {
            if request.query == "bad(" {
                return Err(InputError::usage("unbalanced parenthesis"));
            }
            let ids = self
                .rankings
                .get(request.query)
                .cloned()
                .unwrap_or_default();
            let hits = ids
                .iter()
                .take(request.limit)
                .enumerate()
                .map(|(i, id)| Hit {
                    tool: self.catalog.index_of(id).unwrap(),
                    score: 1.0 / (i + 1) as f64,
                })
                .collect();
            Ok(SearchOutcome {
                hits,
                not_found: vec![],
                total_tools: self.catalog.len(),
            })
        }
        fn explain_tool(
            &self,
            _: &SearchRequest<'_>,
            tool: usize,
        ) -> Result<Explanation, InputError> {
            Ok(Explanation::leaf(format!("tool {tool}"), 0.0))
        }
        fn settings(&self) -> Vec<(String, String)> {
            vec![("fixed".into(), "yes".into())]
        }
    }

    pub(crate) const TOOLS: [&str; 5] = ["a", "b", "c", "d", "e"];

    pub(crate) fn query(id: &str, text: &str, expected: &[&str], cat: &Catalog) -> LabeledQuery {
        LabeledQuery {
            id: id.into(),
            query: text.into(),
            expected: expected.iter().map(|s| s.to_string()).collect(),
            expected_tools: expected.iter().map(|e| cat.index_of(e).unwrap()).collect(),
            position: crate::error::Position { line: 1, column: 1 },
        }
    }

    /// A fake clock that advances 1 µs per reading per query number, so latencies are known.
    pub(crate) fn fake_clock() -> impl FnMut() -> Duration {
        let calls = Cell::new(0u64);
        move || {
            let n = calls.get();
            calls.set(n + 1);
            // readings 0,1 (query 1): 0 → 1 µs; readings 2,3: 10 → 12 µs; ...
            let q = n / 2;
            let base = q * 10;
            Duration::from_micros(if n.is_multiple_of(2) {
                base
            } else {
                base + q + 1
            })
        }
    }

    pub(crate) fn fixture() -> (FixedScorer, Vec<LabeledQuery>) {
        let cat = catalog(&TOOLS);
        let queries = vec![
            query("q1", "first", &["a"], &cat),
            query("q2", "second", &["b", "c"], &cat),
            query("q3", "third", &["e"], &cat),
            query("q4", "bad(", &["a"], &cat),
        ];
        let rankings = HashMap::from([
            ("first".to_string(), vec!["a", "b"]),
            ("second".to_string(), vec!["c", "d", "b"]),
            ("third".to_string(), vec![]),
        ]);
        (
            FixedScorer {
                catalog: cat,
                rankings,
            },
            queries,
        )
    }

    #[test]
    fn evaluates_a_fixed_ranking() {
        let (scorer, queries) = fixture();
        let options = EvalOptions::new(&[3, 1], None, true).unwrap();
        assert_eq!(options.ks, vec![1, 3]);
        assert_eq!(options.depth, 10);
        let e = evaluate(&scorer, &scorer.catalog, &queries, &options, fake_clock());
        let get = |name: &str| e.means[e.metric_names.iter().position(|n| n == name).unwrap()];
        // q1: a@1; q2: c@1, b@3; q3: nothing; q4: rejected → 0.
        assert_eq!(get("recall@1"), (1.0 + 0.5) / 4.0);
        assert_eq!(get("recall@3"), (1.0 + 1.0) / 4.0);
        assert_eq!(get("hit@1"), 0.5);
        assert_eq!(get("complete@1"), 0.25);
        assert_eq!(get("complete@3"), 0.5);
        assert_eq!(get("mrr"), 0.5);
        // q2: DCG = 1 + 1/log2(4) = 1.5; ideal = 1 + 1/log2(3)
        let q2 = 1.5 / (1.0 + 1.0 / 3f64.log2());
        assert!((get("ndcg@10") - (1.0 + q2) / 4.0).abs() < 1e-12);
        assert_eq!(e.failed, 1);
        assert_eq!(e.per_query.len(), 4);
        assert_eq!(e.per_query[1].ranks, vec![Some(3), Some(1)]);
        assert_eq!(e.per_query[1].top, vec!["c", "d", "b"]);
        assert_eq!(e.per_query[2].ranks, vec![None]);
        assert!(
            e.per_query[3]
                .error
                .as_deref()
                .unwrap()
                .contains("parenthesis")
        );
        // fake latencies 1, 2, 3, 4 µs
        assert_eq!(e.latency_p50, Duration::from_micros(2));
        assert_eq!(e.latency_p95, Duration::from_micros(4));
        assert_eq!(e.settings, vec![("fixed".to_string(), "yes".to_string())]);
        let ci = e.intervals[0].unwrap();
        assert!(ci.low <= 0.375 && 0.375 <= ci.high);
    }

    #[test]
    fn same_input_same_result_apart_from_latency() {
        let (scorer, queries) = fixture();
        let options = EvalOptions::new(&DEFAULT_KS, Some(20), true).unwrap();
        let a = evaluate(&scorer, &scorer.catalog, &queries, &options, fake_clock());
        let b = evaluate(&scorer, &scorer.catalog, &queries, &options, fake_clock());
        assert_eq!(a, b);
    }

    /// A scorer that knows the labels: it ranks a query's expected tools first (in label
    /// order), then every other tool by id. Evaluating it must give perfect scores.
    struct OracleScorer {
        by_text: HashMap<String, Vec<usize>>,
        tool_count: usize,
    }

    impl Scorer for OracleScorer {
        fn kind(&self) -> ScorerKind {
            ScorerKind::Bm25
        }
        fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, InputError> {
            let first = self.by_text.get(request.query).cloned().unwrap_or_default();
            let rest = (0..self.tool_count).filter(|t| !first.contains(t));
            let hits = first
                .iter()
                .copied()
                .chain(rest)
                .take(request.limit)
                .enumerate()
                .map(|(i, tool)| Hit {
                    tool,
                    score: -(i as f64),
                })
                .collect();
            Ok(SearchOutcome {
                hits,
                not_found: vec![],
                total_tools: self.tool_count,
            })
        }
        fn explain_tool(
            &self,
            _: &SearchRequest<'_>,
            tool: usize,
        ) -> Result<Explanation, InputError> {
            Ok(Explanation::leaf(format!("tool {tool}"), 0.0))
        }
        fn settings(&self) -> Vec<(String, String)> {
            vec![]
        }
    }

    #[test]
    fn oracle_scores_perfectly_on_the_shared_query_sets() {
        let Some(sets) = crate::eval::queries::tests::shared_sets() else {
            eprintln!("skipped: no shared data (set TOOLBUDGET_SHARED_DATA)");
            return;
        };
        for (name, catalog, set) in sets {
            let mut by_text: HashMap<String, Vec<usize>> = HashMap::new();
            let mut ambiguous = std::collections::HashSet::new();
            for q in &set.queries {
                if let Some(prev) = by_text.insert(q.query.clone(), q.expected_tools.clone())
                    && prev != q.expected_tools
                {
                    ambiguous.insert(q.query.clone());
                }
            }
            let oracle = OracleScorer {
                by_text,
                tool_count: catalog.len(),
            };
            let options = EvalOptions::new(&DEFAULT_KS, None, true).unwrap();
            assert_eq!(options.resamples, 10_000);
            let started = std::time::Instant::now();
            let e = evaluate(&oracle, catalog, &set.queries, &options, fake_clock());
            eprintln!(
                "{name}: {} queries evaluated with 95% intervals in {:?}",
                set.queries.len(),
                started.elapsed()
            );
            let mrr = e.metric_names.iter().position(|n| n == "mrr").unwrap();
            let ndcg = e.metric_names.iter().position(|n| n == "ndcg@10").unwrap();
            let recall10 = e
                .metric_names
                .iter()
                .position(|n| n == "recall@10")
                .unwrap();
            let mut checked = 0;
            for (q, o) in set.queries.iter().zip(&e.per_query) {
                if ambiguous.contains(&q.query) {
                    continue;
                }
                checked += 1;
                assert_eq!(o.metrics[mrr], 1.0, "{}", q.id);
                assert!((o.metrics[ndcg] - 1.0).abs() < 1e-12, "{}", q.id);
                if q.expected.len() <= 10 {
                    assert_eq!(o.metrics[recall10], 1.0, "{}", q.id);
                }
            }
            assert!(checked * 10 >= set.queries.len() * 9, "{name}: {checked}");
        }
    }

    #[test]
    fn options_are_validated() {
        assert!(EvalOptions::new(&[], None, false).is_err());
        assert!(EvalOptions::new(&[0, 5], None, false).is_err());
        assert!(EvalOptions::new(&[5], Some(9), false).is_err());
        assert_eq!(EvalOptions::new(&[50], None, false).unwrap().depth, 50);
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let v: Vec<Duration> = (1..=20).map(Duration::from_micros).collect();
        assert_eq!(percentile(&v, 50.0), Duration::from_micros(10));
        assert_eq!(percentile(&v, 95.0), Duration::from_micros(19));
        assert_eq!(percentile(&[], 95.0), Duration::ZERO);
        assert_eq!(micros(Duration::from_nanos(1234)), 1.2);
    }
}
