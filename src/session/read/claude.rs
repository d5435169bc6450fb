//! Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`, subagents in
//! `<session>/subagents/agent-<id>.jsonl`, older ones beside it or inline as `isSidechain`
//! records). Records are read by serde derive with borrowed strings; `message` is kept raw and
//! parsed only for `user` and `assistant` records, so a record type added later never fails on
//! its own fields. A record without a top-level `type` is read by its message's role when it
//! has a valid user or assistant message (counted in [`ReadStats::untyped`]).
//!
//! A response is keyed by `message.id` together with `requestId` (as ccusage does), else by
//! the record's `uuid`, else by its line: records without ids never merge. A record an earlier
//! file already holds ([`Copies`]: a resumed or forked session copies its history verbatim)
//! becomes copied context, never a request or a call.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::{BadLine, Copies, ReadOptions, ReadStats, count_untyped, ignore, key_hash};
use crate::session::transcript::{Call, Step, ToolResult, Transcript, Usage, tokens};
use crate::session::{SEARCH_TOOL, count_text};

/// Claude tokens of one image block whose size cannot be read (the ~1,600-token ceiling of a
/// full-size image).
pub const IMAGE_TOKENS: usize = 1_600;

/// Claude tokens as the o200k count session sizes are kept in: the anthropic-estimate counter
/// maps it back (Codex sessions, counted with openai-responses, keep the o200k figure: OpenAI
/// bills images by tiles, unknown from the log).
fn as_kept(claude_tokens: usize) -> usize {
    (claude_tokens as f64 / crate::counter::anthropic::fit().text_ratio).round() as usize
}

/// [`IMAGE_TOKENS`] as kept: an image whose size is not known.
pub fn image_tokens() -> usize {
    as_kept(IMAGE_TOKENS)
}

/// Most base64 characters of an image decoded to find its size (a JPEG's frame header can
/// follow tens of KB of metadata; past this the size is not read).
const MAX_IMAGE_HEADER_CHARS: usize = 64 * 1024;

/// Claude tokens of a `width` × `height` image as Anthropic bills it: scaled down to at most
/// 1,568 px on its long edge and about 1.15 megapixels (1,600 tokens), then width × height /
/// 750 (docs.claude.com/en/docs/build-with-claude/vision, "Evaluate image size").
pub fn claude_image_tokens(width: u64, height: u64) -> usize {
    if width == 0 || height == 0 {
        return 0;
    }
    let (mut w, mut h) = (width as f64, height as f64);
    let long = w.max(h);
    if long > 1568.0 {
        w *= 1568.0 / long;
        h *= 1568.0 / long;
    }
    let most = IMAGE_TOKENS as f64 * 750.0;
    if w * h > most {
        let k = (most / (w * h)).sqrt();
        w *= k;
        h *= k;
    }
    (((w * h) / 750.0).ceil() as usize).min(IMAGE_TOKENS)
}

/// The tokens of an image block as kept: from the size its base64 data's header names, else
/// [`image_tokens`].
fn image_block_tokens(b: &Block<'_>) -> usize {
    use base64::Engine;
    let source = b
        .source
        .and_then(|raw| serde_json::from_str::<ImageSource<'_>>(raw.get()).ok());
    let Some(data) = source.as_ref().and_then(|s| s.data.as_deref()) else {
        return image_tokens();
    };
    let head = &data.as_bytes()[..data.len().min(MAX_IMAGE_HEADER_CHARS) / 4 * 4];
    let size = base64::engine::general_purpose::STANDARD
        .decode(head)
        .ok()
        .and_then(|bytes| imagesize::blob_size(&bytes).ok());
    match size {
        Some(s) => as_kept(claude_image_tokens(s.width as u64, s.height as u64)),
        None => image_tokens(),
    }
}

/// Record types this reader uses; every other type is ignored and counted.
pub const KNOWN_TYPES: &[&str] = &["user", "assistant", "system", "summary"];

/// The name an ignored record without a `type` (and without a user or assistant message) is
/// counted under.
pub const NO_TYPE: &str = "(no type)";

/// The text Claude Code writes as a user message when the user stops the model: after a
/// refused tool use (`… for tool use]`) or mid-answer.
pub const INTERRUPT_MARKER: &str = "[Request interrupted by user";

/// The first message Claude Code sends a subagent it primes at start-up.
pub const WARMUP: &str = "Warmup";

#[derive(Deserialize)]
pub(super) struct Record<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Cow<'a, str>>,
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
    #[serde(rename = "requestId", borrow, default)]
    pub request_id: Option<Cow<'a, str>>,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Option<bool>,
    #[serde(borrow, default)]
    subtype: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub message: Option<&'a RawValue>,
    #[serde(rename = "toolUseResult", borrow, default)]
    tool_use_result: Option<&'a RawValue>,
    /// The Claude Code version that wrote the record (`2.0.58`).
    #[serde(borrow, default)]
    version: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub(super) struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(default)]
    usage: Option<RawUsage>,
}

/// Most tool calls one logged response may make (parallel `tool_use` blocks, its lines
/// together): real ones make a few dozen, and each call costs a scenario entry.
pub const MAX_CALLS_PER_RESPONSE: usize = 10_000;

/// A message's `usage`: each field a whole number up to [`MAX_USAGE_TOKENS`], refused where
/// it stands otherwise (`transcript::token_count`).
///
/// [`MAX_USAGE_TOKENS`]: crate::session::transcript::MAX_USAGE_TOKENS
#[derive(Deserialize, Default)]
struct RawUsage {
    #[serde(
        rename = "input_tokens",
        default,
        deserialize_with = "tokens::input_tokens"
    )]
    input: u64,
    #[serde(
        rename = "cache_creation_input_tokens",
        default,
        deserialize_with = "tokens::cache_creation_input_tokens"
    )]
    cache_creation: u64,
    #[serde(
        rename = "cache_read_input_tokens",
        default,
        deserialize_with = "tokens::cache_read_input_tokens"
    )]
    cache_read: u64,
    #[serde(
        rename = "output_tokens",
        default,
        deserialize_with = "tokens::output_tokens"
    )]
    output: u64,
}

impl RawUsage {
    fn usage(&self) -> Result<Usage, String> {
        let u = Usage {
            input: self.input,
            cache_creation: self.cache_creation,
            cache_read: self.cache_read,
            output: self.output,
        };
        u.check()?;
        Ok(u)
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
    #[serde(default)]
    is_error: Option<bool>,
    /// An image's source (`{"type": "base64", "media_type": …, "data": …}`), read only for
    /// an image (another block's `source` may have another shape).
    #[serde(borrow, default)]
    source: Option<&'a RawValue>,
}

#[derive(Deserialize)]
pub(super) struct ImageSource<'a> {
    #[serde(borrow, default)]
    data: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct SearchInput<'a> {
    #[serde(borrow, default)]
    query: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct TaskInput<'a> {
    #[serde(borrow, default)]
    subagent_type: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub(super) struct AgentRef<'a> {
    #[serde(rename = "agentId", borrow, default)]
    pub agent_id: Option<Cow<'a, str>>,
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

/// The text counted for a logged `tool_use` block: the block as the request carries it, its
/// id included (a call's id is sent twice, here and in its result, and costs tokens each time).
pub fn render_call_block(id: &str, name: &str, input: &str) -> String {
    let mut s = String::with_capacity(input.len() + name.len() + id.len() + 48);
    s.push_str("{\"type\":\"tool_use\",\"id\":");
    s.push_str(&serde_json::to_string(id).expect("a string serializes"));
    s.push_str(",\"name\":");
    s.push_str(&serde_json::to_string(name).expect("a string serializes"));
    s.push_str(",\"input\":");
    s.push_str(input);
    s.push('}');
    s
}

/// The text counted for a `tool_result` block beside its content: its type and the id of the
/// call it answers.
pub fn render_result_frame(call_id: &str) -> String {
    format!(
        "{{\"type\":\"tool_result\",\"tool_use_id\":{},\"content\":\"\"}}",
        serde_json::to_string(call_id).expect("a string serializes")
    )
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

/// The key of a response (see the module notes): global ids first, `None` for a record that
/// has none (keyed by its line, local to the file).
pub fn response_key(
    message_id: Option<&str>,
    request_id: Option<&str>,
    uuid: Option<&str>,
) -> Option<String> {
    match (message_id, uuid) {
        (Some(m), _) if !m.is_empty() => Some(format!("m:{m}:{}", request_id.unwrap_or(""))),
        (_, Some(u)) if !u.is_empty() => Some(format!("u:{u}")),
        _ => None,
    }
}

/// The session file being read: routing of records to the main conversation or a subagent
/// (by `agentId`, or in older logs without it by the sidechain its parent belongs to).
pub(super) struct State<'c> {
    copies: &'c Copies,
    pub session_id: Option<String>,
    /// The Claude Code version of the file's first record that names one it can read.
    pub version: Option<(u32, u32, u32)>,
    main: Option<Transcript>,
    agents: Vec<Transcript>,
    agent_index: HashMap<String, usize>,
    /// uuid → agent, for sidechain records that carry no `agentId`.
    chain_of: HashMap<String, usize>,
    call_names: HashMap<String, String>,
    /// Record uuids seen in this file: a repeated one is a record written twice.
    seen: HashSet<u64>,
    /// This file's own history, to find what a resume wrote into it again.
    own: OwnHistory,
    /// Response keys of the copied records counted as copied requests (a request's records
    /// count once).
    copied_keys: HashSet<u64>,
}

/// What a file has written so far, as hashes ([`key_hash`]): the blocks of each response, the
/// calls answered, the user texts, and the records found to be copies of its own history. A
/// session Claude Code resumed by rewriting its history into the same file writes that
/// history again with new uuids but the same `message.id`, `requestId`, `tool_use` ids and
/// texts: such a record is a copy, read once.
#[derive(Default)]
struct OwnHistory {
    blocks: HashMap<u64, HashSet<u64>>,
    answered: HashSet<u64>,
    user_texts: HashSet<u64>,
    copies: HashSet<u64>,
}

/// The hash of one assistant block (`None`: a kind whose copy cannot be told).
fn block_hash(b: &Block<'_>) -> Option<u64> {
    let (tag, body) = match b.kind.as_deref()? {
        "text" => ("x", b.text.as_deref()?),
        "thinking" => ("k", b.thinking.as_deref()?),
        "tool_use" => ("t", b.id.as_deref().filter(|i| !i.is_empty())?),
        _ => return None,
    };
    Some(key_hash(&format!("{tag}\u{0}{body}")))
}

/// The hash of a user message's text (its text blocks joined), `None` when it has none.
fn user_text_hash(content: &Content<'_>) -> Option<u64> {
    let text = match content {
        Content::Text(t) => t.to_string(),
        Content::Blocks(blocks) => blocks
            .iter()
            .filter(|b| b.kind.as_deref() == Some("text"))
            .filter_map(|b| b.text.as_deref())
            .collect::<Vec<_>>()
            .join("\u{0}"),
    };
    (!text.is_empty()).then(|| key_hash(&format!("u\u{0}{text}")))
}

/// The `tool_use_id` hashes of a user message's results.
fn result_ids(content: &Content<'_>) -> Vec<u64> {
    match content {
        Content::Text(_) => Vec::new(),
        Content::Blocks(blocks) => blocks
            .iter()
            .filter(|b| b.kind.as_deref() == Some("tool_result"))
            .filter_map(|b| b.tool_use_id.as_deref())
            .map(key_hash)
            .collect(),
    }
}

/// The hash of an assistant message's response key when it has a `message.id` (a key made of
/// a uuid or a line never repeats).
fn message_key(rec: &Record<'_>, m: &Message<'_>) -> Option<u64> {
    m.id.as_deref().filter(|i| !i.is_empty())?;
    response_key(m.id.as_deref(), rec.request_id.as_deref(), None).map(|k| key_hash(&k))
}

impl OwnHistory {
    /// Whether the record repeats this file's own history: an assistant record whose every
    /// block its response already wrote; a user record whose every result was already
    /// given; a user text already written, following a copy.
    fn is_copy(&self, rec: &Record<'_>, kind: &str, msg: Option<&Message<'_>>) -> bool {
        let Some(m) = msg else { return false };
        let Some(content) = &m.content else {
            return false;
        };
        match kind {
            "assistant" => {
                let Some(seen) = message_key(rec, m).and_then(|k| self.blocks.get(&k)) else {
                    return false;
                };
                let Content::Blocks(blocks) = content else {
                    return false;
                };
                !blocks.is_empty()
                    && blocks
                        .iter()
                        .all(|b| block_hash(b).is_some_and(|h| seen.contains(&h)))
            }
            "user" => {
                let results = result_ids(content);
                if !results.is_empty() {
                    return results.iter().all(|r| self.answered.contains(r));
                }
                rec.parent_uuid
                    .as_deref()
                    .is_some_and(|p| self.copies.contains(&key_hash(&format!("u:{p}"))))
                    && user_text_hash(content).is_some_and(|h| self.user_texts.contains(&h))
            }
            _ => false,
        }
    }

    /// Remembers a record's history (a copy's as well: its uuid, for the records after it).
    fn note(&mut self, rec: &Record<'_>, kind: &str, msg: Option<&Message<'_>>, copy: bool) {
        if copy && let Some(u) = rec.uuid.as_deref() {
            self.copies.insert(key_hash(&format!("u:{u}")));
        }
        let Some(m) = msg else { return };
        let Some(content) = &m.content else { return };
        match kind {
            "assistant" => {
                if let (Some(k), Content::Blocks(blocks)) = (message_key(rec, m), content) {
                    self.blocks
                        .entry(k)
                        .or_default()
                        .extend(blocks.iter().filter_map(block_hash));
                }
            }
            "user" => {
                self.answered.extend(result_ids(content));
                if let Some(h) = user_text_hash(content) {
                    self.user_texts.insert(h);
                }
            }
            _ => {}
        }
    }
}

impl<'c> State<'c> {
    pub fn new(copies: &'c Copies) -> State<'c> {
        State {
            copies,
            session_id: None,
            version: None,
            main: None,
            agents: Vec::new(),
            agent_index: HashMap::new(),
            chain_of: HashMap::new(),
            call_names: HashMap::new(),
            seen: HashSet::new(),
            own: OwnHistory::default(),
            copied_keys: HashSet::new(),
        }
    }

    pub fn line(
        &mut self,
        text: &str,
        number: usize,
        opts: ReadOptions,
        stats: &mut ReadStats,
    ) -> Result<(), BadLine> {
        let rec: Record<'_> = serde_json::from_str(text).map_err(|e| BadLine::json(&e, 0))?;
        fn parse_message<'t>(text: &str, raw: &'t RawValue) -> Result<Message<'t>, BadLine> {
            let offset = raw.get().as_ptr() as usize - text.as_ptr() as usize;
            serde_json::from_str::<Message<'t>>(raw.get()).map_err(|e| BadLine::json(&e, offset))
        }
        let (kind, msg): (Cow<'_, str>, Option<Message<'_>>) = match (&rec.kind, rec.message) {
            (Some(k), raw) if k == "user" || k == "assistant" => {
                (k.clone(), raw.map(|r| parse_message(text, r)).transpose()?)
            }
            (Some(k), _) if KNOWN_TYPES.contains(&k.as_ref()) => (k.clone(), None),
            (Some(k), _) => {
                ignore(&mut stats.ignored, k);
                return Ok(());
            }
            (None, Some(raw)) => {
                // No type: read by the message's role when it is a user or assistant message.
                let role = parse_message(text, raw).ok().and_then(|m| {
                    let r = m.role.as_deref()?.to_string();
                    (r == "user" || r == "assistant").then_some((r, m))
                });
                if let Some((r, m)) = role {
                    count_untyped(&mut stats.untyped, &r);
                    (Cow::Owned(r), Some(m))
                } else {
                    ignore(&mut stats.ignored, NO_TYPE);
                    return Ok(());
                }
            }
            (None, None) => {
                ignore(&mut stats.ignored, NO_TYPE);
                return Ok(());
            }
        };
        if let Some(u) = rec.uuid.as_deref()
            && !self.seen.insert(key_hash(&format!("u:{u}")))
        {
            stats.repeated_records += 1;
            return Ok(());
        }
        if self.session_id.is_none()
            && let Some(s) = &rec.session_id
        {
            self.session_id = Some(s.to_string());
        }
        if self.version.is_none() {
            self.version = rec
                .version
                .as_deref()
                .and_then(crate::catalog::versions::parse);
        }
        // History an earlier file holds is context here; history this file already holds (a
        // resume that rewrote it into the same file) is read once, where first written.
        let copied = self.is_copy(&rec, &kind, msg.as_ref());
        let rewritten = !copied && self.own.is_copy(&rec, &kind, msg.as_ref());
        self.own
            .note(&rec, &kind, msg.as_ref(), copied || rewritten);
        if copied || rewritten {
            stats.copied_records += 1;
            // A request's records (one per block) count once.
            if kind == "assistant"
                && let Some(m) = msg.as_ref()
                && m.usage.is_some()
                && m.model.as_deref() != Some("<synthetic>")
            {
                let key = response_key(
                    m.id.as_deref(),
                    rec.request_id.as_deref(),
                    rec.uuid.as_deref(),
                )
                .unwrap_or_else(|| format!("line:{number}"));
                if self.copied_keys.insert(key_hash(&key)) {
                    stats.copied_requests += 1;
                }
            }
        }
        let tx = match self.route(&rec) {
            None => self.main.get_or_insert_with(|| Transcript::new(None)),
            Some(i) => &mut self.agents[i],
        };
        if rewritten {
            return Ok(());
        }
        let mut apply = Apply {
            tx,
            keep_text: opts.keep_text,
            call_names: &mut self.call_names,
        };
        if copied {
            apply.copied(msg);
            return Ok(());
        }
        apply
            .record(&rec, &kind, msg, number)
            .map_err(|message| BadLine { column: 1, message })
    }

    /// Whether an earlier file holds this record: its response key or its uuid was seen there.
    fn is_copy(&self, rec: &Record<'_>, kind: &str, msg: Option<&Message<'_>>) -> bool {
        if self.copies.is_empty() {
            return false;
        }
        if let Some(u) = rec.uuid.as_deref()
            && self.copies.uuids.contains(&key_hash(&format!("u:{u}")))
        {
            return true;
        }
        kind == "assistant"
            && msg
                .and_then(|m| {
                    response_key(
                        m.id.as_deref(),
                        rec.request_id.as_deref(),
                        rec.uuid.as_deref(),
                    )
                })
                .is_some_and(|k| self.copies.keys.contains(&key_hash(&k)))
    }

    /// The subagent a record belongs to (`None`: the main conversation).
    fn route(&mut self, rec: &Record<'_>) -> Option<usize> {
        if rec.is_sidechain != Some(true) {
            return None;
        }
        let idx = if let Some(a) = &rec.agent_id {
            self.agent(a)
        } else {
            let parent = rec
                .parent_uuid
                .as_deref()
                .and_then(|p| self.chain_of.get(p).copied());
            if let Some(i) = parent {
                i
            } else {
                let name = format!("sidechain-{}", self.agents.len() + 1);
                self.agent(&name)
            }
        };
        if rec.agent_id.is_none()
            && let Some(u) = &rec.uuid
        {
            self.chain_of.insert(u.to_string(), idx);
        }
        Some(idx)
    }

    fn agent(&mut self, id: &str) -> usize {
        if let Some(&i) = self.agent_index.get(id) {
            return i;
        }
        let i = self.agents.len();
        self.agents.push(Transcript::new(Some(id.to_string())));
        self.agent_index.insert(id.to_string(), i);
        i
    }

    pub fn finish(self) -> (Option<String>, Option<Transcript>, Vec<Transcript>) {
        (self.session_id, self.main, self.agents)
    }
}

/// Applies one parsed record to its transcript.
pub(super) struct Apply<'t> {
    pub tx: &'t mut Transcript,
    pub keep_text: bool,
    /// Call id → tool name, to recognise a `Task` result and a search result.
    pub call_names: &'t mut HashMap<String, String>,
}

impl Apply<'_> {
    /// `number` is the record's line: the key of a response with no id to share.
    pub fn record(
        &mut self,
        rec: &Record<'_>,
        kind: &str,
        msg: Option<Message<'_>>,
        number: usize,
    ) -> Result<(), String> {
        match kind {
            "assistant" => {
                if let Some(m) = msg {
                    self.assistant(rec, m, number)?;
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
        Ok(())
    }

    /// A record an earlier file holds: its sizes as context, nothing else.
    fn copied(&mut self, msg: Option<Message<'_>>) {
        let Some(m) = msg else { return };
        let mut tokens = 0;
        let mut calls = Vec::new();
        if let Some(content) = &m.content {
            match content {
                Content::Text(t) => tokens += count_text(t),
                Content::Blocks(blocks) => {
                    for b in blocks {
                        match b.kind.as_deref() {
                            Some("tool_result") => tokens += Self::result_tokens(b),
                            _ => tokens += self.assistant_block(b, &mut calls),
                        }
                    }
                }
            }
        }
        tokens += calls.iter().map(|c| c.tokens).sum::<usize>();
        self.tx.copied(tokens);
    }

    fn result_tokens(b: &Block<'_>) -> usize {
        match &b.content {
            Some(Content::Text(t)) => count_text(t),
            Some(Content::Blocks(inner)) => inner
                .iter()
                .map(|ib| match ib.kind.as_deref() {
                    Some("text") => ib.text.as_deref().map_or(0, count_text),
                    Some("tool_reference") => {
                        count_text(&render_reference(ib.tool_name.as_deref().unwrap_or("")))
                    }
                    Some("image") => image_block_tokens(ib),
                    _ => 0,
                })
                .sum(),
            None => 0,
        }
    }

    fn assistant(&mut self, rec: &Record<'_>, m: Message<'_>, number: usize) -> Result<(), String> {
        // Client-made messages (interruptions, API errors) were never an API request.
        if m.model.as_deref() == Some("<synthetic>") {
            return Ok(());
        }
        let usage = m.usage.as_ref().map(RawUsage::usage).transpose()?;
        let key = response_key(
            m.id.as_deref(),
            rec.request_id.as_deref(),
            rec.uuid.as_deref(),
        )
        .unwrap_or_else(|| format!("line:{number}"));
        let mut text_tokens = 0;
        let mut calls = Vec::new();
        if let Some(content) = &m.content {
            match content {
                Content::Text(t) => text_tokens += count_text(t),
                Content::Blocks(blocks) => {
                    let uses = blocks
                        .iter()
                        .filter(|b| b.kind.as_deref() == Some("tool_use"))
                        .count();
                    let before = self.tx.request(&key).calls.len();
                    if before + uses > MAX_CALLS_PER_RESPONSE {
                        return Err(format!(
                            "this response makes {} tool calls, more than the \
                             {MAX_CALLS_PER_RESPONSE} one response may make",
                            before + uses
                        ));
                    }
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
        if let Some(u) = &usage {
            req.usage.get_or_insert_with(Usage::default).merge_max(u);
        }
        req.text_tokens += text_tokens;
        req.calls.extend(calls);
        Ok(())
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
                let subagent_type = if name == "Task" || name == "Agent" {
                    serde_json::from_str::<TaskInput<'_>>(input)
                        .ok()
                        .and_then(|t| t.subagent_type.map(Cow::into_owned))
                } else {
                    None
                };
                let tokens = count_text(&render_call_block(&id, &name, input));
                self.call_names.insert(id.clone(), name.clone());
                calls.push(Call {
                    id,
                    name,
                    alt_name: None,
                    tokens,
                    query,
                    subagent_type,
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
        let mut interrupt = false;
        let mut first_text: Option<&str> = None;
        let note_text = |t: &str, interrupt: &mut bool, clear: &mut bool| {
            *clear |= is_clear(t);
            *interrupt |= t.trim_start().starts_with(INTERRUPT_MARKER);
        };
        match &content {
            Content::Text(t) => {
                note_text(t, &mut interrupt, &mut clear);
                first_text = Some(t);
                user_tokens += count_text(t);
                user_text = self.keep_text.then(|| t.to_string());
            }
            Content::Blocks(blocks) => {
                for b in blocks {
                    match b.kind.as_deref() {
                        Some("tool_result") => results.push(self.tool_result(b, rec)),
                        Some("text") => {
                            let t = b.text.as_deref().unwrap_or("");
                            note_text(t, &mut interrupt, &mut clear);
                            first_text.get_or_insert(t);
                            user_tokens += count_text(t);
                            if self.keep_text {
                                user_text.get_or_insert_with(String::new).push_str(t);
                            }
                        }
                        Some("image") => user_tokens += image_block_tokens(b),
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
        if self.tx.requests.is_empty()
            && !self.tx.steps.iter().any(|s| matches!(s, Step::User { .. }))
            && first_text.is_some_and(|t| t.trim() == WARMUP)
        {
            self.tx.warmup = true;
        }
        if !results.is_empty() {
            self.tx.steps.push(Step::Results(results));
        }
        if interrupt {
            self.tx.steps.push(Step::Interrupt);
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
        let mut references = Vec::new();
        let mut texts: Vec<&str> = Vec::new();
        match &b.content {
            Some(Content::Text(t)) => texts.push(t),
            Some(Content::Blocks(inner)) => {
                for ib in inner {
                    match ib.kind.as_deref() {
                        Some("text") => texts.push(ib.text.as_deref().unwrap_or("")),
                        Some("tool_reference") => {
                            references.push(ib.tool_name.as_deref().unwrap_or("").to_string());
                        }
                        _ => {}
                    }
                }
            }
            None => {}
        }
        let tokens = Self::result_tokens(b) + count_text(&render_result_frame(&call_id));
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
            is_error: b.is_error == Some(true),
        }
    }
}

/// The subagent a `Task` result names: `toolUseResult.agentId`, else an `agentId: X` line in
/// the result text.
pub(super) fn agent_of(tool_use_result: Option<&RawValue>, texts: &[&str]) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_is_billed_by_its_size_scaled_as_anthropic_does() {
        // Anthropic's table: 200 x 200 ≈ 54 tokens, 1092 x 1092 ≈ 1,590.
        assert_eq!(claude_image_tokens(200, 200), 54);
        assert_eq!(claude_image_tokens(1092, 1092), 1590);
        // Long edge over 1,568: scaled down first; then at most ~1,600 tokens.
        assert_eq!(
            claude_image_tokens(3136, 200),
            claude_image_tokens(1568, 100)
        );
        assert!((1590..=1600).contains(&claude_image_tokens(4000, 3000)));
        assert_eq!(claude_image_tokens(0, 500), 0);
        assert!(claude_image_tokens(u64::MAX, u64::MAX) <= 1600);
    }

    #[test]
    fn an_image_block_s_size_is_read_from_its_base64_header() {
        use base64::Engine;
        // A PNG header of 600 x 134 (the IHDR chunk is all the reader needs).
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(600u32.to_be_bytes());
        png.extend(134u32.to_be_bytes());
        png.extend([8, 6, 0, 0, 0, 0, 0, 0, 0]);
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        let block = |source: &str| {
            let line = format!(r#"{{"type":"image","source":{source}}}"#);
            let b: Block<'_> = serde_json::from_str(&line).unwrap();
            image_block_tokens(&b)
        };
        assert_eq!(
            block(&format!(
                r#"{{"type":"base64","media_type":"image/png","data":"{data}"}}"#
            )),
            as_kept(claude_image_tokens(600, 134))
        );
        // Unreadable data, another shape of source, or none: the full-size figure.
        for other in [
            r#"{"type":"base64","data":"not base64!"}"#,
            r#""a string""#,
            "null",
        ] {
            assert_eq!(block(other), image_tokens(), "{other}");
        }
    }

    #[test]
    fn responses_are_keyed_by_message_and_request_then_uuid_never_empty() {
        assert_eq!(
            response_key(Some("msg_1"), Some("req_1"), Some("u1")).as_deref(),
            Some("m:msg_1:req_1")
        );
        assert_eq!(
            response_key(Some("msg_1"), None, None).as_deref(),
            Some("m:msg_1:")
        );
        assert_eq!(
            response_key(None, Some("req_1"), Some("u1")).as_deref(),
            Some("u:u1")
        );
        assert_eq!(response_key(Some(""), None, Some("")), None);
        assert_eq!(response_key(None, None, None), None);
    }

    #[test]
    fn usage_beyond_any_bill_is_refused_where_it_stands_not_wrapped() {
        let err = |json: &str| {
            serde_json::from_str::<RawUsage>(json)
                .err()
                .map(|e| e.to_string())
        };
        let e =
            err(r#"{"input_tokens": 3, "cache_read_input_tokens": 18446744073709551615}"#).unwrap();
        assert!(
            e.contains("cache_read_input_tokens is 18446744073709551615, more than the 1000000000"),
            "{e}"
        );
        assert!(e.contains("column 67"), "{e}");
        // Past u64 (a float to serde_json), negative, fractional: refused by name too.
        for (json, says) in [
            (
                r#"{"output_tokens": 18446744073709551616}"#,
                "output_tokens is 1.8446744073709552e19, more than",
            ),
            (
                r#"{"input_tokens": 9.2e18}"#,
                "input_tokens is 9.2e18, more than",
            ),
            (
                r#"{"input_tokens": -1}"#,
                "input_tokens is -1: a token count cannot be negative",
            ),
            (
                r#"{"input_tokens": 2.5}"#,
                "input_tokens is 2.5: expected a whole number",
            ),
            (
                r#"{"input_tokens": "7"}"#,
                "a whole number of tokens (input_tokens)",
            ),
        ] {
            let e = err(json).unwrap();
            assert!(e.contains(says), "{json}: {e}");
        }
        let ok: RawUsage = serde_json::from_str(
            r#"{"input_tokens": 3, "cache_read_input_tokens": 14000, "cache_creation_input_tokens": null}"#,
        )
        .unwrap();
        assert_eq!(ok.usage().unwrap().prompt(), 14_003);
        let at_limit = RawUsage {
            input: u64::MAX,
            ..RawUsage::default()
        };
        assert!(at_limit.usage().unwrap_err().contains("input_tokens"));
    }
}
