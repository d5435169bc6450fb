//! The regression gate between two `eval` results: both read and verified, then compared with
//! paired intervals and tests (`eval::compare`).

use std::path::Path;

use crate::error::Result;
pub use crate::eval::compare::{CompareOptions, Comparison};
use crate::eval::compare::{EvalFile, compare};
pub use crate::eval::metrics::Metric;
use crate::progress::{Progress, Unit};

/// Reads and verifies both results, then compares them.
pub fn run(
    baseline: &Path,
    candidate: &Path,
    options: &CompareOptions,
    progress: &dyn Progress,
) -> Result<Comparison> {
    progress.phase("compare", 0, Unit::Spinner);
    progress.step("reading and verifying the two results");
    let base = EvalFile::read(baseline)?;
    let candidate = EvalFile::read(candidate)?;
    progress.finish();
    progress.phase("compare", 0, Unit::Spinner);
    progress.step("paired intervals and p-values");
    let comparison = compare(&base, &candidate, options);
    progress.finish();
    comparison
}
