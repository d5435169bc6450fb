//! `toolbudget catalog import`: snapshots the tools of real MCP servers into catalog files
//! (`experiment::catalog_import`).
//!
//! `--stdio "CMD ARGS" --server NAME [--out FILE]` imports one server; without `--out` the
//! catalog goes to stdout and the summary to stderr. `--config FILE [--out DIR]` imports every
//! stdio server of a Claude Code / Claude Desktop config into `DIR/<server>.json`, one after
//! another; a failing server is reported and the rest still run. Exit 0 when every stdio
//! server was imported, 2 when any failed (remote servers are skipped, not failures).

use std::path::{Path, PathBuf};

use crate::cli::ImportArgs;
use crate::commands::progress::Bars;
use crate::commands::{Outcome, Run};
use toolbudget::error::{Error, Result};
use toolbudget::experiment::catalog_import::{
    ImportReport, ImportSettings, config_files, failure_lines, import_config, import_stdio, ok_row,
    starter_scenario,
};
use toolbudget::output::{Guard, Target, add_files, check_add_to, emit, write_atomic};

/// Default folder for `--config` snapshots.
pub const DEFAULT_CONFIG_OUT: &str = "catalogs";

impl Run for ImportArgs {
    fn guard(&self) -> Guard {
        let mut g = Guard::default();
        g.inputs(self.config.iter().cloned())
            .output(
                "--out",
                self.out.as_deref(),
                if self.config.is_some() {
                    Target::AddTo
                } else {
                    Target::File
                },
            )
            .output("--scenario", self.scenario.as_deref(), Target::File);
        g
    }

    fn run(&self, quiet: bool) -> Result<Outcome> {
        let settings = ImportSettings {
            start_timeout_secs: self.start_timeout_secs.unwrap_or(self.timeout_secs),
            timeout_secs: self.timeout_secs,
            tokenizer: self.tokenizer,
        };
        match (&self.stdio, &self.config) {
            (Some(line), _) => self.run_stdio(line, &settings),
            (None, Some(config)) => self.run_config(config, &settings, quiet),
            (None, None) => Err(Error::usage(
                "give --stdio \"CMD ARGS\" --server NAME, or --config FILE",
            )),
        }
    }
}

impl ImportArgs {
    fn run_stdio(&self, line: &str, settings: &ImportSettings) -> Result<Outcome> {
        let server = self.server.as_deref().unwrap_or_default();
        if self.scenario.is_some() && self.out.is_none() {
            return Err(Error::usage(
                "--scenario needs --out FILE: the scenario refers to the catalog file",
            ));
        }
        let (command, result) = import_stdio(line, server, &self.env, settings)?;
        let imported = match result {
            Ok(i) => i,
            Err(f) => {
                for l in failure_lines(server, &command, &f) {
                    eprintln!("{l}");
                }
                return Ok(Outcome::Failed);
            }
        };
        match &self.out {
            None => {
                emit(None, &imported.json)?;
                eprintln!(
                    "{server}: {}, {} tokens ({}, json rendering), {} page{}, {:.1} s",
                    toolbudget::number::plural(imported.tools, "tool", "tools"),
                    imported.tokens,
                    self.tokenizer.name(),
                    imported.pages,
                    if imported.pages == 1 { "" } else { "s" },
                    imported.seconds
                );
            }
            Some(path) => {
                write_atomic(path, imported.json.as_bytes())?;
                if let Some(note) = stem_note(server, path) {
                    eprintln!("{note}");
                }
                write_scenario(
                    self.scenario.as_deref(),
                    &[(server.to_string(), path.clone())],
                )?;
                let report =
                    ImportReport::new(self.tokenizer, vec![ok_row(server, &imported, path)]);
                emit(
                    None,
                    &toolbudget::view::catalog_import::render(&report, self.format),
                )?;
            }
        }
        Ok(Outcome::Success)
    }

    fn run_config(&self, config: &Path, settings: &ImportSettings, quiet: bool) -> Result<Outcome> {
        let dir = self
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_CONFIG_OUT));
        // Checked for every server before any starts: a server named like the config file
        // (`x.mcp` for `x.mcp.json`) would replace it, and a `<server>.json` already in the
        // folder is replaced only when toolbudget wrote it there (its list of files says so).
        let names = config_files(config)?;
        let config_file = config.canonicalize().ok();
        for name in &names {
            let path = dir.join(name);
            if config_file.is_some() && path.canonicalize().ok() == config_file {
                return Err(Error::usage(format!(
                    "{}: is the config this command reads; import into another --out folder",
                    path.display()
                )));
            }
        }
        check_add_to(&dir, &names.iter().map(String::as_str).collect::<Vec<_>>())?;
        // One line per server above the bar (name, state, tools, time); the bar says which one
        // runs. Failures are said even with --quiet.
        let bars = Bars::new("import", quiet);
        let done = import_config(config, &dir, settings, &bars, &mut |path, imported| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            add_files(&dir, &[name.as_deref().unwrap_or_default()], |_| {
                Ok(imported.json.as_bytes())
            })
        })?;
        if !done.written.is_empty() {
            write_scenario(self.scenario.as_deref(), &done.written)?;
        }
        emit(
            None,
            &toolbudget::view::catalog_import::render(&done.report, self.format),
        )?;
        Ok(if done.any_failed {
            Outcome::Failed
        } else {
            Outcome::Success
        })
    }
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
