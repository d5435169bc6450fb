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
use crate::eval::{EvalResult, ScorerName, load_queries};
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

/// Evaluates one labeled query set with every scorer that can be built, at cutoffs `ks`; a
/// scorer that cannot (the embedding model is missing) is listed as skipped with the reason.
/// Measured latencies come back apart, and per-query rows only as the misses (queries without
/// every expected tool in the top `miss_k`).
#[allow(clippy::too_many_arguments)]
pub fn every_scorer(
    input: &EvalInput,
    extra: &[ScorerSpec],
    external: &ExternalConfig,
    ks: &[usize],
    miss_k: usize,
    clock: Clock<'_>,
    progress: &dyn Progress,
) -> Result<(EvalSet, Vec<EvalLatency>)> {
    let catalog = Arc::new(load_catalogs(&input.catalog)?);
    let set = load_queries(&input.queries, &catalog)?;
    check_labels(&set, &catalog)?;
    crate::eval::check_work(&set, &catalog)?;
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
