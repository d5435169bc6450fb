//! Session import, the replay half: each session read and converted (`session::import`),
//! replayed on its own, raw and then with its model's fit, its requests paired with its bill
//! → billed vs modeled → calibration → summary and the files to write. The command layer finds
//! the files and writes what this returns.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::adoption::Adoption;
use crate::counter::CounterKind;
use crate::error::Result;
use crate::number::{percent_of, plural};
use crate::output::Spill;
use crate::progress::{FileCounter, Progress};
use crate::session::compare::{Alignment, Pair, align, calibrate};
use crate::session::convert::{BilledRequest, Converted};
use crate::session::fit::{ErrorStats, error_stats};
use crate::session::group::Planned;
use crate::session::import::{
    CatalogContext, Catalogs, Facts, Plan, QUERIES_FILE, ReadSession, check_unknown, in_read_pool,
    index_all, parse_scenario, read_session, scenario_text, unique_names, with_system_prompt,
};
pub use crate::session::import::{Filter, ImportOptions};
use crate::session::queries::Mined;
use crate::session::queries::{MinedQuery, to_jsonl};
pub use crate::session::read::LogFormat;
pub use crate::session::{default_roots, discover};
use crate::simulate::Mode;
use crate::simulate::calibration::{Calibration, CalibrationFile};
use crate::simulate::cost::{cost_cached, cost_uncached};
use crate::simulate::profile::{self, Profile};
use crate::simulate::{self, ModeResult, Prepared, RequestRow, Scenario, ScenarioResult, Sizing};
use std::sync::Arc;

/// The fitted calibration's file in an import folder (read back by `report --sessions`).
pub const CALIBRATION_FILE: &str = "calibration.json";

/// Every step for files and folders given: discover, index, plan (no filter), import.
pub fn import_paths(
    paths: &[PathBuf],
    cats: &Catalogs,
    opts: &ImportOptions,
    dir: &Path,
    written: bool,
) -> Result<ImportResult> {
    let files = discover(paths)?;
    let index = index_all(&files, &crate::progress::Quiet)?;
    let plan = Plan::new(index, &Filter::default());
    import(&plan, cats, opts, dir, written, &crate::progress::Quiet)
}

/// A mode's totals as the summary prints them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModeTotals {
    pub input_tokens: usize,
    /// Input read from the prompt cache (caching on).
    pub cached_input_tokens: usize,
    pub requests: usize,
    pub cost_usd: f64,
    pub cost_cached_usd: f64,
    pub searches: usize,
    pub misses: usize,
    /// Of `input_tokens`, the deferred-tools list over the whole conversation (0 eager): what
    /// the tools never loaded cost. Absent from files written before it: 0.
    #[serde(default)]
    pub deferred_list_tokens: usize,
}

impl ModeTotals {
    pub fn of(m: &ModeResult) -> ModeTotals {
        ModeTotals {
            input_tokens: m.total_input_tokens,
            cached_input_tokens: m.cached_input_tokens,
            requests: m.requests,
            cost_usd: m.cost_usd.without_caching,
            cost_cached_usd: m.cost_usd.with_caching,
            searches: m.counts.searches,
            misses: m.counts.misses,
            deferred_list_tokens: m.parts.deferred_list,
        }
    }

    pub fn add(&mut self, o: &ModeTotals) {
        self.input_tokens += o.input_tokens;
        self.cached_input_tokens += o.cached_input_tokens;
        self.requests += o.requests;
        self.cost_usd += o.cost_usd;
        self.cost_cached_usd += o.cost_cached_usd;
        self.searches += o.searches;
        self.misses += o.misses;
        self.deferred_list_tokens += o.deferred_list_tokens;
    }

    pub fn rounded(mut self) -> ModeTotals {
        self.cost_usd = crate::number::round(self.cost_usd, 6);
        self.cost_cached_usd = crate::number::round(self.cost_cached_usd, 6);
        self
    }

    /// A mode's totals with each subagent's requests priced at its own model's profile (the
    /// replay prices every request at the scenario's). `agents`: subagent number → profile.
    pub fn priced(
        m: &ModeResult,
        rows: &[RequestRow],
        mode: &str,
        main: &str,
        agents: &BTreeMap<usize, String>,
    ) -> ModeTotals {
        let mut t = ModeTotals::of(m);
        let profiles: BTreeMap<usize, Profile> = agents
            .iter()
            .filter(|(_, p)| p.as_str() != main)
            .filter_map(|(a, p)| Some((*a, profile::find(p)?)))
            .collect();
        if profiles.is_empty() {
            return t;
        }
        for r in rows.iter().filter(|r| r.mode.name() == mode) {
            if let Some(p) = profiles.get(&r.agent) {
                t.cost_usd += cost_uncached(p, &r.parts, r.output_tokens) - r.cost_usd;
                t.cost_cached_usd +=
                    cost_cached(p, r.input_tokens, r.cached_tokens, r.output_tokens)
                        - r.cost_cached_usd;
            }
        }
        t
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The models of a session's billed requests (with usage) that the price table cannot price.
fn unpriced(billed: &[BilledRequest], main: &str) -> Vec<String> {
    billed
        .iter()
        .filter(|b| b.usage.prompt() + b.usage.output > 0 && billed_cost(b, main).is_none())
        .map(|b| b.model.clone().unwrap_or_else(|| main.to_string()))
        .collect()
}

/// What the provider charged for one billed request, at its own model's list prices in the
/// price table in force (its tier chosen by this request's whole input); `None` for a model the
/// table does not know (it is said, and left out of the dollars).
pub fn billed_cost(b: &BilledRequest, main: &str) -> Option<f64> {
    let model = b.model.as_deref().unwrap_or(main);
    let p = profile::find(model)?;
    let u = &b.usage;
    let input = u.input + u.cache_creation + u.cache_read;
    let r = p.rates(input as usize);
    Some(
        (u.input as f64 * r.input
            + u.cache_creation as f64 * r.cache_write
            + u.cache_read as f64 * r.cache_read
            + u.output as f64 * r.output)
            / 1e6,
    )
}

impl Default for ModeTotals {
    fn default() -> Self {
        ModeTotals {
            input_tokens: 0,
            cached_input_tokens: 0,
            requests: 0,
            cost_usd: 0.0,
            cost_cached_usd: 0.0,
            searches: 0,
            misses: 0,
            deferred_list_tokens: 0,
        }
    }
}

/// One entry of the summary: one session, subagent files folded in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    pub file: String,
    /// The scenario written (absent without `--out`, or for a session with no request).
    pub scenario: Option<String>,
    /// Billed API requests (one per `message.id` + `requestId` / `token_count`), subagents
    /// included, copies of another file's requests not.
    pub requests: usize,
    /// Every tool call block of the session, subagents and searches included, copies not.
    pub tool_calls: usize,
    /// Σ billed prompt (input + cache creation + cache read) over the billed requests.
    pub billed_input_tokens: u64,
    /// Σ input the calibrated simulator models for the session in the mode it ran in.
    pub modeled_input_tokens: u64,
    /// What the session's sizes and the catalogs are counted with: its profile's counter.
    pub counter: &'static str,
    pub format: &'static str,
    pub ran_as: Mode,
    pub model: String,
    pub billed_output_tokens: u64,
    /// The bill at list prices, each request at its own model's prices in the price table in
    /// force; requests of a model the table lacks are left out (`unpriced_requests`).
    pub billed_cost_usd: f64,
    /// Billed requests (with usage) whose model the price table does not know, and those models.
    #[serde(skip_serializing_if = "is_zero")]
    pub unpriced_requests: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
    /// Per-request error of the calibrated model over the requests it could pair.
    pub error: ErrorStats,
    /// Billed requests the replay could not pair (pairing: docs/guide/import-sessions.md).
    pub unpaired_requests: usize,
    pub turns: usize,
    pub files: usize,
    pub subagents: usize,
    pub unlinked_subagents: usize,
    /// Subagents Claude Code primed with `Warmup` (billed, not part of the conversation).
    pub warmup_agents: usize,
    /// Requests of copied history, each once: written by an earlier file (resumed or forked
    /// history; context here, billed there) or earlier in the same file (a resume that
    /// rewrote the history into it; read once).
    pub copied_requests: usize,
    /// The system prompt the log records, in the counter's tokens (Codex), else absent.
    pub logged_system_prompt_tokens: Option<usize>,
    /// For a log that records none (Claude Code): the main agent's fixed prefix measured from
    /// its first billed request (billed prompt less what the replay counts), and how many
    /// subagents' prefixes were measured the same way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_system_prompt_tokens: Option<usize>,
    #[serde(skip_serializing_if = "is_zero")]
    pub measured_subagent_prompts: usize,
    /// Requests a prefix was measured on, not compared (they match by construction).
    #[serde(skip_serializing_if = "is_zero")]
    pub anchor_requests: usize,
    /// Redaction placeholders in the log, and its requests left out of every comparison
    /// (their text is not in the log).
    #[serde(skip_serializing_if = "is_zero")]
    pub redacted_placeholders: usize,
    #[serde(skip_serializing_if = "is_zero")]
    pub redacted_requests: usize,
    /// The session replayed eager and deferred with the calibrated model.
    pub eager: ModeTotals,
    pub deferred: ModeTotals,
    pub unknown_tools: BTreeMap<String, usize>,
    /// Share of the session's tool calls, and of their tokens, left out as unknown.
    pub unknown_calls_pct: f64,
    pub unknown_tokens_pct: f64,
    pub lines: usize,
    pub bad_lines: usize,
    pub truncated_last_line: bool,
    pub ignored_records: BTreeMap<String, usize>,
    /// Records without a top-level type read by their message's role, per role.
    pub untyped_records: BTreeMap<String, usize>,
    /// Logged model ids and the profile each maps to.
    pub models: BTreeMap<String, String>,
    /// Whether the model searched before it used deferred tools (`adoption`).
    pub adoption: Adoption,
    /// The model's own searches with the deferred tools it then called (mined; searches no
    /// call followed are left out).
    pub queries: Vec<MinedQuery>,
}

/// Totals over every session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportTotals {
    pub sessions: usize,
    pub requests: usize,
    pub tool_calls: usize,
    pub billed_input_tokens: u64,
    pub modeled_input_tokens: u64,
    pub billed_cost_usd: f64,
    pub eager: ModeTotals,
    pub deferred: ModeTotals,
    /// Adoption summed over every session.
    pub adoption: Adoption,
    /// Sessions that searched at least once; that called a deferred tool; that called one a
    /// search had returned.
    pub sessions_searched: usize,
    pub sessions_with_deferred_calls: usize,
    pub sessions_found_and_used: usize,
}

/// What `session import` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportSummary {
    pub sessions: Vec<SessionSummary>,
    pub totals: ImportTotals,
    /// Per-request error of the calibrated model over every paired request.
    pub error: ErrorStats,
    /// The same before calibration (system prompt 0 or the logged one, scale 1).
    pub error_uncalibrated: ErrorStats,
    /// The counters the sessions were counted with (each session's is in its entry), in
    /// name order, joined by ", ".
    pub counter: String,
    pub calibrations: Vec<Calibration>,
    pub unknown_tools: BTreeMap<String, usize>,
    /// The model's searches mined as labeled queries, and those left out (no call after).
    pub searches_mined: usize,
    pub searches_unlabeled: usize,
    /// Sessions `--since`/`--until`/`--project` left out.
    pub filtered_out: usize,
    /// The price table every dollar comes from (package, version, date).
    pub prices: String,
    pub notes: Vec<String>,
}

/// The bill of one session, written beside its scenario: `report --sessions` pairs it with
/// the replay again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageFile {
    pub session: String,
    pub format: String,
    pub ran_as: Mode,
    pub scenario: String,
    pub billed: Vec<BilledRequest>,
    /// Each linked subagent's profile (by the simulator's number), for pricing it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agent_profiles: BTreeMap<usize, String>,
    /// Redaction placeholders in the log: its requests are not compared.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redacted_placeholders: usize,
    /// Whether the model searched before it used deferred tools. Absent from files written
    /// before it: none.
    #[serde(default)]
    pub adoption: Option<Adoption>,
}

/// Everything an import produces.
pub struct ImportResult {
    pub summary: ImportSummary,
    /// The names of the files to write inside the output folder, in order; their texts wait in
    /// the spill ([`ImportResult::file_text`]), each read when it is written.
    pub files: Vec<String>,
    spill: Spill,
    /// The model's search queries, labeled, in session order (`--queries-out`).
    pub queries: Vec<MinedQuery>,
}

/// What the first pass keeps of a session: its facts, figures and raw pairs. Its scenario
/// (`pre/N`) and its bill (its usage file) wait in the spill for the calibrated pass, so that
/// memory follows the sessions in flight rather than the folder.
struct Processed {
    facts: Facts,
    /// The conversion, its conversation and bill taken out.
    converted: Converted,
    /// `NAME.yaml` or `NAME.json`.
    scenario_file: String,
    /// The loaded scenario's profile and counter (absent: no conversation to replay).
    loaded: Option<Loaded>,
    ctx: Arc<CatalogContext>,
    /// Names of its own files in the spill (its dynamic tools' catalog).
    own_files: Vec<String>,
    mined: Mined,
    adoption: Adoption,
    /// Its requests paired with its bill, replayed raw.
    raw: Alignment,
    /// Each agent's fixed prefix measured from the bill (empty when the log records a
    /// system prompt).
    prefixes: BTreeMap<usize, usize>,
}

/// What the fit needs of a loaded scenario.
struct Loaded {
    profile: String,
    tool_overhead_tokens: usize,
    counter: CounterKind,
}

impl Processed {
    fn usage_file(&self) -> String {
        format!("{}.usage.json", self.converted.scenario.name)
    }
}

/// Where a session's scenario waits between the passes.
fn pre_key(session: usize) -> String {
    format!("pre/{session}")
}

/// Where an output file waits until the command writes it.
fn out_key(name: &str) -> String {
    format!("out/{name}")
}

/// The counter `simulate` counts a scenario with (no flag), by whose name calibrations are
/// looked up.
pub fn counter_of(scenario: &Scenario) -> CounterKind {
    simulate::counter_for(scenario, None)
}

/// The calibration `simulate --calibration` would apply to a scenario.
pub fn calibration_for<'c>(
    cal: &'c CalibrationFile,
    scenario: &Scenario,
) -> Option<&'c Calibration> {
    cal.for_scenario(scenario, counter_of(scenario))
}

/// Replays a scenario, its catalogs counted with its counter, with a calibration, or raw
/// without one: scale 1, and the system prompt the scenario records (a logged one) or 0.
pub fn replay(
    scenario: &Scenario,
    ctx: &CatalogContext,
    cal: Option<&Calibration>,
) -> Result<ScenarioResult> {
    let counter = counter_of(scenario);
    let prepared = Prepared::builder(scenario, counter, &simulate::build_scorer)
        .catalog(ctx.catalog.clone())
        .tokens(ctx.tokens(counter)?.clone())
        .sizing(cal.map_or(Sizing::Raw, Sizing::Calibrated))
        .build()?;
    simulate::run(scenario, &prepared)
}

/// One session read, converted and replayed raw (no calibration), its requests paired with
/// its bill. A log that records no system prompt (Claude Code's) is replayed twice: the first
/// replay, with none, measures each agent's fixed prefix from its first paired request (billed
/// less modeled); the second carries those prefixes, and the requests that set them are not
/// compared (they would match by construction). Its scenario, bill and own files go to the
/// spill; the rest is kept.
#[allow(clippy::too_many_arguments)]
fn process(
    session: usize,
    p: &Planned,
    name: String,
    plan: &Plan,
    cats: &Catalogs,
    opts: ImportOptions,
    dir: &Path,
    files: &FileCounter<'_>,
    spill: &Spill,
) -> Result<Processed> {
    let mut read = read_session(p, name, plan, cats, opts, dir, files)?;
    let mut prefixes = BTreeMap::new();
    let raw = if read.facts.stats.redacted > 0 {
        Alignment::redacted(&read.converted.billed)
    } else if let Some(s) = &read.scenario {
        let ran = read.converted.ran_as.name();
        let mut raw = align(
            &read.converted.billed,
            &replay(s, &read.ctx, None)?.requests,
            ran,
        );
        if read.converted.scenario.system_prompt_tokens.is_none() {
            for p in &raw.pairs {
                if let std::collections::btree_map::Entry::Vacant(e) = prefixes.entry(p.agent) {
                    let billed = usize::try_from(p.billed).unwrap_or(usize::MAX);
                    e.insert(billed.saturating_sub(p.modeled));
                    read.converted.billed[p.request].anchor = true;
                }
            }
            if !prefixes.is_empty() {
                read.set_measured_prefixes(&prefixes, dir)?;
                let s = read.scenario.as_ref().expect("loaded before");
                raw = align(
                    &read.converted.billed,
                    &replay(s, &read.ctx, None)?.requests,
                    ran,
                );
            }
        }
        raw
    } else {
        Alignment {
            unaligned: read.converted.billed.iter().filter(|b| !b.warmup).count(),
            ..Alignment::default()
        }
    };
    spill_session(session, read, raw, prefixes, spill)
}

/// Sends a session's scenario text, bill and own files to the spill and keeps the rest.
fn spill_session(
    session: usize,
    read: ReadSession,
    raw: Alignment,
    prefixes: BTreeMap<usize, usize>,
    spill: &Spill,
) -> Result<Processed> {
    let ReadSession {
        facts,
        mut converted,
        scenario_file,
        scenario,
        ctx,
        own_files,
        mined,
        adoption,
    } = read;
    let loaded = scenario.map(|s| Loaded {
        counter: counter_of(&s),
        profile: s.profile.name.clone(),
        tool_overhead_tokens: s.profile.tool_overhead_tokens,
    });
    if loaded.is_some() {
        spill.put(
            &pre_key(session),
            &scenario_text(&converted.scenario, &scenario_file)?,
        )?;
    }
    converted.scenario.conversation = Vec::new();
    let usage = UsageFile {
        session: facts.file.display().to_string(),
        format: facts.format.name().to_string(),
        ran_as: converted.ran_as,
        scenario: scenario_file.clone(),
        billed: std::mem::take(&mut converted.billed),
        agent_profiles: converted.agent_profiles.clone(),
        redacted_placeholders: facts.stats.redacted,
        adoption: Some(adoption),
    };
    let mut own = Vec::with_capacity(own_files.len());
    for (name, text) in own_files {
        spill.put(&out_key(&name), &text)?;
        own.push(name);
    }
    let p = Processed {
        facts,
        converted,
        scenario_file,
        loaded,
        ctx,
        own_files: own,
        mined,
        adoption,
        raw,
        prefixes,
    };
    spill.put(&out_key(&p.usage_file()), &crate::output::to_json(&usage))?;
    Ok(p)
}

/// Imports the planned sessions. `dir` is where scenarios are written (catalog paths in the
/// contexts' refs are relative to it); `written` says whether they will be (the spill is then
/// made inside it). Sessions are read in parallel, each on its own (see the module notes);
/// `tick` gets each file's bytes as it is read. The first error in session order wins.
pub fn import(
    plan: &Plan,
    cats: &Catalogs,
    opts: &ImportOptions,
    dir: &Path,
    written: bool,
    progress: &dyn Progress,
) -> Result<ImportResult> {
    let spill = Spill::new(written.then_some(dir))?;
    let names = unique_names(&plan.sessions);
    let n: usize = plan.sessions.iter().map(|s| s.files().count()).sum();
    let files = FileCounter::begin(progress, "sessions", plan.bytes(), n);
    let processed: Vec<Result<Processed>> = in_read_pool(|| {
        plan.sessions
            .par_iter()
            .zip(names)
            .enumerate()
            .map(|(i, (p, name))| process(i, p, name, plan, cats, *opts, dir, &files, &spill))
            .collect()
    });
    files.finish();
    let processed: Vec<Processed> = processed.into_iter().collect::<Result<_>>()?;
    let unknown = check_unknown(
        processed.iter().map(|p| &p.converted),
        opts.allow_unknown_tools,
    )?;
    let calibrations = fit_all(&processed);
    let cal_file = CalibrationFile {
        calibrations,
        path: PathBuf::new(),
    };
    let mut notes = cats.notes.clone();
    notes.extend(builtin_notes(&processed));
    notes.extend(counter_notes(&processed));
    let rows = calibrated(&processed, &cal_file, dir, written, &spill)?;
    let summary = summarize(
        rows,
        &processed,
        cal_file.calibrations.clone(),
        unknown,
        plan.filtered_out,
        &mut notes,
    );
    let mut files = Vec::new();
    for p in processed.iter().filter(|p| p.loaded.is_some()) {
        files.push(p.scenario_file.clone());
        files.push(p.usage_file());
        files.extend(p.own_files.iter().cloned());
    }
    files.push(CALIBRATION_FILE.to_string());
    spill.put(
        &out_key(CALIBRATION_FILE),
        &crate::output::to_json(&cal_file),
    )?;
    let queries: Vec<MinedQuery> = processed
        .iter()
        .flat_map(|p| p.mined.queries.iter().cloned())
        .collect();
    if !queries.is_empty() {
        files.push(QUERIES_FILE.to_string());
        spill.put(&out_key(QUERIES_FILE), &to_jsonl(&queries))?;
    }
    Ok(ImportResult {
        summary,
        files,
        spill,
        queries,
    })
}

/// One calibration per model profile and counter, from the raw pairs of its sessions.
fn fit_all(processed: &[Processed]) -> Vec<Calibration> {
    // Keyed by the counter's name, so the file lists counters as it always has.
    let mut by_model: BTreeMap<(String, &str, CounterKind), (Vec<Pair>, usize)> = BTreeMap::new();
    for (session, p) in processed.iter().enumerate() {
        let Some(s) = &p.loaded else { continue };
        let counter = s.counter;
        let e = by_model
            .entry((s.profile.clone(), counter.name(), counter))
            .or_insert_with(|| (Vec::new(), s.tool_overhead_tokens));
        e.0.extend(p.raw.pairs.iter().map(|&q| Pair { session, ..q }));
    }
    by_model
        .iter()
        .filter_map(|((m, _, counter), (pairs, preamble))| {
            // The fixed cost of tools the counter adds (anthropic-estimate's fitted block)
            // is in every request beside the preamble: the system prompt is what is left.
            let overhead = pairs
                .iter()
                .filter(|p| p.agent == 0)
                .map(|p| p.overhead)
                .max()
                .unwrap_or(*preamble);
            calibrate(m, *counter, pairs, overhead)
        })
        .collect()
}

/// Sessions whose profile's counter needs the network, counted with its estimate instead.
/// Which shipped Claude Code built-ins the sessions were given: the tools of the version each
/// log names, or every tool any version had.
fn builtin_notes(processed: &[Processed]) -> Vec<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for p in processed {
        for r in &p.ctx.refs {
            let whole = r.path == crate::catalog::builtin::CLAUDE_CODE;
            if whole
                || r.path
                    .starts_with(&format!("{}@", crate::catalog::builtin::CLAUDE_CODE))
            {
                *seen.entry(r.path.as_str()).or_insert(0) += 1;
            }
        }
    }
    if seen.is_empty() {
        return Vec::new();
    }
    let table = crate::catalog::versions::table();
    let list: Vec<String> = seen
        .iter()
        .map(|(r, n)| format!("{r} ({})", plural(*n, "session", "sessions")))
        .collect();
    vec![format!(
        "Claude Code built-ins: the tools of the version each log names ({} to {}, from {}, {}), \
         every tool any version had for a later version or none: {}",
        table.versions.first().map_or("", |e| e.version.as_str()),
        table.last,
        table.source.split_whitespace().next().unwrap_or_default(),
        table.date,
        list.join(", ")
    )]
}

fn counter_notes(processed: &[Processed]) -> Vec<String> {
    let mut seen = BTreeMap::new();
    for p in processed {
        let c = &p.converted;
        if let Some(own) = c.replaced_counter {
            *seen
                .entry((c.scenario.model.clone(), own, c.counter))
                .or_insert(0usize) += 1;
        }
    }
    seen.into_iter()
        .map(|((model, own, used), n)| {
            let why = if own.is_local() {
                "cannot be mapped from the o200k counts sizes are read as"
            } else {
                "needs the network"
            };
            format!(
                "{} on {model}, whose counter {own} {why}: sizes counted with {used}",
                plural(n, "session", "sessions")
            )
        })
        .collect()
}

/// A session's summary entry and its calibrated pairs (billed, modeled).
struct Row {
    summary: SessionSummary,
    pairs: Vec<(u64, u64)>,
}

/// Each session replayed with its model's calibration and compared with its bill again, its
/// scenario and bill read back from the spill; the scenario to write (with the fitted system
/// prompt when a calibration applies) goes back to it.
fn calibrated(
    processed: &[Processed],
    cal: &CalibrationFile,
    dir: &Path,
    written: bool,
    spill: &Spill,
) -> Result<Vec<Row>> {
    processed
        .par_iter()
        .enumerate()
        .map(|(i, p)| {
            let usage: UsageFile = serde_json::from_str(&spill.get(&out_key(&p.usage_file()))?)
                .map_err(|e| {
                    crate::error::Error::usage(format!("cannot read back {}: {e}", p.usage_file()))
                })?;
            let billed = usage.billed;
            let (result, alignment) = match &p.loaded {
                Some(_) => {
                    let text = spill.get(&pre_key(i))?;
                    spill.remove(&pre_key(i));
                    let sc = parse_scenario(dir, &p.scenario_file, text.clone())?;
                    let k = calibration_for(cal, &sc);
                    let r = replay(&sc, &p.ctx, k)?;
                    drop(sc);
                    if written {
                        let text = match k {
                            Some(k) => with_system_prompt(
                                &text,
                                &p.scenario_file,
                                k.system_prompt_tokens.round().max(0.0) as usize,
                            )?,
                            None => text,
                        };
                        spill.put(&out_key(&p.scenario_file), &text)?;
                    }
                    let a = if p.facts.stats.redacted > 0 {
                        Alignment::redacted(&billed)
                    } else {
                        align(&billed, &r.requests, p.converted.ran_as.name())
                    };
                    (Some(r), a)
                }
                None => (
                    None,
                    Alignment {
                        unaligned: billed.iter().filter(|b| !b.warmup).count(),
                        ..Alignment::default()
                    },
                ),
            };
            let summary = session_summary(p, &billed, result.as_ref(), &alignment, dir, written);
            Ok(Row {
                summary,
                pairs: alignment
                    .pairs
                    .iter()
                    .map(|p| (p.billed, p.modeled as u64))
                    .collect(),
            })
        })
        .collect()
}

fn session_summary(
    p: &Processed,
    billed: &[BilledRequest],
    result: Option<&ScenarioResult>,
    alignment: &Alignment,
    dir: &Path,
    written: bool,
) -> SessionSummary {
    let c = &p.converted;
    let f = &p.facts;
    let ran = result.map(|r| match c.ran_as {
        Mode::Eager => &r.eager,
        Mode::Deferred => &r.deferred,
    });
    let pairs: Vec<(u64, u64)> = alignment
        .pairs
        .iter()
        .map(|p| (p.billed, p.modeled as u64))
        .collect();
    let main = c.scenario.model.as_str();
    let totals = |mode: &str| {
        result.map_or_else(ModeTotals::default, |r| {
            let m = if mode == "eager" {
                &r.eager
            } else {
                &r.deferred
            };
            ModeTotals::priced(m, &r.requests, mode, main, &c.agent_profiles).rounded()
        })
    };
    SessionSummary {
        file: f.file.display().to_string(),
        scenario: (written && p.loaded.is_some())
            .then(|| dir.join(&p.scenario_file).display().to_string()),
        requests: billed.len(),
        tool_calls: c.tool_calls,
        billed_input_tokens: billed.iter().map(|b| b.usage.prompt()).sum(),
        modeled_input_tokens: ran.map_or(0, |m| m.total_input_tokens as u64),
        counter: c.counter.name(),
        format: f.format.name(),
        ran_as: c.ran_as,
        model: c.scenario.model.clone(),
        billed_output_tokens: billed.iter().map(|b| b.usage.output).sum(),
        billed_cost_usd: crate::number::round(
            billed.iter().filter_map(|b| billed_cost(b, main)).sum(),
            6,
        ),
        unpriced_requests: unpriced(billed, main).len(),
        unpriced_models: unpriced(billed, main)
            .into_iter()
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect(),
        error: error_stats(&pairs),
        unpaired_requests: alignment.unaligned,
        turns: ran.map_or(0, |m| m.counts.turns),
        files: f.files,
        subagents: f.subagents,
        unlinked_subagents: c.unlinked_agents,
        warmup_agents: c.warmup_agents,
        copied_requests: f.stats.copied_requests,
        logged_system_prompt_tokens: if p.prefixes.is_empty() {
            c.scenario.system_prompt_tokens
        } else {
            None
        },
        measured_system_prompt_tokens: p.prefixes.get(&0).copied(),
        measured_subagent_prompts: p.prefixes.keys().filter(|a| **a > 0).count(),
        anchor_requests: alignment.anchored,
        redacted_placeholders: f.stats.redacted,
        redacted_requests: alignment.redacted,
        eager: totals("eager"),
        deferred: totals("deferred"),
        unknown_tools: c.unknown.calls.clone(),
        unknown_calls_pct: percent_of(c.unknown.left_out_calls as f64, c.tool_calls as f64),
        unknown_tokens_pct: percent_of(
            c.unknown.left_out_tokens as f64,
            c.unknown.all_call_tokens as f64,
        ),
        lines: f.stats.lines,
        bad_lines: f.stats.bad_lines,
        truncated_last_line: f.stats.truncated_last_line,
        ignored_records: f.stats.ignored.clone(),
        untyped_records: f.stats.untyped.clone(),
        models: c.models.clone(),
        adoption: p.adoption,
        queries: p.mined.queries.clone(),
    }
}

fn summarize(
    rows: Vec<Row>,
    processed: &[Processed],
    calibrations: Vec<Calibration>,
    unknown: BTreeMap<String, usize>,
    filtered_out: usize,
    notes: &mut Vec<String>,
) -> ImportSummary {
    let mut totals = ImportTotals {
        sessions: rows.len(),
        requests: 0,
        tool_calls: 0,
        billed_input_tokens: 0,
        modeled_input_tokens: 0,
        billed_cost_usd: 0.0,
        eager: ModeTotals::default(),
        deferred: ModeTotals::default(),
        adoption: Adoption::default(),
        sessions_searched: 0,
        sessions_with_deferred_calls: 0,
        sessions_found_and_used: 0,
    };
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    let mut sessions = Vec::with_capacity(rows.len());
    let mut counters = BTreeSet::new();
    let mut unpriced: BTreeMap<String, usize> = BTreeMap::new();
    for row in rows {
        let s = &row.summary;
        counters.insert(s.counter);
        for m in &s.unpriced_models {
            *unpriced.entry(m.clone()).or_default() += 1;
        }
        totals.requests += s.requests;
        totals.tool_calls += s.tool_calls;
        totals.billed_input_tokens += s.billed_input_tokens;
        totals.modeled_input_tokens += s.modeled_input_tokens;
        totals.billed_cost_usd += s.billed_cost_usd;
        totals.eager.add(&s.eager);
        totals.deferred.add(&s.deferred);
        totals.adoption.add(&s.adoption);
        totals.sessions_searched += usize::from(s.adoption.searches > 0);
        totals.sessions_with_deferred_calls += usize::from(s.adoption.deferred_calls > 0);
        totals.sessions_found_and_used += usize::from(s.adoption.found_calls > 0);
        pairs.extend_from_slice(&row.pairs);
        if s.truncated_last_line {
            notes.push(format!(
                "{}: last line truncated (still being written?), skipped",
                s.file
            ));
        }
        sessions.push(row.summary);
    }
    notes.extend(unpriced_notes(&unpriced));
    let redacted: Vec<&SessionSummary> = sessions
        .iter()
        .filter(|s| s.redacted_placeholders > 0)
        .collect();
    if !redacted.is_empty() {
        notes.push(format!(
            "{} redacted ({} placeholders such as [REDACTED_TEXT len=N]): their {} are left out \
             of every error figure and fit (the log does not hold the text that was billed)",
            plural(redacted.len(), "session's log is", "sessions' logs are"),
            redacted
                .iter()
                .map(|s| s.redacted_placeholders)
                .sum::<usize>(),
            plural(
                redacted.iter().map(|s| s.redacted_requests).sum::<usize>(),
                "request",
                "requests"
            ),
        ));
    }
    totals.eager = totals.eager.rounded();
    totals.deferred = totals.deferred.rounded();
    totals.billed_cost_usd = crate::number::round(totals.billed_cost_usd, 6);
    let raw_pairs: Vec<(u64, u64)> = processed
        .iter()
        .flat_map(|p| p.raw.pairs.iter().map(|p| (p.billed, p.modeled as u64)))
        .collect();
    ImportSummary {
        sessions,
        totals,
        error: error_stats(&pairs),
        error_uncalibrated: error_stats(&raw_pairs),
        counter: counters.into_iter().collect::<Vec<_>>().join(", "),
        calibrations,
        unknown_tools: unknown,
        searches_mined: processed.iter().map(|p| p.mined.queries.len()).sum(),
        searches_unlabeled: processed.iter().map(|p| p.mined.unlabeled).sum(),
        filtered_out,
        prices: crate::prices::PriceTable::active().snapshot().to_string(),
        notes: std::mem::take(notes),
    }
}

/// One note per model the price table cannot price: why (the closest known ids), and that its
/// requests are left out of the dollars.
fn unpriced_notes(unpriced: &BTreeMap<String, usize>) -> Vec<String> {
    let table = crate::prices::PriceTable::active();
    unpriced
        .iter()
        .map(|(m, sessions)| {
            let why = table
                .resolve_for_log(m)
                .err()
                .map_or(String::new(), |e| format!(" ({e})"));
            format!(
                "model {m:?} is not in the price table {}{why}: its requests in {} are left out \
                 of the billed dollars",
                table.snapshot(),
                plural(*sessions, "session", "sessions")
            )
        })
        .collect()
}

/// What `session import` is asked, as plain values: the session files (found by the command),
/// the catalogs, the filters, the folder the scenarios are written to.
#[derive(Debug, Clone)]
pub struct ImportRequest {
    pub files: Vec<PathBuf>,
    /// `--catalog`; none: each log format's shipped built-ins.
    pub catalogs: Vec<crate::catalog::CatalogSource>,
    /// The shipped built-in catalog of each log format, where it was found.
    pub builtins: [(LogFormat, Option<PathBuf>); 2],
    pub filter: Filter,
    pub options: ImportOptions,
    /// Where the scenarios go (catalog paths are written relative to it).
    pub dir: PathBuf,
    /// Whether the files will be written there.
    pub written: bool,
}

/// The one import: every file indexed, the sessions planned and filtered, each read,
/// converted and replayed, then the fit and the summary.
pub fn run(request: &ImportRequest, progress: &dyn Progress) -> Result<ImportResult> {
    let cats = crate::session::import::catalogs_for(
        &request.catalogs,
        request.builtins.clone(),
        &request.dir,
    )?;
    let index = index_all(&request.files, progress)?;
    let plan = Plan::new(index, &request.filter);
    if plan.sessions.is_empty() {
        return Err(crate::error::Error::usage(format!(
            "no session matches the filters ({} left out by --since/--until/--project)",
            plan.filtered_out
        )));
    }
    import(
        &plan,
        &cats,
        &request.options,
        &request.dir,
        request.written,
        progress,
    )
}

impl ImportResult {
    /// The text of one of [`ImportResult::files`].
    pub fn file_text(&self, name: &str) -> Result<String> {
        self.spill.get(&out_key(name))
    }
}

/// The mined queries as the JSONL file `--queries-out` writes.
pub fn queries_jsonl(result: &ImportResult) -> String {
    to_jsonl(&result.queries)
}
