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

/// Each tool's `line:column`, the file read once.
#[derive(Default)]
struct Locator {
    docs: HashMap<PathBuf, Option<Document>>,
}

impl Locator {
    /// The tool's file and the position of `sub` inside it (the first of `subs` found), else
    /// of the tool itself.
    fn place(
        &mut self,
        tool: &Tool,
        subs: &[Vec<Seg>],
    ) -> (Option<String>, Option<(usize, usize)>) {
        let Some(origin) = &tool.origin else {
            return (None, None);
        };
        let doc = self
            .docs
            .entry(origin.path.clone())
            .or_insert_with(|| Document::read(&origin.path).ok());
        let file = Some(origin.path.display().to_string());
        let Some(doc) = doc else { return (file, None) };
        // `locate` answers with the deepest ancestor of a missing path: try only paths that exist.
        for sub in subs {
            let mut at = origin.at.clone();
            at.extend(sub.iter().cloned());
            if exists(&doc.value, &at)
                && let Some(p) = doc.locate(&at)
            {
                return (file, Some((p.line, p.column)));
            }
        }
        (file, doc.locate(&origin.at).map(|p| (p.line, p.column)))
    }
}

fn exists(value: &serde_json::Value, path: &[Seg]) -> bool {
    let mut v = value;
    for seg in path {
        let next = match seg {
            Seg::Key(k) => v.get(k.as_str()),
            Seg::Index(i) => v.get(*i),
        };
        match next {
            Some(n) => v = n,
            None => return false,
        }
    }
    true
}

struct FindingBuilder<'a> {
    id: &'a str,
    level: Level,
    tool: Option<&'a Tool>,
    subject: Option<String>,
    client: Option<String>,
    message: String,
    subs: Vec<Vec<Seg>>,
}

impl FindingBuilder<'_> {
    fn build(self, locator: &mut Locator) -> Finding {
        let (file, at) = match self.tool {
            Some(t) => locator.place(t, &self.subs),
            None => (None, None),
        };
        Finding {
            level: self.level,
            id: self.id.to_string(),
            tool: self.tool.map(|t| t.id.clone()),
            subject: self.subject,
            client: self.client,
            file,
            line: at.map(|a| a.0),
            column: at.map(|a| a.1),
            message: self.message,
        }
    }
}

fn finding<'a>(
    id: &'a str,
    level: Level,
    tool: Option<&'a Tool>,
    message: String,
) -> FindingBuilder<'a> {
    FindingBuilder {
        id,
        level,
        tool,
        subject: None,
        client: None,
        message,
        subs: Vec::new(),
    }
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// Where a parameter's schema may sit under a tool, in each catalog form.
fn parameter_paths(param: &str) -> Vec<Vec<Seg>> {
    let p = |pre: &[&str]| {
        let mut v: Vec<Seg> = pre.iter().map(|k| key(k)).collect();
        v.push(key("properties"));
        v.push(key(param));
        v
    };
    vec![
        p(&["inputSchema"]),
        p(&["input_schema"]),
        p(&["parameters"]),
        p(&["function", "parameters"]),
    ]
}

fn description_paths() -> Vec<Vec<Seg>> {
    vec![
        vec![key("description")],
        vec![key("function"), key("description")],
    ]
}

/// Which tools a client defers: the simulator's rule (the search tool never; a tool's own
/// flag, then its server's, then the client's default for MCP tools and built-ins), and
/// nothing when the client does not defer at this size.
fn deferred_tools(catalog: &Catalog, client: CheckClient) -> Vec<bool> {
    let settings = profile(client.client).settings();
    let defers = match settings.when {
        When::Always | When::Auto(_) => true,
        When::Never => false,
        When::Over(n) => catalog.len() > n,
    };
    let search_tool = catalog.search_tool();
    catalog
        .tools()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if !defers || Some(i) == search_tool {
                return false;
            }
            let server = t.server.as_ref().and_then(|s| {
                catalog
                    .servers()
                    .iter()
                    .find(|i| &i.name == s)
                    .and_then(|i| i.flags.defer())
            });
            t.defer().or(server).unwrap_or(if t.is_mcp() {
                settings.defer_mcp
            } else {
                settings.defer_all_builtins
            })
        })
        .collect()
}

/// The content words of `text` in order: lowercase, at least one letter, no stopwords.
fn content_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    text::words(text, Camel::Off, &mut words);
    words
        .into_iter()
        .filter(|w| w.chars().any(char::is_alphabetic) && !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// Up to the first `.`, `!` or `?` followed by whitespace (or the end), or the first line break.
fn first_sentence(description: &str) -> &str {
    let d = description.trim_start();
    let line = d.split('\n').next().unwrap_or("");
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace) {
            return &line[..i];
        }
    }
    line
}

/// The description query's words.
pub fn description_query_words(description: &str) -> Vec<String> {
    let mut w = content_words(first_sentence(description));
    w.truncate(DESCRIPTION_WORDS);
    w
}

/// The forms a client sends for `tool`: (form, query).
fn forms(tool: &Tool, kind: ScorerKind) -> Vec<(&'static str, String)> {
    let words: Vec<String> = text::name_words(&tool.name)
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    let description = description_query_words(&tool.description);
    let mut out = Vec::new();
    if kind == ScorerKind::Regex {
        let join = |w: &[String]| {
            w.iter()
                .map(|x| regex::escape(x))
                .collect::<Vec<_>>()
                .join(".*")
        };
        out.push(("name", regex::escape(&tool.name)));
        out.push(("words", join(&words)));
        if !description.is_empty() {
            let n = description.len().min(REGEX_DESCRIPTION_WORDS);
            out.push(("description", join(&description[..n])));
        }
    } else {
        out.push(("name", tool.name.clone()));
        out.push(("words", words.join(" ")));
        if !description.is_empty() {
            out.push(("description", description.join(" ")));
        }
    }
    if kind == ScorerKind::Keyword {
        out.push(("select", format!("select:{}", tool.id)));
    }
    out
}

fn search(scorer: &dyn Scorer, query: &str, candidates: &[bool], limit: usize) -> Result<Vec<Hit>> {
    let request = SearchRequest {
        query,
        limit,
        candidates: Some(candidates),
        id: None,
    };
    match scorer.search(&request) {
        Ok(o) => {
            let mut hits = o.hits;
            hits.truncate(limit);
            Ok(hits)
        }
        // A query the scorer refuses (too long a pattern) finds nothing.
        Err(SearchError::Refused(_)) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// Tokens of each top-level parameter's schema as compact JSON.
fn parameter_costs(catalog: &Catalog, counter: CounterKind) -> Vec<ParameterCost> {
    let tokenizer = counter.tokenizer();
    let mut out = Vec::new();
    for t in catalog.tools() {
        if let Some(props) = t.input_schema.get("properties").and_then(|p| p.as_object()) {
            for (name, schema) in props {
                let text = format!("{}:{}", serde_json::Value::String(name.clone()), schema);
                out.push(ParameterCost {
                    tool: t.id.clone(),
                    parameter: name.clone(),
                    tokens: tokenizer.count(&text),
                });
            }
        }
    }
    out.sort_by(|a, b| {
        b.tokens
            .cmp(&a.tokens)
            .then_with(|| a.tool.cmp(&b.tool))
            .then_with(|| a.parameter.cmp(&b.parameter))
    });
    out.truncate(COSTLIEST);
    out
}

fn distinguishing(a: &str, b: &str) -> Vec<String> {
    let theirs: BTreeSet<String> = content_words(b).iter().map(|w| stem_plural(w)).collect();
    let mut seen = BTreeSet::new();
    content_words(a)
        .into_iter()
        .filter(|w| {
            let s = stem_plural(w);
            !theirs.contains(&s) && seen.insert(s)
        })
        .take(DISTINGUISHING_WORDS)
        .collect()
}

/// A name with case and punctuation gone (`Create-Issue` and `create_issue` collide).
fn folded_name(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[allow(clippy::too_many_lines)] // one pass per section, read top to bottom
fn analyze(
    catalog: &Arc<Catalog>,
    queries: Option<&QuerySet>,
    options: &CheckOptions,
    locator: &mut Locator,
) -> Result<CatalogReport> {
    if let Some(c) = options.counter.filter(|c| !c.is_local()) {
        return Err(Error::usage(format!(
            "--counter {c} counts through Anthropic's API; check counts locally: use \
             anthropic-estimate"
        )));
    }
    let tools = catalog.tools();
    let mut findings: Vec<Finding> = Vec::new();
    let primary = options.counter.unwrap_or_else(|| {
        options
            .clients
            .first()
            .map_or(CounterKind::O200kJson, |c| c.counter())
    });
    let mut counts: HashMap<CounterKind, Vec<usize>> = HashMap::new();
    let mut counts_of = |k: CounterKind| -> Vec<usize> {
        counts
            .entry(k)
            .or_insert_with(|| k.tools(catalog).counts().to_vec())
            .clone()
    };
    let primary_counts = counts_of(primary);

    // Cost.
    let mut tool_costs: Vec<ToolCost> = tools
        .iter()
        .zip(&primary_counts)
        .map(|(t, &n)| ToolCost {
            id: t.id.clone(),
            tokens: n,
        })
        .collect();
    let total_tokens: usize = primary_counts.iter().sum();
    let mut costliest = tool_costs.clone();
    costliest.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.id.cmp(&b.id)));
    costliest.truncate(COSTLIEST);
    tool_costs.sort_by(|a, b| a.id.cmp(&b.id));
    if let Some(max) = options.max_tokens
        && total_tokens > max
    {
        let mut f = finding(
            "over-budget",
            Level::Error,
            None,
            format!(
                "the whole catalog costs {total_tokens} tokens ({primary}), over --max-tokens {max}"
            ),
        );
        f.subject = Some("catalog".into());
        findings.push(f.build(locator));
    }
    if let Some(max) = options.max_tool_tokens {
        for (t, &n) in tools.iter().zip(&primary_counts) {
            if n > max {
                let mut f = finding(
                    "over-budget",
                    Level::Error,
                    Some(t),
                    format!(
                        "{} costs {n} tokens ({primary}), over --max-tool-tokens {max}",
                        t.id
                    ),
                );
                f.subject = Some("tool".into());
                findings.push(f.build(locator));
            }
        }
    }

    // Descriptions and names.
    for t in tools {
        let d = t.description.trim();
        let words = d.split_whitespace().count();
        let desc = |id: &'static str, level: Level, message: String| {
            let mut f = finding(id, level, Some(t), message);
            f.subs = description_paths();
            f
        };
        if d.is_empty() {
            findings.push(
                desc(
                    "no-description",
                    Level::Error,
                    format!(
                        "{} has no description: no search can match its purpose",
                        t.id
                    ),
                )
                .build(locator),
            );
        } else if words < SHORT_DESCRIPTION_WORDS {
            findings.push(
                desc(
                    "short-description",
                    Level::Warning,
                    format!(
                        "{}'s description has {words} words (fewer than {SHORT_DESCRIPTION_WORDS}): little for a search to match",
                        t.id
                    ),
                )
                .build(locator),
            );
        } else if d.chars().count() > LONG_DESCRIPTION_CHARS {
            findings.push(
                desc(
                    "long-description",
                    Level::Warning,
                    format!(
                        "{}'s description has {} characters (over {LONG_DESCRIPTION_CHARS}; clients may cut it)",
                        t.id,
                        d.chars().count()
                    ),
                )
                .build(locator),
            );
        }
        if let Some(props) = t.input_schema.get("properties").and_then(|p| p.as_object()) {
            for (name, schema) in props {
                // A `$ref` parameter is described where it points.
                let has = schema.get("$ref").is_some()
                    || schema
                        .get("description")
                        .and_then(|d| d.as_str())
                        .is_some_and(|d| !d.trim().is_empty());
                if !has {
                    let mut f = finding(
                        "param-no-description",
                        Level::Warning,
                        Some(t),
                        format!("{}: parameter {name:?} has no description", t.id),
                    );
                    f.subject = Some(name.clone());
                    f.subs = parameter_paths(name);
                    findings.push(f.build(locator));
                }
            }
        }
    }
    let mut by_folded: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, t) in tools.iter().enumerate() {
        by_folded.entry(folded_name(&t.id)).or_default().push(i);
    }
    for group in by_folded.values().filter(|g| g.len() > 1) {
        for &i in group {
            let others: Vec<&str> = group
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| tools[j].id.as_str())
                .collect();
            let mut f = finding(
                "name-collision",
                Level::Error,
                Some(&tools[i]),
                format!(
                    "{} differs from {} only in case or punctuation: select: and a model's \
                     spelling cannot tell them apart",
                    tools[i].id,
                    others.join(", ")
                ),
            );
            f.subject = Some(others.join(","));
            findings.push(f.build(locator));
        }
    }

    // Near-duplicates across servers.
    let search_tool = catalog.search_tool();
    let siblings = Siblings::find(catalog, |i| Some(i) != search_tool);
    let mut near_duplicates: Vec<Vec<String>> = siblings
        .clusters()
        .iter()
        .map(|c| {
            let mut ids: Vec<String> = c.iter().map(|&i| tools[i].id.clone()).collect();
            ids.sort();
            ids
        })
        .collect();
    near_duplicates.sort();
    for cluster in &near_duplicates {
        let first = catalog.index_of(&cluster[0]).map(|i| &tools[i]);
        let mut f = finding(
            "near-duplicate",
            Level::Note,
            first,
            format!(
                "near-duplicates across servers (same name parts, alike descriptions): {}",
                cluster.join(", ")
            ),
        );
        f.subject = Some(cluster[1..].join(","));
        findings.push(f.build(locator));
    }

    // Reachability, confusable pairs and queries, per client.
    let mut scorers: HashMap<ScorerKind, Box<dyn Scorer>> = HashMap::new();
    let mut pairs: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
    let mut clients = Vec::new();
    let mut query_reports = Vec::new();
    for &client in &options.clients {
        let prof = profile(client.client);
        let kind = client.scorer();
        if let std::collections::hash_map::Entry::Vacant(e) = scorers.entry(kind) {
            e.insert(crate::search::build_spec(
                &ScorerSpec::Builtin(kind),
                catalog.clone(),
                &ScorerConfig::default(),
            )?);
        }
        let scorer = scorers[&kind].as_ref();
        let limit = prof.max_results.value;
        let counter = options.counter.unwrap_or_else(|| client.counter());
        let client_counts = counts_of(counter);
        let deferred = deferred_tools(catalog, client);
        let deferred_ids: Vec<usize> = (0..tools.len()).filter(|&i| deferred[i]).collect();
        let loaded_ids: Vec<usize> = (0..tools.len()).filter(|&i| !deferred[i]).collect();
        let search_tool_tokens = if deferred_ids.is_empty() || search_tool.is_some() {
            0
        } else {
            counter.tool(&crate::simulate::default_search_tool())
        };
        let loaded_tokens =
            loaded_ids.iter().map(|&i| client_counts[i]).sum::<usize>() + search_tool_tokens;
        let deferred_tokens = deferred_ids.iter().map(|&i| client_counts[i]).sum();
        let mut listing_tokens = BTreeMap::new();
        for mode in [
            Listing::Names,
            Listing::Descriptions,
            Listing::Servers,
            Listing::Stubs,
            Listing::None,
        ] {
            let n = match mode {
                Listing::None => 0,
                Listing::Stubs => deferred_ids.iter().map(|&i| counter.stub(&tools[i])).sum(),
                _ => {
                    let text = crate::simulate::listing::full_text(catalog, &deferred_ids, mode);
                    if text.is_empty() {
                        0
                    } else {
                        counter.text(&text)
                    }
                }
            };
            listing_tokens.insert(mode.name().to_string(), n);
        }
        let client_name = client.to_string();
        if let Some(max) = options.max_tokens
            && loaded_tokens > max
        {
            let mut f = finding(
                "over-budget",
                Level::Error,
                None,
                format!(
                    "{client_name}'s always-loaded set costs {loaded_tokens} tokens ({counter}), \
                     over --max-tokens {max}"
                ),
            );
            f.subject = Some("always-loaded".into());
            f.client = Some(client_name.clone());
            findings.push(f.build(locator));
        }
        let mut reach = Vec::new();
        let (mut unreachable, mut hard) = (0, 0);
        for &i in &deferred_ids {
            let t = &tools[i];
            let mut results = Vec::new();
            for (form, query) in forms(t, kind) {
                let hits = if query.trim().is_empty() {
                    Vec::new()
                } else {
                    search(scorer, &query, &deferred, limit)?
                };
                let rank = hits.iter().position(|h| h.tool == i).map(|r| r + 1);
                let first = hits.first().filter(|h| h.tool != i).map(|h| h.tool);
                if let Some(w) = first
                    && matches!(form, "words" | "description")
                {
                    pairs
                        .entry((i, w))
                        .or_default()
                        .insert(format!("{client_name}/{form}"));
                }
                results.push(FormResult {
                    form: form.to_string(),
                    query,
                    rank,
                    first: first.map(|w| tools[w].id.clone()),
                });
            }
            let found = results.iter().filter(|r| r.rank.is_some()).count();
            let missed: Vec<&str> = results
                .iter()
                .filter(|r| r.rank.is_none())
                .map(|r| r.form.as_str())
                .collect();
            if found == 0 {
                unreachable += 1;
                let mut f = finding(
                    "unreachable",
                    Level::Error,
                    Some(t),
                    format!(
                        "{client_name} defers {} and its {kind} search finds it by none of: {} \
                         (top {limit})",
                        t.id,
                        missed.join(", ")
                    ),
                );
                f.client = Some(client_name.clone());
                findings.push(f.build(locator));
            } else if found < results.len() {
                hard += 1;
                let mut f = finding(
                    "hard-to-find",
                    Level::Warning,
                    Some(t),
                    format!(
                        "{client_name} defers {} and its {kind} search misses it by: {} (top {limit})",
                        t.id,
                        missed.join(", ")
                    ),
                );
                f.client = Some(client_name.clone());
                findings.push(f.build(locator));
            }
            reach.push(Reachability {
                id: t.id.clone(),
                found,
                forms: results.len(),
                results,
            });
        }
        reach.sort_by(|a, b| a.id.cmp(&b.id));
        if let Some(set) = queries {
            query_reports.push(run_queries(
                set,
                catalog,
                scorer,
                &deferred,
                limit,
                &client_name,
                &mut findings,
            )?);
        }
        let ids = |v: &[usize]| {
            let mut s: Vec<String> = v.iter().map(|&i| tools[i].id.clone()).collect();
            s.sort();
            s
        };
        clients.push(ClientReport {
            client: client_name,
            title: prof.title.to_string(),
            scorer: kind.name().to_string(),
            max_results: limit,
            counter: counter.name().to_string(),
            listing: prof.listing.value.name().to_string(),
            loaded: ids(&loaded_ids),
            deferred: ids(&deferred_ids),
            loaded_tokens,
            search_tool_tokens,
            deferred_tokens,
            listing_tokens,
            unreachable,
            hard_to_find: hard,
            tools: reach,
        });
    }

    let mut confusable = Vec::new();
    for ((i, w), seen) in pairs {
        let (a, b) = (&tools[i], &tools[w]);
        let pair = ConfusablePair {
            intended: a.id.clone(),
            winner: b.id.clone(),
            seen: seen.into_iter().collect(),
            intended_words: distinguishing(&a.description, &b.description),
            winner_words: distinguishing(&b.description, &a.description),
        };
        let mut f = finding(
            "confusable",
            Level::Warning,
            Some(a),
            format!(
                "{} ranks first for {}'s own query ({}); words only {} has: {}; only {} has: {}",
                b.id,
                a.id,
                pair.seen.join(", "),
                a.id,
                words_or_none(&pair.intended_words),
                b.id,
                words_or_none(&pair.winner_words),
            ),
        );
        f.subject = Some(b.id.clone());
        findings.push(f.build(locator));
        confusable.push(pair);
    }
    confusable.sort_by(|a, b| (&a.intended, &a.winner).cmp(&(&b.intended, &b.winner)));
    findings.sort();
    Ok(CatalogReport {
        tool_count: tools.len(),
        clients,
        cost: Cost {
            counter: primary.name().to_string(),
            total_tokens,
            tools: tool_costs,
            costliest,
            costliest_parameters: parameter_costs(catalog, primary),
        },
        confusable,
        near_duplicates,
        queries: queries.map(|_| query_reports),
        findings,
    })
}

fn words_or_none(w: &[String]) -> String {
    if w.is_empty() {
        "(none)".into()
    } else {
        w.join(" ")
    }
}

fn run_queries(
    set: &QuerySet,
    catalog: &Catalog,
    scorer: &dyn Scorer,
    deferred: &[bool],
    limit: usize,
    client: &str,
    findings: &mut Vec<Finding>,
) -> Result<QueryReport> {
    let path = set.path.display().to_string();
    let place = |q: &crate::eval::queries::LabeledQuery| (Some(path.clone()), Some(q.position));
    let mut per_tool: BTreeMap<usize, (usize, usize, Vec<&str>)> = BTreeMap::new();
    let mut first_miss: BTreeMap<usize, Option<crate::error::Position>> = BTreeMap::new();
    let (mut no_match, mut fp, mut tn) = (0, 0, 0);
    let mut recalls = Vec::new();
    for q in &set.queries {
        let hits = if deferred.iter().any(|&d| d) {
            search(scorer, &q.query, deferred, limit)?
        } else {
            Vec::new()
        };
        if q.expected_tools.is_empty() {
            no_match += 1;
            if let Some(h) = hits.first() {
                fp += 1;
                let (file, at) = place(q);
                findings.push(Finding {
                    level: Level::Warning,
                    id: "false-positive".into(),
                    tool: Some(catalog.get(h.tool).id.clone()),
                    subject: Some(q.id.clone()),
                    client: Some(client.to_string()),
                    file,
                    line: at.map(|p| p.line),
                    column: at.map(|p| p.column),
                    message: format!(
                        "query {} expects no tool, and {client}'s search returns {} first (score {})",
                        q.id,
                        catalog.get(h.tool).id,
                        crate::number::round(h.score, 3)
                    ),
                });
            } else {
                tn += 1;
            }
            continue;
        }
        let mut found = 0;
        for &e in &q.expected_tools {
            let entry = per_tool.entry(e).or_insert((0, 0, Vec::new()));
            entry.0 += 1;
            if !deferred[e] || hits.iter().any(|h| h.tool == e) {
                entry.1 += 1;
                found += 1;
            } else {
                entry.2.push(&q.id);
                first_miss.entry(e).or_insert(Some(q.position));
            }
        }
        recalls.push(found as f64 / q.expected_tools.len() as f64);
    }
    for (&e, (_, _, missed)) in &per_tool {
        if missed.is_empty() {
            continue;
        }
        let at = first_miss.get(&e).copied().flatten();
        findings.push(Finding {
            level: Level::Warning,
            id: "query-miss".into(),
            tool: Some(catalog.get(e).id.clone()),
            subject: Some(missed.join(",")),
            client: Some(client.to_string()),
            file: Some(path.clone()),
            line: at.map(|p| p.line),
            column: at.map(|p| p.column),
            message: format!(
                "{client}'s search misses {} within {limit} for {}",
                catalog.get(e).id,
                missed.join(", ")
            ),
        });
    }
    let rows = per_tool
        .into_iter()
        .map(|(e, (n, found, _))| ToolRecall {
            id: catalog.get(e).id.clone(),
            queries: n,
            found,
            recall: crate::number::round(found as f64 / n as f64, 3),
        })
        .collect();
    let mut rows: Vec<ToolRecall> = rows;
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(QueryReport {
        client: client.to_string(),
        k: limit,
        queries: set.queries.len(),
        recall: (!recalls.is_empty())
            .then(|| crate::number::round(recalls.iter().sum::<f64>() / recalls.len() as f64, 3)),
        per_tool: rows,
        no_match,
        false_positives: fp,
        true_negatives: tn,
    })
}

/// The queries whose expected tools all exist in `catalog`, indexed into it.
fn remap_queries(set: &QuerySet, catalog: &Catalog) -> QuerySet {
    let queries = set
        .queries
        .iter()
        .filter_map(|q| {
            let tools: Option<Vec<usize>> =
                q.expected.iter().map(|id| catalog.index_of(id)).collect();
            tools.map(|expected_tools| crate::eval::queries::LabeledQuery {
                expected_tools,
                ..q.clone()
            })
        })
        .collect();
    QuerySet {
        path: set.path.clone(),
        queries,
    }
}

/// How well a form set found a tool: forms found (more is better), then the sum of ranks with
/// a miss counted `max_results + 1` (less is better).
fn standing(r: &Reachability, limit: usize) -> (usize, usize) {
    (
        r.found,
        r.results.iter().map(|f| f.rank.unwrap_or(limit + 1)).sum(),
    )
}

fn describe(r: &Reachability) -> String {
    r.results
        .iter()
        .map(|f| match f.rank {
            Some(n) => format!("{} #{n}", f.form),
            None => format!("{} -", f.form),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn diff(
    before: &CatalogReport,
    after: &CatalogReport,
    catalog: &Catalog,
    locator: &mut Locator,
) -> (CheckDiff, Vec<Finding>) {
    let old: BTreeMap<&str, usize> = before
        .cost
        .tools
        .iter()
        .map(|t| (t.id.as_str(), t.tokens))
        .collect();
    let new: BTreeMap<&str, usize> = after
        .cost
        .tools
        .iter()
        .map(|t| (t.id.as_str(), t.tokens))
        .collect();
    let tools_added: Vec<String> = new
        .keys()
        .filter(|k| !old.contains_key(*k))
        .map(|k| (*k).to_string())
        .collect();
    let tools_removed: Vec<String> = old
        .keys()
        .filter(|k| !new.contains_key(*k))
        .map(|k| (*k).to_string())
        .collect();
    let delta = |a: Option<usize>, b: Option<usize>| b.unwrap_or(0) as i64 - a.unwrap_or(0) as i64;
    let mut tokens = vec![TokenDelta {
        what: "catalog".into(),
        counter: after.cost.counter.clone(),
        before: Some(before.cost.total_tokens),
        after: Some(after.cost.total_tokens),
        delta: delta(
            Some(before.cost.total_tokens),
            Some(after.cost.total_tokens),
        ),
    }];
    for c in &after.clients {
        let Some(b) = before.clients.iter().find(|b| b.client == c.client) else {
            continue;
        };
        tokens.push(TokenDelta {
            what: format!("{} always-loaded", c.client),
            counter: c.counter.clone(),
            before: Some(b.loaded_tokens),
            after: Some(c.loaded_tokens),
            delta: delta(Some(b.loaded_tokens), Some(c.loaded_tokens)),
        });
        let (lb, la) = (
            b.listing_tokens.get(&c.listing),
            c.listing_tokens.get(&c.listing),
        );
        tokens.push(TokenDelta {
            what: format!("{} deferred list ({})", c.client, c.listing),
            counter: c.counter.clone(),
            before: lb.copied(),
            after: la.copied(),
            delta: delta(lb.copied(), la.copied()),
        });
    }
    let ids: BTreeSet<&str> = old.keys().chain(new.keys()).copied().collect();
    for id in ids {
        let (b, a) = (old.get(id).copied(), new.get(id).copied());
        if b != a {
            tokens.push(TokenDelta {
                what: id.to_string(),
                counter: after.cost.counter.clone(),
                before: b,
                after: a,
                delta: delta(b, a),
            });
        }
    }
    let mut findability = Vec::new();
    let mut extra = Vec::new();
    for c in &after.clients {
        let Some(b) = before.clients.iter().find(|b| b.client == c.client) else {
            continue;
        };
        for r in &c.tools {
            let Some(old) = b.tools.iter().find(|o| o.id == r.id) else {
                continue;
            };
            let (sa, sb) = (standing(r, c.max_results), standing(old, b.max_results));
            let harder = sa.0 < sb.0 || (sa.0 == sb.0 && sa.1 > sb.1);
            let easier = sa.0 > sb.0 || (sa.0 == sb.0 && sa.1 < sb.1);
            if !harder && !easier {
                continue;
            }
            let row = FindDelta {
                client: c.client.clone(),
                tool: r.id.clone(),
                change: if harder { "harder" } else { "easier" }.into(),
                before: describe(old),
                after: describe(r),
            };
            if harder && let Some(i) = catalog.index_of(&r.id) {
                let mut f = finding(
                    "harder-to-find",
                    Level::Warning,
                    Some(catalog.get(i)),
                    format!(
                        "{} is harder to find under {} than in the baseline: {} (was {})",
                        r.id, c.client, row.after, row.before
                    ),
                );
                f.client = Some(c.client.clone());
                f.subs = description_paths();
                extra.push(f.build(locator));
            }
            findability.push(row);
        }
    }
    let pair_key = |p: &ConfusablePair| (p.intended.clone(), p.winner.clone());
    let old_pairs: BTreeSet<_> = before.confusable.iter().map(pair_key).collect();
    let new_pairs: BTreeSet<_> = after.confusable.iter().map(pair_key).collect();
    let old_keys: BTreeSet<_> = before.findings.iter().map(Finding::key).collect();
    let new_keys: BTreeSet<_> = after.findings.iter().map(Finding::key).collect();
    (
        CheckDiff {
            tool_count: before.tool_count,
            tools_added,
            tools_removed,
            tokens,
            findability,
            new_confusable: after
                .confusable
                .iter()
                .filter(|p| !old_pairs.contains(&pair_key(p)))
                .cloned()
                .collect(),
            resolved_confusable: before
                .confusable
                .iter()
                .filter(|p| !new_pairs.contains(&pair_key(p)))
                .cloned()
                .collect(),
            new_findings: after
                .findings
                .iter()
                .filter(|f| !old_keys.contains(&f.key()))
                .cloned()
                .collect(),
            fixed_findings: before
                .findings
                .iter()
                .filter(|f| !new_keys.contains(&f.key()))
                .cloned()
                .collect(),
        },
        extra,
    )
}

/// The findings that carry a file, for annotations.
pub fn located(findings: &[Finding]) -> impl Iterator<Item = &Finding> {
    findings.iter().filter(|f| f.file.is_some())
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
