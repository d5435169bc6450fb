//! `toolbudget compare BASELINE.json CANDIDATE.json`: the regression check over two `eval`
//! json results (`experiment::compare`). Exits 1 (`Outcome::CheckFailed`) when any scorer's
//! `--metric` drops by more than `--max-drop`, after writing the comparison.

use super::progress::Bars;
use super::{Outcome, Run};
use crate::cli::CompareArgs;
use toolbudget::error::Result;
use toolbudget::experiment::compare::{self, CompareOptions, Metric};
use toolbudget::output::{Guard, Target, emit};

impl Run for CompareArgs {
    fn guard(&self) -> Guard {
        let mut g = Guard::default();
        g.input(&self.baseline).input(&self.candidate).output(
            "--out",
            self.output.out.as_deref(),
            Target::File,
        );
        g
    }

    fn run(&self, quiet: bool) -> Result<Outcome> {
        let options = CompareOptions {
            metric: Metric::new(&self.metric),
            max_drop: self.max_drop,
            allow_missing: self.allow_missing.clone(),
            paired_only: self.paired_only,
            min_paired_share: self.min_paired_share,
            pairs: self.pairs.clone(),
        };
        let comparison = compare::run(
            &self.baseline,
            &self.candidate,
            &options,
            &Bars::new("compare", quiet),
        )?;
        emit(
            self.output.out.as_deref(),
            &toolbudget::view::compare::render(&comparison, self.output.format),
        )?;
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
            let summary = toolbudget::view::compare::summary(&comparison);
            super::check::append(std::path::Path::new(&path), &summary)?;
        }
        if !comparison.has_regression() {
            return Ok(Outcome::Success);
        }
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
    }
}
