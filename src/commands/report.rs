//! `toolbudget report`: runs the shipped scenarios, the evaluations and the scale sweep,
//! measures scorer latency, and writes the Markdown report with its CSV, JSON and SVG files.
//! The pieces it runs are library calls; this file only gathers inputs, times searches, shows
//! progress and writes files.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::catalog::{Catalog, CatalogSource, load_catalogs};
use crate::cli::ReportArgs;
use crate::error::{Error, Result};
use crate::eval::load_queries;
use crate::eval::report::EvalReport;
use crate::eval::run::{EvalOptions, evaluate};
use crate::generate;
use crate::output::write_tree;
use crate::report::sweep::{self, ListingMode, SweepLatency, SweepSettings};
use crate::report::{CatalogRow, ReportData, ReportSettings};
use crate::report::{
    EvalLatency, EvalSet, Miss, ModeRow, PublishedRow, RequestRow, ScenarioRow, ScorerMetrics,
};
use crate::search::{ScorerConfig, ScorerKind, SearchRequest};
use crate::simulate::scenario::Listing;
use crate::simulate::{self, Profile, ScenarioResult};
use crate::tokenize::{Render, Tokenizer, ToolTokens};

/// Cutoffs of the evaluations.
const EVAL_KS: [usize; 4] = [1, 3, 5, 10];
/// A query is listed under failures when not all its expected tools are in this top k
/// (the simulator's default `max_results`).
const MISS_K: usize = 5;

/// Scorers timed in the sweep. Semantic and hybrid embed every tool (≈ 150 tools/s here), so
/// 10,000 tools would take minutes; they are timed by `eval` on the real sets instead.
const SWEEP_SCORERS: [ScorerKind; 3] = [ScorerKind::Keyword, ScorerKind::Regex, ScorerKind::Bm25];
/// Queries timed per scorer and catalog size.
const SWEEP_QUERIES: usize = 50;
/// The non-tool system prompt of the sweep's first request (the contract's example scenario).
const SWEEP_SYSTEM_PROMPT_TOKENS: usize = 3_000;

/// Progress on stderr, hidden when stderr is not a terminal or with `--quiet`.
struct Progress {
    visible: bool,
}

impl Progress {
    fn bar(&self, len: usize, what: &str) -> ProgressBar {
        if !self.visible {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len as u64);
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {msg}")
                .expect("the template is valid")
                .progress_chars("=> "),
        );
        bar.set_prefix(what.to_string());
        bar
    }
}

pub fn run(args: &ReportArgs, quiet: bool) -> Result<()> {
    // Refused before any work: a file, a link or a folder of other files.
    crate::output::check_out_dir(&args.out)?;
    // The shipped scenarios and fixtures are found from the current folder (the repository
    // root), or else beside the crate this binary was built from, so `report` works from anywhere.
    let shipped = |p: &Path| -> PathBuf {
        if p.is_relative() && !p.exists() {
            let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join(p);
            if beside.exists() {
                return beside;
            }
        }
        p.to_path_buf()
    };
    let scenarios_dir = shipped(&args.scenarios);
    let fixtures_dir = shipped(&args.fixtures);
    let progress = Progress {
        visible: !quiet && std::io::stderr().is_terminal(),
    };
    let tokenizer = Tokenizer::default();
    let render = Render::default();
    let mut data = ReportData {
        settings: ReportSettings {
            tokenizer: tokenizer.name().to_string(),
            render: render.name().to_string(),
            profile: Vec::new(),
            other: Vec::new(),
        },
        ..ReportData::default()
    };

    let fixtures = fixture_sources(&fixtures_dir)?;
    let fixture_catalog = load_catalogs(&fixtures)?;
    data.catalogs.push(catalog_row(
        "fixtures",
        &fixture_catalog,
        &ToolTokens::compute(&fixture_catalog, tokenizer, render),
    ));
    // Snapshots of real MCP servers (`just snapshot`), when shipped.
    let live = sorted_files(&fixtures_dir.join("live"), &["json"])?;
    if !live.is_empty() {
        let sources: Vec<CatalogSource> = live
            .into_iter()
            .map(|path| CatalogSource { path, server: None })
            .collect();
        let catalog = load_catalogs(&sources)?;
        let tokens = ToolTokens::compute(&catalog, tokenizer, render);
        data.catalogs
            .push(catalog_row("fixtures/live", &catalog, &tokens));
    }
    if let Some(dir) = &args.data {
        real_catalogs(&mut data, dir, tokenizer, render, &progress)?;
    }

    let profile = simulate::profile::find(simulate::profile::DEFAULT_PROFILE)
        .expect("the default profile is shipped");
    data.settings.profile = key_values(&profile);
    run_scenarios(&mut data, &scenarios_dir, &progress)?;
    let fixture_catalog = Arc::new(fixture_catalog);
    for path in sorted_files(
        &fixtures_dir.join("queries"),
        &["jsonl", "json", "yaml", "yml"],
    )? {
        let name = stem(&path);
        run_eval(
            &mut data,
            &name,
            "fixtures/catalogs",
            &fixture_catalog,
            &path,
            &progress,
        )?;
    }
    if let Some(dir) = &args.data {
        for path in sorted_files(&dir.join("queries"), &["jsonl", "json", "yaml", "yml"])? {
            let name = stem(&path);
            let catalog_path = dir.join("catalogs").join(format!("{name}.json"));
            if !catalog_path.is_file() {
                data.notes.push(format!(
                    "`{}` not evaluated: no catalog {} beside it",
                    path.display(),
                    catalog_path.display()
                ));
                continue;
            }
            let catalog = Arc::new(load_catalogs(&[CatalogSource {
                path: catalog_path,
                server: None,
            }])?);
            run_eval(
                &mut data,
                &name,
                &format!("{name}.json"),
                &catalog,
                &path,
                &progress,
            )?;
        }
    }
    data.settings.other.push((
        "eval".into(),
        format!(
            "k = {}; depth {}; misses = queries without every expected tool in the top {}",
            EVAL_KS.map(|k| k.to_string()).join(","),
            EVAL_KS.iter().max().copied().unwrap_or(10).max(10),
            MISS_K
        ),
    ));
    run_sweep(&mut data, tokenizer, render, &profile, &progress)?;
    data.settings.other.push((
        "build".into(),
        if cfg!(debug_assertions) {
            "debug (measured latencies are several times a release build's)".into()
        } else {
            "release".into()
        },
    ));

    let files = crate::report::render(&data).map_err(|e| Error::Missing(e.to_string()))?;
    let files: Vec<(String, Vec<u8>)> = files.into_iter().map(|f| (f.path, f.bytes)).collect();
    write_tree(&args.out, &files)?;
    if !quiet {
        eprintln!(
            "wrote {} files to {}",
            files.len(),
            args.out.join("index.md").display()
        );
    }
    Ok(())
}

/// The fixture catalogs: `catalogs/builtins.yaml` and every `catalogs/mcp/*.json` (server =
/// file stem), sorted by name so the order never depends on the file system.
fn fixture_sources(dir: &Path) -> Result<Vec<CatalogSource>> {
    let catalogs = dir.join("catalogs");
    let mut sources = Vec::new();
    let builtins = catalogs.join("builtins.yaml");
    if builtins.is_file() {
        sources.push(CatalogSource {
            path: builtins,
            server: None,
        });
    }
    for path in sorted_files(&catalogs.join("mcp"), &["json", "yaml", "yml"])? {
        sources.push(CatalogSource { path, server: None });
    }
    if sources.is_empty() {
        return Err(Error::usage(format!(
            "no fixture catalogs under {} (run from the repository root, or pass --fixtures DIR)",
            catalogs.display()
        )));
    }
    Ok(sources)
}

/// Files in `dir` with one of the extensions, sorted by name; empty if `dir` does not exist.
fn sorted_files(dir: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::input(
                dir,
                None,
                format!("cannot read the folder: {e}"),
            ));
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| extensions.contains(&x))
        })
        .collect();
    files.sort();
    Ok(files)
}

fn catalog_row(name: &str, catalog: &Catalog, tokens: &ToolTokens) -> CatalogRow {
    let n = catalog.len();
    CatalogRow {
        name: name.to_string(),
        tools: n,
        servers: catalog.servers().len(),
        tokens: tokens.total(),
        mean_tokens: if n == 0 {
            0.0
        } else {
            (tokens.total() as f64 / n as f64 * 10.0).round() / 10.0
        },
        max_tokens: tokens.counts().iter().copied().max().unwrap_or(0),
    }
}

/// One row per real catalog file, and one per folder of catalogs (`docker/`, `livemcpbench/`).
fn real_catalogs(
    data: &mut ReportData,
    dir: &Path,
    tokenizer: Tokenizer,
    render: Render,
    progress: &Progress,
) -> Result<()> {
    let root = dir.join("catalogs");
    if !root.is_dir() {
        return Err(Error::usage(format!(
            "--data {}: no catalogs/ folder inside",
            dir.display()
        )));
    }
    let mut groups: Vec<(String, Vec<PathBuf>)> = sorted_files(&root, &["json", "yaml", "yml"])?
        .into_iter()
        .map(|p| (file_name(&p), vec![p]))
        .collect();
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map_err(|e| Error::input(&root, None, format!("cannot read the folder: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for sub in subdirs {
        let files = sorted_files(&sub, &["json", "yaml", "yml"])?;
        if !files.is_empty() {
            groups.push((format!("{}/", file_name(&sub)), files));
        }
    }
    let bar = progress.bar(groups.len(), "catalogs");
    for (name, files) in groups {
        bar.set_message(name.clone());
        let sources: Vec<CatalogSource> = files
            .into_iter()
            .map(|path| CatalogSource { path, server: None })
            .collect();
        let catalog = load_catalogs(&sources)?;
        let tokens = ToolTokens::compute(&catalog, tokenizer, render);
        data.catalogs.push(catalog_row(&name, &catalog, &tokens));
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(())
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A serializable value's top-level fields as `key = value` text (for the settings table).
fn key_values<T: serde::Serialize>(value: &T) -> Vec<(String, String)> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, v)
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn build_scorer(kind: ScorerKind, catalog: Arc<Catalog>) -> Result<Box<dyn crate::search::Scorer>> {
    crate::search::build(kind, catalog, &ScorerConfig::default())
}

/// Every `*.yaml` scenario of `dir`, in file-name order, eager and deferred.
fn run_scenarios(data: &mut ReportData, dir: &Path, progress: &Progress) -> Result<()> {
    let files = sorted_files(dir, &["yaml", "yml"])?;
    if files.is_empty() {
        data.notes.push(format!(
            "no scenarios under {}: the scenario sections are empty",
            dir.display()
        ));
        return Ok(());
    }
    let bar = progress.bar(files.len(), "scenarios");
    for path in files {
        bar.set_message(file_name(&path));
        let scenario = simulate::load_scenario(&path)?;
        let tokenizer = simulate::tokenizer_for(&scenario, None);
        let prepared = simulate::prepare(&scenario, tokenizer, &build_scorer)?;
        let result = simulate::run(&scenario, &prepared)?;
        if tokenizer.name() != data.settings.tokenizer {
            data.notes.push(format!(
                "scenario `{}` counts with its own tokenizer `{}`",
                result.name,
                tokenizer.name()
            ));
        }
        data.scenarios.push(scenario_row(&result));
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(())
}

fn mode_row(m: &simulate::ModeResult) -> ModeRow {
    ModeRow {
        first_request_tokens: m.first_request_tokens,
        total_input_tokens: m.total_input_tokens,
        requests: m.requests,
        searches: m.searches,
        misses: m.misses,
        output_tokens: m.output_tokens,
        cost_usd: m.cost_usd.without_caching,
        cost_cached_usd: m.cost_usd.with_caching,
        peak_occupancy_pct: m.peak_occupancy_pct,
    }
}

/// The simulator's result as the report shows it (a re-shaping; nothing is recomputed
/// except the published figures' savings, with the simulator's own formula).
fn scenario_row(r: &ScenarioResult) -> ScenarioRow {
    let st = &r.settings;
    let mut settings = vec![
        ("profile".to_string(), r.model.name.clone()),
        ("scorer".to_string(), st.scorer.clone()),
        ("discovery".to_string(), st.discovery.clone()),
        ("listing".to_string(), st.listing.clone()),
        ("list style".to_string(), st.list_style.clone()),
        ("reveal".to_string(), st.reveal.clone()),
        ("max results".to_string(), st.max_results.to_string()),
        (
            "search tool tokens".to_string(),
            st.search_tool_tokens.to_string(),
        ),
    ];
    if st.when != "always" {
        settings.push(("when".to_string(), st.when.clone()));
    }
    let saved = simulate::result::savings_pct;
    ScenarioRow {
        name: r.name.clone(),
        description: r.description.clone(),
        tool_count: r.tool_count,
        deferred_count: r.deferred_count,
        eager: mode_row(&r.eager),
        deferred: mode_row(&r.deferred),
        first_request_savings_pct: r.savings.first_request_pct,
        total_input_savings_pct: r.savings.total_input_pct,
        cost_savings_pct: r.savings.cost_without_caching_pct,
        cost_cached_savings_pct: r.savings.cost_with_caching_pct,
        settings,
        published: r
            .published
            .iter()
            .map(|p| PublishedRow {
                source: p.published.source.clone(),
                claim: p.published.claim.clone(),
                metric: p.published.metric.clone(),
                published_eager: p.published.eager_tokens,
                published_deferred: p.published.deferred_tokens,
                published_saved_pct: match (p.published.eager_tokens, p.published.deferred_tokens) {
                    (Some(e), Some(d)) => Some(saved(e, d)),
                    _ => None,
                },
                measured_eager: p.measured_eager_tokens,
                measured_deferred: p.measured_deferred_tokens,
                measured_saved_pct: saved(p.measured_eager_tokens, p.measured_deferred_tokens),
            })
            .collect(),
        requests: r
            .requests
            .iter()
            .map(|q| RequestRow {
                mode: q.mode.to_string(),
                index: q.index,
                turn: q.turn,
                kind: q.kind.name().to_string(),
                parts: [
                    q.parts.system,
                    q.parts.tool_overhead,
                    q.parts.tools,
                    q.parts.deferred_list,
                    q.parts.history,
                    q.parts.new,
                ],
                input_tokens: q.input_tokens,
                cached_tokens: q.cached_tokens,
                output_tokens: q.output_tokens,
                cost_usd: q.cost_usd,
                cost_cached_usd: q.cost_cached_usd,
                occupancy_pct: q.occupancy_pct,
            })
            .collect(),
    }
}

/// Evaluates one labeled query set with every scorer that can be built; a scorer that cannot
/// (the embedding model is missing) is listed as skipped with the reason.
fn run_eval(
    data: &mut ReportData,
    name: &str,
    catalog_name: &str,
    catalog: &Arc<Catalog>,
    queries: &Path,
    progress: &Progress,
) -> Result<()> {
    let set = load_queries(queries, catalog)?;
    let options = EvalOptions::new(&EVAL_KS, None, true)?;
    let mut evals = Vec::new();
    let mut skipped = Vec::new();
    let bar = progress.bar(ScorerKind::ALL.len(), "eval");
    for kind in ScorerKind::ALL {
        bar.set_message(format!("{name}: {kind}"));
        match crate::search::build(kind, catalog.clone(), &ScorerConfig::default()) {
            Ok(scorer) => {
                let origin = Instant::now();
                evals.push(evaluate(
                    scorer.as_ref(),
                    catalog,
                    &set.queries,
                    &options,
                    || origin.elapsed(),
                ));
            }
            Err(e) => skipped.push((kind.name().to_string(), e.to_string())),
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let report = EvalReport::new(catalog.len(), &set, &options, &evals);
    let mut misses = Vec::new();
    for r in &report.results {
        data.latency.eval.push(EvalLatency {
            set: name.to_string(),
            scorer: r.scorer.clone(),
            p50_us: r.latency_us.p50,
            p95_us: r.latency_us.p95,
        });
        for q in r.per_query.iter().flatten() {
            if q.ranks.iter().any(|rank| rank.is_none_or(|x| x > MISS_K)) {
                misses.push(Miss {
                    scorer: r.scorer.clone(),
                    query_id: q.id.clone(),
                    query: q.query.clone(),
                    expected: q.expected.clone(),
                    ranked: q.top.iter().take(MISS_K).cloned().collect(),
                });
            }
        }
    }
    data.evals.push(EvalSet {
        name: name.to_string(),
        catalog: catalog_name.to_string(),
        tool_count: report.tool_count,
        query_count: report.query_count,
        ks: report.ks.clone(),
        scorers: report
            .results
            .iter()
            .map(|r| ScorerMetrics {
                scorer: r.scorer.clone(),
                settings: r
                    .settings
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                metrics: r.metrics.iter().map(|(k, v)| (k.clone(), *v)).collect(),
                ci95: r.ci95.iter().map(|(k, v)| (k.clone(), *v)).collect(),
                failed_queries: r.failed_queries,
            })
            .collect(),
        skipped,
        misses,
        miss_k: MISS_K,
    });
    Ok(())
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The deferred-tools list of every tool of `catalog` in `mode`: the simulator's own text.
fn deferred_list_text(catalog: &Catalog, mode: ListingMode) -> String {
    let all: Vec<usize> = (0..catalog.len()).collect();
    let listing = match mode {
        ListingMode::Names => Listing::Names,
        ListingMode::Descriptions => Listing::Descriptions,
        ListingMode::Servers => Listing::Servers,
    };
    simulate::listing::full_text(catalog, &all, listing)
}

/// Deterministic queries for timing: words of every n-th tool's name and description.
fn sweep_queries(catalog: &Catalog, count: usize) -> Vec<String> {
    let step = (catalog.len() / count.max(1)).max(1);
    catalog
        .tools()
        .iter()
        .step_by(step)
        .take(count)
        .map(|t| {
            let mut words: Vec<&str> = t.name.split('_').collect();
            words.extend(t.description.split_whitespace().skip(2).take(3));
            words.join(" ")
        })
        .collect()
}

fn percentile_us(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    let d = sorted[rank.clamp(1, sorted.len()) - 1];
    (d.as_nanos() as f64 / 100.0).round() / 10.0
}

fn run_sweep(
    data: &mut ReportData,
    tokenizer: Tokenizer,
    render: Render,
    profile: &Profile,
    progress: &Progress,
) -> Result<()> {
    let settings = SweepSettings {
        tokenizer: tokenizer.name().to_string(),
        render: render.name().to_string(),
        seed: sweep::SEED,
        tools_per_server: sweep::TOOLS_PER_SERVER,
        system_prompt_tokens: SWEEP_SYSTEM_PROMPT_TOKENS,
        tool_overhead_tokens: profile.tool_overhead_tokens,
        search_tool_tokens: tokenizer.count(&render.render(&simulate::default_search_tool())),
        profile: profile.name.clone(),
        context_window: profile.context_window,
    };
    let bar = progress.bar(sweep::SIZES.len(), "sweep");
    let mut points = Vec::new();
    let mut unavailable: Vec<String> = Vec::new();
    for size in sweep::SIZES {
        bar.set_message(format!("{size} tools"));
        let catalog = generate::generate(size, sweep::servers_for(size), sweep::SEED);
        let tokens = ToolTokens::compute(&catalog, tokenizer, render);
        points.push(sweep::sweep_point(&catalog, &tokens, &settings, |mode| {
            tokenizer.count(&deferred_list_text(&catalog, mode))
        }));
        let catalog = Arc::new(catalog);
        let queries = sweep_queries(&catalog, SWEEP_QUERIES);
        for kind in SWEEP_SCORERS {
            let start = Instant::now();
            let scorer = match crate::search::build(kind, catalog.clone(), &ScorerConfig::default())
            {
                Ok(s) => s,
                Err(e) => {
                    let why = format!("`{kind}` not timed in the sweep: {e}");
                    if !unavailable.contains(&why) {
                        unavailable.push(why);
                    }
                    continue;
                }
            };
            let build = start.elapsed();
            let mut times = Vec::with_capacity(queries.len());
            for q in &queries {
                let t = Instant::now();
                // A query a scorer rejects is timed all the same: the time to reject it.
                let _ = scorer.search(&SearchRequest::new(q, 10));
                times.push(t.elapsed());
            }
            times.sort_unstable();
            data.latency.sweep.push(SweepLatency {
                tools: size,
                scorer: kind.name().to_string(),
                build_ms: (build.as_secs_f64() * 10_000.0).round() / 10.0,
                queries: times.len(),
                p50_us: percentile_us(&times, 50.0),
                p95_us: percentile_us(&times, 95.0),
            });
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    data.notes.extend(unavailable);
    data.sweep = Some(sweep::Sweep { settings, points });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_lists_are_the_simulators_texts() {
        let c = generate::generate(30, 3, 1);
        let names = deferred_list_text(&c, ListingMode::Names);
        assert_eq!(names.lines().count(), 30 + 2);
        assert!(names.contains("\nmcp__greenhouse__"));
        let servers = deferred_list_text(&c, ListingMode::Servers);
        assert_eq!(servers.lines().count(), 3 + 2);
        assert!(servers.contains("\ngreenhouse: 10 tools: "));
        let desc = deferred_list_text(&c, ListingMode::Descriptions);
        assert!(desc.lines().skip(1).take(30).all(|l| l.contains(": ")));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let d: Vec<Duration> = (1..=10).map(Duration::from_micros).collect();
        assert_eq!(percentile_us(&d, 50.0), 5.0);
        assert_eq!(percentile_us(&d, 95.0), 10.0);
        assert_eq!(percentile_us(&[], 50.0), 0.0);
    }
}
