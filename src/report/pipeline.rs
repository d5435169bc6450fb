//! The report pipeline: runs the shipped scenarios, the evaluations and the scale sweep, and
//! gathers their results into a [`ReportData`]. It reads the input files it is given (through
//! the loaders) but finds none itself, writes nothing and reads no clock of its own: the
//! command passes the files, a clock and a progress display.
//!
//! Scenarios run with modeled search latency (deterministic); evaluations and the sweep time
//! their searches with the one harness (`timing`), and those times go to
//! `ReportData::latency` only.

use std::path::PathBuf;
use std::sync::Arc;

use super::sweep::{self, ListingMode, SweepLatency, SweepSettings};
use super::{CatalogRow, EvalLatency, EvalSet, Miss, ReportData, ReportSettings};
use crate::catalog::{Catalog, CatalogSource, load_catalogs};
use crate::counter::{CounterKind, ToolChoice, ToolTokens};
use crate::error::Result;
use crate::eval::run::{EvalOptions, check_labels, evaluate};
use crate::eval::siblings::Siblings;
use crate::eval::{EvalResult, load_queries};
use crate::generate;
use crate::search::external::ExternalConfig;
use crate::search::spec::ScorerSpec;
use crate::search::{self, Scorer, ScorerConfig, ScorerKind, SearchRequest};
use crate::session::counterfactual::{Variant, replay_dir};
use crate::simulate::calibration::CalibrationFile;
use crate::simulate::scenario::Listing;
use crate::simulate::{self, Profile};
use crate::timing::{Clock, LatencyUs, time_searches};

/// Cutoffs of the evaluations.
pub const EVAL_KS: [usize; 4] = [1, 3, 5, 10];
/// A query is listed under failures when not all its expected tools are in this top k
/// (the simulator's default `max_results`).
pub const MISS_K: usize = 5;
/// Scorers timed in the sweep. Semantic and hybrid embed every tool (≈ 150 tools/s here), so
/// 10,000 tools would take minutes; they are timed by `eval` on the real sets instead.
pub const SWEEP_SCORERS: [ScorerKind; 3] =
    [ScorerKind::Keyword, ScorerKind::Regex, ScorerKind::Bm25];
/// Queries timed per scorer and catalog size.
pub const SWEEP_QUERIES: usize = 50;
/// The non-tool system prompt of the sweep's first request (the contract's example scenario).
pub const SWEEP_SYSTEM_PROMPT_TOKENS: usize = 3_000;

/// The files a report runs on, found by the command.
#[derive(Debug, Clone, Default)]
pub struct ReportInputs {
    /// Catalogs counted, by label (`fixtures`, `fixtures/live`, each real-data file or folder).
    pub catalogs: Vec<(String, Vec<CatalogSource>)>,
    /// Scenario files, in the order they are shown.
    pub scenarios: Vec<PathBuf>,
    /// Labeled query sets with the catalog each is evaluated against.
    pub evals: Vec<EvalInput>,
    /// What the command noticed while gathering (a query set without its catalog).
    pub notes: Vec<String>,
    /// Fitted values (`--calibration`) applied to the scenarios of their model profile.
    pub calibration: Option<CalibrationFile>,
    /// An import folder (`--sessions`) and the deferred settings to replay it under.
    pub sessions: Option<(PathBuf, Vec<Variant>)>,
    /// The user's own scorers (`--scorer exec:...`), evaluated beside the built-ins on every set.
    pub scorers: Vec<ScorerSpec>,
    /// The deferred search of every scenario (`--scenario-scorer`), replacing `deferred.scorer`.
    pub scenario_scorer: Option<ScorerSpec>,
    /// How external scorers are started and waited for.
    pub external: ExternalConfig,
}

/// One labeled query set and its catalog.
#[derive(Debug, Clone)]
pub struct EvalInput {
    /// How the report names the catalog (`fixtures/catalogs`, `bfcl.json`).
    pub catalog_label: String,
    pub catalog: Vec<CatalogSource>,
    pub queries: PathBuf,
}

/// Progress of the pipeline, shown by the command (or not).
pub trait Progress {
    /// A phase of `len` steps begins.
    fn phase(&self, what: &str, len: usize);
    /// A step begins, with what it works on.
    fn step(&self, message: &str);
    /// The current step is done.
    fn advance(&self);
    /// The phase is done.
    fn finish(&self);
}

/// No progress display.
pub struct Quiet;

impl Progress for Quiet {
    fn phase(&self, _: &str, _: usize) {}
    fn step(&self, _: &str) {}
    fn advance(&self) {}
    fn finish(&self) {}
}

/// Runs every part of the report.
pub fn build(
    inputs: &ReportInputs,
    clock: Clock<'_>,
    progress: &dyn Progress,
) -> Result<ReportData> {
    // Token figures are counted the way the default model profile is billed.
    let profile = simulate::profile::find(simulate::profile::DEFAULT_PROFILE)
        .expect("the default profile is shipped");
    let counter = profile.counter;
    let mut data = ReportData {
        settings: ReportSettings {
            counter: counter.name().to_string(),
            tokenizer: match counter.error_pct() {
                Some(e) => format!("{} ± {e}%", counter.tokenizer_label()),
                None => counter.tokenizer_label().to_string(),
            },
            render: counter.render_name().to_string(),
            profile: key_values(&profile),
            other: Vec::new(),
        },
        notes: inputs.notes.clone(),
        ..ReportData::default()
    };
    count_catalogs(&mut data, &inputs.catalogs, counter, progress)?;
    if let Some((dir, variants)) = &inputs.sessions {
        progress.phase("sessions", 1);
        progress.step(&dir.display().to_string());
        data.sessions = Some(replay_dir(dir, variants, inputs.calibration.as_ref())?);
        progress.finish();
    }
    run_scenarios(&mut data, inputs, progress)?;
    for input in &inputs.evals {
        let set = run_eval(input, &inputs.scorers, &inputs.external, clock, progress)?;
        data.latency.eval.extend(set.1);
        data.evals.push(set.0);
    }
    data.settings.other.push((
        "eval".into(),
        format!(
            "k = {}; depth {}; misses = queries without every expected tool in the top {MISS_K}",
            EVAL_KS.map(|k| k.to_string()).join(","),
            EVAL_KS.iter().max().copied().unwrap_or(10).max(10),
        ),
    ));
    run_sweep(&mut data, counter, &profile, clock, progress)?;
    progress.phase("deferral", super::deferral::SIZES.len());
    data.deferral = Some(super::deferral::compute(
        counter,
        &profile,
        &simulate::build_scorer,
        |size| {
            progress.step(&format!("{size} tools"));
            progress.advance();
        },
    )?);
    progress.finish();
    data.settings.other.push((
        "build".into(),
        if cfg!(debug_assertions) {
            "debug (measured latencies are several times a release build's)".into()
        } else {
            "release".into()
        },
    ));
    data.settings
        .other
        .push(("machine".into(), crate::timing::machine()));
    Ok(data)
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

/// A catalog's row of the catalogs table.
pub fn catalog_row(name: &str, catalog: &Catalog, tokens: &ToolTokens) -> CatalogRow {
    let n = catalog.len();
    CatalogRow {
        catalog: name.to_string(),
        tool_count: n,
        search_tool: catalog
            .search_tool()
            .map(|i| catalog.get(i).id.clone())
            .unwrap_or_default(),
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

fn count_catalogs(
    data: &mut ReportData,
    groups: &[(String, Vec<CatalogSource>)],
    counter: CounterKind,
    progress: &dyn Progress,
) -> Result<()> {
    progress.phase("catalogs", groups.len());
    for (name, sources) in groups {
        progress.step(name);
        let catalog = load_catalogs(sources)?;
        let tokens = counter.tools(&catalog);
        data.catalogs.push(catalog_row(name, &catalog, &tokens));
        progress.advance();
    }
    progress.finish();
    Ok(())
}

fn build_scorer(kind: ScorerKind, catalog: Arc<Catalog>) -> Result<Box<dyn Scorer>> {
    search::build(kind, catalog, &ScorerConfig::default())
}

/// Every scenario, eager and deferred, with modeled search latency.
fn run_scenarios(
    data: &mut ReportData,
    inputs: &ReportInputs,
    progress: &dyn Progress,
) -> Result<()> {
    let (files, calibration) = (&inputs.scenarios, inputs.calibration.as_ref());
    let build = |spec: &_, catalog, bm25: &_, dir: Option<&std::path::Path>| {
        simulate::build_scorer_with(spec, catalog, bm25, dir, &inputs.external)
    };
    let scenarios = simulate::load_scenarios(files)?;
    progress.phase("scenarios", files.len());
    for (path, scenario) in files.iter().zip(scenarios) {
        progress.step(
            &path
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into()),
        );
        if let Some(missing) = &scenario.unavailable {
            data.notes.push(format!(
                "scenario `{}` left out: {} (third-party data outside the repository) is not \
                 there",
                scenario.name,
                missing.display()
            ));
            progress.advance();
            continue;
        }
        let mut scenario = scenario;
        if let Some(s) = &inputs.scenario_scorer {
            scenario.deferred.scorer = s.clone();
            scenario.deferred.scorer_dir = None;
        }
        let counter = simulate::counter_for(&scenario, None);
        let mut prepared = simulate::prepare(&scenario, counter, &build)?;
        if let Some(c) = calibration.and_then(|f| f.for_scenario(&scenario, counter.name())) {
            c.apply(&mut prepared);
            data.notes.push(format!(
                "scenario `{}` uses the calibration of {} (system prompt {}, scale {})",
                scenario.name, c.model, c.system_prompt_tokens, c.scale
            ));
        }
        let mut result = simulate::run(&scenario, &prepared)?;
        // Published figures are measured uncalibrated: each under its provider's counter.
        result.published = simulate::published::compare(&scenario, &prepared, &build)?;
        if counter.name() != data.settings.counter {
            data.notes.push(format!(
                "scenario `{}` counts with its own counter `{counter}`",
                result.name
            ));
        }
        data.scenarios.push(result);
        progress.advance();
    }
    progress.finish();
    Ok(())
}

/// Evaluates one labeled query set with every scorer that can be built; a scorer that cannot
/// (the embedding model is missing) is listed as skipped with the reason.
fn run_eval(
    input: &EvalInput,
    extra: &[ScorerSpec],
    external: &ExternalConfig,
    clock: Clock<'_>,
    progress: &dyn Progress,
) -> Result<(EvalSet, Vec<EvalLatency>)> {
    let catalog = Arc::new(load_catalogs(&input.catalog)?);
    let set = load_queries(&input.queries, &catalog)?;
    check_labels(&set, &catalog)?;
    let options = EvalOptions::new(&EVAL_KS, None, true)?;
    let siblings = Siblings::find(&catalog, |t| Some(t) != catalog.search_tool());
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    progress.phase("eval", ScorerKind::ALL.len() + extra.len());
    for kind in ScorerKind::ALL {
        progress.step(&format!("{}: {kind}", input.queries.display()));
        match build_scorer(kind, catalog.clone()) {
            Ok(scorer) => results.push(evaluate(
                scorer.as_ref(),
                &catalog,
                &siblings,
                &set.queries,
                &options,
                clock,
                &|_| {},
            )?),
            Err(e) => skipped.push((kind.name().to_string(), e.to_string())),
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
        let scorer = search::spec::build_spec(spec, catalog.clone(), &config)?;
        results.push(evaluate(
            scorer.as_ref(),
            &catalog,
            &siblings,
            &set.queries,
            &options,
            clock,
            &|_| {},
        )?);
        progress.advance();
    }
    progress.finish();
    let mut result = EvalResult::new(&catalog, &set, &options, &siblings, results);
    let misses = misses(&result);
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
        miss_k: MISS_K,
    };
    Ok((set, latency))
}

/// Queries without every expected tool in the top `MISS_K`, per scorer.
fn misses(result: &EvalResult) -> Vec<Miss> {
    let mut out = Vec::new();
    for r in &result.results {
        for q in r.per_query.iter().flatten() {
            if q.ranks.iter().any(|rank| rank.is_none_or(|x| x > MISS_K)) {
                out.push(Miss {
                    set: result.set.clone(),
                    scorer: r.scorer.clone(),
                    query_id: q.id.clone(),
                    query: q.query.clone(),
                    expected: q.expected.join(" "),
                    ranked: q
                        .top
                        .iter()
                        .take(MISS_K)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(" "),
                });
            }
        }
    }
    out
}

/// The deferred-tools list of every tool of `catalog` in `mode`: the simulator's own text.
pub fn deferred_list_text(catalog: &Catalog, mode: ListingMode) -> String {
    let all: Vec<usize> = (0..catalog.len()).collect();
    let listing = match mode {
        ListingMode::Names => Listing::Names,
        ListingMode::Descriptions => Listing::Descriptions,
        ListingMode::Servers => Listing::Servers,
    };
    simulate::listing::full_text(catalog, &all, listing)
}

/// Deterministic queries for timing: words of every n-th tool's name and description.
pub fn sweep_queries(catalog: &Catalog, count: usize) -> Vec<String> {
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

fn run_sweep(
    data: &mut ReportData,
    counter: CounterKind,
    profile: &Profile,
    clock: Clock<'_>,
    progress: &dyn Progress,
) -> Result<()> {
    let settings = SweepSettings {
        counter: counter.name().to_string(),
        tokenizer: counter.tokenizer_label().to_string(),
        render: counter.render_name().to_string(),
        seed: sweep::SEED,
        tools_per_server: sweep::TOOLS_PER_SERVER,
        system_prompt_tokens: SWEEP_SYSTEM_PROMPT_TOKENS,
        // The model's tool-use preamble and the counter's framing of the tools block.
        tool_overhead_tokens: profile.preamble(counter, ToolChoice::Auto)
            + counter.tools_fixed(None),
        search_tool_tokens: counter.tool(&simulate::default_search_tool()),
        profile: profile.name.clone(),
        context_window: profile.context_window,
    };
    progress.phase("sweep", sweep::SIZES.len());
    let mut points = Vec::new();
    for size in sweep::SIZES {
        progress.step(&format!("{size} tools"));
        let catalog = generate::generate(size, sweep::servers_for(size), sweep::SEED);
        let tokens = counter.tools(&catalog);
        points.push(sweep::sweep_point(&catalog, &tokens, &settings, |mode| {
            counter.text(&deferred_list_text(&catalog, mode))
        }));
        let catalog = Arc::new(catalog);
        time_sweep_scorers(data, &catalog, clock);
        progress.advance();
    }
    progress.finish();
    data.sweep = Some(sweep::Sweep { settings, points });
    Ok(())
}

/// Times the sweep's scorers on one generated catalog: build time and the searches of
/// `sweep_queries`, through the one harness.
fn time_sweep_scorers(data: &mut ReportData, catalog: &Arc<Catalog>, clock: Clock<'_>) {
    let queries = sweep_queries(catalog, SWEEP_QUERIES);
    let requests: Vec<SearchRequest<'_>> =
        queries.iter().map(|q| SearchRequest::new(q, 10)).collect();
    for kind in SWEEP_SCORERS {
        let start = clock();
        let scorer = match build_scorer(kind, catalog.clone()) {
            Ok(s) => s,
            Err(e) => {
                let why = format!("`{kind}` not timed in the sweep: {e}");
                if !data.notes.contains(&why) {
                    data.notes.push(why);
                }
                continue;
            }
        };
        let build = clock().saturating_sub(start);
        // A query a scorer refuses is timed all the same: the time to refuse it.
        let timed = time_searches(scorer.as_ref(), &requests, clock);
        data.latency.sweep.push(SweepLatency {
            tools: catalog.len(),
            scorer: kind.name().to_string(),
            build_ms: (build.as_secs_f64() * 10_000.0).round() / 10.0,
            latency_us: LatencyUs::of_timed(&timed),
        });
    }
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
    fn the_sweep_times_its_searches_with_the_injected_clock() {
        let mut data = ReportData::default();
        let catalog = Arc::new(generate::generate(30, 3, 1));
        let clock = crate::timing::ticking_clock(std::time::Duration::from_micros(7));
        time_sweep_scorers(&mut data, &catalog, &clock);
        assert_eq!(data.latency.sweep.len(), SWEEP_SCORERS.len());
        for l in &data.latency.sweep {
            assert_eq!(l.latency_us.searches, SWEEP_QUERIES.min(30));
            assert_eq!((l.latency_us.p50, l.latency_us.p95), (7.0, 7.0));
            assert_eq!(l.build_ms, 0.0);
        }
    }
}
