//! `toolbudget session import PATH... [--catalog C]... [--out DIR]`: reads session logs, writes
//! one scenario per session (plus its bill and the fitted calibration) and prints billed vs
//! modeled input per session.

use std::path::PathBuf;

use super::progress::Bars;
use super::{Outcome, Run};
use crate::cli::SessionImportArgs;
use toolbudget::error::{Error, Result};
use toolbudget::experiment::session_import::{
    self, Filter, ImportOptions, ImportRequest, LogFormat, default_roots, discover,
};
use toolbudget::experiment::{builtin, parse_catalog_arg};
use toolbudget::output::{Guard, Target, add_files, check_add_to, emit, write_atomic};
use toolbudget::view::session_import::{notes, render};

/// The note that no `--catalog` was given: which built-in catalog stands in for each format.
fn builtins_note(args: &SessionImportArgs, builtins: &[(LogFormat, Option<PathBuf>); 2]) {
    if !args.catalogs.is_empty() {
        return;
    }
    for (f, p) in builtins {
        if let Some(p) = p {
            eprintln!(
                "note: no --catalog given: {} tools looked up in {} (embedded)",
                f.name(),
                p.display()
            );
        }
    }
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

impl Run for SessionImportArgs {
    fn guard(&self) -> Guard {
        // Files are added beside the sessions (other names): only a session file itself must
        // not be the folder's path.
        let mut g = Guard::default();
        g.inputs(self.paths.iter().filter(|p| p.is_file()).cloned())
            .inputs(self.catalogs.iter().map(|c| parse_catalog_arg(c).path))
            .output("--out", self.out.as_deref(), Target::AddTo)
            .output("--queries-out", self.queries_out.as_deref(), Target::File);
        g
    }

    fn run(&self, quiet: bool) -> Result<Outcome> {
        let paths = session_paths(self, quiet)?;
        let files = discover(&paths)?;
        if files.is_empty() {
            return Err(Error::usage(
                "no session files (*.jsonl) under the given paths".to_string(),
            ));
        }
        // The folder is made before the work and removed again, if this run made it and left
        // it empty, when the import fails (an interruption does the same).
        let (made, dir) = match &self.out {
            Some(d) => (
                toolbudget::output::make_out_dir(d)?.then(|| d.clone()),
                d.clone(),
            ),
            None => (None, PathBuf::from(".")),
        };
        let outcome = self.import_into(quiet, files, dir);
        if outcome.is_err()
            && let Some(d) = made
        {
            // Only an empty folder goes: remove_dir refuses anything else.
            let _ = std::fs::remove_dir(d);
        }
        outcome.map(|()| Outcome::Success)
    }
}

impl SessionImportArgs {
    /// The import once its output folder exists.
    fn import_into(&self, quiet: bool, files: Vec<PathBuf>, dir: PathBuf) -> Result<()> {
        let builtins = [
            (
                LogFormat::ClaudeCode,
                Some(PathBuf::from(builtin::CLAUDE_CODE)),
            ),
            (LogFormat::Codex, Some(PathBuf::from(builtin::CODEX))),
        ];
        if !quiet {
            builtins_note(self, &builtins);
        }
        // A log found under the folders may bear a name the import writes (queries.jsonl).
        let logs: Vec<PathBuf> = files.iter().filter_map(|f| f.canonicalize().ok()).collect();
        // The guard knows the files given; a log found inside a folder is checked here.
        if let Some(q) = &self.queries_out
            && q.canonicalize().is_ok_and(|t| logs.contains(&t))
        {
            return Err(Error::usage(format!(
                "--queries-out {}: is one of this command's inputs (a session log it reads); \
                 write the result elsewhere",
                q.display()
            )));
        }
        let request = ImportRequest {
            files,
            catalogs: self
                .catalogs
                .iter()
                .map(String::as_str)
                .map(parse_catalog_arg)
                .collect(),
            builtins,
            filter: Filter {
                since: self.since.clone(),
                until: self.until.clone(),
                project: self.project.clone(),
            },
            options: ImportOptions {
                keep_text: self.keep_text,
                skip_bad_lines: self.skip_bad_lines,
                allow_unknown_tools: self.allow_unknown_tools,
            },
            dir,
            written: self.out.is_some(),
        };
        // Every import writes calibration.json: a user's own one is refused before the work.
        if let Some(out) = &self.out {
            check_add_to(out, &[session_import::CALIBRATION_FILE])?;
        }
        let result = session_import::run(&request, &Bars::new("session import", quiet))?;
        if let Some(out) = &self.out {
            // Checked before the first write: all the files are written, or none.
            for name in &result.files {
                let target = out.join(name);
                if target.canonicalize().is_ok_and(|t| logs.contains(&t)) {
                    return Err(Error::usage(format!(
                        "--out {}: {name} is one of this command's inputs (a session log it \
                         read); write to another folder",
                        out.display()
                    )));
                }
            }
            // A file already there is replaced only when toolbudget wrote it (the folder's
            // list says so); a user's own calibration.json is refused, before any is written.
            // One file's text in memory at a time.
            let names: Vec<&str> = result.files.iter().map(String::as_str).collect();
            add_files(out, &names, |name| result.file_text(name))?;
        }
        if let Some(q) = &self.queries_out {
            write_atomic(q, session_import::queries_jsonl(&result).as_bytes())?;
        }
        if !quiet {
            for n in notes(&result.summary) {
                eprintln!("note: {n}");
            }
        }
        emit(None, &render(&result.summary, self.format))
    }
}
