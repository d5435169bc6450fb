//! `toolbudget eval`: ranks every labeled query with each scorer and reports retrieval
//! metrics and search latency. Metric definitions: `eval::metrics`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::EvalArgs;
use toolbudget::catalog::{Catalog, CatalogSource, parse_catalog_arg};
use toolbudget::error::Result;
use toolbudget::eval::pool::PoolInfo;
use toolbudget::eval::run::{EvalOptions, check_labels, evaluate};
use toolbudget::eval::siblings::Siblings;
use toolbudget::eval::{EvalResult, load_queries};
use toolbudget::output::emit;
use toolbudget::search::{self, ScorerConfig, ScorerKind};

/// Scorers evaluated when no `--scorer` is given.
pub const DEFAULT_SCORERS: [ScorerKind; 2] = [ScorerKind::Keyword, ScorerKind::Bm25];

pub fn run(args: &EvalArgs, quiet: bool) -> Result<()> {
    let mut options = EvalOptions::new(&args.k, args.depth, args.per_query)?;
    options.thresholds = args.thresholds;
    let own = super::load(&args.catalog)?;
    let set = load_queries(&args.queries, &own)?;
    check_labels(&set, &own)?;
    let (catalog, pool) = pooled(own, args)?;
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
    let visible = !quiet && std::io::stderr().is_terminal();
    config.progress = super::embed_progress(visible);
    let origin = Instant::now();
    let clock = || origin.elapsed();
    let mut results = Vec::new();
    for kind in scorer_kinds(args) {
        let scorer = search::build(kind, Arc::clone(&catalog), &config)?;
        let bar = progress_bar(kind, set.queries.len(), visible);
        if !quiet && !visible {
            eprintln!(
                "eval: {kind} over {} queries, {} tools",
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
        // The warning goes above the bar (bar.println), not after its last character.
        if let Ok(r) = &r
            && r.refused_queries > 0
            && !quiet
        {
            let warning = format!(
                "warning: {kind} refused {}; they score 0 (see `refused` in --per-query rows)",
                toolbudget::view::number::plural(r.refused_queries, "query", "queries")
            );
            if visible {
                bar.println(warning);
            } else {
                eprintln!("{warning}");
            }
        }
        bar.finish();
        let r = r?;
        results.push(r);
    }
    let mut result = EvalResult::new(&catalog, &set, &options, &siblings, results);
    result.pool = pool;
    emit(
        args.output.out.as_deref(),
        &toolbudget::view::eval::render(&result, args.output.format),
    )
}

/// The scorers asked for, each once, in order (the default pair when none).
fn scorer_kinds(args: &EvalArgs) -> Vec<ScorerKind> {
    let asked = if args.scorers.is_empty() {
        &DEFAULT_SCORERS[..]
    } else {
        &args.scorers[..]
    };
    let mut kinds: Vec<ScorerKind> = Vec::new();
    for k in asked {
        if !kinds.contains(k) {
            kinds.push(*k);
        }
    }
    kinds
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

/// One bar per scorer over its queries (hidden when stderr is not a terminal or `--quiet`).
fn progress_bar(kind: ScorerKind, queries: usize, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(queries as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>9} [{bar:30}] {pos}/{len} queries {elapsed} (eta {eta})",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    bar.set_prefix(kind.name());
    bar
}
