//! Running: each experiment a command or the report makes, from loaded inputs to one result
//! value (`Serialize`), with time and progress injected by the caller. Nothing here prints,
//! finds files or renders; `view` turns the results into bytes.
//!
//! `report` runs every part of the report into a `ReportData` (scenarios through
//! `simulate`, evaluations through `eval`, `sweep` and `deferral` over generated catalogs,
//! sessions through `session::counterfactual`).

pub mod calibrate;
pub mod check;
pub mod clients;
pub mod count;
pub mod deferral;
pub mod eval;
pub mod report;
pub mod scenario;
pub mod search;
pub mod sweep;

/// Progress of the pipeline, shown by the command (or not).
pub trait Progress {
    /// A phase of `len` steps begins.
    fn phase(&self, what: &str, len: usize);
    /// A step begins, with what it works on.
    fn step(&self, message: &str);
    /// The current step is done.
    fn advance(&self);
    /// The phase is done.
    fn finish(&self);
}

/// No progress display.
pub struct Quiet;

impl Progress for Quiet {
    fn phase(&self, _: &str, _: usize) {}
    fn step(&self, _: &str) {}
    fn advance(&self) {}
    fn finish(&self) {}
}
