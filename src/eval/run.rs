//! Runs one scorer over every labeled query and aggregates the metrics.
//!
//! Depth: each query asks the scorer for `depth` results, by default max(largest k, 10), so
//! recall/hit/complete@k and nDCG@10 see every position they score; MRR is computed over the
//! same ranking, i.e. it is MRR@depth (`--depth` makes it deeper). Scorers may cap results
//! themselves (keyword: 20), which bounds MRR the same way it bounds a real agent's search.
//!
//! Latency is measured around `Scorer::search` only, by the one harness (`timing`) with a clock
//! passed in by the caller (the command layer passes a monotonic clock; tests a fake one).

use indexmap::IndexMap;

use super::classes::QueryClass;
use super::metrics::{Metric, all_metrics, expected_ranks, mean, metric_names, round_metric};
use super::queries::{LabeledQuery, QuerySet};
use super::result::{ClassResult, QueryResult, ScorerResult};
use super::result::{KeptRanking, RunSummary};
use super::runfile::{RankedTool, Run, TieBreak};
use super::siblings::{Siblings, WrongSibling};
use super::{bootstrap, classes, thresholds};
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::search::ScorerName;
use crate::search::{Scorer, SearchError, SearchRequest};
use crate::timing::{Clock, LatencyUs, time_search};

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
    /// Compute the refusal curve (`--thresholds`).
    pub thresholds: bool,
    /// Keep each query's whole ranking (to the depth) in memory, for `--write-run`.
    pub keep_rankings: bool,
    /// Whether each scorer's search latency is reported.
    pub latency: Latency,
}

/// Whether `evaluate` reports search latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Latency {
    #[default]
    Measured,
    /// `--no-latency`: none is reported, so the run may share work between scorers that would
    /// distort it (one embedding per query for every semantic and hybrid scorer).
    NotMeasured,
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
            thresholds: false,
            keep_rankings: false,
            latency: Latency::Measured,
        })
    }

    pub fn metric_names(&self) -> Vec<Metric> {
        metric_names(&self.ks)
    }
}

/// Ranks every query with `scorer` and computes the metrics; latency comes from the one
/// harness (`timing`) with the caller's clock. The search tool is never ranked. `progress`
/// advances by one after each query. A scorer that fails (an external process
/// that crashed, not a query it refused) fails the evaluation.
///
/// The overall metrics average the queries that expect a tool; no-match queries (`expected:
/// []`) count in their class only, where the metric is `refusal`: nothing returned.
pub fn evaluate(
    scorer: &dyn Scorer,
    catalog: &Catalog,
    siblings: &Siblings,
    queries: &[LabeledQuery],
    options: &EvalOptions,
    clock: Clock<'_>,
    progress: &dyn Progress,
) -> Result<ScorerResult> {
    let candidates = catalog.search_candidates();
    let mut elapsed = Vec::with_capacity(queries.len());
    let mut reported = Vec::new();
    let mut rankings = Vec::with_capacity(queries.len());
    for q in queries {
        let request = SearchRequest {
            query: &q.query,
            limit: options.depth,
            candidates: candidates.as_deref(),
            id: Some(&q.id),
        };
        let t = time_search(scorer, &request, clock);
        elapsed.push(t.elapsed);
        rankings.push(match t.outcome {
            Ok(outcome) => {
                if let Some(us) = outcome.reported_us {
                    reported.push(us);
                }
                QueryRanking {
                    tools: outcome
                        .hits
                        .iter()
                        .map(|h| (RankedTool::Known(h.tool), h.score))
                        .collect(),
                    refused: None,
                }
            }
            Err(e @ SearchError::Refused(_)) => QueryRanking {
                tools: Vec::new(),
                refused: Some(e.to_string()),
            },
            // A scorer that failed (not one that refused a query) has no result to score; its
            // message names the scorer and the query.
            Err(SearchError::Failed(why)) => return Err(Error::Scorer(why)),
        });
        progress.advance(1);
    }
    let source = RankingSource {
        name: scorer.name(),
        settings: scorer.settings().into_iter().collect(),
        latency_us: (options.latency == Latency::Measured).then(|| LatencyUs::of(&elapsed)),
        // Only when the scorer said for every query how long it took.
        reported_latency_us: (options.latency == Latency::Measured
            && !reported.is_empty()
            && reported.len() == queries.len())
        .then(|| LatencyUs::of_micros(&reported)),
        run: None,
    };
    Ok(score_rankings(
        source, &rankings, catalog, siblings, queries, options,
    ))
}

/// One query's ranking as `eval` scores it: ranked tools best first with their scores, or why
/// the scorer refused the query.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryRanking {
    pub tools: Vec<(RankedTool, f64)>,
    pub refused: Option<String>,
}

/// Where a set of rankings came from: what the result names and measures beside the metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct RankingSource {
    pub name: String,
    pub settings: IndexMap<String, String>,
    pub latency_us: Option<LatencyUs>,
    pub reported_latency_us: Option<LatencyUs>,
    pub run: Option<RunSummary>,
}

/// Scores a run file's rankings as a scorer's: one result named after the run.
pub fn evaluate_run(
    run: &Run,
    catalog: &Catalog,
    siblings: &Siblings,
    set: &QuerySet,
    options: &EvalOptions,
    ties: TieBreak,
    allow_unknown: bool,
) -> Result<ScorerResult> {
    let (ranked, stats) = run.rankings(set, catalog, options.depth, ties, allow_unknown)?;
    let rankings: Vec<QueryRanking> = ranked
        .into_iter()
        .map(|tools| QueryRanking {
            tools,
            refused: None,
        })
        .collect();
    let source = RankingSource {
        name: run.name.clone(),
        settings: IndexMap::from([
            ("run".to_string(), run.path.display().to_string()),
            ("format".to_string(), run.format.name().to_string()),
            ("ties".to_string(), ties.name().to_string()),
        ]),
        latency_us: None,
        reported_latency_us: None,
        run: Some(RunSummary {
            file: run.path.display().to_string(),
            format: run.format,
            ties,
            stats,
        }),
    };
    Ok(score_rankings(
        source,
        &rankings,
        catalog,
        siblings,
        &set.queries,
        options,
    ))
}

/// The metrics of one ranking per query (`rankings[i]` is `queries[i]`'s).
pub fn score_rankings(
    source: RankingSource,
    rankings: &[QueryRanking],
    catalog: &Catalog,
    siblings: &Siblings,
    queries: &[LabeledQuery],
    options: &EvalOptions,
) -> ScorerResult {
    let names = options.metric_names();
    let kept = if options.keep_rankings {
        queries
            .iter()
            .zip(rankings)
            .map(|(q, r)| KeptRanking {
                id: q.id.clone(),
                query: q.query.clone(),
                results: r.tools[..r.tools.len().min(options.depth)]
                    .iter()
                    .map(|(t, s)| {
                        let id = match t {
                            RankedTool::Known(i) => catalog.get(*i).id.clone(),
                            RankedTool::Unknown(id) => id.clone(),
                        };
                        (id, *s)
                    })
                    .collect(),
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut firsts = Vec::with_capacity(queries.len());
    let mut rows: Vec<QueryResult> = queries
        .iter()
        .zip(rankings)
        .map(|(q, r)| {
            let (row, first) = query_result(q, r, catalog, options, &names);
            firsts.push(first);
            row
        })
        .collect();
    let answerable: Vec<usize> = (0..queries.len())
        .filter(|&i| !queries[i].expected_tools.is_empty())
        .collect();
    let columns = metric_columns(&rows, &answerable, &names);
    let wrong_sibling = WrongSibling::count(
        siblings,
        answerable
            .iter()
            .map(|&i| (queries[i].expected_tools.as_slice(), firsts[i])),
    );
    let thresholds = options
        .thresholds
        .then(|| thresholds::curve(&rows, &options.ks));
    let classes = class_results(queries, &rows, &names);
    for row in &mut rows {
        for v in row.metrics.values_mut() {
            *v = round_metric(*v);
        }
    }
    ScorerResult {
        scorer: ScorerName::new(&source.name),
        settings: source.settings,
        // No query that expects a tool: no mean, n/a (a 0 would read as a scorer that
        // finds nothing).
        metrics: names
            .iter()
            .cloned()
            .zip(
                columns
                    .iter()
                    .map(|c| (!answerable.is_empty()).then(|| round_metric(mean(c)))),
            )
            .collect(),
        ci95: intervals(&names, &columns, options.resamples),
        latency_us: source.latency_us,
        reported_latency_us: source.reported_latency_us,
        run: source.run,
        refused_queries: rows.iter().filter(|r| r.refused.is_some()).count(),
        classes,
        wrong_sibling,
        thresholds,
        per_query: options.per_query.then_some(rows),
        rankings: kept,
    }
}

/// Each metric's per-query values over the chosen rows (unrounded).
fn metric_columns(rows: &[QueryResult], chosen: &[usize], names: &[Metric]) -> Vec<Vec<f64>> {
    names
        .iter()
        .map(|n| chosen.iter().map(|&i| rows[i].metrics[n]).collect())
        .collect()
}

/// Means per class, classes in output order; a no-match class reports `refusal`.
fn class_results(
    queries: &[LabeledQuery],
    rows: &[QueryResult],
    names: &[Metric],
) -> IndexMap<QueryClass, ClassResult> {
    classes::ordered(queries.iter().map(|q| &q.class))
        .into_iter()
        .map(|class| {
            let members: Vec<usize> = (0..queries.len())
                .filter(|&i| queries[i].class == class)
                .collect();
            let metrics = if class == classes::NO_MATCH {
                let refused = members.iter().map(|&i| rows[i].metrics[&REFUSAL]);
                let values: Vec<f64> = refused.collect();
                IndexMap::from([(REFUSAL, round_metric(mean(&values)))])
            } else {
                let columns = metric_columns(rows, &members, names);
                names
                    .iter()
                    .cloned()
                    .zip(columns.iter().map(|c| round_metric(mean(c))))
                    .collect()
            };
            let result = ClassResult {
                queries: members.len(),
                metrics,
            };
            (class, result)
        })
        .collect()
}

/// The metric of a no-match query: 1 when the scorer returned nothing, else 0.
pub const REFUSAL: Metric = Metric::Refusal;

/// Stands in a ranking for a tool the catalog lacks: never an expected tool.
const UNKNOWN: usize = usize::MAX;

/// One query's ranks, top results, their scores and metrics (unrounded: means are taken from
/// them), and the first result when it is a catalog tool.
fn query_result(
    q: &LabeledQuery,
    ranking: &QueryRanking,
    catalog: &Catalog,
    options: &EvalOptions,
    names: &[Metric],
) -> (QueryResult, Option<usize>) {
    let top_n = options.ks.last().copied().unwrap_or(MIN_DEPTH);
    // A scorer that ignores the limit must not score deeper than asked.
    let hits = &ranking.tools[..ranking.tools.len().min(options.depth)];
    let indices: Vec<usize> = hits
        .iter()
        .map(|(t, _)| match t {
            RankedTool::Known(i) => *i,
            RankedTool::Unknown(_) => UNKNOWN,
        })
        .collect();
    let ranks = expected_ranks(&q.expected_tools, &indices);
    let metrics = if q.expected_tools.is_empty() {
        let refusal = if indices.is_empty() { 1.0 } else { 0.0 };
        IndexMap::from([(REFUSAL, refusal)])
    } else {
        names
            .iter()
            .cloned()
            .zip(all_metrics(&ranks, &options.ks))
            .collect()
    };
    let id = |t: &RankedTool| match t {
        RankedTool::Known(i) => catalog.get(*i).id.clone(),
        RankedTool::Unknown(id) => id.clone(),
    };
    let row = QueryResult {
        id: q.id.clone(),
        query: q.query.clone(),
        class: q.class.clone(),
        expected: q.expected.clone(),
        ranks,
        top: hits.iter().take(top_n).map(|(t, _)| id(t)).collect(),
        scores: hits
            .iter()
            .take(top_n)
            .map(|(_, s)| round_metric(*s))
            .collect(),
        metrics,
        refused: ranking.refused.clone(),
    };
    let first = indices.first().copied().filter(|&i| i != UNKNOWN);
    (row, first)
}

/// Intervals for the graded metrics only: hit@k and complete@k are proportions whose
/// intervals add little and would double the bootstrap's cost.
fn intervals(
    names: &[Metric],
    columns: &[Vec<f64>],
    resamples: usize,
) -> IndexMap<Metric, [f64; 2]> {
    let chosen: Vec<(&Metric, &Vec<f64>)> = names
        .iter()
        .zip(columns)
        .filter(|(n, _)| has_interval(n))
        .collect();
    let values: Vec<Vec<f64>> = chosen.iter().map(|(_, c)| (*c).clone()).collect();
    let found = bootstrap::mean_intervals(&values, resamples, bootstrap::SEED);
    chosen
        .iter()
        .zip(found)
        .filter_map(|((n, _), i)| {
            i.map(|i| ((*n).clone(), [round_metric(i.low), round_metric(i.high)]))
        })
        .collect()
}

/// Whether `evaluate` computes a bootstrap interval for this metric: recall@k, mrr, ndcg@10.
pub fn has_interval(metric: &Metric) -> bool {
    matches!(metric, Metric::Recall(_) | Metric::Mrr | Metric::Ndcg(_))
}

/// Labels must name tools a search can return: a query expecting the search tool is an input
/// error at the query (the search tool is never a search result).
pub fn check_labels(set: &QuerySet, catalog: &Catalog) -> Result<()> {
    let Some(search_tool) = catalog.search_tool() else {
        return Ok(());
    };
    match set
        .queries
        .iter()
        .find(|q| q.expected_tools.contains(&search_tool))
    {
        Some(q) => Err(Error::input(
            &set.path,
            Some(q.position),
            format!(
                "query {:?} expects {}, the search tool, which is never a search result; \
                 label the tool the query needs",
                q.id,
                catalog.get(search_tool).id
            ),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::InputError;
    use crate::eval::queries::tests::catalog;
    use crate::search::{Explanation, Hit, ScorerKind, SearchError, SearchOutcome};
    use std::cell::Cell;
    use std::collections::HashMap;
    use std::time::Duration;

    /// A scorer that answers each query with a fixed ranking of tool ids (score = 1/position).
    pub(crate) struct FixedScorer {
        pub catalog: Catalog,
        pub rankings: HashMap<String, Vec<&'static str>>,
    }

    impl Scorer for FixedScorer {
        fn name(&self) -> String {
            ScorerKind::Keyword.name().to_string()
        }
        fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError> {
            if request.query == "bad(" {
                return Err(InputError::usage("unbalanced parenthesis").into());
            }
            let ids = self
                .rankings
                .get(request.query)
                .cloned()
                .unwrap_or_default();
            let hits = ids
                .iter()
                .map(|id| self.catalog.index_of(id).unwrap())
                .filter(|&t| request.is_candidate(t))
                .take(request.limit)
                .enumerate()
                .map(|(i, tool)| Hit {
                    tool,
                    score: 1.0 / (i + 1) as f64,
                })
                .collect();
            Ok(SearchOutcome {
                hits,
                not_found: vec![],
                ambiguous: Vec::new(),
                total_tools: self.catalog.len(),
                reported_us: None,
            })
        }
        fn explain_tool(
            &self,
            _: &SearchRequest<'_>,
            tool: usize,
        ) -> Result<Explanation, SearchError> {
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
            expected: expected
                .iter()
                .map(std::string::ToString::to_string)
                .collect(),
            expected_tools: expected.iter().map(|e| cat.index_of(e).unwrap()).collect(),
            class: if expected.is_empty() {
                "no-match".into()
            } else {
                "paraphrase".into()
            },
            position: crate::error::Position { line: 1, column: 1 },
        }
    }

    /// A fake clock that advances 1 µs per reading per query number, so latencies are known.
    pub(crate) fn fake_clock() -> impl Fn() -> Duration {
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

    /// The fixture evaluated into the one result type (`q.jsonl`, cutoffs `ks`).
    pub(crate) fn fixture_result(ks: &[usize], per_query: bool) -> crate::eval::EvalResult {
        let (scorer, queries) = fixture();
        let set = QuerySet {
            path: "q.jsonl".into(),
            queries,
        };
        let options = EvalOptions::new(ks, None, per_query).unwrap();
        let e = evaluate(
            &scorer,
            &scorer.catalog,
            &Siblings::default(),
            &set.queries,
            &options,
            &fake_clock(),
            &crate::progress::Quiet,
        )
        .unwrap();
        crate::eval::EvalResult::new(
            &scorer.catalog,
            &set,
            &options,
            &Siblings::default(),
            vec![e],
        )
    }

    #[test]
    fn evaluates_a_fixed_ranking() {
        let (scorer, queries) = fixture();
        let options = EvalOptions::new(&[3, 1], None, true).unwrap();
        assert_eq!(options.ks, vec![1, 3]);
        assert_eq!(options.depth, 10);
        let e = evaluate(
            &scorer,
            &scorer.catalog,
            &Siblings::default(),
            &queries,
            &options,
            &fake_clock(),
            &crate::progress::Quiet,
        )
        .unwrap();
        let get = |name: &str| e.metric(&name.into()).unwrap();
        // q1: a@1; q2: c@1, b@3; q3: nothing; q4: refused → 0.
        assert_eq!(get("recall@1"), (1.0 + 0.5) / 4.0);
        assert_eq!(get("recall@3"), (1.0 + 1.0) / 4.0);
        assert_eq!(get("hit@1"), 0.5);
        assert_eq!(get("complete@1"), 0.25);
        assert_eq!(get("complete@3"), 0.5);
        assert_eq!(get("mrr"), 0.5);
        // q2: DCG = 1 + 1/log2(4) = 1.5; ideal = 1 + 1/log2(3)
        let q2 = 1.5 / (1.0 + 1.0 / 3f64.log2());
        assert_eq!(get("ndcg@10"), round_metric((1.0 + q2) / 4.0));
        assert_eq!(e.refused_queries, 1);
        let rows = e.per_query.as_ref().unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[1].ranks, vec![Some(3), Some(1)]);
        assert_eq!(rows[1].top, vec!["c", "d", "b"]);
        assert_eq!(rows[2].ranks, vec![None]);
        assert!(rows[3].refused.as_deref().unwrap().contains("parenthesis"));
        // fake latencies 1, 2, 3, 4 µs
        let latency = e.latency_us.unwrap();
        assert_eq!((latency.searches, latency.p50, latency.p95), (4, 2.0, 4.0));
        assert_eq!(e.settings["fixed"], "yes");
        let ci = e.ci95[&Metric::Recall(1)];
        assert!(ci[0] <= 0.375 && 0.375 <= ci[1]);
    }

    #[test]
    fn same_input_same_result_apart_from_latency() {
        let (scorer, queries) = fixture();
        let options = EvalOptions::new(&DEFAULT_KS, Some(20), true).unwrap();
        let a = evaluate(
            &scorer,
            &scorer.catalog,
            &Siblings::default(),
            &queries,
            &options,
            &fake_clock(),
            &crate::progress::Quiet,
        )
        .unwrap();
        let b = evaluate(
            &scorer,
            &scorer.catalog,
            &Siblings::default(),
            &queries,
            &options,
            &fake_clock(),
            &crate::progress::Quiet,
        )
        .unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn the_search_tool_is_never_ranked_nor_expected() {
        let cat = catalog(&["ToolSearch", "a", "b"]);
        let rankings = HashMap::from([("find".to_string(), vec!["ToolSearch", "a", "b"])]);
        let scorer = FixedScorer {
            catalog: cat.clone(),
            rankings,
        };
        let queries = vec![query("q1", "find", &["b"], &cat)];
        let options = EvalOptions::new(&[1, 3], None, true).unwrap();
        let e = evaluate(
            &scorer,
            &cat,
            &Siblings::default(),
            &queries,
            &options,
            &fake_clock(),
            &crate::progress::Quiet,
        )
        .unwrap();
        // Without the search tool in the way, `b` ranks second.
        assert_eq!(e.per_query.as_ref().unwrap()[0].top, vec!["a", "b"]);
        assert_eq!(e.metric(&Metric::Mrr), Some(0.5));
        let set = QuerySet {
            path: "q.jsonl".into(),
            queries: vec![query("q2", "load tools", &["ToolSearch"], &cat)],
        };
        let err = check_labels(&set, &cat).unwrap_err().to_string();
        assert!(
            err.starts_with("q.jsonl:1:1: query \"q2\" expects ToolSearch, the search tool"),
            "{err}"
        );
        let r = crate::eval::result::EvalResult::new(
            &cat,
            &set,
            &options,
            &Siblings::default(),
            vec![e],
        );
        assert_eq!((r.tool_count, r.ranked_tools), (3, 2));
        assert_eq!(r.search_tool.as_deref(), Some("ToolSearch"));
    }

    /// A scorer that knows the labels: it ranks a query's expected tools first (in label
    /// order), then every other tool by id. Evaluating it must give perfect scores.
    struct OracleScorer {
        by_text: HashMap<String, Vec<usize>>,
        tool_count: usize,
    }

    impl Scorer for OracleScorer {
        fn name(&self) -> String {
            ScorerKind::Bm25.name().to_string()
        }
        fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError> {
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
                ambiguous: Vec::new(),
                total_tools: self.tool_count,
                reported_us: None,
            })
        }
        fn explain_tool(
            &self,
            _: &SearchRequest<'_>,
            tool: usize,
        ) -> Result<Explanation, SearchError> {
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
            let e = evaluate(
                &oracle,
                catalog,
                &Siblings::default(),
                &set.queries,
                &options,
                &fake_clock(),
                &crate::progress::Quiet,
            )
            .unwrap();
            eprintln!(
                "{name}: {} queries evaluated with 95% intervals in {:?}",
                set.queries.len(),
                started.elapsed()
            );
            let (mrr, ndcg, recall10) = (&Metric::Mrr, &Metric::Ndcg(10), &Metric::Recall(10));
            let mut checked = 0;
            for (q, o) in set.queries.iter().zip(e.per_query.as_deref().unwrap()) {
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
}
