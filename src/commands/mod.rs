//! One module per subcommand. Each resolves its arguments into the library's plan, runs the one
//! `experiment::` function of that command with the binary's clock, progress and transports,
//! renders the result with `view` and writes it. This layer (with `main.rs`) is the only one
//! that finds input files, writes output, prints and reads the clock.
//!
//! A command is its clap arguments implementing [`Run`]; [`run`] is the one dispatch.

pub mod api;
pub mod calibrate;
pub mod catalog;
pub mod check;
pub mod compare;
pub mod count;
pub mod diff;
pub mod eval;
pub mod live;
pub mod progress;
pub mod report;
pub mod search;
pub mod session_import;
pub mod simulate;

use crate::cli::{CatalogArgs, CatalogCommand, Cli, Command, SessionCommand};
use std::path::{Path, PathBuf};

use toolbudget::error::{Error, Result};
use toolbudget::experiment::{CatalogSource, parse_catalog_arg};
use toolbudget::output::Guard;

/// How a command that ran to completion ends: `CheckFailed` (exit 1) is a result, not an
/// error — the output was written, and a check it reports (a regression) failed; `Failed`
/// (exit 2) wrote what it could, and some of its input failed (a server that did not start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    CheckFailed,
    Failed,
}

impl From<Outcome> for std::process::ExitCode {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Success => std::process::ExitCode::SUCCESS,
            Outcome::CheckFailed => std::process::ExitCode::from(1),
            Outcome::Failed => std::process::ExitCode::from(2),
        }
    }
}

/// A subcommand: what it reads and writes (checked before any work), and the run.
pub trait Run {
    /// The command's inputs and outputs, for the output guard.
    fn guard(&self) -> Guard;
    /// Runs the command; `quiet` hides progress and notes.
    fn run(&self, quiet: bool) -> Result<Outcome>;
}

/// The one dispatch: a parsed command line's subcommand.
fn command(c: &Command) -> &dyn Run {
    match c {
        Command::Count(a) => a,
        Command::Search(a) => a,
        Command::Eval(a) => a,
        Command::Compare(a) => a,
        Command::Diff(a) => a,
        Command::Simulate(a) => a,
        Command::Report(a) => a,
        Command::Calibrate(a) => a,
        Command::Live(a) => a,
        Command::Check(a) => a,
        Command::Session(g) => match &g.command {
            SessionCommand::Import(a) => a,
        },
        Command::Catalog(g) => match &g.command {
            CatalogCommand::Import(a) => a,
            CatalogCommand::Generate(a) => a,
        },
    }
}

/// Runs the command line: every output checked against every input first, then the command.
pub fn run(cli: &Cli) -> Result<Outcome> {
    let command = command(&cli.command);
    let mut guard = command.guard();
    if let Some(prices) = &cli.prices {
        guard.input(prices);
    }
    guard.check()?;
    if let Some(path) = &cli.prices {
        toolbudget::experiment::use_prices(path)?;
    }
    command.run(cli.quiet)
}

/// The paths of `--catalog` arguments (`SERVER=` stripped), for the guard.
pub fn catalog_paths(args: &CatalogArgs) -> Vec<PathBuf> {
    args.catalogs
        .iter()
        .map(|a| parse_catalog_arg(a).path)
        .collect()
}

/// The `--catalog` arguments' sources; a folder stands for every catalog file below it (the
/// walk of `eval --pool`), its tools' servers named by each file's stem.
pub fn catalog_sources(args: &CatalogArgs) -> Result<Vec<CatalogSource>> {
    let mut sources = Vec::new();
    for arg in &args.catalogs {
        let source = parse_catalog_arg(arg);
        if source.path.is_dir() {
            if source.server.is_some() {
                return Err(Error::usage(format!(
                    "--catalog {}: SERVER=FOLDER is ambiguous (each file of a folder is its own \
                     server, named by its file stem)",
                    arg.to_string_lossy()
                )));
            }
            let mut files = Vec::new();
            catalog_files("--catalog", &source.path, &mut files)?;
            sources.extend(
                files
                    .into_iter()
                    .map(|path| CatalogSource { path, server: None }),
            );
        } else {
            sources.push(source);
        }
    }
    Ok(sources)
}

/// A catalog argument's files: the file itself, or every `.json`, `.yaml` and `.yml` file
/// below a folder, in path order. `flag` names the argument in errors.
pub fn catalog_files(flag: &str, source: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    if !source.is_dir() {
        if !source.exists() {
            return Err(Error::usage(format!(
                "{flag} {}: no such file or folder",
                source.display()
            )));
        }
        out.push(source.to_path_buf());
        return Ok(());
    }
    let mut found = Vec::new();
    let mut stack = vec![source.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| Error::usage(format!("{flag} {}: cannot read: {e}", dir.display())))?;
        for entry in entries.flatten() {
            let path = entry.path();
            // Symlinked folders are not followed (as in session folders): two links to `..`
            // made the walk exponential. A link to a file is read like the file.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if (kind.is_file() || (kind.is_symlink() && path.is_file()))
                && path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                    ["json", "yaml", "yml"].contains(&e.to_ascii_lowercase().as_str())
                })
            {
                found.push(path);
            }
        }
    }
    if found.is_empty() {
        return Err(Error::usage(format!(
            "{flag} {}: no catalog files (.json, .yaml, .yml) in the folder",
            source.display()
        )));
    }
    found.sort();
    out.extend(found);
    Ok(())
}
