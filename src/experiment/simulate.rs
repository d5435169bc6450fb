//! Scenarios replayed eager and deferred: the one path for `simulate`, `simulate --client` and
//! the report. [`Settings`] owns every choice that shapes a scenario's run (its counter, a
//! replaced scorer, exact API counts, the calibration); [`prepare`] and [`scenario`] apply them
//! the same way for every caller.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::catalog::Catalog;
use crate::counter::api::Client;
use crate::counter::{CounterKind, ToolTokens};
use crate::error::{Error, Result};
use crate::progress::{Progress, Unit};
use crate::search::external::ExternalConfig;
use crate::search::{Scorer, ScorerSpec};
use crate::simulate::calibration::{Calibration, CalibrationFile};
use crate::simulate::client::ClientName;
pub use crate::simulate::result::SearchLatencySource;
use crate::simulate::result::SimulationResult;
use crate::simulate::{
    self, ExactCounts, Prepared, Scenario, ScenarioResult, SearchTiming, Sizing,
};
use crate::timing::Clock;
use crate::tokenize::Tokenizer;

use super::clients::{self, ClientComparison};

/// The anthropic-api counter's answers, reached through the command's client and cache file
/// (injected as a `Transport` is).
pub trait ApiCounting {
    /// A count_tokens client for `model`, its cached answers loaded.
    fn client(&mut self, model: &str) -> Result<Client>;
    /// Keeps what `client` learned (its cache written), also after a request failed.
    fn keep(&mut self, client: &Client) -> Result<()>;
}

/// The API's answers when a run has them (`simulate`), none otherwise (the report counts
/// locally). The client owns what it holds, so it is `'static`.
pub type Api<'a> = Option<&'a mut (dyn ApiCounting + 'static)>;

/// The choices that shape every scenario's run.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `--counter`: the counter of every scenario.
    pub counter: Option<CounterKind>,
    /// `--tokenizer`: the json counter of that tokenizer (a scenario's rendering kept).
    pub tokenizer: Option<Tokenizer>,
    /// The deferred search of every scenario, replacing `deferred.scorer`.
    pub scorer: Option<ScorerSpec>,
    /// Fitted system prompts and scales, applied to the scenarios of their profile and counter.
    pub calibration: Option<CalibrationFile>,
    /// How external scorers are started and waited for.
    pub external: ExternalConfig,
}

impl Settings {
    /// The counter in force for `scenario`: the flag's, else the scenario's own, else its
    /// profile's.
    pub fn counter(&self, scenario: &Scenario) -> CounterKind {
        let flag = self.counter.or(self
            .tokenizer
            .map(|t| CounterKind::from_legacy(t, scenario.render)));
        simulate::counter_for(scenario, flag)
    }

    /// The scenario with the search these settings choose.
    pub fn with_scorer(&self, mut scenario: Scenario) -> Scenario {
        if let Some(s) = &self.scorer {
            scenario.deferred.scorer = s.clone();
            scenario.deferred.scorer_dir = None;
        }
        scenario
    }

    /// The calibration applied to `scenario`, if any.
    pub fn calibration_for(&self, scenario: &Scenario) -> Option<&Calibration> {
        let counter = self.counter(scenario);
        self.calibration
            .as_ref()
            .and_then(|f| f.for_scenario(scenario, counter))
    }

    /// Builds a scenario's scorers with these settings' external-process settings.
    fn build(
        &self,
        spec: &ScorerSpec,
        catalog: Arc<Catalog>,
        bm25: &crate::search::bm25::Bm25Params,
        dir: Option<&Path>,
    ) -> Result<Box<dyn Scorer>> {
        simulate::build_scorer_with(spec, catalog, bm25, dir, &self.external)
    }
}

/// Prepares `scenario` under `settings`: its counter, its catalogs counted (through the API
/// when that is the counter), its calibration applied.
pub fn prepare(settings: &Settings, scenario: &Scenario, api: Api<'_>) -> Result<Prepared> {
    let counter = settings.counter(scenario);
    let build =
        |spec: &_, catalog, bm25: &_, dir: Option<&Path>| settings.build(spec, catalog, bm25, dir);
    let sizing = settings
        .calibration_for(scenario)
        .map_or(Sizing::Counted, Sizing::Calibrated);
    let builder = Prepared::builder(scenario, counter, &build).sizing(sizing);
    if counter.is_local() {
        return builder.build();
    }
    let Some(api) = api else {
        return builder.build();
    };
    let catalog = simulate::load_scenario_catalogs(scenario)?;
    let (exact, tokens) = exact_counts(api, scenario, &catalog)?;
    builder
        .catalog(Arc::new(catalog))
        .tokens(tokens)
        .exact(Some(exact))
        .build()
}

/// `anthropic-api`: the system prompt, user messages, tools and search tool measured by
/// count_tokens (cached); the cache is kept even when a request fails.
fn exact_counts(
    api: &mut (dyn ApiCounting + 'static),
    scenario: &Scenario,
    catalog: &Catalog,
) -> Result<(ExactCounts, ToolTokens)> {
    let mut client = api.client(&scenario.profile.api_model)?;
    let users = simulate::user_texts(scenario);
    let user_refs: Vec<&str> = users.iter().map(String::as_str).collect();
    let parts = crate::counter::api::request_parts(
        &mut client,
        scenario.system_prompt.as_deref(),
        &user_refs,
        catalog,
        &simulate::default_search_tool(),
        scenario.tool_choice,
    );
    api.keep(&client)?;
    let parts = parts.map_err(|e| Error::Missing(e.to_string()))?;
    let exact = ExactCounts {
        system: parts.system,
        messages: users.into_iter().zip(parts.messages).collect(),
        tools_fixed: parts.tools.fixed,
        search_tool: parts.search_tool,
    };
    let tokens = ToolTokens::of(CounterKind::AnthropicApi, parts.tools.counts);
    Ok((exact, tokens))
}

/// The one scenario run: prepared under `settings`, its search work charged to `budget`,
/// replayed eager and deferred with its published figures measured beside (each under its
/// provider's counter, uncalibrated). Returns the result and the calibration applied.
pub fn scenario<'s>(
    settings: &'s Settings,
    scenario: &Scenario,
    timing: SearchTiming<'_>,
    api: Api<'_>,
    budget: &mut crate::budget::Budget,
) -> Result<(ScenarioResult, Option<&'s Calibration>)> {
    let prepared = prepare(settings, scenario, api)?;
    simulate::charge_searches(scenario, &prepared, budget)?;
    let mut result = simulate::run_timed(scenario, &prepared, timing)?;
    let build =
        |spec: &_, catalog, bm25: &_, dir: Option<&Path>| settings.build(spec, catalog, bm25, dir);
    result.published = simulate::published::compare(scenario, &prepared, &build)?;
    result.calibration = settings.calibration.as_ref().map(|f| {
        f.use_for(
            scenario,
            settings.counter(scenario),
            prepared.counted_system_tokens(),
        )
    });
    Ok((result, settings.calibration_for(scenario)))
}

/// The files the scenarios at `paths` name (their catalogs), for the output guard: an output
/// must not replace a file a scenario reads. A scenario that does not load names nothing here;
/// the run reports its error.
pub fn named_inputs(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths
        .iter()
        .filter(|p| p.is_file())
        .filter_map(|p| simulate::load_scenario(p).ok())
        .flat_map(|s| s.catalogs.into_iter().map(|c| c.path))
        .collect()
}

/// What `simulate` is asked, as plain values.
#[derive(Debug, Clone)]
pub struct SimulateRequest {
    pub scenarios: Vec<PathBuf>,
    pub settings: Settings,
    /// A calibration file to read into the settings.
    pub calibration: Option<PathBuf>,
    /// Keep every request's row in the result.
    pub per_request: bool,
    /// Whether each search's latency is measured on the real scorer or the profile's.
    pub latency: SearchLatencySource,
    /// `--client`: the same scenarios under each client's policy instead.
    pub clients: Vec<ClientName>,
}

/// A `simulate` run with everything decided: the calibration and the scenarios loaded.
pub struct SimulatePlan {
    scenarios: Vec<Scenario>,
    settings: Settings,
    per_request: bool,
    latency: SearchLatencySource,
    clients: Vec<ClientName>,
}

impl SimulatePlan {
    /// Reads the calibration, then the scenarios.
    pub fn new(request: SimulateRequest) -> Result<SimulatePlan> {
        let mut settings = request.settings;
        if let Some(path) = &request.calibration {
            settings.calibration = Some(CalibrationFile::load(path)?);
        }
        let scenarios = simulate::load_scenarios(&request.scenarios)?;
        Ok(SimulatePlan {
            scenarios,
            settings,
            per_request: request.per_request,
            latency: request.latency,
            clients: request.clients,
        })
    }

    /// Whether this is a `--client` comparison.
    pub fn by_client(&self) -> bool {
        !self.clients.is_empty()
    }
}

/// Replays every scenario of the plan; each a progress step, each caveat a note.
pub fn run(
    plan: &SimulatePlan,
    clock: Clock<'_>,
    progress: &dyn Progress,
    mut api: Api<'_>,
) -> Result<SimulationResult> {
    let timing = match plan.latency {
        SearchLatencySource::Measured => SearchTiming::Measured(clock),
        SearchLatencySource::Modeled => SearchTiming::Modeled,
    };
    progress.phase(
        "simulate",
        plan.scenarios.len() as u64,
        Unit::Items("scenarios"),
    );
    let mut budget = crate::budget::Budget::new();
    let mut scenarios = Vec::with_capacity(plan.scenarios.len());
    for sc in &plan.scenarios {
        progress.step(&sc.name);
        let sc = plan.settings.with_scorer(sc.clone());
        let (mut result, _) =
            scenario(&plan.settings, &sc, timing, api.as_deref_mut(), &mut budget)?;
        if !plan.per_request {
            result.requests.clear();
        }
        for caveat in &result.savings.caveats {
            progress.note(&format!("warning: {}: {caveat}", result.name));
        }
        scenarios.push(result);
        progress.advance(1);
    }
    progress.finish();
    Ok(SimulationResult { scenarios })
}

/// `--client A,B`: every scenario of the plan under every client, side by side.
pub fn run_clients(plan: &SimulatePlan, mut api: Api<'_>) -> Result<ClientComparison> {
    let settings = &plan.settings;
    let mut prepare = |sc: &Scenario| prepare(settings, sc, api.as_deref_mut());
    clients::run(
        &plan.scenarios,
        &plan.clients,
        &mut prepare,
        settings.calibration.as_ref(),
        &mut crate::budget::Budget::new(),
    )
}
