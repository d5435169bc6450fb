//! Counting a catalog: every tool's tokens under one counter, per server and in total, with
//! the fixed cost of sending any tools ([`CountReport`], `count`), and one catalog under every
//! counter side by side ([`CounterComparison`], `count --compare-counters`). The counts come
//! from `counter`; the `anthropic-api` counts go through the command's client ([`run`]).

use serde::Serialize;

use crate::catalog::{Catalog, CatalogSource};
use crate::counter::{CounterKeys, CounterKind, CounterNames, ToolChoice, ToolTokens, count_all};
use crate::error::{Error, Result};
use crate::experiment::simulate::{Api, ApiCounting};
use crate::number::round;
use crate::progress::{Progress, Unit};
use crate::simulate::profile::{self, Profile};
use crate::tokenize::{Render, Tokenizer};

#[derive(Debug, Serialize)]
pub struct CountReport {
    /// The counter, with its tokenizer and rendering.
    #[serde(flatten)]
    pub counter: CounterKeys,
    /// The stated error of an estimating counter, percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_pct: Option<f64>,
    /// The tool-use preamble `fixed_tokens` includes, and whose it is; `None` (null) under a
    /// provider-neutral counter (`o200k-json`, `cl100k-json`) without `--model`: no
    /// provider's preamble is added to a count that is no provider's.
    pub preamble: Option<PreambleInfo>,
    pub tool_choice: ToolChoice,
    /// The counter's framing of the tools block.
    pub framing_tokens: usize,
    /// What sending any tools costs beyond their definitions: the preamble's tokens plus
    /// `framing_tokens`.
    pub fixed_tokens: usize,
    pub total_tokens: usize,
    /// Every tool, the search tool included (the count every command uses).
    pub tool_count: usize,
    /// The catalog's search tool, when it has one: sent by the deferred mode, never a search
    /// result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_tool: Option<String>,
    pub per_tool: PerToolStats,
    pub servers: Vec<ServerCount>,
    pub tools: Vec<ToolCount>,
}

#[derive(Debug, Serialize)]
pub struct PerToolStats {
    pub mean: f64,
    pub median: f64,
    pub max: usize,
}

#[derive(Debug, Serialize)]
pub struct ServerCount {
    /// The MCP server, or `(built-in)`.
    pub server: String,
    pub tools: usize,
    pub tokens: usize,
}

#[derive(Debug, Serialize)]
pub struct ToolCount {
    pub id: String,
    pub tokens: usize,
}

pub const BUILTIN_GROUP: &str = "(built-in)";

/// A model's tool-use preamble as a count adds it: whose, how large, from where.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreambleInfo {
    /// The model profile it is quoted from.
    pub model: String,
    /// Whose preamble it is (`Anthropic`, `OpenAI`).
    pub provider: String,
    pub tokens: usize,
    /// Where the figure comes from (the profile's `sources.preambles`).
    pub source: String,
}

impl PreambleInfo {
    /// `profile`'s preamble under `counter` for `choice`.
    pub fn of(profile: &Profile, counter: CounterKind, choice: ToolChoice) -> PreambleInfo {
        PreambleInfo {
            model: profile.name.clone(),
            provider: provider_of(profile.counter).to_string(),
            tokens: profile.preamble(counter, choice),
            source: profile
                .sources
                .get("preambles")
                .cloned()
                .unwrap_or_default(),
        }
    }
}

/// The provider a profile's own counter bills for.
fn provider_of(counter: CounterKind) -> &'static str {
    match counter {
        CounterKind::AnthropicEstimate | CounterKind::AnthropicApi => "Anthropic",
        CounterKind::OpenaiResponses | CounterKind::OpenaiChat => "OpenAI",
        CounterKind::O200kJson | CounterKind::Cl100kJson => "none",
    }
}

/// The counter's fixed cost: the preamble it includes (if any) and the tools block framing.
#[derive(Debug, Clone)]
pub struct Fixed {
    pub preamble: Option<PreambleInfo>,
    pub choice: ToolChoice,
    pub framing: usize,
    /// Preamble + framing.
    pub tokens: usize,
}

impl Fixed {
    /// Preamble of `profile` (none without one) under `counter` plus the counter's tools block
    /// framing.
    pub fn local(counter: CounterKind, profile: Option<&Profile>, choice: ToolChoice) -> Fixed {
        let preamble = profile.map(|p| PreambleInfo::of(p, counter, choice));
        let framing = counter.tools_fixed(None);
        Fixed {
            tokens: framing + preamble.as_ref().map_or(0, |p| p.tokens),
            preamble,
            choice,
            framing,
        }
    }

    /// A fixed cost measured whole (`anthropic-api`: differences of requests): `profile`'s
    /// documented preamble, at most the measured figure, and the rest as framing.
    pub fn measured(
        counter: CounterKind,
        profile: &Profile,
        choice: ToolChoice,
        tokens: usize,
    ) -> Fixed {
        let mut preamble = PreambleInfo::of(profile, counter, choice);
        preamble.tokens = preamble.tokens.min(tokens);
        Fixed {
            framing: tokens - preamble.tokens,
            preamble: Some(preamble),
            choice,
            tokens,
        }
    }
}

pub fn summarize(catalog: &Catalog, tokens: &ToolTokens, fixed: &Fixed) -> CountReport {
    let counts = tokens.counts();
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    let median = match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2] as f64,
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0,
    };
    let mut servers: Vec<ServerCount> = Vec::new();
    for (t, &c) in catalog.tools().iter().zip(counts) {
        let group = t.server.as_deref().unwrap_or(BUILTIN_GROUP);
        match servers.iter_mut().find(|s| s.server == group) {
            Some(s) => {
                s.tools += 1;
                s.tokens += c;
            }
            None => servers.push(ServerCount {
                server: group.to_string(),
                tools: 1,
                tokens: c,
            }),
        }
    }
    CountReport {
        counter: CounterNames(tokens.counter),
        error_pct: tokens.counter.error_pct(),
        preamble: fixed.preamble.clone(),
        tool_choice: fixed.choice,
        framing_tokens: fixed.framing,
        fixed_tokens: fixed.tokens,
        total_tokens: tokens.total(),
        tool_count: n,
        search_tool: catalog.search_tool().map(|i| catalog.get(i).id.clone()),
        per_tool: PerToolStats {
            mean: if n == 0 {
                0.0
            } else {
                round(tokens.total() as f64 / n as f64, 2)
            },
            median,
            max: sorted.last().copied().unwrap_or(0),
        },
        servers,
        tools: catalog
            .tools()
            .iter()
            .zip(counts)
            .map(|(t, &c)| ToolCount {
                id: t.id.clone(),
                tokens: c,
            })
            .collect(),
    }
}

/// The profile a counter's fixed cost is quoted for: `--model`, else the model the counter
/// was made for; none for a provider-neutral counter (`o200k-json`, `cl100k-json`) without
/// `--model`, which then adds no provider's preamble.
pub fn reference_profile(counter: CounterKind, model: Option<&str>) -> Result<Option<Profile>> {
    let name = match (model, counter) {
        (Some(m), _) => m,
        (None, CounterKind::OpenaiResponses) => "gpt-5.4",
        (None, CounterKind::OpenaiChat) => "gpt-4o",
        (None, CounterKind::AnthropicEstimate | CounterKind::AnthropicApi) => "claude-sonnet-4-6",
        (None, CounterKind::O200kJson | CounterKind::Cl100kJson) => return Ok(None),
    };
    profile::resolve(name).map(Some).map_err(Error::usage)
}

#[derive(Debug, Serialize)]
pub struct CounterComparison {
    pub tool_count: usize,
    pub tool_choice: ToolChoice,
    pub counters: Vec<CounterRow>,
    /// Counters left out, and why (anthropic-api without key or complete cache).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    pub tools: Vec<ToolRow>,
}

#[derive(Debug, Serialize)]
pub struct CounterRow {
    /// The counter, with its tokenizer and rendering.
    #[serde(flatten)]
    pub counter: CounterKeys,
    /// The tool-use preamble `fixed_tokens` includes (null: none, a provider-neutral counter).
    pub preamble: Option<PreambleInfo>,
    /// Σ tool definitions.
    pub tools_tokens: usize,
    /// Tool-use preamble + the counter's framing of the tools block.
    pub fixed_tokens: usize,
    /// What the tools add to a request: tools + fixed.
    pub request_tokens: usize,
    pub per_tool_mean: f64,
    /// `request_tokens` against o200k-json's, percent (+: more).
    pub vs_o200k_json_pct: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_pct: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct Skipped {
    pub counter: CounterKind,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct ToolRow {
    pub id: String,
    /// One count per entry of `counters`, in that order.
    pub tokens: Vec<usize>,
}

/// One counter's counts of a catalog's tools, and its fixed cost.
#[derive(Debug, Clone)]
pub struct Counted {
    pub counter: CounterKind,
    pub counts: Vec<usize>,
    pub fixed: Fixed,
}

/// Every local counter's counts in one pass over the tools (shared renderings counted once),
/// the fixed cost quoted for `model` or each counter's reference model.
pub fn local_counts(
    catalog: &Catalog,
    model: Option<&str>,
    choice: ToolChoice,
) -> Result<Vec<Counted>> {
    let mut counted = Vec::new();
    for t in count_all(&CounterKind::LOCAL, catalog) {
        let profile = reference_profile(t.counter, model)?;
        counted.push(Counted {
            counter: t.counter,
            counts: t.counts().to_vec(),
            fixed: Fixed::local(t.counter, profile.as_ref(), choice),
        });
    }
    Ok(counted)
}

/// The catalog under every counter of `counted`, side by side, against `o200k-json`;
/// `skipped` lists the counters left out and why.
pub fn compare_counters(
    catalog: &Catalog,
    choice: ToolChoice,
    counted: &[Counted],
    skipped: Vec<Skipped>,
) -> CounterComparison {
    let reference: usize = counted
        .iter()
        .find(|c| c.counter == CounterKind::O200kJson)
        .map_or(0, |c| c.counts.iter().sum::<usize>() + c.fixed.tokens);
    let n = catalog.len();
    let counters = counted
        .iter()
        .map(|c| {
            let (k, f) = (c.counter, &c.fixed);
            let tools: usize = c.counts.iter().sum();
            let request = tools + f.tokens;
            CounterRow {
                counter: CounterNames(k),
                preamble: f.preamble.clone(),
                tools_tokens: tools,
                fixed_tokens: f.tokens,
                request_tokens: request,
                per_tool_mean: if n == 0 {
                    0.0
                } else {
                    (tools as f64 / n as f64 * 100.0).round() / 100.0
                },
                vs_o200k_json_pct: if reference == 0 {
                    0.0
                } else {
                    ((request as f64 / reference as f64 - 1.0) * 1e4).round() / 100.0
                },
                error_pct: k.error_pct(),
            }
        })
        .collect();
    let tools = catalog
        .tools()
        .iter()
        .enumerate()
        .map(|(i, t)| ToolRow {
            id: t.id.clone(),
            tokens: counted.iter().map(|c| c.counts[i]).collect(),
        })
        .collect();
    CounterComparison {
        tool_count: n,
        tool_choice: choice,
        counters,
        skipped,
        tools,
    }
}

/// What a count of captured request bodies (or of tools arrays holding hosted tools) adds
/// to the report: the json's `captured` key, and lines after the table.
#[derive(Debug, Clone, Serialize)]
pub struct CapturedCount {
    pub bodies: Vec<BodyEntry>,
    /// Tools without `defer_loading: true`: their whole definitions are in every request.
    pub sent_whole: usize,
    pub sent_whole_tokens: usize,
    /// Tools with `defer_loading: true`: in context only once a search loads them.
    pub deferred: usize,
    pub deferred_tokens: usize,
    /// Hosted entries, kept out of `tools` and `total_tokens`.
    pub hosted: Vec<HostedEntry>,
    /// The sum of the hosted entries' known figures (the providers' counts, not this
    /// counter's).
    pub hosted_tokens: usize,
    /// The search tool the request carried (a hosted one, or the catalog's `ToolSearch`).
    pub search_tool: Option<String>,
    /// `deferred`, `deferred-without-search`, `search-without-deferral` or `not-deferred`.
    pub deferral: &'static str,
    /// The verdict in words.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BodyEntry {
    pub file: String,
    /// `anthropic-messages`, `openai-chat-completions`, `openai-responses`, `unknown`.
    pub shape: &'static str,
    pub model: Option<String>,
    /// The top-level keys that are not the catalog.
    pub ignored: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HostedEntry {
    pub file: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub name: Option<String>,
    pub provider: &'static str,
    pub search: bool,
    /// `None` (null): no documented or measured figure; listed apart, not counted.
    pub tokens: Option<usize>,
    /// `documented` or `measured`.
    pub basis: Option<&'static str>,
    pub source: Option<&'static str>,
}

impl HostedEntry {
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) if n != &self.kind => format!("{n} ({})", self.kind),
            _ => self.kind.clone(),
        }
    }
}

impl CapturedCount {
    /// Fills `deferral` and `notes` from the counts and the search tool.
    pub fn judge(mut self) -> CapturedCount {
        let tools = |n| crate::number::plural(n, "tool", "tools");
        let (deferral, note) = match (self.deferred, &self.search_tool) {
            (0, Some(search)) if self.sent_whole > 0 => (
                "search-without-deferral",
                format!(
                    "the client did not really defer: {search} was sent, but no tool has \
                     defer_loading: true, so all {} go whole in every request and the search \
                     tool only adds its own cost",
                    tools(self.sent_whole)
                ),
            ),
            (0, Some(search)) => (
                "search-without-deferral",
                format!("{search} was sent with no tool to search"),
            ),
            (0, None) => (
                "not-deferred",
                format!(
                    "no tool was deferred and no search tool was sent: {} go whole in every \
                     request",
                    tools(self.sent_whole)
                ),
            ),
            (n, None) => (
                "deferred-without-search",
                format!(
                    "{} deferred (defer_loading: true) but no search tool was sent: the model \
                     has no way to find or load them",
                    tools(n)
                ),
            ),
            (n, Some(search)) => (
                "deferred",
                format!(
                    "the client deferred: {} wait behind {search}, {} sent whole",
                    tools(n),
                    tools(self.sent_whole)
                ),
            ),
        };
        self.deferral = deferral;
        self.notes = vec![note];
        self
    }
}

/// What `count` is asked.
#[derive(Debug, Clone)]
pub struct CountRequest {
    pub catalog: Vec<CatalogSource>,
    /// `--counter`, else the json counter of `--tokenizer` and `--render`.
    pub counter: Option<CounterKind>,
    pub tokenizer: Option<Tokenizer>,
    pub render: Option<Render>,
    /// Every counter side by side (`--compare-counters`).
    pub compare_counters: bool,
    /// The model profile whose tool-use preamble the fixed cost includes.
    pub model: Option<String>,
    pub tool_choice: ToolChoice,
    /// Whether the anthropic-api counter can answer (a key or a cache file): it joins the
    /// comparison only then.
    pub api_available: bool,
}

/// A count: one counter's report (and what captured request bodies say), or the comparison.
pub enum CountResult {
    One(Box<CountReport>, Option<CapturedCount>),
    Compared(CounterComparison),
}

/// The one count: the catalog loaded, its tools counted under the asked counter (through the
/// API when it is `anthropic-api`), or under every counter.
pub fn run(request: &CountRequest, progress: &dyn Progress, api: Api<'_>) -> Result<CountResult> {
    progress.phase("count", 0, Unit::Spinner);
    progress.step("loading the catalogs");
    let catalog = super::load_catalog(&request.catalog, progress)?;
    progress.finish();
    if request.compare_counters {
        return Ok(CountResult::Compared(compare_every_counter(
            &catalog, request, progress, api,
        )?));
    }
    let counter = request.counter.unwrap_or_else(|| {
        CounterKind::from_legacy(
            request.tokenizer.unwrap_or(Tokenizer::O200kBase),
            request.render.unwrap_or(Render::Json),
        )
    });
    progress.phase("count", catalog.len() as u64, Unit::Items("tools"));
    progress.step(counter.name());
    let (tokens, fixed) = count_with(counter, &catalog, request, progress, api)?;
    progress.finish();
    let report = summarize(&catalog, &tokens, &fixed);
    let captured = captured_count(&catalog, tokens.counts());
    Ok(CountResult::One(Box::new(report), captured))
}

/// One counter's counts and fixed cost for a catalog, `progress` advanced once per tool.
fn count_with(
    counter: CounterKind,
    catalog: &Catalog,
    request: &CountRequest,
    progress: &dyn Progress,
    api: Api<'_>,
) -> Result<(ToolTokens, Fixed)> {
    let choice = request.tool_choice;
    let profile = reference_profile(counter, request.model.as_deref())?;
    if counter == CounterKind::AnthropicApi {
        let profile = profile.expect("anthropic-api has a reference model");
        let api = api.ok_or_else(|| {
            Error::usage("the anthropic-api counter needs the command's API access")
        })?;
        let a = api_counts(api, catalog, &profile, choice, progress)?;
        let fixed = Fixed::measured(counter, &profile, choice, a.fixed);
        return Ok((ToolTokens::of(counter, a.counts), fixed));
    }
    Ok((
        counter.tools_reporting(catalog, progress),
        Fixed::local(counter, profile.as_ref(), choice),
    ))
}

/// Per-tool counts from the API; the client's answers are kept even when a later request
/// fails, so answers already paid for are not lost.
fn api_counts(
    api: &mut (dyn ApiCounting + 'static),
    catalog: &Catalog,
    model: &Profile,
    choice: ToolChoice,
    progress: &dyn Progress,
) -> Result<crate::counter::api::ApiToolCounts> {
    let mut client = api.client(&model.api_model)?;
    let counted =
        crate::counter::api::tool_counts_reporting(&mut client, catalog, choice, progress);
    api.keep(&client)?;
    counted.map_err(|e| Error::Missing(e.to_string()))
}

/// The catalog under every local counter, and the API's when it can answer (optional here: a
/// missing answer skips it, with the reason).
fn compare_every_counter(
    catalog: &Catalog,
    request: &CountRequest,
    progress: &dyn Progress,
    api: Api<'_>,
) -> Result<CounterComparison> {
    let mut skipped = Vec::new();
    progress.phase("count", 0, Unit::Spinner);
    progress.step(&format!(
        "{} under every local counter",
        crate::number::plural(catalog.len(), "tool", "tools")
    ));
    let mut counted = local_counts(catalog, request.model.as_deref(), request.tool_choice)?;
    progress.finish();
    if request.api_available {
        let counter = CounterKind::AnthropicApi;
        progress.phase("count", catalog.len() as u64, Unit::Items("tools"));
        progress.step(counter.name());
        match count_with(counter, catalog, request, progress, api) {
            Ok((t, fixed)) => counted.push(Counted {
                counter,
                counts: t.counts().to_vec(),
                fixed,
            }),
            Err(e) => skipped.push(Skipped {
                counter,
                reason: e.to_string(),
            }),
        }
        progress.finish();
    }
    Ok(compare_counters(
        catalog,
        request.tool_choice,
        &counted,
        skipped,
    ))
}

/// What the captured request bodies (and hosted entries) of a catalog say about deferral,
/// `None` when the catalog has neither. `counts` are the tools' tokens in catalog order.
fn captured_count(catalog: &Catalog, counts: &[usize]) -> Option<CapturedCount> {
    if catalog.captured().is_empty() {
        return None;
    }
    let (mut sent_whole, mut sent_whole_tokens, mut deferred, mut deferred_tokens) = (0, 0, 0, 0);
    for (t, &c) in catalog.tools().iter().zip(counts) {
        if t.defer() == Some(true) {
            deferred += 1;
            deferred_tokens += c;
        } else {
            sent_whole += 1;
            sent_whole_tokens += c;
        }
    }
    let bodies = catalog
        .captured()
        .iter()
        .filter_map(|c| {
            c.body.as_ref().map(|b| BodyEntry {
                file: c.path.display().to_string(),
                shape: b.shape.key(),
                model: b.model.clone(),
                ignored: b.ignored.clone(),
            })
        })
        .collect();
    let hosted: Vec<HostedEntry> = catalog
        .hosted()
        .map(|h| HostedEntry {
            file: h.origin.path.display().to_string(),
            kind: h.kind.clone(),
            name: h.name.clone(),
            provider: h.provider,
            search: h.search,
            tokens: h.cost.as_ref().map(|c| c.tokens),
            basis: h.cost.as_ref().map(|c| c.basis),
            source: h.cost.as_ref().map(|c| c.source),
        })
        .collect();
    let search_tool = catalog
        .hosted()
        .find(|h| h.search)
        .map(|h| h.name.clone().unwrap_or_else(|| h.kind.clone()))
        .or_else(|| catalog.search_tool().map(|i| catalog.get(i).id.clone()));
    Some(
        CapturedCount {
            bodies,
            sent_whole,
            sent_whole_tokens,
            deferred,
            deferred_tokens,
            hosted_tokens: hosted.iter().filter_map(|h| h.tokens).sum(),
            hosted,
            search_tool,
            deferral: "",
            notes: Vec::new(),
        }
        .judge(),
    )
}
