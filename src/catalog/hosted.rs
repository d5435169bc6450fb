//! Hosted tools: entries of a `tools` array that the provider runs itself (OpenAI's
//! `web_search`, `tool_search`, `file_search`...; Anthropic's server tools such as
//! `tool_search_tool_bm25_20251119`, `web_search_20250305`, `bash_20250124`). They have no
//! schema of the sender's to count, so they are kept apart from the catalog's tools, with the
//! provider's own figure where one is known.

use std::path::PathBuf;

use super::Origin;

/// One hosted entry as it was sent.
#[derive(Debug, Clone, PartialEq)]
pub struct HostedTool {
    /// The entry's `type`, e.g. `web_search_20250305`.
    pub kind: String,
    /// Its `name`, when it has one (Anthropic server tools do; OpenAI's mostly do not).
    pub name: Option<String>,
    /// `anthropic`, `openai`, or `unknown` for a type toolbudget does not know.
    pub provider: &'static str,
    /// A tool search tool: what lets a model load deferred tools.
    pub search: bool,
    /// What the entry adds to a request, when the provider documents it or it was measured.
    pub cost: Option<HostedCost>,
    /// Its own `defer_loading` (an Anthropic `mcp_toolset` may carry one).
    pub defer_loading: Option<bool>,
    pub origin: Origin,
}

impl HostedTool {
    /// `name (type)`, or the type alone.
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) if n != &self.kind => format!("{n} ({})", self.kind),
            _ => self.kind.clone(),
        }
    }
}

/// A hosted tool's input tokens, in the provider's own count (not a local counter's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostedCost {
    pub tokens: usize,
    /// `documented` (the provider's page states it), `measured` (billed counts) or `fitted`
    /// (derived from billed counts of requests that hold more than the tool).
    pub basis: &'static str,
    pub source: &'static str,
}

/// The public harness behind the measured tool-search figures (billed input tokens).
const HARNESS: &str = "andyjmorgan/tool-search-testing (MIT) @ f2f833e, WRITEUP.md; \
                       ../shared/data/provider-counts/acme-series.json";

/// Which provider knows this `type`, whether it is a search tool, and its cost.
fn classify(kind: &str) -> (&'static str, bool, Option<HostedCost>) {
    let measured = |tokens, source| {
        Some(HostedCost {
            tokens,
            basis: "measured",
            source,
        })
    };
    let fitted = |tokens, source| {
        Some(HostedCost {
            tokens,
            basis: "fitted",
            source,
        })
    };
    let documented = |tokens, source| {
        Some(HostedCost {
            tokens,
            basis: "documented",
            source,
        })
    };
    // Anthropic's server tools are versioned by a date suffix.
    if kind.starts_with("tool_search_tool_bm25") {
        // 21 or 3 tools all deferred behind BM25 search: 765 billed against 80 for the
        // prompt alone (claude-sonnet-4-6); the same figure simulate's profiles use.
        return ("anthropic", true, measured(685, HARNESS));
    }
    if kind.starts_with("tool_search_tool_regex") {
        // As above, behind regex search: 790 against 80.
        return ("anthropic", true, measured(710, HARNESS));
    }
    if kind.starts_with("bash_2") {
        return (
            "anthropic",
            false,
            documented(
                245,
                "https://docs.claude.com/en/docs/agents-and-tools/tool-use/bash-tool (245 input tokens)",
            ),
        );
    }
    if kind.starts_with("text_editor_2") {
        return (
            "anthropic",
            false,
            documented(
                700,
                "https://docs.claude.com/en/docs/agents-and-tools/tool-use/text-editor-tool (700 input tokens)",
            ),
        );
    }
    const ANTHROPIC: &[&str] = &[
        "web_search_2",
        "web_fetch_2",
        "code_execution_2",
        "computer_2",
        "memory_2",
        "mcp_toolset",
    ];
    if ANTHROPIC.iter().any(|p| kind.starts_with(p)) {
        return ("anthropic", false, None);
    }
    if kind == "tool_search" {
        // Its own section in the tools block, fitted (the text is not published): one
        // namespace of deferred functions behind tool_search on gpt-5.4 billed 475, the prompt
        // alone 76, the namespace's own surface 45 and the tools header 2; the same figure as
        // simulate's `OPENAI_TOOL_SEARCH_SECTION`, checked on the harness's other points.
        return ("openai", true, fitted(352, HARNESS));
    }
    const OPENAI: &[&str] = &[
        "web_search",
        "web_search_preview",
        "web_search_preview_2025_03_11",
        "file_search",
        "code_interpreter",
        "computer_use_preview",
        "computer_use",
        "image_generation",
        "mcp",
        "local_shell",
        "shell",
        "apply_patch",
    ];
    if OPENAI.contains(&kind) {
        return ("openai", false, None);
    }
    ("unknown", false, None)
}

/// Builds the hosted entry of a `type` that is not a function.
pub(super) fn hosted(
    kind: &str,
    name: Option<String>,
    defer_loading: Option<bool>,
    origin: Origin,
) -> HostedTool {
    let (provider, search, cost) = classify(kind);
    HostedTool {
        kind: kind.to_string(),
        name,
        provider,
        search,
        cost,
        defer_loading,
        origin,
    }
}

/// Whether an entry's `type` makes it hosted: anything but a function (OpenAI's `function`,
/// Anthropic's optional `custom`) or an OpenAI `namespace` of functions.
pub(super) fn is_hosted_type(kind: &str) -> bool {
    !matches!(kind, "function" | "custom" | "namespace")
}

/// Which API a captured request body was written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyShape {
    AnthropicMessages,
    OpenAiChat,
    OpenAiResponses,
    /// Nothing in it tells (e.g. an empty `tools` array beside `messages`).
    Unknown,
}

impl BodyShape {
    /// The stable key written in json.
    pub fn key(self) -> &'static str {
        match self {
            BodyShape::AnthropicMessages => "anthropic-messages",
            BodyShape::OpenAiChat => "openai-chat-completions",
            BodyShape::OpenAiResponses => "openai-responses",
            BodyShape::Unknown => "unknown",
        }
    }

    /// Words for a sentence.
    pub fn title(self) -> &'static str {
        match self {
            BodyShape::AnthropicMessages => "Anthropic Messages",
            BodyShape::OpenAiChat => "OpenAI Chat Completions",
            BodyShape::OpenAiResponses => "OpenAI Responses",
            BodyShape::Unknown => "API",
        }
    }
}

/// A request body loaded as a catalog: what it was and what of it was not the catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestBody {
    pub shape: BodyShape,
    /// Its `model`, when a string.
    pub model: Option<String>,
    /// The top-level keys beside `model` and `tools`, in source order.
    pub ignored: Vec<String>,
}

/// What a catalog file held beyond ordinary tools: the request body it was, its hosted
/// entries. Only files with either are recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Captured {
    pub path: PathBuf,
    pub body: Option<RequestBody>,
    pub hosted: Vec<HostedTool>,
}

impl Captured {
    /// The one stderr line a command prints for this file, `None` when nothing was ignored
    /// or set apart.
    pub fn note(&self) -> Option<String> {
        let file = self.path.display();
        let hosted = if self.hosted.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = self.hosted.iter().map(HostedTool::label).collect();
            format!(
                "; hosted tools set apart from the catalog: {}",
                names.join(", ")
            )
        };
        match &self.body {
            Some(b) => {
                let model = b
                    .model
                    .as_deref()
                    .map_or(String::new(), |m| format!(" for {m}"));
                let ignored = if b.ignored.is_empty() {
                    "nothing else".to_string()
                } else {
                    b.ignored.join(", ")
                };
                Some(format!(
                    "{file}: a captured {} request body{model}: its tools array is the catalog; ignored: {ignored}{hosted}",
                    b.shape.title()
                ))
            }
            None if !self.hosted.is_empty() => Some(format!("{file}: {}", &hosted[2..])),
            None => None,
        }
    }
}

/// `anthropic`, `openai` or `unknown`: who runs a hosted `type`.
pub(super) fn provider_of(kind: &str) -> &'static str {
    classify(kind).0
}
