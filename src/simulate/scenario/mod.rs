//! The scenario model and its loader. A scenario names catalogs, the deferred-loading
//! settings, a model profile and a conversation. `load_scenario` reads the YAML/JSON file
//! through `crate::document` into the `Raw*` structs below (`#[derive(Deserialize)]`,
//! `deny_unknown_fields`), so every problem (unknown key, wrong type, negative size) is
//! reported at its `line:column`, then converts them into the validated model. Model types
//! that need no conversion (`Sizes`, `Failures`, `Published`) are read directly. Tool ids are
//! checked against the catalogs in `prepare`, where the catalogs are loaded; each id keeps its
//! position for that error. `scenarios/schema.json` is kept equal to these types by a test.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;

mod raw;
mod read;
pub mod texts;

pub(crate) use raw::*;
use read::Reader;

use super::client::{ClientName, ClientProfile};
use super::profile::{self, Override, Profile};
use crate::budget::Budget;
use crate::counter::{CounterKind, ToolChoice};
use crate::document::Document;
use crate::error::{Error, Position, Result};
use crate::path;
use crate::search::bm25::Bm25Params;
use crate::search::{ScorerKind, ScorerSpec};
use crate::tokenize::{Render, Tokenizer};

/// A tool id written in the scenario, with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRef {
    pub id: String,
    pub at: Option<Position>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    /// Resolved against the scenario file's folder; a `builtin:NAME` reference (a catalog
    /// embedded in the binary, [`crate::catalog::builtin`]) as written.
    pub path: PathBuf,
    pub server: Option<String>,
    /// False: the servers of this file start disconnected (a `connect` event brings them in).
    pub connected: bool,
    /// Third-party data kept outside the repository (`../shared/data`): when the file is
    /// absent, `report` leaves the scenario out with a note (`simulate` still refuses it).
    pub optional: bool,
    /// Where the scenario names this file, for "catalog file not found" errors.
    pub at: Option<Position>,
}

impl CatalogEntry {
    /// Whether the catalog can be read: an embedded catalog always (its name was checked when
    /// the scenario was read), a file when it is one.
    pub fn is_available(&self) -> bool {
        crate::catalog::builtin::is_reference(&self.path) || self.path.is_file()
    }
}

/// When the deferred mode defers at all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum When {
    /// Defer every deferrable tool.
    Always,
    /// Never defer: the deferred mode sends every tool, as eager does (client `none`).
    Never,
    /// Defer only when the agent has more than N tools (GitHub Copilot CLI: about 30).
    Over(usize),
    /// Claude Code's `ENABLE_TOOL_SEARCH=auto:N`: defer only when the deferrable tools'
    /// definitions exceed N% of the context window; otherwise behave eagerly.
    Auto(f64),
}

impl std::fmt::Display for When {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            When::Always => f.write_str("always"),
            When::Never => f.write_str("never"),
            When::Over(n) => write!(f, "over:{n}"),
            When::Auto(n) => write!(f, "auto:{n}"),
        }
    }
}

/// Written as a scenario writes it: `always` or `auto:N`.
impl serde::Serialize for When {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Discovery {
    /// The model writes a query to the search tool: one extra request per search.
    ModelSearch,
    /// The model names the tool exactly (`select:ID`, through the keyword scorer).
    Select,
    /// The user's message is the query; the top-k definitions join this turn's tools.
    AutoRetrieve,
}

crate::named_enum!(Discovery, "discovery");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Listing {
    /// Claude Code: `<available-deferred-tools>` with one name a line.
    Names,
    /// Name and a one-line description of at most 100 characters.
    Descriptions,
    /// One line per server (its description, or "N tools: a, b, c…"); searches are scoped to
    /// the needed tool's server, as a model that picked the namespace from the list would do.
    Servers,
    /// Nothing listed: the provider's search tool alone stands for the deferred tools
    /// (Anthropic's tool search with `defer_loading`, an OpenAI namespace with `tool_search`;
    /// the public harness measured a cost that does not grow with the catalog).
    None,
    /// A compact stub of every deferred function in the tools block (OpenAI's flat
    /// `defer_loading` on each function), counted by the counter's stub form; with the
    /// provider's flat search overhead.
    Stubs,
}

crate::named_enum!(Listing, "listing");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ListStyle {
    /// The list is part of the system prompt of every request.
    List,
    /// Announced once as a message, then only additions/removals as messages.
    Delta,
}

crate::named_enum!(ListStyle, "list style");

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reveal {
    /// A discovered definition is appended to the conversation (`tool_reference` expansion):
    /// the cached prefix survives.
    #[default]
    Append,
    /// A discovered definition is added to the request's tools list: the prefix changes.
    ToolsList,
}

crate::named_enum!(Reveal, "reveal");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetryStep {
    /// Search again with the tool's name parts (`tracker create issue`).
    Rephrase,
    /// Search with `select:ID`.
    Select,
}

crate::named_enum!(RetryStep, "retry step");

/// An OpenAI namespace (`{"type": "namespace", "name", "description", "tools"}`) holding the
/// deferred tools that have no MCP server: behind OpenAI's `tool_search` the model sees only
/// its name and description until a search loads its functions (OpenAI API docs, Tool search).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a namespace (a mapping with name: and description:)"
)]
pub struct Namespace {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

// Each bool is a scenario key of its own (`defer_mcp: true`, ...), as the file writes them.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone, PartialEq)]
pub struct DeferredSettings {
    pub when: When,
    pub defer_mcp: bool,
    /// Built-ins deferred by the scenario (`*` = every built-in), on top of `should_defer`.
    pub defer_builtins: Vec<ToolRef>,
    pub defer_all_builtins: bool,
    pub always_load: Vec<ToolRef>,
    /// Server names (a `ToolRef` keeps each name's position).
    pub always_load_servers: Vec<ToolRef>,
    /// The deferred search: a built-in or the user's own (`{exec: CMD}`, `{mcp: CMD}`).
    pub scorer: ScorerSpec,
    /// Where an external scorer the scenario names runs (the scenario's folder, so its command
    /// line may name scripts relative to the file); `None` for the caller's directory.
    pub scorer_dir: Option<PathBuf>,
    pub max_results: usize,
    pub discovery: Discovery,
    pub listing: Listing,
    pub list_style: ListStyle,
    pub reveal: Reveal,
    pub retry: Vec<RetryStep>,
    /// Extra dependencies (`id: [ids]`), added to the catalog's `depends_on`.
    pub depends_on: Vec<(ToolRef, Vec<ToolRef>)>,
    /// bm25's k1, b and field weights (`bm25:`; also hybrid's lexical half).
    pub bm25: Bm25Params,
    /// What a `compact` event that does not say `keep_discovered` does with loaded tools.
    pub compact_keeps_loaded: bool,
    /// What a `resume` event that does not say `rediscover` does: tools used before are
    /// loaded again from the transcript without a search.
    pub resume_rediscovers: bool,
    /// A `tool_call` bridge beside the search tool: deferred tools are called through it, so a
    /// loaded definition never joins the tools list (Qwen Code, OpenRouter).
    pub call_bridge: bool,
    /// The search tool's name in the model's calls (default `ToolSearch`).
    pub search_tool_name: Option<String>,
    /// Under the openai counters with OpenAI's `tool_search`: the namespace the deferred
    /// tools without a server sit in (`listing: none` or `servers`), shown by its name and
    /// description; without one, each such function is shown by its own.
    pub namespace: Option<Namespace>,
    /// The client runs the search itself (Codex's BM25 `tool_search` handler): a search ends
    /// the response and its output is the next request's `new`, also where OpenAI's hosted
    /// search would run inside one response.
    pub client_search: bool,
}

impl Default for DeferredSettings {
    fn default() -> Self {
        DeferredSettings {
            when: When::Always,
            defer_mcp: true,
            defer_builtins: Vec::new(),
            defer_all_builtins: false,
            always_load: Vec::new(),
            always_load_servers: Vec::new(),
            scorer: ScorerSpec::Builtin(ScorerKind::Keyword),
            scorer_dir: None,
            max_results: 5,
            discovery: Discovery::ModelSearch,
            listing: Listing::Names,
            list_style: ListStyle::List,
            reveal: Reveal::default(),
            retry: vec![RetryStep::Rephrase, RetryStep::Select],
            depends_on: Vec::new(),
            bm25: Bm25Params::default(),
            compact_keeps_loaded: true,
            resume_rediscovers: true,
            call_bridge: false,
            search_tool_name: None,
            namespace: None,
            client_search: false,
        }
    }
}

/// The `deferred:` keys a scenario writes, each read and checked; `None` (or empty) where it
/// writes none. The settings in force are a client profile's defaults (or toolbudget's)
/// with these written over them (`resolve`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExplicitDeferred {
    pub when: Option<When>,
    pub defer_mcp: Option<bool>,
    /// As written, `*` included.
    pub defer_builtins: Vec<ToolRef>,
    pub always_load: Vec<ToolRef>,
    pub always_load_servers: Vec<ToolRef>,
    /// The scorer and, for an external one, the folder it runs in.
    pub scorer: Option<(ScorerSpec, Option<PathBuf>)>,
    pub max_results: Option<usize>,
    pub discovery: Option<Discovery>,
    pub listing: Option<Listing>,
    pub list_style: Option<ListStyle>,
    pub reveal: Option<Reveal>,
    pub retry: Option<Vec<RetryStep>>,
    pub depends_on: Vec<(ToolRef, Vec<ToolRef>)>,
    pub bm25: Option<Bm25Params>,
    pub compact_keeps_loaded: Option<bool>,
    pub resume_rediscovers: Option<bool>,
    pub call_bridge: Option<bool>,
    pub namespace: Option<Namespace>,
}

impl ExplicitDeferred {
    /// `base` with these keys written over it. The keys about the user's own tools
    /// (`defer_builtins`, `always_load`, `always_load_servers`, `depends_on`, `bm25`,
    /// `namespace`) always
    /// apply; the policy keys (when, defer_mcp, scorer, max_results, discovery, listing,
    /// list_style, reveal, retry, compaction, resume, bridge) only when `policy` is true:
    /// `simulate --client` replays a scenario under each profile's policy, keeping its tools.
    pub fn resolve(&self, base: DeferredSettings, policy: bool) -> DeferredSettings {
        let mut d = base;
        d.defer_all_builtins |= self.defer_builtins.iter().any(|r| r.id == "*");
        d.defer_builtins = self
            .defer_builtins
            .iter()
            .filter(|r| r.id != "*")
            .cloned()
            .collect();
        d.always_load.clone_from(&self.always_load);
        d.always_load_servers.clone_from(&self.always_load_servers);
        d.depends_on.clone_from(&self.depends_on);
        d.namespace.clone_from(&self.namespace);
        if let Some(b) = self.bm25 {
            d.bm25 = b;
        }
        if !policy {
            return d;
        }
        d.when = self.when.unwrap_or(d.when);
        d.defer_mcp = self.defer_mcp.unwrap_or(d.defer_mcp);
        if let Some((spec, dir)) = &self.scorer {
            d.scorer = spec.clone();
            d.scorer_dir.clone_from(dir);
        }
        d.max_results = self.max_results.unwrap_or(d.max_results);
        d.discovery = self.discovery.unwrap_or(d.discovery);
        d.listing = self.listing.unwrap_or(d.listing);
        d.list_style = self.list_style.unwrap_or(d.list_style);
        d.reveal = self.reveal.unwrap_or(d.reveal);
        if let Some(r) = &self.retry {
            d.retry.clone_from(r);
        }
        d.compact_keeps_loaded = self.compact_keeps_loaded.unwrap_or(d.compact_keeps_loaded);
        d.resume_rediscovers = self.resume_rediscovers.unwrap_or(d.resume_rediscovers);
        d.call_bridge = self.call_bridge.unwrap_or(d.call_bridge);
        d
    }
}

/// The defaults of a client profile, or toolbudget's own without one.
pub fn base_settings(client: Option<&ClientProfile>) -> DeferredSettings {
    client.map_or_else(DeferredSettings::default, ClientProfile::settings)
}

/// Fixed sizes that replace counted text (tests, or matching a provider's real numbers).
/// Read as written: a new size is one field here.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "sizes (a mapping of token counts)")]
pub struct Sizes {
    #[serde(default, deserialize_with = "opt_tokens")]
    pub tool_overhead: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub search_tool: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub deferred_list: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub call: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub search_call: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub search_result_base: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub search_result_per_tool: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub result: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub error_result: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub reply: Option<usize>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "failures (a mapping)")]
pub struct Failures {
    /// Probability that the model calls a not-yet-loaded deferred tool before searching
    /// (an error result, then the search).
    #[serde(default, deserialize_with = "probability")]
    pub premature_call_rate: f64,
    /// Seed of the deterministic generator behind every rate.
    #[serde(default)]
    pub seed: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub tool: ToolRef,
    /// What the model types into the search tool; default the turn's user text.
    pub query: Option<String>,
    pub result_tokens: Option<usize>,
    /// The tool's answer as text: what `toolbudget live` returns to the model for this call
    /// (without it, a result of `result_tokens` size). The simulator counts sizes only.
    pub result: Option<String>,
    pub call_tokens: Option<usize>,
    /// The call's input, rendered into `{"name":ID,"input":{...}}` and counted.
    pub input: Option<Value>,
    /// Where the call is written (its `query:` when it has one), for a query the scorer rejects.
    pub at: Option<Position>,
    /// Sent in the same request as the call before it (parallel tool use): one request writes
    /// both calls, and the next carries both results.
    pub parallel: bool,
    /// On a call of the search tool: a search recorded in a real session, which loaded these
    /// tools. Replayed as written by the deferred mode; the eager mode never searches.
    pub loads: Option<Vec<ToolRef>>,
    /// The subagent this call started (a `Task` call): it runs after the request that wrote
    /// the call, and the call's result is what it returned.
    pub subagent: Option<Subagent>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Subagent {
    /// None = `*`, every tool (deferred ones included, still deferred).
    pub tools: Option<Vec<ToolRef>>,
    pub system_prompt_tokens: Option<usize>,
    pub result_tokens: Option<usize>,
    pub conversation: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub user: String,
    /// Where `user:` is written, for a user text the scorer rejects as a query.
    pub at: Option<Position>,
    pub tokens: Option<usize>,
    pub reply_tokens: Option<usize>,
    pub calls: Vec<Call>,
    pub subagent: Option<Subagent>,
    /// What `toolbudget live` checks of the model's calls beyond `calls` (the simulator
    /// replays the labels and ignores it).
    pub trajectory: Trajectory,
}

/// A turn's trajectory assertions (mcpchecker's kind): each one broken is a failure of its own.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trajectory {
    /// Tools the model must not call in this turn (a malformed call counts).
    pub must_not_call: Vec<ToolRef>,
    /// `strict`: the expected tools are first called in the order `calls` lists them.
    pub order: CallOrder,
    /// At most this many tool calls in the turn, the search tool's not counted (searches
    /// are reported apart).
    pub max_calls: Option<usize>,
    /// No tool called twice with the same arguments.
    pub no_duplicate_calls: bool,
}

impl Trajectory {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallOrder {
    #[default]
    Any,
    Strict,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A server connects (its tools appear); `at` locates the name for errors.
    Connect {
        server: String,
        at: Option<Position>,
    },
    Disconnect {
        server: String,
        at: Option<Position>,
    },
    /// `/clear`: history and discovered tools are dropped.
    Clear,
    /// History replaced by a summary; discovered tools kept or dropped (`None`: as the
    /// deferred settings' `compact_keeps_loaded` says).
    Compact {
        summary_tokens: usize,
        keep_discovered: Option<bool>,
    },
    /// The session is resumed in a new process: the prompt cache is cold; tools used earlier
    /// are re-discovered from the transcript without searching unless `rediscover: false`
    /// (`None`: as `resume_rediscovers` says).
    Resume { rediscover: Option<bool> },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Turn(Box<Turn>),
    Event(Event),
}

pub use super::published::Published;

#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    pub path: PathBuf,
    pub tokenizer: Option<Tokenizer>,
    pub render: Render,
    /// How requests are counted (overrides the profile's counter and `tokenizer`/`render`).
    pub counter: Option<CounterKind>,
    /// The requests' `tool_choice` (the tool-use preamble depends on it).
    pub tool_choice: ToolChoice,
    pub profile: Profile,
    /// The client profile named by `client:` (its policy fills the `deferred` keys the
    /// scenario does not write).
    pub client: Option<ClientName>,
    /// The `deferred` keys as the scenario writes them, kept so another client can be applied
    /// (`with_client`).
    pub explicit: ExplicitDeferred,
    pub system_prompt: Option<String>,
    pub system_prompt_tokens: Option<usize>,
    pub catalogs: Vec<CatalogEntry>,
    pub deferred: DeferredSettings,
    pub sizes: Sizes,
    pub failures: Failures,
    pub conversation: Vec<Item>,
    pub published: Vec<Published>,
    /// An `optional` input (a catalog or the `texts` file) that is not there: `report` leaves
    /// the scenario out with a note, `simulate` refuses it.
    pub unavailable: Option<PathBuf>,
    /// Where the scenario names that input.
    pub unavailable_at: Option<Position>,
}

impl Scenario {
    /// This scenario under `client`'s policy: the profile's settings with only the scenario's
    /// keys about its own tools kept (`ExplicitDeferred::resolve`), named `client` in results.
    #[must_use]
    pub fn with_client(&self, client: ClientName) -> Scenario {
        let mut sc = self.clone();
        let profile = super::client::profile(client);
        sc.deferred = self.explicit.resolve(profile.settings(), false);
        sc.client = Some(client);
        sc
    }
}

pub use crate::budget::MAX_TURNS;
/// Requests a conversation sends at least (one per turn and one per call, subagents included);
/// searches and retries come on top and are bounded by the calls.
fn work_of(items: &[Item]) -> u64 {
    items
        .iter()
        .map(|it| match it {
            Item::Turn(t) => turn_work(t),
            Item::Event(_) => 0,
        })
        .fold(0, u64::saturating_add)
}

/// Bytes of text a turn holds (user text, queries, results, inputs as JSON, its subagents'
/// conversations): what one more copy of it costs, charged times `repeat`.
fn turn_text(t: &Turn) -> u64 {
    let sub = |s: &Subagent| conversation_text(&s.conversation);
    let calls = t.calls.iter().fold(0u64, |n, c| {
        n.saturating_add(c.query.as_ref().map_or(0, |q| q.len() as u64))
            .saturating_add(c.result.as_ref().map_or(0, |r| r.len() as u64))
            .saturating_add(c.input.as_ref().map_or(0, json_len))
            .saturating_add(c.subagent.as_ref().map_or(0, sub))
    });
    (t.user.len() as u64)
        .saturating_add(calls)
        .saturating_add(t.subagent.as_ref().map_or(0, sub))
}

fn conversation_text(items: &[Item]) -> u64 {
    items
        .iter()
        .map(|it| match it {
            Item::Turn(t) => turn_text(t),
            Item::Event(_) => 0,
        })
        .fold(0, u64::saturating_add)
}

/// The length of `v` written as compact JSON, without building the text.
fn json_len(v: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(b.len() as u64);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    // Writing into a counter cannot fail.
    let _ = serde_json::to_writer(&mut n, v);
    n.0
}

fn turn_work(t: &Turn) -> u64 {
    // A subagent is a call of the main agent (one result request) plus its own conversation.
    let sub = t
        .subagent
        .as_ref()
        .map_or(0, |s| work_of(&s.conversation).saturating_add(1));
    // A call that started a subagent adds the subagent's own requests.
    let call_subs = t
        .calls
        .iter()
        .filter_map(|c| c.subagent.as_ref())
        .fold(0u64, |n, s| n.saturating_add(work_of(&s.conversation)));
    (1 + t.calls.len() as u64)
        .saturating_add(sub)
        .saturating_add(call_subs)
}

impl Scenario {
    /// The most query × tool pairs its replays may search over a catalog of `tools`: every
    /// request may be a search with its retry steps, in the deferred replay and in each
    /// published figure's (eager replays do not search).
    pub fn search_work(&self, tools: usize) -> u64 {
        work_of(&self.conversation)
            .saturating_mul(1 + self.deferred.retry.len() as u64)
            .saturating_mul(1 + self.published.len() as u64)
            .saturating_mul(tools as u64)
    }
}

/// Reads and validates a scenario file, within a budget of its own.
pub fn load_scenario(path: &Path) -> Result<Scenario> {
    load_scenario_in(path, &mut Budget::new())
}

/// Reads and validates a scenario file, charging its requests and text to `budget` (the
/// run's: see [`crate::budget`]).
pub fn load_scenario_in(path: &Path, budget: &mut Budget) -> Result<Scenario> {
    let doc = Document::read(path)?;
    parse_in(&doc, budget)
}

/// Reads every scenario of one run, within one budget for the run (requests and text over
/// all of them: three scenarios cannot each take the whole budget). Names must be unique within a run — rows, charts and
/// report sections are keyed by name (and chart files by its slug) — so a second file using a
/// name (or a name with the same file-name slug) is refused, naming both files.
pub fn load_scenarios(paths: &[PathBuf]) -> Result<Vec<Scenario>> {
    let mut out: Vec<Scenario> = Vec::with_capacity(paths.len());
    let mut budget = Budget::new();
    for path in paths {
        let sc = load_scenario_in(path, &mut budget)?;
        let slug = crate::names::slug(&sc.name);
        if let Some(first) = out
            .iter()
            .find(|o| o.name == sc.name || crate::names::slug(&o.name) == slug)
        {
            return Err(Error::input(
                path,
                None,
                format!(
                    "scenario name {:?} is already used by {} ({:?}); names must be unique within \
                     a run: give one of them another `name:`",
                    sc.name,
                    first.path.display(),
                    first.name
                ),
            ));
        }
        out.push(sc);
    }
    Ok(out)
}

/// Parses an already-read document (tests build documents from strings).
pub fn parse(doc: &Document) -> Result<Scenario> {
    parse_in(doc, &mut Budget::new())
}

/// Parses an already-read document, charging `budget`.
pub fn parse_in(doc: &Document, budget: &mut Budget) -> Result<Scenario> {
    let raw: RawScenario = doc.decode(&[], &doc.value)?;
    Reader { doc }.scenario(raw, budget)
}
