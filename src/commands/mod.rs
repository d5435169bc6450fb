//! One module per subcommand: each turns parsed arguments into library calls and output.
//! This layer (with `main.rs`) is the only one that finds input files, writes output, prints
//! and reads the clock; the library's loaders read the files they are given.

pub mod calibrate;
pub mod catalog;
pub mod check;
pub mod compare;
pub mod count;
pub mod eval;
pub mod live;
pub mod progress;
pub mod report;
pub mod search;
pub mod session_import;
pub mod simulate;

use crate::cli::CatalogArgs;
use std::path::{Path, PathBuf};

use toolbudget::catalog::{Catalog, CatalogSource, load_catalogs, parse_catalog_arg};
use toolbudget::error::{Error, Result};

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

/// The `--catalog` arguments' catalogs; a folder stands for every catalog file below it
/// (the walk of `eval --pool`), its tools' servers named by each file's stem.
pub fn load(args: &CatalogArgs) -> Result<Catalog> {
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
    let catalog = load_catalogs(&sources)?;
    // A captured request body: say what of it was not the catalog.
    for note in catalog.notes() {
        eprintln!("note: {note}");
    }
    Ok(catalog)
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
            inputs.extend(a.runs.iter().map(|r| eval::split_run_arg(r).1));
            check(a.output.out.as_deref(), false, inputs.clone())?;
            check(a.write_run.as_deref(), false, inputs)
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
        Command::Live(a) => {
            let mut inputs = a.scenarios.clone();
            inputs.push(a.cassette.clone());
            check(a.out.as_deref(), true, inputs)
        }
        Command::Calibrate(_) => Ok(()),
        Command::Check(a) => {
            let mut inputs = catalogs(&a.catalog);
            inputs.extend(a.baseline.iter().map(|b| parse_catalog_arg(b).path));
            inputs.extend(a.queries.iter().cloned());
            check(a.out.as_deref(), false, inputs)
        }
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
        Command::Check(a) => file(&a.out),
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
