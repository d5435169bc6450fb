//! Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`, subagents in
//! `agent-<id>.jsonl` files or inline as `isSidechain` records). Records are read by serde
//! derive with borrowed strings; `message` is kept raw and parsed only for `user` and
//! `assistant` records, so a record type added later never fails on its own fields.

use std::borrow::Cow;
use std::collections::HashMap;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::session::transcript::{Call, Step, ToolResult, Transcript, Usage};
use crate::session::{SEARCH_TOOL, count_text};

/// Claude tokens of one image block (the ~1,600-token ceiling for a full-size image: the log
/// keeps only the base64 bytes, so the real size is not known).
pub const IMAGE_TOKENS: usize = 1_600;

/// [`IMAGE_TOKENS`] as the o200k count session sizes are kept in: the anthropic-estimate
/// counter maps it back to 1,600 (Codex sessions, counted with openai-responses, keep the
/// o200k figure: OpenAI bills images by tiles, also unknown from the log).
pub fn image_tokens() -> usize {
    (IMAGE_TOKENS as f64 / crate::counter::anthropic::fit().text_ratio).round() as usize
}

/// Record types this reader uses; every other type is ignored and counted.
pub const KNOWN_TYPES: &[&str] = &["user", "assistant", "system", "summary"];

#[derive(Deserialize)]
pub(super) struct Record<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    #[serde(rename = "isSidechain", default)]
    pub is_sidechain: Option<bool>,
    #[serde(rename = "sessionId", borrow, default)]
    pub session_id: Option<Cow<'a, str>>,
    #[serde(rename = "agentId", borrow, default)]
    pub agent_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub uuid: Option<Cow<'a, str>>,
    #[serde(rename = "parentUuid", borrow, default)]
    pub parent_uuid: Option<Cow<'a, str>>,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Option<bool>,
    #[serde(borrow, default)]
    subtype: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub message: Option<&'a RawValue>,
    #[serde(rename = "toolUseResult", borrow, default)]
    tool_use_result: Option<&'a RawValue>,
}

#[derive(Deserialize)]
pub(super) struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(default)]
    usage: Option<RawUsage>,
}

#[derive(Deserialize, Default)]
struct RawUsage {
    #[serde(rename = "input_tokens", default)]
    input: Option<u64>,
    #[serde(rename = "cache_creation_input_tokens", default)]
    cache_creation: Option<u64>,
    #[serde(rename = "cache_read_input_tokens", default)]
    cache_read: Option<u64>,
    #[serde(rename = "output_tokens", default)]
    output: Option<u64>,
}

impl RawUsage {
    fn usage(&self) -> Usage {
        Usage {
            input: self.input.unwrap_or(0),
            cache_creation: self.cache_creation.unwrap_or(0),
            cache_read: self.cache_read.unwrap_or(0),
            output: self.output.unwrap_or(0),
        }
    }
}

/// `content`: a string or a list of blocks.
pub(super) enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content<'a>, A::Error> {
                let mut blocks = Vec::new();
                while let Some(b) = seq.next_element()? {
                    blocks.push(b);
                }
                Ok(Content::Blocks(blocks))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// Every block kind in one flat struct (derive needs no buffering, unlike a tagged enum).
#[derive(Deserialize)]
pub(super) struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(borrow, default)]
    tool_name: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct SearchInput<'a> {
    #[serde(borrow, default)]
    query: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct AgentRef<'a> {
    #[serde(rename = "agentId", borrow, default)]
    agent_id: Option<Cow<'a, str>>,
}

/// The rendered call `{"name":NAME,"input":INPUT}` as a provider sees it; the log's input
/// is already compact JSON, so its raw text is the rendering.
pub fn render_call(name: &str, input: &str) -> String {
    let mut s = String::with_capacity(input.len() + name.len() + 24);
    s.push_str("{\"name\":");
    s.push_str(&serde_json::to_string(name).expect("a string serializes"));
    s.push_str(",\"input\":");
    s.push_str(input);
    s.push('}');
    s
}

/// The text counted for a `tool_reference` block of a search result.
pub fn render_reference(tool: &str) -> String {
    format!(
        "{{\"type\":\"tool_reference\",\"tool_name\":{}}}",
        serde_json::to_string(tool).expect("a string serializes")
    )
}

/// Whether a user text is the `/clear` command Claude Code logs.
fn is_clear(text: &str) -> bool {
    text.contains("<command-name>/clear</command-name>")
}

/// Applies one parsed record to its transcript. `message` is the record's parsed message.
pub(super) struct Apply<'t> {
    pub tx: &'t mut Transcript,
    pub keep_text: bool,
    /// Call id → tool name, to recognise a `Task` result and a search result.
    pub call_names: &'t mut HashMap<String, String>,
}

impl Apply<'_> {
    pub fn record(&mut self, rec: &Record<'_>, msg: Option<Message<'_>>) {
        match rec.kind.as_ref() {
            "assistant" => {
                if let Some(m) = msg {
                    self.assistant(rec, m);
                }
            }
            "user" => {
                if let Some(m) = msg {
                    self.user(rec, m);
                }
            }
            "system" if rec.subtype.as_deref() == Some("compact_boundary") => {
                self.tx.steps.push(Step::Compact { summary_tokens: 0 });
            }
            _ => {}
        }
    }

    fn assistant(&mut self, rec: &Record<'_>, m: Message<'_>) {
        // Client-made messages (interruptions, API errors) were never an API request.
        if m.model.as_deref() == Some("<synthetic>") {
            return;
        }
        let key =
            m.id.as_deref()
                .or(rec.uuid.as_deref())
                .unwrap_or("")
                .to_string();
        let mut text_tokens = 0;
        let mut calls = Vec::new();
        if let Some(content) = &m.content {
            match content {
                Content::Text(t) => text_tokens += count_text(t),
                Content::Blocks(blocks) => {
                    for b in blocks {
                        text_tokens += self.assistant_block(b, &mut calls);
                    }
                }
            }
        }
        let req = self.tx.request(&key);
        if let Some(model) = m.model {
            req.model = Some(model.into_owned());
        }
        if let Some(u) = &m.usage {
            req.usage
                .get_or_insert_with(Usage::default)
                .merge_max(&u.usage());
        }
        req.text_tokens += text_tokens;
        req.calls.extend(calls);
    }

    /// Counts one assistant block; a `tool_use` becomes a call. Returns the text tokens.
    fn assistant_block(&mut self, b: &Block<'_>, calls: &mut Vec<Call>) -> usize {
        match b.kind.as_deref() {
            Some("text") => b.text.as_deref().map_or(0, count_text),
            Some("thinking") => b.thinking.as_deref().map_or(0, count_text),
            Some("tool_use") => {
                let name = b.name.as_deref().unwrap_or("").to_string();
                let id = b.id.as_deref().unwrap_or("").to_string();
                let input = b.input.map_or("{}", |r| r.get());
                let query = if name == SEARCH_TOOL {
                    serde_json::from_str::<SearchInput<'_>>(input)
                        .ok()
                        .and_then(|s| s.query.map(Cow::into_owned))
                } else {
                    None
                };
                let tokens = count_text(&render_call(&name, input));
                self.call_names.insert(id.clone(), name.clone());
                calls.push(Call {
                    id,
                    name,
                    tokens,
                    query,
                });
                0
            }
            _ => 0,
        }
    }

    fn user(&mut self, rec: &Record<'_>, m: Message<'_>) {
        let Some(content) = m.content else { return };
        let mut user_tokens = 0;
        let mut user_text: Option<String> = None;
        let mut results = Vec::new();
        let mut clear = false;
        match &content {
            Content::Text(t) => {
                clear |= is_clear(t);
                user_tokens += count_text(t);
                user_text = self.keep_text.then(|| t.to_string());
            }
            Content::Blocks(blocks) => {
                for b in blocks {
                    match b.kind.as_deref() {
                        Some("tool_result") => results.push(self.tool_result(b, rec)),
                        Some("text") => {
                            let t = b.text.as_deref().unwrap_or("");
                            clear |= is_clear(t);
                            user_tokens += count_text(t);
                            if self.keep_text {
                                user_text.get_or_insert_with(String::new).push_str(t);
                            }
                        }
                        Some("image") => user_tokens += image_tokens(),
                        _ => {}
                    }
                }
            }
        }
        if rec.is_compact_summary == Some(true) {
            self.compact_summary(user_tokens);
            return;
        }
        if clear {
            self.tx.steps.push(Step::Clear);
            return;
        }
        if !results.is_empty() {
            self.tx.steps.push(Step::Results(results));
        }
        if user_tokens > 0 || user_text.is_some() {
            self.tx.user(user_tokens, user_text.as_deref());
        }
    }

    /// The summary that follows a compaction boundary sets the boundary's size.
    fn compact_summary(&mut self, tokens: usize) {
        match self.tx.steps.last_mut() {
            Some(Step::Compact { summary_tokens }) => *summary_tokens += tokens,
            _ => self.tx.steps.push(Step::Compact {
                summary_tokens: tokens,
            }),
        }
    }

    fn tool_result(&mut self, b: &Block<'_>, rec: &Record<'_>) -> ToolResult {
        let call_id = b.tool_use_id.as_deref().unwrap_or("").to_string();
        let mut tokens = 0;
        let mut references = Vec::new();
        let mut texts: Vec<&str> = Vec::new();
        match &b.content {
            Some(Content::Text(t)) => {
                tokens += count_text(t);
                texts.push(t);
            }
            Some(Content::Blocks(inner)) => {
                for ib in inner {
                    match ib.kind.as_deref() {
                        Some("text") => {
                            let t = ib.text.as_deref().unwrap_or("");
                            tokens += count_text(t);
                            texts.push(t);
                        }
                        Some("tool_reference") => {
                            let tool = ib.tool_name.as_deref().unwrap_or("");
                            tokens += count_text(&render_reference(tool));
                            references.push(tool.to_string());
                        }
                        Some("image") => tokens += image_tokens(),
                        _ => {}
                    }
                }
            }
            None => {}
        }
        let is_task = self
            .call_names
            .get(&call_id)
            .is_some_and(|n| n == "Task" || n == "Agent");
        let agent = if is_task {
            agent_of(rec.tool_use_result, &texts)
        } else {
            None
        };
        ToolResult {
            call_id,
            tokens,
            references,
            agent,
        }
    }
}

/// The subagent a `Task` result names: `toolUseResult.agentId`, else an `agentId: X` line in
/// the result text.
fn agent_of(tool_use_result: Option<&RawValue>, texts: &[&str]) -> Option<String> {
    if let Some(raw) = tool_use_result
        && let Ok(r) = serde_json::from_str::<AgentRef<'_>>(raw.get())
        && let Some(id) = r.agent_id
    {
        return Some(id.into_owned());
    }
    texts.iter().find_map(|t| {
        let at = t.find("agentId: ")? + "agentId: ".len();
        let id: String = t[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        (!id.is_empty()).then_some(id)
    })
}
