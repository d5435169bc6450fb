//! Model profiles: what one model charges, how its requests are counted, and how fast it is
//! modeled to answer. Prices and context windows come from the price table in force
//! (`prices::PriceTable::active`: the bundled genai-prices snapshot, or `--prices FILE`), dated;
//! the behaviour is ours: token figures (tool-use prompts, search-tool overheads) are published
//! or measured numbers, each with its source in `sources`; latency figures are assumptions of
//! this tool (no provider publishes them) and are printed with every result so a reader can
//! substitute their own measurements through `model_overrides` in a scenario.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::counter::{CounterKind, Preamble, ToolChoice, anthropic};
use crate::prices::PriceTable;
use crate::search::ScorerKind;

/// Everything the cost and latency models need about one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub name: String,
    /// The provider's model id (the `model` field of an API request).
    #[serde(default)]
    pub api_model: String,
    /// How this model's requests are counted unless a scenario or flag names a counter.
    #[serde(default = "legacy_counter")]
    pub counter: CounterKind,
    /// USD per million uncached input tokens.
    pub input_per_mtok: f64,
    /// USD per million output tokens.
    pub output_per_mtok: f64,
    /// USD per million input tokens written to the prompt cache.
    pub cache_write_per_mtok: f64,
    /// USD per million input tokens read from the prompt cache.
    pub cache_read_per_mtok: f64,
    /// Higher prices for a request whose whole input is larger (long-context tiers), ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub price_tiers: Vec<PriceTier>,
    /// The provider's tool-use system preamble with `tool_choice` auto under the profile's
    /// counter, sent whenever any tool is defined (informational; `preambles` decide).
    pub tool_overhead_tokens: usize,
    /// The tool-use preamble per counter and `tool_choice` (first match wins).
    #[serde(default)]
    pub preambles: Vec<CounterPreamble>,
    /// Measured fixed cost of the provider's own tool search in a request that defers every
    /// tool: the search tool, the tool-use preamble and the framing, beyond the messages.
    #[serde(default)]
    pub search_overheads: Vec<SearchOverhead>,
    /// Context window in tokens (occupancy and `auto:N` are measured against it).
    pub context_window: usize,
    /// Tokens of a tool call when the scenario gives neither `call_tokens` nor `input`.
    pub call_tokens: usize,
    /// Tokens of the model's closing reply in a turn (scenario `reply_tokens` overrides).
    pub reply_tokens: usize,
    /// Fixed time per request before the first token (network, queueing), ms.
    pub request_overhead_ms: f64,
    /// Prefill throughput for uncached input, tokens per second.
    pub prefill_tokens_per_s: f64,
    /// Prefill throughput for cached input, tokens per second.
    pub cached_prefill_tokens_per_s: f64,
    /// Decode throughput, output tokens per second.
    pub decode_tokens_per_s: f64,
    /// Modeled latency of one search on the client (deterministic; the command layer reports
    /// the real scorer's measured latency separately).
    pub search_latency_ms: f64,
    /// Latency of fetching one batch of discovered definitions from their server (layered
    /// design); 0 when definitions are local.
    pub definition_fetch_ms: f64,
    /// How long a fetched definition stays cached on the client, seconds.
    pub definition_ttl_s: f64,
    /// Simulated time between two user turns, seconds (drives the definition TTL).
    pub turn_gap_s: f64,
    /// Where the prices come from.
    pub source: String,
    /// Where every other number comes from, by field.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
}

/// The prices of a request whose whole input is above `above_input_tokens` (USD per million).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriceTier {
    pub above_input_tokens: u64,
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    pub cache_write_per_mtok: f64,
    pub cache_read_per_mtok: f64,
}

/// One request's prices, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub input: f64,
    pub output: f64,
    pub cache_write: f64,
    pub cache_read: f64,
}

/// The counter of a profile written before profiles had one: toolbudget's original count.
fn legacy_counter() -> CounterKind {
    CounterKind::O200kJson
}

/// A tool-use preamble for one counter (or every counter).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterPreamble {
    /// `None`: whatever the counter.
    pub counter: Option<CounterKind>,
    #[serde(flatten)]
    pub tokens: Preamble,
}

impl CounterPreamble {
    pub fn uniform(counter: Option<CounterKind>, tokens: usize) -> CounterPreamble {
        CounterPreamble {
            counter,
            tokens: Preamble::uniform(tokens),
        }
    }
}

/// A provider's tool search, and which of toolbudget's scorers stands for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOverhead {
    /// e.g. `anthropic tool_search_tool_bm25`, `openai tool_search (namespace)`.
    pub variant: String,
    /// The scorer that models it; `None`: every scorer.
    pub scorer: Option<ScorerKind>,
    pub tokens: usize,
    /// `tokens` is the search tool's own section in the tools block, fitted (OpenAI's
    /// `tool_search`): the deferred tools' surfaces and the tools block's framing are counted
    /// beside it. Otherwise `tokens` was measured beyond the messages: the search tool, the
    /// tool-use preamble and the framing together (Anthropic's tool search).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub section: bool,
}

const HARNESS: &str = "andyjmorgan/tool-search-testing (MIT) @ f2f833e, WRITEUP.md; ../shared/data/provider-counts/acme-series.json";

/// Claude 4.x: the documented tool-use prompt per `tool_choice`, any counter.
fn claude_preambles() -> Vec<CounterPreamble> {
    let p = &anthropic::Calibration::committed().tool_use_system_prompt;
    vec![CounterPreamble {
        counter: None,
        tokens: p.tokens,
    }]
}

/// Anthropic's server-side tool search in the public harness: a request with every tool
/// deferred cost 765 (BM25) and 790 (regex) against 80 for the prompt alone.
fn claude_search() -> Vec<SearchOverhead> {
    vec![
        SearchOverhead {
            variant: "anthropic tool_search_tool_bm25".into(),
            scorer: Some(ScorerKind::Bm25),
            tokens: 685,
            section: false,
        },
        SearchOverhead {
            variant: "anthropic tool_search_tool_regex".into(),
            scorer: Some(ScorerKind::Regex),
            tokens: 710,
            section: false,
        },
    ]
}

/// OpenAI's hosted `tool_search` (`{"type": "tool_search"}`): its own section in the tools
/// block, the deferred functions, namespaces and MCP servers beside it as surfaces (name and
/// description, `CounterKind::surface`).
fn openai_search() -> Vec<SearchOverhead> {
    vec![SearchOverhead {
        variant: "openai tool_search".into(),
        scorer: None,
        tokens: OPENAI_TOOL_SEARCH_SECTION,
        section: true,
    }]
}

/// The `tool_search` tool's section in the tools block, its `\n\n` join included: FITTED, as
/// its text is not published. Fitted on one point of the public harness: 21 functions in the
/// `acme_ops` namespace, 475 billed = 76 (prompt only) + 2 (`# Tools`) + 45 (the namespace's
/// surface with its join, counted from its name and description) + 352. Checked, not fitted: the same
/// namespace with 3 functions (475), flat `defer_loading` of 3 and 21 functions (675, 1,786) and
/// the live runs (`tests/integration/provider_counts.rs`, `tests/integration/published.rs`).
pub const OPENAI_TOOL_SEARCH_SECTION: usize = 352;

fn claude_sources(measured_on: &str) -> BTreeMap<String, String> {
    let doc = &anthropic::Calibration::committed()
        .tool_use_system_prompt
        .source;
    BTreeMap::from([
        ("preambles".to_string(), doc.clone()),
        (
            "search_overheads".to_string(),
            format!("{HARNESS} (static configurations: 21/3 deferred BM25 765, regex 790, prompt only 80; measured on claude-sonnet-4-6{measured_on})"),
        ),
        (
            "counter".to_string(),
            "anthropic-estimate: fixtures/calibration/anthropic-count-tokens.json (count_tokens of claude-sonnet-4-6)".to_string(),
        ),
    ])
}

/// The prices of `model` in the price table in force: base prices, long-context tiers, the
/// context window (when the table gives one) and the source line printed with every dollar.
struct TablePrices {
    rates: Rates,
    tiers: Vec<PriceTier>,
    context_window: Option<usize>,
    source: String,
}

/// `model` priced by the table in force, as of its snapshot's date.
fn table_prices(model: &str) -> Result<TablePrices, String> {
    let table = PriceTable::active();
    let r = table.resolve_for_log(model).map_err(|e| e.to_string())?;
    let p = r.prices();
    let at = |total: u64| {
        let input = p.input.as_ref().map_or(0.0, |x| x.at(total));
        Rates {
            input,
            output: p.output.as_ref().map_or(0.0, |x| x.at(total)),
            // genai-prices: a cache kind without its own price costs the input price.
            cache_write: p.cache_write.as_ref().map_or(input, |x| x.at(total)),
            cache_read: p.cache_read.as_ref().map_or(input, |x| x.at(total)),
        }
    };
    let tiers = p
        .tier_starts()
        .into_iter()
        .map(|start| {
            let r = at(start.saturating_add(1));
            PriceTier {
                above_input_tokens: start,
                input_per_mtok: r.input,
                output_per_mtok: r.output,
                cache_write_per_mtok: r.cache_write,
                cache_read_per_mtok: r.cache_read,
            }
        })
        .collect();
    Ok(TablePrices {
        rates: at(0),
        tiers,
        context_window: r.context_window.map(|w| w as usize),
        source: format!(
            "{} ({}): {}/{}{}",
            table.snapshot().package,
            table.snapshot().date,
            r.provider_id,
            r.model_id,
            if r.bedrock_rule {
                " (toolbudget's Bedrock rule)"
            } else {
                ""
            }
        ),
    })
}

/// Latency assumptions shared by the profiles (not measurements of any provider), prices and
/// context window from the table in force.
fn base(name: &str, api_model: &str, counter: CounterKind) -> Result<Profile, String> {
    let t = table_prices(api_model)?;
    Ok(Profile {
        name: name.to_string(),
        api_model: api_model.to_string(),
        counter,
        input_per_mtok: t.rates.input,
        output_per_mtok: t.rates.output,
        cache_write_per_mtok: t.rates.cache_write,
        cache_read_per_mtok: t.rates.cache_read,
        price_tiers: t.tiers,
        tool_overhead_tokens: 0,
        preambles: Vec::new(),
        search_overheads: Vec::new(),
        context_window: t.context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW),
        call_tokens: 60,
        reply_tokens: 200,
        request_overhead_ms: 400.0,
        prefill_tokens_per_s: 4_000.0,
        cached_prefill_tokens_per_s: 40_000.0,
        decode_tokens_per_s: 60.0,
        search_latency_ms: 1.0,
        definition_fetch_ms: 0.0,
        definition_ttl_s: 300.0,
        turn_gap_s: 30.0,
        source: t.source,
        sources: BTreeMap::new(),
    })
}

/// A context window the price table does not give: Claude's and most models' standard one.
const DEFAULT_CONTEXT_WINDOW: usize = 200_000;

fn claude(name: &str, api_model: &str, measured_on: &str) -> Result<Profile, String> {
    let mut p = base(name, api_model, CounterKind::AnthropicEstimate)?;
    p.preambles = claude_preambles();
    p.search_overheads = claude_search();
    p.sources = claude_sources(measured_on);
    p.tool_overhead_tokens = p.preamble(p.counter, ToolChoice::Auto);
    Ok(p)
}

/// OpenAI's tool-use preambles as measured on gpt-5.4 (Responses 0, Chat Completions 81).
fn openai_preambles() -> Vec<CounterPreamble> {
    // Chat Completions bills 81 more than Responses at every N >= 1 of the public series
    // (272-191, 365-284, ... 1547-1466), tool_choice none; with the same rendering on both
    // counters that difference is the chat preamble. Other tool_choice values: not measured.
    vec![
        CounterPreamble::uniform(Some(CounterKind::OpenaiChat), 81),
        CounterPreamble::uniform(None, 0),
    ]
}

/// An OpenAI model's behaviour as measured on gpt-5.4, assumed for others (`measured_on`).
fn openai(name: &str, api_model: &str, measured_on: &str) -> Result<Profile, String> {
    let mut p = base(name, api_model, CounterKind::OpenaiResponses)?;
    p.preambles = openai_preambles();
    p.search_overheads = openai_search();
    p.sources = BTreeMap::from([
        (
            "preambles".to_string(),
            format!(
                "{HARNESS}: Responses series reproduced by openai-responses with no preamble; Chat Completions series - Responses series = 81 at every N >= 1 (tool_choice none){measured_on}"
            ),
        ),
        (
            "search_overheads".to_string(),
            format!(
                "{HARNESS}: tool_search section 352 fitted on 21 tools in a namespace (475 billed; prompt only 76), checked on 3 in a namespace (475), flat defer_loading of 21 and 3 (1786, 675) and the live runs (flat 4132, namespace 1786){measured_on}"
            ),
        ),
    ]);
    Ok(p)
}

fn gpt_4o() -> Result<Profile, String> {
    let mut p = base("gpt-4o", "gpt-4o", CounterKind::OpenaiChat)?;
    p.preambles = vec![CounterPreamble {
        counter: None,
        tokens: Preamble {
            auto: 0,
            none: 1,
            any: 0,
            tool: 4,
        },
    }];
    p.search_overheads = openai_search();
    p.sources = BTreeMap::from([
        (
            "preambles".to_string(),
            "auto 0: the OpenAI Cookbook tool example is reproduced with none (gpt-4o 101); none +1, a named tool +4 (plus its name's tokens, not modeled): hmarr/openai-chat-tokens (MIT), measured on gpt-3.5/gpt-4 function calling; any: not measured".to_string(),
        ),
        (
            "search_overheads".to_string(),
            format!("{HARNESS}: tool_search section fitted on gpt-5.4 (namespace 475), assumed for gpt-4o"),
        ),
    ]);
    Ok(p)
}

/// A model of a provider whose tool-use behaviour toolbudget has not measured: counted as
/// JSON with o200k, no tool-use preamble, no provider search (each said in `sources`).
fn unmeasured(name: &str) -> Result<Profile, String> {
    let mut p = base(name, name, CounterKind::O200kJson)?;
    p.sources = BTreeMap::from([(
        "behaviour".to_string(),
        "not measured for this provider: no tool-use preamble, no provider search, counted as JSON with o200k_base".to_string(),
    )]);
    Ok(p)
}

/// The shipped profile names, the default first, with the model id each is priced as.
const SHIPPED: [(&str, &str); 8] = [
    ("claude-sonnet-4.5", "claude-sonnet-4-5"),
    ("claude-opus-4.5", "claude-opus-4-5"),
    ("claude-opus-4.1", "claude-opus-4-1"),
    ("claude-haiku-4.5", "claude-haiku-4-5"),
    ("gpt-5", "gpt-5"),
    ("claude-sonnet-4-6", "claude-sonnet-4-6"),
    ("gpt-5.4", "gpt-5.4"),
    ("gpt-4o", "gpt-4o"),
];

/// The profile of a shipped name.
fn shipped_profile(name: &str, api_model: &str) -> Result<Profile, String> {
    let assumed = ", assumed for this model";
    match name {
        "claude-sonnet-4-6" => claude(name, api_model, ""),
        "gpt-5.4" => openai(name, api_model, ""),
        "gpt-4o" => gpt_4o(),
        n if n.starts_with("gpt") => openai(
            name,
            api_model,
            ", measured on gpt-5.4, assumed for this model",
        ),
        _ => claude(name, api_model, assumed),
    }
}

/// The shipped profiles, by name. The default is the first. A price table that lacks one of
/// their models leaves it out.
pub fn shipped() -> Vec<Profile> {
    SHIPPED
        .iter()
        .filter_map(|(n, m)| shipped_profile(n, m).ok())
        .collect()
}

pub const DEFAULT_PROFILE: &str = "claude-sonnet-4.5";

/// A model by a shipped profile's name or by any id the price table in force knows: its prices
/// and context window from the table, its behaviour by provider (Claude's measured tool-use
/// prompt and search, OpenAI's, or none measured). An unknown id is an error naming the
/// closest known ids.
pub fn resolve(name: &str) -> Result<Profile, String> {
    if let Some((n, m)) = SHIPPED.iter().find(|(n, _)| *n == name) {
        return shipped_profile(n, m);
    }
    let resolved = PriceTable::active().resolve_for_log(name).map_err(|e| {
        format!(
            "unknown model profile {name:?}: {e} (a shipped profile: {}; or a model id of the \
             price table)",
            names().join(", ")
        )
    })?;
    let assumed = ", assumed for this model";
    match resolved.provider_id {
        _ if resolved.model_id.starts_with("claude") => claude(name, name, assumed),
        "openai" => openai(name, name, ", measured on gpt-5.4, assumed for this model"),
        _ => unmeasured(name),
    }
}

/// The price table's model id a profile name or logged id stands for (`claude-sonnet-4-5` for
/// `claude-sonnet-4.5` and for `claude-sonnet-4-5-20250929`); `None` when the table does not
/// know it.
pub fn table_model(name: &str) -> Option<String> {
    let id = SHIPPED
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(name, |(_, m)| *m);
    let table = PriceTable::active();
    let resolved = table.resolve_for_log(id).ok()?;
    Some(resolved.model_id.to_string())
}

/// Whether two profile names or logged ids are the same model of the price table.
pub fn same_model(a: &str, b: &str) -> bool {
    a == b || table_model(a).is_some_and(|x| table_model(b).is_some_and(|y| x == y))
}

/// [`resolve`], `None` for an unknown model.
pub fn find(name: &str) -> Option<Profile> {
    resolve(name).ok()
}

pub fn names() -> Vec<String> {
    SHIPPED.iter().map(|(n, _)| (*n).to_string()).collect()
}

/// A key of a scenario's `model_overrides`: one field of [`Profile`]. Its serde name is the
/// key the scenario writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Override {
    InputPerMtok,
    OutputPerMtok,
    CacheWritePerMtok,
    CacheReadPerMtok,
    ToolOverheadTokens,
    ContextWindow,
    CallTokens,
    ReplyTokens,
    RequestOverheadMs,
    PrefillTokensPerS,
    CachedPrefillTokensPerS,
    DecodeTokensPerS,
    SearchLatencyMs,
    DefinitionFetchMs,
    DefinitionTtlS,
    TurnGapS,
}

crate::named_enum!(Override, "model override");

/// Appended to a profile's price source when a scenario sets a price.
const OVERRIDDEN: &str = "; prices set by the scenario's model_overrides";

/// The smallest throughput accepted, tokens per second: one token in about 17 minutes.
pub const MIN_RATE: f64 = 0.001;

impl Override {
    /// The largest accepted value: far beyond any real model, small enough that a conversation's
    /// cost and time stay finite.
    fn max(self) -> f64 {
        match self.unit() {
            "USD per million tokens" => 1e6,
            _ => 1e12,
        }
    }

    fn unit(self) -> &'static str {
        use Override as O;
        match self {
            O::InputPerMtok | O::OutputPerMtok | O::CacheWritePerMtok | O::CacheReadPerMtok => {
                "USD per million tokens"
            }
            O::PrefillTokensPerS | O::CachedPrefillTokensPerS | O::DecodeTokensPerS => {
                "tokens per second"
            }
            O::RequestOverheadMs | O::SearchLatencyMs | O::DefinitionFetchMs => "milliseconds",
            O::DefinitionTtlS | O::TurnGapS => "seconds",
            _ => "tokens",
        }
    }
}

impl Profile {
    /// The prices of a request of `total_input` tokens: the highest tier it is above, else the
    /// base prices.
    pub fn rates(&self, total_input: usize) -> Rates {
        match self
            .price_tiers
            .iter()
            .rev()
            .find(|t| total_input as u64 > t.above_input_tokens)
        {
            Some(t) => Rates {
                input: t.input_per_mtok,
                output: t.output_per_mtok,
                cache_write: t.cache_write_per_mtok,
                cache_read: t.cache_read_per_mtok,
            },
            None => Rates {
                input: self.input_per_mtok,
                output: self.output_per_mtok,
                cache_write: self.cache_write_per_mtok,
                cache_read: self.cache_read_per_mtok,
            },
        }
    }

    /// The tool-use preamble under `counter` for `choice` (0 when the profile has none).
    pub fn preamble(&self, counter: CounterKind, choice: ToolChoice) -> usize {
        self.preambles
            .iter()
            .find(|p| p.counter.is_none_or(|c| c == counter))
            .map_or(0, |p| p.tokens.tokens(choice))
    }

    /// The measured fixed cost of the provider's tool search that `scorer` stands for.
    pub fn search_overhead(&self, scorer: ScorerKind) -> Option<&SearchOverhead> {
        self.search_overheads
            .iter()
            .find(|o| o.scorer.is_none_or(|s| s == scorer))
    }

    /// Applies one override; `Err` says what was expected. Numbers must be ≥ 0, token counts
    /// whole, rates and the window positive.
    pub fn set(&mut self, key: Override, value: f64) -> Result<(), String> {
        use Override as O;
        if !value.is_finite() || value < 0.0 {
            return Err(format!("must be a number ≥ 0, found {value}"));
        }
        // Bounded so every cost and time stays a finite number (`1e308` made `$inf` and `NaN%`).
        let max = key.max();
        if value > max {
            return Err(format!(
                "{value:e} is too large: at most {max:e} ({})",
                key.unit()
            ));
        }
        let whole = || -> Result<usize, String> {
            if value.fract() != 0.0 || value > 1e15 {
                Err(format!("must be a whole number, found {value}"))
            } else {
                Ok(value as usize)
            }
        };
        let positive = || -> Result<f64, String> {
            if value > 0.0 {
                Ok(value)
            } else {
                Err("must be > 0".to_string())
            }
        };
        // A rate near 0 makes every modeled time infinite (`5e-324` printed `inf.0` ms).
        let rate = || -> Result<f64, String> {
            positive()?;
            if value < MIN_RATE {
                return Err(format!(
                    "{value:e} is too small: at least {MIN_RATE} ({}), so every modeled time \
                     stays finite",
                    key.unit()
                ));
            }
            Ok(value)
        };
        if matches!(
            key,
            O::InputPerMtok | O::OutputPerMtok | O::CacheWritePerMtok | O::CacheReadPerMtok
        ) {
            // The scenario's price holds at every request size; the source says it is theirs.
            self.price_tiers.clear();
            if !self.source.ends_with(OVERRIDDEN) {
                self.source.push_str(OVERRIDDEN);
            }
        }
        match key {
            O::InputPerMtok => self.input_per_mtok = value,
            O::OutputPerMtok => self.output_per_mtok = value,
            O::CacheWritePerMtok => self.cache_write_per_mtok = value,
            O::CacheReadPerMtok => self.cache_read_per_mtok = value,
            O::ToolOverheadTokens => {
                // An explicit size replaces every documented one.
                self.tool_overhead_tokens = whole()?;
                self.preambles = vec![CounterPreamble::uniform(None, self.tool_overhead_tokens)];
            }
            O::ContextWindow => {
                positive()?;
                self.context_window = whole()?;
            }
            O::CallTokens => self.call_tokens = whole()?,
            O::ReplyTokens => self.reply_tokens = whole()?,
            O::RequestOverheadMs => self.request_overhead_ms = value,
            O::PrefillTokensPerS => self.prefill_tokens_per_s = rate()?,
            O::CachedPrefillTokensPerS => self.cached_prefill_tokens_per_s = rate()?,
            O::DecodeTokensPerS => self.decode_tokens_per_s = rate()?,
            O::SearchLatencyMs => self.search_latency_ms = value,
            O::DefinitionFetchMs => self.definition_fetch_ms = value,
            O::DefinitionTtlS => self.definition_ttl_s = value,
            O::TurnGapS => self.turn_gap_s = value,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fit of OpenAI's `tool_search` section, by its arithmetic: andyjmorgan/tool-search-testing
    /// @ f2f833e (WRITEUP.md, OpenAI results, gpt-5.4 Responses) billed 475 for its 21
    /// functions in the `acme_ops` namespace behind `tool_search` and 76 for the prompt alone;
    /// the namespace's description is `python/openai/openai_test.py`'s. The `# Tools` section
    /// after a prompt ending in a sentence is 2 tokens, the namespace's surface with its join 45.
    #[test]
    fn the_tool_search_section_is_fitted_on_the_harness_namespace() {
        let counter = CounterKind::OpenaiResponses;
        let surface = counter.surface(
            "acme_ops",
            "ACME Corp internal operations toolset (HR, finance, inventory, ticketing, deployments, monitoring, customers, calendar, docs).",
        );
        let open = counter.tools_sections_open(Some("Be concise."));
        assert_eq!((open, surface), (2, 45));
        assert_eq!(475 - 76 - open - surface, OPENAI_TOOL_SEARCH_SECTION);
        assert_eq!(OPENAI_TOOL_SEARCH_SECTION, 352);
    }

    #[test]
    fn shipped_profiles_carry_published_prices() {
        let s = find("claude-sonnet-4.5").unwrap();
        assert_eq!(
            (
                s.input_per_mtok,
                s.output_per_mtok,
                s.cache_write_per_mtok,
                s.cache_read_per_mtok
            ),
            (3.0, 15.0, 3.75, 0.30)
        );
        assert_eq!(s.tool_overhead_tokens, 346);
        assert_eq!(find("gpt-5").unwrap().cache_read_per_mtok, 0.125);
        assert_eq!(shipped()[0].name, DEFAULT_PROFILE);
    }

    #[test]
    fn new_profiles_carry_their_counter_preambles_and_search_overheads() {
        let c = find("claude-sonnet-4-6").unwrap();
        assert_eq!(c.counter, CounterKind::AnthropicEstimate);
        assert_eq!(c.preamble(c.counter, ToolChoice::Auto), 346);
        assert_eq!(c.preamble(c.counter, ToolChoice::None), 346);
        assert_eq!(c.preamble(c.counter, ToolChoice::Any), 313);
        assert_eq!(c.preamble(c.counter, ToolChoice::Tool), 313);
        assert_eq!(c.search_overhead(ScorerKind::Bm25).unwrap().tokens, 685);
        assert_eq!(c.search_overhead(ScorerKind::Regex).unwrap().tokens, 710);
        assert!(c.search_overhead(ScorerKind::Keyword).is_none());
        let g = find("gpt-5.4").unwrap();
        assert_eq!(g.counter, CounterKind::OpenaiResponses);
        assert_eq!(
            g.preamble(CounterKind::OpenaiResponses, ToolChoice::None),
            0
        );
        assert_eq!(g.preamble(CounterKind::OpenaiChat, ToolChoice::None), 81);
        let search = g.search_overhead(ScorerKind::Keyword).unwrap();
        assert_eq!((search.tokens, search.section), (352, true));
        assert!(!c.search_overhead(ScorerKind::Bm25).unwrap().section);
        assert_eq!(
            (g.input_per_mtok, g.cache_read_per_mtok, g.output_per_mtok),
            (2.5, 0.25, 15.0)
        );
        let o = find("gpt-4o").unwrap();
        assert_eq!(o.counter, CounterKind::OpenaiChat);
        assert_eq!(o.preamble(o.counter, ToolChoice::Auto), 0);
        // Every profile says where its token figures come from.
        for p in shipped() {
            assert!(!p.source.is_empty(), "{}", p.name);
            for field in ["preambles", "search_overheads"] {
                assert!(
                    p.sources.contains_key(field),
                    "{} lacks a source for {field}",
                    p.name
                );
            }
        }
    }

    #[test]
    fn overrides_check_their_values() {
        let mut p = find("claude-haiku-4.5").unwrap();
        p.set(Override::ToolOverheadTokens, 300.0).unwrap();
        assert_eq!(p.tool_overhead_tokens, 300);
        assert_eq!(p.preamble(CounterKind::OpenaiChat, ToolChoice::Any), 300);
        assert!(p.set(Override::ToolOverheadTokens, 1.5).is_err());
        assert!(p.set(Override::InputPerMtok, -1.0).is_err());
        assert!(p.set(Override::DecodeTokensPerS, 0.0).is_err());
        assert_eq!(
            p.set(Override::DecodeTokensPerS, 5e-324).unwrap_err(),
            "5e-324 is too small: at least 0.001 (tokens per second), so every modeled time \
             stays finite"
        );
        p.set(Override::DecodeTokensPerS, MIN_RATE).unwrap();
        assert_eq!(
            p.set(Override::ContextWindow, 0.0).unwrap_err(),
            "must be > 0"
        );
        assert_eq!(Override::ContextWindow.name(), "context_window");
        assert_eq!(Override::TurnGapS.name(), "turn_gap_s");
    }
}
