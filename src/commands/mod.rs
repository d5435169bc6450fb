//! One module per subcommand: each turns parsed arguments into library calls and output.
//! This layer (with `main.rs`) is the only one that touches files, stdout and the clock.

pub mod catalog_generate;
pub mod catalog_import;
pub mod compare;
pub mod count;
pub mod eval;
pub mod report;
pub mod search;
pub mod session_import;
pub mod simulate;

use crate::catalog::{Catalog, load_catalogs, parse_catalog_arg};
use crate::cli::CatalogArgs;
use crate::error::Result;

/// How a command that ran to completion ends: `CheckFailed` (exit 1) is a result, not an
/// error — the output was written, and a check it reports (a regression) failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    CheckFailed,
}

impl From<Outcome> for std::process::ExitCode {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Success => std::process::ExitCode::SUCCESS,
            Outcome::CheckFailed => std::process::ExitCode::from(1),
        }
    }
}

pub fn load(args: &CatalogArgs) -> Result<Catalog> {
    let sources: Vec<_> = args.catalogs.iter().map(|a| parse_catalog_arg(a)).collect();
    load_catalogs(&sources)
}
