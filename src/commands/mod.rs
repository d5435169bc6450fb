//! One module per subcommand: each turns parsed arguments into library calls and output.
//! This layer (with `main.rs`) is the only one that finds input files, writes output, prints
//! and reads the clock; the library's loaders read the files they are given.

pub mod calibrate;
pub mod catalog_generate;
pub mod catalog_import;
pub mod compare;
pub mod count;
pub mod count_compare;
pub mod eval;
pub mod live;
pub mod report;
pub mod search;
pub mod session_import;
pub mod simulate;

use crate::catalog::{Catalog, load_catalogs, parse_catalog_arg};
use crate::cli::CatalogArgs;
use crate::error::Result;

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
    use crate::cli::{CatalogCommand, Command, SessionCommand};
    use crate::output::{check_out_dir, check_out_file};
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
pub fn embed_progress(visible: bool) -> Option<crate::search::EmbedProgress> {
    use indicatif::{ProgressBar, ProgressStyle};
    use std::sync::{Arc, OnceLock};
    if !visible {
        return None;
    }
    let bar: Arc<OnceLock<ProgressBar>> = Arc::new(OnceLock::new());
    Some(crate::search::EmbedProgress(Arc::new(
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
