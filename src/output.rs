//! Output formats and the one place that writes result files. Renderers elsewhere are pure
//! functions to `String`; this module decides where the bytes go and writes files atomically
//! (a temporary file in the same folder, then a rename), so a file is whole or absent.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Result};

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

/// Temporary paths (files and folders) that exist only until a write completes. An interrupted
/// run removes them before it exits, so no `.tmpXXXX` is ever left behind. The lock is also held
/// while a finished write is renamed into place, so an interruption sees either the old output
/// or the new one, never half of a swap.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

fn forget(list: &mut Vec<PathBuf>, path: &Path) {
    list.retain(|p| p != path);
}

/// Removes every pending temporary path, then exits with `128 + signal` (130 for SIGINT). Runs
/// on its own thread (signal-hook delivers the signal there), never inside a signal handler.
fn clean_up_and_exit(signal: i32) -> ! {
    // Writers stop creating files first, or a folder could refill while it is being removed.
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
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
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

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

fn refuse_out(path: &Path, what: &str, allowed: &str) -> Error {
    Error::usage(format!(
        "--out {}: is {what}; --out writes only {allowed}",
        path.display()
    ))
}

/// Checks that `--out FILE` can be written without harming anything: a regular file (replaced
/// whole) or a new path. A symlink, a device, a FIFO or a folder is refused, so `--out
/// /dev/null` as root cannot replace the system's device and a link is never followed.
pub fn check_out_file(path: &Path) -> Result<()> {
    const ALLOWED: &str = "to a regular file or a new path";
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::Write {
            path: path.to_path_buf(),
            source,
        }),
        Ok(m) if m.file_type().is_symlink() => Err(refuse_out(path, "a symbolic link", ALLOWED)),
        Ok(m) => match crate::input::special_kind(&m) {
            None => Ok(()),
            Some(kind) => Err(refuse_out(path, kind, ALLOWED)),
        },
    }
}

/// The file that marks a folder as written by `write_tree` (so replacing it is safe).
pub const TREE_MARKER: &str = ".toolbudget-output";

/// Checks that `--out DIR` can be replaced by a new tree: a new path, an empty folder, or a
/// folder this tool wrote before (it holds [`TREE_MARKER`], or an `index.md` from older
/// versions). Anything else is refused before any work is done: replacing a folder deletes
/// what is in it.
pub fn check_out_dir(path: &Path) -> Result<()> {
    const ALLOWED: &str = "to a new folder, an empty one, or a folder toolbudget wrote before";
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::Write {
            path: path.to_path_buf(),
            source,
        }),
        Ok(m) if m.file_type().is_symlink() => Err(refuse_out(path, "a symbolic link", ALLOWED)),
        Ok(m) if m.is_dir() => {
            let ours = path.join(TREE_MARKER).is_file() || path.join("index.md").is_file();
            let empty = std::fs::read_dir(path)
                .map_err(|source| Error::Write {
                    path: path.to_path_buf(),
                    source,
                })?
                .next()
                .is_none();
            if ours || empty {
                Ok(())
            } else {
                Err(refuse_out(
                    path,
                    "a folder that holds other files (it would be replaced whole)",
                    ALLOWED,
                ))
            }
        }
        Ok(m) => Err(refuse_out(
            path,
            crate::input::special_kind(&m).unwrap_or("a file"),
            ALLOWED,
        )),
    }
}

fn write_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `bytes` to `path` whole or not at all (temporary file in the same folder, then a
/// rename); `path` must pass [`check_out_file`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    check_out_file(path)?;
    let err = write_err(path);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(&err)?;
    // Created and registered under the lock: an interruption in between would leave it.
    let (mut tmp, tmp_path) = {
        let mut list = pending();
        let tmp = tempfile::Builder::new()
            .prefix(".toolbudget-")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(&err)?;
        let tmp_path = tmp.path().to_path_buf();
        list.push(tmp_path.clone());
        (tmp, tmp_path)
    };
    let written = (|| {
        tmp.write_all(bytes)?;
        // tempfile creates 0600 files; results are meant to be shared like any other output.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))?;
        }
        tmp.as_file().sync_all()
    })();
    let mut list = pending();
    forget(&mut list, &tmp_path);
    written.map_err(&err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

/// Writes a whole folder of files (`(relative path, bytes)`) whole or not at all: the new tree
/// is built in a temporary folder beside `dir` and swapped in at the end, so an interrupted or
/// failed run leaves the previous folder (or nothing) and no temporary files. `dir` must pass
/// [`check_out_dir`].
pub fn write_tree(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<()> {
    check_out_dir(dir)?;
    let err = write_err(dir);
    let name = dir
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(&err)?;
    // Created and registered under the lock: an interruption in between would leave it.
    let tmp = {
        let mut list = pending();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}.toolbudget-"))
            .tempdir_in(&parent)
            .map_err(&err)?
            .keep();
        list.push(tmp.clone());
        tmp
    };
    let built = build_tree(&tmp, files);
    let mut list = pending();
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&tmp);
        forget(&mut list, &tmp);
        return Err(e);
    }
    let swapped = swap_in(&tmp, dir, &parent, &name, &mut list);
    forget(&mut list, &tmp);
    if swapped.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    swapped.map_err(&err)
}

fn build_tree(root: &Path, files: &[(String, Vec<u8>)]) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755))
            .map_err(write_err(root))?;
    }
    let mut all: Vec<(&str, &[u8])> = vec![(TREE_MARKER, b"written by toolbudget\n")];
    all.extend(files.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
    for (rel, bytes) in all {
        if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(Error::usage("interrupted"));
        }
        let path = root.join(rel);
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(write_err(d))?;
        }
        let mut f = std::fs::File::create(&path).map_err(write_err(&path))?;
        f.write_all(bytes)
            .and_then(|()| f.sync_all())
            .map_err(write_err(&path))?;
    }
    Ok(())
}

/// Puts `tmp` where `dir` is, under the pending lock. An existing `dir` is first moved aside
/// (registered, so an interruption after this point still removes it) and deleted after.
fn swap_in(
    tmp: &Path,
    dir: &Path,
    parent: &Path,
    name: &str,
    list: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    if std::fs::symlink_metadata(dir).is_err() {
        return std::fs::rename(tmp, dir);
    }
    let old = tempfile::Builder::new()
        .prefix(&format!(".{name}.old-"))
        .tempdir_in(parent)?
        .keep();
    std::fs::remove_dir(&old)?;
    std::fs::rename(dir, &old)?;
    if let Err(e) = std::fs::rename(tmp, dir) {
        // Put the previous tree back: the output is as before.
        let _ = std::fs::rename(&old, dir);
        return Err(e);
    }
    list.push(old.clone());
    let removed = std::fs::remove_dir_all(&old);
    forget(list, &old);
    removed
}

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

/// A plain-text table with aligned columns; `right` marks numeric columns.
pub fn text_table(headers: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: &[String], out: &mut String| {
        let mut first = true;
        for (i, c) in cells.iter().enumerate() {
            if !first {
                out.push_str("  ");
            }
            first = false;
            let pad = widths[i] - c.chars().count();
            if right.get(i).copied().unwrap_or(false) {
                out.push_str(&" ".repeat(pad));
                out.push_str(c);
            } else {
                out.push_str(c);
                if i + 1 < cells.len() {
                    out.push_str(&" ".repeat(pad));
                }
            }
        }
        out.push('\n');
    };
    let h: Vec<String> = headers
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    line(&h, &mut out);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(&rule, &mut out);
    for row in rows {
        line(row, &mut out);
    }
    out
}

/// A Markdown table; `right` marks numeric columns.
pub fn md_table(headers: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let mut out = String::new();
    out.push_str("| ");
    out.push_str(&headers.join(" | "));
    out.push_str(" |\n|");
    for i in 0..headers.len() {
        out.push_str(if right.get(i).copied().unwrap_or(false) {
            "---:|"
        } else {
            "---|"
        });
    }
    out.push('\n');
    for row in rows {
        out.push_str("| ");
        let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
        out.push_str(&cells.join(" | "));
        out.push_str(" |\n");
    }
    out
}

/// CSV with RFC 4180 quoting, from header names and text cells.
pub fn csv(headers: &[&str], rows: &[Vec<String>]) -> String {
    // Flexible: a caller's ragged row is its own business, not a panic.
    let mut w = ::csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    let records = std::iter::once(headers.to_vec())
        .chain(rows.iter().map(|r| r.iter().map(String::as_str).collect()));
    for record in records {
        w.write_record(record)
            .expect("writing to memory cannot fail");
    }
    into_text(w)
}

/// CSV of serde rows: the columns are the row type's fields in order, nested structs (and
/// `#[serde(flatten)]`) spread into their own fields, so a row can be a result type as it is.
/// Every command that writes a table of one kind writes the same columns; an empty table keeps
/// its header. Empty cell: `None`. Lists: items joined by `;`.
pub fn csv_rows<T: serde::Serialize + Default>(rows: &[T]) -> String {
    let (header, records) = serde_table(rows);
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for record in std::iter::once(&header).chain(&records) {
        w.write_record(record)
            .expect("writing to memory cannot fail");
    }
    into_text(w)
}

/// Serde rows as a header and text cells (what `csv_rows` writes; tables print the same).
pub fn serde_table<T: serde::Serialize + Default>(rows: &[T]) -> (Vec<String>, Vec<Vec<String>>) {
    let header: Vec<String> = cells(&T::default()).into_iter().map(|(k, _)| k).collect();
    debug_assert!(
        header
            .iter()
            .enumerate()
            .all(|(i, h)| !header[..i].contains(h)),
        "column names of a CSV row are unique: {header:?}"
    );
    let records = rows
        .iter()
        .map(|row| {
            let mut cells = cells(row);
            // Keyed, so a field a row skips (`skip_serializing_if`) is an empty cell, not a
            // shift; the header comes from the default row, so row types must not skip fields.
            header
                .iter()
                .map(|h| {
                    cells
                        .iter_mut()
                        .find(|(k, _)| k == h)
                        .map(|(_, v)| std::mem::take(v))
                        .unwrap_or_default()
                })
                .collect()
        })
        .collect();
    (header, records)
}

/// A row's leaf fields, in order, as (column, text).
fn cells<T: serde::Serialize>(row: &T) -> Vec<(String, String)> {
    fn walk(value: serde_json::Value, out: &mut Vec<(String, String)>) {
        if let serde_json::Value::Object(map) = value {
            for (k, v) in map {
                match v {
                    serde_json::Value::Object(_) => walk(v, out),
                    other => out.push((k, cell(&other))),
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(
        serde_json::to_value(row).expect("result rows always serialize"),
        &mut out,
    );
    out
}

fn cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => items.iter().map(cell).collect::<Vec<_>>().join(";"),
        other => other.to_string(),
    }
}

fn into_text(w: ::csv::Writer<Vec<u8>>) -> String {
    let bytes = w.into_inner().expect("writing to memory cannot fail");
    String::from_utf8(bytes).expect("cells are UTF-8 strings")
}

/// `one` for 1, else `many`: "1 call", "2 calls".
pub fn noun<'a>(n: impl Into<u64>, one: &'a str, many: &'a str) -> &'a str {
    if n.into() == 1 { one } else { many }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(
            csv(&["a", "b"], &[vec!["x,y".into(), "say \"hi\"".into()]]),
            "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n"
        );
    }

    #[test]
    fn serde_rows_give_named_columns_even_when_empty() {
        #[derive(serde::Serialize, Default)]
        struct Row {
            name: String,
            saved_pct: Option<f64>,
        }
        let rows = [Row {
            name: "a,b".into(),
            saved_pct: None,
        }];
        assert_eq!(csv_rows(&rows), "name,saved_pct\n\"a,b\",\n");
        assert_eq!(csv_rows::<Row>(&[]), "name,saved_pct\n");
        #[derive(serde::Serialize, Default)]
        struct Outer {
            id: u32,
            inner: Inner,
            tool: Option<String>,
            ok: bool,
        }
        #[derive(serde::Serialize, Default)]
        struct Inner {
            a: f64,
            list: Vec<u32>,
        }
        let rows = [Outer {
            id: 7,
            inner: Inner {
                a: 1.0,
                list: vec![1, 2],
            },
            tool: None,
            ok: true,
        }];
        assert_eq!(csv_rows(&rows), "id,a,list,tool,ok\n7,1.0,1;2,,true\n");
    }

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/out.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(
            std::fs::read_dir(dir.path().join("sub")).unwrap().count(),
            1
        );
    }

    #[test]
    fn a_tree_replaces_the_previous_one_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("report");
        let files = |v: &str| {
            vec![
                ("index.md".to_string(), v.as_bytes().to_vec()),
                ("data/a.csv".to_string(), b"a\n".to_vec()),
            ]
        };
        write_tree(&dir, &files("one")).unwrap();
        std::fs::write(dir.join("stale.svg"), "old").unwrap();
        write_tree(&dir, &files("two")).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("index.md")).unwrap(),
            "two"
        );
        assert!(
            !dir.join("stale.svg").exists(),
            "the old tree is gone whole"
        );
        assert!(dir.join(TREE_MARKER).is_file());
        // Nothing left beside it: no temporary or backup folder.
        let names: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("report")]);
    }

    #[test]
    fn a_failed_tree_leaves_the_previous_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("report");
        write_tree(&dir, &[("index.md".to_string(), b"one".to_vec())]).unwrap();
        // A file and a folder under the same name cannot both be written.
        let bad = [
            ("x".to_string(), b"1".to_vec()),
            ("x/y".to_string(), b"2".to_vec()),
        ];
        assert!(write_tree(&dir, &bad).is_err());
        assert_eq!(
            std::fs::read_to_string(dir.join("index.md")).unwrap(),
            "one"
        );
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    #[test]
    fn text_table_aligns_columns() {
        let t = text_table(
            &["id", "n"],
            &[vec!["Read".into(), "12".into()]],
            &[false, true],
        );
        assert_eq!(t, "id     n\n----  --\nRead  12\n");
    }
}
