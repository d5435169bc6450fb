//! The result of a simulation: one type per scenario, per mode and per request, written by
//! `simulate --format json`, embedded in the report, and read back (`Deserialize`). The first
//! keys of `ScenarioResult` and its mode results are the contract's (`CONTRACT.md`); everything
//! after them is additional. The CSV rows are views of these types (`ScenarioCsvRow`,
//! `RequestCsvRow`), shared by `simulate --format csv` and the report's `data/*.csv`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::profile::Profile;
use super::request::{Parts, RequestRow};
use super::scenario::{Discovery, ListStyle, Listing, RetryStep, Reveal, When};
use crate::counter::{CounterAndTokenizer, CounterKeys, CounterKind, ToolChoice};
use crate::search::ScorerName;
use crate::timing::LatencyUs;

/// Totals of one mode (eager or deferred) over the whole conversation, subagents included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeResult {
    /// Input tokens of the main agent's first request.
    pub first_request_tokens: usize,
    /// Input tokens summed over every request.
    pub total_input_tokens: usize,
    pub requests: usize,
    /// What the replay counted: searches, misses, retries, calls made and not made.
    #[serde(flatten)]
    pub counts: Counts,
    /// Tool definitions in the main agent's first request, the search tool included.
    pub tools_sent: usize,
    pub output_tokens: usize,
    /// Input tokens read from the prompt cache (caching on).
    pub cached_input_tokens: usize,
    /// `total_input_tokens / requests`, 2 decimals.
    pub mean_request_tokens: f64,
    /// Tools + deferred list of the main agent's first request (what tool definitions cost).
    pub first_request_tool_tokens: usize,
    /// The deferred list alone in the main agent's first request (0 eager): what the tools
    /// that are never loaded still cost per request.
    #[serde(default)]
    pub first_request_deferred_list_tokens: usize,
    /// `parts.deferred_list` at the profile's input price, no caching: the whole
    /// conversation's bill for listing the deferred tools.
    #[serde(default)]
    pub deferred_list_cost_usd: f64,
    /// Input tokens by part, summed over requests (`total()` equals `total_input_tokens`).
    pub parts: Parts,
    pub cost_usd: Cost,
    pub latency_ms: Latency,
    /// Highest input as % of the context window.
    pub peak_occupancy_pct: f64,
    /// Least room left in the window after a request (negative: overflow).
    pub min_headroom_tokens: i64,
    /// Whether every request fits the model's context window (input and output).
    pub fits_window: bool,
    /// Requests whose input and output exceed the context window.
    pub overflow_requests: usize,
    /// Requests whose cached prefix was broken, by cause, and what re-writing it cost.
    #[serde(default)]
    pub cache_invalidations: Invalidations,
    /// The real scorer's time for exactly the searches this mode sent (`select:` and retries
    /// included), when measured; it is then the search latency of `latency_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_search_us: Option<LatencyUs>,
}

/// What a replay counts as it goes; `ModeResult` carries it as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Searches for tools not yet loaded (model searches and auto-retrievals; retries apart).
    pub searches: usize,
    /// Searches (first or retry) whose results missed the needed tool.
    pub misses: usize,
    /// Retry searches after a miss (each one extra request).
    pub retries: usize,
    /// Input tokens of the requests that carried retry results.
    pub retry_input_tokens: usize,
    /// Calls to a deferred tool before it was loaded (error result, then a search).
    pub premature_calls: usize,
    /// Needed tools that no search found (the call was not made).
    pub failed_calls: usize,
    /// Calls to a tool whose server was disconnected (the call was not made, in either mode).
    pub unavailable_calls: usize,
    /// Tool calls made (tool results received).
    pub tool_calls: usize,
    pub turns: usize,
    /// Requests sent by subagents (included in `requests`).
    pub subagent_requests: usize,
}

/// Cache invalidations of one mode: requests (after an agent's first) whose cached prefix is
/// shorter than the input the previous request left in the cache, because a part before the
/// history changed, the history was replaced or the cache expired (`cost::CacheBreak`).
/// `tokens` is what those requests wrote to the cache again instead of reading it; `cost_usd`
/// is that at the cache-write price minus the cache-read price.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Invalidations {
    pub requests: usize,
    pub tokens: usize,
    pub cost_usd: f64,
    /// The tools list changed (a definition revealed into it, a server connecting).
    pub tools: usize,
    /// The deferred list in the prompt changed (a server connecting or leaving).
    pub deferred_list: usize,
    /// `/clear` or a compaction replaced the history.
    pub history: usize,
    /// The system prompt changed.
    pub system: usize,
    /// The cache expired (`resume`).
    pub resume: usize,
}

impl Invalidations {
    /// Counts one broken request.
    pub fn add(&mut self, cause: super::cost::CacheBreak, tokens: usize, cost_usd: f64) {
        use super::cost::CacheBreak;
        self.requests += 1;
        self.tokens += tokens;
        self.cost_usd += cost_usd;
        *match cause {
            CacheBreak::Tools => &mut self.tools,
            CacheBreak::DeferredList => &mut self.deferred_list,
            CacheBreak::History => &mut self.history,
            CacheBreak::System => &mut self.system,
            CacheBreak::Resume => &mut self.resume,
        } += 1;
    }

    /// The number broken by `cause`.
    pub fn by(&self, cause: super::cost::CacheBreak) -> usize {
        use super::cost::CacheBreak;
        match cause {
            CacheBreak::Tools => self.tools,
            CacheBreak::DeferredList => self.deferred_list,
            CacheBreak::History => self.history,
            CacheBreak::System => self.system,
            CacheBreak::Resume => self.resume,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub without_caching: f64,
    pub with_caching: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Sum of every request's modeled duration.
    pub total: f64,
    /// Time to first token of the first request (the main agent's first turn).
    pub first_ttft: f64,
    /// Mean time to first token of each turn's first request.
    pub mean_turn_ttft: f64,
    /// Mean modeled duration of a main-agent turn, subagents included.
    pub mean_turn: f64,
}

/// `(eager - deferred) / eager * 100`, 2 decimals; 0 when eager is 0. `null` when a mode does
/// not fit the context window: a conversation that cannot be sent saves nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Savings {
    pub first_request_pct: Option<f64>,
    pub total_input_pct: Option<f64>,
    pub cost_without_caching_pct: Option<f64>,
    pub cost_with_caching_pct: Option<f64>,
    /// Why the percentages are null, or what must be read beside them (the modes did unequal
    /// work: calls failed or were unavailable). Empty for a like-for-like saving.
    pub caveats: Vec<String>,
}

/// Where the search latency of the latency model comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum SearchLatencySource {
    /// The profile's fixed `search_latency_ms` (deterministic).
    Modeled,
    /// The real scorer timed on this machine (varies run to run).
    Measured,
}

/// The settings in force, printed with every result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// The counter every request part was counted with (`crate::counter`), with the tokenizer
    /// and rendering it implies.
    #[serde(flatten)]
    pub counter: CounterKeys,
    pub profile: String,
    /// The client profile whose policy the deferred settings follow (`client:`, `--client`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<super::client::ClientName>,
    /// Deferred tools are called through a `tool_call` bridge (the tools list never grows).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub call_bridge: bool,
    /// The deferred scorer by the name it gives (an external one's `exec:NAME`).
    pub scorer: ScorerName,
    pub when: When,
    /// Whether the deferred mode deferred anything (false: `auto:N` below threshold, or no
    /// deferrable tool).
    pub deferring: bool,
    pub discovery: Discovery,
    pub listing: Listing,
    pub list_style: ListStyle,
    pub reveal: Reveal,
    pub max_results: usize,
    pub retry: Vec<RetryStep>,
    /// The search tool the deferred mode sends (never a search result, never sent eagerly).
    pub search_tool: String,
    /// Tokens of the search tool's definition and whether it came from the catalog.
    pub search_tool_tokens: usize,
    pub search_tool_from_catalog: bool,
    /// Where the search tool's size comes from (sizes, catalog, a provider measurement, or
    /// toolbudget's ToolSearch counted).
    #[serde(default)]
    pub search_tool_source: String,
    /// The stated error of an estimating counter, percent (absent for exact counters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_error_pct: Option<f64>,
    #[serde(default)]
    pub tool_choice: ToolChoice,
    /// Whether `latency_ms` uses the modeled or the measured search latency.
    pub search_latency: SearchLatencySource,
    /// The profile's modeled search latency, present only when `search_latency` is `modeled`
    /// (measured runs carry their timings in `measured_search_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_latency_ms: Option<f64>,
    /// The deferred scorer's own settings (bm25's k1, b and field weights; hybrid's fusion),
    /// as `search --explain` and `eval` print them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scorer_settings: BTreeMap<String, String>,
}

/// A request's input (or a sum of requests) by what a published figure may attribute it to:
/// the system prompt, tool definitions, messages, and the rest (tool-use preamble, search
/// tool, deferred list). Tokens; fractional when averaged or scaled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Categories {
    pub system: f64,
    pub catalog: f64,
    pub conversation: f64,
    pub other: f64,
}

impl Categories {
    pub fn total(&self) -> f64 {
        self.system + self.catalog + self.conversation + self.other
    }
}

/// measured − published on one side, in parts that add up to it (`simulate::published`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    pub counting: f64,
    pub catalog: f64,
    pub system: f64,
    pub conversation: f64,
    pub other: f64,
}

impl Gap {
    pub fn total(&self) -> f64 {
        self.counting + self.catalog + self.system + self.conversation + self.other
    }
}

/// A published figure beside the same quantity measured (`simulate::published::compare`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedComparison {
    pub claim: String,
    /// The article or repository the figure comes from, by name and location.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eager_tokens: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_tokens: Option<f64>,
    /// The quantity measured.
    pub metric: super::published::Quantity,
    /// The published saving, when both figures are published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_pct: Option<f64>,
    pub measured_eager_tokens: f64,
    pub measured_deferred_tokens: f64,
    pub measured_saved_pct: f64,
    /// The counter of the provider the figure was measured on, which `measured_*` uses
    /// (always set by `simulate`; absent only in a file written without it, and then written
    /// back as `""`, as it was read).
    #[serde(default, serialize_with = "name_or_empty")]
    pub counter: Option<CounterKind>,
    /// `tokens` or `seconds` (the `*_tokens` fields hold seconds for a latency figure).
    #[serde(default, serialize_with = "name_or_empty")]
    pub unit: Option<super::published::Unit>,
    /// The settings measured beyond the scenario's (`model gpt-5.4, listing stubs`).
    #[serde(default)]
    pub variant: String,
    /// The same quantity counted by `o200k-json`.
    #[serde(default)]
    pub measured_eager_o200k_json: f64,
    #[serde(default)]
    pub measured_deferred_o200k_json: f64,
    /// The same quantity counted by `cl100k-json`.
    #[serde(default)]
    pub measured_eager_cl100k_json: f64,
    #[serde(default)]
    pub measured_deferred_cl100k_json: f64,
    #[serde(default)]
    pub eager_gap: Option<Gap>,
    #[serde(default)]
    pub deferred_gap: Option<Gap>,
    #[serde(default)]
    pub eager_measured_parts: Categories,
    #[serde(default)]
    pub deferred_measured_parts: Categories,
    #[serde(default)]
    pub eager_stated: super::published::Stated,
    #[serde(default)]
    pub deferred_stated: super::published::Stated,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eager_range: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_range: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eager_within_range: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_within_range: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eager_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_usd: Option<f64>,
    /// The measured tokens at the model's input price (a conversations figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_eager_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_deferred_usd: Option<f64>,
    /// False when the harness cannot measure what the source measured; `not_reproduced`
    /// says why and what the measured value is instead.
    #[serde(default = "yes")]
    pub reproduced: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub not_reproduced: String,
    /// How the scenario matches the source's setup, and what it assumes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

fn yes() -> bool {
    true
}

/// A name, or `""` for none.
#[allow(clippy::ref_option)] // serde's serialize_with passes the field by reference
fn name_or_empty<T: std::fmt::Display, S: serde::Serializer>(
    v: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_str(""),
    }
}

impl PublishedComparison {
    /// The counter's name (`""` when the file named none).
    pub fn counter_name(&self) -> &'static str {
        self.counter.map_or("", CounterKind::name)
    }

    /// The unit's name (`""` when the file named none).
    pub fn unit_name(&self) -> &'static str {
        self.unit.map_or("", super::published::Unit::name)
    }
}

/// What `simulate --format json` writes: every scenario's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimulationResult {
    pub scenarios: Vec<ScenarioResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    pub name: String,
    /// The counter in force (`simulate --format json` names it per scenario), with its
    /// tokenizer.
    #[serde(flatten)]
    pub counter: CounterAndTokenizer,
    /// Every tool of the scenario's catalogs, the search tool included (as `count` counts).
    pub tool_count: usize,
    /// Tools the deferred mode defers (0 when it does not defer).
    pub deferred_count: usize,
    pub eager: ModeResult,
    pub deferred: ModeResult,
    pub savings: Savings,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub settings: Settings,
    pub model: Profile,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<PublishedComparison>,
    /// Every request, eager then deferred (`--per-request`; empty otherwise in the json).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestRow>,
}

/// Rounds to `d` decimals (stable output).
pub fn round(x: f64, d: i32) -> f64 {
    let f = 10f64.powi(d);
    let r = (x * f).round() / f;
    if r == 0.0 { 0.0 } else { r }
}

pub fn savings_pct(eager: f64, deferred: f64) -> f64 {
    if eager == 0.0 {
        0.0
    } else {
        round((eager - deferred) / eager * 100.0, 2)
    }
}
