//! Codex rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, Codex CLI and Codex
//! Desktop): lines of `{timestamp, type, payload}`, the shapes of `codex-rs/protocol`
//! (`RolloutItem`: `session_meta`, `response_item`, `event_msg`, `turn_context`, `compacted`).
//!
//! - `session_meta.base_instructions` (`{text}` or a string; older rollouts: `instructions`)
//!   is the system prompt; developer, `AGENTS.md` and `<environment_context>` messages before
//!   the first prompt are system context too (later ones are history); `dynamic_tools` are the
//!   session's own tools (catalog entries).
//! - `response_item` payloads are the conversation: messages, reasoning summaries, calls
//!   (`function_call` with its `namespace`: `mcp__server__` + `tool` is `mcp__server__tool`;
//!   `custom_tool_call`, `local_shell_call`, `tool_search_call`) and their outputs; a
//!   `web_search_call` runs on the provider inside the same response, so it counts as what
//!   the model wrote, not as a call. A prompt arrives as a user `message` item, an `event_msg` `user_message`, or
//!   (Codex CLI) both: the event counts only when no item carries the same text.
//! - An `event_msg` `token_count` closes one model request and carries its usage
//!   (`last_token_usage`: input with cached input inside it, and output); `info: null` is a
//!   rate-limit update, nothing billed. `turn_aborted` ends a turn the user stopped.
//! - `compacted` replaces the history with its `message` (and `replacement_history`).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::claude::{image_tokens, render_call, render_reference};
use super::{BadLine, ReadOptions, ReadStats, ignore, key_hash};
use crate::catalog::Tool;
use crate::session::transcript::{Call, Request, Step, ToolResult, Transcript, Usage, tokens};
use crate::session::{SEARCH_TOOL, count_text};

/// Top-level line types of a rollout file.
pub const TOP_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

/// The start of a user-role message Codex injects itself (not the user's prompt).
const CONTEXT_MARKERS: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
    "<user_shell_command>",
];

#[derive(Deserialize)]
struct RolloutLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    summary: Option<&'a RawValue>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    namespace: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    action: Option<&'a RawValue>,
    #[serde(borrow, default)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tools: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    images: Option<&'a RawValue>,
    #[serde(borrow, default)]
    replacement_history: Option<&'a RawValue>,
    #[serde(default)]
    info: Option<TokenInfo>,
    #[serde(borrow, default)]
    base_instructions: Option<&'a RawValue>,
    #[serde(borrow, default)]
    instructions: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dynamic_tools: Option<&'a RawValue>,
}

/// One request's usage (`last_token_usage`): each field at most a request's bill.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Default)]
struct TokenUsage {
    /// Every input token, the cached ones included (OpenAI's convention).
    #[serde(
        rename = "input_tokens",
        default,
        deserialize_with = "tokens::input_tokens"
    )]
    input: u64,
    #[serde(
        rename = "cached_input_tokens",
        default,
        deserialize_with = "tokens::cached_input_tokens"
    )]
    cached: u64,
    #[serde(
        rename = "output_tokens",
        default,
        deserialize_with = "tokens::output_tokens"
    )]
    output: u64,
}

/// The session's running totals (`total_token_usage`): each field at most a session's total.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Default)]
struct TotalUsage {
    #[serde(
        rename = "input_tokens",
        default,
        deserialize_with = "tokens::total_input_tokens"
    )]
    input: u64,
    #[serde(
        rename = "cached_input_tokens",
        default,
        deserialize_with = "tokens::total_cached_input_tokens"
    )]
    cached: u64,
    #[serde(
        rename = "output_tokens",
        default,
        deserialize_with = "tokens::total_output_tokens"
    )]
    output: u64,
}

impl TotalUsage {
    /// What one request added to the totals: each field's difference from the previous ones.
    /// Totals that went down are a damaged log, not a request of negative size.
    fn since(&self, prev: &TotalUsage) -> Result<TokenUsage, String> {
        let field = |name: &str, now: u64, was: u64| {
            now.checked_sub(was).ok_or_else(|| {
                format!("total_token_usage {name} went down from {was} to {now} (a running total)")
            })
        };
        Ok(TokenUsage {
            input: field("input_tokens", self.input, prev.input)?,
            cached: field("cached_input_tokens", self.cached, prev.cached)?,
            output: field("output_tokens", self.output, prev.output)?,
        })
    }
}

#[derive(Deserialize)]
struct TokenInfo {
    #[serde(default)]
    total_token_usage: Option<TotalUsage>,
    #[serde(default)]
    last_token_usage: Option<TokenUsage>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct OutputObject<'a> {
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Instructions<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

/// One `dynamic_tools` entry (`DynamicToolSpec`; camelCase from the app server, snake_case
/// in some rollouts).
#[derive(Deserialize)]
struct DynamicTool {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default, alias = "inputSchema")]
    input_schema: Option<serde_json::Value>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default, alias = "deferLoading")]
    defer_loading: bool,
}

/// One entry of a `tool_search_output`: a tool, or a namespace of tools.
#[derive(Deserialize)]
struct FoundTool {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    tools: Vec<FoundTool>,
}

#[derive(Deserialize)]
struct SearchArguments<'a> {
    #[serde(borrow, default)]
    query: Option<Cow<'a, str>>,
}

/// The flat name of a namespaced call, as Codex joins them (`ToolName::canonical_flat_name`:
/// `mcp__node_repl__` + `js` → `mcp__node_repl__js`, `mcp__github` + `get_me` →
/// `mcp__github__get_me`), and the bare name for a namespace that is not an MCP server's.
pub fn flat_name(namespace: Option<&str>, name: &str) -> (String, Option<String>) {
    match namespace.filter(|n| !n.is_empty()) {
        None => (name.to_string(), None),
        Some(ns) => {
            let flat = format!(
                "{}__{}",
                ns.trim_end_matches('_'),
                name.trim_start_matches('_')
            );
            let alt = (!ns.starts_with("mcp__")).then(|| name.to_string());
            (flat, alt)
        }
    }
}

/// A dynamic tool as a catalog entry: an `mcp__server` namespace makes it that server's tool,
/// another namespace is part of its built-in name (as Codex flattens it).
fn dynamic_tool(t: DynamicTool) -> Tool {
    let (server, name) = match t.namespace.as_deref().filter(|n| !n.is_empty()) {
        Some(ns) if ns.starts_with("mcp__") => (
            Some(ns["mcp__".len()..].trim_matches('_').to_string()),
            t.name.clone(),
        ),
        ns => (None, flat_name(ns, &t.name).0),
    };
    Tool {
        id: match &server {
            Some(s) => crate::catalog::mcp_id(s, &name),
            None => name.clone(),
        },
        name,
        server,
        description: t.description,
        input_schema: t
            .input_schema
            .filter(serde_json::Value::is_object)
            .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
        should_defer: t.defer_loading.then_some(true),
        always_load: false,
        search_hint: None,
        depends_on: Vec::new(),
        origin: None,
    }
}

/// Tokens of every text in a string, an object's `content`, or a list of content parts.
fn texts_tokens(raw: &RawValue, keep: Option<&mut String>) -> usize {
    if let Ok(s) = serde_json::from_str::<Cow<'_, str>>(raw.get()) {
        if let Some(k) = keep {
            k.push_str(&s);
        }
        return count_text(&s);
    }
    if let Ok(parts) = serde_json::from_str::<Vec<Part<'_>>>(raw.get()) {
        let mut n = 0;
        let mut keep = keep;
        for p in &parts {
            if p.kind.as_deref().is_some_and(|k| k.ends_with("image")) {
                n += image_tokens();
            } else if let Some(t) = &p.text {
                n += count_text(t);
                if let Some(k) = keep.as_deref_mut() {
                    k.push_str(t);
                }
            }
        }
        return n;
    }
    match serde_json::from_str::<OutputObject<'_>>(raw.get()) {
        Ok(OutputObject { content: Some(c) }) => texts_tokens(c, keep),
        _ => 0,
    }
}

/// The text of a message's content (string or parts), for telling context from prompts.
fn first_text(raw: &RawValue) -> String {
    if let Ok(s) = serde_json::from_str::<Cow<'_, str>>(raw.get()) {
        return s.into_owned();
    }
    serde_json::from_str::<Vec<Part<'_>>>(raw.get())
        .ok()
        .and_then(|ps| ps.into_iter().find_map(|p| p.text.map(Cow::into_owned)))
        .unwrap_or_default()
}

/// A user prompt seen as an `event_msg` only, kept until a message item shows it was also
/// written as one (Codex CLI writes both; Codex Desktop only the event).
struct EventPrompt {
    hash: u64,
    tokens: usize,
    text: Option<String>,
}

/// A Codex rollout being read.
#[derive(Default)]
pub(super) struct State {
    pub session_id: Option<String>,
    tx: Transcript,
    model: Option<String>,
    /// What the model wrote since the last request closed.
    pending: Option<Request>,
    /// A bill that came before the response it bills (Codex 0.40 writes `token_count` ahead
    /// of the response's items): given to the next request that closes.
    held: Option<Usage>,
    last_total: Option<TotalUsage>,
    requests: usize,
    searches: usize,
    /// System prompt and system context (o200k counts), before the first prompt.
    pub system_tokens: usize,
    pub has_system: bool,
    pub dynamic_tools: Vec<Tool>,
    prompted: bool,
    event_prompt: Option<EventPrompt>,
    /// The hash of the last prompt a message item carried (its event repeats it).
    item_prompt: Option<u64>,
}

impl State {
    pub fn line(
        &mut self,
        text: &str,
        opts: ReadOptions,
        stats: &mut ReadStats,
    ) -> Result<(), BadLine> {
        let line: RolloutLine<'_> = serde_json::from_str(text).map_err(|e| BadLine::json(&e, 0))?;
        let Some(raw) = line.payload else {
            ignore(&mut stats.ignored, &line.kind);
            return Ok(());
        };
        let offset = raw.get().as_ptr() as usize - text.as_ptr() as usize;
        let p: Payload<'_> =
            serde_json::from_str(raw.get()).map_err(|e| BadLine::json(&e, offset))?;
        match line.kind.as_ref() {
            "session_meta" => self.meta(&p),
            "turn_context" => {
                if let Some(m) = p.model {
                    self.model = Some(m.into_owned());
                }
            }
            "response_item" => self.item(&p, opts, stats),
            "event_msg" => match p.kind.as_deref() {
                Some("token_count") => {
                    self.token_count(p.info)
                        .map_err(|message| BadLine { column: 1, message })?;
                }
                Some("user_message") => self.event_prompt(&p, opts),
                Some("turn_aborted") => {
                    self.close(None);
                    self.tx.steps.push(Step::Interrupt);
                }
                _ => {}
            },
            "compacted" => {
                self.flush_event();
                self.close(None);
                let summary_tokens = p.message.map_or(0, |m| texts_tokens(m, None))
                    + p.replacement_history.map_or(0, history_tokens);
                self.tx.steps.push(Step::Compact { summary_tokens });
            }
            other => ignore(&mut stats.ignored, other),
        }
        Ok(())
    }

    fn meta(&mut self, p: &Payload<'_>) {
        if let Some(id) = &p.id {
            self.session_id.get_or_insert_with(|| id.to_string());
        }
        // A resumed or forked rollout repeats session_meta: the first one is this session's.
        if self.has_system || !self.dynamic_tools.is_empty() {
            return;
        }
        for raw in [p.base_instructions, p.instructions].into_iter().flatten() {
            let text = serde_json::from_str::<Cow<'_, str>>(raw.get())
                .ok()
                .or_else(|| {
                    serde_json::from_str::<Instructions<'_>>(raw.get())
                        .ok()
                        .and_then(|i| i.text)
                });
            if let Some(t) = text.filter(|t| !t.is_empty()) {
                self.system_tokens += count_text(&t);
                self.has_system = true;
            }
        }
        if let Some(raw) = p.dynamic_tools
            && let Ok(tools) = serde_json::from_str::<Vec<DynamicTool>>(raw.get())
        {
            self.dynamic_tools = tools.into_iter().map(dynamic_tool).collect();
        }
    }

    fn item(&mut self, p: &Payload<'_>, opts: ReadOptions, stats: &mut ReadStats) {
        let kind = p.kind.as_deref().unwrap_or("");
        match kind {
            "message" if p.role.as_deref() == Some("assistant") => {
                let n = p.content.map_or(0, |c| texts_tokens(c, None));
                self.out().text_tokens += n;
            }
            "message" => self.message(p, opts),
            "reasoning" => {
                let n = p.summary.map_or(0, |c| texts_tokens(c, None));
                self.out().text_tokens += n;
            }
            "web_search_call" => {
                // The provider runs it inside the same response: part of the model's answer,
                // not a call the client answers.
                let action = p.action.map_or("{}", RawValue::get);
                let n = count_text(&render_call("web_search", action));
                self.out().text_tokens += n;
            }
            "function_call" | "custom_tool_call" | "local_shell_call" | "tool_search_call" => {
                let call = self.call(kind, p);
                self.out().calls.push(call);
            }
            "function_call_output" | "custom_tool_call_output" | "tool_search_output" => {
                self.flush_event();
                self.close(None);
                let (tokens, references) = if kind == "tool_search_output" {
                    found_tools(p.tools)
                } else {
                    (p.output.map_or(0, |o| texts_tokens(o, None)), Vec::new())
                };
                let call_id = match &p.call_id {
                    Some(c) => c.to_string(),
                    None => format!("search-{}", self.searches),
                };
                let result = ToolResult {
                    call_id,
                    tokens,
                    references,
                    agent: None,
                    // Rollouts do not mark failed calls.
                    is_error: false,
                };
                match self.tx.steps.last_mut() {
                    Some(Step::Results(rs)) => rs.push(result),
                    _ => self.tx.steps.push(Step::Results(vec![result])),
                }
            }
            other => ignore(&mut stats.ignored, &format!("response_item:{other}")),
        }
    }

    /// A user, developer or system message: system context before the first prompt, a prompt
    /// otherwise (or history, for context Codex injects later).
    fn message(&mut self, p: &Payload<'_>, opts: ReadOptions) {
        let role = p.role.as_deref().unwrap_or("user");
        let head = p.content.map(first_text).unwrap_or_default();
        let is_context = role != "user" || {
            let h = head.trim_start();
            CONTEXT_MARKERS.iter().any(|m| h.starts_with(m))
        };
        let mut kept = opts.keep_text.then(String::new);
        let n = p.content.map_or(0, |c| texts_tokens(c, kept.as_mut()));
        if is_context
            && !self.prompted
            && self.event_prompt.is_none()
            && self.tx.requests.is_empty()
            && self.pending.is_none()
        {
            self.system_tokens += n;
            self.has_system = true;
            return;
        }
        self.close(None);
        if !is_context {
            let hash = key_hash(&head);
            if self.event_prompt.as_ref().is_some_and(|e| e.hash == hash) {
                self.event_prompt = None;
            } else {
                self.flush_event();
                self.item_prompt = Some(hash);
            }
            self.prompted = true;
        }
        self.tx.user(n, kept.as_deref());
    }

    /// An `event_msg` `user_message`: the prompt, unless a message item already carried it.
    fn event_prompt(&mut self, p: &Payload<'_>, opts: ReadOptions) {
        let text = p
            .message
            .and_then(|m| serde_json::from_str::<Cow<'_, str>>(m.get()).ok())
            .unwrap_or_default();
        let hash = key_hash(&text);
        if self.item_prompt == Some(hash) {
            self.item_prompt = None;
            return;
        }
        self.flush_event();
        let images = p
            .images
            .and_then(|i| serde_json::from_str::<Vec<&RawValue>>(i.get()).ok())
            .map_or(0, |v| v.len());
        self.event_prompt = Some(EventPrompt {
            hash,
            tokens: count_text(&text) + images * image_tokens(),
            text: opts.keep_text.then(|| text.into_owned()),
        });
    }

    /// An event prompt no message item repeated: the user's message.
    fn flush_event(&mut self) {
        if let Some(e) = self.event_prompt.take() {
            self.close(None);
            self.prompted = true;
            self.tx.user(e.tokens, e.text.as_deref());
        }
    }

    fn call(&mut self, kind: &str, p: &Payload<'_>) -> Call {
        let (name, alt_name) = match kind {
            "local_shell_call" => ("local_shell".to_string(), None),
            "tool_search_call" => (SEARCH_TOOL.to_string(), None),
            _ => flat_name(p.namespace.as_deref(), p.name.as_deref().unwrap_or("")),
        };
        // `arguments` is the JSON of the arguments inside a string (an object for
        // `tool_search_call`); the others are raw.
        let input: Cow<'_, str> = match (p.arguments, p.input, p.action) {
            (Some(a), _, _) => {
                serde_json::from_str::<Cow<'_, str>>(a.get()).unwrap_or(Cow::Borrowed(a.get()))
            }
            (None, Some(i), _) => Cow::Borrowed(i.get()),
            (None, None, Some(a)) => Cow::Borrowed(a.get()),
            _ => Cow::Borrowed("{}"),
        };
        let query = (kind == "tool_search_call")
            .then(|| {
                serde_json::from_str::<SearchArguments<'_>>(&input)
                    .ok()
                    .and_then(|a| a.query.map(Cow::into_owned))
            })
            .flatten();
        let id = match (&p.call_id, kind) {
            (Some(c), _) => c.to_string(),
            (None, "tool_search_call") => {
                self.searches += 1;
                format!("search-{}", self.searches)
            }
            (None, _) => String::new(),
        };
        if kind == "tool_search_call" && p.call_id.is_some() {
            self.searches += 1;
        }
        Call {
            id,
            tokens: count_text(&render_call(&name, &input)),
            name,
            alt_name,
            query,
            subagent_type: None,
        }
    }

    fn out(&mut self) -> &mut Request {
        self.flush_event();
        self.pending.get_or_insert_with(Request::default)
    }

    /// Ends the request being written (with its usage when a `token_count` closes it).
    fn close(&mut self, usage: Option<Usage>) {
        let usage = usage.or_else(|| self.held.take());
        let out = match (self.pending.take(), usage) {
            (Some(out), _) => out,
            // A bill with nothing written after it: an empty answer, still billed.
            (None, Some(_)) => Request::default(),
            (None, None) => return,
        };
        self.requests += 1;
        let key = format!("request-{}", self.requests);
        let model = self.model.clone();
        let req = self.tx.request(&key);
        req.model = model;
        req.usage = usage;
        req.text_tokens = out.text_tokens;
        req.calls = out.calls;
    }

    fn token_count(&mut self, info: Option<TokenInfo>) -> Result<(), String> {
        let Some(info) = info else { return Ok(()) };
        // The same totals repeated (a rate-limit update) are not a new request.
        if info.total_token_usage.is_some() && info.total_token_usage == self.last_total {
            return Ok(());
        }
        let last = match (
            info.last_token_usage,
            info.total_token_usage,
            self.last_total,
        ) {
            (Some(l), _, _) => l,
            (None, Some(t), prev) => t.since(&prev.unwrap_or_default())?,
            _ => return Ok(()),
        };
        if info.total_token_usage.is_some() {
            self.last_total = info.total_token_usage;
        }
        let cached = last.cached.min(last.input);
        let usage = Usage {
            input: last.input - cached,
            cache_creation: 0,
            cache_read: cached,
            output: last.output,
        };
        usage.check()?;
        if self.pending.is_some() {
            self.close(Some(usage));
        } else if let Some(r) = self.tx.requests.last_mut().filter(|r| r.usage.is_none()) {
            r.usage = Some(usage);
        } else {
            // Every request so far is billed and nothing is written yet: the bill of the
            // response that follows (0.40's order). A bill already held had nothing written
            // after it: an empty answer, billed.
            if self.held.is_some() {
                self.close(None);
            }
            self.held = Some(usage);
        }
        Ok(())
    }

    pub fn finish(mut self) -> (Option<String>, Option<Transcript>, Vec<Transcript>) {
        self.flush_event();
        self.close(None);
        (self.session_id, Some(self.tx), Vec::new())
    }
}

/// Tokens of the texts of a compaction's replacement history (a list of response items).
fn history_tokens(raw: &RawValue) -> usize {
    #[derive(Deserialize)]
    struct Item<'a> {
        #[serde(borrow, default)]
        content: Option<&'a RawValue>,
    }
    serde_json::from_str::<Vec<Item<'_>>>(raw.get()).map_or(0, |items| {
        items
            .iter()
            .filter_map(|i| i.content)
            .map(|c| texts_tokens(c, None))
            .sum()
    })
}

/// The tools a `tool_search_output` loaded, flat names in order, and the tokens of their
/// references (as for a Claude `tool_reference` result: the definitions the replay adds).
fn found_tools(raw: Option<&RawValue>) -> (usize, Vec<String>) {
    let Some(found) = raw.and_then(|r| serde_json::from_str::<Vec<FoundTool>>(r.get()).ok()) else {
        return (0, Vec::new());
    };
    let mut names = Vec::new();
    for t in &found {
        if t.kind.as_deref() == Some("namespace") || !t.tools.is_empty() {
            for inner in &t.tools {
                if let Some(n) = &inner.name {
                    names.push(flat_name(t.name.as_deref(), n).0);
                }
            }
        } else if let Some(n) = &t.name {
            names.push(flat_name(t.namespace.as_deref(), n).0);
        }
    }
    let tokens = names.iter().map(|n| count_text(&render_reference(n))).sum();
    (tokens, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_calls_take_codex_flat_names() {
        assert_eq!(
            flat_name(Some("mcp__node_repl__"), "js"),
            ("mcp__node_repl__js".to_string(), None)
        );
        assert_eq!(
            flat_name(Some("mcp__github"), "get_me"),
            ("mcp__github__get_me".to_string(), None)
        );
        assert_eq!(
            flat_name(Some("multi_agent_v1"), "spawn_agent"),
            (
                "multi_agent_v1__spawn_agent".to_string(),
                Some("spawn_agent".to_string())
            )
        );
        assert_eq!(
            flat_name(None, "exec_command"),
            ("exec_command".into(), None)
        );
        assert_eq!(flat_name(Some(""), "x"), ("x".into(), None));
    }

    #[test]
    fn dynamic_tools_become_catalog_entries() {
        let t = dynamic_tool(DynamicTool {
            name: "load_workspace".into(),
            description: "Loads it".into(),
            input_schema: None,
            namespace: Some("codex_app".into()),
            defer_loading: true,
        });
        assert_eq!(
            (t.id.as_str(), t.server.as_deref()),
            ("codex_app__load_workspace", None)
        );
        assert_eq!(t.should_defer, Some(true));
        let m = dynamic_tool(DynamicTool {
            name: "query".into(),
            description: String::new(),
            input_schema: Some(serde_json::json!({"type": "object"})),
            namespace: Some("mcp__db__".into()),
            defer_loading: false,
        });
        assert_eq!(
            (m.id.as_str(), m.server.as_deref()),
            ("mcp__db__query", Some("db"))
        );
    }

    #[test]
    fn a_search_output_names_every_tool_it_loaded() {
        let raw: Box<RawValue> = serde_json::from_str(
            r#"[{"type":"function","name":"get_weather"},{"type":"namespace","name":"mcp__node_repl__","tools":[{"type":"function","name":"js"}]}]"#,
        )
        .unwrap();
        let (tokens, names) = found_tools(Some(&raw));
        assert_eq!(names, ["get_weather", "mcp__node_repl__js"]);
        assert_eq!(
            tokens,
            count_text(&render_reference("get_weather"))
                + count_text(&render_reference("mcp__node_repl__js"))
        );
    }

    #[test]
    fn running_totals_are_checked_not_saturated() {
        let t = |i: u64, c: u64, o: u64| TotalUsage {
            input: i,
            cached: c,
            output: o,
        };
        let d = t(9_000, 4_000, 70).since(&t(5_000, 1_000, 20)).unwrap();
        assert_eq!((d.input, d.cached, d.output), (4_000, 3_000, 50));
        let e = t(9_000, 500, 70).since(&t(5_000, 1_000, 20)).err().unwrap();
        assert!(
            e.contains("total_token_usage cached_input_tokens went down from 1000 to 500"),
            "{e}"
        );
        // A total may pass one request's bound, not a session's; a request may not pass its own.
        let big: TotalUsage =
            serde_json::from_str(r#"{"input_tokens": 5000000000, "output_tokens": 1}"#).unwrap();
        assert_eq!(big.input, 5_000_000_000);
        let e = serde_json::from_str::<TotalUsage>(r#"{"input_tokens": 18446744073709551614}"#)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("any session can total"), "{e}");
        let e = serde_json::from_str::<TokenUsage>(r#"{"input_tokens": 5000000000}"#)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains(
                "input_tokens is 5000000000, more than the 1000000000 tokens any request can bill"
            ),
            "{e}"
        );
    }
}
