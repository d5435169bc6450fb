//! `toolbudget calibrate`: refits the anthropic-estimate counter from the observations in its
//! calibration file, prints the fit and each observation's estimate, and optionally stores it.

use super::Outcome;
use crate::cli::CalibrateArgs;
use toolbudget::counter::anthropic::Calibration;
use toolbudget::error::{Error, Result};
use toolbudget::experiment::calibrate::report;
use toolbudget::output::{emit, write_atomic};

pub fn run(args: &CalibrateArgs) -> Result<Outcome> {
    let path = &args.data;
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::input(path, None, format!("cannot read the calibration file: {e}")))?;
    let c = Calibration::parse(&text).map_err(|(at, e)| Error::input(path, at, e))?;
    let fit = c.refit().map_err(|why| Error::input(path, None, why))?;
    let mut r = report(&path.display().to_string(), &c, fit);
    if args.write {
        r.stored_fit_matches = true;
        let mut json = serde_json::to_string_pretty(&c.with_fit(fit)).expect("serializable");
        json.push('\n');
        write_atomic(path, json.as_bytes())?;
    }
    emit(None, &toolbudget::view::calibrate::render(&r, args.format))?;
    Ok(if args.check && !r.stored_fit_matches {
        Outcome::CheckFailed
    } else {
        Outcome::Success
    })
}
