//! `toolbudget calibrate`: refits the anthropic-estimate counter from the observations in its
//! calibration file (`experiment::calibrate`), prints the fit and each observation's estimate,
//! and optionally stores it.

use super::{Outcome, Run};
use crate::cli::CalibrateArgs;
use toolbudget::error::Result;
use toolbudget::output::{Guard, emit, write_atomic};

impl Run for CalibrateArgs {
    fn guard(&self) -> Guard {
        // `--write` replaces the file it reads, by design: the refit is stored in it.
        let mut g = Guard::default();
        if self.write {
            g.own("--data", &self.data);
        }
        g
    }

    fn run(&self, _quiet: bool) -> Result<Outcome> {
        let (report, new_text) = toolbudget::experiment::calibrate::run(&self.data, self.write)?;
        if let Some(text) = new_text {
            write_atomic(&self.data, text.as_bytes())?;
        }
        emit(
            None,
            &toolbudget::view::calibrate::render(&report, self.format),
        )?;
        Ok(if self.check && !report.stored_fit_matches {
            Outcome::CheckFailed
        } else {
            Outcome::Success
        })
    }
}
