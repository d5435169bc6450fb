//! Progress of long work: the one trait every long loop of the library reports to. The binary
//! draws it (a bar on a terminal) or not; the library only reports, from any thread.

/// What a phase counts, for the display: items of a kind (`queries`, `tools`, `scenarios`),
/// bytes read, or nothing countable (a spinner).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Items(&'static str),
    Bytes,
    Spinner,
}

/// Progress of the work a call does, shown by the caller (or not).
pub trait Progress: Send + Sync {
    /// A phase of `len` units begins (`what` names it: a scorer, `simulate`, `indexing`).
    fn phase(&self, what: &str, len: u64, unit: Unit);
    /// What the phase works on now.
    fn step(&self, message: &str);
    /// `n` more units are done.
    fn advance(&self, n: u64);
    /// A line for the user while the work runs, never lost under a display (`--quiet` hides
    /// it).
    fn note(&self, line: &str);
    /// A line that is a result, not progress (a server that failed): shown even when notes
    /// are hidden.
    fn warn(&self, line: &str);
    /// The phase is done.
    fn finish(&self);
}

/// No display, and no notes: for tests and for work whose caller shows nothing.
pub struct Quiet;

impl Progress for Quiet {
    fn phase(&self, _: &str, _: u64, _: Unit) {}
    fn step(&self, _: &str) {}
    fn advance(&self, _: u64) {}
    fn note(&self, _: &str) {}
    fn warn(&self, _: &str) {}
    fn finish(&self) {}
}

/// A shared handle on a progress display, for settings that are cloned (a scorer's
/// configuration): it reports where the work happens, however deep.
#[derive(Clone)]
pub struct Shared(pub std::sync::Arc<dyn Progress>);

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("progress::Shared")
    }
}

impl std::ops::Deref for Shared {
    type Target = dyn Progress;
    fn deref(&self) -> &Self::Target {
        self.0.as_ref()
    }
}

/// Files read during a phase over their bytes, from any thread: each finished file advances
/// the phase by its bytes and says how many of the `files` are done.
pub struct FileCounter<'a> {
    progress: &'a dyn Progress,
    done: std::sync::atomic::AtomicUsize,
    files: usize,
}

impl<'a> FileCounter<'a> {
    /// Begins a phase `what` over `bytes` bytes in `files` files.
    pub fn begin(progress: &'a dyn Progress, what: &str, bytes: u64, files: usize) -> Self {
        progress.phase(what, bytes, Unit::Bytes);
        FileCounter {
            progress,
            done: std::sync::atomic::AtomicUsize::new(0),
            files,
        }
    }

    /// One more file of `bytes` bytes is done.
    pub fn file_done(&self, bytes: u64) {
        let k = self.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        self.progress.advance(bytes);
        self.progress.step(&format!("{k}/{} files", self.files));
    }

    /// The phase is done.
    pub fn finish(&self) {
        self.progress.finish();
    }
}
