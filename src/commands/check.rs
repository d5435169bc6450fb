//! `toolbudget check`: the catalog (and its baseline) loaded, the check run, the view written;
//! with `GITHUB_STEP_SUMMARY` set, the pull-request summary appended to that file.

use std::sync::Arc;

use super::Outcome;
use crate::cli::{CatalogArgs, CheckArgs, FailOn};
use toolbudget::error::{Error, Result};
use toolbudget::experiment::check::{self, CheckClient, CheckOptions, Level};
use toolbudget::output::{emit, write_atomic};

pub fn run(args: &CheckArgs, _quiet: bool) -> Result<Outcome> {
    let catalog = Arc::new(super::load(&args.catalog)?);
    let baseline = if args.baseline.is_empty() {
        None
    } else {
        Some(Arc::new(super::load(&CatalogArgs {
            catalogs: args.baseline.clone(),
        })?))
    };
    let queries = match &args.queries {
        Some(path) => {
            let set = toolbudget::eval::queries::load_queries(path, &catalog)?;
            toolbudget::eval::queries::check_work(&set, &catalog)?;
            Some(set)
        }
        None => None,
    };
    let options = CheckOptions {
        clients: if args.client.is_empty() {
            CheckClient::defaults()
        } else {
            dedup(&args.client)
        },
        counter: args.counter,
        max_tokens: args.max_tokens,
        max_tool_tokens: args.max_tool_tokens,
        fail_on: args.fail_on.map(|f| match f {
            FailOn::Error => Level::Error,
            FailOn::Warning => Level::Warning,
        }),
    };
    let result = check::run(catalog, queries.as_ref(), baseline, &options)?;
    emit(
        args.out.as_deref(),
        &toolbudget::view::check::render(&result, args.format),
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
