//! Output formats and the one place that writes result files. Renderers elsewhere are pure
//! functions to `String`; this module decides where the bytes go and writes files atomically
//! (a temporary file in the same folder, then a rename), so a file is whole or absent.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::process::{self, forget, pending};

/// `process::install_interrupt_cleanup`, under the path `main.rs` calls.
pub use crate::process::install_interrupt_cleanup;

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

/// The file that marks a folder as written by `write_tree`: its first line says so, the next
/// ones list every file the tree holds (relative paths), so a later run knows which files are
/// its own and which someone else put there.
pub const TREE_MARKER: &str = ".toolbudget-output";

const TREE_MARKER_HEADER: &str = "written by toolbudget";

/// Most entries of an existing `--out` folder looked at before refusing it (a report holds a
/// few dozen files; a folder of more is not one toolbudget wrote).
pub const MAX_OUT_DIR_ENTRIES: usize = 10_000;

/// Checks that `--out DIR` can be replaced by a new tree: a new path, an empty folder, or a
/// folder this tool wrote before and nobody added to. A folder holding any file toolbudget
/// did not write (by its [`TREE_MARKER`] list; a folder of an older version, with an `index.md`
/// or a marker without list, may hold only `.md`, `.csv`, `.json` and `.svg` files) is refused,
/// naming the files, before any work is done: replacing a folder deletes what is in it. The
/// current folder, one holding it and a mount point are refused too (they cannot be swapped).
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
            if let Some(what) = unswappable(path, &m) {
                return Err(refuse_out(path, what, ALLOWED));
            }
            let foreign = foreign_files(path)?;
            if foreign.is_empty() {
                return Ok(());
            }
            let shown: Vec<String> = foreign
                .iter()
                .take(5)
                .map(|f| f.display().to_string())
                .collect();
            let more = match foreign.len() {
                n if n > shown.len() => format!(" and {} more", n - shown.len()),
                _ => String::new(),
            };
            Err(refuse_out(
                path,
                &format!(
                    "a folder holding files toolbudget did not write ({}{more}); replacing it \
                     would delete them",
                    shown.join(", ")
                ),
                ALLOWED,
            ))
        }
        Ok(m) => Err(refuse_out(
            path,
            crate::input::special_kind(&m).unwrap_or("a file"),
            ALLOWED,
        )),
    }
}

/// Why an existing folder cannot be swapped for a new one: the current folder or one holding
/// it (renaming it moves the ground under the command), or a mount point (rename fails).
fn unswappable(path: &Path, meta: &std::fs::Metadata) -> Option<&'static str> {
    let canonical = std::fs::canonicalize(path).ok()?;
    if std::env::current_dir().is_ok_and(|cwd| cwd.starts_with(&canonical)) {
        return Some("the current folder or one holding it");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let parent_dev = canonical
            .parent()
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|p| p.dev());
        if parent_dev.is_none_or(|d| d != meta.dev()) {
            return Some("a mount point");
        }
    }
    None
}

/// The files under `dir` that its [`TREE_MARKER`] does not list (relative paths, sorted).
fn foreign_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let marker = std::fs::read_to_string(dir.join(TREE_MARKER)).ok();
    let listed: Option<std::collections::HashSet<&str>> = marker.as_deref().and_then(|m| {
        let mut lines = m.lines();
        (lines.next() == Some(TREE_MARKER_HEADER)).then_some(())?;
        let rest: std::collections::HashSet<&str> = lines.collect();
        // A marker of an older version holds only its header.
        (!rest.is_empty()).then_some(rest)
    });
    let legacy = listed.is_none() && (marker.is_some() || dir.join("index.md").is_file());
    let mut foreign = Vec::new();
    let mut stack = vec![PathBuf::new()];
    let mut seen = 0usize;
    while let Some(rel) = stack.pop() {
        let entries = std::fs::read_dir(dir.join(&rel)).map_err(write_err(dir))?;
        for entry in entries {
            let entry = entry.map_err(write_err(dir))?;
            seen += 1;
            if seen > MAX_OUT_DIR_ENTRIES {
                return Err(Error::usage(format!(
                    "--out {}: holds more than {MAX_OUT_DIR_ENTRIES} entries: not a folder \
                     toolbudget wrote",
                    dir.display()
                )));
            }
            let child = rel.join(entry.file_name());
            let kind = entry.file_type().map_err(write_err(dir))?;
            if kind.is_dir() {
                stack.push(child);
                continue;
            }
            let name = child.to_string_lossy();
            let ours = name == TREE_MARKER
                || match &listed {
                    Some(list) => kind.is_file() && list.contains(name.as_ref()),
                    None => {
                        legacy
                            && kind.is_file()
                            && [".md", ".csv", ".json", ".svg"]
                                .iter()
                                .any(|e| name.ends_with(e))
                    }
                };
            if !ours {
                foreign.push(child);
            }
        }
    }
    foreign.sort();
    Ok(foreign)
}

/// Refuses an `--out` that is one of the command's inputs, so writing the result cannot
/// replace what the command read: the same file (also through another name or a hard link),
/// with `tree`, a folder holding one (the folder is replaced whole), or a file inside an
/// input folder. `-` and paths that do not exist are no inputs to protect.
pub fn check_out_not_input(out: &Path, tree: bool, inputs: &[&Path]) -> Result<()> {
    let Some(out_canonical) = canonical_target(out) else {
        return Ok(());
    };
    for input in inputs {
        if input.as_os_str() == "-" {
            continue;
        }
        let Ok(input_canonical) = std::fs::canonicalize(input) else {
            continue;
        };
        let same = input_canonical == out_canonical || same_file(out, input);
        let holds_input = tree && input_canonical.starts_with(&out_canonical);
        // A file inside an input folder (a --pool folder, whose every catalog file is read):
        // the next run would read it. (A report folder inside `--data` is not read back.)
        let in_input = !tree && input.is_dir() && out_canonical.starts_with(&input_canonical);
        if same || holds_input || in_input {
            let what = if same {
                format!("one of this command's inputs ({})", input.display())
            } else if holds_input {
                format!(
                    "a folder holding one of this run's inputs ({}), which replacing it would delete",
                    input.display()
                )
            } else {
                format!(
                    "inside one of this command's input folders ({})",
                    input.display()
                )
            };
            return Err(Error::usage(format!(
                "--out {}: is {what}; write the result elsewhere",
                out.display()
            )));
        }
    }
    Ok(())
}

/// Where `path` is or would be: its canonical form, or its canonical parent joined with its
/// name when it does not exist yet.
fn canonical_target(path: &Path) -> Option<PathBuf> {
    if let Ok(c) = std::fs::canonicalize(path) {
        return Some(c);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(name))
}

fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    let _ = (a, b);
    false
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
    // A replaced file keeps its mode (a 0600 file stays private); a new one is 0644, as results
    // are meant to be shared (tempfile creates 0600 files).
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777)
    };
    let written = (|| {
        tmp.write_all(bytes)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))?;
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
    let mut marker = format!("{TREE_MARKER_HEADER}\n");
    for (rel, _) in files {
        marker.push_str(rel);
        marker.push('\n');
    }
    let mut all: Vec<(&str, &[u8])> = vec![(TREE_MARKER, marker.as_bytes())];
    all.extend(files.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
    for (rel, bytes) in all {
        if process::interrupted() {
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

/// The widest a cell between the first and the last column of a plain-text table is printed:
/// a longer cell wraps onto lines of its own below, so one long value does not push every
/// column after it to the right. The first column names the row (a tool id, a quantity) and
/// the last has nothing after it: both stay whole. CSV and JSON keep every value whole.
pub const MAX_CELL_WIDTH: usize = 40;

/// A plain-text table with aligned columns; `right` marks numeric columns. A middle cell wider
/// than [`MAX_CELL_WIDTH`] wraps at spaces (a longer word is cut).
pub fn text_table(headers: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let last = headers.len().saturating_sub(1);
    let wrapped: Vec<Vec<Vec<String>>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .map(|(i, cell)| {
                    if i == 0 || i == last {
                        vec![cell.clone()]
                    } else {
                        wrap_cell(cell, MAX_CELL_WIDTH)
                    }
                })
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &wrapped {
        for (i, lines) in row.iter().enumerate() {
            for l in lines {
                widths[i] = widths[i].max(l.chars().count());
            }
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
    for row in &wrapped {
        let height = row.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let cells: Vec<String> = row
                .iter()
                .map(|lines| lines.get(k).cloned().unwrap_or_default())
                .collect();
            line(&cells, &mut out);
        }
    }
    out
}

/// `cell` in lines of at most `width` characters, broken at spaces; a word longer than
/// `width` is cut into pieces. A cell that fits is one line, unchanged.
fn wrap_cell(cell: &str, width: usize) -> Vec<String> {
    if cell.chars().count() <= width {
        return vec![cell.to_string()];
    }
    // An indented cell (a reason under its parent) keeps its indent on every line.
    let indent = cell.len() - cell.trim_start_matches(' ').len();
    let width = width.saturating_sub(indent).max(1);
    let pad = " ".repeat(indent);
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut len = 0;
    for word in cell.split(' ').filter(|w| !w.is_empty()) {
        let mut chars: Vec<char> = word.chars().collect();
        // A word that fits nowhere is cut to the width, piece by piece.
        while chars.len() > width {
            if len > 0 {
                lines.push(std::mem::take(&mut current));
                len = 0;
            }
            lines.push(chars[..width].iter().collect());
            chars.drain(..width);
        }
        let n = chars.len();
        if n == 0 {
            continue;
        }
        if len > 0 && len + 1 + n > width {
            lines.push(std::mem::take(&mut current));
            len = 0;
        }
        if len > 0 {
            current.push(' ');
            len += 1;
        }
        current.extend(chars);
        len += n;
    }
    if len > 0 || lines.is_empty() {
        lines.push(current);
    }
    lines.into_iter().map(|l| format!("{pad}{l}")).collect()
}

/// `text` as a Markdown code span that nothing in it can end: control characters (a line
/// break would end a table row or a heading) written as escapes, and a fence of one backtick
/// more than the longest run inside. Inside a code span `<script>`, `#` and `*` are text.
pub fn md_code(text: &str) -> String {
    let clean = visible_controls(text);
    let mut longest = 0;
    let mut run = 0;
    for c in clean.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    if longest == 0 && !clean.is_empty() {
        return format!("`{clean}`");
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {clean} {fence}")
}

/// `text` as plain Markdown text inside a line: control characters written as escapes (so no
/// line break can start a heading or end a row), and the characters that open HTML, links,
/// emphasis or code escaped with a backslash; `_` only where it could open emphasis (not
/// inside a word, `parse_config` stays as written). `|` is [`md_table`]'s.
pub fn md_text(text: &str) -> String {
    let clean = visible_controls(text);
    let chars: Vec<char> = clean.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let intraword = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let escape = match c {
            '\\' | '`' | '<' | '>' | '[' | ']' | '*' => true,
            '_' => !(intraword(i.checked_sub(1)) && intraword(Some(i + 1))),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Control characters as `\n`, `\t`, `\u{..}`: visible, and never a line break.
fn visible_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// A CSV cell a spreadsheet will not run: text starting with `=`, `+`, `-`, `@`, a tab or a
/// carriage return is prefixed with `'` (OWASP's CSV injection guidance), unless the whole
/// cell is a number (`-0.5`, `-inf`) or made only of digits, signs, points, `e` and `;`
/// (rank lists such as `-;4`, "not found" written `-`): with no letter, `(`, `|` or `!` a
/// formula can call nothing.
pub fn csv_cell(cell: &str) -> String {
    let risky = cell
        .chars()
        .next()
        .is_some_and(|c| matches!(c, '=' | '+' | '-' | '@' | '\t' | '\r'));
    let inert = |c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | ';' | 'e' | 'E');
    if risky && cell.parse::<f64>().is_err() && !cell.chars().all(inert) {
        format!("'{cell}")
    } else {
        cell.to_string()
    }
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
        // A line break would end the row: every cell is one line.
        let cells: Vec<String> = row
            .iter()
            .map(|c| visible_controls(c).replace('|', "\\|"))
            .collect();
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
    let records = std::iter::once(headers.iter().map(|h| csv_cell(h)).collect::<Vec<_>>())
        .chain(rows.iter().map(|r| r.iter().map(|c| csv_cell(c)).collect()));
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
        w.write_record(record.iter().map(|c| csv_cell(c)))
            .expect("writing to memory cannot fail");
    }
    into_text(w)
}

/// Serde rows as a header and text cells (what `csv_rows` writes; tables print the same).
pub fn serde_table<T: serde::Serialize + Default>(rows: &[T]) -> (Vec<String>, Vec<Vec<String>>) {
    let header: Vec<String> = cells(&T::default()).into_iter().map(|(k, _)| k).collect();
    assert!(
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

/// `one` for 1, else `many`, without the count: `number::plural` is the one to use; this stays
/// until view/sessions.rs's three calls move to it.
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
    fn a_long_cell_wraps_below_its_row_and_keeps_the_columns_aligned() {
        let long = format!(
            "{} {}",
            "a".repeat(30),
            "deferred_list 1, history 1, tools 1, server 1"
        );
        let rows = vec![
            vec!["invalidations".to_string(), long.clone(), "9".to_string()],
            vec!["requests".to_string(), "13".to_string(), "1".to_string()],
        ];
        let t = text_table(&["row", "deferred", "n"], &rows, &[false, false, true]);
        let lines: Vec<&str> = t.lines().collect();
        // Header, rule, the long row on three lines, the short row on one.
        assert_eq!(lines.len(), 6, "{t}");
        let width = lines[1].chars().count();
        assert!(lines.iter().all(|l| l.chars().count() <= width), "{t}");
        assert!(
            width <= "invalidations".len() + 2 + MAX_CELL_WIDTH + 2 + 1,
            "{t}"
        );
        // Every word is still there, in order; the number stays on the row's first line.
        let col = lines[1].split("  ").nth(1).unwrap().len();
        assert!(col <= MAX_CELL_WIDTH, "{t}");
        let cell: Vec<&str> = lines[2..5]
            .iter()
            .map(|l| l[15..(15 + col).min(l.len())].trim())
            .collect();
        assert_eq!(cell.join(" "), long);
        assert!(lines[2].ends_with('9') && lines[5].ends_with('1'), "{t}");
        assert!(
            lines[3].starts_with(' ') && lines[3].trim_end().len() < width,
            "{t}"
        );
    }

    #[test]
    fn wrapping_cuts_a_word_longer_than_the_width_and_leaves_short_cells_alone() {
        assert_eq!(wrap_cell("short cell", 40), ["short cell"]);
        assert_eq!(wrap_cell("abcdefgh ij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap_cell("ab cd ef", 5), ["ab cd", "ef"]);
        assert_eq!(wrap_cell("  ab cd ef", 7), ["  ab cd", "  ef"]);
        // The first column (the row's name) and the last (nothing after it) stay whole.
        let long = "x ".repeat(30).trim_end().to_string();
        let t = text_table(
            &["tool", "why"],
            &[vec![long.clone(), long.clone()]],
            &[false, false],
        );
        assert_eq!(t.lines().count(), 3, "{t}");
        assert_eq!(t.lines().nth(2), Some(format!("{long}  {long}").as_str()));
    }

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
        let mut first = files("one");
        first.push(("figures/stale.svg".to_string(), b"old".to_vec()));
        write_tree(&dir, &first).unwrap();
        write_tree(&dir, &files("two")).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("index.md")).unwrap(),
            "two"
        );
        assert!(
            !dir.join("figures/stale.svg").exists(),
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

    /// What someone else put in a report folder is never deleted: the folder is refused,
    /// naming the files, and left as it was (#26: `session import --out reports/sessions`
    /// then `report` deleted the imported sessions).
    #[test]
    fn a_tree_with_foreign_files_is_refused_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("reports");
        write_tree(&dir, &[("index.md".to_string(), b"one".to_vec())]).unwrap();
        std::fs::create_dir(dir.join("sessions")).unwrap();
        std::fs::write(dir.join("sessions/a.yaml"), "mine").unwrap();
        std::fs::write(dir.join("notes.txt"), "mine too").unwrap();
        let e = write_tree(&dir, &[("index.md".to_string(), b"two".to_vec())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("notes.txt, sessions/a.yaml"), "{e}");
        assert!(e.contains("did not write"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.join("sessions/a.yaml")).unwrap(),
            "mine"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("index.md")).unwrap(),
            "one"
        );
        // An older version's folder (index.md, no list): its kinds of files only.
        let old = tmp.path().join("old");
        std::fs::create_dir_all(old.join("data")).unwrap();
        std::fs::write(old.join("index.md"), "x").unwrap();
        std::fs::write(old.join("data/a.csv"), "x").unwrap();
        assert!(check_out_dir(&old).is_ok());
        std::fs::write(old.join("data/s.jsonl"), "x").unwrap();
        let e = check_out_dir(&old).unwrap_err().to_string();
        assert!(e.contains("data/s.jsonl"), "{e}");
    }

    #[test]
    fn an_out_that_is_an_input_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().join("base.json");
        std::fs::write(&base, "{}").unwrap();
        let other = tmp.path().join("cand.json");
        std::fs::write(&other, "{}").unwrap();
        let e = check_out_not_input(&base, false, &[&other, &base])
            .unwrap_err()
            .to_string();
        assert!(e.contains("one of this command's inputs"), "{e}");
        // Another spelling of the same file, and a hard link to it.
        let spelled = tmp.path().join(".").join("base.json");
        assert!(check_out_not_input(&spelled, false, &[&base]).is_err());
        let link = tmp.path().join("link.json");
        std::fs::hard_link(&base, &link).unwrap();
        assert!(check_out_not_input(&link, false, &[&base]).is_err());
        assert!(check_out_not_input(&tmp.path().join("new.json"), false, &[&base]).is_ok());
        assert!(check_out_not_input(&other, false, &[&base, Path::new("-")]).is_ok());
        // A tree holding an input; a file beside it is no input of the tree's.
        let dir = tmp.path().join("reports");
        std::fs::create_dir_all(dir.join("sessions")).unwrap();
        let e = check_out_not_input(&dir, true, &[&dir.join("sessions")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("holding one of this run's inputs"), "{e}");
        assert!(check_out_not_input(&dir, true, &[&base]).is_ok());
        // The current folder is never swapped out.
        let e = check_out_dir(Path::new(".")).unwrap_err().to_string();
        assert!(e.contains("current folder"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("secret.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let fresh = tmp.path().join("fresh.json");
        write_atomic(&fresh, b"x").unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
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

    /// Names and query texts cannot break out of their code span, row or heading (#26).
    #[test]
    fn markdown_escapes_what_could_break_out() {
        assert_eq!(md_code("plain-name"), "`plain-name`");
        assert_eq!(md_code("a`b"), "`` a`b ``");
        assert_eq!(md_code("x``y"), "``` x``y ```");
        assert_eq!(md_code(""), "`  `");
        let hostile = "x`\n# heading\n<script>alert(1)</script>|";
        let code = md_code(hostile);
        assert!(!code.contains('\n'), "{code}");
        assert!(code.starts_with("`` ") && code.ends_with(" ``"), "{code}");
        assert!(code.contains("\\n# heading"), "{code}");
        let text = md_text("**bold** [link](x) <b>_i_</b> parse_config #1\r\n");
        assert_eq!(
            text,
            // Escapes of control characters are text too: a backslash before them.
            "\\*\\*bold\\*\\* \\[link\\](x) \\<b\\>\\_i\\_\\</b\\> parse_config #1\\\\r\\\\n"
        );
        let table = md_table(&["a"], &[vec!["one\ntwo|three".into()]], &[false]);
        assert_eq!(table.lines().count(), 3, "{table}");
        assert!(table.contains("one\\ntwo\\|three"), "{table}");
    }

    /// OWASP's CSV injection guidance: formula-leading text is prefixed, numbers are not.
    #[test]
    fn csv_cells_never_start_a_formula() {
        for (cell, want) in [
            ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
            ("+1+1", "+1+1"),
            ("+1+A1", "'+1+A1"),
            ("-x", "'-x"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("-0.5", "-0.5"),
            ("+3", "+3"),
            ("-", "-"),
            ("-;4", "-;4"),
            ("-inf", "-inf"),
            ("-1+cmd|x", "'-1+cmd|x"),
            ("1e-3", "1e-3"),
            ("a=b", "a=b"),
            ("", ""),
        ] {
            assert_eq!(csv_cell(cell), want, "{cell:?}");
        }
        let text = csv(
            &["id"],
            &[vec!["=HYPERLINK(\"x\")".into()], vec!["-2".into()]],
        );
        assert_eq!(text, "id\n\"'=HYPERLINK(\"\"x\"\")\"\n-2\n");
        #[derive(serde::Serialize, Default)]
        struct Row {
            name: String,
            n: i64,
        }
        let rows = csv_rows(&[Row {
            name: "@x".into(),
            n: -3,
        }]);
        assert_eq!(rows, "name,n\n'@x,-3\n");
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
