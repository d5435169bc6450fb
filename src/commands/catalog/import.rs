//! `toolbudget catalog import`: snapshots the tools of real MCP servers into catalog files.
//!
//! `--stdio "CMD ARGS" --server NAME [--out FILE]` imports one server; without `--out` the
//! catalog goes to stdout and the summary to stderr. `--config FILE [--out DIR]` imports every
//! stdio server of a Claude Code / Claude Desktop config into `DIR/<server>.json`, one after
//! another; a failing server is reported and the rest still run. Exit 0 when every stdio
//! server was imported, 2 when any failed (remote servers are skipped, not failures).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;

use crate::cli::ImportArgs;
use crate::commands::progress::{self, Bar};
use toolbudget::counter::ToolTokens;
use toolbudget::error::{Error, Result};
use toolbudget::mcp::scenario::starter_scenario;
use toolbudget::mcp::{
    ConfigEntry, EntryKind, ImportError, ImportReport, ServerCommand, ServerReport, Timeouts,
    catalog_json, list_tools, read_config, to_catalog,
};
use toolbudget::output::{emit, write_atomic};
use toolbudget::tokenize::{Render, Tokenizer};

/// Default folder for `--config` snapshots.
pub const DEFAULT_CONFIG_OUT: &str = "catalogs";

/// A server imported successfully.
struct Imported {
    json: String,
    tools: usize,
    tokens: usize,
    pages: usize,
    server_info: Option<String>,
}

/// A server that failed: the one-line reason and the end of its stderr.
struct Failed {
    reason: String,
    stderr_tail: Vec<String>,
}

pub fn run(args: &ImportArgs, quiet: bool) -> Result<ExitCode> {
    let timeouts = Timeouts {
        start: Duration::from_secs_f64(args.start_timeout_secs.unwrap_or(args.timeout_secs)),
        request: Duration::from_secs_f64(args.timeout_secs),
    };
    // One thread is plenty: we wait on one server at a time.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Missing(format!("cannot start the async runtime: {e}")))?;
    match (&args.stdio, &args.config) {
        (Some(line), _) => {
            let server = args.server.as_deref().unwrap_or_default();
            run_stdio(&runtime, args, line, server, timeouts)
        }
        (None, Some(config)) => run_config(&runtime, args, config, timeouts, quiet),
        (None, None) => Err(Error::usage(
            "give --stdio \"CMD ARGS\" --server NAME, or --config FILE",
        )),
    }
}

fn run_stdio(
    runtime: &Runtime,
    args: &ImportArgs,
    line: &str,
    server: &str,
    timeouts: Timeouts,
) -> Result<ExitCode> {
    if server.trim().is_empty() {
        return Err(Error::usage("--server must not be empty"));
    }
    if args.scenario.is_some() && args.out.is_none() {
        return Err(Error::usage(
            "--scenario needs --out FILE: the scenario refers to the catalog file",
        ));
    }
    let mut command =
        ServerCommand::parse(line).map_err(|e| Error::usage(format!("--stdio: {e}")))?;
    for kv in &args.env {
        match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => command.env.push((k.to_string(), v.to_string())),
            _ => return Err(Error::usage(format!("--env {kv:?}: expected KEY=VALUE"))),
        }
    }
    let started = Instant::now();
    let result = import_one(runtime, server, &command, timeouts, args.tokenizer);
    let elapsed = started.elapsed();
    let imported = match result {
        Ok(i) => i,
        Err(f) => {
            print_failure(server, &command, &f, &Bar::hidden());
            return Ok(ExitCode::from(2));
        }
    };
    match &args.out {
        None => {
            emit(None, &imported.json)?;
            eprintln!(
                "{server}: {}, {} tokens ({}, json rendering), {} page{}, {:.1} s",
                toolbudget::number::plural(imported.tools, "tool", "tools"),
                imported.tokens,
                args.tokenizer.name(),
                imported.pages,
                if imported.pages == 1 { "" } else { "s" },
                elapsed.as_secs_f64()
            );
        }
        Some(path) => {
            write_atomic(path, imported.json.as_bytes())?;
            if let Some(note) = stem_note(server, path) {
                eprintln!("{note}");
            }
            write_scenario(
                args.scenario.as_deref(),
                &[(server.to_string(), path.clone())],
            )?;
            let report = ImportReport::new(args.tokenizer, vec![ok_row(server, &imported, path)]);
            emit(
                None,
                &toolbudget::view::catalog_import::render(&report, args.format),
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The written file's ids take the server name only when the file is read as `SERVER=FILE`;
/// read plainly, its stem names the server and the ids (part of every tool's rendering)
/// count differently. `None` when stem and server agree.
fn stem_note(server: &str, path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_string_lossy();
    (stem != server).then(|| {
        format!(
            "note: the counts above are of ids mcp__{server}__*; `count -c {}` would name the \
             server {stem:?} after the file (other ids, other counts): use `count -c {server}={}`",
            path.display(),
            path.display()
        )
    })
}

fn run_config(
    runtime: &Runtime,
    args: &ImportArgs,
    config: &Path,
    timeouts: Timeouts,
    quiet: bool,
) -> Result<ExitCode> {
    let entries = read_config(config, &|k| std::env::var(k).ok())?;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_CONFIG_OUT));
    let mut rows = Vec::with_capacity(entries.len());
    let mut written = Vec::new();
    let mut any_failed = false;
    // One line per server above the bar (name, state, tools, time); the bar says which one runs.
    let bar = Bar::new(progress::visible(quiet), "import", entries.len(), "servers");
    for ConfigEntry { name, kind } in &entries {
        bar.step(name.clone());
        match kind {
            EntryKind::Remote { transport } => {
                if !quiet {
                    bar.note(&format!(
                        "{name}: skipped ({transport} server; only stdio servers can be started)"
                    ));
                }
                rows.push(ServerReport::skipped(
                    name,
                    format!("{transport} server: only stdio servers are imported"),
                ));
            }
            EntryKind::Invalid(message) => {
                any_failed = true;
                bar.note(&format!("error: server {name:?}: {message}"));
                rows.push(ServerReport::failed(name, message.clone()));
            }
            EntryKind::Stdio(command) => {
                let path = dir.join(format!("{name}.json"));
                let (row, imported) =
                    import_to_file(runtime, args, name, command, &path, timeouts, quiet, &bar);
                rows.push(row);
                if imported {
                    written.push((name.clone(), path));
                } else {
                    any_failed = true;
                }
            }
        }
        bar.advance();
    }
    bar.finish();
    if !written.is_empty() {
        write_scenario(args.scenario.as_deref(), &written)?;
    }
    let report = ImportReport::new(args.tokenizer, rows);
    emit(
        None,
        &toolbudget::view::catalog_import::render(&report, args.format),
    )?;
    Ok(if any_failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// Imports one stdio server into `path`: its report row, and whether it was imported (a
/// failure is said on stderr, above `bar`).
#[allow(clippy::too_many_arguments)]
fn import_to_file(
    runtime: &Runtime,
    args: &ImportArgs,
    name: &str,
    command: &ServerCommand,
    path: &Path,
    timeouts: Timeouts,
    quiet: bool,
    bar: &Bar,
) -> (ServerReport, bool) {
    if !quiet {
        bar.note(&format!("{name}: starting {}", command.display()));
    }
    let started = Instant::now();
    let result = import_one(runtime, name, command, timeouts, args.tokenizer);
    match result.and_then(|i| {
        write_atomic(path, i.json.as_bytes())
            .map(|()| i)
            .map_err(|e| Failed {
                reason: e.to_string(),
                stderr_tail: Vec::new(),
            })
    }) {
        Ok(imported) => {
            if !quiet {
                bar.note(&format!(
                    "{name}: imported, {}, {} tokens in {:.1} s -> {}",
                    toolbudget::number::plural(imported.tools, "tool", "tools"),
                    imported.tokens,
                    started.elapsed().as_secs_f64(),
                    path.display()
                ));
            }
            (ok_row(name, &imported, path), true)
        }
        Err(f) => {
            bar.note(&format!(
                "{name}: failed after {:.1} s",
                started.elapsed().as_secs_f64()
            ));
            print_failure(name, command, &f, bar);
            (ServerReport::failed(name, f.reason), false)
        }
    }
}

fn import_one(
    runtime: &Runtime,
    server: &str,
    command: &ServerCommand,
    timeouts: Timeouts,
    tokenizer: Tokenizer,
) -> std::result::Result<Imported, Failed> {
    let listing = runtime
        .block_on(list_tools(command, timeouts))
        .map_err(|e: ImportError| Failed {
            reason: e.summary(),
            stderr_tail: e.stderr_tail,
        })?;
    // Validate before writing anything: a file `count` could not load is worse than none.
    let catalog = to_catalog(server, &listing.tools).map_err(|reason| Failed {
        reason,
        stderr_tail: Vec::new(),
    })?;
    let tokens = ToolTokens::compute(&catalog, tokenizer, Render::Json);
    Ok(Imported {
        json: catalog_json(&listing.tools),
        tools: catalog.len(),
        tokens: tokens.total(),
        pages: listing.pages,
        server_info: listing.server_name.map(|n| match listing.server_version {
            Some(v) if !v.is_empty() => format!("{n} {v}"),
            _ => n,
        }),
    })
}

fn ok_row(server: &str, i: &Imported, path: &Path) -> ServerReport {
    ServerReport::ok(
        server,
        i.tools,
        i.tokens,
        i.pages,
        path.display().to_string(),
        i.server_info.clone(),
    )
}

/// Writes the starter scenario when `--scenario` asked for one.
fn write_scenario(path: Option<&Path>, catalogs: &[(String, PathBuf)]) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    let name = path.file_stem().map_or_else(
        || "imported-servers".into(),
        |s| s.to_string_lossy().into_owned(),
    );
    write_atomic(path, starter_scenario(&name, path, catalogs).as_bytes())?;
    eprintln!(
        "wrote {}: compare eager and deferred loading with `toolbudget simulate {}`",
        path.display(),
        path.display()
    );
    Ok(())
}

/// `error: server "NAME" (CMD): reason`, then the end of the server's stderr, indented
/// (above `bar`, when one runs).
fn print_failure(server: &str, command: &ServerCommand, f: &Failed, bar: &Bar) {
    bar.note(&format!(
        "error: server {server:?} ({}): {}",
        command.display(),
        f.reason
    ));
    if f.stderr_tail.is_empty() {
        bar.note("  (the server wrote nothing on stderr)");
    } else {
        bar.note(&format!(
            "  last {} line{} the server wrote on stderr:",
            f.stderr_tail.len(),
            if f.stderr_tail.len() == 1 { "" } else { "s" }
        ));
        for l in &f.stderr_tail {
            bar.note(&format!("  | {l}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::stem_note;
    use std::path::Path;

    #[test]
    fn a_file_named_after_another_server_gets_a_note() {
        assert_eq!(stem_note("gh", Path::new("out/gh.json")), None);
        let note = stem_note("gh", Path::new("out/github.json")).unwrap();
        assert!(note.contains("use `count -c gh=out/github.json`"), "{note}");
    }
}
