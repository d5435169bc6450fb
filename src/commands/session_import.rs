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
    Catalogs, Filter, ImportOptions, ImportSummary, Plan, catalogs_for, import, index_all,
};
use crate::session::{LogFormat, default_roots, discover};

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

fn bar(len: u64, prefix: &'static str, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>12} [{bar:30}] {bytes}/{total_bytes} {msg} {elapsed}",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    bar.set_prefix(prefix);
    bar
}

/// Counts files and bytes on a bar (`n` files in all).
fn ticker(bar: &ProgressBar, n: usize) -> impl Fn(u64) + Sync + '_ {
    let done = std::sync::atomic::AtomicUsize::new(0);
    move |bytes| {
        let k = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        bar.inc(bytes);
        bar.set_message(format!("{k}/{n} files"));
    }
}

pub fn run(args: &SessionImportArgs, quiet: bool) -> Result<()> {
    if let Some(q) = &args.queries_out {
        crate::output::check_out_file(q)?;
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
    let visible = !quiet && std::io::stderr().is_terminal();
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let indexing = bar(total, "indexing", visible);
    let index = index_all(files, &ticker(&indexing, files.len()))?;
    indexing.finish_and_clear();
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
    let importing = bar(plan.bytes(), "sessions", visible);
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
        &ticker(&importing, n),
    )?;
    importing.finish_and_clear();
    if let Some(out) = &args.out {
        for (name, text) in &result.files {
            write_atomic(&out.join(name), text.as_bytes())?;
        }
    }
    if let Some(q) = &args.queries_out {
        write_atomic(
            q,
            crate::session::queries::to_jsonl(&result.queries).as_bytes(),
        )?;
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
    if s.searches_mined + s.searches_unlabeled > 0 {
        out.push(format!(
            "{} of the model's searches mined as labeled queries ({} with no call after them left out)",
            s.searches_mined, s.searches_unlabeled
        ));
    }
    for c in &s.calibrations {
        for n in &c.notes {
            out.push(format!("calibration {} ({}): {n}", c.model, c.counter));
        }
    }
    if s.filtered_out > 0 {
        out.push(format!(
            "{} {} left out by --since/--until/--project",
            s.filtered_out,
            crate::output::noun(s.filtered_out as u64, "session", "sessions")
        ));
    }
    for e in &s.sessions {
        let untyped: usize = e.untyped_records.values().sum();
        if untyped > 0 {
            let list: Vec<String> = e
                .untyped_records
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            out.push(format!(
                "{}: {untyped} records without a top-level type read by their message's role ({})",
                e.file,
                list.join(", ")
            ));
        }
        if e.copied_requests > 0 {
            out.push(format!(
                "{}: {} requests copied from an earlier session file (resumed or forked) read as context, billed there",
                e.file, e.copied_requests
            ));
        }
        if e.warmup_agents > 0 {
            out.push(format!(
                "{}: {} warm-up {} (Claude Code priming its agents) billed, not part of the conversation",
                e.file,
                e.warmup_agents,
                crate::output::noun(e.warmup_agents as u64, "subagent", "subagents")
            ));
        }
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

/// One fit as the summary prints it: n, R², the held-out error against none, and whether it
/// was applied.
pub fn fit_line(c: &crate::simulate::calibration::Calibration) -> String {
    let held = c.held_out.as_ref().map_or_else(
        || "no held-out error (too few requests)".to_string(),
        |h| {
            format!(
                "held-out error median {}%, p90 {}% (uncalibrated {}%, {}%; {} folds)",
                h.median_abs_pct,
                h.p90_abs_pct,
                h.uncalibrated_median_abs_pct,
                h.uncalibrated_p90_abs_pct,
                h.folds
            )
        },
    );
    let mut line = format!(
        "Fit {} ({}): n = {} requests, R² {}, {held}: system prompt {} tokens{}, scale {}{}; {}.\n",
        c.model,
        c.counter,
        c.requests,
        c.r2,
        c.system_prompt_tokens,
        if c.constrained {
            " (fixed at 0: the free fit wanted less)"
        } else {
            ""
        },
        c.scale,
        c.subagent_system_prompt_tokens
            .map(|p| format!(
                ", subagent system prompt {p} over {} requests",
                c.subagent_requests
            ))
            .unwrap_or_default(),
        if c.applied { "applied" } else { "NOT applied" }
    );
    for n in &c.notes {
        line.push_str(&format!("  {n}\n"));
    }
    line
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
        "Per-request error of the model as applied (calibrated where a fit is applied): median {}%, p90 {}% over {} requests (uncalibrated: median {}%, p90 {}%).\n",
        s.error.median_abs_pct,
        s.error.p90_abs_pct,
        s.error.requests,
        s.error_uncalibrated.median_abs_pct,
        s.error_uncalibrated.p90_abs_pct
    ));
    for c in &s.calibrations {
        out.push_str(&fit_line(c));
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
