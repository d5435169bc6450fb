//! Session import, the reading half: files → a first pass over each (`read::index`) →
//! sessions planned (`group::plan`, `group::copies`) and filtered → each session read and
//! converted to a scenario (through the real scenario loader), its transcripts dropped. The
//! replay half (billed vs modeled, calibration, summary) is `experiment::session_import`.

use crate::progress::{FileCounter, Progress};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use serde::Serialize;

use super::convert::{CatalogOut, ConvertInput, Converted, ItemOut, ScenarioFile, convert};
use super::group::{Planned, Session, assemble, copies, plan};
use super::queries::{Mined, mine};
use super::read::index::{FileIndex, index_file};
use super::read::{Copies, LogFormat, ReadOptions, ReadStats, read_file};
use crate::catalog::{Catalog, CatalogSource, Tool, load_catalogs};
use crate::counter::CounterKind;
use crate::counter::ToolTokens;
use crate::document::Document;
use crate::error::{Error, Result};
use crate::number::plural;
use crate::simulate;
use crate::simulate::Scenario;

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
            // An embedded catalog is named by its reference, which loads from anywhere.
            path: if crate::catalog::builtin::is_reference(&s.path) {
                s.path.display().to_string()
            } else {
                relative_to(&s.path, dir)
            },
            server: s.server.clone(),
        })
        .collect();
    Ok(CatalogContext::new(catalog, refs))
}

/// The catalogs each format's sessions are looked up in: the catalogs given, plus the agent's
/// built-ins embedded in the binary (`builtin:claude-code` for Claude sessions,
/// `builtin:codex` for Codex rollouts).
pub struct Catalogs {
    pub claude: Arc<CatalogContext>,
    pub codex: Arc<CatalogContext>,
    /// What was added or left out, for the command to print.
    pub notes: Vec<String>,
    /// When Claude sessions get the shipped built-ins: the catalogs given with them, so a
    /// session naming its Claude Code version gets that version's tools
    /// (`builtin:claude-code@VERSION`) instead of every tool any version had.
    claude_versioned: Option<Versioned>,
}

/// The catalogs of each Claude Code version met, built once each.
struct Versioned {
    given: Vec<CatalogSource>,
    dir: PathBuf,
    built: std::sync::Mutex<BTreeMap<String, Arc<CatalogContext>>>,
}

impl Catalogs {
    pub fn for_format(&self, f: LogFormat) -> &Arc<CatalogContext> {
        match f {
            LogFormat::ClaudeCode => &self.claude,
            LogFormat::Codex => &self.codex,
        }
    }

    /// The catalogs a session is looked up in: for a Claude session that names a version the
    /// table knows, when the shipped built-ins are used, that version's built-in tools.
    pub fn for_session(&self, session: &Session) -> Result<Arc<CatalogContext>> {
        let (LogFormat::ClaudeCode, Some(v), Some(versioned)) = (
            session.format,
            session.agent_version,
            self.claude_versioned.as_ref(),
        ) else {
            return Ok(self.for_format(session.format).clone());
        };
        if !crate::catalog::versions::knows(v) {
            // A version newer than the table: every tool any version had.
            return Ok(self.claude.clone());
        }
        // The built-ins the session called that its version's listed set lacks were sent
        // too (the listed sets come from one machine's dumps, where some tools were off).
        let full = crate::catalog::builtin::text(Path::new(crate::catalog::builtin::CLAUDE_CODE))
            .map_err(Error::usage)?;
        let listed = crate::catalog::versions::tools_of(v);
        let builtin_names = crate::catalog::versions::names(&full);
        let extra: BTreeSet<String> = session
            .transcripts()
            .flat_map(|t| t.requests.iter().flat_map(|r| r.calls.iter()))
            .map(|c| c.name.as_str())
            .filter(|n| {
                // Listed under this name or under the one it was renamed from or to.
                let sent = |x: &str| listed.iter().any(|l| l == x);
                !sent(n)
                    && !super::tools::CLAUDE_ALIASES
                        .iter()
                        .any(|(from, to)| (from == n && sent(to)) || (to == n && sent(from)))
            })
            .filter(|n| builtin_names.contains(&crate::catalog::versions::own_text_of(n)))
            .map(str::to_string)
            .collect();
        let reference =
            crate::catalog::versions::reference(v, &extra.into_iter().collect::<Vec<_>>());
        let mut built = versioned
            .built
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(ctx) = built.get(&reference) {
            return Ok(ctx.clone());
        }
        let mut sources = versioned.given.clone();
        sources.push(CatalogSource {
            path: reference.clone().into(),
            server: None,
        });
        let ctx = Arc::new(catalogs(&sources, &versioned.dir)?);
        built.insert(reference, ctx.clone());
        Ok(ctx)
    }

    /// The same catalogs for both formats (what the caller gave, nothing added).
    pub fn only(ctx: CatalogContext) -> Catalogs {
        let ctx = Arc::new(ctx);
        Catalogs {
            claude: ctx.clone(),
            codex: ctx,
            notes: Vec::new(),
            claude_versioned: None,
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
    // A built-in reference is the same catalog as a file holding its embedded text (the
    // fixture it was built from, given with --catalog).
    let same = |a: &Path, b: &Path| {
        if crate::catalog::builtin::is_reference(b) && !crate::catalog::builtin::is_reference(a) {
            // Read only a file of the same length (never a large one).
            return crate::catalog::builtin::text(b).is_ok_and(|t| {
                std::fs::metadata(a).is_ok_and(|m| m.len() == t.len() as u64)
                    && std::fs::read(a).is_ok_and(|bytes| bytes == t.as_bytes())
            });
        }
        match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => a == b,
        }
    };
    let given_catalog = if given.is_empty() {
        None
    } else {
        Some(load_catalogs(given)?)
    };
    let mut notes = Vec::new();
    let mut claude_versioned = None;
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
            if let Some(id) = clash {
                notes.push(format!(
                    "{} sessions: the catalogs given define {id}, so the shipped built-ins {} are not added",
                    format.name(),
                    b.display()
                ));
            } else {
                if format == LogFormat::ClaudeCode
                    && b.to_str() == Some(crate::catalog::builtin::CLAUDE_CODE)
                {
                    claude_versioned = Some(Versioned {
                        given: given.to_vec(),
                        dir: dir.to_path_buf(),
                        built: std::sync::Mutex::default(),
                    });
                }
                sources.push(CatalogSource {
                    path: b.clone(),
                    server: None,
                });
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
        claude_versioned,
    })
}

/// Runs `f` on a pool of at most [`MAX_READ_THREADS`] threads: each reading thread counts with
/// a tokenizer of its own (about 45 MB for o200k), so memory stays bounded on many cores.
pub fn in_read_pool<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let threads = rayon::current_num_threads().min(MAX_READ_THREADS);
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

/// Most threads reading session files at once (see [`in_read_pool`]).
pub const MAX_READ_THREADS: usize = 8;

/// The first pass over every file (in parallel), reported as a phase over their bytes. The
/// first error in file order wins, so the same input always gives the same message.
pub fn index_all(files: &[PathBuf], progress: &dyn Progress) -> Result<Vec<FileIndex>> {
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let counter = FileCounter::begin(progress, "indexing", total, files.len());
    let out: Vec<Result<FileIndex>> = in_read_pool(|| {
        files
            .par_iter()
            .map(|f| {
                let r = index_file(f);
                if let Ok(ix) = &r {
                    counter.file_done(ix.bytes);
                }
                r
            })
            .collect()
    });
    counter.finish();
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

/// The mined queries' file in an import folder (read back by `report --sessions`).
pub const QUERIES_FILE: &str = "queries.jsonl";

/// What a session's summary needs of its files once the transcripts are dropped.
pub struct Facts {
    pub file: PathBuf,
    pub format: LogFormat,
    pub files: usize,
    pub subagents: usize,
    pub stats: ReadStats,
}

impl Facts {
    fn of(s: &Session) -> Facts {
        Facts {
            file: s.file.clone(),
            format: s.format,
            files: s.files.len(),
            subagents: s.agents.len(),
            stats: s.stats.clone(),
        }
    }
}

/// Scenario names from session ids: safe file names, unique in order.
pub fn unique_names(sessions: &[Planned]) -> Vec<String> {
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
pub fn check_unknown<'a>(
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
        return Err(unknown_tools_error(&all));
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
pub fn scenario_text(s: &ScenarioFile, file: &str) -> Result<String> {
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
    parse_scenario(dir, file, text)
        .map(Some)
        .map_err(|e| refuse(format!("is refused by the scenario reader: {e}")))
}

/// Reads a scenario text made by [`scenario_text`] through the scenario loader, as the file
/// `file` in `dir` (its catalog paths are relative to `dir`).
pub fn parse_scenario(dir: &Path, file: &str, text: String) -> Result<Scenario> {
    let doc = Document::parse(&dir.join(file), text.into_bytes())?;
    simulate::scenario::parse(&doc)
}

/// A scenario text made by [`scenario_text`] with its top-level `system_prompt_tokens` set to
/// `tokens` (placed after `counter`, where the writer puts it), everything else as it was.
pub fn with_system_prompt(text: &str, file: &str, tokens: usize) -> Result<String> {
    let cannot = |e: String| Error::usage(format!("cannot rewrite the scenario {file}: {e}"));
    let value: serde_json::Value = if file.ends_with(".json") {
        serde_json::from_str(text).map_err(|e| cannot(e.to_string()))?
    } else {
        serde_saphyr::from_str(text).map_err(|e| cannot(e.to_string()))?
    };
    let serde_json::Value::Object(map) = value else {
        return Err(cannot("not a mapping".to_string()));
    };
    let mut out = serde_json::Map::with_capacity(map.len() + 1);
    let key = "system_prompt_tokens";
    let had = map.contains_key(key);
    for (k, v) in map {
        if k == key {
            out.insert(k, tokens.into());
            continue;
        }
        let after_counter = k == "counter";
        out.insert(k, v);
        if after_counter && !had {
            out.insert(key.to_string(), tokens.into());
        }
    }
    let value = serde_json::Value::Object(out);
    if file.ends_with(".json") {
        Ok(crate::output::to_json(&value))
    } else {
        to_yaml(&value)
    }
}

pub fn to_yaml<T: Serialize>(v: &T) -> Result<String> {
    serde_saphyr::to_string(v).map_err(|e| Error::usage(format!("cannot write YAML: {e}")))
}

/// One session read and converted: its facts, its scenario (loaded through the real scenario
/// loader), the catalogs it replays against and its mined searches; its transcripts dropped.
pub struct ReadSession {
    pub facts: Facts,
    pub converted: Converted,
    /// `NAME.yaml`, or `NAME.json` for a scenario too large for the YAML reader.
    pub scenario_file: String,
    pub scenario: Option<Scenario>,
    pub ctx: Arc<CatalogContext>,
    /// Files of its own to write (its dynamic tools' catalog).
    pub own_files: Vec<(String, String)>,
    /// Its search queries, labeled (`session::queries`).
    pub mined: Mined,
    /// Whether it searched before using deferred tools (`session::adoption`).
    pub adoption: crate::adoption::Adoption,
}

impl ReadSession {
    /// Sets the fixed prefixes measured from each agent's first billed request (`prefixes`:
    /// simulator agent number → tokens; 0 is the main agent) on a session whose log records no
    /// system prompt, and loads the scenario again. Said in the scenario's description.
    pub fn set_measured_prefixes(
        &mut self,
        prefixes: &BTreeMap<usize, usize>,
        dir: &Path,
    ) -> Result<()> {
        fn walk(items: &mut [ItemOut], prefixes: &BTreeMap<usize, usize>) {
            for it in items {
                if let ItemOut::Turn(t) = it {
                    for s in t.calls.iter_mut().filter_map(|c| c.subagent.as_mut()) {
                        s.system_prompt_tokens = prefixes.get(&s.agent).copied();
                        walk(&mut s.conversation, prefixes);
                    }
                }
            }
        }
        let sc = &mut self.converted.scenario;
        sc.system_prompt_tokens = prefixes.get(&0).copied();
        walk(&mut sc.conversation, prefixes);
        let subs = prefixes.keys().filter(|a| **a > 0).count();
        sc.description.push_str(&format!(
            " The log records no system prompt: {} measured from the first billed request \
             (its billed prompt less what toolbudget counts of it).",
            match (prefixes.get(&0), subs) {
                (Some(n), 0) => format!("the system prompt ({n} tokens) is"),
                (Some(n), s) => format!(
                    "the system prompt ({n} tokens) and {} are",
                    plural(s, "subagent's", "subagents'")
                ),
                (None, s) => format!("{} are", plural(s, "subagent's", "subagents'")),
            }
        ));
        self.scenario = load(&self.converted, &self.facts.file, &self.scenario_file, dir)?;
        Ok(())
    }
}

/// Reads the files of one planned session and converts it to a scenario named `name` in
/// `dir`, each file's bytes counted on `files`.
#[allow(clippy::too_many_arguments)]
pub fn read_session(
    p: &Planned,
    name: String,
    plan: &Plan,
    cats: &Catalogs,
    opts: ImportOptions,
    dir: &Path,
    files: &FileCounter<'_>,
) -> Result<ReadSession> {
    let read = ReadOptions {
        keep_text: opts.keep_text,
        skip_bad_lines: opts.skip_bad_lines,
    };
    let mut logs = Vec::new();
    for i in p.files() {
        let f = &plan.files[i];
        logs.push(read_file(&f.path, read, &plan.copies[i])?);
        files.file_done(f.bytes);
    }
    let session = assemble(p, logs);
    let base = &cats.for_session(&session)?;
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
    let adoption = super::adoption::measure(&session, &ctx.catalog);
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
    Ok(ReadSession {
        facts: Facts::of(&session),
        converted,
        scenario_file,
        scenario,
        ctx,
        own_files,
        mined,
        adoption,
    })
}

/// The refusal naming the tools in no catalog; a name is the log's text, shown with its
/// control characters as escapes.
fn unknown_tools_error(all: &BTreeMap<String, usize>) -> Error {
    let list: Vec<String> = all
        .iter()
        .map(|(k, v)| {
            format!(
                "{} ({})",
                crate::output::terminal_line(k),
                plural(*v, "call", "calls")
            )
        })
        .collect();
    Error::usage(format!(
        "{} tools named in the sessions are in no catalog: {}; add their catalogs with --catalog, or --allow-unknown-tools to leave them out",
        all.len(),
        list.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scenario's header as the writer lays it out, with text a YAML reader could take
    /// for something else.
    #[derive(Serialize)]
    struct Shaped {
        name: String,
        description: String,
        model: String,
        counter: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        system_prompt_tokens: Option<usize>,
        catalogs: Vec<BTreeMap<String, String>>,
        conversation: Vec<serde_json::Value>,
    }

    fn shaped(prompt: Option<usize>) -> Shaped {
        Shaped {
            name: "s-1".into(),
            description: "line one\nline two: \"quoted\" # not a comment\tyes".into(),
            model: "claude-sonnet-4-5".into(),
            counter: "o200k",
            system_prompt_tokens: prompt,
            catalogs: vec![BTreeMap::from([(
                "path".into(),
                "builtin:claude-code".into(),
            )])],
            conversation: vec![serde_json::json!({
                "user": "123", "tokens": 7, "ratio": 0.25, "flag": "yes", "empty": "",
                "calls": [{"tool": "Read", "input": {"k": null, "n": [1, 2.5, "3"]}}]
            })],
        }
    }

    #[test]
    fn setting_the_system_prompt_rewrites_only_that_key() {
        for file in ["s.yaml", "s.json"] {
            let text = |p| {
                if file.ends_with(".json") {
                    crate::output::to_json(&shaped(p))
                } else {
                    to_yaml(&shaped(p)).unwrap()
                }
            };
            assert_eq!(
                with_system_prompt(&text(None), file, 42).unwrap(),
                text(Some(42))
            );
            assert_eq!(
                with_system_prompt(&text(Some(9)), file, 42).unwrap(),
                text(Some(42))
            );
        }
    }

    #[test]
    fn an_unknown_tool_name_reaches_the_error_escaped() {
        let all = BTreeMap::from([("evil\x1b[31mRED\rCR".to_string(), 2)]);
        let e = unknown_tools_error(&all).to_string();
        assert!(e.contains("evil\\x1b[31mRED\\rCR (2 calls)"), "{e}");
        assert!(!e.chars().any(char::is_control), "{e}");
    }
}
