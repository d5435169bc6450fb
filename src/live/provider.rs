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

    pub fn parse(self, v: &Value) -> Result<Reply, String> {
        match self {
            Provider::OpenaiChat => openai_chat::parse(v),
            Provider::OpenaiResponses => openai_responses::parse(v),
            Provider::Anthropic => anthropic::parse(v),
        }
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
