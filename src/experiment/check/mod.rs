//! `check`: a catalog as its author sees it under each client profile. Which tools a client
//! keeps loaded and which it defers; whether each deferred tool is found by what a model would
//! plausibly send (its name, its name's words, words of its description, `select:`); which
//! tools win another's own queries; what everything costs; what is wrong with descriptions;
//! with labeled queries, recall per tool and false positives; against a baseline, the
//! difference. Every finding has a stable id and a level ([`CheckResult`]).
//!
//! The queries a model is assumed to send for a deferred tool T (no model runs):
//! - `name`: T's own name (the bare name of an MCP tool);
//! - `words`: T's name split on `_`, `-`, `.` and lower-to-upper case changes, lowercased;
//! - `description`: the first [`DESCRIPTION_WORDS`] content words (not stopwords, with a
//!   letter) of T's description's first sentence (up to `.`, `!` or `?` before a space, or a
//!   line break);
//! - `select`: `select:ID`, only for a client whose search is the keyword scorer (Claude
//!   Code's ToolSearch syntax); the other searches have no such form.
//!
//! A regex client sends each form as a pattern: the words escaped and joined by `.*`, the
//! description form cut to its first [`REGEX_DESCRIPTION_WORDS`] words. A form finds T when
//! the client's search over its deferred tools returns T within its `max_results`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, Tool};
use crate::counter::CounterKind;
use crate::document::{Document, Seg};
use crate::error::{Error, Result};
use crate::eval::queries::QuerySet;
use crate::eval::siblings::Siblings;
use crate::search::text::{self, Camel, STOPWORDS, stem_plural};
use crate::search::{
    Hit, Scorer, ScorerConfig, ScorerKind, ScorerSpec, SearchError, SearchRequest,
};
use crate::simulate::client::{ClientName, profile};
use crate::simulate::scenario::{Listing, When};

mod locate;
pub use locate::*;

mod forms;
pub use forms::*;

mod analyze;
use analyze::*;

mod diff;
use diff::*;

/// Content words of the description query.
pub const DESCRIPTION_WORDS: usize = 8;
/// Content words of a regex client's description pattern.
pub const REGEX_DESCRIPTION_WORDS: usize = 3;
/// A description with fewer words is `short-description`.
pub const SHORT_DESCRIPTION_WORDS: usize = 5;
/// A description longer than this many characters is `long-description` (Claude Code cuts
/// MCP tool descriptions at 2,048 characters).
pub const LONG_DESCRIPTION_CHARS: usize = 2048;
/// Costliest tools and parameters listed.
pub const COSTLIEST: usize = 10;
/// Distinguishing words shown per side of a confusable pair.
pub const DISTINGUISHING_WORDS: usize = 8;

/// How serious a finding is. `--fail-on warning` fails on errors and warnings; notes never fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }

    /// Whether a finding of this level reaches `fail_on`.
    pub fn reaches(self, fail_on: Level) -> bool {
        self <= fail_on
    }
}

/// A client profile under check, optionally with another search (`anthropic-api:regex`, the
/// Anthropic API's regex tool search).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CheckClient {
    pub client: ClientName,
    pub scorer: Option<ScorerKind>,
}

impl CheckClient {
    /// claude-code, the Anthropic API's bm25 and regex tool search, OpenAI's tool_search.
    pub fn defaults() -> Vec<CheckClient> {
        vec![
            CheckClient {
                client: ClientName::ClaudeCode,
                scorer: None,
            },
            CheckClient {
                client: ClientName::AnthropicApi,
                scorer: None,
            },
            CheckClient {
                client: ClientName::AnthropicApi,
                scorer: Some(ScorerKind::Regex),
            },
            CheckClient {
                client: ClientName::Openai,
                scorer: None,
            },
        ]
    }

    pub fn scorer(self) -> ScorerKind {
        self.scorer.unwrap_or(profile(self.client).scorer.value)
    }

    /// The counter a client's requests are counted with when `--counter` names none.
    pub fn counter(self) -> CounterKind {
        match self.client {
            ClientName::ClaudeCode | ClientName::ClaudeAgentSdk | ClientName::AnthropicApi => {
                CounterKind::AnthropicEstimate
            }
            ClientName::Openai | ClientName::Codex => CounterKind::OpenaiResponses,
            _ => CounterKind::O200kJson,
        }
    }
}

impl std::fmt::Display for CheckClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.scorer {
            Some(s) => write!(f, "{}:{s}", self.client),
            None => write!(f, "{}", self.client),
        }
    }
}

impl std::str::FromStr for CheckClient {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let (name, scorer) = match s.split_once(':') {
            Some((n, sc)) => (n, Some(sc.parse::<ScorerKind>()?)),
            None => (s, None),
        };
        Ok(CheckClient {
            client: name.parse()?,
            scorer,
        })
    }
}

#[derive(Debug, Clone)]
pub struct CheckOptions {
    pub clients: Vec<CheckClient>,
    /// One counter for every client; `None`: each client's own ([`CheckClient::counter`]).
    pub counter: Option<CounterKind>,
    pub max_tokens: Option<usize>,
    pub max_tool_tokens: Option<usize>,
    pub fail_on: Option<Level>,
}

/// The whole result of one `check` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub verdict: Verdict,
    /// How the queries of the reachability check are made.
    pub rules: Vec<String>,
    #[serde(flatten)]
    pub report: CatalogReport,
    /// Every finding, errors first, then by id, tool, client.
    pub findings: Vec<Finding>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub baseline: Option<CheckDiff>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub passed: bool,
    pub errors: usize,
    pub warnings: usize,
    pub notes: usize,
    pub fail_on: Option<Level>,
    /// Findings that fail the check (with a baseline: only those the baseline does not have;
    /// an exceeded budget always fails).
    pub failing: usize,
    pub budget_exceeded: bool,
}

/// What one catalog gives under every client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogReport {
    pub tool_count: usize,
    pub clients: Vec<ClientReport>,
    pub cost: Cost,
    pub confusable: Vec<ConfusablePair>,
    /// Clusters of near-duplicate tools across servers (`eval::siblings`), ids ascending.
    pub near_duplicates: Vec<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub queries: Option<Vec<QueryReport>>,
    /// Findings of this catalog alone (the result's `findings` adds the baseline's).
    #[serde(skip)]
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientReport {
    pub client: String,
    pub title: String,
    pub scorer: String,
    pub max_results: usize,
    pub counter: String,
    pub listing: String,
    pub loaded: Vec<String>,
    pub deferred: Vec<String>,
    /// The always-loaded set: the loaded tools, plus the search tool when anything is deferred.
    pub loaded_tokens: usize,
    pub search_tool_tokens: usize,
    /// The deferred tools' full definitions (what eager loading would add).
    pub deferred_tokens: usize,
    /// The deferred list in each listing mode (`none` costs nothing; `stubs` counts OpenAI's
    /// flat stubs).
    pub listing_tokens: BTreeMap<String, usize>,
    pub unreachable: usize,
    pub hard_to_find: usize,
    /// Every deferred tool and what each query form gave.
    pub tools: Vec<Reachability>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reachability {
    pub id: String,
    /// Forms that found the tool, of those that apply.
    pub found: usize,
    pub forms: usize,
    pub results: Vec<FormResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormResult {
    /// `name`, `words`, `description` or `select`.
    pub form: String,
    pub query: String,
    /// 1-based rank among the client's results; `None`: not returned.
    pub rank: Option<usize>,
    /// The first result when it is another tool.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub first: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub counter: String,
    pub total_tokens: usize,
    pub tools: Vec<ToolCost>,
    /// The costliest tools, most first (ties by id).
    pub costliest: Vec<ToolCost>,
    /// The costliest top-level parameters: their schema as compact JSON, counted with the
    /// counter's tokenizer.
    pub costliest_parameters: Vec<ParameterCost>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCost {
    pub id: String,
    pub tokens: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParameterCost {
    pub tool: String,
    pub parameter: String,
    pub tokens: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfusablePair {
    /// The tool whose own query was asked.
    pub intended: String,
    /// The tool ranked first instead.
    pub winner: String,
    /// Where it happened: `client/form` (`claude-code/description`).
    pub seen: Vec<String>,
    /// Content words of the intended tool's description the winner's lacks.
    pub intended_words: Vec<String>,
    /// Content words of the winner's description the intended tool's lacks.
    pub winner_words: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryReport {
    pub client: String,
    /// The client's `max_results`: recall counts expected tools within it.
    pub k: usize,
    pub queries: usize,
    /// Mean over queries with expected tools of the share found.
    pub recall: Option<f64>,
    pub per_tool: Vec<ToolRecall>,
    /// Queries with `expected: []`.
    pub no_match: usize,
    /// No-match queries the search answered with any tool (every built-in scorer returns only
    /// tools scoring above 0, so any result is a selection).
    pub false_positives: usize,
    /// No-match queries answered with nothing.
    pub true_negatives: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRecall {
    pub id: String,
    pub queries: usize,
    pub found: usize,
    pub recall: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Finding {
    pub level: Level,
    /// Stable: `unreachable`, `hard-to-find`, `confusable`, `near-duplicate`,
    /// `no-description`, `short-description`, `long-description`, `param-no-description`,
    /// `name-collision`, `over-budget`, `query-miss`, `false-positive`, `harder-to-find`.
    pub id: String,
    pub tool: Option<String>,
    /// The second thing a finding is about: a parameter, the other tool, a query, a budget.
    pub subject: Option<String>,
    pub client: Option<String>,
    pub file: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl Finding {
    /// What identifies the finding across two versions of a catalog (not its message).
    pub fn key(&self) -> (String, Option<String>, Option<String>, Option<String>) {
        (
            self.id.clone(),
            self.tool.clone(),
            self.subject.clone(),
            self.client.clone(),
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckDiff {
    pub tool_count: usize,
    pub tools_added: Vec<String>,
    pub tools_removed: Vec<String>,
    /// Token totals and tools whose count changed, before and after.
    pub tokens: Vec<TokenDelta>,
    /// Deferred tools found by more or fewer query forms (or at other ranks).
    pub findability: Vec<FindDelta>,
    pub new_confusable: Vec<ConfusablePair>,
    pub resolved_confusable: Vec<ConfusablePair>,
    pub new_findings: Vec<Finding>,
    pub fixed_findings: Vec<Finding>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenDelta {
    /// `catalog`, `CLIENT always-loaded`, `CLIENT deferred list`, or a tool id.
    pub what: String,
    pub counter: String,
    pub before: Option<usize>,
    pub after: Option<usize>,
    pub delta: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindDelta {
    pub client: String,
    pub tool: String,
    /// `harder` or `easier`.
    pub change: String,
    pub before: String,
    pub after: String,
}

/// The rules printed with every result.
pub fn rules() -> Vec<String> {
    vec![
        "name: the tool's own name (an MCP tool's bare name)".into(),
        "words: the name split on _ - . and case changes, lowercased".into(),
        format!(
            "description: the first {DESCRIPTION_WORDS} content words (no stopwords) of the \
             description's first sentence"
        ),
        "select: select:ID, for keyword (ToolSearch) clients only".into(),
        format!(
            "regex clients: words escaped and joined by .*, description cut to \
             {REGEX_DESCRIPTION_WORDS} words"
        ),
        "found: returned within the client's max_results among its deferred tools".into(),
    ]
}

/// What `check` is asked: the catalog's files, its earlier version's, the author's queries.
#[derive(Debug, Clone)]
pub struct CheckRequest {
    pub catalog: Vec<crate::catalog::CatalogSource>,
    pub baseline: Option<Vec<crate::catalog::CatalogSource>>,
    pub queries: Option<std::path::PathBuf>,
    pub options: CheckOptions,
}

/// The one check: the catalog, its baseline and the queries loaded, then [`run`].
pub fn run_request(
    request: &CheckRequest,
    progress: &dyn crate::progress::Progress,
) -> Result<CheckResult> {
    let catalog = Arc::new(super::load_catalog(&request.catalog, progress)?);
    let baseline = match &request.baseline {
        None => None,
        Some(sources) => Some(Arc::new(super::load_catalog(sources, progress)?)),
    };
    let queries = match &request.queries {
        Some(path) => {
            let set = crate::eval::queries::load_queries(path, &catalog)?;
            crate::eval::queries::check_work(&set, &catalog)?;
            Some(set)
        }
        None => None,
    };
    run(catalog, queries.as_ref(), baseline, &request.options)
}

/// Checks `catalog` (and, with `baseline`, the difference from it).
pub fn run(
    catalog: Arc<Catalog>,
    queries: Option<&QuerySet>,
    baseline: Option<Arc<Catalog>>,
    options: &CheckOptions,
) -> Result<CheckResult> {
    let mut locator = Locator::default();
    let head = analyze(&catalog, queries, options, &mut locator)?;
    let mut findings = head.findings.clone();
    let diff = match baseline {
        None => None,
        Some(base) => {
            let base_queries = queries.map(|q| remap_queries(q, &base));
            let before = analyze(&base, base_queries.as_ref(), options, &mut locator)?;
            let (mut d, extra) = diff(&before, &head, &catalog, &mut locator);
            findings.extend(extra.iter().cloned());
            d.new_findings.extend(extra);
            d.new_findings.sort();
            Some(d)
        }
    };
    findings.sort();
    let budget_exceeded = findings.iter().any(|f| f.id == "over-budget");
    let failing = match options.fail_on {
        None => 0,
        Some(level) => {
            let pool = diff.as_ref().map_or(&findings, |d| &d.new_findings);
            pool.iter().filter(|f| f.level.reaches(level)).count()
        }
    };
    let count = |l: Level| findings.iter().filter(|f| f.level == l).count();
    Ok(CheckResult {
        verdict: Verdict {
            passed: failing == 0 && !budget_exceeded,
            errors: count(Level::Error),
            warnings: count(Level::Warning),
            notes: count(Level::Note),
            fail_on: options.fail_on,
            failing,
            budget_exceeded,
        },
        rules: rules(),
        report: head,
        findings,
        baseline: diff,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_query_is_the_first_sentences_content_words() {
        assert_eq!(
            description_query_words(
                "Create a new issue in a GitHub repository. Needs push access."
            ),
            ["create", "new", "issue", "github", "repository"]
        );
        assert_eq!(
            description_query_words(
                "Fetch v1.2 pages from the web and return their text as markdown quickly today!"
            ),
            [
                "fetch", "v1", "pages", "web", "return", "text", "markdown", "quickly"
            ]
        );
        assert!(description_query_words("").is_empty());
    }

    #[test]
    fn names_fold_case_and_punctuation() {
        assert_eq!(
            folded_name("mcp__gh__Create-Issue"),
            folded_name("mcp__gh__create_issue")
        );
        assert_ne!(folded_name("create_issue"), folded_name("create_issues"));
    }

    #[test]
    fn clients_parse_with_a_scorer() {
        let c: CheckClient = "anthropic-api:regex".parse().unwrap();
        assert_eq!(c.scorer(), ScorerKind::Regex);
        assert_eq!(c.to_string(), "anthropic-api:regex");
        assert!("nobody".parse::<CheckClient>().is_err());
        assert!("openai:fast".parse::<CheckClient>().is_err());
    }

    #[test]
    fn levels_reach_the_fail_on_level() {
        assert!(Level::Error.reaches(Level::Warning));
        assert!(Level::Warning.reaches(Level::Warning));
        assert!(!Level::Warning.reaches(Level::Error));
        assert!(!Level::Note.reaches(Level::Warning));
    }
}
