//! Counters: how a request is rendered and tokenized, the way a provider bills it.
//!
//! A counter answers four questions, and everything that prints a token count asks one:
//! the tokens of one tool definition (computed once per tool, [`ToolTokens`]), the fixed cost
//! of sending any tools at all (beyond the model's documented tool-use prompt, which the model
//! profile holds), the tokens of the system prompt with the request's framing, and the tokens
//! of a message with its framing.
//!
//! | counter | rendering | tokenizer |
//! |---|---|---|
//! | `openai-responses` | harmony TypeScript namespace in the developer message | o200k_base |
//! | `openai-chat` | the same namespace in the system message, Chat Completions framing | o200k_base |
//! | `anthropic-estimate` | json, scaled by a fit on public `count_tokens` answers | o200k_base × fit |
//! | `anthropic-api` | json, counted by Anthropic's `count_tokens` endpoint (cached) | Claude's |
//! | `o200k-json` / `cl100k-json` | compact json, no framing (toolbudget's original counts) | o200k / cl100k |

pub mod anthropic;
pub mod api;
pub mod harmony;
pub mod openai;

use std::fmt;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, Tool};
use crate::tokenize::{Render, Tokenizer, render_json};

use openai::{Api, Framing};

/// The counters, by their command-line and scenario names.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum CounterKind {
    OpenaiResponses,
    OpenaiChat,
    AnthropicEstimate,
    AnthropicApi,
    O200kJson,
    Cl100kJson,
}

impl CounterKind {
    pub const ALL: [CounterKind; 6] = [
        CounterKind::OpenaiResponses,
        CounterKind::OpenaiChat,
        CounterKind::AnthropicEstimate,
        CounterKind::AnthropicApi,
        CounterKind::O200kJson,
        CounterKind::Cl100kJson,
    ];

    /// The counters that need no network.
    pub const LOCAL: [CounterKind; 5] = [
        CounterKind::OpenaiResponses,
        CounterKind::OpenaiChat,
        CounterKind::AnthropicEstimate,
        CounterKind::O200kJson,
        CounterKind::Cl100kJson,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CounterKind::OpenaiResponses => "openai-responses",
            CounterKind::OpenaiChat => "openai-chat",
            CounterKind::AnthropicEstimate => "anthropic-estimate",
            CounterKind::AnthropicApi => "anthropic-api",
            CounterKind::O200kJson => "o200k-json",
            CounterKind::Cl100kJson => "cl100k-json",
        }
    }

    /// The BPE behind the counts (anthropic counters: what their features are counted with).
    pub fn tokenizer(self) -> Tokenizer {
        match self {
            CounterKind::Cl100kJson => Tokenizer::Cl100kBase,
            _ => Tokenizer::O200kBase,
        }
    }

    /// The tokenizer as printed beside counts.
    pub fn tokenizer_label(self) -> &'static str {
        match self {
            CounterKind::AnthropicEstimate => "claude (estimated from o200k_base)",
            CounterKind::AnthropicApi => "claude (count_tokens)",
            other => other.tokenizer().name(),
        }
    }

    /// How a tool is rendered before counting, as printed (`json` is `Render::Json`).
    pub fn render_name(self) -> &'static str {
        match self {
            CounterKind::OpenaiResponses | CounterKind::OpenaiChat => "harmony",
            _ => Render::Json.name(),
        }
    }

    /// toolbudget's original counters, for a scenario's or flag's `tokenizer`/`render`.
    pub fn from_legacy(tokenizer: Tokenizer, _render: Render) -> CounterKind {
        match tokenizer {
            Tokenizer::O200kBase => CounterKind::O200kJson,
            Tokenizer::Cl100kBase => CounterKind::Cl100kJson,
        }
    }

    /// The counters that render tools as OpenAI does (harmony).
    pub fn is_openai(self) -> bool {
        matches!(self, CounterKind::OpenaiResponses | CounterKind::OpenaiChat)
    }

    pub fn is_local(self) -> bool {
        self != CounterKind::AnthropicApi
    }

    /// The stated error of an estimating counter, in percent.
    pub fn error_pct(self) -> Option<f64> {
        (self == CounterKind::AnthropicEstimate).then(|| anthropic::fit().error_pct)
    }

    fn framing(self) -> Option<Framing> {
        let api = match self {
            CounterKind::OpenaiResponses => Api::Responses,
            CounterKind::OpenaiChat => Api::Chat,
            _ => return None,
        };
        Some(Framing {
            api,
            tokenizer: self.tokenizer(),
        })
    }

    /// Tokens of one tool definition as it adds to a request.
    ///
    /// # Panics
    /// For `anthropic-api`, whose counts come from [`api`] (a programming error).
    pub fn tool(self, tool: &Tool) -> usize {
        let bpe = self.tokenizer();
        match self {
            CounterKind::OpenaiResponses | CounterKind::OpenaiChat => {
                harmony::ToolCounting { tokenizer: bpe }.tool(tool)
            }
            CounterKind::AnthropicEstimate => anthropic::tool_tokens(bpe.count(&render_json(tool))),
            CounterKind::O200kJson | CounterKind::Cl100kJson => bpe.count(&render_json(tool)),
            CounterKind::AnthropicApi => panic!("anthropic-api counts come from counter::api"),
        }
    }

    /// What a tool's count derives from: counters on the same basis share one BPE pass.
    fn basis(self) -> Basis {
        match self {
            CounterKind::OpenaiResponses | CounterKind::OpenaiChat => Basis::HarmonyO200k,
            CounterKind::AnthropicEstimate | CounterKind::O200kJson => Basis::JsonO200k,
            CounterKind::Cl100kJson => Basis::JsonCl100k,
            CounterKind::AnthropicApi => panic!("anthropic-api counts come from counter::api"),
        }
    }

    /// A tool's count from its basis count.
    fn scale_basis(self, n: usize) -> usize {
        match self {
            CounterKind::AnthropicEstimate => anthropic::tool_tokens(n),
            _ => n,
        }
    }

    /// Every tool's count, computed once (in parallel).
    pub fn tools(self, catalog: &Catalog) -> ToolTokens {
        self.tools_reporting(catalog, &crate::progress::Quiet)
    }

    /// As [`CounterKind::tools`], advancing `progress` by one per tool counted (from the
    /// counting threads).
    pub fn tools_reporting(
        self,
        catalog: &Catalog,
        progress: &dyn crate::progress::Progress,
    ) -> ToolTokens {
        let counts = catalog
            .tools()
            .par_iter()
            .with_min_len(64)
            .map(|t| {
                let n = self.tool(t);
                progress.advance(1);
                n
            })
            .collect();
        ToolTokens::of(self, counts)
    }

    /// Raw text (a message's content, a tool call) without framing.
    pub fn text(self, text: &str) -> usize {
        self.text_from_count(self.tokenizer().count(text))
    }

    /// As [`CounterKind::text`] for text already counted with [`CounterKind::tokenizer`]: a
    /// caller with a faster BPE of the same vocabulary (session import) counts, this maps.
    pub fn text_from_count(self, n: usize) -> usize {
        match self {
            CounterKind::AnthropicEstimate | CounterKind::AnthropicApi => anthropic::text_tokens(n),
            _ => n,
        }
    }

    /// The system prompt with its message framing plus the reply priming every request ends
    /// with (0 framing for the json counters, which count content only).
    pub fn system(self, system: Option<&str>) -> usize {
        match self.framing() {
            Some(f) => f.system(system),
            None => system.map_or(0, |s| self.text(s)),
        }
    }

    /// As [`CounterKind::system`] for a prompt given as a token count.
    pub fn system_from_count(self, content: usize) -> usize {
        match self.framing() {
            Some(f) => f.system_from_count((content > 0).then_some(content)),
            None => content,
        }
    }

    /// A user message given as text, with its framing.
    pub fn message(self, text: &str) -> usize {
        self.message_from_count(self.text(text))
    }

    /// A message whose content is given as a token count, with its framing.
    pub fn message_from_count(self, content: usize) -> usize {
        match self.framing() {
            Some(f) => f.message_from_count(content),
            None => content,
        }
    }

    /// What sending any tools adds beyond the tools' own counts and the model's tool-use
    /// prompt (which the model profile holds): the namespace and section header for OpenAI,
    /// the fitted block framing for the Anthropic estimate, nothing for the json counters.
    pub fn tools_fixed(self, system: Option<&str>) -> usize {
        match self {
            CounterKind::OpenaiResponses | CounterKind::OpenaiChat => self
                .framing()
                .expect("openai counters frame")
                .tools_fixed(system),
            CounterKind::AnthropicEstimate | CounterKind::AnthropicApi => anthropic::tools_fixed(),
            CounterKind::O200kJson | CounterKind::Cl100kJson => 0,
        }
    }

    /// One request of the public series' shape: a system prompt, one user message and the
    /// tools inline, with the model's tool-use prompt `preamble`.
    pub fn request(
        self,
        system: Option<&str>,
        user: &str,
        tools: &[&Tool],
        preamble: usize,
    ) -> usize {
        let base = self.system(system) + self.message(user);
        if tools.is_empty() {
            return base;
        }
        base + preamble
            + self.tools_fixed(system)
            + tools.iter().map(|t| self.tool(t)).sum::<usize>()
    }
}

/// How deferred OpenAI functions are shown before a search loads them (`openai-*` counters;
/// OpenAI API docs, Tool search): by their searchable surface, name and description only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deferral<'a> {
    /// Each function carries `defer_loading`: its own surface (name and description) stays.
    Flat,
    /// The functions sit in one namespace (or MCP server): only its name and description show.
    Namespace { name: &'a str, description: &'a str },
}

impl CounterKind {
    /// Tokens of one searchable surface, a deferred function's, namespace's or MCP server's name
    /// and description: the harmony `## NAME` section with its join (`harmony::surface_block`)
    /// for the openai counters; for the others, `{"name","description"}` counted as a tool
    /// definition (the estimate for `anthropic-api`, which counts no text locally).
    pub fn surface(self, name: &str, description: &str) -> usize {
        let bpe = self.tokenizer();
        match self {
            CounterKind::OpenaiResponses | CounterKind::OpenaiChat => {
                harmony::ToolCounting { tokenizer: bpe }.surface(name, description)
            }
            _ => {
                let n = bpe.count(&crate::tokenize::render_surface_json(name, description));
                match self {
                    CounterKind::AnthropicEstimate | CounterKind::AnthropicApi => {
                        anthropic::tool_tokens(n)
                    }
                    _ => n,
                }
            }
        }
    }

    /// A tool call the model writes, with harmony's framing for the openai counters (the
    /// arguments' text alone for the others).
    pub fn tool_call(self, recipient: &str, args: &str) -> usize {
        match self.framing() {
            Some(f) => f.call(recipient, args),
            None => self.text(args),
        }
    }

    /// A tool's output message, with harmony's framing for the openai counters (the body's
    /// text alone for the others).
    pub fn tool_output(self, sender: &str, body: &str) -> usize {
        match self.framing() {
            Some(f) => f.tool_message(sender, body),
            None => self.text(body),
        }
    }

    /// What opening the tools sections costs when no function is sent eagerly (every one
    /// deferred): [`CounterKind::tools_fixed`] without the `## functions` section and its
    /// namespace; surfaces carry their own joins. The json counters: `tools_fixed`.
    pub fn tools_sections_open(self, system: Option<&str>) -> usize {
        match self.framing() {
            Some(f) => f.sections_open(system),
            None => self.tools_fixed(system),
        }
    }

    /// A request of the public series' shape with every tool deferred: the messages, the
    /// tools sections opened, the surfaces (each function's, or the namespace's) and `search`,
    /// the search tool's own section plus the model's tool-use preamble.
    pub fn deferred_request(
        self,
        system: Option<&str>,
        user: &str,
        tools: &[&Tool],
        deferral: Deferral<'_>,
        search: usize,
    ) -> usize {
        let surfaces = match deferral {
            Deferral::Flat => tools
                .iter()
                .map(|t| self.surface(&t.id, &t.description))
                .sum(),
            Deferral::Namespace { name, description } => self.surface(name, description),
        };
        self.system(system)
            + self.message(user)
            + self.tools_sections_open(system)
            + surfaces
            + search
    }
}

/// The BPE passes counters are built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Basis {
    HarmonyO200k,
    JsonO200k,
    JsonCl100k,
}

impl Basis {
    fn count(self, tool: &Tool) -> usize {
        match self {
            Basis::HarmonyO200k => harmony::ToolCounting {
                tokenizer: Tokenizer::O200kBase,
            }
            .tool(tool),
            Basis::JsonO200k => Tokenizer::O200kBase.count(&render_json(tool)),
            Basis::JsonCl100k => Tokenizer::Cl100kBase.count(&render_json(tool)),
        }
    }
}

/// Every tool under several local counters in one parallel pass, each distinct rendering and
/// tokenizer counted once (openai-responses and openai-chat share the harmony count,
/// anthropic-estimate scales o200k-json's).
pub fn count_all(kinds: &[CounterKind], catalog: &Catalog) -> Vec<ToolTokens> {
    let mut bases: Vec<Basis> = Vec::new();
    for k in kinds {
        if !bases.contains(&k.basis()) {
            bases.push(k.basis());
        }
    }
    let per_tool: Vec<Vec<usize>> = catalog
        .tools()
        .par_iter()
        .with_min_len(32)
        .map(|t| bases.iter().map(|b| b.count(t)).collect())
        .collect();
    kinds
        .iter()
        .map(|&k| {
            let at = bases.iter().position(|b| *b == k.basis()).expect("listed");
            ToolTokens::of(k, per_tool.iter().map(|c| k.scale_basis(c[at])).collect())
        })
        .collect()
}

impl fmt::Display for CounterKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for CounterKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        CounterKind::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown counter {s:?}, expected one of: {}",
                    CounterKind::ALL.map(CounterKind::name).join(", ")
                )
            })
    }
}

/// A counter as a result names it: `counter`, then the `tokenizer` (and with `RENDER` the
/// `render`) it implies, derived from the counter when written, never stored apart. Flattened
/// into the result (`#[serde(flatten)]`), so the keys stay where they were. A result written
/// before counters existed (no `counter`) reads back as the json counter of its `tokenizer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterNames<const RENDER: bool>(pub CounterKind);

/// `counter`, `tokenizer` and `render`.
pub type CounterKeys = CounterNames<true>;
/// `counter` and `tokenizer`.
pub type CounterAndTokenizer = CounterNames<false>;

impl<const RENDER: bool> Serialize for CounterNames<RENDER> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2 + usize::from(RENDER)))?;
        m.serialize_entry("counter", self.0.name())?;
        m.serialize_entry("tokenizer", self.0.tokenizer_label())?;
        if RENDER {
            m.serialize_entry("render", self.0.render_name())?;
        }
        m.end()
    }
}

impl<'de, const RENDER: bool> Deserialize<'de> for CounterNames<RENDER> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Written {
            #[serde(default)]
            counter: String,
            #[serde(default)]
            tokenizer: String,
        }
        let w = Written::deserialize(d)?;
        if let Some(k) = CounterKind::ALL.into_iter().find(|k| k.name() == w.counter) {
            return Ok(CounterNames(k));
        }
        match (w.counter.is_empty(), w.tokenizer.parse::<Tokenizer>()) {
            (true, Ok(t)) => Ok(CounterNames(CounterKind::from_legacy(t, Render::Json))),
            _ => Err(serde::de::Error::custom(format!(
                "unknown counter {:?} (tokenizer {:?})",
                w.counter, w.tokenizer
            ))),
        }
    }
}

/// A provider's tool-use preamble: its tokens for each `tool_choice`. The calibration's
/// documented prompt (`anthropic::ToolUsePrompt`) and a profile's preambles
/// (`simulate::profile::CounterPreamble`) both hold one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preamble {
    pub auto: usize,
    pub none: usize,
    pub any: usize,
    pub tool: usize,
}

impl Preamble {
    /// The same size whatever the choice.
    pub fn uniform(tokens: usize) -> Preamble {
        Preamble {
            auto: tokens,
            none: tokens,
            any: tokens,
            tool: tokens,
        }
    }

    pub fn tokens(&self, choice: ToolChoice) -> usize {
        match choice {
            ToolChoice::Auto => self.auto,
            ToolChoice::None => self.none,
            ToolChoice::Any => self.any,
            ToolChoice::Tool => self.tool,
        }
    }
}

/// The `tool_choice` of a request: the tool-use prompt's size depends on it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    #[default]
    Auto,
    None,
    /// Anthropic `any`, OpenAI `required`: some tool must be called.
    #[serde(alias = "required")]
    #[value(alias = "required")]
    Any,
    /// One named tool must be called.
    Tool,
}

impl fmt::Display for ToolChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl ToolChoice {
    pub fn name(self) -> &'static str {
        match self {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
            ToolChoice::Any => "any",
            ToolChoice::Tool => "tool",
        }
    }
}

/// Every tool's token count under one counter, computed once.
#[derive(Debug, Clone)]
pub struct ToolTokens {
    pub counter: CounterKind,
    /// The BPE behind the counts.
    pub tokenizer: Tokenizer,
    counts: Vec<usize>,
}

impl ToolTokens {
    /// Counts under one of the original json counters (kept for callers that name a tokenizer).
    pub fn compute(catalog: &Catalog, tokenizer: Tokenizer, render: Render) -> ToolTokens {
        CounterKind::from_legacy(tokenizer, render).tools(catalog)
    }

    /// Counts supplied directly under a json counter (tests, fixed-count models of a catalog).
    pub fn from_counts(tokenizer: Tokenizer, render: Render, counts: Vec<usize>) -> ToolTokens {
        ToolTokens::of(CounterKind::from_legacy(tokenizer, render), counts)
    }

    /// Counts made by `counter` (locally, or by the API counter from its answers).
    pub fn of(counter: CounterKind, counts: Vec<usize>) -> ToolTokens {
        ToolTokens {
            counter,
            tokenizer: counter.tokenizer(),
            counts,
        }
    }

    pub fn get(&self, tool_index: usize) -> usize {
        self.counts[tool_index]
    }

    pub fn counts(&self) -> &[usize] {
        &self.counts
    }

    pub fn total(&self) -> usize {
        self.counts.iter().sum()
    }
}

#[cfg(test)]
mod tests;
