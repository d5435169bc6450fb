//! `toolbudget eval`: ranks every labeled query with each scorer and reports retrieval
//! metrics and search latency. Metric definitions: `eval::metrics`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::progress::{self, Bar};
use crate::cli::EvalArgs;
use toolbudget::catalog::{Catalog, CatalogSource, parse_catalog_arg};
use toolbudget::error::{Error, Result};
use toolbudget::eval::pool::PoolInfo;
use toolbudget::eval::run::{EvalOptions, Latency, check_labels, evaluate, evaluate_run};
use toolbudget::eval::runfile::read_runs;
use toolbudget::eval::siblings::Siblings;
use toolbudget::eval::{EvalResult, ScorerResult, load_queries};
use toolbudget::output::emit;
use toolbudget::search::{self, ScorerConfig, ScorerKind, ScorerSpec};

/// Scorers evaluated when no `--scorer` is given.
pub const DEFAULT_SCORERS: [ScorerKind; 2] = [ScorerKind::Keyword, ScorerKind::Bm25];

pub fn run(args: &EvalArgs, quiet: bool) -> Result<()> {
    let mut options = EvalOptions::new(&args.k, args.depth, args.per_query)?;
    options.thresholds = args.thresholds;
    options.keep_rankings = args.write_run.is_some();
    let own = super::load(&args.catalog)?;
    let set = load_queries(&args.queries, &own)?;
    check_labels(&set, &own)?;
    // Run files are read before any scorer starts: a bad run fails at once.
    let mut runs = Vec::new();
    for arg in &args.runs {
        let (name, path) = split_run_arg(arg);
        runs.extend(read_runs(&path, name)?);
    }
    let (catalog, pool) = pooled(own, args)?;
    toolbudget::eval::check_work(&set, &catalog)?;
    let specs = scorer_specs(args);
    let keyword = specs
        .iter()
        .any(|s| matches!(s, ScorerSpec::Builtin(ScorerKind::Keyword)));
    toolbudget::eval::charge_work(
        &set,
        &catalog,
        specs.len(),
        keyword,
        &mut toolbudget::budget::Budget::new(),
    )?;
    if let Some(p) = &pool
        && p.duplicate_ids > 0
        && !quiet
    {
        eprintln!(
            "eval: {} pool tools left out: their ids are already taken (the first definition wins)",
            p.duplicate_ids
        );
    }
    let catalog = Arc::new(catalog);
    let search_tool = catalog.search_tool();
    let siblings = Siblings::find(&catalog, |t| Some(t) != search_tool);
    let mut config = ScorerConfig::default();
    args.embedding.apply(&mut config);
    args.external.apply(&mut config);
    config.external.mcp.allow_unknown_tools = args.allow_unknown_tools;
    let visible = progress::visible(quiet);
    config.progress = progress::embed_progress(visible);
    if args.no_latency {
        options.latency = Latency::NotMeasured;
        share_query_vectors(&specs, &set, &mut config)?;
    }
    let origin = Instant::now();
    let clock = || origin.elapsed();
    let mut results = Vec::new();
    for spec in specs {
        let scorer = search::build_spec(&spec, Arc::clone(&catalog), &config)?;
        let name = scorer.name();
        let bar = Bar::new(visible, &name, set.queries.len(), "queries");
        if !quiet && !visible {
            eprintln!(
                "eval: {name} over {} queries, {} tools",
                set.queries.len(),
                catalog.len()
            );
        }
        let tick = |done: usize| bar.set_position(done as u64);
        let r = evaluate(
            scorer.as_ref(),
            &catalog,
            &siblings,
            &set.queries,
            &options,
            &clock,
            &tick,
        );
        // The warning goes above the bar, not after its last character.
        if let Ok(r) = &r
            && r.refused_queries > 0
            && !quiet
        {
            bar.note(&format!(
                "warning: {name} refused {}; they score 0 (see `refused` in --per-query rows)",
                toolbudget::number::plural(r.refused_queries, "query", "queries")
            ));
        }
        bar.finish();
        let r = r?;
        results.push(r);
    }
    for run in &runs {
        let r = evaluate_run(
            run,
            &catalog,
            &siblings,
            &set,
            &options,
            args.run_ties,
            args.allow_unknown_tools,
        )?;
        if let Some(s) = r.run.as_ref().map(|s| s.stats)
            && s.missing_queries > 0
            && !quiet
        {
            eprintln!(
                "note: run {} has no ranking for {} of the {} queries; they score 0",
                r.scorer,
                s.missing_queries,
                set.queries.len()
            );
        }
        results.push(r);
    }
    check_unique_names(&results)?;
    let mut result = EvalResult::new(&catalog, &set, &options, &siblings, results);
    result.pool = pool;
    if let Some(path) = &args.write_run {
        toolbudget::output::write_atomic(
            path,
            toolbudget::view::eval::run_jsonl(&result).as_bytes(),
        )?;
    }
    emit(
        args.output.out.as_deref(),
        &toolbudget::view::eval::render(&result, args.output.format),
    )
}

/// Embeds the query set once for every semantic and hybrid scorer asked for (only when no
/// latency is measured: a scorer's latency includes its query's embedding).
#[cfg(feature = "semantic")]
fn share_query_vectors(
    specs: &[ScorerSpec],
    set: &toolbudget::eval::QuerySet,
    config: &mut ScorerConfig,
) -> Result<()> {
    let embeds = specs.iter().any(|s| {
        matches!(
            s,
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
            .map_err(Error::Missing)?;
    config.query_vectors = Some(Arc::new(vectors));
    Ok(())
}

#[cfg(not(feature = "semantic"))]
fn share_query_vectors(
    _: &[ScorerSpec],
    _: &toolbudget::eval::QuerySet,
    _: &mut ScorerConfig,
) -> Result<()> {
    Ok(())
}

/// `NAME=FILE` or `FILE`. A path that itself holds `=` is read whole when it exists.
pub(crate) fn split_run_arg(arg: &str) -> (Option<&str>, PathBuf) {
    if !Path::new(arg).exists()
        && let Some((name, path)) = arg.split_once('=')
        && !name.is_empty()
    {
        return (Some(name), PathBuf::from(path));
    }
    (None, PathBuf::from(arg))
}

/// Two results of one name could not be told apart in any output, nor by `compare`.
fn check_unique_names(results: &[ScorerResult]) -> Result<()> {
    for (i, r) in results.iter().enumerate() {
        if results[..i].iter().any(|o| o.scorer == r.scorer) {
            return Err(Error::usage(format!(
                "two results are named {:?}: name a run with --run NAME=FILE",
                r.scorer
            )));
        }
    }
    Ok(())
}

/// The scorers asked for, each once, in order (the default pair when neither a scorer nor a
/// run is given).
fn scorer_specs(args: &EvalArgs) -> Vec<ScorerSpec> {
    let defaults: Vec<ScorerSpec> = DEFAULT_SCORERS.iter().map(|&k| k.into()).collect();
    let asked = if args.scorers.is_empty() && args.runs.is_empty() {
        &defaults[..]
    } else {
        &args.scorers[..]
    };
    let mut specs: Vec<ScorerSpec> = Vec::new();
    for s in asked {
        if !specs.contains(s) {
            specs.push(s.clone());
        }
    }
    specs
}

/// The own catalog, extended by the pool's tools when `--pool` is given.
fn pooled(own: Catalog, args: &EvalArgs) -> Result<(Catalog, Option<PoolInfo>)> {
    if args.pool.is_empty() {
        return Ok((own, None));
    }
    let own_files: Vec<PathBuf> = args
        .catalog
        .catalogs
        .iter()
        .map(|a| parse_catalog_arg(a).path)
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let mut files = Vec::new();
    for source in &args.pool {
        crate::commands::catalog_files("--pool", source, &mut files)?;
    }
    let found = files.len();
    files.retain(|f| f.canonicalize().map_or(true, |c| !own_files.contains(&c)));
    let sources: Vec<CatalogSource> = files
        .into_iter()
        .map(|path| CatalogSource { path, server: None })
        .collect();
    let (catalog, mut info) = toolbudget::eval::pool::extend(&own, &sources)?;
    info.sources = args.pool.iter().map(|p| p.display().to_string()).collect();
    info.skipped_files = found - sources.len();
    Ok((catalog, Some(info)))
}
