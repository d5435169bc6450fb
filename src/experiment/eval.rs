//! Evaluation: a labeled query set ranked by scorers and run files against its catalog, the one
//! path for `eval` ([`EvalPlan`], [`run`]) and the report's search-quality section
//! ([`plan_sets`], [`report_set`]: every scorer that can be built, measured latency and per-query
//! rows kept apart so the report is deterministic).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, CatalogSource, load_catalogs};
use crate::error::{Error, Result};
use crate::eval::pool::PoolInfo;
pub use crate::eval::run::{EvalOptions, Latency};
use crate::eval::run::{check_labels, evaluate, evaluate_run};
use crate::eval::runfile::{Run, TieBreak, read_runs};
use crate::eval::siblings::Siblings;
use crate::eval::{EvalResult, QuerySet, ScorerName, ScorerResult, charge_work, load_queries};
use crate::progress::{Progress, Unit};
use crate::search::external::ExternalConfig;
use crate::search::{self, ScorerConfig, ScorerKind, ScorerSpec};
use crate::timing::{Clock, LatencyUs};

/// One labeled query set and its catalog.
#[derive(Debug, Clone)]
pub struct EvalInput {
    /// How the report names the catalog (`fixtures/catalogs`, `bfcl.json`).
    pub catalog_label: String,
    pub catalog: Vec<CatalogSource>,
    pub queries: PathBuf,
}

/// One labeled query set evaluated against its catalog with every available scorer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalSet {
    /// What the queries were run against (`fixtures/catalogs`, `bfcl.json`).
    pub catalog: String,
    /// The evaluator's result; latency moved to `ReportData::latency`, per-query rows to
    /// `misses` (so `report.json` stays deterministic and small).
    pub result: EvalResult,
    /// Scorers not run, with the reason.
    pub skipped: Vec<(ScorerName, String)>,
    /// Queries whose expected tools were not all in the top `miss_k`, per scorer.
    pub misses: Vec<Miss>,
    pub miss_k: usize,
}

impl EvalSet {
    pub fn name(&self) -> &str {
        &self.result.set
    }
}

/// A query a scorer missed; also a row of `data/misses.csv`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Miss {
    pub set: String,
    pub scorer: ScorerName,
    pub query_id: String,
    pub query: String,
    /// Expected tool ids, space-separated.
    pub expected: String,
    /// What the scorer ranked instead, best first, space-separated.
    pub ranked: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalLatency {
    pub set: String,
    pub scorer: ScorerName,
    pub latency_us: LatencyUs,
}

/// What an evaluation is asked, as plain values: the files (found by the command), the scorers
/// and runs, the options. [`EvalPlan::new`] loads and checks it.
#[derive(Debug, Clone)]
pub struct EvalRequest {
    pub catalog: Vec<CatalogSource>,
    /// Distractor catalogs (`--pool`), already found and without the own catalog's files.
    pub pool: Option<PoolRequest>,
    pub queries: PathBuf,
    /// Run files, each with the name it was given (`--run NAME=FILE`).
    pub runs: Vec<(Option<String>, PathBuf)>,
    pub scorers: Vec<ScorerChoice>,
    pub options: EvalOptions,
    pub config: ScorerConfig,
    pub run_ties: TieBreak,
    pub allow_unknown_tools: bool,
}

/// The pool's files and how the command found them.
#[derive(Debug, Clone, Default)]
pub struct PoolRequest {
    pub files: Vec<PathBuf>,
    /// The `--pool` arguments as given.
    pub sources: Vec<String>,
    /// Files of the pool left out because they are the own catalog's.
    pub skipped_files: usize,
}

/// A scorer to evaluate: one asked for by name must be built; a built-in the report offers
/// is skipped, with the reason, when it cannot be (the embedding model is missing).
#[derive(Debug, Clone, PartialEq)]
pub enum ScorerChoice {
    Required(ScorerSpec),
    IfAvailable(ScorerKind),
}

impl ScorerChoice {
    fn spec(&self) -> ScorerSpec {
        match self {
            ScorerChoice::Required(s) => s.clone(),
            ScorerChoice::IfAvailable(k) => ScorerSpec::Builtin(*k),
        }
    }
}

/// An evaluation with everything decided: the catalog (pooled), the query set checked against
/// it, the runs read, the work charged to the run's budget.
pub struct EvalPlan {
    catalog: Arc<Catalog>,
    set: QuerySet,
    runs: Vec<Run>,
    scorers: Vec<ScorerChoice>,
    options: EvalOptions,
    config: ScorerConfig,
    pool: Option<PoolInfo>,
    run_ties: TieBreak,
    allow_unknown_tools: bool,
}

impl EvalPlan {
    /// Loads and checks every input (run files before any scorer starts, so a bad run fails at
    /// once) and charges the search work to `budget`.
    pub fn new(request: EvalRequest, budget: &mut crate::budget::Budget) -> Result<EvalPlan> {
        let own = load_catalogs(&request.catalog)?;
        let set = load_queries(&request.queries, &own)?;
        check_labels(&set, &own)?;
        let mut runs = Vec::new();
        for (name, path) in &request.runs {
            runs.extend(read_runs(path, name.as_deref())?);
        }
        let (catalog, pool) = match request.pool {
            None => (own, None),
            Some(p) => {
                let sources: Vec<CatalogSource> = p
                    .files
                    .into_iter()
                    .map(|path| CatalogSource { path, server: None })
                    .collect();
                let (catalog, mut info) = crate::eval::pool::extend(&own, &sources)?;
                info.sources = p.sources;
                info.skipped_files = p.skipped_files;
                (catalog, Some(info))
            }
        };
        crate::eval::check_work(&set, &catalog)?;
        let keyword = request
            .scorers
            .iter()
            .any(|s| s.spec() == ScorerSpec::Builtin(ScorerKind::Keyword));
        charge_work(&set, &catalog, request.scorers.len(), keyword, budget)?;
        Ok(EvalPlan {
            catalog: Arc::new(catalog),
            set,
            runs,
            scorers: request.scorers,
            options: request.options,
            config: request.config,
            pool,
            run_ties: request.run_ties,
            allow_unknown_tools: request.allow_unknown_tools,
        })
    }

    /// What loading found that the user should hear (pool tools left out).
    pub fn notes(&self) -> Vec<String> {
        match &self.pool {
            Some(p) if p.duplicate_ids > 0 => vec![format!(
                "eval: {} pool tools left out: their ids are already taken (the first \
                 definition wins)",
                p.duplicate_ids
            )],
            _ => Vec::new(),
        }
    }
}

/// An evaluation's result and the scorers that could not be built.
pub struct Evaluated {
    pub result: EvalResult,
    pub skipped: Vec<(ScorerName, String)>,
}

/// The one evaluation, for `eval` and the report: every scorer of the plan, then every run,
/// over its query set; each scorer a progress phase over the queries.
pub fn run(plan: &EvalPlan, clock: Clock<'_>, progress: &dyn Progress) -> Result<Evaluated> {
    let catalog = &plan.catalog;
    let search_tool = catalog.search_tool();
    let siblings = Siblings::find(catalog, |t| Some(t) != search_tool);
    let mut config = plan.config.clone();
    if plan.options.latency == Latency::NotMeasured {
        share_query_vectors(&plan.scorers, &plan.set, &mut config)?;
    }
    let queries = &plan.set.queries;
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    for choice in &plan.scorers {
        let scorer = match (
            choice,
            search::build_spec(&choice.spec(), catalog.clone(), &config),
        ) {
            (_, Ok(s)) => s,
            (ScorerChoice::IfAvailable(kind), Err(e)) => {
                skipped.push(((*kind).into(), e.to_string()));
                continue;
            }
            (ScorerChoice::Required(_), Err(e)) => return Err(e),
        };
        let name = scorer.name();
        progress.phase(&name, queries.len() as u64, Unit::Items("queries"));
        let r = evaluate(
            scorer.as_ref(),
            catalog,
            &siblings,
            queries,
            &plan.options,
            clock,
            progress,
        );
        if let Ok(r) = &r
            && r.refused_queries > 0
        {
            progress.note(&format!(
                "warning: {name} refused {}; they score 0 (see `refused` in --per-query rows)",
                crate::number::plural(r.refused_queries, "query", "queries")
            ));
        }
        progress.finish();
        results.push(r?);
    }
    for r in &plan.runs {
        let r = evaluate_run(
            r,
            catalog,
            &siblings,
            &plan.set,
            &plan.options,
            plan.run_ties,
            plan.allow_unknown_tools,
        )?;
        if let Some(s) = r.run.as_ref().map(|s| s.stats)
            && s.missing_queries > 0
        {
            progress.note(&format!(
                "note: run {} has no ranking for {} of the {} queries; they score 0",
                r.scorer,
                s.missing_queries,
                queries.len()
            ));
        }
        results.push(r);
    }
    check_unique_names(&results)?;
    let mut result = EvalResult::new(catalog, &plan.set, &plan.options, &siblings, results);
    result.pool.clone_from(&plan.pool);
    Ok(Evaluated { result, skipped })
}

/// Two results of one name could not be told apart in any output, nor by `compare`.
/// Refuses an output of `eval` that the command reading it back would refuse, before anything
/// is written: `--out` in JSON (what `compare` and the report read), `--write-run` (what
/// `eval --run` reads, JSONL). `flag` and `path` name the output in the message.
pub fn check_readable(flag: &str, path: &Path, text: &str, json: bool) -> Result<()> {
    let Err(over) = crate::document::readable_back(text, json) else {
        return Ok(());
    };
    let reader = if json { "compare" } else { "eval --run" };
    Err(Error::usage(format!(
        "{flag} {}: the output {over}, so `{reader}` could not read it back; nothing was \
         written. Evaluate fewer queries per file{}",
        path.display(),
        if json {
            " (or leave out --per-query)"
        } else {
            ""
        }
    )))
}

fn check_unique_names(results: &[ScorerResult]) -> Result<()> {
    for (i, r) in results.iter().enumerate() {
        if results[..i].iter().any(|o| o.scorer == r.scorer) {
            return Err(crate::error::Error::usage(format!(
                "two results are named {:?}: name a run with --run NAME=FILE",
                r.scorer
            )));
        }
    }
    Ok(())
}

/// Embeds the query set once for every semantic and hybrid scorer asked for (only when no
/// latency is measured: a scorer's latency includes its query's embedding).
#[cfg(feature = "semantic")]
fn share_query_vectors(
    scorers: &[ScorerChoice],
    set: &QuerySet,
    config: &mut ScorerConfig,
) -> Result<()> {
    let embeds = scorers.iter().any(|s| {
        matches!(
            s.spec(),
            ScorerSpec::Builtin(ScorerKind::Semantic | ScorerKind::Hybrid)
        )
    });
    if !embeds {
        return Ok(());
    }
    let embedder = search::load_embedder(config.model_dir.as_deref())?;
    let cache_dir = config.embedding_cache_dir();
    let texts: Vec<&str> = set.queries.iter().map(|q| q.query.as_str()).collect();
    let vectors =
        search::query_vectors::QueryVectors::compute(&embedder, &texts, cache_dir.as_deref())
            .map_err(crate::error::Error::Missing)?;
    config.query_vectors = Some(Arc::new(vectors));
    Ok(())
}

#[cfg(not(feature = "semantic"))]
fn share_query_vectors(_: &[ScorerChoice], _: &QuerySet, _: &mut ScorerConfig) -> Result<()> {
    Ok(())
}

/// Plans every query set of one report run, charging each one's search work (every built-in
/// scorer and the `extra` ones) to `budget` before any is searched: sets that each fit their
/// own bounds but not the run's together are refused here, naming the set that goes over.
pub fn plan_sets(
    inputs: &[EvalInput],
    extra: &[ScorerSpec],
    external: &ExternalConfig,
    ks: &[usize],
    budget: &mut crate::budget::Budget,
) -> Result<Vec<EvalPlan>> {
    let mut scorers: Vec<ScorerChoice> = ScorerKind::ALL
        .into_iter()
        .map(ScorerChoice::IfAvailable)
        .collect();
    scorers.extend(extra.iter().cloned().map(ScorerChoice::Required));
    let config = ScorerConfig {
        external: external.clone(),
        ..ScorerConfig::default()
    };
    inputs
        .iter()
        .map(|input| {
            let request = EvalRequest {
                catalog: input.catalog.clone(),
                pool: None,
                queries: input.queries.clone(),
                runs: Vec::new(),
                scorers: scorers.clone(),
                options: EvalOptions::new(ks, None, true)?,
                config: config.clone(),
                run_ties: TieBreak::default(),
                allow_unknown_tools: false,
            };
            EvalPlan::new(request, budget)
        })
        .collect()
}

/// Evaluates one planned query set for the report: measured latencies come back apart, and
/// per-query rows only as the misses (queries without every expected tool in the top
/// `miss_k`).
pub fn report_set(
    input: &EvalInput,
    plan: &EvalPlan,
    miss_k: usize,
    clock: Clock<'_>,
    progress: &dyn Progress,
) -> Result<(EvalSet, Vec<EvalLatency>)> {
    let Evaluated {
        mut result,
        skipped,
    } = run(plan, clock, progress)?;
    let misses = misses(&result, miss_k);
    let mut latency = Vec::new();
    for r in &mut result.results {
        if let Some(l) = r.latency_us.take() {
            latency.push(EvalLatency {
                set: result.set.clone(),
                scorer: r.scorer.clone(),
                latency_us: l,
            });
        }
        r.per_query = None;
    }
    let set = EvalSet {
        catalog: input.catalog_label.clone(),
        result,
        skipped,
        misses,
        miss_k,
    };
    Ok((set, latency))
}

/// Queries without every expected tool in the top `miss_k`, per scorer.
fn misses(result: &EvalResult, miss_k: usize) -> Vec<Miss> {
    let mut out = Vec::new();
    for r in &result.results {
        for q in r.per_query.iter().flatten() {
            if q.ranks.iter().any(|rank| rank.is_none_or(|x| x > miss_k)) {
                out.push(Miss {
                    set: result.set.clone(),
                    scorer: r.scorer.clone(),
                    query_id: q.id.clone(),
                    query: q.query.clone(),
                    expected: q.expected.join(" "),
                    ranked: q
                        .top
                        .iter()
                        .take(miss_k)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(" "),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{Budget, Kind};

    /// Three query sets, each far under the per-set bound, together over the run's search
    /// budget (a test-sized one): refused while loading, before any scorer is built, naming
    /// the set that goes over, its share and the budget; two of them fit.
    #[test]
    fn query_sets_share_one_search_budget_per_run() {
        let dir = tempfile::tempdir().unwrap();
        let tools: Vec<String> = (0..5)
            .map(|i| format!(r#"{{"name": "t{i}", "description": "tool {i}"}}"#))
            .collect();
        let catalog = dir.path().join("s.json");
        std::fs::write(&catalog, format!(r#"{{"tools": [{}]}}"#, tools.join(","))).unwrap();
        let inputs: Vec<EvalInput> = ["a", "b", "c"]
            .iter()
            .map(|name| {
                let queries = dir.path().join(format!("{name}.jsonl"));
                let lines: String = (0..10)
                    .map(|i| {
                        let q = if i == 0 { "select:t1,t2" } else { "tool one" };
                        format!("{{\"id\": \"{name}{i}\", \"query\": \"{q}\", \"expected\": [\"mcp__s__t1\"]}}\n")
                    })
                    .collect();
                std::fs::write(&queries, lines).unwrap();
                EvalInput {
                    catalog_label: "s".into(),
                    catalog: vec![CatalogSource {
                        path: catalog.clone(),
                        server: None,
                    }],
                    queries,
                }
            })
            .collect();
        let n = load_catalogs(&inputs[0].catalog).unwrap().len() as u64;
        // 10 queries × n tools × 5 scorers, and 2 select: names × n tools.
        let per_set = 10 * n * ScorerKind::ALL.len() as u64 + 2 * n;
        let limit = 2 * per_set + per_set / 2;
        let mut budget = Budget::with_search_limit(limit);
        let plan = |inputs: &[EvalInput], budget: &mut Budget| {
            plan_sets(
                inputs,
                &[],
                &ExternalConfig::default(),
                &[1, 3, 5, 10],
                budget,
            )
        };
        assert_eq!(plan(&inputs[..2], &mut budget).unwrap().len(), 2);
        assert_eq!(budget.used(Kind::SearchWork), 2 * per_set);
        let mut budget = Budget::with_search_limit(limit);
        let e = plan(&inputs, &mut budget).err().unwrap();
        assert!(matches!(e, crate::error::Error::Input(_)), "{e}");
        let e = e.to_string();
        assert!(e.contains("c.jsonl"), "{e}");
        assert!(
            e.contains(&format!(
                "10 queries over {n} tools with 5 scorers ({per_set} query × tool pairs, {} of \
                 them select: names) bring the run's search work to {} query × tool pairs",
                2 * n,
                3 * per_set
            )),
            "{e}"
        );
        assert!(
            e.contains(&format!("over the budget of {limit} of one run")),
            "{e}"
        );
        // Each set alone is far under the per-set bound.
        assert!(10 * n <= crate::budget::MAX_EVAL_WORK);
    }
}
