//! `toolbudget eval`: ranks every labeled query with each scorer and run, and reports retrieval
//! metrics and search latency (`experiment::eval`). Metric definitions: `eval::metrics`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::progress::Bars;
use super::{Outcome, Run};
use crate::cli::EvalArgs;
use toolbudget::error::Result;
use toolbudget::experiment::eval::{self, EvalOptions, EvalPlan, EvalRequest, PoolRequest};
use toolbudget::experiment::eval::{Latency, ScorerChoice};
use toolbudget::experiment::{Budget, ScorerConfig, ScorerKind};
use toolbudget::output::{Format, Guard, Target, emit, write_atomic};
use toolbudget::progress::{Progress, Shared};

/// Scorers evaluated when no `--scorer` is given.
pub const DEFAULT_SCORERS: [ScorerKind; 2] = [ScorerKind::Keyword, ScorerKind::Bm25];

impl Run for EvalArgs {
    fn guard(&self) -> Guard {
        let mut g = Guard::default();
        g.inputs(super::catalog_paths(&self.catalog))
            .input(&self.queries)
            .inputs(self.pool.iter().cloned())
            .inputs(self.runs.iter().map(|r| split_run_arg(r).1))
            .output("--out", self.output.out.as_deref(), Target::File)
            .output("--write-run", self.write_run.as_deref(), Target::File);
        g
    }

    fn run(&self, quiet: bool) -> Result<Outcome> {
        let bars = Arc::new(Bars::logging("eval", quiet));
        let plan = EvalPlan::new(self.request(Shared(bars.clone()))?, &mut Budget::new())?;
        for note in plan.notes() {
            bars.note(&note);
        }
        let origin = Instant::now();
        let result = eval::run(&plan, &|| origin.elapsed(), bars.as_ref())?.result;
        let run = self
            .write_run
            .as_ref()
            .map(|path| (path, toolbudget::view::eval::run_jsonl(&result)));
        let text = toolbudget::view::eval::render(&result, self.output.format);
        // Both checked before either is written: each must read back (compare, eval --run).
        if let Some((path, run)) = &run {
            eval::check_readable("--write-run", path, run, false)?;
        }
        if let Some(path) = &self.output.out
            && self.output.format == Format::Json
        {
            eval::check_readable("--out", path, &text, true)?;
        }
        if let Some((path, run)) = &run {
            write_atomic(path, run.as_bytes())?;
        }
        emit(self.output.out.as_deref(), &text)?;
        Ok(Outcome::Success)
    }
}

impl EvalArgs {
    /// The flags as the library's request: files found, scorers chosen, options checked.
    fn request(&self, progress: Shared) -> Result<EvalRequest> {
        let mut options = EvalOptions::new(&self.k, self.depth, self.per_query)?;
        options.thresholds = self.thresholds;
        options.keep_rankings = self.write_run.is_some();
        if self.no_latency {
            options.latency = Latency::NotMeasured;
        }
        let mut config = ScorerConfig::default();
        self.embedding.apply(&mut config);
        self.external.apply(&mut config);
        config.external.mcp.allow_unknown_tools = self.allow_unknown_tools;
        config.progress = Some(progress);
        Ok(EvalRequest {
            catalog: super::catalog_sources(&self.catalog)?,
            pool: self.pool_request()?,
            queries: self.queries.clone(),
            runs: self
                .runs
                .iter()
                .map(|r| {
                    let (name, path) = split_run_arg(r);
                    (name.map(str::to_string), path)
                })
                .collect(),
            scorers: self.scorers(),
            options,
            config,
            run_ties: self.run_ties,
            allow_unknown_tools: self.allow_unknown_tools,
        })
    }

    /// The scorers asked for, each once, in order (the default pair when neither a scorer nor
    /// a run is given).
    fn scorers(&self) -> Vec<ScorerChoice> {
        let mut out: Vec<ScorerChoice> = Vec::new();
        let asked: Vec<ScorerChoice> = if self.scorers.is_empty() && self.runs.is_empty() {
            DEFAULT_SCORERS
                .iter()
                .map(|&k| ScorerChoice::Required(k.into()))
                .collect()
        } else {
            self.scorers
                .iter()
                .cloned()
                .map(ScorerChoice::Required)
                .collect()
        };
        for s in asked {
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }

    /// The pool's files (`--pool`), without the files given as `--catalog`.
    fn pool_request(&self) -> Result<Option<PoolRequest>> {
        if self.pool.is_empty() {
            return Ok(None);
        }
        let own_files: Vec<PathBuf> = super::catalog_paths(&self.catalog)
            .into_iter()
            .filter_map(|p| p.canonicalize().ok())
            .collect();
        let mut files = Vec::new();
        for source in &self.pool {
            super::catalog_files("--pool", source, &mut files)?;
        }
        let found = files.len();
        files.retain(|f| f.canonicalize().map_or(true, |c| !own_files.contains(&c)));
        Ok(Some(PoolRequest {
            skipped_files: found - files.len(),
            files,
            sources: self.pool.iter().map(|p| p.display().to_string()).collect(),
        }))
    }
}

/// `NAME=FILE` or `FILE`. A path that itself holds `=` is read whole when it exists.
pub(crate) fn split_run_arg(arg: &str) -> (Option<&str>, PathBuf) {
    if !Path::new(arg).exists()
        && let Some((name, path)) = arg.split_once('=')
        && !name.is_empty()
    {
        return (Some(name), PathBuf::from(path));
    }
    (None, PathBuf::from(arg))
}
