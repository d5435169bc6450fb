//! Model profiles: what one model charges and how fast it is modeled to answer. Prices are the
//! providers' published list prices (USD per million tokens); latency figures are assumptions
//! of this tool (no provider publishes them) and are printed with every result so a reader can
//! substitute their own measurements through `model_overrides` in a scenario.

use serde::{Deserialize, Serialize};

/// Everything the cost and latency models need about one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub name: String,
    /// USD per million uncached input tokens.
    pub input_per_mtok: f64,
    /// USD per million output tokens.
    pub output_per_mtok: f64,
    /// USD per million input tokens written to the prompt cache.
    pub cache_write_per_mtok: f64,
    /// USD per million input tokens read from the prompt cache.
    pub cache_read_per_mtok: f64,
    /// The provider's tool-use system preamble, sent whenever any tool is defined.
    pub tool_overhead_tokens: usize,
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
}

const ANTHROPIC_PRICING: &str = "https://docs.claude.com/en/docs/about-claude/pricing";
const OPENAI_PRICING: &str = "https://openai.com/api/pricing/";

/// The published tool-use system prompt of Claude 4.x models with `tool_choice` auto
/// (Anthropic's tool-use pricing table).
pub const CLAUDE_TOOL_OVERHEAD: usize = 346;

/// Latency assumptions shared by the shipped profiles (not measurements of any provider).
fn base(name: &str, prices: [f64; 4], overhead: usize, window: usize, source: &str) -> Profile {
    Profile {
        name: name.to_string(),
        input_per_mtok: prices[0],
        output_per_mtok: prices[1],
        cache_write_per_mtok: prices[2],
        cache_read_per_mtok: prices[3],
        tool_overhead_tokens: overhead,
        context_window: window,
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
        source: source.to_string(),
    }
}

/// The shipped profiles, by name. The default is the first.
pub fn shipped() -> Vec<Profile> {
    vec![
        base(
            "claude-sonnet-4.5",
            [3.0, 15.0, 3.75, 0.30],
            CLAUDE_TOOL_OVERHEAD,
            200_000,
            ANTHROPIC_PRICING,
        ),
        base(
            "claude-opus-4.5",
            [5.0, 25.0, 6.25, 0.50],
            CLAUDE_TOOL_OVERHEAD,
            200_000,
            ANTHROPIC_PRICING,
        ),
        base(
            "claude-opus-4.1",
            [15.0, 75.0, 18.75, 1.50],
            CLAUDE_TOOL_OVERHEAD,
            200_000,
            ANTHROPIC_PRICING,
        ),
        base(
            "claude-haiku-4.5",
            [1.0, 5.0, 1.25, 0.10],
            CLAUDE_TOOL_OVERHEAD,
            200_000,
            ANTHROPIC_PRICING,
        ),
        // OpenAI bills no cache-write premium (writes cost the input price) and publishes no
        // tool-preamble size, so the overhead is 0 here: set it in a scenario if you know it.
        base(
            "gpt-5",
            [1.25, 10.0, 1.25, 0.125],
            0,
            400_000,
            OPENAI_PRICING,
        ),
    ]
}

pub const DEFAULT_PROFILE: &str = "claude-sonnet-4.5";

pub fn find(name: &str) -> Option<Profile> {
    shipped().into_iter().find(|p| p.name == name)
}

pub fn names() -> Vec<String> {
    shipped().into_iter().map(|p| p.name).collect()
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
        match key {
            O::InputPerMtok => self.input_per_mtok = value,
            O::OutputPerMtok => self.output_per_mtok = value,
            O::CacheWritePerMtok => self.cache_write_per_mtok = value,
            O::CacheReadPerMtok => self.cache_read_per_mtok = value,
            O::ToolOverheadTokens => self.tool_overhead_tokens = whole()?,
            O::ContextWindow => {
                positive()?;
                self.context_window = whole()?;
            }
            O::CallTokens => self.call_tokens = whole()?,
            O::ReplyTokens => self.reply_tokens = whole()?,
            O::RequestOverheadMs => self.request_overhead_ms = value,
            O::PrefillTokensPerS => self.prefill_tokens_per_s = positive()?,
            O::CachedPrefillTokensPerS => self.cached_prefill_tokens_per_s = positive()?,
            O::DecodeTokensPerS => self.decode_tokens_per_s = positive()?,
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
    fn overrides_check_their_values() {
        let mut p = find("claude-haiku-4.5").unwrap();
        p.set(Override::ToolOverheadTokens, 300.0).unwrap();
        assert_eq!(p.tool_overhead_tokens, 300);
        assert!(p.set(Override::ToolOverheadTokens, 1.5).is_err());
        assert!(p.set(Override::InputPerMtok, -1.0).is_err());
        assert!(p.set(Override::DecodeTokensPerS, 0.0).is_err());
        assert_eq!(
            p.set(Override::ContextWindow, 0.0).unwrap_err(),
            "must be > 0"
        );
        assert_eq!(Override::ContextWindow.name(), "context_window");
        assert_eq!(Override::TurnGapS.name(), "turn_gap_s");
    }
}
