//! The process as a whole: what an interruption (SIGINT, SIGTERM, SIGHUP) does. It kills the
//! process groups of the children we started and removes the temporary paths of writes still
//! under way (registered here by `output`), then exits with `128 + signal`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Temporary paths (files and folders) that exist only until a write completes. An interrupted
/// run removes them before it exits, so no `.tmpXXXX` is ever left behind. The lock is also held
/// while a finished write is renamed into place, so an interruption sees either the old output
/// or the new one, never half of a swap.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

pub(crate) fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(crate) fn forget(list: &mut Vec<PathBuf>, path: &Path) {
    list.retain(|p| p != path);
}

/// Removes every pending temporary path, then exits with `128 + signal` (130 for SIGINT). Runs
/// on its own thread (signal-hook delivers the signal there), never inside a signal handler.
fn clean_up_and_exit(signal: i32) -> ! {
    // Writers stop creating files first, or a folder could refill while it is being removed.
    INTERRUPTED.store(true, Ordering::SeqCst);
    kill_child_groups();
    let list = pending();
    for p in list.iter() {
        // Best effort, a few times: a writer may still finish the file it was writing.
        for _ in 0..50 {
            let gone = std::fs::remove_dir_all(p)
                .or_else(|_| std::fs::remove_file(p))
                .is_ok()
                || std::fs::symlink_metadata(p).is_err();
            if gone {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
    eprintln!("error: interrupted (signal {signal}); partial output removed");
    std::process::exit(128 + signal);
}

/// Process groups of the children we started (external scorers): an interruption kills them,
/// since they run in groups of their own and the terminal's SIGINT does not reach them.
static CHILD_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Adds a child's process group to those an interruption kills.
pub fn register_child_group(pgid: i32) {
    CHILD_GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(pgid);
}

/// Removes a process group the caller has killed and reaped.
pub fn release_child_group(pgid: i32) {
    CHILD_GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .retain(|&g| g != pgid);
}

fn kill_child_groups() {
    #[cfg(unix)]
    for &g in CHILD_GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
    {
        // SAFETY: killpg only sends a signal to a group we created and have not reaped.
        unsafe {
            libc::killpg(g, libc::SIGKILL);
        }
    }
}

/// Set once an interruption is being handled: writers stop.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether an interruption is being handled (a writer stops before its next file).
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Installs the SIGINT/SIGTERM/SIGHUP handling that removes pending temporary files. Call once at
/// start; without it an interrupted write can leave a temporary file beside its target (the
/// target itself is never damaged either way).
pub fn install_interrupt_cleanup() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            std::thread::spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    clean_up_and_exit(signal);
                }
            });
        }
    }
}
