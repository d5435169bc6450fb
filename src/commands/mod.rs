//! One module per subcommand: each turns parsed arguments into library calls and output.
//! This layer (with `main.rs`) is the only one that finds input files, writes output, prints
//! and reads the clock; the library's loaders read the files they are given.

pub mod calibrate;
pub mod catalog;
pub mod compare;
pub mod count;
pub mod eval;
pub mod live;
pub mod report;
pub mod search;
pub mod session_import;
pub mod simulate;

use crate::cli::CatalogArgs;
use toolbudget::catalog::{Catalog, load_catalogs, parse_catalog_arg};
use toolbudget::error::Result;

/// How a command that ran to completion ends: `CheckFailed` (exit 1) is a result, not an
/// error — the output was written, and a check it reports (a regression) failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    CheckFailed,
}

impl From<Outcome> for std::process::ExitCode {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Success => std::process::ExitCode::SUCCESS,
            Outcome::CheckFailed => std::process::ExitCode::from(1),
        }
    }
}

pub fn load(args: &CatalogArgs) -> Result<Catalog> {
    let sources: Vec<_> = args.catalogs.iter().map(parse_catalog_arg).collect();
    load_catalogs(&sources)
}

/// Checks every `--out` of `command` before any work is done, so a refused path fails at once
/// instead of after minutes of evaluation.
pub fn check_outputs(command: &crate::cli::Command) -> Result<()> {
    // Inputs first: "is one of this run's inputs" says more than "holds files".
    check_out_inputs(command)?;
    check_out_kinds(command)
}

/// No `--out` of `command` is one of its inputs (`compare base.json cand.json --out base.json`
/// replaced the baseline; `report --out reports --sessions reports/sessions` deleted them).
fn check_out_inputs(command: &crate::cli::Command) -> Result<()> {
    use crate::cli::{CatalogCommand, Command, SessionCommand};
    use std::path::{Path, PathBuf};
    use toolbudget::output::check_out_not_input;
    let catalogs = |c: &CatalogArgs| -> Vec<PathBuf> {
        c.catalogs
            .iter()
            .map(|a| parse_catalog_arg(a).path)
            .collect()
    };
    let check = |out: Option<&Path>, tree: bool, inputs: Vec<PathBuf>| -> Result<()> {
        let Some(out) = out else { return Ok(()) };
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        check_out_not_input(out, tree, &inputs)
    };
    match command {
        Command::Count(a) => {
            let mut inputs = catalogs(&a.catalog);
            inputs.push(a.api.api_cache.clone());
            check(a.output.out.as_deref(), false, inputs)
        }
        Command::Search(a) => check(a.output.out.as_deref(), false, catalogs(&a.catalog)),
        Command::Eval(a) => {
            let mut inputs = catalogs(&a.catalog);
            inputs.push(a.queries.clone());
            inputs.extend(a.pool.iter().cloned());
            check(a.output.out.as_deref(), false, inputs)
        }
        Command::Compare(a) => check(
            a.output.out.as_deref(),
            false,
            vec![a.baseline.clone(), a.candidate.clone()],
        ),
        Command::Simulate(a) => {
            let mut inputs = a.scenarios.clone();
            inputs.extend(a.calibration.iter().cloned());
            inputs.push(a.api.api_cache.clone());
            check(a.output.out.as_deref(), false, inputs)
        }
        Command::Report(a) => {
            let mut inputs = vec![a.scenarios.clone(), a.fixtures.clone()];
            inputs.extend(a.data.iter().cloned());
            inputs.extend(a.sessions.iter().cloned());
            inputs.extend(a.calibration.iter().cloned());
            check(Some(&a.out), true, inputs)
        }
        Command::Session(group) => match &group.command {
            // Files are added beside the sessions (other names): only a session file itself
            // must not be the folder's path.
            SessionCommand::Import(a) => {
                let mut inputs: Vec<PathBuf> =
                    a.paths.iter().filter(|p| p.is_file()).cloned().collect();
                inputs.extend(a.catalogs.iter().map(|c| parse_catalog_arg(c).path));
                check(a.out.as_deref(), false, inputs)
            }
        },
        Command::Calibrate(_) => Ok(()),
        Command::Catalog(group) => match &group.command {
            CatalogCommand::Generate(_) => Ok(()),
            CatalogCommand::Import(a) => {
                let inputs: Vec<PathBuf> = a.config.iter().cloned().collect();
                check(a.out.as_deref(), false, inputs.clone())?;
                check(a.scenario.as_deref(), false, inputs)
            }
        },
    }
}

fn check_out_kinds(command: &crate::cli::Command) -> Result<()> {
    use crate::cli::{CatalogCommand, Command, SessionCommand};
    use toolbudget::output::{check_out_dir, check_out_file};
    let file = |p: &Option<std::path::PathBuf>| p.as_deref().map_or(Ok(()), check_out_file);
    match command {
        Command::Count(a) => file(&a.output.out),
        Command::Search(a) => file(&a.output.out),
        Command::Eval(a) => file(&a.output.out),
        Command::Compare(a) => file(&a.output.out),
        Command::Simulate(a) => file(&a.output.out),
        Command::Report(a) => check_out_dir(&a.out),
        Command::Session(group) => match &group.command {
            // Scenarios are added to an existing folder one by one, each atomically.
            SessionCommand::Import(a) => match &a.out {
                Some(dir) if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) => Ok(()),
                Some(p) => check_out_dir(p),
                None => Ok(()),
            },
        },
        Command::Calibrate(a) if a.write => check_out_file(&a.data),
        Command::Calibrate(_) => Ok(()),
        Command::Live(a) => {
            file(&Some(a.cassette.clone()))?;
            a.out.as_deref().map_or(Ok(()), check_out_dir)
        }
        Command::Catalog(group) => match &group.command {
            CatalogCommand::Generate(a) => file(&a.out),
            CatalogCommand::Import(a) => {
                file(&a.scenario)?;
                match (&a.out, a.config.is_some()) {
                    (None, true) => Ok(()),
                    // Files are added to an existing folder one by one, each atomically.
                    (Some(dir), true) if dir.is_dir() => Ok(()),
                    (Some(p), true) => check_out_dir(p),
                    (out, false) => file(out),
                }
            }
        },
    }
}

/// A progress bar on stderr for a cold semantic index (`None` when `visible` is false). The bar
/// appears with the first finished batch, so a cached index shows nothing.
pub fn embed_progress(visible: bool) -> Option<toolbudget::search::EmbedProgress> {
    use indicatif::{ProgressBar, ProgressStyle};
    use std::sync::{Arc, OnceLock};
    if !visible {
        return None;
    }
    let bar: Arc<OnceLock<ProgressBar>> = Arc::new(OnceLock::new());
    Some(toolbudget::search::EmbedProgress(Arc::new(
        move |done: usize, all: usize| {
            let bar = bar.get_or_init(|| {
                let bar = ProgressBar::new(all as u64);
                bar.set_style(
                    ProgressStyle::with_template(
                        "{prefix:>12} [{bar:30}] {pos}/{len} tools {per_sec} eta {eta}",
                    )
                    .expect("the template is valid")
                    .progress_chars("=> "),
                );
                bar.set_prefix("embedding");
                bar
            });
            bar.set_position(done as u64);
            if done >= all {
                bar.finish_and_clear();
            }
        },
    )))
}
