//! One scenario replayed the way `simulate` and the report run it: calibrated when the
//! calibration file has values for its model profile and counter, then replayed eagerly and
//! deferred, with its published figures measured beside (uncalibrated: each under its
//! provider's counter).

use crate::error::Result;
use crate::simulate::calibration::{Calibration, CalibrationFile};
use crate::simulate::{self, Prepared, Scenario, ScenarioResult, ScorerBuilder, SearchTiming};

/// Replays `scenario` on `prepared` (counted by `counter`), applying `calibration`'s values
/// for its profile and counter; returns the result and the calibration applied, if any.
/// `build` makes the scorers of the published figures' variants (the scenario's own when they
/// name none).
pub fn run<'c>(
    scenario: &Scenario,
    mut prepared: Prepared,
    counter: &str,
    calibration: Option<&'c CalibrationFile>,
    timing: SearchTiming<'_>,
    build: &ScorerBuilder<'_>,
) -> Result<(ScenarioResult, Option<&'c Calibration>)> {
    let applied = calibration.and_then(|f| f.for_scenario(scenario, counter));
    if let Some(c) = applied {
        c.apply(&mut prepared);
    }
    let mut result = simulate::run_timed(scenario, &prepared, timing)?;
    result.published = simulate::published::compare(scenario, &prepared, build)?;
    Ok((result, applied))
}
