//! Command-line types (clap derive). Parsed once, then converted into the library's plain
//! values by `commands::*`; nothing here does work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::output::Format;
use crate::tokenize::{Render, Tokenizer};

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
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count the tokens of every tool definition, per tool, per server and in total.
    Count(CountArgs),
    /// Run the shipped scenarios, evaluations and the scale sweep; write the Markdown report
    /// with its CSV/JSON data and SVG charts.
    Report(ReportArgs),
    /// Work with catalog files.
    #[command(subcommand)]
    Catalog(CatalogCommand),
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Folder the report is written to (index.md, data/, charts/).
    #[arg(long, default_value = "reports", value_name = "DIR")]
    pub out: PathBuf,
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
}

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Write a deterministic synthetic catalog shaped like real MCP catalogs (native JSON).
    Generate(GenerateArgs),
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
    /// A catalog file, or SERVER=PATH to name the MCP server of a tools/list file. Repeatable.
    #[arg(
        long = "catalog",
        short = 'c',
        value_name = "[SERVER=]PATH",
        required = true
    )]
    pub catalogs: Vec<String>,
}

#[derive(Debug, Args, Clone)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, default_value = "table", value_parser = parse_format)]
    pub format: Format,
    /// Write the result to this file (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CountArgs {
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// Tokenizer: o200k_base or cl100k_base.
    #[arg(long, default_value = "o200k_base", value_parser = parse_tokenizer)]
    pub tokenizer: Tokenizer,
    /// How a tool is rendered before counting.
    #[arg(long, default_value = "json", value_parser = parse_render)]
    pub render: Render,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

pub fn parse_tokenizer(s: &str) -> Result<Tokenizer, String> {
    s.parse()
}

pub fn parse_render(s: &str) -> Result<Render, String> {
    s.parse()
}
