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

/// Per-tool facts derived from the scenario's deferred settings.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub deferrable: Vec<bool>,
    pub deps: Vec<Vec<usize>>,
    pub server_of: Vec<Option<usize>>,
    pub servers: Vec<String>,
    pub initially_connected: Vec<bool>,
    /// The catalog's own `ToolSearch`, when it has one.
    pub search_tool: Option<usize>,
}

/// A scenario's catalogs, counts and scorers, built once and reusable by every scenario that
/// shares the catalogs and the `deferred` settings (e.g. many generated conversations).
pub struct Prepared {
    catalog: Arc<Catalog>,
    tokens: ToolTokens,
    /// How every request part is counted.
    counter: CounterKind,
    scorer: Box<dyn Scorer>,
    /// The keyword scorer for `select:` queries when `scorer` is another kind.
    select_scorer: Option<Box<dyn Scorer>>,
    search_tool_tokens: usize,
    /// Where `search_tool_tokens` comes from: `sizes`, `catalog`, the provider's measured
    /// search overhead, or the counter counting toolbudget's default ToolSearch.
    search_tool_source: String,
    search_tool_name: String,
    /// The system prompt with the counter's framing and the reply priming of a request.
    system_tokens: usize,
    /// A subagent's system prompt when its scenario gives none (a calibration sets it).
    subagent_system_tokens: Option<usize>,
    /// Sending any tools: the model's tool-use preamble and the counter's tools framing.
    overhead_tokens: usize,
    /// Provider tokens per counted token (1 unless a calibration says otherwise): applied to
    /// every counted part of a request, not to the system prompt or the tool-use preamble.
    scale: f64,
    pub(crate) plan: Plan,
    /// Counts the anthropic-api counter fetched: they replace local counting of these texts.
    exact: Option<ExactCounts>,
    list_memo: Mutex<HashMap<(u64, u8), usize>>,
    /// Counts of short texts (user messages, calls, search framing), each counted once.
    text_memo: Mutex<HashMap<String, usize>>,
    message_memo: Mutex<HashMap<String, usize>>,
}

impl Prepared {
    /// The one way to prepare a scenario: counted by `counter`, its scorers built by `build`;
    /// the builder's other settings say what is already at hand and how sizes are set.
    pub fn builder<'a>(
        scenario: &'a Scenario,
        counter: CounterKind,
        build: &'a ScorerBuilder<'a>,
    ) -> Prepare<'a> {
        Prepare {
            scenario,
            counter,
            build,
            catalog: None,
            tokens: None,
            exact: None,
            sizing: Sizing::Counted,
        }
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }
    pub fn tokens(&self) -> &ToolTokens {
        &self.tokens
    }
    pub fn counter(&self) -> CounterKind {
        self.counter
    }
    pub fn scorer(&self) -> &dyn Scorer {
        self.scorer.as_ref()
    }
    /// The scorer of `select:` queries: the keyword scorer, or the scenario's own when it is one.
    pub fn select_scorer(&self) -> &dyn Scorer {
        self.select_scorer
            .as_deref()
            .unwrap_or(self.scorer.as_ref())
    }
    pub fn search_tool_tokens(&self) -> usize {
        self.search_tool_tokens
    }
    pub fn search_tool_source(&self) -> &str {
        &self.search_tool_source
    }
    pub fn system_tokens(&self) -> usize {
        self.system_tokens
    }
    pub fn overhead_tokens(&self) -> usize {
        self.overhead_tokens
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
}

/// How a prepared scenario's system prompt and scale are set.
#[derive(Debug, Clone, Copy)]
pub enum Sizing<'c> {
    /// As counted: the scenario's system prompt, scale 1.
    Counted,
    /// A calibration's fitted system prompts and scale (its profile and counter match).
    Calibrated(&'c Calibration),
    /// A logged session replayed as it was, without a calibration: scale 1, and the system
    /// prompt the scenario records (a logged one) or 0.
    Raw,
}

/// The settings of [`Prepared::builder`].
pub struct Prepare<'a> {
    scenario: &'a Scenario,
    counter: CounterKind,
    build: &'a ScorerBuilder<'a>,
    catalog: Option<Arc<Catalog>>,
    tokens: Option<ToolTokens>,
    exact: Option<ExactCounts>,
    sizing: Sizing<'a>,
}

impl<'a> Prepare<'a> {
    /// The scenario's catalogs, already loaded (shared with other scenarios).
    pub fn catalog(mut self, catalog: Arc<Catalog>) -> Self {
        self.catalog = Some(catalog);
        self
    }
    /// The tools' counts, already counted (tests give fixed counts).
    pub fn tokens(mut self, tokens: ToolTokens) -> Self {
        self.tokens = Some(tokens);
        self
    }
    /// What the anthropic-api counter measured.
    pub fn exact(mut self, exact: Option<ExactCounts>) -> Self {
        self.exact = exact;
        self
    }
    pub fn sizing(mut self, sizing: Sizing<'a>) -> Self {
        self.sizing = sizing;
        self
    }

    /// Loads what is not at hand (catalogs, counts under a local counter), validates the
    /// conversation against the catalog and builds the scorers.
    pub fn build(self) -> Result<Prepared> {
        let catalog = match self.catalog {
            Some(c) => c,
            None => Arc::new(load_scenario_catalogs(self.scenario)?),
        };
        let tokens = match self.tokens {
            Some(t) => t,
            None if self.counter.is_local() => self.counter.tools(&catalog),
            // Only `simulate` reaches the API (key, cache file); the report counts locally.
            None => {
                return Err(Error::input(
                    &self.scenario.path,
                    None,
                    format!(
                        "counter {} counts through Anthropic's API: run this scenario with \
                         `toolbudget simulate` (ANTHROPIC_API_KEY or a filled --api-cache)",
                        self.counter
                    ),
                ));
            }
        };
        let mut prepared = prepare_shared(self.scenario, catalog, tokens, self.exact, self.build)?;
        match self.sizing {
            Sizing::Counted => {}
            Sizing::Calibrated(c) => {
                prepared.system_tokens = c.system_prompt_tokens.round().max(0.0) as usize;
                prepared.subagent_system_tokens = c
                    .subagent_system_prompt_tokens
                    .map(|s| s.round().max(0.0) as usize);
                prepared.scale = c.scale;
            }
            Sizing::Raw => {
                if self.scenario.system_prompt_tokens.is_none() {
                    prepared.system_tokens = 0;
                }
                prepared.subagent_system_tokens = None;
                prepared.scale = 1.0;
            }
        }
        Ok(prepared)
    }
}

/// What the anthropic-api counter measured for one scenario (see `counter::api`): the system
/// prompt with the request framing, each user message, the fixed cost of sending tools and
/// the default search tool. Other texts (calls, search framing, lists) use the estimate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExactCounts {
    pub system: usize,
    pub messages: HashMap<String, usize>,
    pub tools_fixed: usize,
    pub search_tool: usize,
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
    if let Some(c) = scenario.catalogs.iter().find(|c| !c.path.is_file()) {
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

/// Loads the scenario's catalogs, counts every tool once under a local counter, and builds
/// its scorers: [`Prepared::builder`] with nothing at hand.
pub fn prepare(
    scenario: &Scenario,
    counter: CounterKind,
    build: &ScorerBuilder<'_>,
) -> Result<Prepared> {
    Prepared::builder(scenario, counter, build).build()
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

/// The same file under the same server twice would only surface as "duplicate tool id" inside
/// the catalog; the mistake is the scenario's second entry, so point there.
fn check_listed_once(scenario: &Scenario) -> Result<()> {
    let key = |c: &scenario::CatalogEntry| {
        (
            std::fs::canonicalize(&c.path).unwrap_or_else(|_| c.path.clone()),
            c.server.clone(),
        )
    };
    let keys: Vec<_> = scenario.catalogs.iter().map(key).collect();
    for (i, k) in keys.iter().enumerate() {
        if let Some(first) = keys[..i].iter().position(|f| f == k) {
            let at = scenario.catalogs[first]
                .at
                .map_or(String::new(), |p| format!(" at line {}", p.line));
            return Err(Error::input(
                &scenario.path,
                scenario.catalogs[i].at,
                format!(
                    "catalogs[{i}]: {} is listed again (already catalogs[{first}]{at}); list each \
                     catalog once, or give the second a different `server:`",
                    scenario.catalogs[i].path.display()
                ),
            ));
        }
    }
    Ok(())
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

/// A scenario's counts and scorers over its catalog, sized as counted.
fn prepare_shared(
    scenario: &Scenario,
    catalog: Arc<Catalog>,
    tokens: ToolTokens,
    exact: Option<ExactCounts>,
    build: &ScorerBuilder<'_>,
) -> Result<Prepared> {
    let counter = tokens.counter;
    let plan = plan(scenario, &catalog)?;
    validate_conversation(scenario, &catalog, &plan)?;
    let d = &scenario.deferred;
    let scorer = build(&d.scorer, catalog.clone(), &d.bm25, d.scorer_dir.as_deref())?;
    let needs_select = d.discovery == scenario::Discovery::Select
        || d.retry.contains(&scenario::RetryStep::Select);
    let select_scorer = if needs_select && d.scorer.builtin() != Some(ScorerKind::Keyword) {
        let keyword = ScorerSpec::Builtin(ScorerKind::Keyword);
        Some(build(&keyword, catalog.clone(), &d.bm25, None)?)
    } else {
        None
    };
    let system = scenario.system_prompt.as_deref();
    let system_tokens = match (scenario.system_prompt_tokens, &exact) {
        (Some(n), _) => counter.system_from_count(n),
        (None, Some(e)) => e.system,
        (None, None) => counter.system(system),
    };
    let overhead_tokens = scenario
        .sizes
        .tool_overhead
        .unwrap_or_else(|| match &exact {
            Some(e) => e.tools_fixed,
            None => {
                scenario.profile.preamble(counter, scenario.tool_choice)
                    + counter.tools_fixed(system)
            }
        });
    let (mut search_tool_tokens, mut search_tool_source) =
        search_tool(scenario, &plan, &tokens, overhead_tokens, exact.as_ref());
    if d.call_bridge && scenario.sizes.search_tool.is_none() {
        // The bridge's own definition rides beside the search tool on every deferred request.
        search_tool_tokens += counter.tool(&call_bridge_tool());
        search_tool_source.push_str(" + tool_call");
    }
    Ok(Prepared {
        catalog,
        tokens,
        counter,
        scorer,
        select_scorer,
        search_tool_tokens,
        search_tool_source,
        search_tool_name: d
            .search_tool_name
            .clone()
            .unwrap_or_else(|| SEARCH_TOOL.into()),
        system_tokens,
        subagent_system_tokens: None,
        overhead_tokens,
        scale: 1.0,
        plan,
        exact,
        list_memo: Mutex::new(HashMap::new()),
        text_memo: Mutex::new(HashMap::new()),
        message_memo: Mutex::new(HashMap::new()),
    })
}

/// The search tool's definition: given in `sizes`, the catalog's own, the provider's
/// measured tool search (under a provider counter; the measurement holds the tool-use preamble
/// and framing, which `overhead` already counts), or toolbudget's ToolSearch counted.
fn search_tool(
    scenario: &Scenario,
    plan: &Plan,
    tokens: &ToolTokens,
    overhead: usize,
    exact: Option<&ExactCounts>,
) -> (usize, String) {
    let counter = tokens.counter;
    if let Some(n) = scenario.sizes.search_tool {
        return (n, "sizes".into());
    }
    if let Some(i) = plan.search_tool {
        return (tokens.get(i), "catalog".into());
    }
    let provider = !matches!(counter, CounterKind::O200kJson | CounterKind::Cl100kJson);
    if provider
        && scenario.deferred.listing == scenario::Listing::Stubs
        && let Some(o) = scenario.profile.flat_search_overhead()
    {
        // Measured beyond the stubs and the tools block's framing (which the stubs' block
        // carries): only the model's preamble is already counted.
        let preamble =
            overhead.saturating_sub(counter.tools_fixed(scenario.system_prompt.as_deref()));
        return (
            o.tokens.saturating_sub(preamble),
            format!("{} ({} measured)", o.variant, o.tokens),
        );
    }
    // A provider's measured search overhead stands for its own server-side search, which a
    // built-in scorer models; the user's own scorer is a client-side search tool.
    if provider
        && let Some(kind) = scenario.deferred.scorer.builtin()
        && let Some(o) = scenario.profile.search_overhead(kind)
    {
        return (
            o.tokens.saturating_sub(overhead),
            format!("{} ({} measured)", o.variant, o.tokens),
        );
    }
    match exact {
        Some(e) => (e.search_tool, "ToolSearch (count_tokens)".into()),
        None => (
            counter.tool(&default_search_tool()),
            format!("ToolSearch ({counter})"),
        ),
    }
}

impl Prepared {
    /// The index of a tool id already validated against the catalog.
    pub(crate) fn index(&self, id: &str) -> usize {
        self.catalog
            .index_of(id)
            .expect("tool ids are validated before replay")
    }

    /// A counted size in the provider's tokens (`scale`, rounded).
    pub fn scaled(&self, n: usize) -> usize {
        if self.scale == 1.0 {
            n
        } else {
            (n as f64 * self.scale).round() as usize
        }
    }

    /// A user message given as text: the API's count when it fetched one, else the counter's
    /// (content and framing), memoized.
    pub(crate) fn message_tokens(&self, text: &str) -> usize {
        if let Some(&n) = self.exact.as_ref().and_then(|e| e.messages.get(text)) {
            return n;
        }
        if let Some(&n) = self.message_memo.lock().expect("not poisoned").get(text) {
            return n;
        }
        let n = self.counter.message(text);
        let mut memo = self.message_memo.lock().expect("not poisoned");
        if memo.len() < 100_000 {
            memo.insert(text.to_string(), n);
        }
        n
    }

    /// Raw text (a call, search framing, a list) under the scenario's counter, memoized
    /// (texts repeat across turns and conversations).
    pub(crate) fn count_text(&self, text: &str) -> usize {
        if let Some(&n) = self.text_memo.lock().expect("not poisoned").get(text) {
            return n;
        }
        let n = self.counter.text(text);
        let mut memo = self.text_memo.lock().expect("not poisoned");
        // Bound the memo: long unique texts are rare and cheap to recount.
        if memo.len() < 100_000 {
            memo.insert(text.to_string(), n);
        }
        n
    }

    /// Tokens of the deferred list for one listed set, counted once per set.
    pub(crate) fn list_tokens(
        &self,
        sig: u64,
        listing: scenario::Listing,
        count: impl FnOnce() -> usize,
    ) -> usize {
        let key = (sig, listing as u8);
        if let Some(&n) = self.list_memo.lock().expect("not poisoned").get(&key) {
            return n;
        }
        let n = count();
        self.list_memo.lock().expect("not poisoned").insert(key, n);
        n
    }

    /// The rephrased query of the retry policy: the server and the tool's name split into
    /// words (`mcp__tracker__create_issue` → `tracker create issue`, `WebFetch` → `web fetch`).
    pub(crate) fn name_query(&self, tool: usize) -> String {
        let t = self.catalog.get(tool);
        let mut words: Vec<String> = Vec::new();
        for part in t.server.iter().chain(std::iter::once(&t.name)) {
            text::words(part, Camel::LowerToUpper, &mut words);
        }
        words.join(" ")
    }
}

fn unknown(scenario: &Scenario, r: &scenario::ToolRef, what: &str) -> Error {
    Error::input(
        &scenario.path,
        r.at,
        format!(
            "{what} {:?}: no catalog of this scenario defines that tool",
            r.id
        ),
    )
}

fn lookup(
    scenario: &Scenario,
    catalog: &Catalog,
    r: &scenario::ToolRef,
    what: &str,
) -> Result<usize> {
    catalog
        .index_of(&r.id)
        .ok_or_else(|| unknown(scenario, r, what))
}

fn plan(scenario: &Scenario, catalog: &Catalog) -> Result<Plan> {
    let servers: Vec<String> = catalog.servers().iter().map(|s| s.name.clone()).collect();
    for s in &scenario.deferred.always_load_servers {
        if !servers.contains(&s.id) {
            return Err(Error::input(
                &scenario.path,
                s.at,
                format!(
                    "always_load_servers names server {:?}, which no catalog has (servers: {})",
                    s.id,
                    servers.join(", ")
                ),
            ));
        }
    }
    let server_of: Vec<Option<usize>> = catalog
        .tools()
        .iter()
        .map(|t| {
            t.server
                .as_ref()
                .map(|s| servers.iter().position(|x| x == s).expect("listed"))
        })
        .collect();
    // Servers whose catalog entry says `connected: false` start disconnected.
    let mut initially_connected = vec![true; servers.len()];
    for entry in scenario.catalogs.iter().filter(|c| !c.connected) {
        for (i, t) in catalog.tools().iter().enumerate() {
            if t.origin.as_ref().is_some_and(|o| o.path == entry.path)
                && let Some(s) = server_of[i]
            {
                initially_connected[s] = false;
            }
        }
    }
    Ok(Plan {
        deferrable: deferrable(scenario, catalog, &server_of)?,
        deps: dependencies(scenario, catalog)?,
        server_of,
        servers,
        initially_connected,
        search_tool: catalog.search_tool(),
    })
}

/// Which tools the deferred mode may defer. The first level that decides wins:
/// 1. the search tool is never deferred;
/// 2. the tool: the scenario's `always_load` / `defer_builtins` naming it, then the catalog
///    tool's own `always_load` (MCP `_meta: {"anthropic/alwaysLoad": true}`) or
///    `should_defer` (`defer_loading` in a tools array);
/// 3. its server: the scenario's `always_load_servers`, then the catalog server's
///    `always_load` or `should_defer`;
/// 4. the client's default: MCP tools per `defer_mcp`, built-ins per `defer_builtins: ['*']`.
fn deferrable(
    scenario: &Scenario,
    catalog: &Catalog,
    server_of: &[Option<usize>],
) -> Result<Vec<bool>> {
    let n = catalog.len();
    let d = &scenario.deferred;
    let mut tool_level: Vec<Option<bool>> = catalog.tools().iter().map(Tool::defer).collect();
    for r in &d.defer_builtins {
        let i = lookup(scenario, catalog, r, "defer_builtins names unknown tool")?;
        if catalog.get(i).is_mcp() {
            return Err(Error::input(
                &scenario.path,
                r.at,
                format!(
                    "defer_builtins names {:?}, an MCP tool (MCP tools follow defer_mcp)",
                    r.id
                ),
            ));
        }
        tool_level[i] = Some(true);
    }
    for r in &d.always_load {
        tool_level[lookup(scenario, catalog, r, "always_load names unknown tool")?] = Some(false);
    }
    let server_level: Vec<Option<bool>> = catalog
        .servers()
        .iter()
        .map(|s| {
            if d.always_load_servers.iter().any(|r| r.id == s.name) {
                Some(false)
            } else {
                s.flags.defer()
            }
        })
        .collect();
    let search_tool = catalog.search_tool();
    Ok((0..n)
        .map(|i| {
            if Some(i) == search_tool {
                return false;
            }
            let server = server_of[i].and_then(|s| server_level[s]);
            tool_level[i].or(server).unwrap_or_else(|| {
                if catalog.get(i).is_mcp() {
                    d.defer_mcp
                } else {
                    d.defer_all_builtins
                }
            })
        })
        .collect())
}

/// Tools loaded together with each tool: the catalog's `depends_on`, then the scenario's.
fn dependencies(scenario: &Scenario, catalog: &Catalog) -> Result<Vec<Vec<usize>>> {
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); catalog.len()];
    for (i, t) in catalog.tools().iter().enumerate() {
        for dep in &t.depends_on {
            // The catalog loader keeps ids as written; a dangling one is a catalog mistake.
            let j = catalog.index_of(dep).ok_or_else(|| {
                let message = format!("{} depends_on {dep:?}, which no catalog defines", t.id);
                match &t.origin {
                    Some(o) => Error::input(&o.path, o.position(), message),
                    None => Error::usage(message),
                }
            })?;
            deps[i].push(j);
        }
    }
    let what = "depends_on names unknown tool";
    for (tool, ds) in &scenario.deferred.depends_on {
        let i = lookup(scenario, catalog, tool, what)?;
        for dep in ds {
            let j = lookup(scenario, catalog, dep, what)?;
            if !deps[i].contains(&j) {
                deps[i].push(j);
            }
        }
    }
    Ok(deps)
}

/// Every tool a conversation names exists, and every event names a known server.
fn validate_conversation(scenario: &Scenario, catalog: &Catalog, plan: &Plan) -> Result<()> {
    fn walk(
        scenario: &Scenario,
        catalog: &Catalog,
        plan: &Plan,
        items: &[scenario::Item],
    ) -> Result<()> {
        for item in items {
            match item {
                scenario::Item::Turn(t) => {
                    for c in &t.calls {
                        validate_call(scenario, catalog, c)?;
                        if let Some(s) = &c.subagent {
                            validate_subagent(scenario, catalog, plan, s)?;
                        }
                    }
                    if let Some(s) = &t.subagent {
                        validate_subagent(scenario, catalog, plan, s)?;
                    }
                }
                scenario::Item::Event(
                    scenario::Event::Connect { server: s, at }
                    | scenario::Event::Disconnect { server: s, at },
                ) => {
                    if !plan.servers.contains(s) {
                        return Err(Error::input(
                            &scenario.path,
                            *at,
                            format!(
                                "event names server {s:?}, which no catalog has (servers: {})",
                                plan.servers.join(", ")
                            ),
                        ));
                    }
                }
                scenario::Item::Event(_) => {}
            }
        }
        Ok(())
    }
    fn validate_subagent(
        scenario: &Scenario,
        catalog: &Catalog,
        plan: &Plan,
        s: &scenario::Subagent,
    ) -> Result<()> {
        for r in s.tools.iter().flatten() {
            if catalog.index_of(&r.id).is_none() {
                return Err(unknown(scenario, r, "subagent tool"));
            }
        }
        walk(scenario, catalog, plan, &s.conversation)
    }
    walk(scenario, catalog, plan, &scenario.conversation)
}

/// A call names a known tool; the search tool only as a recorded search (`loads:`).
fn validate_call(scenario: &Scenario, catalog: &Catalog, c: &scenario::Call) -> Result<()> {
    if c.tool.id == SEARCH_TOOL {
        let Some(loads) = &c.loads else {
            return Err(Error::input(
                &scenario.path,
                c.tool.at,
                format!(
                    "{SEARCH_TOOL} is the search tool: the simulator makes its calls; name the tool the turn needs (or record a real search with `loads:`)"
                ),
            ));
        };
        for r in loads {
            if catalog.index_of(&r.id).is_none() {
                return Err(unknown(scenario, r, "loads names unknown tool"));
            }
        }
        return Ok(());
    }
    if catalog.index_of(&c.tool.id).is_none() {
        return Err(unknown(scenario, &c.tool, "call to tool"));
    }
    if c.loads.is_some() {
        return Err(Error::input(
            &scenario.path,
            c.tool.at,
            format!("`loads:` records a search: it belongs on a call of {SEARCH_TOOL}"),
        ));
    }
    Ok(())
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
