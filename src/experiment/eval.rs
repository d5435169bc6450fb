//! Evaluations as the report runs them: one labeled query set against its catalog with every
//! scorer that can be built ([`EvalSet`]), through `eval::run::evaluate`; measured latency and
//! per-query rows kept apart so the result is deterministic.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Progress;
use crate::catalog::{Catalog, CatalogSource, load_catalogs};
use crate::error::Result;
use crate::eval::run::{EvalOptions, check_labels, evaluate};
use crate::eval::siblings::Siblings;
use crate::eval::{EvalResult, QuerySet, ScorerName, charge_work, load_queries};
use crate::search::external::ExternalConfig;
use crate::search::{self, Scorer, ScorerConfig, ScorerKind, ScorerSpec};
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

fn build_scorer(kind: ScorerKind, catalog: Arc<Catalog>) -> Result<Box<dyn Scorer>> {
    search::build(kind, catalog, &ScorerConfig::default())
}

/// One query set loaded and checked against its catalog, its search work charged.
pub struct LoadedSet {
    catalog: Arc<Catalog>,
    set: QuerySet,
}

/// Loads every query set of one run and charges each one's search work (every built-in
/// scorer and the `extra` ones) to `budget` before any is searched: sets that each fit their
/// own bounds but not the run's together are refused here, naming the set that goes over.
pub fn load_sets(
    inputs: &[EvalInput],
    extra: usize,
    budget: &mut crate::budget::Budget,
) -> Result<Vec<LoadedSet>> {
    inputs
        .iter()
        .map(|input| {
            let catalog = Arc::new(load_catalogs(&input.catalog)?);
            let set = load_queries(&input.queries, &catalog)?;
            check_labels(&set, &catalog)?;
            crate::eval::check_work(&set, &catalog)?;
            charge_work(&set, &catalog, ScorerKind::ALL.len() + extra, true, budget)?;
            Ok(LoadedSet { catalog, set })
        })
        .collect()
}

/// Evaluates one labeled query set with every scorer that can be built, at cutoffs `ks`; a
/// scorer that cannot (the embedding model is missing) is listed as skipped with the reason.
/// Measured latencies come back apart, and per-query rows only as the misses (queries without
/// every expected tool in the top `miss_k`).
#[allow(clippy::too_many_arguments)]
pub fn every_scorer(
    input: &EvalInput,
    loaded: LoadedSet,
    extra: &[ScorerSpec],
    external: &ExternalConfig,
    ks: &[usize],
    miss_k: usize,
    clock: Clock<'_>,
    progress: &dyn Progress,
) -> Result<(EvalSet, Vec<EvalLatency>)> {
    let LoadedSet { catalog, set } = loaded;
    let options = EvalOptions::new(ks, None, true)?;
    let siblings = Siblings::find(&catalog, |t| Some(t) != catalog.search_tool());
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    let run = |scorer: &dyn Scorer| {
        evaluate(
            scorer,
            &catalog,
            &siblings,
            &set.queries,
            &options,
            clock,
            &|_| {},
        )
    };
    progress.phase("eval", ScorerKind::ALL.len() + extra.len());
    for kind in ScorerKind::ALL {
        progress.step(&format!("{}: {kind}", input.queries.display()));
        match build_scorer(kind, catalog.clone()) {
            Ok(scorer) => results.push(run(scorer.as_ref())?),
            Err(e) => skipped.push((kind.into(), e.to_string())),
        }
        progress.advance();
    }
    // The user's own scorers: asked for by name, so one that cannot start is an error.
    let config = ScorerConfig {
        external: external.clone(),
        ..ScorerConfig::default()
    };
    for spec in extra {
        progress.step(&format!("{}: {spec}", input.queries.display()));
        let scorer = search::build_spec(spec, catalog.clone(), &config)?;
        results.push(run(scorer.as_ref())?);
        progress.advance();
    }
    progress.finish();
    let mut result = EvalResult::new(&catalog, &set, &options, &siblings, results);
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
        assert_eq!(load_sets(&inputs[..2], 0, &mut budget).unwrap().len(), 2);
        assert_eq!(budget.used(Kind::SearchWork), 2 * per_set);
        let mut budget = Budget::with_search_limit(limit);
        let e = load_sets(&inputs, 0, &mut budget).err().unwrap();
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
