//! Writing result files: `--out` checked before any work, files and folders written whole
//! or not at all, also when the process is interrupted.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::process::{self, forget, pending};

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
/// did not write (by its [`TREE_MARKER`] list; a folder of an older version, without a list,
/// only in that version's exact layout: see `foreign_files`) is refused,
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
    // A folder without a list is taken for an older version's report only by that report's
    // whole layout: an `index.md` that opens with the report's title, charts/*.svg and
    // data/*.csv|json, and nothing else (the header-only marker of 2026-11-30 aside). The
    // kinds of file alone are not enough: a user's notes folder with an `index.md` and a
    // catalog `db.json` is no report, and replacing it would delete both.
    let legacy = listed.is_none() && opens_like_a_report(&dir.join("index.md"));
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
                    None => legacy && kind.is_file() && in_old_report(&child),
                };
            if !ours {
                foreign.push(child);
            }
        }
    }
    foreign.sort();
    Ok(foreign)
}

/// The first line of every report's `index.md`.
const REPORT_TITLE: &str = "# toolbudget report";

/// Whether `index` is a regular file whose first line is the report's title.
fn opens_like_a_report(index: &Path) -> bool {
    use std::io::Read;
    if !std::fs::symlink_metadata(index).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = Vec::new();
    let limit = REPORT_TITLE.len() as u64 + 1;
    if std::fs::File::open(index)
        .and_then(|f| f.take(limit).read_to_end(&mut head))
        .is_err()
    {
        return false;
    }
    head.strip_prefix(REPORT_TITLE.as_bytes())
        .is_some_and(|rest| rest.first().is_none_or(|&b| b == b'\n' || b == b'\r'))
}

/// Whether `rel` is a file an older version's report held: `index.md`, `charts/NAME.svg` or
/// `data/NAME.csv|json`.
fn in_old_report(rel: &Path) -> bool {
    let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
    match parts.as_slice() {
        ["index.md"] => true,
        ["charts", f] => f.ends_with(".svg"),
        ["data", f] => f.ends_with(".csv") || f.ends_with(".json"),
        _ => false,
    }
}

/// Refuses an `--out` that is one of the command's inputs, so writing the result cannot
/// replace what the command read: the same file (also through another name or a hard link),
/// with `tree`, a folder holding one (the folder is replaced whole), or a file inside an
/// input folder. `-` and paths that do not exist are no inputs to protect.
pub fn check_out_not_input(flag: &str, out: &Path, tree: bool, inputs: &[&Path]) -> Result<()> {
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
                "{flag} {}: is {what}; write the result elsewhere",
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

pub(super) fn write_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Makes an output folder before the work (one that cannot be made fails at once) and, when
/// this run made it, records it so that an interruption removes it again if it is still empty.
/// Returns whether it was made here.
pub fn make_out_dir(dir: &Path) -> Result<bool> {
    if dir.exists() {
        return Ok(false);
    }
    crate::process::make_dir(dir).map_err(write_err(dir))?;
    Ok(true)
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

/// The list of what toolbudget wrote into a folder it adds files to one by one (`session
/// import --out`, `catalog import --config --out`): a first line saying so, then one JSON
/// string per file, its path relative to the folder (JSON, so that no name can forge a line).
/// A file already in such a folder is replaced only when this list names it: anything else
/// there is someone's own (a hand-made `calibration.json`, a `weather.json` written by hand).
pub const ADDED_MARKER: &str = ".toolbudget-files";

const ADDED_MARKER_HEADER: &str = "files toolbudget wrote in this folder (one JSON string a line)";

/// The names the folder's [`ADDED_MARKER`] lists; none when it has no list. A file of that
/// name that is not such a list (another kind of file, or another header) is refused: it is
/// not toolbudget's to replace.
fn added_list(dir: &Path) -> Result<std::collections::HashSet<String>> {
    let path = dir.join(ADDED_MARKER);
    let not_ours = || {
        Error::usage(format!(
            "{}: is not the list toolbudget keeps of the files it wrote here, and toolbudget \
             would replace it: move it away, or write to another folder",
            path.display()
        ))
    };
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(std::collections::HashSet::new());
        }
        Err(source) => {
            return Err(Error::Write {
                path: path.clone(),
                source,
            });
        }
        Ok(m) if m.is_file() => {}
        Ok(_) => return Err(not_ours()),
    }
    let bytes = crate::input::read(&path)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    if lines.next() != Some(ADDED_MARKER_HEADER) {
        return Err(not_ours());
    }
    Ok(lines
        .filter_map(|l| serde_json::from_str::<String>(l).ok())
        .collect())
}

/// Checks, before any is written, that each of `names` can be written into `dir`: a new
/// name, or a regular file the folder's [`ADDED_MARKER`] lists (one toolbudget wrote there
/// before). Any other existing file is refused, naming it: replacing it would lose it.
pub fn check_add_to(dir: &Path, names: &[&str]) -> Result<()> {
    let listed = added_list(dir)?;
    let mut foreign = Vec::new();
    for name in names {
        let path = dir.join(name);
        check_out_file(&path)?;
        let exists = std::fs::symlink_metadata(&path).is_ok();
        if exists && (*name == ADDED_MARKER || !listed.contains(*name)) {
            foreign.push(path.display().to_string());
        }
    }
    let Some(first) = foreign.first() else {
        return Ok(());
    };
    let more = match foreign.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    Err(Error::usage(format!(
        "{first}{more}: exists and toolbudget did not write it ({} does not list it); replacing \
         it would lose it: move it away, or write to another folder",
        dir.join(ADDED_MARKER).display()
    )))
}

/// Writes the files `names` (relative to `dir`) into `dir`, each whole ([`write_atomic`]) with
/// the bytes `bytes(name)` gives (asked one at a time, so one file's text is in memory at a
/// time), once [`check_add_to`] allows every one, and lists each in the folder's
/// [`ADDED_MARKER`] as soon as it is written (an interrupted run leaves no file of its own
/// unlisted but the one it was writing). The list is rewritten whole at the end, without
/// repeats.
pub fn add_files<B: AsRef<[u8]>>(
    dir: &Path,
    names: &[&str],
    mut bytes: impl FnMut(&str) -> Result<B>,
) -> Result<()> {
    check_add_to(dir, names)?;
    let mut listed: Vec<String> = added_list(dir)?.into_iter().collect();
    let marker = dir.join(ADDED_MARKER);
    let line = |name: &str| format!("{}\n", serde_json::to_string(name).unwrap_or_default());
    let whole = |listed: &mut Vec<String>| {
        listed.sort();
        listed.dedup();
        let mut text = format!("{ADDED_MARKER_HEADER}\n");
        for name in listed.iter() {
            text.push_str(&line(name));
        }
        write_atomic(&marker, text.as_bytes())
    };
    // The list exists (with its header) before the first file: each is then appended.
    whole(&mut listed)?;
    for name in names {
        write_atomic(&dir.join(name), bytes(name)?.as_ref())?;
        append_line(&marker, &line(name))?;
        listed.push((*name).to_string());
    }
    whole(&mut listed)
}

/// Appends one line to a regular file (never through a symbolic link).
fn append_line(path: &Path, line: &str) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    let mut f = options.open(path).map_err(write_err(path))?;
    f.write_all(line.as_bytes()).map_err(write_err(path))
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
            process::wait_for_interrupt_exit();
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

#[cfg(test)]
mod tests {
    use super::*;

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
        // An older version's folder (no list): its exact layout only.
        let old = tmp.path().join("old");
        std::fs::create_dir_all(old.join("data")).unwrap();
        std::fs::create_dir_all(old.join("charts")).unwrap();
        std::fs::write(old.join("index.md"), "# toolbudget report\n\nTokens").unwrap();
        std::fs::write(old.join("data/a.csv"), "x").unwrap();
        std::fs::write(old.join("data/report.json"), "{}").unwrap();
        std::fs::write(old.join("charts/a.svg"), "x").unwrap();
        assert!(check_out_dir(&old).is_ok());
        std::fs::write(old.join("data/s.jsonl"), "x").unwrap();
        std::fs::write(old.join("db.json"), "{}").unwrap();
        std::fs::write(old.join("charts/notes.md"), "x").unwrap();
        let e = check_out_dir(&old).unwrap_err().to_string();
        assert!(e.contains("charts/notes.md, data/s.jsonl, db.json"), "{e}");
        // A folder of notes is no report: `.md` and `.json` files are not enough (#40).
        let notes = tmp.path().join("notes");
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::write(notes.join("index.md"), "# my notes\n").unwrap();
        let e = check_out_dir(&notes).unwrap_err().to_string();
        assert!(e.contains("(index.md)"), "{e}");
        std::fs::write(notes.join("index.md"), "# toolbudget reports I like\n").unwrap();
        assert!(check_out_dir(&notes).is_err());
    }

    /// A folder files are added to: a file is replaced only where the folder's list says
    /// toolbudget wrote it; a user's own file is refused, naming it, and kept.
    #[test]
    fn added_files_replace_only_what_the_list_names() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("calibration.json"), "mine").unwrap();
        let e = add_files(dir, &["a.yaml", "calibration.json"], |_| Ok("new"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("calibration.json: exists and toolbudget did not write it"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("calibration.json")).unwrap(),
            "mine"
        );
        assert!(
            !dir.join("a.yaml").exists(),
            "nothing is written when one is refused"
        );
        std::fs::remove_file(dir.join("calibration.json")).unwrap();
        add_files(dir, &["a.yaml", "calibration.json"], |_| Ok("one")).unwrap();
        add_files(dir, &["a.yaml", "calibration.json"], |_| Ok("two")).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("a.yaml")).unwrap(), "two");
        let list = std::fs::read_to_string(dir.join(ADDED_MARKER)).unwrap();
        assert_eq!(
            list.lines().count(),
            3,
            "the header and two names, once: {list}"
        );
        // A name holding a line break is one entry of the list, never a line of its own.
        let forged = "x\n\"y.json\"";
        add_files(dir, &[forged], |_| Ok("f")).unwrap();
        let listed = added_list(dir).unwrap();
        assert!(
            listed.contains(forged) && !listed.contains("y.json"),
            "{listed:?}"
        );
        // A file of the list's name that is not toolbudget's list is not replaced.
        std::fs::write(dir.join(ADDED_MARKER), "my own notes\n").unwrap();
        let e = add_files(dir, &["b.yaml"], |_| Ok("b"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not the list toolbudget keeps"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.join(ADDED_MARKER)).unwrap(),
            "my own notes\n"
        );
    }

    #[test]
    fn an_out_that_is_an_input_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().join("base.json");
        std::fs::write(&base, "{}").unwrap();
        let other = tmp.path().join("cand.json");
        std::fs::write(&other, "{}").unwrap();
        let e = check_out_not_input("--out", &base, false, &[&other, &base])
            .unwrap_err()
            .to_string();
        assert!(e.contains("one of this command's inputs"), "{e}");
        // Another spelling of the same file, and a hard link to it.
        let spelled = tmp.path().join(".").join("base.json");
        assert!(check_out_not_input("--out", &spelled, false, &[&base]).is_err());
        let link = tmp.path().join("link.json");
        std::fs::hard_link(&base, &link).unwrap();
        assert!(check_out_not_input("--out", &link, false, &[&base]).is_err());
        assert!(
            check_out_not_input("--out", &tmp.path().join("new.json"), false, &[&base]).is_ok()
        );
        assert!(check_out_not_input("--out", &other, false, &[&base, Path::new("-")]).is_ok());
        // A tree holding an input; a file beside it is no input of the tree's.
        let dir = tmp.path().join("reports");
        std::fs::create_dir_all(dir.join("sessions")).unwrap();
        let e = check_out_not_input("--out", &dir, true, &[&dir.join("sessions")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("holding one of this run's inputs"), "{e}");
        assert!(check_out_not_input("--out", &dir, true, &[&base]).is_ok());
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
}
