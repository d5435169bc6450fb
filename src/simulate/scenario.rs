//! The scenario model and its loader. A scenario names catalogs, the deferred-loading
//! settings, a model profile and a conversation; `load_scenario` reads the YAML/JSON file
//! through `crate::document`, so every problem (unknown key, wrong type, negative size) is
//! reported at its `line:column`. Tool ids are checked against the catalogs in `prepare`,
//! which is where the catalogs are loaded; each id keeps its position for that error.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::profile::{self, Profile};
use crate::document::{Document, Seg};
use crate::error::{Error, Position, Result};
use crate::search::ScorerKind;
use crate::tokenize::{Render, Tokenizer};

/// A tool id written in the scenario, with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRef {
    pub id: String,
    pub at: Option<Position>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    /// Resolved against the scenario file's folder.
    pub path: PathBuf,
    pub server: Option<String>,
    /// False: the servers of this file start disconnected (a `connect` event brings them in).
    pub connected: bool,
    /// Where the scenario names this file, for "catalog file not found" errors.
    pub at: Option<Position>,
}

/// When the deferred mode defers at all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum When {
    /// Defer every deferrable tool.
    Always,
    /// Claude Code's `ENABLE_TOOL_SEARCH=auto:N`: defer only when the deferrable tools'
    /// definitions exceed N% of the context window; otherwise behave eagerly.
    Auto(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discovery {
    /// The model writes a query to the search tool: one extra request per search.
    ModelSearch,
    /// The model names the tool exactly (`select:ID`, through the keyword scorer).
    Select,
    /// The user's message is the query; the top-k definitions join this turn's tools.
    AutoRetrieve,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// Claude Code: `<available-deferred-tools>` with one name a line.
    Names,
    /// Name and a one-line description of at most 100 characters.
    Descriptions,
    /// One line per server (its description, or "N tools: a, b, c…"); searches are scoped to
    /// the needed tool's server, as a model that picked the namespace from the list would do.
    Servers,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListStyle {
    /// The list is part of the system prompt of every request.
    List,
    /// Announced once as a message, then only additions/removals as messages.
    Delta,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reveal {
    /// A discovered definition is appended to the conversation (`tool_reference` expansion):
    /// the cached prefix survives.
    Append,
    /// A discovered definition is added to the request's tools list: the prefix changes.
    ToolsList,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryStep {
    /// Search again with the tool's name parts (`tracker create issue`).
    Rephrase,
    /// Search with `select:ID`.
    Select,
}

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
    pub scorer: ScorerKind,
    pub max_results: usize,
    pub discovery: Discovery,
    pub listing: Listing,
    pub list_style: ListStyle,
    pub reveal: Reveal,
    pub retry: Vec<RetryStep>,
    /// Extra dependencies (`id: [ids]`), added to the catalog's `depends_on`.
    pub depends_on: Vec<(ToolRef, Vec<ToolRef>)>,
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
            scorer: ScorerKind::Keyword,
            max_results: 5,
            discovery: Discovery::ModelSearch,
            listing: Listing::Names,
            list_style: ListStyle::List,
            reveal: Reveal::Append,
            retry: vec![RetryStep::Rephrase, RetryStep::Select],
            depends_on: Vec::new(),
        }
    }
}

/// Fixed sizes that replace counted text (tests, or matching a provider's real numbers).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sizes {
    pub tool_overhead: Option<usize>,
    pub search_tool: Option<usize>,
    pub deferred_list: Option<usize>,
    pub call: Option<usize>,
    pub search_call: Option<usize>,
    pub search_result_base: Option<usize>,
    pub search_result_per_tool: Option<usize>,
    pub result: Option<usize>,
    pub error_result: Option<usize>,
    pub reply: Option<usize>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Failures {
    /// Probability that the model calls a not-yet-loaded deferred tool before searching
    /// (an error result, then the search).
    pub premature_call_rate: f64,
    /// Seed of the deterministic generator behind every rate.
    pub seed: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub tool: ToolRef,
    /// What the model types into the search tool; default the turn's user text.
    pub query: Option<String>,
    pub result_tokens: Option<usize>,
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
    /// History replaced by a summary; discovered tools kept or dropped.
    Compact {
        summary_tokens: usize,
        keep_discovered: bool,
    },
    /// The session is resumed in a new process: the prompt cache is cold; tools used earlier
    /// are re-discovered from the transcript without searching unless `rediscover: false`.
    Resume { rediscover: bool },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Turn(Box<Turn>),
    Event(Event),
}

/// A published figure quoted next to the measured one.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Published {
    pub claim: String,
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eager_tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred_tokens: Option<f64>,
    /// Which measured figure the numbers compare with: `first_request_tokens` (default),
    /// `first_request_tool_tokens` (tools + deferred list of the first request) or
    /// `mean_request_tokens`.
    pub metric: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    pub path: PathBuf,
    pub tokenizer: Option<Tokenizer>,
    pub render: Render,
    pub profile: Profile,
    pub system_prompt: Option<String>,
    pub system_prompt_tokens: Option<usize>,
    pub catalogs: Vec<CatalogEntry>,
    pub deferred: DeferredSettings,
    pub sizes: Sizes,
    pub failures: Failures,
    pub conversation: Vec<Item>,
    pub published: Vec<Published>,
}

pub const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "tokenizer",
    "render",
    "model",
    "model_overrides",
    "system_prompt",
    "system_prompt_tokens",
    "catalogs",
    "deferred",
    "sizes",
    "failures",
    "conversation",
    "published",
];
pub const CATALOG_KEYS: &[&str] = &["path", "server", "connected"];
pub const DEFERRED_KEYS: &[&str] = &[
    "when",
    "defer_mcp",
    "defer_builtins",
    "always_load",
    "always_load_servers",
    "scorer",
    "max_results",
    "discovery",
    "listing",
    "list_style",
    "reveal",
    "retry",
    "depends_on",
];
pub const SIZE_KEYS: &[&str] = &[
    "tool_overhead",
    "search_tool",
    "deferred_list",
    "call",
    "search_call",
    "search_result_base",
    "search_result_per_tool",
    "result",
    "error_result",
    "reply",
];
pub const FAILURE_KEYS: &[&str] = &["premature_call_rate", "seed"];
pub const TURN_KEYS: &[&str] = &[
    "user",
    "tokens",
    "reply_tokens",
    "calls",
    "subagent",
    "repeat",
];
pub const CALL_KEYS: &[&str] = &[
    "tool",
    "query",
    "result_tokens",
    "call_tokens",
    "input",
    "parallel",
    "loads",
    "subagent",
];
pub const EVENT_KEYS: &[&str] = &[
    "event",
    "server",
    "summary_tokens",
    "keep_discovered",
    "rediscover",
];
pub const SUBAGENT_KEYS: &[&str] = &[
    "tools",
    "system_prompt_tokens",
    "result_tokens",
    "conversation",
];
pub const PUBLISHED_KEYS: &[&str] = &[
    "claim",
    "source",
    "eager_tokens",
    "deferred_tokens",
    "metric",
];

pub const PUBLISHED_METRICS: &[&str] = &[
    "first_request_tokens",
    "first_request_tool_tokens",
    "mean_request_tokens",
];

/// Most turns a scenario may expand to (after `repeat`).
pub const MAX_TURNS: usize = 100_000;

/// Reads and validates a scenario file.
pub fn load_scenario(path: &Path) -> Result<Scenario> {
    let doc = Document::read(path)?;
    parse(&doc)
}

/// Parses an already-read document (tests build documents from strings).
pub fn parse(doc: &Document) -> Result<Scenario> {
    Reader { doc }.scenario()
}

struct Reader<'a> {
    doc: &'a Document,
}

fn child(p: &[Seg], s: impl Into<Seg>) -> Vec<Seg> {
    let mut v = p.to_vec();
    v.push(s.into());
    v
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

impl Reader<'_> {
    fn err(&self, p: &[Seg], msg: impl Into<String>) -> Error {
        self.doc.error_at(p, msg)
    }

    fn object<'v>(&self, p: &[Seg], v: &'v Value, what: &str) -> Result<&'v Map<String, Value>> {
        match v {
            Value::Object(m) => Ok(m),
            other => Err(self.err(
                p,
                format!("expected {what} (a mapping), found {}", type_name(other)),
            )),
        }
    }

    fn keys(&self, p: &[Seg], m: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<()> {
        for k in m.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(self.err(
                    &child(p, k.as_str()),
                    format!(
                        "unknown field {k:?} in {what}, expected one of: {}",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn string(&self, p: &[Seg], v: &Value) -> Result<String> {
        match v {
            Value::String(s) => Ok(s.clone()),
            other => Err(self.err(p, format!("expected a string, found {}", type_name(other)))),
        }
    }

    fn opt_string(&self, p: &[Seg], m: &Map<String, Value>, k: &str) -> Result<Option<String>> {
        m.get(k).map(|v| self.string(&child(p, k), v)).transpose()
    }

    fn opt_bool(&self, p: &[Seg], m: &Map<String, Value>, k: &str) -> Result<Option<bool>> {
        match m.get(k) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.err(
                &child(p, k),
                format!("{k} must be true or false, found {}", type_name(other)),
            )),
        }
    }

    fn number(&self, p: &[Seg], k: &str, v: &Value) -> Result<f64> {
        match v {
            Value::Number(n) => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if !f.is_finite() || f < 0.0 {
                    Err(self.err(p, format!("{k} must be ≥ 0, found {n}")))
                } else {
                    Ok(f)
                }
            }
            other => Err(self.err(
                p,
                format!("{k} must be a number, found {}", type_name(other)),
            )),
        }
    }

    fn size(&self, p: &[Seg], k: &str, v: &Value) -> Result<usize> {
        let f = self.number(p, k, v)?;
        if f.fract() != 0.0 || f > 1e12 {
            return Err(self.err(
                p,
                format!("{k} must be a whole number of tokens, found {f}"),
            ));
        }
        Ok(f as usize)
    }

    fn opt_size(&self, p: &[Seg], m: &Map<String, Value>, k: &str) -> Result<Option<usize>> {
        m.get(k).map(|v| self.size(&child(p, k), k, v)).transpose()
    }

    fn list<'v>(&self, p: &[Seg], v: &'v Value, k: &str) -> Result<&'v [Value]> {
        match v {
            Value::Array(a) => Ok(a),
            other => Err(self.err(p, format!("{k} must be a list, found {}", type_name(other)))),
        }
    }

    fn tool_refs(&self, p: &[Seg], m: &Map<String, Value>, k: &str) -> Result<Vec<ToolRef>> {
        let Some(v) = m.get(k) else {
            return Ok(Vec::new());
        };
        let kp = child(p, k);
        self.list(&kp, v, k)?
            .iter()
            .enumerate()
            .map(|(i, item)| self.tool_ref(&child(&kp, i), item))
            .collect()
    }

    fn tool_ref(&self, p: &[Seg], v: &Value) -> Result<ToolRef> {
        let id = self.string(p, v)?;
        if id.is_empty() {
            return Err(self.err(p, "a tool id must not be empty"));
        }
        Ok(ToolRef {
            id,
            at: self.doc.locate(p),
        })
    }

    fn parsed<T: std::str::FromStr<Err = String>>(
        &self,
        p: &[Seg],
        m: &Map<String, Value>,
        k: &str,
    ) -> Result<Option<T>> {
        match self.opt_string(p, m, k)? {
            None => Ok(None),
            Some(s) => s.parse().map(Some).map_err(|e| self.err(&child(p, k), e)),
        }
    }

    fn choice<T: Copy>(
        &self,
        p: &[Seg],
        m: &Map<String, Value>,
        k: &str,
        options: &[(&str, T)],
    ) -> Result<Option<T>> {
        let Some(s) = self.opt_string(p, m, k)? else {
            return Ok(None);
        };
        options
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, t)| Some(*t))
            .ok_or_else(|| {
                let names: Vec<_> = options.iter().map(|(n, _)| *n).collect();
                self.err(
                    &child(p, k),
                    format!("unknown {k} {s:?}, expected one of: {}", names.join(", ")),
                )
            })
    }

    fn scenario(&self) -> Result<Scenario> {
        let root: Vec<Seg> = Vec::new();
        let m = self.object(&root, &self.doc.value, "a scenario")?;
        self.keys(&root, m, TOP_KEYS, "the scenario")?;
        let name = match self.opt_string(&root, m, "name")? {
            Some(n) if !n.trim().is_empty() => n,
            Some(_) => return Err(self.err(&child(&root, "name"), "name must not be empty")),
            None => self
                .doc
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scenario".into()),
        };
        let profile_name = self
            .opt_string(&root, m, "model")?
            .unwrap_or_else(|| profile::DEFAULT_PROFILE.to_string());
        let mut profile = profile::find(&profile_name).ok_or_else(|| {
            self.err(
                &child(&root, "model"),
                format!(
                    "unknown model profile {profile_name:?}, expected one of: {}",
                    profile::names().join(", ")
                ),
            )
        })?;
        if let Some(v) = m.get("model_overrides") {
            let p = child(&root, "model_overrides");
            let o = self.object(&p, v, "model_overrides")?;
            self.keys(&p, o, profile::OVERRIDE_KEYS, "model_overrides")?;
            for (k, v) in o {
                let kp = child(&p, k.as_str());
                let f = self.number(&kp, k, v)?;
                profile.set(k, f).map_err(|e| self.err(&kp, e))?;
            }
        }
        let catalogs = self.catalogs(&root, m)?;
        let deferred = match m.get("deferred") {
            Some(v) => self.deferred(&child(&root, "deferred"), v)?,
            None => DeferredSettings::default(),
        };
        let sizes = match m.get("sizes") {
            Some(v) => self.sizes(&child(&root, "sizes"), v)?,
            None => Sizes::default(),
        };
        let failures = match m.get("failures") {
            Some(v) => self.failures(&child(&root, "failures"), v)?,
            None => Failures::default(),
        };
        let conversation = match m.get("conversation") {
            Some(v) => {
                let mut count = 0;
                self.conversation(&child(&root, "conversation"), v, &mut count)?
            }
            None => {
                return Err(self.err(
                    &root,
                    "missing field \"conversation\": a scenario needs at least one turn",
                ));
            }
        };
        if !conversation.iter().any(|i| matches!(i, Item::Turn(_))) {
            return Err(self.err(
                &child(&root, "conversation"),
                "the conversation has no turn (a turn is a mapping with `user:`)",
            ));
        }
        let published = match m.get("published") {
            Some(v) => self.published(&child(&root, "published"), v)?,
            None => Vec::new(),
        };
        Ok(Scenario {
            name,
            description: self.opt_string(&root, m, "description")?,
            path: self.doc.path.clone(),
            tokenizer: self.parsed(&root, m, "tokenizer")?,
            render: self.parsed(&root, m, "render")?.unwrap_or_default(),
            profile,
            system_prompt: self.opt_string(&root, m, "system_prompt")?,
            system_prompt_tokens: self.opt_size(&root, m, "system_prompt_tokens")?,
            catalogs,
            deferred,
            sizes,
            failures,
            conversation,
            published,
        })
    }

    fn catalogs(&self, root: &[Seg], m: &Map<String, Value>) -> Result<Vec<CatalogEntry>> {
        let p = child(root, "catalogs");
        let Some(v) = m.get("catalogs") else {
            return Err(self.err(root, "missing field \"catalogs\": list the catalog files"));
        };
        let items = self.list(&p, v, "catalogs")?;
        if items.is_empty() {
            return Err(self.err(&p, "catalogs is empty: list at least one catalog file"));
        }
        let base = self
            .doc
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let ip = child(&p, i);
                // A bare string is a path.
                if let Value::String(s) = item {
                    return Ok(CatalogEntry {
                        path: base.join(s),
                        server: None,
                        connected: true,
                        at: self.doc.locate(&ip),
                    });
                }
                let o = self.object(&ip, item, "a catalog entry")?;
                self.keys(&ip, o, CATALOG_KEYS, "a catalog entry")?;
                let path = self
                    .opt_string(&ip, o, "path")?
                    .ok_or_else(|| self.err(&ip, "missing field \"path\" in a catalog entry"))?;
                Ok(CatalogEntry {
                    path: base.join(path),
                    server: self.opt_string(&ip, o, "server")?,
                    connected: self.opt_bool(&ip, o, "connected")?.unwrap_or(true),
                    at: self.doc.locate(&child(&ip, "path")),
                })
            })
            .collect()
    }

    fn deferred(&self, p: &[Seg], v: &Value) -> Result<DeferredSettings> {
        let m = self.object(p, v, "deferred settings")?;
        self.keys(p, m, DEFERRED_KEYS, "deferred")?;
        let mut d = DeferredSettings::default();
        if let Some(w) = m.get("when") {
            let wp = child(p, "when");
            let s = self.string(&wp, w)?;
            d.when = match s.as_str() {
                "always" => When::Always,
                other => match other.strip_prefix("auto:").map(str::parse::<f64>) {
                    Some(Ok(n)) if n.is_finite() && (0.0..=100.0).contains(&n) => When::Auto(n),
                    _ => {
                        return Err(self.err(
                            &wp,
                            format!(
                                "when must be \"always\" or \"auto:N\" with N a percentage 0-100, found {s:?}"
                            ),
                        ));
                    }
                },
            };
        }
        if let Some(b) = self.opt_bool(p, m, "defer_mcp")? {
            d.defer_mcp = b;
        }
        let builtins = self.tool_refs(p, m, "defer_builtins")?;
        d.defer_all_builtins = builtins.iter().any(|r| r.id == "*");
        d.defer_builtins = builtins.into_iter().filter(|r| r.id != "*").collect();
        d.always_load = self.tool_refs(p, m, "always_load")?;
        d.always_load_servers = self.tool_refs(p, m, "always_load_servers")?;
        if let Some(s) = self.parsed(p, m, "scorer")? {
            d.scorer = s;
        }
        if let Some(n) = self.opt_size(p, m, "max_results")? {
            if n == 0 {
                return Err(self.err(&child(p, "max_results"), "max_results must be ≥ 1"));
            }
            d.max_results = n;
        }
        if let Some(x) = self.choice(
            p,
            m,
            "discovery",
            &[
                ("model-search", Discovery::ModelSearch),
                ("select", Discovery::Select),
                ("auto-retrieve", Discovery::AutoRetrieve),
            ],
        )? {
            d.discovery = x;
        }
        if let Some(x) = self.choice(
            p,
            m,
            "listing",
            &[
                ("names", Listing::Names),
                ("descriptions", Listing::Descriptions),
                ("servers", Listing::Servers),
            ],
        )? {
            d.listing = x;
        }
        if let Some(x) = self.choice(
            p,
            m,
            "list_style",
            &[("list", ListStyle::List), ("delta", ListStyle::Delta)],
        )? {
            d.list_style = x;
        }
        if let Some(x) = self.choice(
            p,
            m,
            "reveal",
            &[
                ("append", Reveal::Append),
                ("tools-list", Reveal::ToolsList),
            ],
        )? {
            d.reveal = x;
        }
        if let Some(v) = m.get("retry") {
            let rp = child(p, "retry");
            d.retry = self
                .list(&rp, v, "retry")?
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let sp = child(&rp, i);
                    match self.string(&sp, s)?.as_str() {
                        "rephrase" => Ok(RetryStep::Rephrase),
                        "select" => Ok(RetryStep::Select),
                        other => Err(self.err(
                            &sp,
                            format!("unknown retry step {other:?}, expected rephrase or select"),
                        )),
                    }
                })
                .collect::<Result<_>>()?;
        }
        if let Some(v) = m.get("depends_on") {
            let dp = child(p, "depends_on");
            let o = self.object(&dp, v, "depends_on (tool id: [ids])")?;
            for (k, _) in o {
                let kp = child(&dp, k.as_str());
                let deps = self.tool_refs(&dp, o, k)?;
                d.depends_on.push((
                    ToolRef {
                        id: k.clone(),
                        at: self.doc.locate(&kp),
                    },
                    deps,
                ));
            }
        }
        Ok(d)
    }

    fn sizes(&self, p: &[Seg], v: &Value) -> Result<Sizes> {
        let m = self.object(p, v, "sizes")?;
        self.keys(p, m, SIZE_KEYS, "sizes")?;
        Ok(Sizes {
            tool_overhead: self.opt_size(p, m, "tool_overhead")?,
            search_tool: self.opt_size(p, m, "search_tool")?,
            deferred_list: self.opt_size(p, m, "deferred_list")?,
            call: self.opt_size(p, m, "call")?,
            search_call: self.opt_size(p, m, "search_call")?,
            search_result_base: self.opt_size(p, m, "search_result_base")?,
            search_result_per_tool: self.opt_size(p, m, "search_result_per_tool")?,
            result: self.opt_size(p, m, "result")?,
            error_result: self.opt_size(p, m, "error_result")?,
            reply: self.opt_size(p, m, "reply")?,
        })
    }

    fn failures(&self, p: &[Seg], v: &Value) -> Result<Failures> {
        let m = self.object(p, v, "failures")?;
        self.keys(p, m, FAILURE_KEYS, "failures")?;
        let rate = match m.get("premature_call_rate") {
            Some(v) => {
                let rp = child(p, "premature_call_rate");
                let r = self.number(&rp, "premature_call_rate", v)?;
                if r > 1.0 {
                    return Err(self.err(&rp, "premature_call_rate must be between 0 and 1"));
                }
                r
            }
            None => 0.0,
        };
        Ok(Failures {
            premature_call_rate: rate,
            seed: self.opt_size(p, m, "seed")?.unwrap_or(0) as u64,
        })
    }

    fn conversation(&self, p: &[Seg], v: &Value, turns: &mut usize) -> Result<Vec<Item>> {
        let items = self.list(p, v, "conversation")?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let ip = child(p, i);
            let m = self.object(&ip, item, "a turn (user:) or an event (event:)")?;
            if m.contains_key("event") {
                out.push(Item::Event(self.event(&ip, m)?));
                continue;
            }
            self.keys(&ip, m, TURN_KEYS, "a turn")?;
            let repeat = self.opt_size(&ip, m, "repeat")?.unwrap_or(1);
            let turn = self.turn(&ip, m)?;
            *turns += repeat;
            if *turns > MAX_TURNS {
                return Err(self.err(
                    &ip,
                    format!("more than {MAX_TURNS} turns after expanding repeat"),
                ));
            }
            for _ in 0..repeat {
                out.push(Item::Turn(Box::new(turn.clone())));
            }
        }
        Ok(out)
    }

    fn turn(&self, p: &[Seg], m: &Map<String, Value>) -> Result<Turn> {
        let user = self
            .opt_string(p, m, "user")?
            .ok_or_else(|| self.err(p, "a turn needs `user:` (the user's message)"))?;
        let mut calls = Vec::new();
        if let Some(v) = m.get("calls") {
            let cp = child(p, "calls");
            for (i, c) in self.list(&cp, v, "calls")?.iter().enumerate() {
                let ip = child(&cp, i);
                let o = self.object(&ip, c, "a call")?;
                self.keys(&ip, o, CALL_KEYS, "a call")?;
                let tool = match o.get("tool") {
                    Some(t) => self.tool_ref(&child(&ip, "tool"), t)?,
                    None => return Err(self.err(&ip, "a call needs `tool:` (a tool id)")),
                };
                let input = match o.get("input") {
                    Some(v @ Value::Object(_)) => Some(v.clone()),
                    Some(other) => {
                        return Err(self.err(
                            &child(&ip, "input"),
                            format!("input must be a mapping, found {}", type_name(other)),
                        ));
                    }
                    None => None,
                };
                let at = match o.get("query") {
                    Some(_) => self.doc.locate(&child(&ip, "query")),
                    None => tool.at,
                };
                let loads = match o.get("loads") {
                    Some(_) => Some(self.tool_refs(&ip, o, "loads")?),
                    None => None,
                };
                let subagent = match o.get("subagent") {
                    Some(v) => Some(self.subagent(&child(&ip, "subagent"), v)?),
                    None => None,
                };
                calls.push(Call {
                    at,
                    tool,
                    query: self.opt_string(&ip, o, "query")?,
                    result_tokens: self.opt_size(&ip, o, "result_tokens")?,
                    call_tokens: self.opt_size(&ip, o, "call_tokens")?,
                    input,
                    parallel: self.opt_bool(&ip, o, "parallel")?.unwrap_or(false),
                    loads,
                    subagent,
                });
            }
        }
        let subagent = match m.get("subagent") {
            Some(v) => Some(self.subagent(&child(p, "subagent"), v)?),
            None => None,
        };
        Ok(Turn {
            user,
            at: self.doc.locate(&child(p, "user")),
            tokens: self.opt_size(p, m, "tokens")?,
            reply_tokens: self.opt_size(p, m, "reply_tokens")?,
            calls,
            subagent,
        })
    }

    fn subagent(&self, p: &[Seg], v: &Value) -> Result<Subagent> {
        let m = self.object(p, v, "a subagent")?;
        self.keys(p, m, SUBAGENT_KEYS, "a subagent")?;
        let tools = match m.get("tools") {
            None => None,
            Some(Value::String(s)) if s == "*" => None,
            Some(_) => {
                let refs = self.tool_refs(p, m, "tools")?;
                if refs.iter().any(|r| r.id == "*") {
                    None
                } else {
                    Some(refs)
                }
            }
        };
        let mut count = 0;
        let conversation = match m.get("conversation") {
            Some(v) => self.conversation(&child(p, "conversation"), v, &mut count)?,
            None => return Err(self.err(p, "a subagent needs its own `conversation:`")),
        };
        if let Some((i, _)) = conversation.iter().enumerate().find(|(_, it)| match it {
            Item::Turn(t) => t.subagent.is_some(),
            Item::Event(_) => false,
        }) {
            return Err(self.err(
                &child(&child(p, "conversation"), i),
                "a subagent cannot spawn another subagent",
            ));
        }
        Ok(Subagent {
            tools,
            system_prompt_tokens: self.opt_size(p, m, "system_prompt_tokens")?,
            result_tokens: self.opt_size(p, m, "result_tokens")?,
            conversation,
        })
    }

    fn event(&self, p: &[Seg], m: &Map<String, Value>) -> Result<Event> {
        self.keys(p, m, EVENT_KEYS, "an event")?;
        let kind = self
            .opt_string(p, m, "event")?
            .expect("caller checked the key");
        let server = || -> Result<String> {
            self.opt_string(p, m, "server")?
                .ok_or_else(|| self.err(p, format!("a {kind} event needs `server:`")))
        };
        let only = |allowed: &[&str]| -> Result<()> {
            for k in m.keys() {
                if k != "event" && !allowed.contains(&k.as_str()) {
                    return Err(self.err(
                        &child(p, k.as_str()),
                        format!("field {k:?} does not apply to a {kind} event"),
                    ));
                }
            }
            Ok(())
        };
        match kind.as_str() {
            "connect" | "disconnect" => {
                only(&["server"])?;
                let server = server()?;
                let at = self.doc.locate(&child(p, "server"));
                Ok(if kind == "connect" {
                    Event::Connect { server, at }
                } else {
                    Event::Disconnect { server, at }
                })
            }
            "clear" => {
                only(&[])?;
                Ok(Event::Clear)
            }
            "compact" => {
                only(&["summary_tokens", "keep_discovered"])?;
                Ok(Event::Compact {
                    summary_tokens: self
                        .opt_size(p, m, "summary_tokens")?
                        .ok_or_else(|| self.err(p, "a compact event needs `summary_tokens:`"))?,
                    keep_discovered: self.opt_bool(p, m, "keep_discovered")?.unwrap_or(true),
                })
            }
            "resume" => {
                only(&["rediscover"])?;
                Ok(Event::Resume {
                    rediscover: self.opt_bool(p, m, "rediscover")?.unwrap_or(true),
                })
            }
            other => Err(self.err(
                &child(p, "event"),
                format!(
                    "unknown event {other:?}, expected one of: connect, disconnect, clear, compact, resume"
                ),
            )),
        }
    }

    fn published(&self, p: &[Seg], v: &Value) -> Result<Vec<Published>> {
        self.list(p, v, "published")?
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let ip = child(p, i);
                let o = self.object(&ip, item, "a published figure")?;
                self.keys(&ip, o, PUBLISHED_KEYS, "a published figure")?;
                let num = |k: &str| -> Result<Option<f64>> {
                    o.get(k)
                        .map(|v| self.number(&child(&ip, k), k, v))
                        .transpose()
                };
                let metric = self
                    .opt_string(&ip, o, "metric")?
                    .unwrap_or_else(|| "first_request_tokens".into());
                if !PUBLISHED_METRICS.contains(&metric.as_str()) {
                    return Err(self.err(
                        &child(&ip, "metric"),
                        format!("metric must be one of: {}", PUBLISHED_METRICS.join(", ")),
                    ));
                }
                Ok(Published {
                    claim: self
                        .opt_string(&ip, o, "claim")?
                        .ok_or_else(|| self.err(&ip, "a published figure needs `claim:`"))?,
                    source: self
                        .opt_string(&ip, o, "source")?
                        .ok_or_else(|| self.err(&ip, "a published figure needs `source:`"))?,
                    eager_tokens: num("eager_tokens")?,
                    deferred_tokens: num("deferred_tokens")?,
                    metric,
                })
            })
            .collect()
    }
}
