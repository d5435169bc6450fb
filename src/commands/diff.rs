//! `toolbudget diff BASE.json HEAD.json`: the difference of two `simulate --format json`
//! results (`experiment::diff`). Exits 1 (`Outcome::CheckFailed`) when a scenario's deferred
//! whole-conversation input tokens grew by more than `--max-increase` percent, after writing
//! the difference.

use super::progress::Bars;
use super::{Outcome, Run};
use crate::cli::DiffArgs;
use toolbudget::error::Result;
use toolbudget::experiment::diff::{self, DiffOptions};
use toolbudget::output::{Guard, Target, emit};

impl Run for DiffArgs {
    fn guard(&self) -> Guard {
        let mut g = Guard::default();
        g.input(&self.base).input(&self.head).output(
            "--out",
            self.output.out.as_deref(),
            Target::File,
        );
        g
    }

    fn run(&self, quiet: bool) -> Result<Outcome> {
        let options = DiffOptions {
            max_increase_pct: self.max_increase,
        };
        let d = diff::run(&self.base, &self.head, &options, &Bars::new("diff", quiet))?;
        emit(
            self.output.out.as_deref(),
            &toolbudget::view::diff::render(&d, self.output.format),
        )?;
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
            let summary = toolbudget::view::diff::summary(&d);
            super::check::append(std::path::Path::new(&path), &summary)?;
        }
        if d.failed().is_empty() {
            return Ok(Outcome::Success);
        }
        eprintln!("regression: {}", toolbudget::view::diff::verdict_line(&d));
        Ok(Outcome::CheckFailed)
    }
}
