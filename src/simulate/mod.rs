//! The simulator: replays a scenario's conversation twice, eager and deferred, through the
//! same search core, and accounts for every request (tokens by part, cached prefix, cost,
//! latency, context occupancy). The model is `shared/ACCOUNTING.md`;
//! docs/methodology/accounting.md documents the choices it leaves open.
//!
//! Public API:
//! - [`load_scenario`] reads and validates a scenario file;
//! - [`prepare`] loads its catalogs, counts every tool once and builds the scorers;
//! - [`run`] replays both modes and returns a serializable [`ScenarioResult`]; [`run_timed`]
//!   also times the searches it sends on the real scorer.

pub mod calibration;
pub mod client;
pub mod cost;
mod latency;
pub mod listing;
mod plan;
mod prepared;
pub mod profile;
pub mod published;
mod replay;
pub mod request;
pub mod result;
pub mod scenario;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::catalog::{Catalog, CatalogSource, Tool, load_catalogs};
use crate::counter::CounterKind;
use crate::counter::ToolTokens;
use crate::error::{Error, Result};
use crate::search::bm25::Bm25Params;
use crate::search::external::ExternalConfig;
use crate::search::spec::ScorerSpec;
use crate::search::text::{self, Camel};
use crate::search::{Scorer, ScorerKind};
use crate::timing::Clock;

use calibration::Calibration;
pub use profile::Profile;
pub use request::{Mode, Parts, RequestKind, RequestRow};
pub use result::{ModeResult, ScenarioResult};
pub use scenario::{Scenario, load_scenario, load_scenarios};

use plan::*;
pub use prepared::*;

/// Builds a scorer over a catalog with the scenario's bm25 settings (the real one is
/// [`build_scorer`]; tests pass their own).
pub type ScorerBuilder<'a> =
    dyn Fn(&ScorerSpec, Arc<Catalog>, &Bm25Params, Option<&Path>) -> Result<Box<dyn Scorer>> + 'a;

/// [`search::spec::build_spec`](crate::search::spec::build_spec) with the default embedding
/// and external-process settings and the given bm25 settings (a scenario's `deferred.bm25`);
/// an external scorer runs in `dir` when given (the scenario's folder).
pub fn build_scorer(
    spec: &ScorerSpec,
    catalog: Arc<Catalog>,
    bm25: &Bm25Params,
    dir: Option<&Path>,
) -> Result<Box<dyn Scorer>> {
    build_scorer_with(spec, catalog, bm25, dir, &ExternalConfig::default())
}

/// As [`build_scorer`], with the time-outs and MCP settings of the command line.
pub fn build_scorer_with(
    spec: &ScorerSpec,
    catalog: Arc<Catalog>,
    bm25: &Bm25Params,
    dir: Option<&Path>,
    external: &ExternalConfig,
) -> Result<Box<dyn Scorer>> {
    let mut config = crate::search::ScorerConfig {
        bm25: *bm25,
        external: external.clone(),
        ..crate::search::ScorerConfig::default()
    };
    if let Some(dir) = dir {
        config.external.cwd = Some(dir.to_path_buf());
    }
    crate::search::spec::build_spec(spec, catalog, &config)
}

/// The counter in force: the command line's, else the scenario's `counter`, else its
/// `tokenizer` (the json counter of that tokenizer), else the model profile's.
pub fn counter_for(scenario: &Scenario, flag: Option<CounterKind>) -> CounterKind {
    flag.or(scenario.counter)
        .or(scenario
            .tokenizer
            .map(|t| CounterKind::from_legacy(t, scenario.render)))
        .unwrap_or(scenario.profile.counter)
}

/// Loads the scenario's catalogs (checking each exists where the scenario names it).
pub fn load_scenario_catalogs(scenario: &Scenario) -> Result<Catalog> {
    if let Some(path) = &scenario.unavailable {
        return Err(Error::input(
            &scenario.path,
            scenario.unavailable_at,
            format!(
                "{} does not exist: this scenario needs third-party data kept outside the \
                 repository (see its `optional` inputs)",
                path.display()
            ),
        ));
    }
    // A catalog that is not there is the scenario's mistake: point at the line naming it.
    if let Some(c) = scenario.catalogs.iter().find(|c| !c.is_available()) {
        return Err(Error::input(
            &scenario.path,
            c.at,
            format!(
                "catalog file {} {}",
                c.path.display(),
                if c.path.exists() {
                    "is not a file"
                } else {
                    "does not exist"
                }
            ),
        ));
    }
    check_listed_once(scenario)?;
    let sources: Vec<CatalogSource> = scenario
        .catalogs
        .iter()
        .map(|c| CatalogSource {
            path: c.path.clone(),
            server: c.server.clone(),
        })
        .collect();
    load_catalogs(&sources)
}

/// Charges the most search work `scenario`'s replays may do on `prepared` to the run's
/// `budget` ([`crate::budget::MAX_SEARCH_WORK`], shared with the query sets of a `report`),
/// before it is replayed: a run of many long scenarios over a big catalog is refused, naming
/// the scenario, instead of searching for hours.
pub fn charge_searches(
    scenario: &Scenario,
    prepared: &Prepared,
    budget: &mut crate::budget::Budget,
) -> Result<()> {
    let tools = prepared.catalog.len();
    let work = scenario.search_work(tools);
    budget
        .charge(crate::budget::Kind::SearchWork, work)
        .map_err(|over| {
            Error::input(
                &scenario.path,
                None,
                format!(
                    "its replays may search {tools} tools up to {} times ({work} query × tool \
                     pairs: every request a search with its retry steps, in the deferred \
                     replay and each published figure's), which would {over}: replay fewer \
                     or shorter scenarios in one run, or a smaller catalog",
                    work / (tools.max(1) as u64)
                ),
            )
        })
}

pub use crate::catalog::SEARCH_TOOL;

/// The search tool's definition when the catalog brings none: a realistic ToolSearch in the
/// style of Claude Code's, counted with the same tokenizer and rendering as every tool.
pub fn default_search_tool() -> Tool {
    Tool {
        id: SEARCH_TOOL.into(),
        name: SEARCH_TOOL.into(),
        server: None,
        description: "Search the deferred tools and load the ones you need. Only the names of \
deferred tools are listed at the start; load a tool's full definition with this tool before \
calling it. Query forms: keywords (\"slack send message\") return the best matches up to \
max_results; \"select:A,B\" loads exactly the named tools; prefix a word with + to require it \
in the tool name. Loaded tools stay available for the rest of the session."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Keywords, or \"select:ID,ID\" to load specific tools."},
                "max_results": {"type": "number", "default": 5, "description": "Maximum number of tools to return and load."}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
        should_defer: Some(false),
        always_load: true,
        search_hint: None,
        depends_on: Vec::new(),
        origin: None,
    }
}

/// The `tool_call` bridge of a client that calls deferred tools through one tool (Qwen Code,
/// OpenRouter's call wrapper): toolbudget's own definition, counted like any tool.
pub fn call_bridge_tool() -> Tool {
    Tool {
        id: "tool_call".into(),
        name: "tool_call".into(),
        server: None,
        description: "Call a deferred tool that a search has loaded, by its name, with the \
arguments its loaded definition describes."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The loaded tool's name."},
                "arguments": {"type": "object", "description": "The tool's arguments."}
            },
            "required": ["name", "arguments"],
            "additionalProperties": false
        }),
        should_defer: Some(false),
        always_load: true,
        search_hint: None,
        depends_on: Vec::new(),
        origin: None,
    }
}

/// Every user text the scenario counts from text (subagents included), each once, in order.
pub fn user_texts(scenario: &Scenario) -> Vec<String> {
    fn walk(items: &[scenario::Item], out: &mut Vec<String>) {
        for item in items {
            if let scenario::Item::Turn(t) = item {
                if t.tokens.is_none() && !out.contains(&t.user) {
                    out.push(t.user.clone());
                }
                if let Some(s) = &t.subagent {
                    walk(&s.conversation, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&scenario.conversation, &mut out);
    out
}

/// How a replay times the searches it sends.
#[derive(Clone, Copy)]
pub enum SearchTiming<'c> {
    /// Every search takes the profile's `search_latency_ms`: the result is deterministic.
    Modeled,
    /// Each search the replay sends (`select:` and retries included, over the replay's own
    /// candidates) is timed on the real scorer with this clock through the one harness
    /// (`timing`), and that time is its latency in the model.
    Measured(Clock<'c>),
}

/// Replays the scenario eagerly and deferred and summarizes both, with modeled search latency.
pub fn run(scenario: &Scenario, prepared: &Prepared) -> Result<ScenarioResult> {
    run_timed(scenario, prepared, SearchTiming::Modeled)
}

/// As [`run`], timing the searches as `timing` says.
pub fn run_timed(
    scenario: &Scenario,
    prepared: &Prepared,
    timing: SearchTiming<'_>,
) -> Result<ScenarioResult> {
    validate_conversation(scenario, &prepared.catalog, &prepared.plan)?;
    let mut eager = replay::Run::new(scenario, prepared, Mode::Eager, timing);
    eager.replay()?;
    let mut deferred = replay::Run::new(scenario, prepared, Mode::Deferred, timing);
    deferred.replay()?;
    Ok(summary::summarize(scenario, prepared, eager, deferred))
}

mod summary;

#[cfg(test)]
mod tests;
