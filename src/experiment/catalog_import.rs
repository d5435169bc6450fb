//! `catalog import`: the tools of real MCP servers we start over stdio, listed (every page) and
//! validated into catalogs. One server ([`import_stdio`]) or every stdio server of a config
//! ([`import_config`]); each imported catalog is handed to the caller's `keep` as soon as it is
//! listed (the command writes it), so a later failure loses nothing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::counter::ToolTokens;
use crate::error::{Error, Result};
pub use crate::mcp::report::{ImportReport, ServerReport};
pub use crate::mcp::scenario::starter_scenario;
use crate::mcp::{
    ConfigEntry, EntryKind, ImportError, ServerCommand, Timeouts, catalog_json, list_tools,
    read_config, to_catalog,
};
use crate::output::terminal_line;
use crate::progress::{Progress, Unit};
use crate::tokenize::{Render, Tokenizer};

/// How servers are started and counted.
#[derive(Debug, Clone)]
pub struct ImportSettings {
    /// Seconds to wait for a server to start, and for each answer.
    pub start_timeout_secs: f64,
    pub timeout_secs: f64,
    pub tokenizer: Tokenizer,
}

/// A server imported: its catalog as JSON and what the summary says of it.
pub struct Imported {
    pub json: String,
    pub tools: usize,
    pub tokens: usize,
    pub pages: usize,
    pub server_info: Option<String>,
    pub seconds: f64,
}

/// A server that failed: the one-line reason and the end of its stderr.
pub struct Failed {
    pub reason: String,
    pub stderr_tail: Vec<String>,
    pub seconds: f64,
}

/// One runtime for every server of a run: we wait on one server at a time.
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Missing(format!("cannot start the async runtime: {e}")))
}

fn timeouts(s: &ImportSettings) -> Timeouts {
    Timeouts {
        start: Duration::from_secs_f64(s.start_timeout_secs),
        request: Duration::from_secs_f64(s.timeout_secs),
    }
}

/// `--stdio "CMD ARGS" --server NAME`: the one server, with `env` (`KEY=VALUE`) added.
pub fn import_stdio(
    line: &str,
    server: &str,
    env: &[String],
    settings: &ImportSettings,
) -> Result<(ServerCommand, std::result::Result<Imported, Failed>)> {
    if server.trim().is_empty() {
        return Err(Error::usage("--server must not be empty"));
    }
    if let Some(problem) = crate::catalog::server_name_problem(server) {
        return Err(Error::usage(format!("--server: {problem}")));
    }
    let mut command =
        ServerCommand::parse(line).map_err(|e| Error::usage(format!("--stdio: {e}")))?;
    for kv in env {
        match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => command.env.push((k.to_string(), v.to_string())),
            _ => return Err(Error::usage(format!("--env {kv:?}: expected KEY=VALUE"))),
        }
    }
    let runtime = runtime()?;
    let result = import_one(&runtime, server, &command, settings);
    Ok((command, result))
}

/// What a config's import did: its report, the catalogs written (by server), whether any
/// server failed.
pub struct ConfigImport {
    pub report: ImportReport,
    pub written: Vec<(String, PathBuf)>,
    pub any_failed: bool,
}

/// The files a `--config` import would write into its folder: `<server>.json` of every stdio
/// server, so the command can refuse, before any server starts, to replace one it did not
/// write.
pub fn config_files(config: &Path) -> Result<Vec<String>> {
    Ok(read_config(config, &|k| std::env::var(k).ok())?
        .into_iter()
        .filter(|e| matches!(e.kind, EntryKind::Stdio(_)))
        .map(|e| format!("{}.json", e.name))
        .collect())
}

/// `--config FILE`: every stdio server of the config imported into `DIR/<server>.json` (`keep`
/// writes each as it is listed); remote servers skipped, failures reported and the rest still
/// run.
pub fn import_config(
    config: &Path,
    dir: &Path,
    settings: &ImportSettings,
    progress: &dyn Progress,
    keep: &mut dyn FnMut(&Path, &Imported) -> Result<()>,
) -> Result<ConfigImport> {
    let entries = read_config(config, &|k| std::env::var(k).ok())?;
    let runtime = runtime()?;
    let mut rows = Vec::with_capacity(entries.len());
    let mut written = Vec::new();
    let mut any_failed = false;
    progress.phase("import", entries.len() as u64, Unit::Items("servers"));
    for ConfigEntry { name, kind } in &entries {
        progress.step(name);
        match kind {
            EntryKind::Remote { transport } => {
                progress.note(&format!(
                    "{name}: skipped ({transport} server; only stdio servers can be started)"
                ));
                rows.push(ServerReport::skipped(
                    name,
                    format!("{transport} server: only stdio servers are imported"),
                ));
            }
            EntryKind::Invalid(message) => {
                any_failed = true;
                progress.warn(&format!("error: server {name:?}: {message}"));
                rows.push(ServerReport::failed(name, message.clone()));
            }
            EntryKind::Stdio(command) => {
                let path = dir.join(format!("{name}.json"));
                progress.note(&format!("{name}: starting {}", command.display()));
                let result = import_one(&runtime, name, command, settings).and_then(|i| {
                    keep(&path, &i).map(|()| i).map_err(|e| Failed {
                        reason: e.to_string(),
                        stderr_tail: Vec::new(),
                        seconds: 0.0,
                    })
                });
                match result {
                    Ok(imported) => {
                        progress.note(&format!(
                            "{name}: imported, {}, {} tokens in {:.1} s -> {}",
                            crate::number::plural(imported.tools, "tool", "tools"),
                            imported.tokens,
                            imported.seconds,
                            path.display()
                        ));
                        rows.push(ok_row(name, &imported, &path));
                        written.push((name.clone(), path));
                    }
                    Err(f) => {
                        progress.warn(&format!("{name}: failed after {:.1} s", f.seconds));
                        for line in failure_lines(name, command, &f) {
                            progress.warn(&line);
                        }
                        rows.push(ServerReport::failed(name, f.reason));
                        any_failed = true;
                    }
                }
            }
        }
        progress.advance(1);
    }
    progress.finish();
    Ok(ConfigImport {
        report: ImportReport::new(settings.tokenizer, rows),
        written,
        any_failed,
    })
}

fn import_one(
    runtime: &tokio::runtime::Runtime,
    server: &str,
    command: &ServerCommand,
    settings: &ImportSettings,
) -> std::result::Result<Imported, Failed> {
    let started = Instant::now();
    let failed = |reason: String, stderr_tail: Vec<String>| Failed {
        reason,
        stderr_tail,
        seconds: started.elapsed().as_secs_f64(),
    };
    // The server's words (its JSON-RPC error text, stderr lines, name) reach the terminal:
    // each one line, escaped and bounded.
    let listing = runtime
        .block_on(list_tools(command, timeouts(settings)))
        .map_err(|e: ImportError| {
            let tail = e.stderr_tail.iter().map(|l| terminal_line(l)).collect();
            failed(terminal_line(&e.summary()), tail)
        })?;
    // Validate before writing anything: a file `count` could not load is worse than none.
    let catalog = to_catalog(server, &listing.tools)
        .map_err(|reason| failed(terminal_line(&reason), Vec::new()))?;
    let tokens = ToolTokens::compute(&catalog, settings.tokenizer, Render::Json);
    Ok(Imported {
        json: catalog_json(&listing.tools),
        tools: catalog.len(),
        tokens: tokens.total(),
        pages: listing.pages,
        server_info: listing.server_name.map(|n| match listing.server_version {
            Some(v) if !v.is_empty() => terminal_line(&format!("{n} {v}")),
            _ => terminal_line(&n),
        }),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The summary row of an imported server.
pub fn ok_row(server: &str, i: &Imported, path: &Path) -> ServerReport {
    ServerReport::ok(
        server,
        i.tools,
        i.tokens,
        i.pages,
        path.display().to_string(),
        i.server_info.clone(),
    )
}

/// `error: server "NAME" (CMD): reason`, then the end of the server's stderr, indented.
pub fn failure_lines(server: &str, command: &ServerCommand, f: &Failed) -> Vec<String> {
    let mut out = vec![format!(
        "error: server {server:?} ({}): {}",
        command.display(),
        f.reason
    )];
    if f.stderr_tail.is_empty() {
        out.push("  (the server wrote nothing on stderr)".into());
    } else {
        out.push(format!(
            "  last {} line{} the server wrote on stderr:",
            f.stderr_tail.len(),
            if f.stderr_tail.len() == 1 { "" } else { "s" }
        ));
        out.extend(f.stderr_tail.iter().map(|l| format!("  | {l}")));
    }
    out
}
