//! `anthropic-api`: exact counts from Anthropic's `POST /v1/messages/count_tokens`.
//!
//! Every answer is cached under the sha256 of the request body (model included) in a JSON
//! file meant to be committed: a run whose answers are all cached needs no key and no network.
//! The file carries a checksum of its entries; a file that does not parse or whose checksum
//! does not match is discarded and rebuilt, never trusted.
//!
//! The endpoint counts whole requests, so per-tool counts are differences (see [`tool_counts`]):
//! with `B` the request with one `.` user message and no tools, `S_i` the same with tool `i`
//! alone and `A` with every tool, `S_i − B = F + t_i` and `A − B = F + Σ t_i`, so the fixed
//! cost of sending tools is `F = (Σ (S_i − B) − (A − B)) / (N − 1)` and `t_i = S_i − B − F`.
//! That is N + 2 requests, each cached.
//!
//! Retries: 429 waits for `retry-after` up to [`MAX_RETRY_AFTER`] (a longer one fails at once,
//! naming the endpoint and the header; no header: the backoff), 5xx, 529 and transport failures
//! back off exponentially (1 s, 2 s, 4 s …), at most [`MAX_ATTEMPTS`] attempts; 401/403 and
//! other 4xx fail at once with the API's message. Each request, answer body included, has
//! [`REQUEST_TIMEOUT`] (ureq's global timeout, so a trickled body cannot stall us). The wait is
//! injected with a note saying what it waits for, so the command can say it on stderr and
//! tests do not wait.
//!
//! Fail closed: an answer that cannot be a count ([`parse_count`]: not a whole number, zero,
//! more tokens than the request has bytes plus [`FRAMING_ALLOWANCE`]) is refused and never
//! cached; a cached count is checked the same way when read back (an implausible one is
//! dropped); and the per-tool series is checked as a whole ([`tool_counts`]: a tool must add
//! tokens, every tool at once more than any one) — its answers are taken out of the cache when
//! it fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{CounterKind, ToolChoice};
use crate::catalog::{Catalog, Tool};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const API_VERSION: &str = "2023-06-01";
pub const MAX_ATTEMPTS: usize = 5;
/// Largest answer body read from an HTTP endpoint (count_tokens, and every `live` provider
/// through the same transport); a longer one fails the request, not retried.
pub const MAX_BODY_BYTES: u64 = 1 << 20;
/// The longest `retry-after` waited for; a longer one fails at once.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Per request, from connecting to the answer's last byte.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Tokens a request may count beyond one per byte of its body: the message framing and the
/// tool-use system prompt the API adds (a few hundred tokens as measured; this is generous).
pub const FRAMING_ALLOWANCE: usize = 4096;
const CACHE_FORMAT: &str = "toolbudget-count-tokens/1";
/// The smallest message a request can carry; its own tokens are assumed to be one.
pub const PROBE: &str = ".";
pub const PROBE_TOKENS: usize = 1;

/// Why a count could not be had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    #[error(
        "anthropic-api: the cache {cache} has no answer for this request and {why}; set ANTHROPIC_API_KEY (and run online) to fill it"
    )]
    NotCached { cache: String, why: String },
    #[error(
        "anthropic-api: the API refused the key (HTTP {status}): {message}; check ANTHROPIC_API_KEY"
    )]
    Auth { status: u16, message: String },
    #[error("anthropic-api: the API rejected the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    #[error("anthropic-api: no answer after {attempts} attempts: {last}")]
    GaveUp { attempts: usize, last: String },
    #[error(
        "anthropic-api: {url} answered HTTP 429 with `retry-after: {retry_after}`, longer than the {} s toolbudget waits; try again later (answers already had are cached)",
        MAX_RETRY_AFTER.as_secs()
    )]
    RateLimited { url: String, retry_after: f64 },
    #[error(
        "anthropic-api: {url} gave an answer that is not a plausible count: {why}; it is not cached"
    )]
    Implausible { url: String, why: String },
}

/// One HTTP answer, as the client needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    /// `retry-after`, seconds.
    pub retry_after: Option<f64>,
    pub body: String,
}

/// Sends one POST. `Err` is a transport failure (connection refused, timeout).
pub trait Transport: Send + Sync {
    fn post(&self, url: &str, headers: &[(&str, &str)], body: &str) -> Result<Reply, String>;
}

/// The real transport (ureq, rustls; the `http` feature, default).
#[cfg(feature = "http")]
pub struct Ureq {
    agent: ureq::Agent,
}

#[cfg(feature = "http")]
impl Default for Ureq {
    fn default() -> Self {
        Ureq::with_timeout(REQUEST_TIMEOUT)
    }
}

#[cfg(feature = "http")]
impl Ureq {
    /// A transport whose requests give up after `timeout`, reading the body included (a
    /// model's answer can take minutes).
    pub fn with_timeout(timeout: Duration) -> Ureq {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Ureq { agent }
    }
}

#[cfg(feature = "http")]
impl Transport for Ureq {
    fn post(&self, url: &str, headers: &[(&str, &str)], body: &str) -> Result<Reply, String> {
        let mut req = self.agent.post(url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut resp = req.send(body).map_err(|e| e.to_string())?;
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse::<f64>().ok());
        let status = resp.status().as_u16();
        let body = resp
            .body_mut()
            .with_config()
            .limit(MAX_BODY_BYTES)
            .read_to_string()
            .map_err(|e| e.to_string())?;
        Ok(Reply {
            status,
            retry_after,
            body,
        })
    }
}

/// A cached answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub model: String,
    pub input_tokens: usize,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheFile {
    format: String,
    entries: BTreeMap<String, Entry>,
    checksum: String,
}

fn checksum(entries: &BTreeMap<String, Entry>) -> String {
    hex(&Sha256::digest(
        serde_json::to_vec(entries).expect("entries serialize"),
    ))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What loading the cache found.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheLoad {
    Missing,
    Loaded(usize),
    /// Another version's, unparsable or failing its checksum: discarded, rebuilt from answers.
    Discarded(String),
    /// Not an answers cache at all (someone's file): never written over.
    Foreign(String),
}

/// The answers cache, keyed by sha256 of the request body.
#[derive(Debug, Clone, Default)]
pub struct Cache {
    entries: BTreeMap<String, Entry>,
    dirty: bool,
}

impl Cache {
    /// Parses a cache file's bytes; anything doubtful is discarded.
    pub fn from_bytes(bytes: &[u8]) -> (Cache, CacheLoad) {
        let kind = CACHE_FORMAT.split('/').next().unwrap_or(CACHE_FORMAT);
        if !crate::input::is_own_kind(bytes, kind) {
            let why = format!("its \"format\" is not {kind}/N");
            return (Cache::rebuilt(), CacheLoad::Foreign(why));
        }
        let parsed: Result<CacheFile, String> =
            serde_json::from_slice(bytes).map_err(|e| e.to_string());
        match parsed {
            Ok(f) if f.format != CACHE_FORMAT => (
                Cache::rebuilt(),
                CacheLoad::Discarded(format!("unknown format {:?}", f.format)),
            ),
            Ok(f) if checksum(&f.entries) != f.checksum => (
                Cache::rebuilt(),
                CacheLoad::Discarded("checksum mismatch".into()),
            ),
            Ok(f) => {
                let n = f.entries.len();
                (
                    Cache {
                        entries: f.entries,
                        dirty: false,
                    },
                    CacheLoad::Loaded(n),
                )
            }
            Err(e) => (Cache::rebuilt(), CacheLoad::Discarded(e)),
        }
    }

    /// An empty cache that must be written (it replaces a bad file).
    fn rebuilt() -> Cache {
        Cache {
            entries: BTreeMap::new(),
            dirty: true,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether answers were added (or a bad file discarded) since loading.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    fn insert(&mut self, key: String, entry: Entry) {
        self.entries.insert(key, entry);
        self.dirty = true;
    }

    fn remove(&mut self, key: &str) {
        if self.entries.remove(key).is_some() {
            self.dirty = true;
        }
    }

    /// The file's bytes: entries sorted by key, so the same answers give the same bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let f = CacheFile {
            format: CACHE_FORMAT.into(),
            checksum: checksum(&self.entries),
            entries: self.entries.clone(),
        };
        let mut v = serde_json::to_vec_pretty(&f).expect("cache serializes");
        v.push(b'\n');
        v
    }
}

/// Where requests go and with what key; read from the environment by the command layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub base_url: String,
    pub key: Option<String>,
    pub model: String,
    pub cache_path: PathBuf,
    /// Never call the API.
    pub offline: bool,
}

/// A `tools` entry of a Messages API request.
#[derive(Debug, Clone, Serialize)]
struct ApiTool<'a> {
    name: String,
    description: &'a str,
    input_schema: &'a Value,
}

/// A tool name the API accepts (`^[a-zA-Z0-9_-]{1,64}$`), as a client must send it.
pub fn api_tool_name(id: &str) -> String {
    let mut s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if s.is_empty() {
        s.push('_');
    }
    s
}

/// The body of one count_tokens request.
pub fn request_body(
    model: &str,
    system: Option<&str>,
    user: &str,
    tools: &[&Tool],
    choice: ToolChoice,
) -> String {
    let mut body = serde_json::Map::new();
    body.insert("model".into(), model.into());
    if let Some(s) = system.filter(|s| !s.is_empty()) {
        body.insert("system".into(), s.into());
    }
    body.insert(
        "messages".into(),
        serde_json::json!([{"role": "user", "content": user}]),
    );
    if !tools.is_empty() {
        let defs: Vec<ApiTool<'_>> = tools
            .iter()
            .map(|t| ApiTool {
                name: api_tool_name(&t.id),
                description: &t.description,
                input_schema: &t.input_schema,
            })
            .collect();
        body.insert(
            "tools".into(),
            serde_json::to_value(defs).expect("tools serialize"),
        );
        if choice != ToolChoice::Auto {
            let mut c = serde_json::Map::new();
            c.insert("type".into(), choice.name().into());
            if choice == ToolChoice::Tool {
                c.insert("name".into(), api_tool_name(&tools[0].id).into());
            }
            body.insert("tool_choice".into(), Value::Object(c));
        }
    }
    serde_json::to_string(&Value::Object(body)).expect("body serializes")
}

#[derive(Deserialize)]
struct CountAnswer {
    input_tokens: Option<serde_json::Number>,
}

/// The count in a 200 answer's body, if it is a plausible count for a request of
/// `request_bytes` bytes (see [`plausible`]); else why not.
pub fn parse_count(answer: &str, request_bytes: usize) -> Result<usize, String> {
    let shown = || clip(answer, 200);
    let parsed: CountAnswer = serde_json::from_str(answer)
        .map_err(|e| format!("it is not a count_tokens answer ({e}): {}", shown()))?;
    let number = parsed
        .input_tokens
        .ok_or_else(|| format!("it has no input_tokens: {}", shown()))?;
    let n = number
        .as_u64()
        .ok_or_else(|| format!("input_tokens is {number}, not a whole number of tokens"))?;
    plausible(n, request_bytes)
}

/// `n` if it can be the count of a request of `request_bytes` bytes: not zero (every request
/// carries a message), not more than one token a byte plus [`FRAMING_ALLOWANCE`].
pub fn plausible(n: u64, request_bytes: usize) -> Result<usize, String> {
    let most = request_bytes.saturating_add(FRAMING_ALLOWANCE);
    match usize::try_from(n) {
        Ok(0) => Err(format!("0 tokens for a request of {request_bytes} bytes")),
        Ok(n) if n <= most => Ok(n),
        _ => Err(format!(
            "{n} tokens for a request of {request_bytes} bytes, more than one a byte plus \
             {FRAMING_ALLOWANCE} for the framing"
        )),
    }
}

fn clip(s: &str, chars: usize) -> String {
    match s.char_indices().nth(chars) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The cache key of a request body.
fn body_key(body: &str) -> String {
    hex(&Sha256::digest(body.as_bytes()))
}

#[derive(Deserialize)]
struct ErrorAnswer {
    error: ErrorDetail,
}

#[derive(Deserialize)]
struct ErrorDetail {
    message: String,
}

fn error_message(body: &str) -> String {
    serde_json::from_str::<ErrorAnswer>(body)
        .map_or_else(|_| body.chars().take(200).collect(), |e| e.error.message)
}

/// The counter: settings, cache, transport and the (injected) sleep.
pub struct Client {
    pub settings: Settings,
    pub cache: Cache,
    pub load: CacheLoad,
    transport: Box<dyn Transport>,
    wait: Box<Wait>,
    /// Requests actually sent (not answered from the cache).
    pub sent: usize,
}

/// Waits before a retry; the note says for what (the command prints it on stderr).
pub type Wait = dyn Fn(Duration, &str) + Send + Sync;

impl Client {
    /// A client over an already-read cache file (`None`: no file yet).
    pub fn new(
        settings: Settings,
        cache_bytes: Option<&[u8]>,
        transport: Box<dyn Transport>,
        wait: Box<Wait>,
    ) -> Client {
        let (cache, load) = match cache_bytes {
            Some(b) => Cache::from_bytes(b),
            None => (Cache::default(), CacheLoad::Missing),
        };
        Client {
            settings,
            cache,
            load,
            transport,
            wait,
            sent: 0,
        }
    }

    pub fn cache_path(&self) -> &Path {
        &self.settings.cache_path
    }

    /// The count of one request body, from the cache or the API. A cached count that is not
    /// plausible for the body is dropped from the cache, as if it had never been there.
    pub fn count_body(&mut self, body: &str) -> Result<usize, ApiError> {
        let key = body_key(body);
        let mut dropped = None;
        if let Some(e) = self.cache.get(&key) {
            match plausible(e.input_tokens as u64, body.len()) {
                Ok(n) => return Ok(n),
                Err(why) => {
                    self.cache.remove(&key);
                    dropped = Some(why);
                }
            }
        }
        let why = if self.settings.offline {
            Some("--offline is set")
        } else if self.settings.key.is_none() {
            Some("ANTHROPIC_API_KEY is not set")
        } else {
            None
        };
        if let Some(why) = why {
            let why = match dropped {
                Some(d) => format!("its cached count was dropped ({d}), and {why}"),
                None => why.to_string(),
            };
            return Err(ApiError::NotCached {
                cache: self.settings.cache_path.display().to_string(),
                why,
            });
        }
        let n = self.post_with_retries(body)?;
        self.cache.insert(
            key,
            Entry {
                model: self.settings.model.clone(),
                input_tokens: n,
            },
        );
        Ok(n)
    }

    /// The count_tokens endpoint.
    pub fn url(&self) -> String {
        format!(
            "{}/v1/messages/count_tokens",
            self.settings.base_url.trim_end_matches('/')
        )
    }

    fn post_with_retries(&mut self, body: &str) -> Result<usize, ApiError> {
        let url = self.url();
        let key = self.settings.key.clone().unwrap_or_default();
        let headers = [
            ("x-api-key", key.as_str()),
            ("anthropic-version", API_VERSION),
            ("content-type", "application/json"),
        ];
        let mut last = String::new();
        for attempt in 0..MAX_ATTEMPTS {
            self.sent += 1;
            let backoff = Duration::from_secs(1 << attempt.min(5));
            let (wait, why) = match self.transport.post(&url, &headers, body) {
                Err(e) => {
                    last = format!("{url}: {e}");
                    (backoff, last.clone())
                }
                Ok(r) => match r.status {
                    200 => {
                        return parse_count(&r.body, body.len())
                            .map_err(|why| ApiError::Implausible { url, why });
                    }
                    401 | 403 => {
                        return Err(ApiError::Auth {
                            status: r.status,
                            message: error_message(&r.body),
                        });
                    }
                    429 => {
                        last = format!("HTTP 429: {}", error_message(&r.body));
                        let wait = match r.retry_after.filter(|s| s.is_finite() && *s >= 0.0) {
                            None => backoff,
                            Some(s) if s > MAX_RETRY_AFTER.as_secs_f64() => {
                                return Err(ApiError::RateLimited {
                                    url,
                                    retry_after: s,
                                });
                            }
                            Some(s) => Duration::from_secs_f64(s),
                        };
                        (wait, format!("{url} answered HTTP 429 (rate limited)"))
                    }
                    s if s >= 500 => {
                        last = format!("HTTP {s}: {}", error_message(&r.body));
                        (backoff, format!("{url} answered {last}"))
                    }
                    s => {
                        return Err(ApiError::Rejected {
                            status: s,
                            message: error_message(&r.body),
                        });
                    }
                },
            };
            if attempt + 1 < MAX_ATTEMPTS {
                let note = format!(
                    "anthropic-api: {why}; waiting {} s before attempt {} of {MAX_ATTEMPTS}",
                    wait.as_secs_f64(),
                    attempt + 2
                );
                (self.wait)(wait, &note);
            }
        }
        Err(ApiError::GaveUp {
            attempts: MAX_ATTEMPTS,
            last,
        })
    }

    /// Tokens of one request of the public series' shape.
    pub fn request(
        &mut self,
        system: Option<&str>,
        user: &str,
        tools: &[&Tool],
        choice: ToolChoice,
    ) -> Result<usize, ApiError> {
        let body = request_body(&self.settings.model, system, user, tools, choice);
        self.count_body(&body)
    }

    /// Drops the cached count of one request (its answers did not add up).
    fn forget(&mut self, system: Option<&str>, user: &str, tools: &[&Tool], choice: ToolChoice) {
        let body = request_body(&self.settings.model, system, user, tools, choice);
        self.cache.remove(&body_key(&body));
    }
}

/// Per-tool counts derived from whole-request counts (module docs), with the fixed cost.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiToolCounts {
    pub counts: Vec<usize>,
    /// What sending any tools adds beyond their own counts (tool-use prompt included).
    pub fixed: usize,
    /// Every tool at once, minus the request without tools: exact.
    pub all_tools: usize,
    /// The `.`-only request: the framing every request carries.
    pub base: usize,
}

/// Counts every tool of `catalog` by differences of N + 2 cached requests.
pub fn tool_counts(
    client: &mut Client,
    catalog: &Catalog,
    choice: ToolChoice,
) -> Result<ApiToolCounts, ApiError> {
    tool_counts_reporting(client, catalog, choice, &crate::progress::Quiet)
}

/// As [`tool_counts`], advancing `progress` by one per tool counted.
pub fn tool_counts_reporting(
    client: &mut Client,
    catalog: &Catalog,
    choice: ToolChoice,
    progress: &dyn crate::progress::Progress,
) -> Result<ApiToolCounts, ApiError> {
    let tools: Vec<&Tool> = catalog.tools().iter().collect();
    let base = client.request(None, PROBE, &[], choice)?;
    let all = client.request(None, PROBE, &tools, choice)?;
    let mut singles = Vec::with_capacity(tools.len());
    for t in &tools {
        singles.push(client.request(None, PROBE, std::slice::from_ref(t), choice)?);
        progress.advance(1);
    }
    if let Err(why) = series_adds_up(base, all, &singles, &tools) {
        // Not one of these answers is kept: which of them is wrong cannot be told.
        client.forget(None, PROBE, &[], choice);
        client.forget(None, PROBE, &tools, choice);
        for t in &tools {
            client.forget(None, PROBE, std::slice::from_ref(t), choice);
        }
        return Err(ApiError::Implausible {
            url: client.url(),
            why: format!("{why} (the answers for this catalog are taken out of the cache)"),
        });
    }
    let n = tools.len();
    let all_tools = all.saturating_sub(base);
    let fixed = match n {
        0 => 0,
        // One tool cannot separate its cost from the fixed part: split as the estimate does.
        1 => CounterKind::AnthropicEstimate
            .tools_fixed(None)
            .min(all_tools),
        _ => {
            let sum: f64 = singles.iter().map(|&s| s as f64 - base as f64).sum();
            ((sum - all_tools as f64) / (n as f64 - 1.0))
                .round()
                .max(0.0) as usize
        }
    };
    let counts = singles
        .iter()
        .map(|&s| s.saturating_sub(base).saturating_sub(fixed))
        .collect();
    Ok(ApiToolCounts {
        counts,
        fixed,
        all_tools,
        base,
    })
}

/// Tools whose definitions differ by at least this many bytes cannot all count the same.
const SAME_COUNT_SPREAD_BYTES: usize = 256;

/// Whether the per-tool series can be true: each tool adds tokens to the request without
/// tools, every tool at once more than any single one, and tools of clearly different sizes
/// do not all count the same.
fn series_adds_up(
    base: usize,
    all: usize,
    singles: &[usize],
    tools: &[&Tool],
) -> Result<(), String> {
    if let Some(i) = singles.iter().position(|&s| s <= base) {
        return Err(format!(
            "the request with tool {:?} counts {} tokens, no more than the {base} without tools",
            tools[i].id, singles[i]
        ));
    }
    if !tools.is_empty() && all <= base {
        return Err(format!(
            "the request with every tool counts {all} tokens, no more than the {base} without tools"
        ));
    }
    if tools.len() >= 2 {
        let most = singles.iter().copied().max().unwrap_or(0);
        if all <= most {
            return Err(format!(
                "the request with all {} tools counts {all} tokens, no more than one tool alone \
                 ({most})",
                tools.len()
            ));
        }
        let sizes: Vec<usize> = tools.iter().map(|t| definition_bytes(t)).collect();
        let (small, large) = (
            sizes.iter().copied().min().unwrap_or(0),
            sizes.iter().copied().max().unwrap_or(0),
        );
        if singles.iter().all(|&s| s == singles[0]) && large - small >= SAME_COUNT_SPREAD_BYTES {
            return Err(format!(
                "every one of the {} tools counts {} tokens with the probe, though their \
                 definitions range from {small} to {large} bytes",
                tools.len(),
                singles[0]
            ));
        }
    }
    Ok(())
}

/// The bytes of a tool's definition as sent.
fn definition_bytes(t: &Tool) -> usize {
    let def = ApiTool {
        name: api_tool_name(&t.id),
        description: &t.description,
        input_schema: &t.input_schema,
    };
    serde_json::to_vec(&def).map_or(0, |v| v.len())
}

/// The parts of a conversation's requests, measured (module docs; `B` is the probe request).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestParts {
    /// System prompt with the request's framing: `count(system, ".") − 1`.
    pub system: usize,
    /// Each user text with its message framing: `count(text) − B + 1`.
    pub messages: Vec<usize>,
    pub tools: ApiToolCounts,
    /// The search tool's definition: `count(".", [search]) − B − fixed`.
    pub search_tool: usize,
}

/// Measures what a simulation needs: exact for a first request of system, user and tools
/// (the probe's single token is the one assumption), N + 4 + |users| cached requests.
pub fn request_parts(
    client: &mut Client,
    system: Option<&str>,
    users: &[&str],
    catalog: &Catalog,
    search_tool: &Tool,
    choice: ToolChoice,
) -> Result<RequestParts, ApiError> {
    let tools = tool_counts(client, catalog, choice)?;
    let base = tools.base;
    let sys = client.request(system, PROBE, &[], choice)?;
    let mut messages = Vec::with_capacity(users.len());
    for u in users {
        let n = client.request(None, u, &[], choice)?;
        messages.push((n + PROBE_TOKENS).saturating_sub(base));
    }
    let search = client.request(None, PROBE, &[search_tool], choice)?;
    Ok(RequestParts {
        system: sys.saturating_sub(PROBE_TOKENS),
        messages,
        search_tool: search.saturating_sub(base).saturating_sub(tools.fixed),
        tools,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_round_trips_and_rejects_tampering() {
        let mut c = Cache::default();
        c.insert(
            "ab".into(),
            Entry {
                model: "m".into(),
                input_tokens: 12,
            },
        );
        let bytes = c.to_bytes();
        let (back, load) = Cache::from_bytes(&bytes);
        assert_eq!(load, CacheLoad::Loaded(1));
        assert_eq!(back.get("ab").unwrap().input_tokens, 12);
        assert!(!back.is_dirty());
        let tampered = String::from_utf8(bytes).unwrap().replace("12", "13");
        let (bad, load) = Cache::from_bytes(tampered.as_bytes());
        assert_eq!(load, CacheLoad::Discarded("checksum mismatch".into()));
        assert!(bad.is_empty() && bad.is_dirty());
        // Not one of its kind (unreadable, or another format): someone's file, never rebuilt.
        let (_, load) = Cache::from_bytes(b"{\"format\":");
        assert!(matches!(load, CacheLoad::Foreign(_)), "{load:?}");
        let (_, load) = Cache::from_bytes(br#"{"tools": []}"#);
        assert!(matches!(load, CacheLoad::Foreign(_)), "{load:?}");
        // Another version of its own kind is discarded and rebuilt.
        let (_, load) = Cache::from_bytes(br#"{"format": "toolbudget-count-tokens/0"}"#);
        assert!(matches!(load, CacheLoad::Discarded(_)), "{load:?}");
    }

    #[test]
    fn tool_names_are_made_acceptable() {
        assert_eq!(
            api_tool_name("mcp__gh__create_issue"),
            "mcp__gh__create_issue"
        );
        assert_eq!(
            api_tool_name("mcp__Ant Design__x.y"),
            "mcp__Ant_Design__x_y"
        );
        assert_eq!(api_tool_name(&"a".repeat(70)).len(), 64);
    }

    #[test]
    fn request_bodies_name_model_system_messages_tools_and_choice() {
        let t = Tool {
            id: "notes_search".into(),
            name: "notes_search".into(),
            server: None,
            description: "Search notes.".into(),
            input_schema: serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}}),
            should_defer: None,
            always_load: false,
            search_hint: None,
            depends_on: vec![],
            origin: None,
        };
        let b = request_body("claude-x", Some("Be brief."), "hi", &[&t], ToolChoice::Any);
        assert_eq!(
            b,
            r#"{"model":"claude-x","system":"Be brief.","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"notes_search","description":"Search notes.","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}}],"tool_choice":{"type":"any"}}"#
        );
        assert_eq!(
            request_body("claude-x", None, ".", &[], ToolChoice::Tool),
            r#"{"model":"claude-x","messages":[{"role":"user","content":"."}]}"#
        );
    }

    #[test]
    fn answers_that_cannot_be_counts_are_refused_with_the_reason() {
        assert_eq!(parse_count(r#"{"input_tokens":12}"#, 60), Ok(12));
        // Framing may exceed the body's bytes, within the allowance.
        assert_eq!(parse_count(r#"{"input_tokens":400}"#, 100), Ok(400));
        let refused = |body: &str, bytes: usize| parse_count(body, bytes).unwrap_err();
        assert_eq!(
            refused(r#"{"input_tokens":0}"#, 60),
            "0 tokens for a request of 60 bytes"
        );
        assert_eq!(
            refused(r#"{"input_tokens":18446744073709551615}"#, 60),
            "18446744073709551615 tokens for a request of 60 bytes, more than one a byte plus \
             4096 for the framing"
        );
        assert!(refused(r#"{"input_tokens":4157}"#, 60).starts_with("4157 tokens"));
        assert_eq!(parse_count(r#"{"input_tokens":4156}"#, 60), Ok(4156));
        assert_eq!(
            refused(r#"{"input_tokens":12.5}"#, 60),
            "input_tokens is 12.5, not a whole number of tokens"
        );
        assert_eq!(
            refused(r#"{"input_tokens":-3}"#, 60),
            "input_tokens is -3, not a whole number of tokens"
        );
        assert!(refused(r#"{"input_tokens":"12"}"#, 60).starts_with("it is not a count_tokens"));
        assert!(refused(r#"{"tokens":12}"#, 60).starts_with("it has no input_tokens"));
        assert!(refused("<html>", 60).starts_with("it is not a count_tokens answer"));
        // A long body is shown clipped.
        let long = format!("<{}>", "x".repeat(5000));
        assert!(refused(&long, 60).chars().count() < 300);
    }

    fn tool(id: &str, description: &str) -> Tool {
        Tool {
            id: id.into(),
            name: id.into(),
            server: None,
            description: description.into(),
            input_schema: serde_json::json!({"type": "object"}),
            should_defer: None,
            always_load: false,
            search_hint: None,
            depends_on: vec![],
            origin: None,
        }
    }

    #[test]
    fn a_per_tool_series_that_does_not_add_up_is_refused() {
        let (a, b, c) = (
            tool("a", "short"),
            tool("b", &"long ".repeat(100)),
            tool("c", "mid"),
        );
        let tools = [&a, &b, &c];
        assert_eq!(
            series_adds_up(10, 400, &[330, 430 - 50, 331], &tools),
            Ok(())
        );
        // A constant answer: no tool adds anything.
        let e = series_adds_up(10, 10, &[10, 10, 10], &tools).unwrap_err();
        assert!(
            e.contains("tool \"a\" counts 10 tokens, no more than the 10"),
            "{e}"
        );
        // Every tool at once no more than one alone.
        let e = series_adds_up(10, 340, &[330, 340, 331], &tools).unwrap_err();
        assert!(e.contains("all 3 tools counts 340 tokens, no more than one tool alone (340)"));
        // The same count for tools of very different sizes.
        let e = series_adds_up(10, 900, &[330, 330, 330], &tools).unwrap_err();
        assert!(
            e.contains("every one of the 3 tools counts 330 tokens"),
            "{e}"
        );
        // Close sizes may well count the same.
        let (x, y) = (tool("x", "one"), tool("y", "two"));
        assert_eq!(series_adds_up(10, 400, &[330, 330], &[&x, &y]), Ok(()));
    }

    fn offline_client(cache: &[u8]) -> Client {
        struct Never;
        impl Transport for Never {
            fn post(&self, _: &str, _: &[(&str, &str)], _: &str) -> Result<Reply, String> {
                Err("no network in this test".into())
            }
        }
        Client::new(
            Settings {
                base_url: "http://127.0.0.1:9".into(),
                key: None,
                model: "m".into(),
                cache_path: "c.json".into(),
                offline: true,
            },
            Some(cache),
            Box::new(Never),
            Box::new(|_, _: &str| {}),
        )
    }

    #[test]
    fn implausible_counts_read_back_from_the_cache_are_dropped() {
        let body = request_body("m", None, PROBE, &[], ToolChoice::Auto);
        let mut c = Cache::default();
        for (k, n) in [(body_key(&body), 0), ("other".into(), 7)] {
            c.insert(
                k,
                Entry {
                    model: "m".into(),
                    input_tokens: n,
                },
            );
        }
        let mut client = offline_client(&c.to_bytes());
        assert_eq!(client.load, CacheLoad::Loaded(2));
        let e = client.count_body(&body).unwrap_err();
        assert!(
            e.to_string()
                .contains("its cached count was dropped (0 tokens for a request of"),
            "{e}"
        );
        // Dropped for good: the cache to be written no longer has it.
        assert!(client.cache.is_dirty() && client.cache.len() == 1);
        assert!(client.cache.get(&body_key(&body)).is_none());
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Whatever the body, parsing never panics and never accepts an implausible count.
        #[test]
        fn no_answer_body_yields_an_implausible_count(
            body in proptest::prelude::any::<String>(),
            bytes in 0usize..100_000,
        ) {
            if let Ok(n) = parse_count(&body, bytes) {
                proptest::prop_assert!(n >= 1 && n <= bytes + FRAMING_ALLOWANCE);
            }
        }

        /// Count-shaped bodies with any number: accepted exactly when the number is a
        /// plausible count, and then as that number.
        #[test]
        fn count_shaped_answers_are_accepted_exactly_when_plausible(
            number in proptest::prop_oneof![
                proptest::prelude::any::<u64>().prop_map(|n| n.to_string()),
                (0u64..10_000).prop_map(|n| n.to_string()),
                proptest::prelude::any::<i64>().prop_map(|n| n.to_string()),
                proptest::prelude::any::<f64>().prop_map(|f| format!("{f:?}")),
                proptest::prelude::Just("1e400".to_string()),
            ],
            bytes in 0usize..10_000,
            extra in proptest::prelude::any::<bool>(),
        ) {
            let body = if extra {
                format!(r#"{{"note": "x", "input_tokens": {number}}}"#)
            } else {
                format!(r#"{{"input_tokens":{number}}}"#)
            };
            let expected = number
                .parse::<u64>()
                .ok()
                .filter(|&n| n >= 1 && n <= (bytes + FRAMING_ALLOWANCE) as u64);
            proptest::prop_assert_eq!(parse_count(&body, bytes).ok().map(|n| n as u64), expected);
        }
    }
}
