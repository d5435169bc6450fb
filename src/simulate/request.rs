//! The parts of one request, each counted and named (ACCOUNTING.md). The prefix order the
//! provider caches is the field order: system, tool_overhead, tools, deferred_list, history, new.

use serde::{Deserialize, Serialize};

/// Input tokens of one request, by part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parts {
    /// The non-tool system prompt.
    pub system: usize,
    /// The provider's tool-use preamble (0 when no tool is sent).
    pub tool_overhead: usize,
    /// Definitions in the tools list (eager: all; deferred: always-loaded + search tool +
    /// revealed/auto-retrieved ones).
    pub tools: usize,
    /// The deferred-tools list (`list` style: every request; `delta` style: the request that
    /// carries an announcement, after which it is history).
    pub deferred_list: usize,
    /// Every earlier message, including search results with their definitions.
    pub history: usize,
    /// The newest message: user text, tool result, search result or error result.
    pub new: usize,
}

/// The parts of one request, in prefix order: [`Parts`]'s fields.
pub const PARTS: [&str; 6] = [
    "system",
    "tool_overhead",
    "tools",
    "deferred_list",
    "history",
    "new",
];

impl Parts {
    pub fn total(&self) -> usize {
        self.system + self.tool_overhead + self.tools + self.deferred_list + self.history + self.new
    }

    /// The parts in prefix order (`PARTS` names them).
    pub fn as_array(&self) -> [usize; 6] {
        [
            self.system,
            self.tool_overhead,
            self.tools,
            self.deferred_list,
            self.history,
            self.new,
        ]
    }

    pub fn add(&mut self, o: &Parts) {
        self.system += o.system;
        self.tool_overhead += o.tool_overhead;
        self.tools += o.tools;
        self.deferred_list += o.deferred_list;
        self.history += o.history;
        self.new += o.new;
    }
}

/// What a request's `new` part carries, i.e. why the request was sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// The turn's user message.
    #[default]
    User,
    /// The result of a first search for a tool.
    Search,
    /// The result of a retry search after a miss.
    Retry,
    /// A tool's result.
    ToolResult,
    /// The error returned for a call to a tool that was not loaded yet.
    ErrorResult,
}

impl RequestKind {
    pub fn name(self) -> &'static str {
        match self {
            RequestKind::User => "user",
            RequestKind::Search => "search",
            RequestKind::Retry => "retry",
            RequestKind::ToolResult => "tool_result",
            RequestKind::ErrorResult => "error_result",
        }
    }
}

/// Which way the agent sends tools: every definition (`eager`), or a search tool and a list
/// (`deferred`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Eager,
    Deferred,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Eager => "eager",
            Mode::Deferred => "deferred",
        }
    }
}

/// One request as the provider would bill it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestRow {
    pub mode: Mode,
    /// 0 for the main agent; 1, 2, … for subagents in the order they were spawned.
    pub agent: usize,
    /// 1-based user turn of the agent that sent it.
    pub turn: usize,
    /// 1-based position among this mode's requests (subagents included).
    pub index: usize,
    pub kind: RequestKind,
    /// The tool whose result (or error) this request carries (`null` for none: the request
    /// CSV always has the column).
    #[serde(default)]
    pub tool: Option<String>,
    /// Tool definitions in this request's tools list, the search tool included.
    pub tools_sent: usize,
    pub parts: Parts,
    pub input_tokens: usize,
    /// Prefix shared with the previous request of the same agent (billed as a cache read).
    pub cached_tokens: usize,
    /// The part whose change broke the prefix the previous request left in the cache (`null`
    /// when the cache held, and for an agent's first request).
    #[serde(default)]
    pub cache_break: Option<super::cost::CacheBreak>,
    /// Tool definitions inside `history` and `new`: search results expanded with
    /// `reveal: append` (what a figure counting "definitions" counts beside `tools`).
    #[serde(default)]
    pub message_definitions: usize,
    /// What the model wrote: a tool call, a search call or the reply.
    pub output_tokens: usize,
    /// USD without prompt caching.
    pub cost_usd: f64,
    /// USD with prompt caching (cache reads and writes).
    pub cost_cached_usd: f64,
    /// Modeled time to first token, ms (with caching).
    pub ttft_ms: f64,
    /// Modeled time until the last output token, ms.
    pub duration_ms: f64,
    /// Input as a percentage of the profile's context window.
    pub occupancy_pct: f64,
    /// Tokens left in the window after this request's input and output (negative: overflow).
    pub headroom_tokens: i64,
    /// Whether input and output fit the context window (`headroom_tokens >= 0`).
    pub fits_window: bool,
    /// Of `input_tokens`, what OpenAI's hosted `tool_search` added inside this response (its
    /// call and the loaded definitions): billed with the request, not part of the prompt it
    /// was sent with (`first_request_tokens` is the prompt). Not a column of its own: the
    /// json's `counts.searches` says a search ran.
    #[serde(skip)]
    pub hosted_search_tokens: usize,
    /// Of `hosted_search_tokens`, the loaded definitions (inside `message_definitions`).
    #[serde(skip)]
    pub hosted_search_definitions: usize,
}

impl RequestRow {
    /// This request as it was sent: without what a hosted search added inside its response
    /// (the row itself when none ran).
    pub fn as_sent(&self) -> RequestRow {
        let mut q = self.clone();
        q.parts.new = q.parts.new.saturating_sub(q.hosted_search_tokens);
        q.input_tokens = q.input_tokens.saturating_sub(q.hosted_search_tokens);
        q.message_definitions = q
            .message_definitions
            .saturating_sub(q.hosted_search_definitions);
        q.hosted_search_tokens = 0;
        q.hosted_search_definitions = 0;
        q
    }
}
