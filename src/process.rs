//! The process as a whole: what an interruption (SIGINT, SIGTERM, SIGHUP) does. It kills the
//! process groups of the children we started and removes the temporary paths of writes still
//! under way (registered here by `output`), then exits with `128 + signal`. And no process we
//! started outlives us: on Linux the binary is a child subreaper, so a descendant that left
//! its process group (a `setsid()` grandchild of an external scorer or an MCP server) becomes
//! our child when its parent ends, and is ended with the run.

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

/// Output folders this run made before its work: an interruption removes each one it left
/// empty (a folder holding anything is kept: `remove_dir` refuses it).
static MADE_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Makes an output folder and records it, for [`clean_up_and_exit`], under the lock that
/// function takes: an interruption between the two (the folder made, not yet recorded) left it
/// behind.
pub(crate) fn make_dir(path: &Path) -> std::io::Result<()> {
    let mut made = MADE_DIRS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    std::fs::create_dir_all(path)?;
    made.push(path.to_path_buf());
    Ok(())
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
    for d in MADE_DIRS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
    {
        let _ = std::fs::remove_dir(d);
    }
    end_descendants();
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

/// Waits for the interruption being handled to end the process (with 128 + signal, its
/// partial output removed). A writer that returned an error instead raced that exit and could
/// end the run with exit 2 first.
pub(crate) fn wait_for_interrupt_exit() -> ! {
    loop {
        std::thread::park();
    }
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

/// Makes this process a child subreaper (Linux): an orphaned descendant (one whose parent
/// ended, even after `setsid()` took it out of the process group we kill) is re-parented to
/// us instead of to init, where [`end_descendants`] finds it. Call once at start, from the
/// binary. Elsewhere a no-op.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Ends every child this process still has (Linux: killed, then reaped), again for the
/// descendants re-parented to us as their parents end, until none is left (at most
/// [`MAX_REAP_ROUNDS`] rounds). With [`become_subreaper`], that is every process the run
/// started. Call at exit, when every child we meant to wait for has been waited for.
pub fn end_descendants() {
    #[cfg(target_os = "linux")]
    for _ in 0..MAX_REAP_ROUNDS {
        let kids = children();
        if kids.is_empty() {
            return;
        }
        for &k in &kids {
            // SAFETY: kill and waitpid on our own children (their parent is this process:
            // no pid of anyone else's can be named here).
            unsafe {
                libc::kill(k, libc::SIGKILL);
            }
        }
        for &k in &kids {
            // SAFETY: as above; reaps the child (a zombie already, or one just killed).
            unsafe {
                libc::waitpid(k, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// Most rounds of [`end_descendants`]: each round ends the children of this process, whose
/// own children become ours for the next.
pub const MAX_REAP_ROUNDS: usize = 64;

/// The pids whose parent is this process, read from `/proc` (`ppid`, field 4 of `stat`).
#[cfg(target_os = "linux")]
fn children() -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let pid: i32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses: after the last `)`.
        let rest = &stat[stat.rfind(')')? + 1..];
        let ppid: i32 = rest.split_whitespace().nth(1)?.parse().ok()?;
        (ppid == me).then_some(pid)
    })
    .collect()
}
