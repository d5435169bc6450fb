//! The provider-neutral conversation of one live turn loop: the messages the agent keeps, the
//! functions it sends, and what a provider answered. Each provider module turns a [`Request`]
//! into its own body and its answer back into a [`Reply`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::counter::ToolChoice;

/// One call the model wrote: the provider's call id, the function name as sent, and the
/// arguments exactly as the model wrote them (checked later, never trusted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A message of the conversation the agent sends back every step.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    User(String),
    /// What the model answered. `native` holds the provider's own items when the next
    /// request must carry them back as they were (Anthropic content blocks with server tool
    /// use, Responses output items with `tool_search_call`).
    Assistant {
        text: String,
        calls: Vec<ToolCall>,
        native: Option<Value>,
    },
    ToolResult {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
}

/// A function as sent to the provider.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDef {
    /// The name the provider sees (`counter::api::api_tool_name` of the tool id).
    pub name: String,
    pub description: String,
    pub parameters: Value,
    /// Provider-side search: sent with `defer_loading: true`, found by the provider's search.
    pub defer_loading: bool,
}

/// The provider's own tool search, when the deferred mode uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderSearch {
    /// Anthropic's `tool_search_tool_regex_20251119` (the regex scorer stands for it).
    AnthropicRegex,
    /// Anthropic's `tool_search_tool_bm25_20251119` (every other scorer).
    AnthropicBm25,
    /// OpenAI Responses' hosted `tool_search`.
    OpenaiToolSearch,
}

/// Everything one request carries.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [FunctionDef],
    pub provider_search: Option<ProviderSearch>,
    pub tool_choice: ToolChoice,
    pub max_tokens: u32,
    pub temperature: Option<f64>,
    /// Sent where the API takes one (OpenAI shapes): the run's seed.
    pub seed: Option<u64>,
}

/// What the provider billed for one request, as it reported it (`None`: not reported).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Every input token billed: Anthropic's `input_tokens` plus its cache writes and reads,
    /// OpenAI's `prompt_tokens` / `input_tokens` (cached ones included).
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// The cached part of `input_tokens`, when reported.
    pub cached_tokens: Option<u64>,
}

/// What a llama.cpp server reports doing for one request, from its answer's `timings` object
/// (llama.cpp `tools/server/README.md`, POST `/v1/chat/completions`, "Timings and context
/// usage"); other providers send none. `None` inside: that field was absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// `cache_n`: prompt tokens reused from the server's cache.
    pub cache_n: Option<u64>,
    /// `prompt_n`, `prompt_ms`: prompt tokens evaluated (not from the cache), and their time.
    pub prompt_n: Option<u64>,
    pub prompt_ms: Option<f64>,
    /// `predicted_n`, `predicted_ms`: tokens generated, and their time.
    pub predicted_n: Option<u64>,
    pub predicted_ms: Option<f64>,
}

/// One search the provider ran itself, and the tools it loaded (names as sent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderSearchCall {
    pub query: String,
    pub loaded: Vec<String>,
}

/// A provider's answer, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub text: String,
    pub calls: Vec<ToolCall>,
    pub native: Option<Value>,
    pub usage: Usage,
    pub provider_searches: Vec<ProviderSearchCall>,
    /// Why the model stopped (`stop`, `tool_calls`, `end_turn`, …), as the provider says it.
    pub stop: Option<String>,
    /// The server's own account of the request (llama.cpp's `timings`), when it sends one.
    pub timings: Option<Timings>,
}

/// A string field of a JSON object, or "".
pub(crate) fn str_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The largest token count a `usage` field may hold: far above any context window, small
/// enough that every sum over a run stays exact.
pub const MAX_USAGE_TOKENS: u64 = 1_000_000_000_000;

/// The value at `path` in an answer, `None` when a key on the way is absent.
fn value_at<'v>(v: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(v, |at, k| at.get(k))
}

/// The token count at `path` in an answer: `None` when absent or null (not reported); anything
/// but a whole number from 0 to [`MAX_USAGE_TOKENS`] is refused, naming its field.
pub(crate) fn tokens_at(v: &Value, path: &[&str]) -> Result<Option<u64>, String> {
    let Some(at) = value_at(v, path) else {
        return Ok(None);
    };
    match at {
        Value::Null => Ok(None),
        Value::Number(n) if n.as_u64().is_some_and(|x| x <= MAX_USAGE_TOKENS) => Ok(n.as_u64()),
        other => Err(format!(
            "{} is {}, not a token count (a whole number from 0 to {MAX_USAGE_TOKENS})",
            path.join("."),
            shown(other)
        )),
    }
}

/// The longest time a server may report for one part of one request: the cassette's bound
/// on a latency (a day, as the longest `--timeout-secs`).
pub const MAX_SERVER_MS: f64 = super::cassette::MAX_LATENCY_MS;

/// The milliseconds at `path` in an answer: `None` when absent or null; anything but a number
/// from 0 to [`MAX_SERVER_MS`] is refused, naming its field.
pub(crate) fn ms_at(v: &Value, path: &[&str]) -> Result<Option<f64>, String> {
    let Some(at) = value_at(v, path) else {
        return Ok(None);
    };
    match at {
        Value::Null => Ok(None),
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|x| (0.0..=MAX_SERVER_MS).contains(&x)) =>
        {
            Ok(n.as_f64())
        }
        other => Err(format!(
            "{} is {}, not a time (milliseconds from 0 to {MAX_SERVER_MS})",
            path.join("."),
            shown(other)
        )),
    }
}

/// A JSON value for a message, cut to 40 characters.
pub(crate) fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

/// The first `usage` field of `fields` that [`tokens_at`] refuses: its path and why.
pub(crate) fn check_usage(
    v: &Value,
    fields: &[&'static [&'static str]],
) -> Result<(), (Vec<&'static str>, String)> {
    for f in fields {
        tokens_at(v, f).map_err(|why| (f.to_vec(), why))?;
    }
    Ok(())
}

/// `tool_choice` as both OpenAI shapes write it (`any` and a named tool become `required`).
pub(crate) fn openai_tool_choice(choice: ToolChoice) -> &'static str {
    match choice {
        ToolChoice::Auto => "auto",
        ToolChoice::None => "none",
        ToolChoice::Any | ToolChoice::Tool => "required",
    }
}
