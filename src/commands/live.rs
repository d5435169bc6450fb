//! `toolbudget live`: reads the scenarios and the cassette, builds the endpoint (key from the
//! environment, the real transport, a monotonic clock, `std::thread::sleep`), plays every
//! scenario eager and deferred through `live::run_scenario`, saves the cassette (also when a
//! request fails) and writes the result's views.

use std::path::Path;
use std::time::{Duration, Instant};

use super::progress::{self, Bar};
use crate::cli::LiveArgs;
use toolbudget::error::{Error, Result};
use toolbudget::live::cassette::{Cassette, Load};
use toolbudget::live::{self, Endpoint, SearchSide, Settings};
use toolbudget::output::{Format, csv_rows, emit, to_json, write_atomic, write_tree};
use toolbudget::simulate::{self, Scenario};

/// The scenario with the scorer the live run searches with. The one place the scorer is
/// chosen: `--scorer` over the scenario's `deferred.scorer`.
pub fn with_scorer(mut scenario: Scenario, args: &LiveArgs) -> Scenario {
    if let Some(s) = &args.scorer {
        scenario.deferred.scorer = s.clone();
        scenario.deferred.scorer_dir = None;
    }
    scenario
}

fn read_cassette(path: &Path, offline: bool) -> Result<Cassette> {
    if !path.exists() {
        if offline {
            return Err(Error::input(
                path,
                None,
                "--offline replays from the cassette, and there is none here",
            ));
        }
        return Ok(Cassette::default());
    }
    let bytes = toolbudget::input::read(path)?;
    let (cassette, load) = Cassette::from_bytes(&bytes);
    // Its own kind, checksum and all, yet holding a count or latency no view can show.
    cassette.check_numbers(path, &bytes)?;
    if let Load::Discarded(why) = load {
        if offline {
            return Err(Error::input(
                path,
                None,
                format!("the cassette is not usable ({why}); record it again online"),
            ));
        }
        eprintln!(
            "note: {} was discarded ({why}); it is recorded anew",
            path.display()
        );
    }
    Ok(cassette)
}

fn save_cassette(ep: &Endpoint, path: &Path) -> Result<()> {
    if ep.cassette.is_dirty() {
        write_atomic(path, &ep.cassette.to_bytes())?;
    }
    Ok(())
}

pub fn run(args: &LiveArgs, quiet: bool) -> Result<()> {
    let provider = args.provider;
    if args.search == SearchSide::Provider
        && provider
            .provider_search(&toolbudget::search::ScorerKind::Keyword.into())
            .is_none()
    {
        return Err(Error::usage(format!(
            "--search provider: {provider} has no provider-side tool search (anthropic and \
             openai-responses do); use --search client"
        )));
    }
    let counter = args.counter.unwrap_or(provider.counter());
    if !counter.is_local() {
        return Err(Error::usage(format!(
            "--counter {counter}: live counts every request locally; use anthropic-estimate"
        )));
    }
    let cassette = read_cassette(&args.cassette, args.offline)?;
    let key = std::env::var(provider.key_var())
        .ok()
        .filter(|k| !k.is_empty());
    let origin = Instant::now();
    let mut ep = Endpoint::new(
        provider,
        args.base_url
            .as_deref()
            .unwrap_or(provider.default_base_url()),
        key,
        args.offline,
        args.cassette.display().to_string(),
        cassette,
        Box::new(toolbudget::counter::api::Ureq::with_timeout(
            Duration::from_secs_f64(args.timeout_secs),
        )),
        Box::new(std::thread::sleep),
        Box::new(move || origin.elapsed()),
    );
    let settings = Settings {
        model: args.model.clone(),
        search: args.search,
        max_steps: args.max_steps as usize,
        max_tokens: args.max_tokens,
        temperature: args.temperature,
        seed: args.seed,
        repeat: args.repeat,
        tool_choice: args.tool_choice,
    };
    let loaded = simulate::load_scenarios(&args.scenarios)?;
    let bar = Bar::new(progress::visible(quiet), "live", loaded.len(), "scenarios");
    let mut results = Vec::new();
    let mut budget = toolbudget::budget::Budget::new();
    for scenario in loaded {
        let scenario = with_scorer(scenario, args);
        bar.step(scenario.name.clone());
        let external = args.external.config();
        let build = |spec: &_, catalog, bm25: &_, dir: Option<&Path>| {
            simulate::build_scorer_with(spec, catalog, bm25, dir, &external)
        };
        let prepared = simulate::prepare(&scenario, counter, &build)?;
        simulate::charge_searches(&scenario, &prepared, &mut budget)?;
        if !quiet {
            bar.note(&format!(
                "live: {}: {} run{} eager and deferred against {} ({})",
                scenario.name,
                settings.repeat,
                if settings.repeat == 1 { "" } else { "s" },
                args.model,
                if args.offline {
                    "offline"
                } else {
                    ep.base_url.as_str()
                }
            ));
        }
        let played = live::run_scenario(&scenario, &prepared, &settings, &mut ep);
        // Whatever was answered stays recorded, also when a later request failed.
        save_cassette(&ep, &args.cassette)?;
        results.push(played.map_err(|e| Error::Missing(e.to_string()))?);
        bar.advance();
    }
    bar.finish();
    let result = live::finish(provider, counter, &settings, results);
    if let Some(dir) = &args.out {
        write_tree(dir, &toolbudget::view::live::files(&result))?;
    }
    if !quiet {
        eprintln!(
            "live: {} request{} sent, {} replayed from {}",
            ep.sent,
            if ep.sent == 1 { "" } else { "s" },
            ep.replayed,
            args.cassette.display()
        );
    }
    emit(None, &render(&result, args.format))
}

/// Renders the result; pure.
pub fn render(result: &live::LiveResult, format: Format) -> String {
    match format {
        Format::Json => to_json(result),
        Format::Csv => {
            let turns: Vec<live::result::TurnRow> = result
                .scenarios
                .iter()
                .flat_map(|s| s.turns.clone())
                .collect();
            csv_rows(&turns)
        }
        Format::Table | Format::Md => toolbudget::view::live::text(result, format == Format::Md),
    }
}

/// Reads `DIR/live.json` for `report --live DIR`.
pub fn load_result(dir: &Path) -> Result<live::LiveResult> {
    let path = dir.join("live.json");
    let doc = toolbudget::document::Document::read(&path)?;
    doc.decode(&[], &doc.value)
}
