//! Serializable results of a simulation. The first keys of `ScenarioResult` and its mode
//! results are the contract's (`CONTRACT.md`); everything after them is additional. Reports
//! consume these types; nothing here computes anything beyond rounding.

use serde::Serialize;

use super::profile::Profile;
use super::request::{Parts, RequestRow};
use super::scenario::Published;

/// Totals of one mode (eager or deferred) over the whole conversation, subagents included.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeResult {
    /// Input tokens of the main agent's first request.
    pub first_request_tokens: usize,
    /// Input tokens summed over every request.
    pub total_input_tokens: usize,
    pub requests: usize,
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
    pub output_tokens: usize,
    /// Input tokens read from the prompt cache (caching on).
    pub cached_input_tokens: usize,
    /// `total_input_tokens / requests`, 2 decimals.
    pub mean_request_tokens: f64,
    /// Tools + deferred list of the main agent's first request (what tool definitions cost).
    pub first_request_tool_tokens: usize,
    /// Input tokens by part, summed over requests (`total()` equals `total_input_tokens`).
    pub parts: Parts,
    pub cost_usd: Cost,
    pub latency_ms: Latency,
    /// Highest input as % of the context window.
    pub peak_occupancy_pct: f64,
    /// Least room left in the window after a request (negative: overflow).
    pub min_headroom_tokens: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cost {
    pub without_caching: f64,
    pub with_caching: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
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

/// `(eager - deferred) / eager * 100`, 2 decimals; 0 when eager is 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Savings {
    pub first_request_pct: f64,
    pub total_input_pct: f64,
    pub cost_without_caching_pct: f64,
    pub cost_with_caching_pct: f64,
}

/// The settings in force, printed with every result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    /// The counter every request part was counted with (`crate::counter`).
    pub counter: String,
    pub tokenizer: String,
    pub render: String,
    pub profile: String,
    pub scorer: String,
    /// `always` or `auto:N`.
    pub when: String,
    /// Whether the deferred mode deferred anything (false: `auto:N` below threshold, or no
    /// deferrable tool).
    pub deferring: bool,
    pub discovery: String,
    pub listing: String,
    pub list_style: String,
    pub reveal: String,
    pub max_results: usize,
    pub retry: Vec<String>,
    /// Tokens of the search tool's definition and whether it came from the catalog.
    pub search_tool_tokens: usize,
    pub search_tool_from_catalog: bool,
    /// Where the search tool's size comes from (sizes, catalog, a provider measurement, or
    /// toolbudget's ToolSearch counted).
    pub search_tool_source: String,
    /// The stated error of an estimating counter, percent (absent for exact counters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counter_error_pct: Option<f64>,
    pub tool_choice: String,
    /// Modeled search latency used in the json (the measured one is printed by the table).
    pub search_latency_ms: f64,
}

/// A published figure beside the measured one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedComparison {
    #[serde(flatten)]
    pub published: Published,
    pub measured_eager_tokens: f64,
    pub measured_deferred_tokens: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioResult {
    pub name: String,
    /// The counter in force (`simulate --format json` names it per scenario).
    pub counter: String,
    pub tokenizer: String,
    /// Tools in the scenario's catalogs (the search tool excluded).
    pub tool_count: usize,
    /// Tools the deferred mode defers (0 when it does not defer).
    pub deferred_count: usize,
    pub eager: ModeResult,
    pub deferred: ModeResult,
    pub savings: Savings,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub settings: Settings,
    pub model: Profile,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<PublishedComparison>,
    /// Every request, eager then deferred (`--per-request`; empty otherwise in the json).
    #[serde(skip_serializing_if = "Vec::is_empty")]
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
