//! `toolbudget compare BASELINE.json CANDIDATE.json`: the regression check over two `eval`
//! json results. Exits 1 (`Outcome::CheckFailed`) when any scorer's `--metric` drops by more
//! than `--max-drop`, after writing the comparison.

use crate::cli::CompareArgs;
use toolbudget::error::Result;
use toolbudget::eval::compare::{CompareOptions, EvalFile, compare};
use toolbudget::output::emit;

use super::Outcome;
use super::progress::{self, Bar};

pub fn run(args: &CompareArgs, quiet: bool) -> Result<Outcome> {
    let visible = progress::visible(quiet);
    let reading = Bar::spinner(visible, "compare", "reading and verifying the two results");
    let base = EvalFile::read(&args.baseline)?;
    let candidate = EvalFile::read(&args.candidate)?;
    reading.finish();
    let options = CompareOptions {
        metric: toolbudget::eval::metrics::Metric::new(&args.metric),
        max_drop: args.max_drop,
        allow_missing: args.allow_missing.clone(),
        paired_only: args.paired_only,
        min_paired_share: args.min_paired_share,
        pairs: args.pairs.clone(),
    };
    let resampling = Bar::spinner(visible, "compare", "paired intervals and p-values");
    let comparison = compare(&base, &candidate, &options)?;
    resampling.finish();
    emit(
        args.output.out.as_deref(),
        &toolbudget::view::compare::render(&comparison, args.output.format),
    )?;
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        let summary =
            toolbudget::view::compare::render(&comparison, toolbudget::output::Format::Md);
        super::check::append(std::path::Path::new(&path), &summary)?;
    }
    if comparison.has_regression() {
        if !comparison.regressions.is_empty() {
            eprintln!(
                "regression: {} dropped by more than {} on {}",
                comparison.regression_names(),
                comparison.max_drop,
                comparison.metric
            );
        }
        if !comparison.missing.is_empty() {
            eprintln!(
                "regression: the candidate lacks {} (a scorer or metric the baseline checks; \
                 --allow-missing SCORER accepts a missing scorer)",
                comparison.missing.join(", ")
            );
        }
        for u in &comparison.unchecked {
            eprintln!("check failed: {u}");
        }
        Ok(Outcome::CheckFailed)
    } else {
        Ok(Outcome::Success)
    }
}
