//! The three request shapes `toolbudget live` speaks, and what follows from each: its path,
//! its key variable, its headers, the counter that counts its requests, and its provider-side
//! search.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::conversation::{ProviderSearch, Reply, Request};
use super::{anthropic, openai_chat, openai_responses};
use crate::counter::CounterKind;
use crate::search::ScorerKind;
use crate::search::spec::ScorerSpec;

/// Most tool calls one model answer may ask for at once: far above what a model does (a
/// provider lets a request offer at most a few hundred tools), far below what would make the
/// next request's body a memory problem.
pub const MAX_PARALLEL_CALLS: usize = 10_000;

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// Chat Completions: OpenAI, vLLM, llama.cpp's server, OpenRouter, most local servers.
    OpenaiChat,
    /// OpenAI's Responses API (provider-side `tool_search`).
    OpenaiResponses,
    /// Anthropic's Messages API (provider-side tool search tools).
    Anthropic,
}

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenaiChat => "openai-chat",
            Provider::OpenaiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
        }
    }

    /// The counter whose count of a request stands beside the provider's `usage`.
    pub fn counter(self) -> CounterKind {
        match self {
            Provider::OpenaiChat => CounterKind::OpenaiChat,
            Provider::OpenaiResponses => CounterKind::OpenaiResponses,
            Provider::Anthropic => CounterKind::AnthropicEstimate,
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::OpenaiChat | Provider::OpenaiResponses => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com",
        }
    }

    /// Where the key is read from (never printed, never written).
    pub fn key_var(self) -> &'static str {
        match self {
            Provider::OpenaiChat | Provider::OpenaiResponses => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    pub fn path(self) -> &'static str {
        match self {
            Provider::OpenaiChat => openai_chat::PATH,
            Provider::OpenaiResponses => openai_responses::PATH,
            Provider::Anthropic => anthropic::PATH,
        }
    }

    /// The provider's own search standing for `scorer` (`None`: it has none).
    /// None for the user's own scorer (`exec:`, `mcp:`), which always searches client-side.
    pub fn provider_search(self, scorer: &ScorerSpec) -> Option<ProviderSearch> {
        let scorer = scorer.builtin()?;
        match self {
            Provider::OpenaiChat => None,
            Provider::OpenaiResponses => Some(ProviderSearch::OpenaiToolSearch),
            Provider::Anthropic if scorer == ScorerKind::Regex => {
                Some(ProviderSearch::AnthropicRegex)
            }
            Provider::Anthropic => Some(ProviderSearch::AnthropicBm25),
        }
    }

    /// Whether the API takes a `seed` (the OpenAI chat shape; local servers honour it).
    pub fn takes_seed(self) -> bool {
        self == Provider::OpenaiChat
    }

    pub fn body(self, r: &Request<'_>) -> Value {
        match self {
            Provider::OpenaiChat => openai_chat::body(r),
            Provider::OpenaiResponses => openai_responses::body(r),
            Provider::Anthropic => anthropic::body(r),
        }
    }

    /// Reads an answer of this shape; one asking for more than [`MAX_PARALLEL_CALLS`] tool
    /// calls at once is refused (each call becomes a message of the next request: 400,000 of
    /// them in a cassette took 2.1 GB).
    pub fn parse(self, v: &Value) -> Result<Reply, String> {
        let reply = match self {
            Provider::OpenaiChat => openai_chat::parse(v),
            Provider::OpenaiResponses => openai_responses::parse(v),
            Provider::Anthropic => anthropic::parse(v),
        }?;
        if reply.calls.len() > MAX_PARALLEL_CALLS {
            return Err(format!(
                "the answer asks for {} tool calls at once, over the {MAX_PARALLEL_CALLS} one \
                 answer may ask for",
                reply.calls.len()
            ));
        }
        Ok(reply)
    }

    /// The `usage` token counts of this shape's answers.
    pub fn usage_fields(self) -> &'static [&'static [&'static str]] {
        match self {
            Provider::OpenaiChat => openai_chat::USAGE_FIELDS,
            Provider::OpenaiResponses => openai_responses::USAGE_FIELDS,
            Provider::Anthropic => anthropic::USAGE_FIELDS,
        }
    }

    /// Whether every `usage` count of an answer is a token count in range; else the field's
    /// path and why (checked before an answer is recorded, and when a cassette is read).
    pub fn check_usage(self, v: &Value) -> Result<(), (Vec<&'static str>, String)> {
        super::conversation::check_usage(v, self.usage_fields())?;
        if self == Provider::OpenaiChat {
            openai_chat::check_times(v)?;
        }
        Ok(())
    }

    /// The headers of one request (the key only when there is one: a local server needs none).
    pub fn headers(self, key: Option<&str>, provider_search: bool) -> Vec<(String, String)> {
        let mut h = vec![("content-type".to_string(), "application/json".to_string())];
        match self {
            Provider::OpenaiChat | Provider::OpenaiResponses => {
                if let Some(k) = key {
                    h.push(("authorization".into(), format!("Bearer {k}")));
                }
            }
            Provider::Anthropic => {
                if let Some(k) = key {
                    h.push(("x-api-key".into(), k.to_string()));
                }
                h.push(("anthropic-version".into(), anthropic::VERSION.into()));
                if provider_search {
                    h.push(("anthropic-beta".into(), anthropic::TOOL_SEARCH_BETA.into()));
                }
            }
        }
        h
    }
}

impl std::fmt::Display for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the deferred mode's searches run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum SearchSide {
    /// toolbudget answers the model's search-tool calls from its own search core.
    #[default]
    Client,
    /// The provider's own tool search (Anthropic, OpenAI Responses).
    Provider,
}

impl SearchSide {
    pub fn name(self) -> &'static str {
        match self {
            SearchSide::Client => "client",
            SearchSide::Provider => "provider",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer asking for more tool calls at once than [`MAX_PARALLEL_CALLS`] is refused, in
    /// every shape; one at the bound is read.
    #[test]
    fn answers_past_the_parallel_call_bound_are_refused() {
        let chat = |n: usize| {
            let calls: Vec<Value> = (0..n)
                .map(|i| serde_json::json!({"id": format!("c{i}"), "type": "function", "function": {"name": "x", "arguments": "{}"}}))
                .collect();
            serde_json::json!({"choices": [{"message": {"role": "assistant", "tool_calls": calls}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
        };
        let anthropic = |n: usize| {
            let blocks: Vec<Value> = (0..n)
                .map(|i| serde_json::json!({"type": "tool_use", "id": format!("t{i}"), "name": "x", "input": {}}))
                .collect();
            serde_json::json!({"content": blocks, "usage": {"input_tokens": 1, "output_tokens": 1}})
        };
        let responses = |n: usize| {
            let items: Vec<Value> = (0..n)
                .map(|i| serde_json::json!({"type": "function_call", "call_id": format!("c{i}"), "name": "x", "arguments": "{}"}))
                .collect();
            serde_json::json!({"output": items, "usage": {"input_tokens": 1, "output_tokens": 1}})
        };
        for (provider, answer) in [
            (Provider::OpenaiChat, &chat as &dyn Fn(usize) -> Value),
            (Provider::Anthropic, &anthropic),
            (Provider::OpenaiResponses, &responses),
        ] {
            let read = provider.parse(&answer(MAX_PARALLEL_CALLS)).unwrap();
            assert_eq!(read.calls.len(), MAX_PARALLEL_CALLS, "{provider:?}");
            let e = provider.parse(&answer(MAX_PARALLEL_CALLS + 1)).unwrap_err();
            assert_eq!(
                e,
                "the answer asks for 10001 tool calls at once, over the 10000 one answer may ask for",
                "{provider:?}"
            );
        }
    }
}
