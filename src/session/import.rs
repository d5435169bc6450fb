//! The import as library calls: files → a first pass over each (`read::index`) → sessions
//! planned (`group::plan`, `group::copies`) and filtered → each session read, converted to a
//! scenario (through the real scenario loader) and replayed on its own, its transcripts
//! dropped before the next is read (memory bounded by the sessions in flight, not the folder)
//! → billed vs modeled → calibration → summary and the files to write. The command layer
//! finds the files and writes what this returns.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::compare::{Alignment, Pair, align, calibrate};
use super::convert::{
    BilledRequest, CatalogOut, ConvertInput, Converted, RanAs, ScenarioFile, convert,
};
use super::fit::{ErrorStats, error_stats};
use super::group::{Planned, Session, assemble, copies, plan};
use super::queries::{Mined, MinedQuery, mine, to_jsonl};
use super::read::index::{FileIndex, index_file};
use super::read::{Copies, LogFormat, ReadOptions, ReadStats, read_file};
use super::{discover, profile_for_model};
use crate::catalog::{Catalog, CatalogSource, Tool, load_catalogs};
use crate::counter::CounterKind;
use crate::document::Document;
use crate::error::{Error, Result};
use crate::number::{percent_of, plural};

use crate::counter::ToolTokens;
use crate::simulate::calibration::{Calibration, CalibrationFile};
use crate::simulate::cost::{cost_cached, cost_uncached};
use crate::simulate::profile::{self, Profile};
use crate::simulate::{self, ModeResult, RequestRow, Scenario, ScenarioResult};

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

    /// This context with a session's own tools added (Codex `dynamic_tools`), the catalog
    /// file that holds them named last. A tool whose id the catalogs already have keeps the
    /// catalogs' definition.
    pub fn with_tools(&self, tools: &[Tool], file: CatalogOut) -> Result<CatalogContext> {
        let mut all = self.catalog.tools().to_vec();
        all.extend(
            tools
                .iter()
                .filter(|t| self.catalog.index_of(&t.id).is_none())
                .cloned(),
        );
        let catalog = Catalog::from_tools(all).map_err(Error::usage)?;
        let mut refs = self.refs.clone();
        refs.push(file);
        Ok(CatalogContext::new(catalog, refs))
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

/// The catalogs each format's sessions are looked up in: the catalogs given, plus the agent's
/// shipped built-ins (Claude Code's for Claude sessions, Codex's for Codex rollouts).
pub struct Catalogs {
    pub claude: Arc<CatalogContext>,
    pub codex: Arc<CatalogContext>,
    /// What was added or left out, for the command to print.
    pub notes: Vec<String>,
}

impl Catalogs {
    pub fn for_format(&self, f: LogFormat) -> &Arc<CatalogContext> {
        match f {
            LogFormat::ClaudeCode => &self.claude,
            LogFormat::Codex => &self.codex,
        }
    }

    /// The same catalogs for both formats (what the caller gave, nothing added).
    pub fn only(ctx: CatalogContext) -> Catalogs {
        let ctx = Arc::new(ctx);
        Catalogs {
            claude: ctx.clone(),
            codex: ctx,
            notes: Vec::new(),
        }
    }
}

/// The given catalogs and, per format, its built-in catalog when one is shipped: added unless
/// it is one of the given files, or a tool it defines is already defined by them (then the
/// given catalogs are the agent's built-ins, and a note says so).
pub fn catalogs_for(
    given: &[CatalogSource],
    builtins: [(LogFormat, Option<PathBuf>); 2],
    dir: &Path,
) -> Result<Catalogs> {
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    };
    let given_catalog = if given.is_empty() {
        None
    } else {
        Some(load_catalogs(given)?)
    };
    let mut notes = Vec::new();
    let mut build = |format: LogFormat, builtin: &Option<PathBuf>| -> Result<CatalogContext> {
        let mut sources = given.to_vec();
        if let Some(b) = builtin
            && !given.iter().any(|g| same(&g.path, b))
        {
            let extra = load_catalogs(&[CatalogSource {
                path: b.clone(),
                server: None,
            }])?;
            let clash = given_catalog.as_ref().and_then(|g| {
                extra
                    .tools()
                    .iter()
                    .find(|t| g.index_of(&t.id).is_some())
                    .map(|t| t.id.clone())
            });
            match clash {
                Some(id) => notes.push(format!(
                    "{} sessions: the catalogs given define {id}, so the shipped built-ins {} are not added",
                    format.name(),
                    b.display()
                )),
                None => sources.push(CatalogSource {
                    path: b.clone(),
                    server: None,
                }),
            }
        }
        if sources.is_empty() {
            // No catalog for this format: its sessions' tools are all unknown (and listed).
            return Ok(CatalogContext::new(Catalog::default(), Vec::new()));
        }
        catalogs(&sources, dir)
    };
    let [(f1, b1), (f2, b2)] = builtins;
    let a = build(f1, &b1)?;
    let b = build(f2, &b2)?;
    let (claude, codex) = if f1 == LogFormat::ClaudeCode {
        (a, b)
    } else {
        (b, a)
    };
    Ok(Catalogs {
        claude: Arc::new(claude),
        codex: Arc::new(codex),
        notes,
    })
}

/// Runs `f` on a pool of at most [`MAX_READ_THREADS`] threads: each reading thread counts with
/// a tokenizer of its own (about 45 MB for o200k), so memory stays bounded on many cores.
fn in_read_pool<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let threads = rayon::current_num_threads().min(MAX_READ_THREADS);
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

/// Most threads reading session files at once (see [`in_read_pool`]).
pub const MAX_READ_THREADS: usize = 8;

/// The first pass over every file (in parallel); `tick` gets each file's bytes. The first
/// error in file order wins, so the same input always gives the same message.
pub fn index_all(files: &[PathBuf], tick: &(dyn Fn(u64) + Sync)) -> Result<Vec<FileIndex>> {
    let out: Vec<Result<FileIndex>> = in_read_pool(|| {
        files
            .par_iter()
            .map(|f| {
                let r = index_file(f);
                if let Ok(ix) = &r {
                    tick(ix.bytes);
                }
                r
            })
            .collect()
    });
    out.into_iter().collect()
}

/// Which sessions to import: dates (UTC, `YYYY-MM-DD`, both ends included) and project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub since: Option<String>,
    pub until: Option<String>,
    pub project: Option<String>,
}

impl Filter {
    /// Whether a session (by its main file) is kept: its first-to-last timestamps overlap the
    /// dates, and its project matches (see [`project_matches`]). A session without timestamps
    /// is kept only when no date is asked for.
    pub fn keeps(&self, f: &FileIndex) -> bool {
        if self.since.is_some() || self.until.is_some() {
            let Some((first, last)) = f.dates() else {
                return false;
            };
            if self.since.as_deref().is_some_and(|s| last < s)
                || self.until.as_deref().is_some_and(|u| first > u)
            {
                return false;
            }
        }
        self.project
            .as_deref()
            .is_none_or(|p| project_matches(f, p))
    }
}

/// A session's project is its working directory (`cwd` of its records) and, for Claude Code,
/// the folder of its file under `projects/` (the directory with `/` made `-`): `name` matches
/// the directory, its last component, or that folder's name.
pub fn project_matches(f: &FileIndex, name: &str) -> bool {
    let cwd = f.cwd.as_deref().map(|c| c.trim_end_matches(['/', '\\']));
    cwd.is_some_and(|c| c == name || c.rsplit(['/', '\\']).next() == Some(name))
        || f.path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d == name)
}

/// An import planned: every file's first pass, the sessions kept, and each file's copies.
pub struct Plan {
    pub files: Vec<FileIndex>,
    pub sessions: Vec<Planned>,
    pub copies: Vec<Copies>,
    /// Sessions the filter left out.
    pub filtered_out: usize,
}

impl Plan {
    /// Plans the import of indexed files (sorted by path).
    pub fn new(files: Vec<FileIndex>, filter: &Filter) -> Plan {
        let copies = copies(&files);
        let all = plan(&files);
        let before = all.len();
        let sessions: Vec<Planned> = all
            .into_iter()
            .filter(|p| filter.keeps(&files[p.main]))
            .collect();
        Plan {
            filtered_out: before - sessions.len(),
            files,
            sessions,
            copies,
        }
    }

    /// Bytes of the files of the sessions kept (what the import will read).
    pub fn bytes(&self) -> u64 {
        self.sessions
            .iter()
            .flat_map(Planned::files)
            .map(|i| self.files[i].bytes)
            .sum()
    }
}

/// Every step for files and folders given: discover, index, plan (no filter), import.
pub fn import_paths(
    paths: &[PathBuf],
    cats: &Catalogs,
    opts: &ImportOptions,
    dir: &Path,
    written: bool,
) -> Result<ImportResult> {
    let files = discover(paths)?;
    let index = index_all(&files, &|_| {})?;
    let plan = Plan::new(index, &Filter::default());
    import(&plan, cats, opts, dir, written, &|_| {})
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

/// What the provider charged for one billed request, at its own model's list prices (the
/// profile its logged model maps to).
pub fn billed_cost(b: &BilledRequest, format: LogFormat, main: &str) -> f64 {
    let name = b
        .model
        .as_deref()
        .map_or(main, |m| profile_for_model(m, format));
    let Some(p) = profile::find(name).or_else(|| profile::find(main)) else {
        return 0.0;
    };
    let u = &b.usage;
    (u.input as f64 * p.input_per_mtok
        + u.cache_creation as f64 * p.cache_write_per_mtok
        + u.cache_read as f64 * p.cache_read_per_mtok
        + u.output as f64 * p.output_per_mtok)
        / 1e6
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
    pub ran_as: RanAs,
    pub model: String,
    pub billed_output_tokens: u64,
    /// The bill at list prices, each request at its own model's profile.
    pub billed_cost_usd: f64,
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
    /// Requests an earlier file of another session wrote (resumed or forked history): context
    /// here, billed there.
    pub copied_requests: usize,
    /// The system prompt the log records, in the counter's tokens (Codex), else absent.
    pub logged_system_prompt_tokens: Option<usize>,
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
    /// Each linked subagent's profile (by the simulator's number), for pricing it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agent_profiles: BTreeMap<usize, String>,
}

/// Everything an import produces.
pub struct ImportResult {
    pub summary: ImportSummary,
    /// (file name inside the output folder, contents).
    pub files: Vec<(String, String)>,
    /// The model's search queries, labeled, in session order (`--queries-out`).
    pub queries: Vec<MinedQuery>,
}

/// The mined queries' file in an import folder (read back by `report --sessions`).
pub const QUERIES_FILE: &str = "queries.jsonl";

/// What a session's summary needs of its files once the transcripts are dropped.
struct Facts {
    file: PathBuf,
    format: LogFormat,
    files: usize,
    subagents: usize,
    stats: ReadStats,
}

/// A session read, converted, loaded back through the scenario loader and replayed raw.
struct Processed {
    facts: Facts,
    converted: Converted,
    /// `NAME.yaml`, or `NAME.json` for a scenario too large for the YAML reader.
    scenario_file: String,
    scenario: Option<Scenario>,
    raw: Alignment,
    ctx: Arc<CatalogContext>,
    /// Files of its own to write (its dynamic tools' catalog).
    own_files: Vec<(String, String)>,
    /// Its search queries, labeled (`session::queries`).
    mined: Mined,
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
/// without one: scale 1, and the system prompt the scenario records (a logged one) or 0.
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
    if let Some(c) = cal {
        c.apply(&mut prepared);
    } else {
        if scenario.system_prompt_tokens.is_none() {
            prepared.system_tokens = 0;
        }
        prepared.subagent_system_tokens = None;
        prepared.scale = 1.0;
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
fn unique_names(sessions: &[Planned]) -> Vec<String> {
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
fn check_unknown<'a>(
    converted: impl Iterator<Item = &'a Converted>,
    allow: bool,
) -> Result<BTreeMap<String, usize>> {
    let mut all: BTreeMap<String, usize> = BTreeMap::new();
    for c in converted {
        for (k, v) in &c.unknown.calls {
            *all.entry(k.clone()).or_insert(0) += v;
        }
    }
    if !all.is_empty() && !allow {
        let list: Vec<String> = all
            .iter()
            .map(|(k, v)| format!("{k} ({})", plural(*v, "call", "calls")))
            .collect();
        return Err(Error::usage(format!(
            "{} tools named in the sessions are in no catalog: {}; add their catalogs with --catalog, or --allow-unknown-tools to leave them out",
            all.len(),
            list.join(", ")
        )));
    }
    Ok(all)
}

/// Nodes a value is as YAML (sequences, mappings and scalars, keys included): what the YAML
/// reader's node budget counts.
fn yaml_nodes(v: &serde_json::Value) -> usize {
    use serde_json::Value as V;
    match v {
        V::Array(a) => 1 + a.iter().map(yaml_nodes).sum::<usize>(),
        V::Object(m) => 1 + m.values().map(|v| 1 + yaml_nodes(v)).sum::<usize>(),
        _ => 1,
    }
}

/// The file a session's scenario is written as: `NAME.yaml`, or `NAME.json` when it is more
/// than the YAML reader takes ([`YAML_SCENARIO_NODES`] nodes; JSON has no such budget).
fn scenario_file_name(s: &ScenarioFile) -> Result<String> {
    let value = serde_json::to_value(s)
        .map_err(|e| Error::usage(format!("cannot write the scenario {}: {e}", s.name)))?;
    Ok(if yaml_nodes(&value) > YAML_SCENARIO_NODES {
        format!("{}.json", s.name)
    } else {
        format!("{}.yaml", s.name)
    })
}

/// Most YAML nodes an imported scenario is written with (the YAML reader refuses more than
/// 250,000; the rest of the budget is the margin).
pub const YAML_SCENARIO_NODES: usize = 200_000;

/// A scenario's text in the syntax its file name says.
fn scenario_text(s: &ScenarioFile, file: &str) -> Result<String> {
    if file.ends_with(".json") {
        Ok(crate::output::to_json(s))
    } else {
        to_yaml(s)
    }
}

/// Checks that the scenario loader will take a session's scenario before any of it is
/// written (its limits on turns, requests and file size), then reads it back through the
/// loader. Every refusal names the session's log (the scenario file does not exist).
fn load(c: &Converted, session: &Path, file: &str, dir: &Path) -> Result<Option<Scenario>> {
    use crate::budget::{MAX_REQUESTS, MAX_TURNS};
    if c.scenario.conversation.is_empty() {
        return Ok(None);
    }
    let refuse = |why: String| {
        Error::input(
            session,
            None,
            format!("this session cannot be imported: its scenario ({file}, not written) {why}"),
        )
    };
    let (turns, work) = c.scenario.work();
    if turns > MAX_TURNS {
        return Err(refuse(format!(
            "has {turns} turns in one conversation, more than the {MAX_TURNS} a scenario may hold"
        )));
    }
    if work > MAX_REQUESTS {
        return Err(refuse(format!(
            "sends at least {work} requests (turns and calls, subagents included), more than \
             the {MAX_REQUESTS} a run may send"
        )));
    }
    let text = scenario_text(&c.scenario, file)?;
    let limit = crate::document::MAX_FILE_BYTES;
    if text.len() as u64 > limit {
        return Err(refuse(format!(
            "is {} bytes, more than the {limit} bytes a scenario file may be",
            text.len()
        )));
    }
    let doc = Document::parse(&dir.join(file), text.into_bytes())
        .map_err(|e| refuse(format!("is refused by the scenario reader: {e}")))?;
    simulate::scenario::parse(&doc)
        .map(Some)
        .map_err(|e| refuse(format!("is refused by the scenario reader: {e}")))
}

pub fn to_yaml<T: Serialize>(v: &T) -> Result<String> {
    serde_saphyr::to_string(v).map_err(|e| Error::usage(format!("cannot write YAML: {e}")))
}

/// Reads, converts, loads and replays one planned session; `tick` gets each file's bytes.
#[allow(clippy::too_many_arguments)]
fn process(
    p: &Planned,
    name: String,
    plan: &Plan,
    cats: &Catalogs,
    opts: ImportOptions,
    dir: &Path,
    tick: &(dyn Fn(u64) + Sync),
) -> Result<Processed> {
    let read = ReadOptions {
        keep_text: opts.keep_text,
        skip_bad_lines: opts.skip_bad_lines,
    };
    let mut logs = Vec::new();
    for i in p.files() {
        let f = &plan.files[i];
        logs.push(read_file(&f.path, read, &plan.copies[i])?);
        tick(f.bytes);
    }
    let session = assemble(p, logs);
    let base = cats.for_format(session.format);
    if base.refs.is_empty() {
        return Err(Error::usage(format!(
            "no catalog for {} sessions ({}): give the tools they may call with --catalog",
            session.format.name(),
            session.file.display()
        )));
    }
    let (ctx, own_files) = if session.dynamic_tools.is_empty() {
        (base.clone(), Vec::new())
    } else {
        let file = format!("{name}.tools.json");
        let own = Catalog::from_tools(session.dynamic_tools.clone()).map_err(|e| {
            Error::input(
                &session.file,
                None,
                format!("session_meta.dynamic_tools: {e}"),
            )
        })?;
        let ctx = base.with_tools(
            &session.dynamic_tools,
            CatalogOut {
                path: file.clone(),
                server: None,
            },
        )?;
        (
            Arc::new(ctx),
            vec![(file, crate::catalog::to_native_json(&own))],
        )
    };
    let mined = mine(&session, &name, &ctx.catalog);
    let converted = convert(
        &session,
        &ConvertInput {
            catalog: &ctx.catalog,
            catalogs: ctx.refs.clone(),
            name,
            keep_text: opts.keep_text,
        },
    );
    let scenario_file = scenario_file_name(&converted.scenario)?;
    let scenario = load(&converted, &session.file, &scenario_file, dir)?;
    let raw = match &scenario {
        Some(s) => {
            let r = replay(s, &ctx, None)?;
            align(&converted.billed, &r.requests, mode_name(converted.ran_as))
        }
        None => Alignment {
            pairs: Vec::new(),
            unaligned: converted.billed.iter().filter(|b| !b.warmup).count(),
        },
    };
    Ok(Processed {
        facts: facts(&session),
        converted,
        scenario_file,
        scenario,
        raw,
        ctx,
        own_files,
        mined,
    })
}

fn facts(s: &Session) -> Facts {
    Facts {
        file: s.file.clone(),
        format: s.format,
        files: s.files.len(),
        subagents: s.agents.len(),
        stats: s.stats.clone(),
    }
}

/// Imports the planned sessions. `dir` is where scenarios are written (catalog paths in the
/// contexts' refs are relative to it); `written` says whether they will be. Sessions are read
/// in parallel, each on its own (see the module notes); `tick` gets each file's bytes as it
/// is read. The first error in session order wins.
pub fn import(
    plan: &Plan,
    cats: &Catalogs,
    opts: &ImportOptions,
    dir: &Path,
    written: bool,
    tick: &(dyn Fn(u64) + Sync),
) -> Result<ImportResult> {
    let names = unique_names(&plan.sessions);
    let processed: Vec<Result<Processed>> = in_read_pool(|| {
        plan.sessions
            .par_iter()
            .zip(names)
            .map(|(p, name)| process(p, name, plan, cats, *opts, dir, tick))
            .collect()
    });
    let processed: Vec<Processed> = processed.into_iter().collect::<Result<_>>()?;
    let unknown = check_unknown(
        processed.iter().map(|p| &p.converted),
        opts.allow_unknown_tools,
    )?;
    let calibrations = fit_all(&processed);
    let cal_file = CalibrationFile { calibrations };
    let mut notes = cats.notes.clone();
    notes.extend(counter_notes(&processed));
    let rows = calibrated(&processed, &cal_file, dir, written)?;
    let summary = summarize(
        rows,
        &processed,
        cal_file.calibrations.clone(),
        unknown,
        plan.filtered_out,
        &mut notes,
    );
    let mut files = Vec::new();
    for p in &processed {
        if p.scenario.is_some() {
            files.extend(session_files(p, &cal_file)?);
            files.extend(p.own_files.iter().cloned());
        }
    }
    files.push((
        "calibration.json".to_string(),
        crate::output::to_json(&cal_file),
    ));
    let queries: Vec<MinedQuery> = processed
        .iter()
        .flat_map(|p| p.mined.queries.iter().cloned())
        .collect();
    if !queries.is_empty() {
        files.push((QUERIES_FILE.to_string(), to_jsonl(&queries)));
    }
    Ok(ImportResult {
        summary,
        files,
        queries,
    })
}

/// One calibration per model profile and counter, from the raw pairs of its sessions.
fn fit_all(processed: &[Processed]) -> Vec<Calibration> {
    let mut by_model: BTreeMap<(String, &str), (Vec<Pair>, usize)> = BTreeMap::new();
    for p in processed {
        let Some(s) = &p.scenario else { continue };
        let e = by_model
            .entry((s.profile.name.clone(), counter_of(s).name()))
            .or_insert_with(|| (Vec::new(), s.profile.tool_overhead_tokens));
        e.0.extend(p.raw.pairs.iter().copied());
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

/// A session's summary entry and its calibrated pairs.
struct Row {
    summary: SessionSummary,
    pairs: Vec<Pair>,
}

/// Each session replayed with its model's calibration and compared with its bill again.
fn calibrated(
    processed: &[Processed],
    cal: &CalibrationFile,
    dir: &Path,
    written: bool,
) -> Result<Vec<Row>> {
    processed
        .par_iter()
        .map(|p| {
            let c = &p.converted;
            let (result, alignment) = match &p.scenario {
                Some(sc) => {
                    let r = replay(sc, &p.ctx, calibration_for(cal, sc))?;
                    let a = align(&c.billed, &r.requests, mode_name(c.ran_as));
                    (Some(r), a)
                }
                None => (
                    None,
                    Alignment {
                        pairs: Vec::new(),
                        unaligned: c.billed.iter().filter(|b| !b.warmup).count(),
                    },
                ),
            };
            let summary = session_summary(p, result.as_ref(), &alignment, dir, written);
            Ok(Row {
                summary,
                pairs: alignment.pairs,
            })
        })
        .collect()
}

fn session_summary(
    p: &Processed,
    result: Option<&ScenarioResult>,
    alignment: &Alignment,
    dir: &Path,
    written: bool,
) -> SessionSummary {
    let c = &p.converted;
    let f = &p.facts;
    let ran = result.map(|r| match c.ran_as {
        RanAs::Eager => &r.eager,
        RanAs::Deferred => &r.deferred,
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
        scenario: (written && p.scenario.is_some())
            .then(|| dir.join(&p.scenario_file).display().to_string()),
        requests: c.billed.len(),
        tool_calls: c.tool_calls,
        billed_input_tokens: c.billed.iter().map(|b| b.usage.prompt()).sum(),
        modeled_input_tokens: ran.map_or(0, |m| m.total_input_tokens as u64),
        counter: c.counter.name(),
        format: f.format.name(),
        ran_as: c.ran_as,
        model: c.scenario.model.clone(),
        billed_output_tokens: c.billed.iter().map(|b| b.usage.output).sum(),
        billed_cost_usd: crate::number::round(
            c.billed
                .iter()
                .map(|b| billed_cost(b, f.format, main))
                .sum(),
            6,
        ),
        error: error_stats(&pairs),
        unpaired_requests: alignment.unaligned,
        turns: ran.map_or(0, |m| m.counts.turns),
        files: f.files,
        subagents: f.subagents,
        unlinked_subagents: c.unlinked_agents,
        warmup_agents: c.warmup_agents,
        copied_requests: f.stats.copied_requests,
        logged_system_prompt_tokens: c.scenario.system_prompt_tokens,
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
        totals.billed_cost_usd += s.billed_cost_usd;
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
        notes: std::mem::take(notes),
    }
}

/// The scenario (with the fitted system prompt when a calibration applies) and the bill of
/// one session.
fn session_files(p: &Processed, cal: &CalibrationFile) -> Result<Vec<(String, String)>> {
    let c = &p.converted;
    let mut scenario = c.scenario.clone();
    if let Some(sc) = &p.scenario
        && let Some(k) = calibration_for(cal, sc)
    {
        scenario.system_prompt_tokens = Some(k.system_prompt_tokens.round().max(0.0) as usize);
    }
    let name = scenario.name.clone();
    let usage = UsageFile {
        session: p.facts.file.display().to_string(),
        format: p.facts.format.name().to_string(),
        ran_as: c.ran_as,
        scenario: p.scenario_file.clone(),
        billed: c.billed.clone(),
        agent_profiles: c.agent_profiles.clone(),
    };
    Ok(vec![
        (
            p.scenario_file.clone(),
            scenario_text(&scenario, &p.scenario_file)?,
        ),
        (format!("{name}.usage.json"), crate::output::to_json(&usage)),
    ])
}
