//! Command-line types (clap derive), private to the binary. Parsed once, then converted into
//! the library's plain values by `commands::*`; nothing here does work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use toolbudget::counter::{CounterKind, ToolChoice};
use toolbudget::output::Format;
use toolbudget::search::{ScorerKind, ScorerSpec};
use toolbudget::simulate::result::SearchLatencySource;
use toolbudget::tokenize::{Render, Tokenizer};

#[derive(Debug, Parser)]
#[command(
    name = "toolbudget",
    version,
    about = "Measures what deferred tool loading buys an LLM agent: tokens, dollars, recall and latency."
)]
pub struct Cli {
    /// Hide progress bars and notes on stderr.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// A price table in the bundled file's format (genai-prices' data.json) to bill with instead
    /// of the bundled snapshot (data/prices/genai-prices.json).
    #[arg(long, global = true, value_name = "FILE")]
    pub prices: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count the tokens of every tool definition, per tool, per server and in total.
    Count(CountArgs),
    /// Rank the tools of a catalog for one query, as the agent's tool search would.
    Search(SearchArgs),
    /// Score scorers against labeled queries: recall@k, hit@k, complete@k, MRR, nDCG@10, latency.
    Eval(EvalArgs),
    /// Compare two `eval --format json` results; exit 1 when a metric drops more than allowed.
    Compare(CompareArgs),
    /// Compare two `simulate --format json` results scenario by scenario; exit 1 when the
    /// deferred whole-conversation input tokens grow more than --max-increase percent.
    Diff(DiffArgs),
    /// Replay scenarios eagerly and with deferred tool loading; compare tokens, cost, latency.
    Simulate(SimulateArgs),
    /// Run the shipped scenarios, evaluations and the scale sweep; write the Markdown report
    /// with its CSV/JSON data and SVG charts.
    Report(ReportArgs),
    /// Work with catalog files: import them from live MCP servers, or generate synthetic ones.
    Catalog(CatalogArgsGroup),
    /// Real agent sessions (Claude Code, Codex CLI): import them as scenarios and compare the
    /// simulator with what was billed.
    Session(SessionArgsGroup),
    /// Refit the anthropic-estimate counter from its public count_tokens observations.
    Calibrate(CalibrateArgs),
    /// Play scenarios against a real model endpoint, eager and deferred: accuracy against the
    /// scenarios' calls, searches, billed usage beside toolbudget's count, latency; every
    /// exchange recorded in a cassette that `--offline` replays.
    Live(LiveArgs),
    /// Check a catalog for its author: which tools each client defers and whether its search
    /// finds them, confusable pairs, token cost, description problems; with --baseline, the
    /// difference. Exit 1 when a finding reaches --fail-on or a budget is exceeded.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// Client profiles, comma separated; CLIENT:SCORER gives a client another search
    /// (anthropic-api:regex, the Anthropic API's regex tool search) [default:
    /// claude-code,anthropic-api,anthropic-api:regex,openai].
    #[arg(long, value_delimiter = ',', value_name = "CLIENT,...", value_parser = parse_check_client)]
    pub client: Vec<toolbudget::experiment::check::CheckClient>,
    /// Labeled queries (JSONL, or a YAML list): recall@k per tool; `expected: []` marks a
    /// query no tool should answer.
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
    /// The earlier version's catalog, as --catalog takes it (repeatable): the report becomes
    /// a difference from it.
    #[arg(
        long = "baseline",
        value_name = "[SERVER=]PATH",
        value_parser = clap::value_parser!(std::ffi::OsString)
    )]
    pub baseline: Vec<std::ffi::OsString>,
    /// Exit 1 when a finding of this level or worse is found (with --baseline: one the
    /// baseline does not have).
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<FailOn>,
    /// Token budget of each client's always-loaded set and of the whole catalog (exit 1 over it).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<usize>,
    /// Token budget of each tool (exit 1 over it).
    #[arg(long, value_name = "N")]
    pub max_tool_tokens: Option<usize>,
    /// One counter for every client [default: each client's provider: anthropic-estimate for
    /// Anthropic clients, openai-responses for OpenAI's, o200k-json otherwise].
    #[arg(long, value_enum, value_name = "NAME")]
    pub counter: Option<CounterKind>,
    /// Output format; github prints workflow annotations and a pull-request summary.
    #[arg(long, default_value = "table", value_enum)]
    pub format: toolbudget::view::check::CheckFormat,
    /// Write the result to this file (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `check --fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
}

fn parse_check_client(s: &str) -> Result<toolbudget::experiment::check::CheckClient, String> {
    s.parse()
}

#[derive(Debug, Args)]
pub struct LiveArgs {
    /// Scenario files (YAML or JSON); each turn's `calls` are the labels.
    #[arg(value_name = "SCENARIO", required = true)]
    pub scenarios: Vec<PathBuf>,
    /// The endpoint's request shape.
    #[arg(long, value_enum)]
    pub provider: toolbudget::live::Provider,
    /// The model name sent with every request; several, comma-separated (or the flag
    /// repeated), are each played in turn against the same endpoint and cassette and shown
    /// side by side, a row per model and mode.
    #[arg(
        long,
        required = true,
        value_delimiter = ',',
        value_name = "MODEL[,MODEL...]"
    )]
    pub model: Vec<String>,
    /// Base URL [default: the provider's own, https://api.openai.com/v1 or
    /// https://api.anthropic.com]; e.g. http://127.0.0.1:8765/v1 for a local server (which
    /// needs no key).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Where the deferred mode's searches run: toolbudget's search core (client) or the
    /// provider's own tool search (provider: anthropic, openai-responses).
    #[arg(long, value_enum, default_value = "client")]
    pub search: toolbudget::live::SearchSide,
    /// Client-side scorer (overrides every scenario's `deferred.scorer`): a built-in,
    /// exec:'CMD ARGS' or mcp:'CMD ARGS'.
    #[arg(long, value_name = "S", value_parser = parse_scorer)]
    pub scorer: Option<ScorerSpec>,
    #[command(flatten)]
    pub external: ExternalArgs,
    /// Runs of each scenario and mode.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Requests per turn at most (a turn that reaches it is counted as hitting the limit).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub max_steps: u64,
    /// max_tokens of every request.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: u32,
    /// Sampling temperature (not sent unless given).
    #[arg(long, value_name = "T", value_parser = parse_temperature)]
    pub temperature: Option<f64>,
    /// Seed sent where the API takes one (openai-chat); run r sends SEED + r.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// tool_choice of every request (overrides the scenarios'); `any` is sent as `required`
    /// to OpenAI shapes, which llama-cpp-python's server answers with HTTP 500.
    #[arg(long, value_enum)]
    pub tool_choice: Option<ToolChoice>,
    /// Counter of toolbudget's count beside the billed usage [default: the provider's:
    /// openai-chat, openai-responses, anthropic-estimate].
    #[arg(long, value_enum, value_name = "NAME")]
    pub counter: Option<CounterKind>,
    /// The cassette: every request and answer, keyed by the sha256 of the canonical request
    /// (JSON, no keys or headers, safe to commit).
    #[arg(
        long,
        default_value = ".toolbudget/live-cassette.json",
        value_name = "FILE"
    )]
    pub cassette: PathBuf,
    /// Never call the endpoint: every answer must be in the cassette.
    #[arg(long)]
    pub offline: bool,
    /// Seconds to wait for one answer.
    #[arg(long, default_value = "300", value_name = "SECS", value_parser = parse_seconds)]
    pub timeout_secs: f64,
    /// Folder for live.json, turns.csv, requests.csv, searches.csv and summary.md (`report
    /// --live` reads it); with several models, also the side by side chart and CSV.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Summary format on stdout.
    #[arg(long, default_value = "table", value_enum)]
    pub format: Format,
}

fn parse_temperature(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if (0.0..=2.0).contains(&t) => Ok(t),
        _ => Err(format!("expected a temperature from 0 to 2, got {s:?}")),
    }
}

#[derive(Debug, Args)]
pub struct SessionArgsGroup {
    #[command(subcommand)]
    pub command: SessionCommand,
}

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// Turn session logs into scenarios (one per session), fit the system prompt and the
    /// counter's scale from the bill, and print billed vs modeled input per session.
    Import(SessionImportArgs),
}

#[derive(Debug, Args)]
pub struct SessionImportArgs {
    /// Session files, or folders searched recursively for *.jsonl. None: where the agents keep
    /// them, ~/.claude/projects (each of CLAUDE_CONFIG_DIR's folders' projects/ when set) and
    /// ~/.codex/sessions (CODEX_HOME/sessions when set).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// A catalog of the tools the sessions may call, or SERVER=PATH. Repeatable. The agents'
    /// built-ins, embedded in the binary, are added for their own sessions (for Claude Code
    /// builtin:claude-code@VERSION, the tools the log's version sent; builtin:codex for Codex;
    /// the scenarios name them so) unless a catalog given defines their tools.
    #[arg(long = "catalog", short = 'c', value_name = "[SERVER=]PATH")]
    pub catalogs: Vec<String>,
    /// Only sessions active on or after this date (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE", value_parser = toolbudget::session::parse_date)]
    pub since: Option<String>,
    /// Only sessions active on or before this date (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE", value_parser = toolbudget::session::parse_date)]
    pub until: Option<String>,
    /// Only sessions of this project: its directory, the directory's last component, or its
    /// Claude Code folder under projects/.
    // Claude Code's folder names start with '-' (`-work-other`).
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub project: Option<String>,
    /// Leave tools that no catalog has out of the scenarios (default: exit 2 listing them).
    #[arg(long)]
    pub allow_unknown_tools: bool,
    /// Skip malformed lines, counting them (default: exit 2 at the first one).
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// Keep user message text in the scenarios (default: sizes and ids only).
    #[arg(long)]
    pub keep_text: bool,
    /// Folder for the scenarios, their bills (NAME.usage.json), calibration.json and the
    /// mined queries (queries.jsonl).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write the model's real search queries (ToolSearch calls, keyword and select: forms),
    /// labeled with the deferred tools it went on to call, as a query file `eval --queries`
    /// reads (JSONL {"id","query","expected","class"}).
    #[arg(long, value_name = "FILE")]
    pub queries_out: Option<PathBuf>,
    /// Summary format on stdout.
    #[arg(long, default_value = "table", value_enum)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The calibration file: observations, features and the stored fit.
    #[arg(
        long,
        default_value = "fixtures/calibration/anthropic-count-tokens.json",
        value_name = "FILE"
    )]
    pub data: PathBuf,
    /// Store the refit in the file (atomically).
    #[arg(long)]
    pub write: bool,
    /// Exit 1 when the stored fit is not what the observations give.
    #[arg(long, conflicts_with = "write")]
    pub check: bool,
    #[arg(long, default_value = "table", value_enum)]
    pub format: Format,
}

/// How the `anthropic-api` counter reaches Anthropic and where it keeps its answers.
#[derive(Debug, Args, Clone)]
pub struct ApiArgs {
    /// Cache of count_tokens answers (JSON, safe to commit); a run whose answers are all
    /// cached needs no key and no network.
    #[arg(
        long,
        default_value = ".toolbudget/anthropic-count-tokens.json",
        value_name = "FILE"
    )]
    pub api_cache: PathBuf,
    /// Never call the API: every answer must be in the cache.
    #[arg(long)]
    pub offline: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Folder the report is written to (index.md, index.html, data/, charts/).
    #[arg(long, default_value = "reports", value_name = "DIR")]
    pub out: PathBuf,
    /// The pages written beside data/ and charts/: index.md, a self-contained index.html
    /// (the same Markdown converted, charts inlined), or both.
    #[arg(long, value_enum, default_value = "both")]
    pub format: toolbudget::view::report::Pages,
    /// Also evaluate real data: DIR/queries/NAME.jsonl against DIR/catalogs/NAME.json, and
    /// count every catalog under DIR/catalogs (e.g. ../shared/data).
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// The shipped scenarios.
    #[arg(long, default_value = "scenarios", value_name = "DIR")]
    pub scenarios: PathBuf,
    /// The fixture catalogs and labeled queries.
    #[arg(long, default_value = "fixtures", value_name = "DIR")]
    pub fixtures: PathBuf,
    /// Add the section on real sessions: an import folder written by
    /// `session import --out DIR`, replayed as it ran and eager vs deferred.
    #[arg(long, value_name = "DIR")]
    pub sessions: Option<PathBuf>,
    /// Scorer of the sessions' deferred replays (repeatable; default keyword).
    #[arg(long = "session-scorer", value_name = "S", value_enum)]
    pub session_scorers: Vec<ScorerKind>,
    /// Another scorer for the evaluation section, beside the built-ins on every query set:
    /// exec:'CMD ARGS' or mcp:'CMD ARGS' (repeatable).
    #[arg(long = "scorer", value_name = "S", value_parser = parse_scorer)]
    pub scorers: Vec<ScorerSpec>,
    /// The search of the scenarios' deferred mode, replacing each scenario's own: a built-in,
    /// exec:'CMD ARGS' or mcp:'CMD ARGS'.
    #[arg(long, value_name = "S", value_parser = parse_scorer)]
    pub scenario_scorer: Option<ScorerSpec>,
    #[command(flatten)]
    pub external: ExternalArgs,
    /// Deferred-list mode of the sessions' deferred replays: names, descriptions or servers
    /// (repeatable; default names).
    #[arg(long = "session-listing", value_name = "L", value_parser = toolbudget::experiment::sessions::parse_listing)]
    pub session_listings: Vec<toolbudget::simulate::scenario::Listing>,
    /// Fitted system prompt and counter scale (calibration.json), applied to the scenarios of
    /// the same model profile and tokenizer (and to the sessions instead of their folder's).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Add the accuracy section: a folder written by `toolbudget live --out DIR`. Repeat it
    /// for several runs (models) side by side, or give a `live --model A,B` folder: one table
    /// and chart, a row per model and mode.
    #[arg(long, value_name = "DIR")]
    pub live: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Number of tools.
    #[arg(long, default_value_t = 1000)]
    pub tools: usize,
    /// Number of MCP servers the tools are spread over.
    #[arg(long, default_value_t = 20)]
    pub servers: usize,
    /// Seed of the generator: the same seed gives the same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the catalog to this file (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Options shared by every command that reads catalogs.
#[derive(Debug, Args, Clone)]
pub struct CatalogArgs {
    /// A catalog file, or SERVER=PATH to name the MCP server of a tools/list file, or an
    /// agent's built-ins embedded in the binary (builtin:claude-code, builtin:codex,
    /// builtin:claude-code@VERSION for one Claude Code version's). Repeatable.
    #[arg(
        long = "catalog",
        short = 'c',
        value_name = "[SERVER=]PATH",
        required = true,
        value_parser = clap::value_parser!(std::ffi::OsString)
    )]
    pub catalogs: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args, Clone)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, default_value = "table", value_enum)]
    pub format: Format,
    /// Write the result to this file (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CountArgs {
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// Tokenizer of the json rendering [default: o200k_base].
    #[arg(long, value_enum, conflicts_with = "counter")]
    pub tokenizer: Option<Tokenizer>,
    /// How a tool is rendered before counting [default: json].
    #[arg(long, value_enum, conflicts_with = "counter")]
    pub render: Option<Render>,
    /// Count the way a provider bills: rendering, framing and tokenizer together.
    #[arg(long, value_enum, value_name = "NAME")]
    pub counter: Option<CounterKind>,
    /// One catalog under every local counter side by side (plus anthropic-api when a key or
    /// its cache is available).
    #[arg(long, conflicts_with_all = ["counter", "tokenizer", "render"])]
    pub compare_counters: bool,
    /// Model profile whose tool-use preamble the fixed cost includes (default: the counter's
    /// reference model; none for the provider-neutral o200k-json and cl100k-json).
    #[arg(long, value_name = "PROFILE")]
    pub model: Option<String>,
    /// The request's tool_choice (the preamble depends on it).
    #[arg(long, value_enum, default_value = "auto")]
    pub tool_choice: ToolChoice,
    #[command(flatten)]
    pub api: ApiArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub embedding: EmbeddingArgs,
    /// The scorer that ranks the tools: keyword, regex, bm25, semantic, hybrid,
    /// exec:'CMD ARGS' (your own search, speaking toolbudget's protocol) or mcp:'CMD ARGS' (an
    /// MCP server's search tool).
    #[arg(long, default_value = "keyword", value_parser = parse_scorer)]
    pub scorer: ScorerSpec,
    #[command(flatten)]
    pub external: ExternalArgs,
    /// Most results shown, at least 1 (keyword: at most 20, as Claude Code's ToolSearch).
    #[arg(long, default_value_t = 5)]
    pub limit: usize,
    /// Show each match's score per term and field.
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    /// The query: keywords (`select:A,B`, `+required` for keyword), a regex, or free text.
    #[arg(allow_hyphen_values = true, value_parser = clap::value_parser!(std::ffi::OsString))]
    pub query: std::ffi::OsString,
}

// Each bool is a flag of its own (`--per-query`, `--no-latency`, ...), as clap parses them.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub embedding: EmbeddingArgs,
    /// Labeled queries: JSONL, or a JSON/YAML list of {id, query, expected} objects.
    #[arg(long, value_name = "FILE")]
    pub queries: PathBuf,
    /// Scorer to evaluate: keyword, regex, bm25, semantic, hybrid, exec:'CMD ARGS' (your own
    /// search, speaking toolbudget's protocol) or mcp:'CMD ARGS' (an MCP server's search tool);
    /// repeatable, results in this order [default without --run: keyword, bm25].
    #[arg(long = "scorer", short = 's', value_name = "S", value_parser = parse_scorer)]
    pub scorers: Vec<ScorerSpec>,
    /// Rankings from a file, evaluated beside the scorers: a TREC run, ranx-style JSON
    /// {qid: {tool_id: score}} or JSONL {"id", "results"}; NAME= names it (default: the TREC
    /// tag, else the scorer of JSONL lines, else the file stem). Repeatable.
    #[arg(long = "run", value_name = "[NAME=]FILE")]
    pub runs: Vec<String>,
    /// How tied scores of a run are ordered: by tool id ascending (toolbudget's rule for every
    /// scorer) or trec (descending, as trec_eval does).
    #[arg(long, value_enum, default_value = "id")]
    pub run_ties: toolbudget::eval::runfile::TieBreak,
    /// A run's (or an MCP search's) tool ids that the catalog lacks count as not relevant
    /// instead of failing.
    #[arg(long)]
    pub allow_unknown_tools: bool,
    /// Also write every scorer's ranking of every query (to the depth) as a JSONL run file,
    /// which `--run` reads back to the same metrics.
    #[arg(long, value_name = "FILE")]
    pub write_run: Option<PathBuf>,
    #[command(flatten)]
    pub external: ExternalArgs,
    /// Cutoffs for recall@k, hit@k and complete@k.
    #[arg(long, value_delimiter = ',', default_value = "1,3,5,10")]
    pub k: Vec<usize>,
    /// Results requested per query [default: max(largest k, 10)]; MRR is MRR@depth.
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
    /// Add a row per query: expected ids, their ranks, the top results, the metrics.
    #[arg(long)]
    pub per_query: bool,
    /// Rank the expected tools among distractors too: a catalog file, or a folder whose .json,
    /// .yaml and .yml files are all read. Repeatable. On an id clash the first definition wins
    /// (the --catalog tools, then the pool in path order); files given as --catalog are skipped.
    #[arg(long, value_name = "DIR|FILE")]
    pub pool: Vec<PathBuf>,
    /// Print the refusal curve: score thresholds against false positives on no-match queries
    /// and recall on the others.
    #[arg(long)]
    pub thresholds: bool,
    /// Measure no search latency (none is reported): the semantic and hybrid scorers then share
    /// one embedding of each query, kept in the embedding cache for the next run. For recall
    /// checks such as `just check-scoring`; rankings are the same as without it.
    #[arg(long)]
    pub no_latency: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The reference `eval --format json` output.
    #[arg(value_name = "BASELINE.json")]
    pub baseline: PathBuf,
    /// The `eval --format json` output to check against it.
    #[arg(value_name = "CANDIDATE.json")]
    pub candidate: PathBuf,
    /// The metric checked for regressions (any key of `metrics`, e.g. mrr, hit@1).
    #[arg(long, default_value = "recall@5")]
    pub metric: String,
    /// Largest tolerated drop of the metric, in its own units (0.01 = one percentage point).
    #[arg(long, default_value_t = 0.01, value_name = "X")]
    pub max_drop: f64,
    /// A scorer of the baseline the candidate may lack (e.g. semantic when the model is not
    /// installed). Without it a missing scorer or checked metric fails the check. Repeatable.
    #[arg(long, value_name = "SCORER")]
    pub allow_missing: Vec<String>,
    /// When the files evaluated different query sets, compare only the queries both ranked
    /// (needs `eval --per-query` in both); without it different sets are refused (exit 2).
    #[arg(long)]
    pub paired_only: bool,
    /// With --paired-only: fail (exit 2) when fewer than this share of the larger file's
    /// queries pair up (0 to 1).
    #[arg(long, default_value_t = toolbudget::eval::compare::DEFAULT_MIN_PAIRED_SHARE, value_name = "X", value_parser = parse_share)]
    pub min_paired_share: f64,
    /// Compare the baseline's scorer BASE with the candidate's CANDIDATE, differently named
    /// (e.g. your run file's `mine` against `bm25`). Repeatable.
    #[arg(long = "pair", value_name = "BASE=CANDIDATE", value_parser = parse_pair)]
    pub pairs: Vec<(String, String)>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The reference `simulate --format json` output.
    #[arg(value_name = "BASE.json")]
    pub base: PathBuf,
    /// The `simulate --format json` output to check against it.
    #[arg(value_name = "HEAD.json")]
    pub head: PathBuf,
    /// Exit 1 when any scenario's deferred whole-conversation input tokens grew by more than
    /// this many percent (5 = 5%) [default: no check].
    #[arg(long, value_name = "PCT", value_parser = parse_max_increase)]
    pub max_increase: Option<f64>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--max-increase`: a finite percentage, 0 or more.
fn parse_max_increase(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!(
            "expected a percentage, 0 or more (5 = 5%), got {s:?}"
        )),
    }
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Scenario files (YAML or JSON).
    #[arg(value_name = "SCENARIO", required = true)]
    pub scenarios: Vec<PathBuf>,
    /// Fitted system prompt and counter scale (`session import` writes calibration.json),
    /// applied to scenarios of the same model profile and tokenizer.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Tokenizer (overrides the scenario's), counted as the json counter of that tokenizer.
    #[arg(long, value_enum, conflicts_with = "counter")]
    pub tokenizer: Option<Tokenizer>,
    /// Counter (overrides the scenario's and the model profile's).
    #[arg(long, value_enum, value_name = "NAME")]
    pub counter: Option<CounterKind>,
    #[command(flatten)]
    pub api: ApiArgs,
    /// The deferred mode's search, replacing each scenario's `deferred.scorer`: a built-in,
    /// exec:'CMD ARGS' or mcp:'CMD ARGS'.
    #[arg(long, value_name = "S", value_parser = parse_scorer)]
    pub scorer: Option<ScorerSpec>,
    #[command(flatten)]
    pub external: ExternalArgs,
    /// Include one row per request (json: `requests` in each scenario; csv: request rows).
    #[arg(long, conflicts_with = "client")]
    pub per_request: bool,
    /// Replay each scenario under these clients' deferral policies, side by side (comma
    /// separated): each profile's policy with the scenario's own tools keys (always_load,
    /// defer_builtins, depends_on...). Search latency is modeled.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "CLIENT,...", conflicts_with_all = ["scorer", "search_latency"])]
    pub client: Vec<toolbudget::simulate::client::ClientName>,
    /// Search latency in the latency model: `measured` times the searches the replay sends on
    /// the real scorer, `modeled` uses the profile's fixed figure. Default: measured for table
    /// and md, modeled for json and csv (so they stay byte-identical).
    #[arg(long, value_enum, value_name = "SOURCE")]
    pub search_latency: Option<SearchLatencySource>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct CatalogArgsGroup {
    #[command(subcommand)]
    pub command: CatalogCommand,
}

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Start real MCP servers over stdio, list their tools and write each as a catalog file.
    Import(ImportArgs),
    /// Write a deterministic synthetic catalog shaped like real MCP catalogs (native JSON).
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["stdio", "config"])))]
pub struct ImportArgs {
    /// The server's command line, split like a shell would (quotes, backslashes; no shell runs):
    /// "npx -y @modelcontextprotocol/server-memory".
    #[arg(long, value_name = "\"CMD ARGS\"", requires = "server")]
    pub stdio: Option<String>,
    /// With --stdio: the server's name; its tools get the ids mcp__NAME__TOOL.
    #[arg(long, value_name = "NAME", requires = "stdio")]
    pub server: Option<String>,
    /// With --stdio: an environment variable for the server. Repeatable.
    #[arg(long = "env", value_name = "KEY=VALUE", requires = "stdio")]
    pub env: Vec<String>,
    /// A Claude Code .mcp.json or Claude Desktop config: import every stdio server of its
    /// mcpServers map, one file per server.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// With --stdio: the catalog file (default: stdout). With --config: the folder for the
    /// <server>.json files (default: catalogs).
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Also write a starter scenario over the imported catalogs, ready for
    /// `toolbudget simulate FILE` (eager vs deferred). With --stdio it needs --out.
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Seconds to wait for each answer: the server's start and `initialize`, then each
    /// `tools/list` page.
    #[arg(long, value_name = "SECS", default_value = "20", value_parser = parse_seconds)]
    pub timeout_secs: f64,
    /// Seconds to wait for the start and `initialize` only (default: --timeout-secs); raise it
    /// for `npx -y`/`uvx` servers that download themselves on first start.
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub start_timeout_secs: Option<f64>,
    /// Tokenizer for the printed counts: o200k_base or cl100k_base.
    #[arg(long, default_value = "o200k_base", value_enum)]
    pub tokenizer: Tokenizer,
    /// Format of the per-server summary.
    #[arg(long, default_value = "table", value_enum)]
    pub format: Format,
}

/// A scorer name or `exec:`/`mcp:` command line (`ScorerSpec`'s rules).
pub fn parse_scorer(s: &str) -> Result<ScorerSpec, String> {
    s.parse()
}

/// How external scorers (`exec:`, `mcp:`) are started and waited for.
#[derive(Debug, Args, Clone, Default)]
pub struct ExternalArgs {
    /// Seconds an external scorer may take to answer one search [default: 60].
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub scorer_timeout: Option<f64>,
    /// Seconds an external scorer may take from its start to being ready (the catalog indexed)
    /// [default: 600].
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub scorer_start_timeout: Option<f64>,
    /// mcp: the server's search tool [default: its one tool named like search or find].
    #[arg(long, value_name = "NAME")]
    pub mcp_tool: Option<String>,
    /// mcp: the search tool's argument that takes the query [default: query, q, ... or its
    /// only required string].
    #[arg(long, value_name = "NAME")]
    pub mcp_query_arg: Option<String>,
    /// mcp: the search tool's argument that takes the number of results [default: limit,
    /// top_k, ... when it has one].
    #[arg(long, value_name = "NAME")]
    pub mcp_limit_arg: Option<String>,
}

impl ExternalArgs {
    /// The external settings: the defaults with the flags given applied.
    pub fn config(&self) -> toolbudget::search::external::ExternalConfig {
        let mut c = toolbudget::search::ScorerConfig::default();
        self.apply(&mut c);
        c.external
    }

    /// Applies the flags given over `base`.
    pub fn apply(&self, base: &mut toolbudget::search::ScorerConfig) {
        let e = &mut base.external;
        if let Some(s) = self.scorer_timeout {
            e.query_timeout = std::time::Duration::from_secs_f64(s);
        }
        if let Some(s) = self.scorer_start_timeout {
            e.start_timeout = std::time::Duration::from_secs_f64(s);
        }
        if self.mcp_tool.is_some() {
            e.mcp.tool.clone_from(&self.mcp_tool);
        }
        if self.mcp_query_arg.is_some() {
            e.mcp.query_arg.clone_from(&self.mcp_query_arg);
        }
        if self.mcp_limit_arg.is_some() {
            e.mcp.limit_arg.clone_from(&self.mcp_limit_arg);
        }
    }
}

fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("expected a share from 0 to 1, got {s:?}")),
    }
}

pub fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= 86_400.0 => Ok(x),
        _ => Err(format!(
            "expected a number of seconds above 0 and at most 86400, got {s:?}"
        )),
    }
}
/// Options of the semantic and hybrid scorers; `search` and `eval` flatten this in.
#[derive(Debug, Args, Clone, Default)]
pub struct EmbeddingArgs {
    /// Folder with the embedding model (default: env TOOLBUDGET_MODEL_DIR, then
    /// models/all-MiniLM-L6-v2; fetch it with `just model` or scripts/fetch-model.sh).
    #[arg(long, value_name = "DIR")]
    pub model_dir: Option<PathBuf>,
    /// Embedding cache folder (default: env TOOLBUDGET_CACHE_DIR, then $XDG_CACHE_HOME/toolbudget,
    /// then ~/.cache/toolbudget).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Embed the catalog without reading or writing the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// How hybrid fuses bm25 and semantic: blend (default: each list's lead over its 20th score
    /// in units of its spread, weights 0.5,0.5), rrf (k 60, weights 1,1) or minmax (a reference:
    /// each list scaled to [0, 1], weights 0.5,0.5).
    #[arg(long, value_name = "METHOD", value_enum)]
    pub fusion: Option<toolbudget::search::hybrid::FusionMethod>,
    /// Hybrid weights as BM25,SEMANTIC (e.g. 0.5,0.5).
    #[arg(long, value_name = "BM25,SEMANTIC", value_parser = parse_weights)]
    pub fusion_weights: Option<(f64, f64)>,
    /// RRF's k (rank offset).
    #[arg(long, value_name = "K")]
    pub rrf_k: Option<f64>,
    /// How many results of each scorer take part in the fusion.
    #[arg(long, value_name = "N")]
    pub fusion_depth: Option<usize>,
    /// blend: measure each list's scores from its score at this rank.
    #[arg(long, value_name = "N")]
    pub fusion_floor: Option<usize>,
    /// bm25's k1, term-frequency saturation, >= 0 (default 1.2; also hybrid's bm25).
    #[arg(long, value_name = "K1")]
    pub bm25_k1: Option<f64>,
    /// bm25's b, length normalisation, 0 to 1 (default 0.75).
    #[arg(long, value_name = "B")]
    pub bm25_b: Option<f64>,
    /// bm25 field weights NAME,DESCRIPTION,ARGUMENT_NAMES,ARGUMENT_DESCRIPTIONS
    /// (default 2,1,1,0.5).
    #[arg(long, value_name = "N,D,AN,AD", value_parser = toolbudget::search::bm25::parse_weights)]
    pub bm25_weights: Option<[f64; 4]>,
}

impl EmbeddingArgs {
    /// Applies the flags given over `base` (unset flags keep its values).
    pub fn apply(&self, base: &mut toolbudget::search::ScorerConfig) {
        if self.model_dir.is_some() {
            base.model_dir.clone_from(&self.model_dir);
        }
        if self.cache_dir.is_some() {
            base.cache_dir.clone_from(&self.cache_dir);
        }
        base.no_cache |= self.no_cache;
        let fusion = &mut base.fusion;
        if let Some(m) = self.fusion {
            // Each method has its own default weights (blend 0.4,0.6; rrf 1,1).
            *fusion = toolbudget::search::hybrid::FusionConfig::for_method(m);
        }
        if let Some((l, s)) = self.fusion_weights {
            fusion.lexical_weight = l;
            fusion.semantic_weight = s;
        }
        if let Some(k) = self.rrf_k {
            fusion.k = k;
        }
        if let Some(d) = self.fusion_depth {
            fusion.depth = d;
        }
        if let Some(f) = self.fusion_floor {
            fusion.floor_rank = f;
        }
        let bm25 = &mut base.bm25;
        bm25.k1 = self.bm25_k1.unwrap_or(bm25.k1);
        bm25.b = self.bm25_b.unwrap_or(bm25.b);
        bm25.weights = self.bm25_weights.unwrap_or(bm25.weights);
    }
}

fn parse_weights(s: &str) -> Result<(f64, f64), String> {
    let err = || format!("expected two numbers BM25,SEMANTIC, got {s:?}");
    let (a, b) = s.split_once(',').ok_or_else(err)?;
    let a: f64 = a.trim().parse().map_err(|_| err())?;
    let b: f64 = b.trim().parse().map_err(|_| err())?;
    Ok((a, b))
}

fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.to_string(), b.to_string())),
        _ => Err(format!(
            "expected BASE=CANDIDATE (two scorer names), got {s:?}"
        )),
    }
}

/// The command-line reference (docs/reference/cli.md), generated from these definitions.
pub fn reference_markdown() -> String {
    let options = clap_markdown::MarkdownOptions::new()
        .title("Command-line reference".to_string())
        .show_footer(false);
    format!(
        "<!-- Generated from src/cli.rs by `just cli-reference`; do not edit. -->\n\n{}",
        clap_markdown::help_markdown_custom::<Cli>(&options)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
