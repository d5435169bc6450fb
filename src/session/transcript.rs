//! The format-neutral shape both readers produce: per agent, the steps of its conversation in
//! file order (user text, API requests with what the model wrote, tool results, compaction,
//! `/clear`, an interrupted turn, history copied from an earlier file), sizes already counted (o200k_base tokens: [`super::convert`] maps each size the
//! scenario records to the session's counter), no text kept unless asked.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Largest token count one field of a request's usage may hold: a billion tokens is far past
/// any context window.
pub const MAX_USAGE_TOKENS: u64 = 1_000_000_000;

/// Usage the provider billed for one API request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Uncached input tokens.
    pub input: u64,
    /// Input tokens written to the prompt cache (Claude); 0 for OpenAI.
    pub cache_creation: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    pub output: u64,
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
        let i = match self.by_key.get(key) {
            Some(&i) => i,
            None => {
                let i = self.requests.len();
                self.requests.push(Request {
                    key: key.to_string(),
                    ..Request::default()
                });
                self.by_key.insert(key.to_string(), i);
                self.steps.push(Step::Request(i));
                i
            }
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
