//! Codex CLI rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): lines of
//! `{timestamp, type, payload}`. `response_item` payloads are the conversation (messages,
//! reasoning summaries, function calls and their outputs); an `event_msg` of type
//! `token_count` closes one model request and carries its usage (`last_token_usage`: input
//! with cached input inside it, and output).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::claude::render_call;
use super::{BadLine, ignore};
use crate::session::count_text;
use crate::session::transcript::{Call, Request, Step, ToolResult, Transcript, Usage};

/// Top-level line types of a rollout file.
pub const TOP_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
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
    message: Option<&'a RawValue>,
    #[serde(default)]
    info: Option<TokenInfo>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Default)]
struct TokenUsage {
    /// Every input token, the cached ones included (OpenAI's convention).
    #[serde(rename = "input_tokens", default)]
    input: u64,
    #[serde(rename = "cached_input_tokens", default)]
    cached: u64,
    #[serde(rename = "output_tokens", default)]
    output: u64,
}

#[derive(Deserialize)]
struct TokenInfo {
    #[serde(default)]
    total_token_usage: Option<TokenUsage>,
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
                n += super::claude::image_tokens();
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

/// A Codex rollout being read.
#[derive(Default)]
pub(super) struct State {
    session_id: Option<String>,
    tx: Transcript,
    model: Option<String>,
    /// What the model wrote since the last request closed.
    pending: Option<Request>,
    last_total: Option<TokenUsage>,
    requests: usize,
}

impl State {
    pub fn line(
        &mut self,
        text: &str,
        opts: super::ReadOptions,
        ignored: &mut BTreeMap<String, usize>,
    ) -> Result<(), BadLine> {
        let line: RolloutLine<'_> = serde_json::from_str(text).map_err(|e| BadLine::json(&e, 0))?;
        let Some(raw) = line.payload else {
            ignore(ignored, &line.kind);
            return Ok(());
        };
        let offset = raw.get().as_ptr() as usize - text.as_ptr() as usize;
        let p: Payload<'_> =
            serde_json::from_str(raw.get()).map_err(|e| BadLine::json(&e, offset))?;
        match line.kind.as_ref() {
            "session_meta" => {
                if let Some(id) = p.id {
                    self.session_id.get_or_insert_with(|| id.into_owned());
                }
            }
            "turn_context" => {
                if let Some(m) = p.model {
                    self.model = Some(m.into_owned());
                }
            }
            "response_item" => self.item(&p, opts, ignored),
            "event_msg" => {
                if p.kind.as_deref() == Some("token_count") {
                    self.token_count(p.info);
                }
            }
            "compacted" => {
                self.close(None);
                let summary_tokens = p.message.map_or(0, |m| texts_tokens(m, None));
                self.tx.steps.push(Step::Compact { summary_tokens });
            }
            other => ignore(ignored, other),
        }
        Ok(())
    }

    fn item(
        &mut self,
        p: &Payload<'_>,
        opts: super::ReadOptions,
        ignored: &mut BTreeMap<String, usize>,
    ) {
        let kind = p.kind.as_deref().unwrap_or("");
        match kind {
            "message" if p.role.as_deref() == Some("assistant") => {
                let n = p.content.map_or(0, |c| texts_tokens(c, None));
                self.out().text_tokens += n;
            }
            "message" => {
                self.close(None);
                let mut kept = opts.keep_text.then(String::new);
                let n = p.content.map_or(0, |c| texts_tokens(c, kept.as_mut()));
                self.tx.user(n, kept.as_deref());
            }
            "reasoning" => {
                let n = p.summary.map_or(0, |c| texts_tokens(c, None));
                self.out().text_tokens += n;
            }
            "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call" => {
                let call = Self::call(kind, p);
                self.out().calls.push(call);
            }
            "function_call_output" | "custom_tool_call_output" => {
                self.close(None);
                let tokens = p.output.map_or(0, |o| texts_tokens(o, None));
                let result = ToolResult {
                    call_id: p.call_id.as_deref().unwrap_or("").to_string(),
                    tokens,
                    references: Vec::new(),
                    agent: None,
                };
                match self.tx.steps.last_mut() {
                    Some(Step::Results(rs)) => rs.push(result),
                    _ => self.tx.steps.push(Step::Results(vec![result])),
                }
            }
            other => ignore(ignored, &format!("response_item:{other}")),
        }
    }

    fn call(kind: &str, p: &Payload<'_>) -> Call {
        let name = match kind {
            "local_shell_call" => "local_shell".to_string(),
            "web_search_call" => "web_search".to_string(),
            _ => p.name.as_deref().unwrap_or("").to_string(),
        };
        // `arguments` is the JSON of the arguments inside a string; the others are raw.
        let input: Cow<'_, str> = match (p.arguments, p.input, p.action) {
            (Some(a), _, _) => {
                serde_json::from_str::<Cow<'_, str>>(a.get()).unwrap_or(Cow::Borrowed(a.get()))
            }
            (None, Some(i), _) => Cow::Borrowed(i.get()),
            (None, None, Some(a)) => Cow::Borrowed(a.get()),
            _ => Cow::Borrowed("{}"),
        };
        Call {
            id: p.call_id.as_deref().unwrap_or("").to_string(),
            tokens: count_text(&render_call(&name, &input)),
            name,
            query: None,
        }
    }

    fn out(&mut self) -> &mut Request {
        self.pending.get_or_insert_with(Request::default)
    }

    /// Ends the request being written (with its usage when a `token_count` closes it).
    fn close(&mut self, usage: Option<Usage>) {
        let Some(out) = self.pending.take() else {
            return;
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

    fn token_count(&mut self, info: Option<TokenInfo>) {
        let Some(info) = info else { return };
        // The same totals repeated (a rate-limit update) are not a new request.
        if info.total_token_usage.is_some() && info.total_token_usage == self.last_total {
            return;
        }
        let last = match (
            info.last_token_usage,
            info.total_token_usage,
            self.last_total,
        ) {
            (Some(l), _, _) => l,
            (None, Some(t), prev) => {
                let p = prev.unwrap_or_default();
                TokenUsage {
                    input: t.input.saturating_sub(p.input),
                    cached: t.cached.saturating_sub(p.cached),
                    output: t.output.saturating_sub(p.output),
                }
            }
            _ => return,
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
        if self.pending.is_some() {
            self.close(Some(usage));
        } else if let Some(r) = self.tx.requests.last_mut().filter(|r| r.usage.is_none()) {
            r.usage = Some(usage);
        } else {
            // Usage with nothing written (an empty answer) is still a billed request.
            self.pending = Some(Request::default());
            self.close(Some(usage));
        }
    }

    pub fn finish(
        mut self,
    ) -> (
        Option<String>,
        Option<crate::session::transcript::Transcript>,
        Vec<crate::session::transcript::Transcript>,
    ) {
        self.close(None);
        (self.session_id, Some(self.tx), Vec::new())
    }
}
