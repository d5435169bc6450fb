//! Progress on stderr, one look for every command: a bar over steps (queries, scenarios,
//! servers, files, tools), over bytes, or a spinner for one long step. Shown only when stderr
//! is a terminal and `--quiet` is not given ([`visible`]), never on stdout. A line printed
//! while a bar runs goes above it ([`Bar::note`]), not after the bar's last character; with
//! the bar hidden it is a plain stderr line.
//!
//! A hidden bar still counts (position, length, message), so the counting is tested without
//! a terminal.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use toolbudget::progress::{Progress, Unit};

/// Bars are drawn only on a terminal, and never with `--quiet`.
pub fn visible(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// One progress display on stderr (or none, counting all the same).
pub struct Bar {
    bar: ProgressBar,
    visible: bool,
}

impl Bar {
    /// A bar over `len` steps of `unit` (`queries`, `scenarios`, `servers`, `tools`).
    pub fn new(visible: bool, prefix: &str, len: usize, unit: &str) -> Bar {
        let template = format!(
            "{{prefix:>12}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{rate}} {{elapsed}} (eta {{eta}}) {{msg}}"
        );
        Bar::with(visible, prefix, len as u64, &template)
    }

    /// A bar over `total` bytes (files read), its message saying how many files are done.
    pub fn bytes(visible: bool, prefix: &str, total: u64) -> Bar {
        Bar::with(
            visible,
            prefix,
            total,
            "{prefix:>12} [{bar:30}] {bytes}/{total_bytes} {msg} {elapsed}",
        )
    }

    /// A spinner for one step that cannot count its parts (a comparison's resamples).
    pub fn spinner(visible: bool, prefix: &str, message: &str) -> Bar {
        let b = Bar::with(visible, prefix, 0, "{prefix:>12} {spinner} {msg} {elapsed}");
        b.bar.set_length(0);
        b.step(message);
        if visible {
            b.bar.enable_steady_tick(Duration::from_millis(120));
        }
        b
    }

    /// Nothing drawn, nothing counted that anyone sees.
    pub fn hidden() -> Bar {
        Bar::with(false, "", 0, "{msg}")
    }

    fn with(visible: bool, prefix: &str, len: u64, template: &str) -> Bar {
        let target = if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(len), target);
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("the template is valid")
                .with_key("rate", rate_key)
                .progress_chars("=> "),
        );
        bar.set_prefix(prefix.to_string());
        Bar { bar, visible }
    }

    /// What the current step works on.
    pub fn step(&self, message: impl Into<String>) {
        self.bar.set_message(message.into());
    }

    /// `n` more steps (or bytes) done.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// A line for the user while the bar runs: above the bar, or a plain stderr line when the
    /// bar is hidden. The caller decides whether `--quiet` silences it.
    pub fn note(&self, line: &str) {
        if self.visible {
            self.bar.println(line);
        } else {
            eprintln!("{line}");
        }
    }

    /// The bar goes away from the screen.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    #[cfg(test)]
    pub fn position(&self) -> u64 {
        self.bar.position()
    }

    #[cfg(test)]
    pub fn length(&self) -> u64 {
        self.bar.length().unwrap_or(0)
    }

    #[cfg(test)]
    pub fn message(&self) -> String {
        self.bar.message()
    }
}

/// A bar left behind by an error goes away too, so the `error:` line starts a line of its own.
impl Drop for Bar {
    fn drop(&mut self) {
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
        }
    }
}

/// A progress bar's rate as a whole number per second (`1006/s`): indicatif's `{per_sec}`
/// prints four decimals after a thousands comma (`1,006.1715/s`).
fn rate_key(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = write!(w, "{}/s", rate_text(state.per_sec()));
}

/// `1006`, `3.5` below ten, `0` for no rate yet.
pub fn rate_text(per_sec: f64) -> String {
    if !per_sec.is_finite() || per_sec <= 0.0 {
        "0".into()
    } else if per_sec < 10.0 {
        format!("{per_sec:.1}")
    } else {
        format!("{per_sec:.0}")
    }
}

/// The library's progress (`toolbudget::progress::Progress`) drawn on stderr: one bar per
/// phase, replaced when the next phase begins. With `log` set, a hidden display writes one
/// plain line per phase instead (`eval: bm25 over 95 queries`), so a log shows what ran.
pub struct Bars {
    command: &'static str,
    visible: bool,
    quiet: bool,
    log: bool,
    bar: std::sync::RwLock<Bar>,
}

impl Bars {
    /// The display of `command` (visible per [`visible`]), silent with `quiet`.
    pub fn new(command: &'static str, quiet: bool) -> Bars {
        Bars {
            command,
            visible: visible(quiet),
            quiet,
            log: false,
            bar: std::sync::RwLock::new(Bar::hidden()),
        }
    }

    /// As [`Bars::new`], writing a line per phase when no bar is drawn.
    pub fn logging(command: &'static str, quiet: bool) -> Bars {
        Bars {
            log: true,
            ..Bars::new(command, quiet)
        }
    }

    fn with(&self, f: impl FnOnce(&Bar)) {
        if let Ok(bar) = self.bar.read() {
            f(&bar);
        }
    }
}

impl Progress for Bars {
    fn phase(&self, what: &str, len: u64, unit: Unit) {
        let bar = match unit {
            Unit::Items(unit) => Bar::new(self.visible, what, len as usize, unit),
            Unit::Bytes => Bar::bytes(self.visible, what, len),
            Unit::Spinner => Bar::spinner(self.visible, what, ""),
        };
        if self.log && !self.visible && !self.quiet {
            match unit {
                Unit::Items(unit) => eprintln!("{}: {what} over {len} {unit}", self.command),
                Unit::Bytes | Unit::Spinner => eprintln!("{}: {what}", self.command),
            }
        }
        if let Ok(mut current) = self.bar.write() {
            *current = bar;
        }
    }
    fn step(&self, message: &str) {
        self.with(|b| b.step(message));
    }
    fn advance(&self, n: u64) {
        self.with(|b| b.inc(n));
    }
    fn note(&self, line: &str) {
        if !self.quiet {
            self.with(|b| b.note(line));
        }
    }
    fn warn(&self, line: &str) {
        self.with(|b| b.note(line));
    }
    fn finish(&self) {
        self.with(Bar::finish);
    }
}

#[cfg(test)]
mod tests {
    use super::{Bar, Bars, rate_text};
    use toolbudget::progress::{Progress, Unit};

    #[test]
    fn progress_rates_print_without_thousands_commas_or_four_decimals() {
        assert_eq!(rate_text(1006.1715), "1006");
        assert_eq!(rate_text(3.52), "3.5");
        assert_eq!(rate_text(0.0), "0");
        assert_eq!(rate_text(f64::NAN), "0");
    }

    #[test]
    fn a_hidden_bar_counts_steps_and_keeps_its_message() {
        let bar = Bar::new(false, "simulate", 3, "scenarios");
        assert_eq!((bar.position(), bar.length()), (0, 3));
        bar.step("ten-servers");
        bar.inc(1);
        bar.inc(1);
        assert_eq!(bar.position(), 2);
        assert_eq!(bar.message(), "ten-servers");
        // Finished, the bar is full (and gone from the screen).
        bar.finish();
        assert_eq!(bar.position(), 3);
    }

    #[test]
    fn bars_count_bytes_and_steps_from_many_threads() {
        let bars = Bars::new("test", true);
        bars.phase("indexing", 1000, Unit::Bytes);
        let files = toolbudget::progress::FileCounter::begin(&bars, "indexing", 1000, 3);
        files.file_done(400);
        files.file_done(100);
        bars.with(|b| {
            assert_eq!(b.position(), 500);
            assert_eq!(b.message(), "2/3 files");
        });
        bars.phase("counting", 1000, Unit::Items("tools"));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| (0..250).for_each(|_| bars.advance(1)));
            }
        });
        bars.with(|b| assert_eq!((b.position(), b.length()), (1000, 1000)));
    }

    #[test]
    fn a_spinner_has_no_length_and_shows_its_message() {
        let bar = Bar::spinner(false, "compare", "verifying the baseline");
        assert_eq!(bar.length(), 0);
        assert_eq!(bar.message(), "verifying the baseline");
    }
}
