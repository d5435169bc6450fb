//! The import as library calls: files → sessions → scenarios (through the real scenario
//! loader) → billed vs modeled → calibration → summary and the files to write. The command
//! layer reads nothing and writes what this returns.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::compare::{Alignment, Pair, align, calibrate};
use super::convert::{BilledRequest, CatalogOut, ConvertInput, Converted, RanAs, convert};
use super::fit::{ErrorStats, error_stats};
use super::group::{Session, group};
use super::read::{FileLog, ReadOptions, read_file};
use crate::catalog::{Catalog, CatalogSource, load_catalogs};
use crate::counter::CounterKind;
use crate::document::Document;
use crate::error::{Error, Result};

use crate::counter::ToolTokens;
use crate::simulate::calibration::{Calibration, CalibrationFile};
use crate::simulate::{self, ModeResult, Scenario, ScenarioResult};

/// How to import. Sizes are counted with each session's profile's counter
/// ([`super::session_counter`]).
#[derive(Debug, Clone, Copy)]
pub struct ImportOptions {
    pub keep_text: bool,
    pub skip_bad_lines: bool,
    pub allow_unknown_tools: bool,
}

/// The catalogs every imported scenario uses, loaded once and counted once under each
/// counter a scenario asks for.
pub struct CatalogContext {
    pub catalog: Arc<Catalog>,
    /// Per counter, in [`CounterKind::ALL`] order.
    tokens: [OnceLock<ToolTokens>; CounterKind::ALL.len()],
    /// The catalogs as a scenario in the output folder names them.
    pub refs: Vec<CatalogOut>,
}

impl CatalogContext {
    pub fn new(catalog: Catalog, refs: Vec<CatalogOut>) -> CatalogContext {
        CatalogContext {
            catalog: Arc::new(catalog),
            tokens: Default::default(),
            refs,
        }
    }

    /// Every tool's tokens under `counter`, counted on first use. Replays count locally: a
    /// scenario naming `anthropic-api` is refused rather than sent over the network.
    pub fn tokens(&self, counter: CounterKind) -> Result<&ToolTokens> {
        if !counter.is_local() {
            return Err(Error::usage(format!(
                "session replays count locally: counter {counter} needs the network; use its estimate {}",
                CounterKind::AnthropicEstimate
            )));
        }
        let i = CounterKind::ALL
            .iter()
            .position(|&k| k == counter)
            .expect("ALL holds every counter");
        Ok(self.tokens[i].get_or_init(|| counter.tools(&self.catalog)))
    }
}

/// `path` as a scenario in folder `base` names it: relative when they share more than the
/// root, else absolute (an output folder elsewhere keeps working when moved).
pub fn relative_to(path: &Path, base: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (p, b) = (abs(path), abs(base));
    let pc: Vec<Component> = p.components().collect();
    let bc: Vec<Component> = b.components().collect();
    let common = pc.iter().zip(&bc).take_while(|(x, y)| x == y).count();
    if common <= 1 {
        return p.display().to_string();
    }
    let mut rel = PathBuf::new();
    for _ in common..bc.len() {
        rel.push("..");
    }
    for c in &pc[common..] {
        rel.push(c.as_os_str());
    }
    rel.display().to_string()
}

/// Loads the catalogs once; scenarios written to `dir` name them relative to it.
pub fn catalogs(sources: &[CatalogSource], dir: &Path) -> Result<CatalogContext> {
    let catalog = load_catalogs(sources)?;
    let refs = sources
        .iter()
        .map(|s| CatalogOut {
            path: relative_to(&s.path, dir),
            server: s.server.clone(),
        })
        .collect();
    Ok(CatalogContext::new(catalog, refs))
}

/// Reads every file (in parallel); `tick` is called once per file read. The first error in
/// file order wins, so the same damaged input always gives the same message.
pub fn read_all(
    files: &[PathBuf],
    opts: &ReadOptions,
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<FileLog>> {
    let read = || -> Vec<Result<FileLog>> {
        files
            .par_iter()
            .map(|f| {
                let r = read_file(f, *opts);
                tick();
                r
            })
            .collect()
    };
    // Each reading thread counts with a tokenizer of its own (about 45 MB for o200k), so the
    // threads are capped: memory stays bounded on a machine with many cores.
    let threads = rayon::current_num_threads().min(MAX_READ_THREADS);
    let logs = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(read),
        Err(_) => read(),
    };
    logs.into_iter().collect()
}

/// Most threads reading session files at once (see [`read_all`]).
pub const MAX_READ_THREADS: usize = 8;

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
    }

    pub fn rounded(mut self) -> ModeTotals {
        self.cost_usd = crate::simulate::result::round(self.cost_usd, 6);
        self.cost_cached_usd = crate::simulate::result::round(self.cost_cached_usd, 6);
        self
    }
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
        }
    }
}

/// One entry of the summary: one session, subagent files folded in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    pub file: String,
    /// The scenario written (absent without `--out`, or for a session with no request).
    pub scenario: Option<String>,
    /// Billed API requests (one per `message.id` / `token_count`), subagents included.
    pub requests: usize,
    /// Every tool call block of the session, subagents and searches included.
    pub tool_calls: usize,
    /// Σ billed prompt (input + cache creation + cache read) over the billed requests.
    pub billed_input_tokens: u64,
    /// Σ input the calibrated simulator models for the session in the mode it ran in.
    pub modeled_input_tokens: u64,
    /// What the session's sizes and the catalogs are counted with: its profile's counter.
    pub counter: &'static str,
    pub format: &'static str,
    pub ran_as: RanAs,
    pub model: String,
    pub billed_output_tokens: u64,
    /// Per-request error of the calibrated model over the requests it could pair.
    pub error: ErrorStats,
    /// Billed requests the replay could not pair (see README).
    pub unpaired_requests: usize,
    pub turns: usize,
    pub files: usize,
    pub subagents: usize,
    pub unlinked_subagents: usize,
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
    /// Logged model ids and the profile each maps to.
    pub models: BTreeMap<String, String>,
}

/// Totals over every session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportTotals {
    pub sessions: usize,
    pub requests: usize,
    pub tool_calls: usize,
    pub billed_input_tokens: u64,
    pub modeled_input_tokens: u64,
    pub eager: ModeTotals,
    pub deferred: ModeTotals,
}

/// What `session import` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportSummary {
    pub sessions: Vec<SessionSummary>,
    pub totals: ImportTotals,
    /// Per-request error of the calibrated model over every paired request.
    pub error: ErrorStats,
    /// The same before calibration (system prompt 0, scale 1): what the fit corrected.
    pub error_uncalibrated: ErrorStats,
    /// The counters the sessions were counted with (each session's is in its entry), in
    /// name order, joined by ", ".
    pub counter: String,
    pub calibrations: Vec<Calibration>,
    pub unknown_tools: BTreeMap<String, usize>,
    pub notes: Vec<String>,
}

/// The bill of one session, written beside its scenario: `report --sessions` pairs it with
/// the replay again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageFile {
    pub session: String,
    pub format: String,
    pub ran_as: RanAs,
    pub scenario: String,
    pub billed: Vec<BilledRequest>,
}

/// Everything an import produces.
pub struct ImportResult {
    pub summary: ImportSummary,
    /// (file name inside the output folder, contents).
    pub files: Vec<(String, String)>,
}

/// A session converted and loaded back through the scenario loader.
struct Loaded {
    converted: Converted,
    scenario: Option<Scenario>,
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
    cal.for_scenario(scenario, counter_of(scenario).name())
}

/// Replays a scenario, its catalogs counted with its counter, with a calibration, or raw
/// (system prompt 0, scale 1) without one.
pub fn replay(
    scenario: &Scenario,
    ctx: &CatalogContext,
    cal: Option<&Calibration>,
) -> Result<ScenarioResult> {
    let mut prepared = simulate::prepare_shared(
        scenario,
        ctx.catalog.clone(),
        ctx.tokens(counter_of(scenario))?.clone(),
        None,
        &simulate::build_scorer,
    )?;
    match cal {
        Some(c) => c.apply(&mut prepared),
        None => {
            prepared.system_tokens = 0;
            prepared.subagent_system_tokens = None;
            prepared.scale = 1.0;
        }
    }
    simulate::run(scenario, &prepared)
}

/// The mode name of the rows a session's bill is compared with.
pub fn mode_name(r: RanAs) -> &'static str {
    match r {
        RanAs::Eager => "eager",
        RanAs::Deferred => "deferred",
    }
}

/// Scenario names from session ids: safe file names, unique in order.
fn unique_names(sessions: &[Session]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    sessions
        .iter()
        .map(|s| {
            let base: String =
                s.id.chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                            c
                        } else {
                            '-'
                        }
                    })
                    .collect();
            let base = if base.trim_matches('.').is_empty() {
                "session".to_string()
            } else {
                base
            };
            let mut name = base.clone();
            let mut k = 2;
            while !seen.insert(name.clone()) {
                name = format!("{base}-{k}");
                k += 1;
            }
            name
        })
        .collect()
}

/// Fails on tools absent from the catalogs unless they may be left out.
fn check_unknown(converted: &[Converted], allow: bool) -> Result<BTreeMap<String, usize>> {
    let mut all: BTreeMap<String, usize> = BTreeMap::new();
    for c in converted {
        for (k, v) in &c.unknown.calls {
            *all.entry(k.clone()).or_insert(0) += v;
        }
    }
    if !all.is_empty() && !allow {
        let list: Vec<String> = all
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k} ({v} {})",
                    crate::output::noun(*v as u64, "call", "calls")
                )
            })
            .collect();
        return Err(Error::usage(format!(
            "{} tools named in the sessions are in no catalog: {}; add their catalogs with --catalog, or --allow-unknown-tools to leave them out",
            all.len(),
            list.join(", ")
        )));
    }
    Ok(all)
}

/// Serializes a scenario (YAML) and reads it back through the scenario loader.
fn load(c: &Converted, dir: &Path) -> Result<Option<Scenario>> {
    if c.scenario.conversation.is_empty() {
        return Ok(None);
    }
    let yaml = to_yaml(&c.scenario)?;
    let path = dir.join(format!("{}.yaml", c.scenario.name));
    let doc = Document::parse(&path, yaml.into_bytes())?;
    Ok(Some(simulate::scenario::parse(&doc)?))
}

pub fn to_yaml<T: Serialize>(v: &T) -> Result<String> {
    serde_saphyr::to_string(v).map_err(|e| Error::usage(format!("cannot write YAML: {e}")))
}

/// Imports the sessions of `logs`. `dir` is where scenarios are written (catalog paths in
/// `ctx.refs` are relative to it); `written` says whether they will be.
pub fn import(
    logs: Vec<FileLog>,
    ctx: &CatalogContext,
    opts: &ImportOptions,
    dir: &Path,
    written: bool,
) -> Result<ImportResult> {
    let sessions = group(logs);
    let names = unique_names(&sessions);
    let converted: Vec<Converted> = sessions
        .par_iter()
        .zip(names)
        .map(|(s, name)| {
            convert(
                s,
                &ConvertInput {
                    catalog: &ctx.catalog,
                    catalogs: ctx.refs.clone(),
                    name,
                    keep_text: opts.keep_text,
                },
            )
        })
        .collect();
    let unknown = check_unknown(&converted, opts.allow_unknown_tools)?;
    let loaded: Vec<Loaded> = converted
        .into_par_iter()
        .map(|c| {
            let scenario = load(&c, dir)?;
            Ok(Loaded {
                converted: c,
                scenario,
            })
        })
        .collect::<Result<_>>()?;
    let raw = raw_pairs(&loaded, ctx)?;
    let calibrations = fit_all(&loaded, &raw);
    let cal_file = CalibrationFile { calibrations };
    let mut notes = counter_notes(&loaded);
    let rows = calibrated(&sessions, &loaded, ctx, &cal_file, dir, written)?;
    let summary = summarize(
        rows,
        &raw,
        cal_file.calibrations.clone(),
        unknown,
        &mut notes,
    );
    let mut files = Vec::new();
    for (l, s) in loaded.iter().zip(&sessions) {
        if l.scenario.is_some() {
            files.extend(session_files(l, s, &cal_file)?);
        }
    }
    files.push((
        "calibration.json".to_string(),
        crate::output::to_json(&cal_file),
    ));
    Ok(ImportResult { summary, files })
}

/// Each session replayed raw, its bill paired with the replay.
fn raw_pairs(loaded: &[Loaded], ctx: &CatalogContext) -> Result<Vec<Alignment>> {
    loaded
        .par_iter()
        .map(|l| match &l.scenario {
            Some(s) => {
                let r = replay(s, ctx, None)?;
                Ok(align(
                    &l.converted.billed,
                    &r.requests,
                    mode_name(l.converted.ran_as),
                ))
            }
            None => Ok(Alignment {
                pairs: Vec::new(),
                unaligned: l.converted.billed.len(),
            }),
        })
        .collect()
}

/// One calibration per model profile and counter, from the raw pairs of its sessions.
fn fit_all(loaded: &[Loaded], raw: &[Alignment]) -> Vec<Calibration> {
    let mut by_model: BTreeMap<(String, &str), (Vec<Pair>, usize)> = BTreeMap::new();
    for (l, a) in loaded.iter().zip(raw) {
        let Some(s) = &l.scenario else { continue };
        let e = by_model
            .entry((s.profile.name.clone(), counter_of(s).name()))
            .or_insert_with(|| (Vec::new(), s.profile.tool_overhead_tokens));
        e.0.extend(a.pairs.iter().copied());
    }
    by_model
        .iter()
        .filter_map(|((m, counter), (pairs, preamble))| {
            // The fixed cost of tools the counter adds (anthropic-estimate's fitted block)
            // is in every request beside the preamble: the system prompt is what is left.
            let overhead = pairs
                .iter()
                .filter(|p| p.agent == 0)
                .map(|p| p.overhead)
                .max()
                .unwrap_or(*preamble);
            calibrate(m, counter, pairs, overhead)
        })
        .collect()
}

/// Sessions whose profile's counter needs the network, counted with its estimate instead.
fn counter_notes(loaded: &[Loaded]) -> Vec<String> {
    let mut seen = BTreeMap::new();
    for l in loaded {
        let c = &l.converted;
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
                "{n} {} on {model}, whose counter {own} {why}: sizes counted with {used}",
                crate::output::noun(n as u64, "session", "sessions")
            )
        })
        .collect()
}

/// A session's summary entry and its calibrated pairs.
struct Row {
    summary: SessionSummary,
    pairs: Vec<Pair>,
}

fn pct(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        crate::simulate::result::round(part as f64 / whole as f64 * 100.0, 2)
    }
}

/// Each session replayed with its model's calibration and compared with its bill again.
fn calibrated(
    sessions: &[Session],
    loaded: &[Loaded],
    ctx: &CatalogContext,
    cal: &CalibrationFile,
    dir: &Path,
    written: bool,
) -> Result<Vec<Row>> {
    sessions
        .par_iter()
        .zip(loaded)
        .map(|(s, l)| {
            let c = &l.converted;
            let (result, alignment) = match &l.scenario {
                Some(sc) => {
                    let r = replay(sc, ctx, calibration_for(cal, sc))?;
                    let a = align(&c.billed, &r.requests, mode_name(c.ran_as));
                    (Some(r), a)
                }
                None => (
                    None,
                    Alignment {
                        pairs: Vec::new(),
                        unaligned: c.billed.len(),
                    },
                ),
            };
            let summary = session_summary(s, l, result.as_ref(), &alignment, dir, written);
            Ok(Row {
                summary,
                pairs: alignment.pairs,
            })
        })
        .collect()
}

fn session_summary(
    s: &Session,
    l: &Loaded,
    result: Option<&ScenarioResult>,
    alignment: &Alignment,
    dir: &Path,
    written: bool,
) -> SessionSummary {
    let c = &l.converted;
    let ran = result.map(|r| match c.ran_as {
        RanAs::Eager => &r.eager,
        RanAs::Deferred => &r.deferred,
    });
    let pairs: Vec<(u64, u64)> = alignment
        .pairs
        .iter()
        .map(|p| (p.billed, p.modeled as u64))
        .collect();
    SessionSummary {
        file: s.file.display().to_string(),
        scenario: (written && l.scenario.is_some()).then(|| {
            dir.join(format!("{}.yaml", c.scenario.name))
                .display()
                .to_string()
        }),
        requests: c.billed.len(),
        tool_calls: c.tool_calls,
        billed_input_tokens: c.billed.iter().map(|b| b.usage.prompt()).sum(),
        modeled_input_tokens: ran.map_or(0, |m| m.total_input_tokens as u64),
        counter: c.counter.name(),
        format: s.format.name(),
        ran_as: c.ran_as,
        model: c.scenario.model.clone(),
        billed_output_tokens: c.billed.iter().map(|b| b.usage.output).sum(),
        error: error_stats(&pairs),
        unpaired_requests: alignment.unaligned,
        turns: ran.map_or(0, |m| m.counts.turns),
        files: s.files.len(),
        subagents: s.agents.len(),
        unlinked_subagents: c.unlinked_agents,
        eager: result.map_or_else(ModeTotals::default, |r| ModeTotals::of(&r.eager).rounded()),
        deferred: result.map_or_else(ModeTotals::default, |r| {
            ModeTotals::of(&r.deferred).rounded()
        }),
        unknown_tools: c.unknown.calls.clone(),
        unknown_calls_pct: pct(c.unknown.left_out_calls, c.tool_calls),
        unknown_tokens_pct: pct(c.unknown.left_out_tokens, c.unknown.all_call_tokens),
        lines: s.stats.lines,
        bad_lines: s.stats.bad_lines,
        truncated_last_line: s.stats.truncated_last_line,
        ignored_records: s.stats.ignored.clone(),
        models: c.models.clone(),
    }
}

fn summarize(
    rows: Vec<Row>,
    raw: &[Alignment],
    calibrations: Vec<Calibration>,
    unknown: BTreeMap<String, usize>,
    notes: &mut Vec<String>,
) -> ImportSummary {
    let mut totals = ImportTotals {
        sessions: rows.len(),
        requests: 0,
        tool_calls: 0,
        billed_input_tokens: 0,
        modeled_input_tokens: 0,
        eager: ModeTotals::default(),
        deferred: ModeTotals::default(),
    };
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    let mut sessions = Vec::with_capacity(rows.len());
    let mut counters = BTreeSet::new();
    for row in rows {
        let s = &row.summary;
        counters.insert(s.counter);
        totals.requests += s.requests;
        totals.tool_calls += s.tool_calls;
        totals.billed_input_tokens += s.billed_input_tokens;
        totals.modeled_input_tokens += s.modeled_input_tokens;
        totals.eager.add(&s.eager);
        totals.deferred.add(&s.deferred);
        pairs.extend(row.pairs.iter().map(|p| (p.billed, p.modeled as u64)));
        if s.truncated_last_line {
            notes.push(format!(
                "{}: last line truncated (still being written?), skipped",
                s.file
            ));
        }
        sessions.push(row.summary);
    }
    totals.eager = totals.eager.rounded();
    totals.deferred = totals.deferred.rounded();
    let raw_pairs: Vec<(u64, u64)> = raw
        .iter()
        .flat_map(|a| a.pairs.iter().map(|p| (p.billed, p.modeled as u64)))
        .collect();
    ImportSummary {
        sessions,
        totals,
        error: error_stats(&pairs),
        error_uncalibrated: error_stats(&raw_pairs),
        counter: counters.into_iter().collect::<Vec<_>>().join(", "),
        calibrations,
        unknown_tools: unknown,
        notes: std::mem::take(notes),
    }
}

/// The scenario (with the fitted system prompt) and the bill of one session.
fn session_files(l: &Loaded, s: &Session, cal: &CalibrationFile) -> Result<Vec<(String, String)>> {
    let c = &l.converted;
    let mut scenario = c.scenario.clone();
    if let Some(sc) = &l.scenario
        && let Some(k) = calibration_for(cal, sc)
    {
        scenario.system_prompt_tokens = Some(k.system_prompt_tokens.round().max(0.0) as usize);
    }
    let name = scenario.name.clone();
    let usage = UsageFile {
        session: s.file.display().to_string(),
        format: s.format.name().to_string(),
        ran_as: c.ran_as,
        scenario: format!("{name}.yaml"),
        billed: c.billed.clone(),
    };
    Ok(vec![
        (format!("{name}.yaml"), to_yaml(&scenario)?),
        (format!("{name}.usage.json"), crate::output::to_json(&usage)),
    ])
}
