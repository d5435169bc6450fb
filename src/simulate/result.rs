//! The result of a simulation: one type per scenario, per mode and per request, written by
//! `simulate --format json`, embedded in the report, and read back (`Deserialize`) except for
//! the published figures: a comparison holds its figure whole, and its JSON shows only what the
//! comparison reports of it. The first
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

/// A published figure beside the same quantity measured (`simulate::published::compare`):
/// the figure as the scenario states it (held, not copied) and what was measured for it.
/// Its JSON (hand-written `Serialize` below) spreads the figure's fields among the measured
/// ones, in the order `simulate --format json` has always written them.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedComparison {
    /// The figure as published (`published:` of the scenario).
    pub figure: super::published::Published,
    /// The counter of the provider the figure was measured on, which `measured_*` uses.
    pub counter: CounterKind,
    pub measured_eager_tokens: f64,
    pub measured_deferred_tokens: f64,
    pub measured_saved_pct: f64,
    /// The same quantity counted by `o200k-json`.
    pub measured_eager_o200k_json: f64,
    pub measured_deferred_o200k_json: f64,
    /// The same quantity counted by `cl100k-json`.
    pub measured_eager_cl100k_json: f64,
    pub measured_deferred_cl100k_json: f64,
    /// measured − published, split into parts (when the side is published).
    pub eager_gap: Option<Gap>,
    pub deferred_gap: Option<Gap>,
    pub eager_measured_parts: Categories,
    pub deferred_measured_parts: Categories,
    /// Whether the measured value lies in the published range (when one is published).
    pub eager_within_range: Option<bool>,
    pub deferred_within_range: Option<bool>,
    /// The measured tokens at the model's input price (a conversations figure).
    pub measured_eager_usd: Option<f64>,
    pub measured_deferred_usd: Option<f64>,
}

impl PublishedComparison {
    /// The counter's name.
    pub fn counter_name(&self) -> &'static str {
        self.counter.name()
    }

    /// `tokens` or `seconds` (the `*_tokens` fields hold seconds for a latency figure).
    pub fn unit(&self) -> super::published::Unit {
        self.figure.metric.unit()
    }

    /// The published saving: as the source states it, else the ratio of its two numbers.
    pub fn saved_pct(&self) -> Option<f64> {
        let f = &self.figure;
        f.saved_pct.or(match (f.eager_tokens, f.deferred_tokens) {
            (Some(a), Some(b)) => Some(savings_pct(a, b)),
            _ => None,
        })
    }

    /// The settings measured beyond the scenario's (`model gpt-5.4, listing stubs`).
    pub fn variant(&self) -> String {
        self.figure.variant.describe()
    }

    /// False when the harness cannot measure what the source measured; `not_reproduced`
    /// says why and what the measured value is instead.
    pub fn reproduced(&self) -> bool {
        self.figure.not_reproduced.is_none()
    }

    pub fn not_reproduced(&self) -> &str {
        self.figure.not_reproduced.as_deref().unwrap_or_default()
    }

    /// How the scenario matches the source's setup, and what it assumes.
    pub fn note(&self) -> &str {
        self.figure.note.as_deref().unwrap_or_default()
    }
}

impl Serialize for PublishedComparison {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        // `Some` fields written, `None` ones skipped (as `skip_serializing_if` would).
        fn some<M: serde::ser::SerializeStruct, T: Serialize>(
            m: &mut M,
            key: &'static str,
            v: Option<&T>,
        ) -> Result<(), M::Error> {
            match v {
                Some(v) => m.serialize_field(key, v),
                None => m.skip_field(key),
            }
        }
        let f = &self.figure;
        let mut m = s.serialize_struct("PublishedComparison", 33)?;
        m.serialize_field("claim", &f.claim)?;
        m.serialize_field("source", &f.source)?;
        some(&mut m, "eager_tokens", f.eager_tokens.as_ref())?;
        some(&mut m, "deferred_tokens", f.deferred_tokens.as_ref())?;
        m.serialize_field("metric", &f.metric)?;
        some(&mut m, "saved_pct", self.saved_pct().as_ref())?;
        m.serialize_field("measured_eager_tokens", &self.measured_eager_tokens)?;
        m.serialize_field("measured_deferred_tokens", &self.measured_deferred_tokens)?;
        m.serialize_field("measured_saved_pct", &self.measured_saved_pct)?;
        m.serialize_field("counter", self.counter.name())?;
        m.serialize_field("unit", self.unit().name())?;
        m.serialize_field("variant", &self.variant())?;
        m.serialize_field("measured_eager_o200k_json", &self.measured_eager_o200k_json)?;
        m.serialize_field(
            "measured_deferred_o200k_json",
            &self.measured_deferred_o200k_json,
        )?;
        m.serialize_field(
            "measured_eager_cl100k_json",
            &self.measured_eager_cl100k_json,
        )?;
        m.serialize_field(
            "measured_deferred_cl100k_json",
            &self.measured_deferred_cl100k_json,
        )?;
        m.serialize_field("eager_gap", &self.eager_gap)?;
        m.serialize_field("deferred_gap", &self.deferred_gap)?;
        m.serialize_field("eager_measured_parts", &self.eager_measured_parts)?;
        m.serialize_field("deferred_measured_parts", &self.deferred_measured_parts)?;
        m.serialize_field("eager_stated", &f.eager_parts)?;
        m.serialize_field("deferred_stated", &f.deferred_parts)?;
        some(&mut m, "eager_range", f.eager_range.as_ref())?;
        some(&mut m, "deferred_range", f.deferred_range.as_ref())?;
        some(
            &mut m,
            "eager_within_range",
            self.eager_within_range.as_ref(),
        )?;
        some(
            &mut m,
            "deferred_within_range",
            self.deferred_within_range.as_ref(),
        )?;
        some(&mut m, "eager_usd", f.eager_usd.as_ref())?;
        some(&mut m, "deferred_usd", f.deferred_usd.as_ref())?;
        some(
            &mut m,
            "measured_eager_usd",
            self.measured_eager_usd.as_ref(),
        )?;
        some(
            &mut m,
            "measured_deferred_usd",
            self.measured_deferred_usd.as_ref(),
        )?;
        m.serialize_field("reproduced", &self.reproduced())?;
        some(
            &mut m,
            "not_reproduced",
            f.not_reproduced.as_ref().filter(|t| !t.is_empty()),
        )?;
        some(&mut m, "note", f.note.as_ref().filter(|t| !t.is_empty()))?;
        m.end()
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
    /// Written, not read back (see the module comment).
    #[serde(default, skip_serializing_if = "Vec::is_empty", skip_deserializing)]
    pub published: Vec<PublishedComparison>,
    /// What `--calibration` did to this scenario (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<super::calibration::CalibrationUse>,
    /// Every request, eager then deferred (`--per-request`; empty otherwise in the json).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestRow>,
}

/// What deferred saves, as a percentage of eager.
pub fn savings_pct(eager: f64, deferred: f64) -> f64 {
    crate::number::percent_of(eager - deferred, eager)
}
