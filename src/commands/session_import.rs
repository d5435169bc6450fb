//! `toolbudget session import PATH... [--catalog C]... [--out DIR]`: reads session logs, writes
//! one scenario per session (plus its bill and the fitted calibration) and prints billed vs
//! modeled input per session.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::SessionImportArgs;
use toolbudget::catalog::{CatalogSource, parse_catalog_arg};
use toolbudget::error::{Error, Result};
use toolbudget::output::{emit, write_atomic};
use toolbudget::session::import::{CatalogContext, ImportOptions, catalogs, import, read_all};
use toolbudget::session::{ReadOptions, discover};
use toolbudget::view::session_import::{notes, render};

/// The shipped catalog of Claude Code's built-in tools: from the current folder (the
/// repository root) or beside the crate this binary was built from.
fn shipped_builtins() -> Option<PathBuf> {
    let rel = Path::new("fixtures/catalogs/builtins.yaml");
    [
        rel.to_path_buf(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join(rel),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

fn catalog_context(args: &SessionImportArgs, dir: &Path, quiet: bool) -> Result<CatalogContext> {
    let mut sources: Vec<CatalogSource> = args
        .catalogs
        .iter()
        .map(String::as_str)
        .map(parse_catalog_arg)
        .collect();
    if sources.is_empty() {
        let path = shipped_builtins().ok_or_else(|| {
            Error::usage("session import needs --catalog: the tools the sessions may call")
        })?;
        if !quiet {
            eprintln!(
                "note: no --catalog given: looking tools up in {}",
                path.display()
            );
        }
        sources.push(CatalogSource { path, server: None });
    }
    catalogs(&sources, dir)
}
fn bar(len: usize, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} files {elapsed}")
            .expect("the template is valid")
            .progress_chars("=> "),
    );
    bar.set_prefix("sessions");
    bar
}

pub fn run(args: &SessionImportArgs, quiet: bool) -> Result<()> {
    let files = discover(&args.paths)?;
    if files.is_empty() {
        return Err(Error::usage(
            "no session files (*.jsonl) under the given paths".to_string(),
        ));
    }
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
    let ctx = catalog_context(args, &dir, quiet)?;
    let read = ReadOptions {
        keep_text: args.keep_text,
        skip_bad_lines: args.skip_bad_lines,
    };
    let progress = bar(files.len(), !quiet && std::io::stderr().is_terminal());
    let logs = read_all(&files, &read, &|| progress.inc(1))?;
    progress.finish_and_clear();
    let opts = ImportOptions {
        keep_text: args.keep_text,
        skip_bad_lines: args.skip_bad_lines,
        allow_unknown_tools: args.allow_unknown_tools,
    };
    let result = import(logs, &ctx, &opts, &dir, args.out.is_some())?;
    if let Some(out) = &args.out {
        for (name, text) in &result.files {
            write_atomic(&out.join(name), text.as_bytes())?;
        }
    }
    if !quiet {
        for n in notes(&result.summary) {
            eprintln!("note: {n}");
        }
    }
    emit(None, &render(&result.summary, args.format))
}
