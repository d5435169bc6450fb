//! The model in the loop (`live`): every scenario played eager and deferred against the
//! command's endpoint (its transport, clock and cassette injected), the cassette kept after
//! each scenario, also when a request failed.

use std::path::PathBuf;

use crate::counter::CounterKind;
use crate::error::{Error, Result};
pub use crate::live::cassette::{Cassette, Load as CassetteLoad};
pub use crate::live::{Endpoint, LiveModels, LiveResult, Provider, SearchSide, Settings};
use crate::progress::{Progress, Unit};
use crate::search::ScorerKind;
use crate::simulate::Scenario;

use super::simulate;

/// What `live` is asked, as plain values.
#[derive(Debug, Clone)]
pub struct LiveRequest {
    pub scenarios: Vec<PathBuf>,
    pub provider: Provider,
    /// `--counter`, else the provider's.
    pub counter: Option<CounterKind>,
    /// The search of the deferred mode (`--scorer`) and how external scorers start.
    pub simulate: simulate::Settings,
    /// How every model plays (its `model` is set per model).
    pub settings: Settings,
    /// The models, each played in turn (`--model A,B`), a run of its own.
    pub models: Vec<String>,
}

/// A `live` run with everything decided: the flags checked, the scenarios loaded with their
/// search.
pub struct LivePlan {
    provider: Provider,
    counter: CounterKind,
    scenarios: Vec<Scenario>,
    simulate: simulate::Settings,
    settings: Settings,
    models: Vec<String>,
}

/// The models of `--model`, refused when one is named twice or, in a list, not at all.
fn check_models(models: &[String]) -> Result<()> {
    if models.is_empty() {
        return Err(Error::usage(
            "--model: name the model (or several, comma-separated)",
        ));
    }
    let list = models.join(",");
    if models.len() > 1 && models.iter().any(|m| m.trim().is_empty()) {
        return Err(Error::usage(format!(
            "--model {list:?}: an empty model name in the list; give MODEL[,MODEL...]"
        )));
    }
    if let Some(twice) = models
        .iter()
        .enumerate()
        .find_map(|(i, m)| models[..i].contains(m).then_some(m))
    {
        return Err(Error::usage(format!(
            "--model {list:?}: {twice:?} is named twice; each model is played once"
        )));
    }
    Ok(())
}

impl LivePlan {
    pub fn new(request: LiveRequest) -> Result<LivePlan> {
        check_models(&request.models)?;
        let provider = request.provider;
        if request.settings.search == SearchSide::Provider
            && provider
                .provider_search(&ScorerKind::Keyword.into())
                .is_none()
        {
            return Err(Error::usage(format!(
                "--search provider: {provider} has no provider-side tool search (anthropic and \
                 openai-responses do); use --search client"
            )));
        }
        let counter = request.counter.unwrap_or(provider.counter());
        if !counter.is_local() {
            return Err(Error::usage(format!(
                "--counter {counter}: live counts every request locally; use anthropic-estimate"
            )));
        }
        let scenarios = crate::simulate::load_scenarios(&request.scenarios)?
            .into_iter()
            .map(|s| request.simulate.with_scorer(s))
            .collect();
        Ok(LivePlan {
            provider,
            counter,
            scenarios,
            simulate: request.simulate,
            settings: request.settings,
            models: request.models,
        })
    }
}

/// Plays every scenario with each model in turn (all of one model's scenarios, then the
/// next's), a result per model; `keep` saves the endpoint's cassette after each scenario
/// (whatever was answered stays recorded, also when a later request failed).
pub fn run(
    plan: &LivePlan,
    ep: &mut Endpoint,
    progress: &dyn Progress,
    keep: &mut dyn FnMut(&Endpoint) -> Result<()>,
) -> Result<Vec<LiveResult>> {
    let several = plan.models.len() > 1;
    progress.phase(
        "live",
        (plan.scenarios.len() * plan.models.len()) as u64,
        Unit::Items("scenarios"),
    );
    let mut budget = crate::budget::Budget::new();
    let mut runs = Vec::with_capacity(plan.models.len());
    for model in &plan.models {
        let settings = &Settings {
            model: model.clone(),
            ..plan.settings.clone()
        };
        let mut results = Vec::new();
        for scenario in &plan.scenarios {
            progress.step(&if several {
                format!("{model}: {}", scenario.name)
            } else {
                scenario.name.clone()
            });
            let simulate = simulate::Settings {
                counter: Some(plan.counter),
                ..plan.simulate.clone()
            };
            let prepared = simulate::prepare(&simulate, scenario, None)?;
            crate::simulate::charge_searches(scenario, &prepared, &mut budget)?;
            progress.note(&format!(
                "live: {}: {} run{} eager and deferred against {} ({})",
                scenario.name,
                settings.repeat,
                if settings.repeat == 1 { "" } else { "s" },
                settings.model,
                if ep.offline {
                    "offline"
                } else {
                    ep.base_url.as_str()
                }
            ));
            let played = crate::live::run_scenario(scenario, &prepared, settings, ep);
            keep(ep)?;
            results.push(played.map_err(|e| Error::Missing(e.to_string()))?);
            progress.advance(1);
        }
        runs.push(crate::live::finish(
            plan.provider,
            plan.counter,
            settings,
            results,
        ));
    }
    progress.finish();
    Ok(runs)
}

/// Reads `DIR/live.json`, written by `live --out DIR` (`report --live DIR`): one model's
/// result, or each model's of a `--model A,B` run.
pub fn read_result(dir: &std::path::Path) -> Result<Vec<LiveResult>> {
    let path = dir.join("live.json");
    let doc = crate::document::Document::read(&path)?;
    if doc.value.get("models").is_some() {
        let runs: crate::live::LiveModels = doc.decode(&[], &doc.value)?;
        return Ok(runs.models);
    }
    Ok(vec![doc.decode(&[], &doc.value)?])
}
