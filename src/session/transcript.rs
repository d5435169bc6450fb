//! The format-neutral shape both readers produce: per agent, the steps of its conversation in
//! file order (user text, API requests with what the model wrote, tool results, compaction,
//! `/clear`, an interrupted turn, history copied from an earlier file), sizes already counted (o200k_base tokens: [`super::convert`] maps each size the
//! scenario records to the session's counter), no text kept unless asked.

use std::collections::HashMap;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// Largest token count one field of a request's usage may hold: a billion tokens is far past
/// any context window.
pub const MAX_USAGE_TOKENS: u64 = 1_000_000_000;

/// Largest running total a log may keep (Codex `total_token_usage`): a million requests at the
/// largest bill.
pub const MAX_TOTAL_TOKENS: u64 = 1_000_000 * MAX_USAGE_TOKENS;

/// Usage the provider billed for one API request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Uncached input tokens.
    #[serde(deserialize_with = "tokens::input")]
    pub input: u64,
    /// Input tokens written to the prompt cache (Claude); 0 for OpenAI.
    #[serde(deserialize_with = "tokens::cache_creation")]
    pub cache_creation: u64,
    /// Input tokens read from the prompt cache.
    #[serde(deserialize_with = "tokens::cache_read")]
    pub cache_read: u64,
    #[serde(deserialize_with = "tokens::output")]
    pub output: u64,
}

/// Reads one token count of a log or a bill: a whole number from 0 to `max` (`null` is 0),
/// anything else an error naming the field, which serde_json places at the value's
/// `line:column`. A number past u64 arrives as a float and is refused as too large, never
/// wrapped or saturated.
pub fn token_count<'de, D: Deserializer<'de>>(
    d: D,
    field: &'static str,
    max: u64,
) -> Result<u64, D::Error> {
    struct V {
        field: &'static str,
        max: u64,
    }
    impl V {
        fn too_large<E: de::Error>(&self, v: impl std::fmt::Display) -> E {
            E::custom(format!(
                "usage {} is {v}, more than the {} tokens {}",
                self.field,
                self.max,
                if self.max == MAX_USAGE_TOKENS {
                    "any request can bill"
                } else {
                    "any session can total"
                }
            ))
        }
    }
    impl Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a whole number of tokens ({})", self.field)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            if v > self.max {
                Err(self.too_large(v))
            } else {
                Ok(v)
            }
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            match u64::try_from(v) {
                Ok(v) => self.visit_u64(v),
                Err(_) => Err(E::custom(format!(
                    "usage {} is {v}: a token count cannot be negative",
                    self.field
                ))),
            }
        }
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
            if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= self.max as f64 {
                Ok(v as u64)
            } else if v.is_finite() && v > self.max as f64 {
                Err(self.too_large(crate::simulate::calibration::show(v)))
            } else {
                Err(E::custom(format!(
                    "usage {} is {}: expected a whole number of tokens",
                    self.field,
                    crate::simulate::calibration::show(v)
                )))
            }
        }
        fn visit_unit<E: de::Error>(self) -> Result<u64, E> {
            Ok(0)
        }
        fn visit_none<E: de::Error>(self) -> Result<u64, E> {
            Ok(0)
        }
    }
    d.deserialize_any(V { field, max })
}

/// `deserialize_with` functions for each usage field, named as the logs and bills name them.
pub mod tokens {
    use super::{MAX_TOTAL_TOKENS, MAX_USAGE_TOKENS, token_count};
    use serde::Deserializer;

    macro_rules! fields {
        ($($f:ident => $name:literal, $max:expr;)*) => {$(
            #[doc = concat!("`", $name, "`, at most the bound it is checked against.")]
            pub fn $f<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
                token_count(d, $name, $max)
            }
        )*};
    }
    fields! {
        input => "input", MAX_USAGE_TOKENS;
        cache_creation => "cache_creation", MAX_USAGE_TOKENS;
        cache_read => "cache_read", MAX_USAGE_TOKENS;
        output => "output", MAX_USAGE_TOKENS;
        input_tokens => "input_tokens", MAX_USAGE_TOKENS;
        cache_creation_input_tokens => "cache_creation_input_tokens", MAX_USAGE_TOKENS;
        cache_read_input_tokens => "cache_read_input_tokens", MAX_USAGE_TOKENS;
        output_tokens => "output_tokens", MAX_USAGE_TOKENS;
        cached_input_tokens => "cached_input_tokens", MAX_USAGE_TOKENS;
        total_input_tokens => "input_tokens", MAX_TOTAL_TOKENS;
        total_cached_input_tokens => "cached_input_tokens", MAX_TOTAL_TOKENS;
        total_output_tokens => "output_tokens", MAX_TOTAL_TOKENS;
    }
}

impl Usage {
    /// The billed prompt: every input token the request carried, cached or not.
    pub fn prompt(&self) -> u64 {
        self.input + self.cache_creation + self.cache_read
    }

    /// Refuses a field above [`MAX_USAGE_TOKENS`]: a damaged record, not a bill (sums of
    /// checked fields cannot overflow).
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("input_tokens", self.input),
            ("cache_creation_input_tokens", self.cache_creation),
            ("cache_read_input_tokens", self.cache_read),
            ("output_tokens", self.output),
        ] {
            if v > MAX_USAGE_TOKENS {
                return Err(format!(
                    "usage {name} is {v}, more than the {MAX_USAGE_TOKENS} tokens any request can bill"
                ));
            }
        }
        Ok(())
    }

    /// Field-wise maximum: the records of one streamed response repeat its usage, the last
    /// one complete.
    pub fn merge_max(&mut self, o: &Usage) {
        self.input = self.input.max(o.input);
        self.cache_creation = self.cache_creation.max(o.cache_creation);
        self.cache_read = self.cache_read.max(o.cache_read);
        self.output = self.output.max(o.output);
    }
}

/// One tool call the model wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// `tool_use` id (Claude) or `call_id` (Codex): how its result finds it.
    pub id: String,
    pub name: String,
    /// Another name the call may be looked up by: the bare name of a Codex call whose
    /// namespace is not an MCP server's (`multi_agent_v1` + `spawn_agent`).
    pub alt_name: Option<String>,
    /// The rendered call `{"name": …, "input": …}`, counted.
    pub tokens: usize,
    /// The query of a search-tool call.
    pub query: Option<String>,
    /// The `subagent_type` a `Task`/`Agent` call asked for (Claude Code).
    pub subagent_type: Option<String>,
}

/// One API request: what the model wrote in answer, and the bill.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Request {
    /// `message.id` + `requestId` (Claude; the record's uuid without them, its line without
    /// either) or the position of the `token_count` event (Codex).
    pub key: String,
    pub model: Option<String>,
    pub usage: Option<Usage>,
    /// Text and thinking the model wrote, counted.
    pub text_tokens: usize,
    pub calls: Vec<Call>,
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    pub call_id: String,
    pub tokens: usize,
    /// Tools a search result referenced (`tool_reference` blocks), in order.
    pub references: Vec<String>,
    /// The subagent a `Task`/`Agent` call started, when the log names it.
    pub agent: Option<String>,
    /// The log marks the result an error (Claude `is_error`).
    pub is_error: bool,
}

/// One step of a conversation, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// User-side text (typed, pasted, injected by the client), counted.
    User {
        tokens: usize,
        text: Option<String>,
    },
    /// An API request (index into [`Transcript::requests`]).
    Request(usize),
    Results(Vec<ToolResult>),
    /// History replaced by a summary of this size.
    Compact {
        summary_tokens: usize,
    },
    Clear,
    /// The user stopped the model (a refused tool use, an interrupted answer, Codex
    /// `turn_aborted`): the next message opens a new turn.
    Interrupt,
    /// History an earlier file already holds (a resumed or forked session copies it): context
    /// of this conversation of this size, billed and counted in the other file.
    Copied {
        tokens: usize,
    },
}

/// One agent's conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    /// `None` for the main conversation; the subagent's id otherwise.
    pub agent_id: Option<String>,
    pub steps: Vec<Step>,
    pub requests: Vec<Request>,
    /// Its first user message was Claude Code's `Warmup` (a subagent primed at start-up).
    pub warmup: bool,
    by_key: HashMap<String, usize>,
}

impl Transcript {
    pub fn new(agent_id: Option<String>) -> Transcript {
        Transcript {
            agent_id,
            ..Transcript::default()
        }
    }

    /// The request with this key, created (and its step appended) when first seen: the
    /// records of one streamed response share a key and need not be adjacent.
    pub fn request(&mut self, key: &str) -> &mut Request {
        let i = if let Some(&i) = self.by_key.get(key) {
            i
        } else {
            let i = self.requests.len();
            self.requests.push(Request {
                key: key.to_string(),
                ..Request::default()
            });
            self.by_key.insert(key.to_string(), i);
            self.steps.push(Step::Request(i));
            i
        };
        &mut self.requests[i]
    }

    /// Appends user text, merging with a user step just before it.
    pub fn user(&mut self, tokens: usize, text: Option<&str>) {
        if let Some(Step::User {
            tokens: t,
            text: kept,
        }) = self.steps.last_mut()
        {
            *t += tokens;
            if let (Some(k), Some(new)) = (kept.as_mut(), text) {
                k.push('\n');
                k.push_str(new);
            }
            return;
        }
        self.steps.push(Step::User {
            tokens,
            text: text.map(str::to_string),
        });
    }

    /// Requests the provider billed in this file (usage recorded; copies are never requests).
    pub fn billed(&self) -> impl Iterator<Item = &Request> {
        self.requests.iter().filter(|r| r.usage.is_some())
    }

    /// Adds copied history, merging with a copied step just before it.
    pub fn copied(&mut self, tokens: usize) {
        if let Some(Step::Copied { tokens: t }) = self.steps.last_mut() {
            *t += tokens;
            return;
        }
        self.steps.push(Step::Copied { tokens });
    }

    pub fn tool_calls(&self) -> usize {
        self.requests.iter().map(|r| r.calls.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}
