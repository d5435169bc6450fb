//! The one way input files are read. The size limit is enforced *while reading*, so a device
//! (`/dev/zero`), an endless pipe or a file that grows under us cannot exhaust memory; only
//! regular files, or `-` for standard input (read with the same bound), are accepted, and a FIFO,
//! device, socket or folder is refused before anything blocks on it.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// Largest input file read whole (catalogs, scenarios, query files, eval results, configs).
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// Whether `path` names standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads a whole input file (or stdin for `-`) of at most [`MAX_INPUT_BYTES`].
pub fn read(path: &Path) -> Result<Vec<u8>> {
    read_limited(path, MAX_INPUT_BYTES)
}

/// Reads a whole input file (or stdin for `-`) of at most `limit` bytes.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>> {
    if is_stdin(path) {
        // Standard input can be read once: a second `-` found it drained and was reported
        // as an empty file (#26).
        static READ: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if READ.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return Err(Error::usage(
                "`-` (standard input) is given more than once; it can be read only once",
            ));
        }
        let stdin = std::io::stdin();
        return read_bounded(stdin.lock(), path, limit);
    }
    let file = open(path)?;
    // A regular file's size is known: refuse it without reading (the bound below still holds
    // for a file that grows while it is read).
    let len = file.metadata().map_or(0, |m| m.len());
    if len > limit {
        return Err(Error::input(
            path,
            None,
            format!("file is {len} bytes, larger than the limit of {limit} bytes"),
        ));
    }
    read_bounded(file, path, limit)
}

/// Opens a regular file for reading without ever blocking on a FIFO: the open is non-blocking
/// and the type is checked on the opened descriptor, so a path swapped between the check and
/// the open cannot slip through.
pub fn open(path: &Path) -> Result<File> {
    // `stat` first gives the clearest message for a missing file or a folder.
    let meta = std::fs::metadata(path).map_err(|e| cannot_read(path, &e))?;
    refuse_special(path, &meta)?;
    let file = open_nonblocking(path).map_err(|e| cannot_read(path, &e))?;
    let meta = file.metadata().map_err(|e| cannot_read(path, &e))?;
    refuse_special(path, &meta)?;
    Ok(file)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

fn cannot_read(path: &Path, e: &std::io::Error) -> Error {
    let why = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    };
    Error::input(path, None, format!("cannot read file: {why}"))
}

/// What kind of file `meta` describes, when it is not a regular file.
pub fn special_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let ft = meta.file_type();
    if ft.is_file() {
        return None;
    }
    if ft.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if ft.is_char_device() {
            return Some("a character device");
        }
        if ft.is_block_device() {
            return Some("a block device");
        }
        if ft.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

fn refuse_special(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    match special_kind(meta) {
        None => Ok(()),
        Some(kind) => Err(Error::input(
            path,
            None,
            format!(
                "is {kind}, expected a regular file (or `-` to read standard input, at most {} MiB)",
                MAX_INPUT_BYTES / (1024 * 1024)
            ),
        )),
    }
}

fn read_bounded(reader: impl Read, path: &Path, limit: u64) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| cannot_read(path, &e))?;
    if bytes.len() as u64 > limit {
        let what = if is_stdin(path) {
            "standard input is"
        } else {
            "file is"
        };
        return Err(Error::input(
            path,
            None,
            format!(
                "{what} larger than the limit of {limit} bytes ({} MiB); stopped reading there",
                limit / (1024 * 1024)
            ),
        ));
    }
    Ok(bytes)
}

/// Whether a file toolbudget rewrites by design (a cassette, an answer cache) holds one of its
/// own kind: a JSON object whose `format` names `kind` (any version, `KIND/N`). Only such a file
/// may be discarded and written anew; anything else is someone's file.
pub fn is_own_kind(bytes: &[u8], kind: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Marker {
        format: Option<String>,
    }
    serde_json::from_slice::<Marker>(bytes)
        .ok()
        .and_then(|m| m.format)
        .is_some_and(|f| f.split('/').next() == Some(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_refused_before_reading() {
        let e = read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("/dev/zero: is a character device"), "{e}");
    }

    #[test]
    fn a_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read(&fifo).unwrap_err().to_string();
        assert!(e.contains("is a FIFO"), "{e}");
    }

    #[test]
    fn the_limit_holds_while_reading() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.json");
        std::fs::write(&p, vec![b' '; 101]).unwrap();
        let e = read_limited(&p, 100).unwrap_err().to_string();
        assert!(
            e.contains("file is 101 bytes, larger than the limit of 100 bytes"),
            "{e}"
        );
        assert_eq!(read_limited(&p, 101).unwrap().len(), 101);
        // An endless source stops one byte past the limit.
        let e = read_bounded(std::io::repeat(0), Path::new("-"), 1000)
            .unwrap_err()
            .to_string();
        assert!(e.contains("standard input is larger"), "{e}");
    }

    #[test]
    fn a_missing_file_says_so() {
        let e = read(Path::new("/nonexistent/x.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such file"), "{e}");
    }
}
