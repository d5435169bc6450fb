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
use serde_json::{Map, Value};

use super::profile::{self, Override, Profile};
use crate::counter::{CounterKind, ToolChoice};
use crate::document::{Document, Seg};
use crate::error::{Error, Position, Result};
use crate::path;
use crate::search::ScorerKind;
use crate::search::bm25::Bm25Params;
use crate::search::spec::ScorerSpec;
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
    /// Third-party data kept outside the repository (`../shared/data`): when the file is
    /// absent, `report` leaves the scenario out with a note (`simulate` still refuses it).
    pub optional: bool,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reveal {
    /// A discovered definition is appended to the conversation (`tool_reference` expansion):
    /// the cached prefix survives.
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
            reveal: Reveal::Append,
            retry: vec![RetryStep::Rephrase, RetryStep::Select],
            depends_on: Vec::new(),
            bm25: Bm25Params::default(),
        }
    }
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

/// Most turns a scenario may expand to (after `repeat`).
pub const MAX_TURNS: usize = 100_000;
/// Most requests a whole scenario may expand to, counted before anything is expanded: every
/// turn's user request and calls, times its `repeat`, subagents' conversations included (a
/// repeated turn that holds a repeated subagent multiplies). One mode's rows at this size take
/// about 100 MB.
pub const MAX_WORK_REQUESTS: u64 = 500_000;

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

/// Reads and validates a scenario file.
pub fn load_scenario(path: &Path) -> Result<Scenario> {
    let doc = Document::read(path)?;
    parse(&doc)
}

/// Reads every scenario of one run. Names must be unique within a run — rows, charts and
/// report sections are keyed by name (and chart files by its slug) — so a second file using a
/// name (or a name with the same file-name slug) is refused, naming both files.
pub fn load_scenarios(paths: &[PathBuf]) -> Result<Vec<Scenario>> {
    let mut out: Vec<Scenario> = Vec::with_capacity(paths.len());
    for path in paths {
        let sc = load_scenario(path)?;
        let slug = crate::report::slug(&sc.name);
        if let Some(first) = out
            .iter()
            .find(|o| o.name == sc.name || crate::report::slug(&o.name) == slug)
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
    let raw: RawScenario = doc.decode(&[], &doc.value)?;
    Reader { doc }.scenario(raw)
}

// ---------------------------------------------------------------------------------------------
// The file as written. A new scenario key is a field here, a field of `Scenario`, one line in
// `Reader::scenario` and its entry in `scenarios/schema.json` (the schema test names what is
// missing). Lists whose items take two shapes (`catalogs`, `conversation`, subagent `tools`)
// are kept as values and read item by item at their own path.

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a scenario (a mapping)")]
pub(crate) struct RawScenario {
    name: Option<String>,
    description: Option<String>,
    tokenizer: Option<Tokenizer>,
    #[serde(default)]
    render: Render,
    counter: Option<CounterKind>,
    #[serde(default)]
    tool_choice: ToolChoice,
    model: Option<String>,
    /// Keys are read as `Override` one by one, so an unknown key is located at itself.
    #[serde(default)]
    model_overrides: IndexMap<String, f64>,
    system_prompt: Option<String>,
    #[serde(default, deserialize_with = "opt_tokens")]
    system_prompt_tokens: Option<usize>,
    catalogs: Option<Vec<Value>>,
    #[serde(default)]
    deferred: RawDeferred,
    #[serde(default)]
    sizes: Sizes,
    #[serde(default)]
    failures: Failures,
    conversation: Option<Vec<Value>>,
    #[serde(default)]
    published: Vec<Published>,
    texts: Option<RawTexts>,
}

/// A JSON file of named texts (`{"system_prompt": "…", "user_prompt": "…"}`) that fill the
/// `{{name}}` placeholders of `system_prompt` and the turns' `user:` texts, so a scenario can
/// use a third-party prompt kept outside the repository without copying it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a texts file (a mapping with path:)")]
pub(crate) struct RawTexts {
    path: String,
    #[serde(default)]
    optional: bool,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a catalog entry (a path, or a mapping with path:)"
)]
pub(crate) struct RawCatalogEntry {
    path: String,
    server: Option<String>,
    connected: Option<bool>,
    optional: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, expecting = "deferred settings (a mapping)")]
pub(crate) struct RawDeferred {
    when: Option<When>,
    defer_mcp: Option<bool>,
    #[serde(default)]
    defer_builtins: Vec<String>,
    #[serde(default)]
    always_load: Vec<String>,
    #[serde(default)]
    always_load_servers: Vec<String>,
    scorer: Option<ScorerSpec>,
    #[serde(default, deserialize_with = "opt_count")]
    max_results: Option<usize>,
    discovery: Option<Discovery>,
    listing: Option<Listing>,
    list_style: Option<ListStyle>,
    reveal: Option<Reveal>,
    retry: Option<Vec<RetryStep>>,
    #[serde(default)]
    depends_on: IndexMap<String, Vec<String>>,
    bm25: Option<RawBm25>,
}

/// `deferred.bm25`: each key given replaces its default.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "bm25 settings (a mapping with k1, b, weights)"
)]
pub(crate) struct RawBm25 {
    #[serde(default, deserialize_with = "opt_nonneg")]
    k1: Option<f64>,
    #[serde(default, deserialize_with = "opt_probability")]
    b: Option<f64>,
    weights: Option<RawBm25Weights>,
}

/// Field weights by field name (`FIELD_NAMES` of bm25), each optional.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "bm25 field weights (a mapping of name, description, argument_names, argument_descriptions)"
)]
pub(crate) struct RawBm25Weights {
    #[serde(default, deserialize_with = "opt_nonneg")]
    name: Option<f64>,
    #[serde(default, deserialize_with = "opt_nonneg")]
    description: Option<f64>,
    #[serde(default, deserialize_with = "opt_nonneg")]
    argument_names: Option<f64>,
    #[serde(default, deserialize_with = "opt_nonneg")]
    argument_descriptions: Option<f64>,
}

impl RawBm25 {
    fn apply(self, mut params: Bm25Params) -> Bm25Params {
        params.k1 = self.k1.unwrap_or(params.k1);
        params.b = self.b.unwrap_or(params.b);
        if let Some(w) = self.weights {
            let given = [
                w.name,
                w.description,
                w.argument_names,
                w.argument_descriptions,
            ];
            for (slot, v) in params.weights.iter_mut().zip(given) {
                *slot = v.unwrap_or(*slot);
            }
        }
        params
    }
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a turn (a mapping with user:) or an event (event:)"
)]
pub(crate) struct RawTurn {
    user: String,
    #[serde(default, deserialize_with = "opt_tokens")]
    tokens: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    reply_tokens: Option<usize>,
    #[serde(default)]
    calls: Vec<RawCall>,
    subagent: Option<RawSubagent>,
    #[serde(default, deserialize_with = "opt_count")]
    repeat: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a call (a mapping with tool:)")]
pub(crate) struct RawCall {
    tool: String,
    query: Option<String>,
    #[serde(default, deserialize_with = "opt_tokens")]
    result_tokens: Option<usize>,
    result: Option<String>,
    #[serde(default, deserialize_with = "opt_tokens")]
    call_tokens: Option<usize>,
    input: Option<Map<String, Value>>,
    #[serde(default)]
    parallel: bool,
    loads: Option<Vec<String>>,
    subagent: Option<RawSubagent>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a subagent (a mapping with conversation:)"
)]
pub(crate) struct RawSubagent {
    /// `"*"` or a list of tool ids.
    tools: Option<Value>,
    #[serde(default, deserialize_with = "opt_tokens")]
    system_prompt_tokens: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    result_tokens: Option<usize>,
    conversation: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an event (a mapping with event:)")]
pub(crate) struct RawEvent {
    event: EventKind,
    server: Option<String>,
    #[serde(default, deserialize_with = "opt_tokens")]
    summary_tokens: Option<usize>,
    keep_discovered: Option<bool>,
    rediscover: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum EventKind {
    Connect,
    Disconnect,
    Clear,
    Compact,
    Resume,
}

crate::named_enum!(EventKind, "event");

// ---------------------------------------------------------------------------------------------
// Values with a meaning beyond their JSON type.

/// A count read from a number that must be whole and ≥ 0 (`5` and `5.0` both; YAML writes
/// either). `what` is the message's "expected …".
struct Whole(&'static str);

impl serde::de::Visitor<'_> for Whole {
    type Value = usize;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.0)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<usize, E> {
        usize::try_from(v)
            .ok()
            .filter(|&n| n as f64 <= MAX_WHOLE)
            .ok_or_else(|| E::custom(too_large(v as f64, self.0)))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<usize, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self)),
        }
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<usize, E> {
        if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= MAX_WHOLE {
            Ok(v as usize)
        } else if v > MAX_WHOLE {
            Err(E::custom(too_large(v, self.0)))
        } else {
            Err(E::invalid_value(serde::de::Unexpected::Float(v), &self))
        }
    }
}

/// Larger than any real size, small enough to add up without overflow.
const MAX_WHOLE: f64 = 1e12;

fn too_large(v: f64, what: &str) -> String {
    format!("{v} is too large: expected {what}, at most {MAX_WHOLE:.0}")
}

struct Tokens(usize);

impl<'de> Deserialize<'de> for Tokens {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(Whole("a whole number of tokens ≥ 0"))
            .map(Tokens)
    }
}

struct Count(usize);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(Whole("a whole number ≥ 0")).map(Count)
    }
}

fn opt_tokens<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<usize>, D::Error> {
    Ok(Option::<Tokens>::deserialize(d)?.map(|t| t.0))
}

fn opt_count<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<usize>, D::Error> {
    Ok(Option::<Count>::deserialize(d)?.map(|t| t.0))
}

/// A finite number ≥ 0.
fn nonneg<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Float(v),
            &"a number ≥ 0",
        ))
    }
}

pub(crate) fn opt_nonneg<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    struct NonNeg(#[serde(deserialize_with = "nonneg")] f64);
    Ok(Option::<NonNeg>::deserialize(d)?.map(|n| n.0))
}

fn opt_probability<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    struct P(#[serde(deserialize_with = "probability")] f64);
    Ok(Option::<P>::deserialize(d)?.map(|n| n.0))
}

fn probability<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    let v = nonneg(d)?;
    if v > 1.0 {
        return Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Float(v),
            &"a probability between 0 and 1",
        ));
    }
    Ok(v)
}

impl std::str::FromStr for When {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s == "always" {
            return Ok(When::Always);
        }
        match s.strip_prefix("auto:").map(str::parse::<f64>) {
            Some(Ok(n)) if n.is_finite() && (0.0..=100.0).contains(&n) => Ok(When::Auto(n)),
            _ => Err(format!(
                "expected \"always\" or \"auto:N\" with N a percentage 0-100, found {s:?}"
            )),
        }
    }
}

impl<'de> Deserialize<'de> for When {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

// ---------------------------------------------------------------------------------------------
// Raw → model: the checks that need more than one value, or a position kept in the model.

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
    /// An error at `p`, its message prefixed with the path as `Document::decode` does.
    fn err(&self, p: &[Seg], msg: impl AsRef<str>) -> Error {
        self.doc
            .error_at(p, crate::document::with_path(p, msg.as_ref()))
    }

    fn tool_ref(&self, p: &[Seg], id: String) -> Result<ToolRef> {
        if id.is_empty() {
            return Err(self.err(p, "a tool id must not be empty"));
        }
        Ok(ToolRef {
            id,
            at: self.doc.locate(p),
        })
    }

    fn tool_refs(&self, p: &[Seg], ids: Vec<String>) -> Result<Vec<ToolRef>> {
        ids.into_iter()
            .enumerate()
            .map(|(i, id)| self.tool_ref(&child(p, i), id))
            .collect()
    }

    fn scenario(&self, raw: RawScenario) -> Result<Scenario> {
        let name = match raw.name {
            Some(n) if !n.trim().is_empty() => n,
            Some(_) => return Err(self.err(&path!["name"], "must not be empty")),
            None => self
                .doc
                .path
                .file_stem()
                .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned()),
        };
        let profile = self.profile(raw.model, raw.model_overrides)?;
        let Some(catalogs) = raw.catalogs else {
            return Err(self.err(&[], "missing field `catalogs`: list the catalog files"));
        };
        let Some(conversation) = raw.conversation else {
            return Err(self.err(
                &[],
                "missing field `conversation`: a scenario needs at least one turn",
            ));
        };
        let catalogs = self.catalogs(&catalogs)?;
        let catalogs_unavailable = catalogs
            .iter()
            .find(|c| c.optional && !c.path.is_file())
            .map(|c| (c.path.clone(), c.at));
        let deferred = self.deferred(raw.deferred)?;
        let conversation =
            self.conversation(&path!["conversation"], &conversation, &mut 0, &mut 0)?;
        if !conversation.iter().any(|i| matches!(i, Item::Turn(_))) {
            return Err(self.err(
                &path!["conversation"],
                "no turn (a turn is a mapping with `user:`)",
            ));
        }
        let mut system_prompt = raw.system_prompt;
        let mut conversation = conversation;
        let unavailable = match &raw.texts {
            Some(t) => self
                .texts(t, &mut system_prompt, &mut conversation)?
                .map(|p| (p, self.doc.locate(&child(&path!["texts"], "path")))),
            None => None,
        };
        let (unavailable, unavailable_at) = catalogs_unavailable
            .or(unavailable)
            .map_or((None, None), |(p, at)| (Some(p), at));
        for (i, p) in raw.published.iter().enumerate() {
            if let Err((key, message)) = p.check() {
                return Err(self.err(&child(&child(&path!["published"], i), key), message));
            }
        }
        Ok(Scenario {
            name,
            description: raw.description,
            path: self.doc.path.clone(),
            tokenizer: raw.tokenizer,
            render: raw.render,
            counter: raw.counter,
            tool_choice: raw.tool_choice,
            profile,
            system_prompt,
            system_prompt_tokens: raw.system_prompt_tokens,
            catalogs,
            deferred,
            sizes: raw.sizes,
            failures: raw.failures,
            conversation,
            published: raw.published,
            unavailable,
            unavailable_at,
        })
    }

    /// Fills `{{name}}` placeholders from the texts file; `Some(path)` when the file is
    /// optional and absent (placeholders stay, and the scenario is unavailable).
    fn texts(
        &self,
        t: &RawTexts,
        system: &mut Option<String>,
        items: &mut [Item],
    ) -> Result<Option<PathBuf>> {
        let base = self.doc.path.parent().unwrap_or_else(|| Path::new(""));
        let path = base.join(&t.path);
        if t.optional && !path.is_file() {
            return Ok(Some(path));
        }
        let doc = Document::read(&path)?;
        let Value::Object(map) = &doc.value else {
            return Err(doc.error_at(&[], "expected an object of named texts"));
        };
        let fill = |text: &mut String| {
            for (k, v) in map {
                if let Value::String(v) = v {
                    let key = format!("{{{{{k}}}}}");
                    if text.contains(&key) {
                        *text = text.replace(&key, v);
                    }
                }
            }
        };
        if let Some(s) = system {
            fill(s);
        }
        for item in items.iter_mut() {
            if let Item::Turn(t) = item {
                fill(&mut t.user);
            }
        }
        Ok(None)
    }

    fn profile(&self, model: Option<String>, overrides: IndexMap<String, f64>) -> Result<Profile> {
        let name = model.unwrap_or_else(|| profile::DEFAULT_PROFILE.to_string());
        let mut profile = profile::find(&name).ok_or_else(|| {
            self.err(
                &path!["model"],
                format!(
                    "unknown model profile {name:?}, expected one of: {}",
                    profile::names().join(", ")
                ),
            )
        })?;
        for (key, value) in overrides {
            let kp = path!["model_overrides", key.as_str()];
            let key: Override = self.doc.decode(&kp, &Value::String(key.clone()))?;
            profile.set(key, value).map_err(|e| self.err(&kp, e))?;
        }
        Ok(profile)
    }

    fn catalogs(&self, items: &[Value]) -> Result<Vec<CatalogEntry>> {
        let p = path!["catalogs"];
        if items.is_empty() {
            return Err(self.err(&p, "catalogs is empty: list at least one catalog file"));
        }
        let base = self
            .doc
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let entry = |i: usize, item: &Value| -> Result<CatalogEntry> {
            let ip = child(&p, i);
            // A bare string is a path.
            if let Value::String(s) = item {
                return Ok(CatalogEntry {
                    path: base.join(s),
                    server: None,
                    connected: true,
                    optional: false,
                    at: self.doc.locate(&ip),
                });
            }
            let raw: RawCatalogEntry = self.doc.decode(&ip, item)?;
            Ok(CatalogEntry {
                path: base.join(raw.path),
                server: raw.server,
                connected: raw.connected.unwrap_or(true),
                optional: raw.optional.unwrap_or(false),
                at: self.doc.locate(&child(&ip, "path")),
            })
        };
        items.iter().enumerate().map(|(i, v)| entry(i, v)).collect()
    }

    fn deferred(&self, raw: RawDeferred) -> Result<DeferredSettings> {
        let p = path!["deferred"];
        let default = DeferredSettings::default();
        let builtins = self.tool_refs(&child(&p, "defer_builtins"), raw.defer_builtins)?;
        let max_results = raw.max_results.unwrap_or(default.max_results);
        if max_results == 0 {
            return Err(self.err(&child(&p, "max_results"), "must be ≥ 1"));
        }
        let mut depends_on = Vec::with_capacity(raw.depends_on.len());
        for (id, deps) in raw.depends_on {
            let kp = child(&child(&p, "depends_on"), id.as_str());
            let deps = self.tool_refs(&kp, deps)?;
            depends_on.push((self.tool_ref(&kp, id)?, deps));
        }
        let bm25 = raw.bm25.map_or(default.bm25, |b| b.apply(default.bm25));
        // Each value is in range; all weights 0 is the one combination left to refuse.
        bm25.validate()
            .map_err(|e| self.err(&child(&p, "bm25"), e))?;
        Ok(DeferredSettings {
            when: raw.when.unwrap_or(default.when),
            defer_mcp: raw.defer_mcp.unwrap_or(default.defer_mcp),
            defer_all_builtins: builtins.iter().any(|r| r.id == "*"),
            defer_builtins: builtins.into_iter().filter(|r| r.id != "*").collect(),
            always_load: self.tool_refs(&child(&p, "always_load"), raw.always_load)?,
            always_load_servers: self
                .tool_refs(&child(&p, "always_load_servers"), raw.always_load_servers)?,
            scorer_dir: raw
                .scorer
                .as_ref()
                .is_some_and(ScorerSpec::is_external)
                .then(|| {
                    self.doc
                        .path
                        .parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_default()
                }),
            scorer: raw.scorer.unwrap_or(default.scorer),
            max_results,
            discovery: raw.discovery.unwrap_or(default.discovery),
            listing: raw.listing.unwrap_or(default.listing),
            list_style: raw.list_style.unwrap_or(default.list_style),
            reveal: raw.reveal.unwrap_or(default.reveal),
            retry: raw.retry.unwrap_or(default.retry),
            depends_on,
            bm25,
        })
    }

    /// Reads the items of a conversation at `p`; `turns` counts turns after `repeat` across
    /// the whole conversation, against `MAX_TURNS`; `work` counts requests (nested subagents
    /// included) against `MAX_WORK_REQUESTS`, checked before a repeated turn is expanded.
    fn conversation(
        &self,
        p: &[Seg],
        items: &[Value],
        turns: &mut usize,
        work: &mut u64,
    ) -> Result<Vec<Item>> {
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let ip = child(p, i);
            match item {
                Value::Object(m) if m.contains_key("event") => {
                    out.push(Item::Event(self.event(&ip, self.doc.decode(&ip, item)?)?));
                }
                Value::Object(_) => {
                    let raw: RawTurn = self.doc.decode(&ip, item)?;
                    let repeat = raw.repeat.unwrap_or(1);
                    *turns += repeat;
                    if *turns > MAX_TURNS {
                        return Err(self.err(
                            &ip,
                            format!("more than {MAX_TURNS} turns after expanding repeat"),
                        ));
                    }
                    let turn = self.turn(&ip, raw)?;
                    *work = work.saturating_add(turn_work(&turn).saturating_mul(repeat as u64));
                    if *work > MAX_WORK_REQUESTS {
                        return Err(self.err(
                            &ip,
                            format!(
                                "the conversation expands to at least {} requests here (turns \
                                 and calls times repeat, subagents included), more than the \
                                 limit of {MAX_WORK_REQUESTS}; lower `repeat`",
                                *work
                            ),
                        ));
                    }
                    out.extend((0..repeat).map(|_| Item::Turn(Box::new(turn.clone()))));
                }
                other => {
                    return Err(self.err(
                        &ip,
                        format!(
                            "expected a turn (a mapping with user:) or an event (event:), found {}",
                            type_name(other)
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }

    fn turn(&self, p: &[Seg], raw: RawTurn) -> Result<Turn> {
        let mut calls = Vec::with_capacity(raw.calls.len());
        for (i, c) in raw.calls.into_iter().enumerate() {
            let ip = child(&child(p, "calls"), i);
            let tool = self.tool_ref(&child(&ip, "tool"), c.tool)?;
            let at = match c.query {
                Some(_) => self.doc.locate(&child(&ip, "query")),
                None => tool.at,
            };
            let loads = match c.loads {
                Some(ids) => Some(self.tool_refs(&child(&ip, "loads"), ids)?),
                None => None,
            };
            let subagent = match c.subagent {
                Some(s) => Some(self.subagent(&child(&ip, "subagent"), s)?),
                None => None,
            };
            calls.push(Call {
                at,
                tool,
                query: c.query,
                result_tokens: c.result_tokens,
                result: c.result,
                call_tokens: c.call_tokens,
                input: c.input.map(Value::Object),
                parallel: c.parallel,
                loads,
                subagent,
            });
        }
        let subagent = match raw.subagent {
            Some(s) => Some(self.subagent(&child(p, "subagent"), s)?),
            None => None,
        };
        Ok(Turn {
            user: raw.user,
            at: self.doc.locate(&child(p, "user")),
            tokens: raw.tokens,
            reply_tokens: raw.reply_tokens,
            calls,
            subagent,
        })
    }

    fn subagent(&self, p: &[Seg], raw: RawSubagent) -> Result<Subagent> {
        let tp = child(p, "tools");
        let tools = match &raw.tools {
            None => None,
            Some(Value::String(s)) if s == "*" => None,
            Some(v) => {
                let refs = self.tool_refs(&tp, self.doc.decode(&tp, v)?)?;
                (!refs.iter().any(|r| r.id == "*")).then_some(refs)
            }
        };
        let cp = child(p, "conversation");
        // A subagent's work is counted into its parent turn's (times the turn's repeat).
        let conversation = self.conversation(&cp, &raw.conversation, &mut 0, &mut 0)?;
        let nested = conversation.iter().position(|it| match it {
            Item::Turn(t) => t.subagent.is_some(),
            Item::Event(_) => false,
        });
        if let Some(i) = nested {
            return Err(self.err(&child(&cp, i), "a subagent cannot spawn another subagent"));
        }
        Ok(Subagent {
            tools,
            system_prompt_tokens: raw.system_prompt_tokens,
            result_tokens: raw.result_tokens,
            conversation,
        })
    }

    fn event(&self, p: &[Seg], raw: RawEvent) -> Result<Event> {
        let kind = raw.event;
        let given = [
            ("server", raw.server.is_some()),
            ("summary_tokens", raw.summary_tokens.is_some()),
            ("keep_discovered", raw.keep_discovered.is_some()),
            ("rediscover", raw.rediscover.is_some()),
        ];
        let applies: &[&str] = match kind {
            EventKind::Connect | EventKind::Disconnect => &["server"],
            EventKind::Clear => &[],
            EventKind::Compact => &["summary_tokens", "keep_discovered"],
            EventKind::Resume => &["rediscover"],
        };
        if let Some((k, _)) = given.iter().find(|(k, g)| *g && !applies.contains(k)) {
            return Err(self.err(
                &child(p, *k),
                format!("`{k}` does not apply to a {} event", kind.name()),
            ));
        }
        let needs = |what: &str| self.err(p, format!("a {} event needs `{what}:`", kind.name()));
        Ok(match kind {
            EventKind::Connect | EventKind::Disconnect => {
                let server = raw.server.ok_or_else(|| needs("server"))?;
                let at = self.doc.locate(&child(p, "server"));
                if kind == EventKind::Connect {
                    Event::Connect { server, at }
                } else {
                    Event::Disconnect { server, at }
                }
            }
            EventKind::Clear => Event::Clear,
            EventKind::Compact => Event::Compact {
                summary_tokens: raw.summary_tokens.ok_or_else(|| needs("summary_tokens"))?,
                keep_discovered: raw.keep_discovered.unwrap_or(true),
            },
            EventKind::Resume => Event::Resume {
                rediscover: raw.rediscover.unwrap_or(true),
            },
        })
    }
}
