//! Output formats and the one place that writes result files. Renderers elsewhere are pure
//! functions to `String`; this module decides where the bytes go (`emit`): files are written
//! atomically by `write` (a temporary file in the same folder, then a rename), so a file is whole
//! or absent; `table` holds the text, Markdown and CSV tables and their escaping.

mod guard;
mod spill;
mod table;
mod terminal;
mod write;

pub use guard::{Guard, Target};
pub use spill::Spill;
pub use table::*;
pub use terminal::*;
pub use write::*;

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// `process::install_interrupt_cleanup`, under the path `main.rs` calls.
pub use crate::process::{become_subreaper, end_descendants, install_interrupt_cleanup};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Table,
    Json,
    Csv,
    Md,
}

crate::named_enum!(Format, "format");

/// Whether standard output was closed when the process started (`>&-`). Rust's standard
/// library silently drops writes to a closed stdout; results must not vanish with exit 0.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes whether standard output was closed at start. Rust's runtime reopens a closed fd 1 onto
/// `/dev/null` read-write before `main`, so a closed stdout shows up as fd 1 being `/dev/null`
/// opened `O_RDWR` (a shell's `>/dev/null` opens it write-only). Call first thing in `main`.
pub fn check_stdout() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: fstat/fcntl on a constant descriptor into a zeroed local struct.
        let closed = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            let flags = libc::fcntl(1, libc::F_GETFL);
            flags == -1
                || (libc::fstat(1, &raw mut st) == 0
                    && (st.st_mode & libc::S_IFMT) == libc::S_IFCHR
                    && st.st_rdev == libc::makedev(1, 3)
                    && flags & libc::O_ACCMODE == libc::O_RDWR)
        };
        STDOUT_CLOSED.store(closed, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Sends output to the file given by `--out`, or to stdout.
pub fn emit(out: Option<&Path>, text: &str) -> Result<()> {
    let Some(p) = out else {
        if STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::Write {
                path: "<stdout>".into(),
                source: std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "standard output is closed; use --out FILE",
                ),
            });
        }
        let mut stdout = std::io::stdout().lock();
        // A closed pipe (`| head`) is not an error worth reporting.
        return match stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            r => r.map_err(|source| Error::Write {
                path: "<stdout>".into(),
                source,
            }),
        };
    };
    write_atomic(p, text.as_bytes())
}

/// JSON text with a trailing newline; stable because every map we emit is ordered.
pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("result types always serialize");
    s.push('\n');
    s
}

/// `text_table` or `md_table`, one signature.
pub type TableFn = fn(&[&str], &[Vec<String>], &[bool]) -> String;

/// The table renderer of a human format: Markdown for `md`, aligned text otherwise.
pub fn table_for(format: Format) -> TableFn {
    if format == Format::Md {
        md_table
    } else {
        text_table
    }
}
