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
    /// How hybrid fuses bm25 and semantic: blend (default: 0.3·bm25/top + 0.7·cosine) or rrf
    /// (k 60, weights 1,1).
    #[arg(long, value_name = "METHOD", value_parser = parse_fusion)]
    pub fusion: Option<crate::search::hybrid::FusionMethod>,
    /// Hybrid weights as BM25,SEMANTIC (e.g. 0.5,0.5).
    #[arg(long, value_name = "BM25,SEMANTIC", value_parser = parse_weights)]
    pub fusion_weights: Option<(f64, f64)>,
    /// RRF's k (rank offset).
    #[arg(long, value_name = "K")]
    pub rrf_k: Option<f64>,
    /// How many results of each scorer take part in the fusion.
    #[arg(long, value_name = "N")]
    pub fusion_depth: Option<usize>,
}

impl EmbeddingArgs {
    /// Applies the flags given over `base` (unset flags keep its values).
    pub fn apply(&self, base: &mut crate::search::ScorerConfig) {
        if self.model_dir.is_some() {
            base.model_dir = self.model_dir.clone();
        }
        if self.cache_dir.is_some() {
            base.cache_dir = self.cache_dir.clone();
        }
        base.no_cache |= self.no_cache;
        let fusion = &mut base.fusion;
        if let Some(m) = self.fusion {
            // Each method has its own default weights (blend 0.3,0.7; rrf 1,1).
            *fusion = crate::search::hybrid::FusionConfig::for_method(m);
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
    }
}

fn parse_fusion(s: &str) -> Result<crate::search::hybrid::FusionMethod, String> {
    s.parse()
}

fn parse_weights(s: &str) -> Result<(f64, f64), String> {
    let err = || format!("expected two numbers BM25,SEMANTIC, got {s:?}");
    let (a, b) = s.split_once(',').ok_or_else(err)?;
    let a: f64 = a.trim().parse().map_err(|_| err())?;
    let b: f64 = b.trim().parse().map_err(|_| err())?;
    Ok((a, b))
}
