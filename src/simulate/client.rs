//! Client profiles: each agent's or provider's deferral policy as data, every value with where
//! it comes from. A profile is the set of defaults a scenario's `client: NAME` gives its
//! `deferred:` settings (the scenario's own keys win); `simulate --client A,B` replays one
//! conversation under several profiles side by side (`experiment::clients`).
//!
//! A profile maps onto the simulator's existing settings (`DeferredSettings`): when deferral
//! starts (`when`), what stays eager (`defer_mcp`, built-ins), how the rest is listed
//! (`listing`), the search (`scorer`, `max_results`), what a load does to the prompt cache
//! (`reveal`), what survives compaction and resume, and whether calls go through a bridge tool.
//! Behaviours no setting models are kept as `notes` (each with its source) and printed.

use serde::{Deserialize, Serialize};

use super::scenario::{DeferredSettings, Listing, Reveal, When};
use crate::search::{ScorerKind, ScorerSpec};

/// Where a value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Source {
    /// A public page, pull request or issue that states it.
    Documented {
        title: &'static str,
        url: &'static str,
    },
    /// One of the articles in `../shared/seeds/`, by file name.
    Seed { file: &'static str },
    /// Not stated anywhere we found: the reason for the value chosen.
    Assumed { why: &'static str },
}

impl Source {
    /// "documented", "seed" or "assumed".
    pub fn kind(self) -> &'static str {
        match self {
            Source::Documented { .. } => "documented",
            Source::Seed { .. } => "seed",
            Source::Assumed { .. } => "assumed",
        }
    }

    /// One line: the kind and the title/URL, file or reason.
    pub fn cite(self) -> String {
        match self {
            Source::Documented { title, url } => format!("documented: {title} <{url}>"),
            Source::Seed { file } => format!("seed: ../shared/seeds/{file}"),
            Source::Assumed { why } => format!("assumed: {why}"),
        }
    }
}

/// A value of a profile and its source.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

const fn s<T>(value: T, source: Source) -> Sourced<T> {
    Sourced { value, source }
}

/// The clients a scenario's `client:` or `simulate --client` may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientName {
    ClaudeCode,
    ClaudeAgentSdk,
    AnthropicApi,
    Openai,
    Codex,
    QwenCode,
    CopilotCli,
    Openrouter,
    /// No deferral: every tool sent eagerly.
    None,
}

crate::named_enum!(ClientName, "client");

/// Which built-ins the client defers by itself (a catalog tool's own `should_defer`, and the
/// scenario's `defer_builtins`/`always_load`, still decide first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Builtins {
    /// Only those the catalog or the scenario marks.
    Marked,
    /// Every built-in (the scenario's `always_load` keeps some: Qwen Code's `tools.eager`).
    All,
}

/// One client's deferral policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientProfile {
    pub name: ClientName,
    pub title: &'static str,
    /// When the client defers at all (`never`, `always`, `auto:N`% of the window, `over:N` tools).
    pub when: Sourced<When>,
    /// MCP tools deferred by default.
    pub defer_mcp: Sourced<bool>,
    pub builtins: Sourced<Builtins>,
    /// How the deferred tools are shown to the model.
    pub listing: Sourced<Listing>,
    /// The search tool's name as the model calls it.
    pub search_tool: Sourced<&'static str>,
    /// What the search tool costs: toolbudget's ToolSearch definition counted like any tool,
    /// or under a provider counter the provider's measured tool search (see
    /// `simulate::search_tool`); a bridge adds a `tool_call` definition.
    pub search_tool_cost: Sourced<&'static str>,
    /// A `tool_call` bridge: deferred tools are called through it, so a load never joins the
    /// tools list.
    pub call_bridge: Sourced<bool>,
    pub scorer: Sourced<ScorerKind>,
    /// Tools a search returns and loads at most.
    pub max_results: Sourced<usize>,
    /// Where a loaded definition goes: appended to the conversation (the cached prefix
    /// survives) or into the tools list (the cache is rewritten from there).
    pub reveal: Sourced<Reveal>,
    /// Loaded tools survive a compaction (a `compact` event that does not say).
    pub compact_keeps_loaded: Sourced<bool>,
    /// Tools used before a resume are loaded again from the transcript, without a search.
    pub resume_rediscovers: Sourced<bool>,
    /// Behaviours no setting models, each with its source.
    pub notes: Vec<Sourced<&'static str>>,
}

// Sources, written once.
const CC_MCP: Source = Source::Documented {
    title: "Claude Code docs, Connect Claude Code to tools via MCP: Scale with MCP Tool Search",
    url: "https://code.claude.com/docs/en/mcp#scale-with-mcp-tool-search",
};
const CC_CHANGELOG: Source = Source::Documented {
    title: "Claude Code 2.1.9 changelog: auto:N syntax for the MCP tool search threshold (N = % of the window)",
    url: "https://github.com/anthropics/claude-code/blob/main/CHANGELOG.md",
};
const SDK_DEFAULT: Source = Source::Documented {
    title: "Claude Agent SDK docs, tool search: ENABLE_TOOL_SEARCH (shared with Claude Code) is always on by default",
    url: "https://platform.claude.com/docs/en/agent-sdk/tool-search",
};
const SEED_QWEN_ANALYSIS: Source = Source::Seed {
    file: "000_ec13d81ba7fbdafe.txt",
};
const SEED_ESSAY: Source = Source::Seed {
    file: "001_75f803c74b4de374.txt",
};
const SDK: Source = Source::Documented {
    title: "Claude Agent SDK docs, Scale to many tools with tool search",
    url: "https://platform.claude.com/docs/en/agent-sdk/tool-search",
};
const API: Source = Source::Documented {
    title: "Claude API docs, Tool search tool",
    url: "https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool",
};
const OPENAI: Source = Source::Documented {
    title: "OpenAI API docs, Tool search",
    url: "https://developers.openai.com/api/docs/guides/tools-tool-search",
};
const CODEX: Source = Source::Documented {
    title: "openai/codex codex-rs/core/src/mcp_tool_exposure.rs and tools/handlers/tool_search_spec.rs (as cited in vm0-ai/vm0 issue #32513)",
    url: "https://github.com/openai/codex/blob/d6489472f3c15e87d2d7763a5fde033545c530f8/codex-rs/core/src/mcp_tool_exposure.rs",
};
const CODEX_BM25: Source = Source::Documented {
    title: "openai/codex issue #11821, MCP tool discovery (the bm25 tool search)",
    url: "https://github.com/openai/codex/issues/11821",
};
const QWEN_3589: Source = Source::Documented {
    title: "QwenLM/qwen-code PR #3589, ToolSearch for on-demand loading of deferred tool schemas",
    url: "https://github.com/QwenLM/qwen-code/pull/3589",
};
const QWEN_4022: Source = Source::Documented {
    title: "QwenLM/qwen-code PR #4022, defer low-frequency built-in tools",
    url: "https://github.com/QwenLM/qwen-code/pull/4022",
};
const QWEN_10410: Source = Source::Documented {
    title: "QwenLM/qwen-code PR #10410, preserve prompt cache for deferred tools (tools.eager, tool_call)",
    url: "https://github.com/QwenLM/qwen-code/pull/10410",
};
const COPILOT: Source = Source::Documented {
    title: "GitHub Docs, Copilot CLI: Load tools on demand with tool search",
    url: "https://docs.github.com/en/copilot/concepts/agents/copilot-cli/tool-search",
};
const COPILOT_4588: Source = Source::Documented {
    title: "github/copilot-cli issues #4588 and #4649, tool search per model family",
    url: "https://github.com/github/copilot-cli/issues/4588",
};
const OPENROUTER: Source = Source::Documented {
    title: "OpenRouter docs, Server tools: Tool search",
    url: "https://openrouter.ai/docs/guides/features/server-tools/tool-search",
};
const OPENROUTER_SDK: Source = Source::Documented {
    title: "OpenRouter SDK docs, DeferredToolsControl (example search: bm25, max_results 5; router-built search and call wrappers)",
    url: "https://openrouter.ai/docs/client-sdks/typescript/models/deferredtoolscontrol",
};
const TOOLBUDGET_SEARCH: Source = Source::Assumed {
    why: "no published definition: toolbudget's ToolSearch definition, counted by the scenario's counter",
};
const PROVIDER_SEARCH: &str =
    "the provider's measured tool search under its counter, else ToolSearch counted";
const TOOLSEARCH: &str = "ToolSearch counted";
const NO_COMPACTION_WORD: Source = Source::Assumed {
    why: "the docs say nothing about compaction: loaded tools kept, as a conversation's own history would keep them",
};
const NO_RESUME_WORD: Source = Source::Assumed {
    why: "the docs say nothing about resume: the transcript's tools loaded again, as Claude Code does",
};

const SEARCH_5: Source = Source::Assumed {
    why: "no number published: 5, toolbudget's default",
};

/// Every profile, in the order they print.
pub fn profiles() -> Vec<ClientProfile> {
    ClientName::all().iter().map(|&c| profile(c)).collect()
}

/// The profile of one client.
pub fn profile(name: ClientName) -> ClientProfile {
    match name {
        ClientName::ClaudeCode => claude_code(name),
        ClientName::ClaudeAgentSdk => claude_agent_sdk(name),
        ClientName::AnthropicApi => anthropic_api(name),
        ClientName::Openai => openai(name),
        ClientName::Codex => codex(name),
        ClientName::QwenCode => qwen_code(name),
        ClientName::CopilotCli => copilot_cli(name),
        ClientName::Openrouter => openrouter(name),
        ClientName::None => none(name),
    }
}

fn claude_code(name: ClientName) -> ClientProfile {
    ClientProfile {
        name,
        title: "Claude Code (ToolSearch)",
        when: s(When::Always, SDK_DEFAULT),
        defer_mcp: s(true, CC_MCP),
        builtins: s(Builtins::Marked, SEED_QWEN_ANALYSIS),
        listing: s(Listing::Names, SEED_QWEN_ANALYSIS),
        search_tool: s("ToolSearch", SEED_QWEN_ANALYSIS),
        search_tool_cost: s(TOOLSEARCH, TOOLBUDGET_SEARCH),
        call_bridge: s(false, SEED_QWEN_ANALYSIS),
        scorer: s(ScorerKind::Keyword, SEED_QWEN_ANALYSIS),
        max_results: s(5, SEED_QWEN_ANALYSIS),
        reveal: s(Reveal::Append, API),
        compact_keeps_loaded: s(true, SEED_QWEN_ANALYSIS),
        resume_rediscovers: s(true, SEED_QWEN_ANALYSIS),
        notes: vec![
            s(
                "ENABLE_TOOL_SEARCH=auto:N defers only above N% of the window (deferred.when: auto:N)",
                CC_CHANGELOG,
            ),
            s(
                "the deferred list can be sent as deltas (deferred.list_style: delta)",
                SEED_ESSAY,
            ),
        ],
    }
}

fn claude_agent_sdk(name: ClientName) -> ClientProfile {
    ClientProfile {
        name,
        title: "Claude Agent SDK",
        when: s(When::Always, SDK),
        defer_mcp: s(true, SDK),
        builtins: s(Builtins::Marked, SDK),
        listing: s(
            Listing::Names,
            Source::Assumed {
                why: "the docs say \"a summary of available tools\"; the SDK runs Claude Code's loop, which lists names",
            },
        ),
        search_tool: s("ToolSearch", SDK),
        search_tool_cost: s(TOOLSEARCH, TOOLBUDGET_SEARCH),
        call_bridge: s(false, SDK),
        scorer: s(
            ScorerKind::Keyword,
            Source::Assumed {
                why: "not stated; the SDK runs Claude Code's ToolSearch",
            },
        ),
        max_results: s(5, SDK),
        reveal: s(Reveal::Append, SDK),
        compact_keeps_loaded: s(false, SDK),
        resume_rediscovers: s(
            true,
            Source::Assumed {
                why: "not stated; as Claude Code",
            },
        ),
        notes: vec![
            s(
                "searches load the 3-5 most relevant tools, which stay for later turns (max_results 5)",
                SDK,
            ),
            s(
                "with fewer than ~10 tools loading everything upfront is typically faster",
                SDK,
            ),
        ],
    }
}

fn anthropic_api(name: ClientName) -> ClientProfile {
    ClientProfile {
        name,
        title: "Anthropic API (tool search tool, defer_loading)",
        when: s(When::Always, API),
        defer_mcp: s(true, API),
        builtins: s(
            Builtins::All,
            Source::Assumed {
                why: "the caller marks tools with defer_loading; every tool but the scenario's always_load is assumed marked",
            },
        ),
        listing: s(Listing::None, API),
        search_tool: s("tool_search_tool_bm25", API),
        search_tool_cost: s(PROVIDER_SEARCH, API),
        call_bridge: s(false, API),
        scorer: s(ScorerKind::Bm25, API),
        max_results: s(5, API),
        reveal: s(Reveal::Append, API),
        compact_keeps_loaded: s(true, NO_COMPACTION_WORD),
        resume_rediscovers: s(
            true,
            Source::Assumed {
                why: "a resumed request replays its tool_reference blocks, which expand again",
            },
        ),
        notes: vec![
            s(
                "the regex variant (tool_search_tool_regex) is deferred.scorer: regex; the model writes a regex",
                API,
            ),
            s(
                "a search returns 3-5 tool_reference blocks, expanded inline",
                API,
            ),
        ],
    }
}

fn openai(name: ClientName) -> ClientProfile {
    ClientProfile {
        name,
        title: "OpenAI Responses API (tool_search, flat deferred functions)",
        when: s(When::Always, OPENAI),
        defer_mcp: s(true, OPENAI),
        builtins: s(
            Builtins::All,
            Source::Assumed {
                why: "the caller marks functions with defer_loading; every tool but the scenario's always_load is assumed marked",
            },
        ),
        listing: s(Listing::Stubs, OPENAI),
        search_tool: s("tool_search", OPENAI),
        search_tool_cost: s(
            "under an openai counter, tool_search's own section (352 tokens, fitted on the public harness's namespace of 21: 475 billed) beside each deferred function's name and description; else ToolSearch counted",
            Source::Assumed {
                why: "the section's text is not published: fitted on andyjmorgan/tool-search-testing's namespace count, checked on its 3-tool namespace and flat counts",
            },
        ),
        call_bridge: s(false, OPENAI),
        scorer: s(
            ScorerKind::Bm25,
            Source::Assumed {
                why: "the hosted search's ranking is not published; bm25 stands for it",
            },
        ),
        max_results: s(
            4,
            Source::Assumed {
                why: "fitted, not published: OpenAI's model loads what it chooses; 4 tools per search reproduces the one published live run (andyjmorgan/tool-search-testing, WRITEUP.md: the namespace run's first request 843 against 475 without the search)",
            },
        ),
        reveal: s(Reveal::Append, OPENAI),
        compact_keeps_loaded: s(true, NO_COMPACTION_WORD),
        resume_rediscovers: s(true, NO_RESUME_WORD),
        notes: vec![
            s(
                "a deferred function still shows its name and description; only its parameters are deferred (listing: stubs)",
                OPENAI,
            ),
            s(
                "a deferred namespace or MCP server shows only its name and description (listing: servers, the codex profile)",
                OPENAI,
            ),
            s(
                "a loaded top-level function is a namespace of its own (function_call.namespace is its name): its surface is a harmony namespace section holding no functions",
                OPENAI,
            ),
            s(
                "a hosted search runs inside the response that makes it: the prompt is billed once, plus the search call and the loaded definitions (the harness's namespace run: 475, then 843 and 943)",
                OPENAI,
            ),
            s("only gpt-5.4 and later support tool_search", OPENAI),
        ],
    }
}

fn codex(name: ClientName) -> ClientProfile {
    ClientProfile {
        name,
        title: "Codex CLI (MCP servers as namespaces)",
        when: s(When::Always, CODEX),
        defer_mcp: s(true, CODEX),
        builtins: s(Builtins::Marked, CODEX),
        listing: s(Listing::Servers, CODEX),
        search_tool: s("tool_search", CODEX),
        search_tool_cost: s(PROVIDER_SEARCH, OPENAI),
        call_bridge: s(false, CODEX),
        scorer: s(ScorerKind::Bm25, CODEX_BM25),
        max_results: s(5, SEARCH_5),
        reveal: s(Reveal::Append, OPENAI),
        compact_keeps_loaded: s(true, NO_COMPACTION_WORD),
        resume_rediscovers: s(true, NO_RESUME_WORD),
        notes: vec![s(
            "MCP tools are deferred only when the model supports search and the provider namespaces; otherwise they are sent directly",
            CODEX,
        )],
    }
}

fn qwen_code(name: ClientName) -> ClientProfile {
    ClientProfile {
        name,
        title: "Qwen Code (tool_search + tool_call bridge)",
        when: s(When::Always, QWEN_3589),
        defer_mcp: s(true, QWEN_3589),
        builtins: s(Builtins::Marked, QWEN_4022),
        listing: s(Listing::Names, QWEN_3589),
        search_tool: s("tool_search", QWEN_10410),
        search_tool_cost: s(
            "ToolSearch counted, plus a tool_call definition",
            TOOLBUDGET_SEARCH,
        ),
        call_bridge: s(true, QWEN_10410),
        scorer: s(ScorerKind::Keyword, SEED_QWEN_ANALYSIS),
        max_results: s(5, SEARCH_5),
        reveal: s(Reveal::Append, QWEN_10410),
        compact_keeps_loaded: s(true, SEED_QWEN_ANALYSIS),
        resume_rediscovers: s(true, QWEN_3589),
        notes: vec![
            s(
                "tools.eager: an allowlist of built-ins kept eager, every other built-in deferred (defer_builtins: ['*'] with always_load)",
                QWEN_10410,
            ),
            s(
                "some providers opt out automatically; deferred tools are then unreachable (not modeled)",
                Source::Assumed {
                    why: "from the issue text (#27); no public page found",
                },
            ),
            s(
                "revealDeferredToolsReferencedInHistory: a resumed session reveals the tools its history used",
                QWEN_3589,
            ),
        ],
    }
}

fn copilot_cli(name: ClientName) -> ClientProfile {
    ClientProfile {
        name,
        title: "GitHub Copilot CLI",
        when: s(When::Over(30), COPILOT),
        defer_mcp: s(true, COPILOT),
        builtins: s(Builtins::Marked, COPILOT),
        listing: s(Listing::Descriptions, COPILOT),
        search_tool: s(
            "tool_search",
            Source::Assumed {
                why: "the tool's name is not documented",
            },
        ),
        search_tool_cost: s(TOOLSEARCH, TOOLBUDGET_SEARCH),
        call_bridge: s(false, COPILOT),
        scorer: s(
            ScorerKind::Bm25,
            Source::Assumed {
                why: "the ranking is not documented",
            },
        ),
        max_results: s(5, SEARCH_5),
        reveal: s(
            Reveal::Append,
            Source::Assumed {
                why: "not documented; loaded tools stay for the rest of the conversation",
            },
        ),
        compact_keeps_loaded: s(true, COPILOT),
        resume_rediscovers: s(true, NO_RESUME_WORD),
        notes: vec![
            s(
                "deferTools: \"never\" on an MCP server keeps its tools eager (deferred.always_load_servers)",
                COPILOT,
            ),
            s(
                "the threshold is re-checked at every prompt; the simulator decides once per agent",
                COPILOT,
            ),
            s(
                "active only for supported model families (Claude, GPT-5.4+); reported off on others",
                COPILOT_4588,
            ),
        ],
    }
}

fn openrouter(name: ClientName) -> ClientProfile {
    ClientProfile {
        name,
        title: "OpenRouter (openrouter:tool_search)",
        when: s(When::Always, OPENROUTER),
        defer_mcp: s(true, OPENROUTER),
        builtins: s(
            Builtins::All,
            Source::Assumed {
                why: "defer_loading works on any tool; every tool but the scenario's always_load is assumed marked",
            },
        ),
        listing: s(Listing::None, OPENROUTER),
        search_tool: s("openrouter:tool_search", OPENROUTER),
        search_tool_cost: s(TOOLSEARCH, TOOLBUDGET_SEARCH),
        call_bridge: s(true, OPENROUTER_SDK),
        scorer: s(ScorerKind::Bm25, OPENROUTER_SDK),
        max_results: s(5, OPENROUTER_SDK),
        reveal: s(Reveal::Append, OPENROUTER_SDK),
        compact_keeps_loaded: s(true, NO_COMPACTION_WORD),
        resume_rediscovers: s(true, NO_RESUME_WORD),
        notes: vec![s(
            "works on any model and provider; a deferred tool cannot be seen or called until a search returns it",
            OPENROUTER,
        )],
    }
}

fn none(name: ClientName) -> ClientProfile {
    ClientProfile {
        name,
        title: "No deferral (every tool eager)",
        when: s(
            When::Never,
            Source::Assumed {
                why: "the baseline: nothing deferred",
            },
        ),
        defer_mcp: s(false, BASELINE),
        builtins: s(Builtins::Marked, BASELINE),
        listing: s(Listing::Names, BASELINE),
        search_tool: s("ToolSearch", BASELINE),
        search_tool_cost: s("none (never sent)", BASELINE),
        call_bridge: s(false, BASELINE),
        scorer: s(ScorerKind::Keyword, BASELINE),
        max_results: s(5, BASELINE),
        reveal: s(Reveal::Append, BASELINE),
        compact_keeps_loaded: s(true, BASELINE),
        resume_rediscovers: s(true, BASELINE),
        notes: vec![],
    }
}

const BASELINE: Source = Source::Assumed {
    why: "unused: nothing is deferred",
};

impl ClientProfile {
    /// The deferred settings this profile gives a scenario that writes no `deferred:` key.
    pub fn settings(&self) -> DeferredSettings {
        let d = DeferredSettings::default();
        DeferredSettings {
            when: self.when.value,
            defer_mcp: self.defer_mcp.value,
            defer_all_builtins: self.builtins.value == Builtins::All,
            scorer: ScorerSpec::Builtin(self.scorer.value),
            max_results: self.max_results.value,
            listing: self.listing.value,
            reveal: self.reveal.value,
            compact_keeps_loaded: self.compact_keeps_loaded.value,
            resume_rediscovers: self.resume_rediscovers.value,
            call_bridge: self.call_bridge.value,
            search_tool_name: Some(self.search_tool.value.to_string()),
            ..d
        }
    }

    /// Every sourced field as (setting, value, source), in the order docs/reference/client-profiles.md
    /// lists each source's values.
    pub fn rows(&self) -> Vec<(&'static str, String, Source)> {
        let mut v = vec![
            ("when", self.when.value.to_string(), self.when.source),
            (
                "defer_mcp",
                self.defer_mcp.value.to_string(),
                self.defer_mcp.source,
            ),
            (
                "built-ins deferred",
                match self.builtins.value {
                    Builtins::Marked => "those marked".to_string(),
                    Builtins::All => "all".to_string(),
                },
                self.builtins.source,
            ),
            (
                "listing",
                self.listing.value.to_string(),
                self.listing.source,
            ),
            (
                "search tool",
                self.search_tool.value.to_string(),
                self.search_tool.source,
            ),
            (
                "search tool cost",
                self.search_tool_cost.value.to_string(),
                self.search_tool_cost.source,
            ),
            (
                "call bridge",
                self.call_bridge.value.to_string(),
                self.call_bridge.source,
            ),
            ("scorer", self.scorer.value.to_string(), self.scorer.source),
            (
                "max_results",
                self.max_results.value.to_string(),
                self.max_results.source,
            ),
            ("reveal", self.reveal.value.to_string(), self.reveal.source),
            (
                "compaction keeps loaded tools",
                self.compact_keeps_loaded.value.to_string(),
                self.compact_keeps_loaded.source,
            ),
            (
                "resume reloads used tools",
                self.resume_rediscovers.value.to_string(),
                self.resume_rediscovers.source,
            ),
        ];
        v.extend(
            self.notes
                .iter()
                .map(|n| ("note", n.value.to_string(), n.source)),
        );
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_has_a_profile_named_as_written() {
        for c in ClientName::all() {
            let p = profile(*c);
            assert_eq!(p.name, *c);
            assert_eq!(c.name().parse::<ClientName>().unwrap(), *c);
        }
        assert_eq!(profiles().len(), 9);
        assert_eq!(
            ClientName::all()
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>(),
            [
                "claude-code",
                "claude-agent-sdk",
                "anthropic-api",
                "openai",
                "codex",
                "qwen-code",
                "copilot-cli",
                "openrouter",
                "none"
            ]
        );
    }

    #[test]
    fn every_value_names_a_source() {
        for p in profiles() {
            for (what, value, source) in p.rows() {
                let text = source.cite();
                assert!(
                    text.len() > "assumed: ".len() + 5,
                    "{}: {what} = {value}: {text}",
                    p.name
                );
                if let Source::Documented { url, .. } = source {
                    assert!(url.starts_with("https://"), "{}: {what}: {url}", p.name);
                }
            }
        }
    }

    #[test]
    fn profiles_map_onto_settings() {
        let copilot = profile(ClientName::CopilotCli).settings();
        assert_eq!(copilot.when, When::Over(30));
        assert_eq!(copilot.listing, Listing::Descriptions);
        let sdk = profile(ClientName::ClaudeAgentSdk).settings();
        assert!(!sdk.compact_keeps_loaded);
        let qwen = profile(ClientName::QwenCode).settings();
        assert!(qwen.call_bridge);
        assert_eq!(qwen.search_tool_name.as_deref(), Some("tool_search"));
        let none = profile(ClientName::None).settings();
        assert_eq!(none.when, When::Never);
        let openai = profile(ClientName::Openai).settings();
        assert_eq!(openai.listing, Listing::Stubs);
        assert!(openai.defer_all_builtins);
        assert_eq!(
            profile(ClientName::Codex).settings().listing,
            Listing::Servers
        );
    }
}
