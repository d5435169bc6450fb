//! The report: runs the shipped scenarios, the evaluations, the scale sweep, the deferral
//! views and (with `--sessions`) the imported sessions, and gathers their results into a
//! [`ReportData`]. It reads the input files it is given (through the loaders) but finds none
//! itself, writes nothing and reads no clock of its own: the command passes the files, a clock
//! and a progress display. `view::report` renders the result.
//!
//! Scenarios run with modeled search latency (deterministic); evaluations and the sweep time
//! their searches with the one harness (`timing`), and those times go to
//! `ReportData::latency` only.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::deferral;
use super::eval::{self, EvalInput, EvalLatency, EvalSet};
use super::sweep::{self, Sweep, SweepLatency};
use crate::catalog::{Catalog, CatalogSource, load_catalogs};
use crate::counter::{CounterKind, ToolTokens};
use crate::error::Result;
pub use crate::experiment::sessions::Variant;
use crate::experiment::sessions::replay_dir;
use crate::progress::{Progress, Unit};
use crate::search::ScorerSpec;
use crate::search::external::ExternalConfig;
use crate::simulate::calibration::CalibrationFile;
use crate::simulate::{self, ScenarioResult, SearchTiming};
use crate::timing::Clock;

/// Everything a report shows, already computed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReportData {
    pub settings: ReportSettings,
    /// Token counts of the catalogs used (fixtures, and real data with `--data`).
    pub catalogs: Vec<CatalogRow>,
    /// The simulator's results, requests included (modeled search latency: deterministic).
    pub scenarios: Vec<ScenarioResult>,
    pub evals: Vec<EvalSet>,
    pub sweep: Option<Sweep>,
    /// Break-even, `auto:N` threshold and reveal views (`deferral`).
    pub deferral: Option<deferral::Deferral>,
    /// The shipped scenarios under every client profile (`simulate --client`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clients: Option<super::clients::ClientComparison>,
    /// Imported sessions replayed (`--sessions DIR`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<crate::experiment::sessions::SessionsReport>,
    /// Measured: varies run to run.
    #[serde(skip)]
    pub latency: Latencies,
    /// Live runs' results (`--live DIR`, repeatable), shown in their own section.
    #[serde(skip)]
    pub live: Vec<crate::live::LiveResult>,
    /// Things the reader must know (a scorer skipped, a part not run).
    pub notes: Vec<String>,
}

/// Settings in force for the whole report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportSettings {
    /// The counter of the report's token figures (the default profile's).
    pub counter: CounterKind,
    /// The model profile (prices, context window), as `key = value` pairs.
    pub profile: Vec<(String, String)>,
    /// Any further settings worth printing (sweep seed, eval cutoffs, …).
    pub other: Vec<(String, String)>,
}

impl ReportSettings {
    /// The counter's tokenizer as the report prints it, with an estimate's stated error.
    pub fn tokenizer(&self) -> String {
        match self.counter.error_pct() {
            Some(e) => format!("{} ± {e}%", self.counter.tokenizer_label()),
            None => self.counter.tokenizer_label().to_string(),
        }
    }
}

impl Default for ReportSettings {
    fn default() -> Self {
        ReportSettings {
            counter: CounterKind::O200kJson,
            profile: Vec::new(),
            other: Vec::new(),
        }
    }
}

/// `counter`, then the `tokenizer` and `render` it implies, then the rest.
impl Serialize for ReportSettings {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("ReportSettings", 5)?;
        st.serialize_field("counter", &self.counter)?;
        st.serialize_field("tokenizer", &self.tokenizer())?;
        st.serialize_field("render", self.counter.render_name())?;
        st.serialize_field("profile", &self.profile)?;
        st.serialize_field("other", &self.other)?;
        st.end()
    }
}

/// One catalog's size; also a row of `data/catalogs.csv`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CatalogRow {
    /// `fixtures`, or the real-data file.
    pub catalog: String,
    /// Every tool, the search tool included (as `count` counts).
    pub tool_count: usize,
    /// The catalog's search tool, when it has one (empty otherwise).
    pub search_tool: String,
    pub servers: usize,
    pub tokens: usize,
    pub mean_tokens: f64,
    pub max_tokens: usize,
}

/// Measured latencies (not deterministic).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Latencies {
    pub eval: Vec<EvalLatency>,
    pub sweep: Vec<SweepLatency>,
}

/// Cutoffs of the evaluations.
pub const EVAL_KS: [usize; 4] = [1, 3, 5, 10];
/// A query is listed under failures when not all its expected tools are in this top k
/// (the simulator's default `max_results`).
pub const MISS_K: usize = 5;
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
    pub calibration: Option<PathBuf>,
    /// Folders written by `live --out DIR` (`--live`, repeatable).
    pub live: Vec<PathBuf>,
    /// An import folder (`--sessions`) and the deferred settings to replay it under.
    pub sessions: Option<(PathBuf, Vec<Variant>)>,
    /// The user's own scorers (`--scorer exec:...`), evaluated beside the built-ins on every set.
    pub scorers: Vec<ScorerSpec>,
    /// The deferred search of every scenario (`--scenario-scorer`), replacing `deferred.scorer`.
    pub scenario_scorer: Option<ScorerSpec>,
    /// How external scorers are started and waited for.
    pub external: ExternalConfig,
}

/// Runs every part of the report.
pub fn build(
    inputs: &ReportInputs,
    clock: Clock<'_>,
    progress: &dyn Progress,
) -> Result<ReportData> {
    let calibration = inputs
        .calibration
        .as_deref()
        .map(CalibrationFile::load)
        .transpose()?;
    // Token figures are counted the way the default model profile is billed.
    let profile = simulate::profile::find(simulate::profile::DEFAULT_PROFILE)
        .expect("the default profile is shipped");
    let counter = profile.counter;
    let mut data = ReportData {
        settings: ReportSettings {
            counter,
            profile: key_values(&profile),
            other: Vec::new(),
        },
        notes: inputs.notes.clone(),
        ..ReportData::default()
    };
    // Every query set is loaded and its search work charged before anything runs: a run over
    // the search budget fails here, not after hours of searching.
    let mut budget = crate::budget::Budget::new();
    let plans = eval::plan_sets(
        &inputs.evals,
        &inputs.scorers,
        &inputs.external,
        &EVAL_KS,
        &mut budget,
    )?;
    count_catalogs(&mut data, &inputs.catalogs, counter, progress)?;
    if let Some((dir, variants)) = &inputs.sessions {
        progress.phase("sessions", 1, Unit::Items(""));
        progress.step(&dir.display().to_string());
        data.sessions = Some(replay_dir(dir, variants, calibration.as_ref())?);
        progress.finish();
    }
    run_scenarios(&mut data, inputs, calibration, progress, &mut budget)?;
    run_clients(&mut data, inputs, progress, &mut budget)?;
    for (input, plan) in inputs.evals.iter().zip(&plans) {
        let set = eval::report_set(input, plan, MISS_K, clock, progress)?;
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
    let sweep = sweep::run(counter, &profile, clock, progress);
    data.sweep = Some(sweep.sweep);
    data.latency.sweep = sweep.latency;
    data.notes.extend(sweep.notes);
    data.deferral = Some(deferral::compute(
        counter,
        &profile,
        &simulate::build_scorer,
        progress,
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
    for dir in &inputs.live {
        data.live.extend(super::live::read_result(dir)?);
    }
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
    progress.phase("catalogs", groups.len() as u64, Unit::Items(""));
    for (name, sources) in groups {
        progress.step(name);
        let catalog = load_catalogs(sources)?;
        let tokens = counter.tools(&catalog);
        data.catalogs.push(catalog_row(name, &catalog, &tokens));
        progress.advance(1);
    }
    progress.finish();
    Ok(())
}

/// The shipped scenarios (not the published reproductions, which have their own setups;
/// not those left out) under every client profile.
fn run_clients(
    data: &mut ReportData,
    inputs: &ReportInputs,
    progress: &dyn Progress,
    budget: &mut crate::budget::Budget,
) -> Result<()> {
    let settings = super::simulate::Settings {
        external: inputs.external.clone(),
        ..super::simulate::Settings::default()
    };
    let scenarios: Vec<simulate::Scenario> = simulate::load_scenarios(&inputs.scenarios)?
        .into_iter()
        .filter(|s| s.unavailable.is_none() && s.published.is_empty())
        .collect();
    if scenarios.is_empty() {
        return Ok(());
    }
    progress.phase("client profiles", 1, Unit::Items(""));
    progress.step("every shipped scenario under every client");
    let mut prepare = |sc: &simulate::Scenario| super::simulate::prepare(&settings, sc, None);
    let clients = simulate::client::ClientName::all();
    data.clients = Some(super::clients::run(
        &scenarios,
        clients,
        &mut prepare,
        settings.calibration.as_ref(),
        budget,
    )?);
    progress.advance(1);
    progress.finish();
    Ok(())
}

/// Every scenario, eager and deferred, with modeled search latency.
fn run_scenarios(
    data: &mut ReportData,
    inputs: &ReportInputs,
    calibration: Option<CalibrationFile>,
    progress: &dyn Progress,
    budget: &mut crate::budget::Budget,
) -> Result<()> {
    let files = &inputs.scenarios;
    let settings = super::simulate::Settings {
        scorer: inputs.scenario_scorer.clone(),
        calibration,
        external: inputs.external.clone(),
        ..super::simulate::Settings::default()
    };
    let scenarios = simulate::load_scenarios(files)?;
    progress.phase("scenarios", files.len() as u64, Unit::Items(""));
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
            progress.advance(1);
            continue;
        }
        let scenario = settings.with_scorer(scenario);
        let counter = settings.counter(&scenario);
        let (result, applied) =
            super::simulate::scenario(&settings, &scenario, SearchTiming::Modeled, None, budget)?;
        if let Some(c) = applied {
            data.notes.push(format!(
                "scenario `{}` uses the calibration of {} (system prompt {}, scale {})",
                scenario.name, c.model, c.system_prompt_tokens, c.scale
            ));
        }
        if counter != data.settings.counter {
            data.notes.push(format!(
                "scenario `{}` counts with its own counter `{counter}`",
                result.name
            ));
        }
        data.scenarios.push(result);
        progress.advance(1);
    }
    progress.finish();
    Ok(())
}
