//! `--out` files are written whole or not at all (a temporary file in the same folder, then a
//! rename): a write that fails midway leaves the old file as it was and no temporary file.
//! The tests run as root, so permissions cannot make a write fail; a file-size limit
//! (`ulimit -f`) and a directory in the way of the rename can.

use std::path::Path;
use std::process::Command;

fn builtins() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/catalogs/builtins.yaml")
        .display()
        .to_string()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_write_cut_off_midway_leaves_the_old_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("count.json");
    std::fs::write(&out, "OLD").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("toolbudget");
    // The json output is several KB; a 1 KB file-size limit stops the write after the first
    // block with EFBIG (SIGXFSZ is ignored, so the write fails instead of killing the process).
    let script = format!(
        "trap '' XFSZ; ulimit -f 1; exec '{}' count --catalog '{}' --format json --out '{}'",
        bin.display(),
        builtins(),
        out.display()
    );
    let r = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: cannot write {}: ", out.display())),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "OLD");
    assert_eq!(names(dir.path()), ["count.json"], "no temporary file left");

    // Without the limit the same command replaces the file whole.
    let r = Command::new(&bin)
        .args([
            "count",
            "--catalog",
            &builtins(),
            "--format",
            "json",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0));
    let text = std::fs::read_to_string(&out).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["tools"].as_array().unwrap().len(), 39);
    assert_eq!(names(dir.path()), ["count.json"]);
}

#[test]
fn a_directory_in_the_way_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "keep").unwrap();
    let r = assert_cmd::Command::cargo_bin("toolbudget")
        .unwrap()
        .args([
            "count",
            "--catalog",
            &builtins(),
            "--format",
            "json",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: --out {}: is a directory", out.display())),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).unwrap(),
        "keep"
    );
    assert_eq!(names(&out), ["keep.txt"]);
    assert_eq!(names(dir.path()), ["report.json"], "no temporary file left");
}

#[test]
fn the_library_write_fails_whole_too() {
    // The same guarantee through `write_atomic` itself: an existing file survives a failed
    // replace (its path's parent is a file, so no temporary file can be made beside it).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, "OLD").unwrap();
    let err = toolbudget::output::write_atomic(&file.join("child.json"), b"NEW").unwrap_err();
    assert!(err.to_string().starts_with("cannot write "), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "OLD");
    assert_eq!(names(dir.path()), ["plain"]);
}
