//! `toolbudget simulate`: replays scenarios eagerly and deferred and prints what each mode
//! costs. Every format is a view of one `SimulationResult`. The search latency in the latency
//! model is measured on the real scorer over exactly the searches the replay sends (table and
//! md by default) or modeled from the profile (json and csv by default, so they stay
//! byte-identical); the output says which.

use std::time::Instant;

use super::progress::{self, Bar};
use crate::cli::{ApiArgs, SimulateArgs};
use toolbudget::counter::{CounterKind, ToolTokens};
use toolbudget::error::{Error, Result};
use toolbudget::output::{Format, emit};

use toolbudget::simulate::result::{SearchLatencySource, SimulationResult};
use toolbudget::simulate::{self, Scenario, SearchTiming};

/// Measured for the human formats, modeled for the byte-identical ones, unless asked.
fn latency_source(args: &SimulateArgs) -> SearchLatencySource {
    args.search_latency.unwrap_or(match args.output.format {
        Format::Table | Format::Md => SearchLatencySource::Measured,
        Format::Json | Format::Csv => SearchLatencySource::Modeled,
    })
}

/// `anthropic-api`: the system prompt, user messages, tools and search tool measured by
/// count_tokens (cached); the cache is saved even when a request fails.
fn prepare_api(
    scenario: &Scenario,
    api: &ApiArgs,
    build: &simulate::ScorerBuilder<'_>,
) -> Result<simulate::Prepared> {
    let catalog = simulate::load_scenario_catalogs(scenario)?;
    let mut client = super::count::api_client(api, &scenario.profile.api_model)?;
    let users = simulate::user_texts(scenario);
    let user_refs: Vec<&str> = users.iter().map(String::as_str).collect();
    let parts = toolbudget::counter::api::request_parts(
        &mut client,
        scenario.system_prompt.as_deref(),
        &user_refs,
        &catalog,
        &simulate::default_search_tool(),
        scenario.tool_choice,
    );
    super::count::save_api_cache(&client)?;
    let parts = parts.map_err(|e| Error::Missing(e.to_string()))?;
    let exact = simulate::ExactCounts {
        system: parts.system,
        messages: users.into_iter().zip(parts.messages).collect(),
        tools_fixed: parts.tools.fixed,
        search_tool: parts.search_tool,
    };
    let tokens = ToolTokens::of(CounterKind::AnthropicApi, parts.tools.counts);
    simulate::prepare_exact(scenario, catalog, tokens, Some(exact), build)
}

pub fn run(args: &SimulateArgs, quiet: bool) -> Result<()> {
    let origin = Instant::now();
    let clock = || origin.elapsed();
    let timing = match latency_source(args) {
        SearchLatencySource::Measured => SearchTiming::Measured(&clock),
        SearchLatencySource::Modeled => SearchTiming::Modeled,
    };
    let calibration = args
        .calibration
        .as_deref()
        .map(simulate::calibration::CalibrationFile::load)
        .transpose()?;
    let external = args.external.config();
    let build = |spec: &_, catalog, bm25: &_, dir: Option<&std::path::Path>| {
        simulate::build_scorer_with(spec, catalog, bm25, dir, &external)
    };
    if !args.client.is_empty() {
        return run_clients(args, calibration.as_ref(), &build);
    }
    let loaded = simulate::load_scenarios(&args.scenarios)?;
    let bar = Bar::new(
        progress::visible(quiet),
        "simulate",
        loaded.len(),
        "scenarios",
    );
    let mut scenarios = Vec::new();
    let mut budget = toolbudget::budget::Budget::new();
    for mut scenario in loaded {
        bar.step(scenario.name.clone());
        if let Some(s) = &args.scorer {
            scenario.deferred.scorer = s.clone();
            scenario.deferred.scorer_dir = None;
        }
        let flag = args.counter.or(args
            .tokenizer
            .map(|t| CounterKind::from_legacy(t, scenario.render)));
        let counter = simulate::counter_for(&scenario, flag);
        let prepared = if counter.is_local() {
            simulate::prepare(&scenario, counter, &build)?
        } else {
            prepare_api(&scenario, &args.api, &build)?
        };
        simulate::charge_searches(&scenario, &prepared, &mut budget)?;
        let (mut result, _) = toolbudget::experiment::scenario::run(
            &scenario,
            prepared,
            counter.name(),
            calibration.as_ref(),
            timing,
            &build,
        )?;
        if !args.per_request {
            result.requests.clear();
        }
        if !quiet {
            for caveat in &result.savings.caveats {
                bar.note(&format!("warning: {}: {caveat}", result.name));
            }
        }
        scenarios.push(result);
        bar.advance();
    }
    bar.finish();
    let result = SimulationResult { scenarios };
    emit(
        args.output.out.as_deref(),
        &toolbudget::view::simulate::render(&result, args.output.format, args.per_request),
    )
}

/// `--client A,B`: every scenario under every client, side by side.
fn run_clients(
    args: &SimulateArgs,
    calibration: Option<&simulate::calibration::CalibrationFile>,
    build: &simulate::ScorerBuilder<'_>,
) -> Result<()> {
    let scenarios = simulate::load_scenarios(&args.scenarios)?;
    let prepare = |sc: &Scenario| -> Result<simulate::Prepared> {
        let flag = args.counter.or(args
            .tokenizer
            .map(|t| CounterKind::from_legacy(t, sc.render)));
        let counter = simulate::counter_for(sc, flag);
        let mut prepared = if counter.is_local() {
            simulate::prepare(sc, counter, build)?
        } else {
            prepare_api(sc, &args.api, build)?
        };
        if let Some(c) = calibration.and_then(|f| f.for_scenario(sc, counter.name())) {
            c.apply(&mut prepared);
        }
        Ok(prepared)
    };
    let result = toolbudget::experiment::clients::run(
        &scenarios,
        &args.client,
        &prepare,
        &mut toolbudget::budget::Budget::new(),
    )?;
    emit(
        args.output.out.as_deref(),
        &toolbudget::view::clients::render(&result, args.output.format),
    )
}
