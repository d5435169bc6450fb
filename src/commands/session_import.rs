//! `toolbudget session import PATH... [--catalog C]... [--out DIR]`: reads session logs, writes
//! one scenario per session (plus its bill and the fitted calibration) and prints billed vs
//! modeled input per session.

use std::path::{Path, PathBuf};

use super::progress::{self, Bar, file_ticker};
use crate::cli::SessionImportArgs;
use toolbudget::catalog::{CatalogSource, parse_catalog_arg};
use toolbudget::error::{Error, Result};
use toolbudget::output::{emit, write_atomic};
use toolbudget::session::import::{
    Catalogs, Filter, ImportOptions, Plan, catalogs_for, import, index_all,
};
use toolbudget::session::{LogFormat, default_roots, discover};
use toolbudget::view::session_import::{notes, render};

/// A shipped catalog of an agent's built-in tools: from the current folder (the repository
/// root) or beside the crate this binary was built from.
fn shipped(file: &str) -> Option<PathBuf> {
    let rel = Path::new("fixtures/catalogs").join(file);
    [
        rel.clone(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join(&rel),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

fn catalog_context(args: &SessionImportArgs, dir: &Path, quiet: bool) -> Result<Catalogs> {
    let sources: Vec<CatalogSource> = args
        .catalogs
        .iter()
        .map(String::as_str)
        .map(parse_catalog_arg)
        .collect();
    let builtins = [
        (LogFormat::ClaudeCode, shipped("builtins.yaml")),
        (LogFormat::Codex, shipped("codex-builtins.yaml")),
    ];
    if sources.is_empty() && !quiet {
        for (f, p) in &builtins {
            if let Some(p) = p {
                eprintln!(
                    "note: no --catalog given: {} tools looked up in {}",
                    f.name(),
                    p.display()
                );
            }
        }
    }
    catalogs_for(&sources, builtins, dir)
}

/// The paths given, or the agents' own log folders that exist.
fn session_paths(args: &SessionImportArgs, quiet: bool) -> Result<Vec<PathBuf>> {
    if !args.paths.is_empty() {
        return Ok(args.paths.clone());
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let candidates = default_roots(&|k| std::env::var(k).ok(), home.as_deref());
    let found: Vec<PathBuf> = candidates.iter().filter(|p| p.is_dir()).cloned().collect();
    if found.is_empty() {
        let tried: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::usage(format!(
            "no session folder found (tried {}); give session files or folders",
            tried.join(", ")
        )));
    }
    if !quiet {
        let list: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
        eprintln!("note: reading sessions from {}", list.join(", "));
    }
    Ok(found)
}

pub fn run(args: &SessionImportArgs, quiet: bool) -> Result<()> {
    if let Some(q) = &args.queries_out {
        toolbudget::output::check_out_file(q)?;
    }
    let paths = session_paths(args, quiet)?;
    let files = discover(&paths)?;
    if files.is_empty() {
        return Err(Error::usage(
            "no session files (*.jsonl) under the given paths".to_string(),
        ));
    }
    // The folder is made before the work (one that cannot be made fails at once) and removed
    // again, if this run made it and left it empty, when the import fails.
    let made = args.out.as_ref().filter(|d| !d.exists()).cloned();
    let dir = match &args.out {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|source| Error::Write {
                path: d.clone(),
                source,
            })?;
            d.clone()
        }
        None => PathBuf::from("."),
    };
    let outcome = import_into(args, quiet, &files, &dir);
    if outcome.is_err()
        && let Some(d) = made
    {
        // Only an empty folder goes: remove_dir refuses anything else.
        let _ = std::fs::remove_dir(d);
    }
    outcome
}

/// The import once its output folder exists.
fn import_into(args: &SessionImportArgs, quiet: bool, files: &[PathBuf], dir: &Path) -> Result<()> {
    let cats = catalog_context(args, dir, quiet)?;
    let visible = progress::visible(quiet);
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let indexing = Bar::bytes(visible, "indexing", total);
    let index = index_all(files, &file_ticker(&indexing, files.len()))?;
    indexing.finish();
    let filter = Filter {
        since: args.since.clone(),
        until: args.until.clone(),
        project: args.project.clone(),
    };
    let plan = Plan::new(index, &filter);
    if plan.sessions.is_empty() {
        return Err(Error::usage(format!(
            "no session matches the filters ({} left out by --since/--until/--project)",
            plan.filtered_out
        )));
    }
    let n: usize = plan.sessions.iter().map(|s| s.files().count()).sum();
    let importing = Bar::bytes(visible, "sessions", plan.bytes());
    let opts = ImportOptions {
        keep_text: args.keep_text,
        skip_bad_lines: args.skip_bad_lines,
        allow_unknown_tools: args.allow_unknown_tools,
    };
    let result = import(
        &plan,
        &cats,
        &opts,
        dir,
        args.out.is_some(),
        &file_ticker(&importing, n),
    )?;
    importing.finish();
    if let Some(out) = &args.out {
        for (name, text) in &result.files {
            write_atomic(&out.join(name), text.as_bytes())?;
        }
    }
    if let Some(q) = &args.queries_out {
        write_atomic(
            q,
            toolbudget::session::queries::to_jsonl(&result.queries).as_bytes(),
        )?;
    }
    if !quiet {
        for n in notes(&result.summary) {
            eprintln!("note: {n}");
        }
    }
    emit(None, &render(&result.summary, args.format))
}
