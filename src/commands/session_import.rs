//! `toolbudget session import PATH... [--catalog C]... [--out DIR]`: reads session logs, writes
//! one scenario per session (plus its bill and the fitted calibration) and prints billed vs
//! modeled input per session.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};

use crate::catalog::{CatalogSource, parse_catalog_arg};
use crate::cli::SessionImportArgs;
use crate::error::{Error, Result};
use crate::output::{Format, csv, emit, md_table, text_table, to_json, write_atomic};
use crate::session::import::{
    CatalogContext, ImportOptions, ImportSummary, catalogs, import, read_all,
};
use crate::session::{ReadOptions, discover};

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

fn notes(s: &ImportSummary) -> Vec<String> {
    let mut out = s.notes.clone();
    for e in &s.sessions {
        if e.bad_lines > 0 {
            out.push(format!(
                "{}: {} malformed lines skipped",
                e.file, e.bad_lines
            ));
        }
        if !e.ignored_records.is_empty() {
            let list: Vec<String> = e
                .ignored_records
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            out.push(format!(
                "{}: record types ignored: {}",
                e.file,
                list.join(", ")
            ));
        }
        if !e.unknown_tools.is_empty() {
            out.push(format!(
                "{}: tools in no catalog left out: {:.2}% of its calls, {:.2}% of their tokens",
                e.file, e.unknown_calls_pct, e.unknown_tokens_pct
            ));
        }
    }
    out
}

const COLUMNS: &[&str] = &[
    "session",
    "ran",
    "model",
    "counter",
    "requests",
    "tool_calls",
    "billed_input_tokens",
    "modeled_input_tokens",
    "median_error_pct",
    "p90_error_pct",
    "eager_input_tokens",
    "deferred_input_tokens",
    "eager_cost_cached_usd",
    "deferred_cost_cached_usd",
];

fn rows(s: &ImportSummary) -> Vec<Vec<String>> {
    s.sessions
        .iter()
        .map(|e| {
            let name = Path::new(&e.file)
                .file_stem()
                .map_or_else(|| e.file.clone(), |x| x.to_string_lossy().into_owned());
            vec![
                name,
                crate::session::import::mode_name(e.ran_as).to_string(),
                e.model.clone(),
                e.counter.to_string(),
                e.requests.to_string(),
                e.tool_calls.to_string(),
                e.billed_input_tokens.to_string(),
                e.modeled_input_tokens.to_string(),
                e.error.median_abs_pct.to_string(),
                e.error.p90_abs_pct.to_string(),
                e.eager.input_tokens.to_string(),
                e.deferred.input_tokens.to_string(),
                format!("{:.4}", e.eager.cost_cached_usd),
                format!("{:.4}", e.deferred.cost_cached_usd),
            ]
        })
        .collect()
}

fn render(s: &ImportSummary, format: Format) -> String {
    match format {
        Format::Json => to_json(s),
        Format::Csv => csv(COLUMNS, &rows(s)),
        Format::Table | Format::Md => {
            let right: Vec<bool> = COLUMNS
                .iter()
                .map(|c| !matches!(*c, "session" | "ran" | "model" | "counter"))
                .collect();
            let mut out = if format == Format::Md {
                md_table(COLUMNS, &rows(s), &right)
            } else {
                text_table(COLUMNS, &rows(s), &right)
            };
            out.push_str(&footer(s));
            out
        }
    }
}

fn footer(s: &ImportSummary) -> String {
    let t = &s.totals;
    let mut out = format!(
        "\n{} sessions, {} billed requests, {} tool calls; billed input {}, modeled {} ({}).\n",
        t.sessions,
        t.requests,
        t.tool_calls,
        t.billed_input_tokens,
        t.modeled_input_tokens,
        s.counter
    );
    out.push_str(&format!(
        "Per-request error of the calibrated model: median {}%, p90 {}% over {} requests (uncalibrated: median {}%, p90 {}%).\n",
        s.error.median_abs_pct,
        s.error.p90_abs_pct,
        s.error.requests,
        s.error_uncalibrated.median_abs_pct,
        s.error_uncalibrated.p90_abs_pct
    ));
    for c in &s.calibrations {
        out.push_str(&format!(
            "Fit {}: system prompt {} tokens{}, scale {} provider tokens per {} token (R² {}, residual RMS {} tokens, {} requests{}).\n",
            c.model,
            c.system_prompt_tokens,
            if c.constrained {
                " (fixed at 0: the free fit wanted less)"
            } else {
                ""
            },
            c.scale,
            c.counter,
            c.r2,
            c.rms_residual_tokens,
            c.requests,
            c.subagent_system_prompt_tokens
                .map(|p| format!("; subagent system prompt {p} over {} requests", c.subagent_requests))
                .unwrap_or_default()
        ));
    }
    out.push_str(&format!(
        "Replayed eager vs deferred: {} vs {} input tokens, ${:.4} vs ${:.4} with caching, {} {}, {} {}.\n",
        t.eager.input_tokens,
        t.deferred.input_tokens,
        t.eager.cost_cached_usd,
        t.deferred.cost_cached_usd,
        t.deferred.searches,
        crate::output::noun(t.deferred.searches as u64, "search", "searches"),
        t.deferred.misses,
        crate::output::noun(t.deferred.misses as u64, "miss", "misses"),
    ));
    out
}
