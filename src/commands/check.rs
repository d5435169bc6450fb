//! `toolbudget check`: a catalog's findability and cost for its author (`experiment::check`),
//! the view written; with `GITHUB_STEP_SUMMARY` set, the pull-request summary appended to that
//! file.

use super::progress::Bars;
use super::{Outcome, Run};
use crate::cli::{CatalogArgs, CheckArgs, FailOn};
use toolbudget::error::{Error, Result};
use toolbudget::experiment::check::{self, CheckClient, CheckOptions, CheckRequest, Level};
use toolbudget::output::{Guard, Target, emit, write_atomic};

impl Run for CheckArgs {
    fn guard(&self) -> Guard {
        let mut g = Guard::default();
        g.inputs(super::catalog_paths(&self.catalog))
            .inputs(super::catalog_paths(&self.baseline_args()))
            .inputs(self.queries.iter().cloned())
            .output("--out", self.out.as_deref(), Target::File);
        g
    }

    fn run(&self, quiet: bool) -> Result<Outcome> {
        let request = CheckRequest {
            catalog: super::catalog_sources(&self.catalog)?,
            baseline: if self.baseline.is_empty() {
                None
            } else {
                Some(super::catalog_sources(&self.baseline_args())?)
            },
            queries: self.queries.clone(),
            options: CheckOptions {
                clients: if self.client.is_empty() {
                    CheckClient::defaults()
                } else {
                    dedup(&self.client)
                },
                counter: self.counter,
                max_tokens: self.max_tokens,
                max_tool_tokens: self.max_tool_tokens,
                fail_on: self.fail_on.map(|f| match f {
                    FailOn::Error => Level::Error,
                    FailOn::Warning => Level::Warning,
                }),
            },
        };
        let result = check::run_request(&request, &Bars::new("check", quiet))?;
        emit(
            self.out.as_deref(),
            &toolbudget::view::check::render(&result, self.format),
        )?;
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
            append(
                std::path::Path::new(&path),
                &toolbudget::view::check::summary(&result),
            )?;
        }
        Ok(if result.verdict.passed {
            Outcome::Success
        } else {
            Outcome::CheckFailed
        })
    }
}

impl CheckArgs {
    /// `--baseline` read as `--catalog` is.
    fn baseline_args(&self) -> CatalogArgs {
        CatalogArgs {
            catalogs: self.baseline.clone(),
        }
    }
}

/// The clients in the order given, each once.
fn dedup(clients: &[CheckClient]) -> Vec<CheckClient> {
    let mut out: Vec<CheckClient> = Vec::new();
    for c in clients {
        if !out.contains(c) {
            out.push(*c);
        }
    }
    out
}

/// The step summary file with `text` after what earlier steps wrote, written whole.
pub(super) fn append(path: &std::path::Path, text: &str) -> Result<()> {
    let mut bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(Error::usage(format!(
                "GITHUB_STEP_SUMMARY {}: cannot read: {e}",
                path.display()
            )));
        }
    };
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(text.as_bytes());
    write_atomic(path, &bytes)
}
