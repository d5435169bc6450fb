//! What every integration test shares: the binary, the repository's files, and the public data
//! folder with the switch that makes its absence a failure.

use std::path::PathBuf;

/// The binary under test, built by `cargo test` for this test target.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_toolbudget"))
}

/// The binary as an `assert_cmd` command.
pub fn toolbudget() -> assert_cmd::Command {
    assert_cmd::Command::new(bin())
}

/// A path inside the repository.
pub fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Whether the environment variable is set to something other than empty or `0`.
pub fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The public data folder (`../shared/data` beside the crate, or `TOOLBUDGET_SHARED_DATA`).
/// `None` on a user's fresh clone: the test that asked prints why it skipped. With
/// `TOOLBUDGET_REQUIRE_SHARED=1` (CI sets it) a missing folder fails the test instead.
pub fn shared_data() -> Option<PathBuf> {
    let p = match std::env::var("TOOLBUDGET_SHARED_DATA") {
        Ok(p) => PathBuf::from(p),
        Err(_) => repo("../shared/data"),
    };
    if p.is_dir() {
        return Some(p);
    }
    assert!(
        !env_flag("TOOLBUDGET_REQUIRE_SHARED"),
        "TOOLBUDGET_REQUIRE_SHARED is set but the shared data folder {} is missing",
        p.display()
    );
    None
}

/// Says on stderr that a test skipped and why (the test then returns).
pub fn skip(test: &str, why: &str) {
    eprintln!("skipped {test}: {why}");
}

/// Whether every file exists under `../shared/data` beside the repository, where shipped
/// scenarios read third-party data by relative path (`TOOLBUDGET_SHARED_DATA` cannot move it).
/// Fails instead of `false` under `TOOLBUDGET_REQUIRE_SHARED=1`.
pub fn shared_beside_repo(files: &[&str]) -> bool {
    let missing: Vec<PathBuf> = files
        .iter()
        .map(|f| repo("../shared/data").join(f))
        .filter(|p| !p.is_file())
        .collect();
    assert!(
        missing.is_empty() || !env_flag("TOOLBUDGET_REQUIRE_SHARED"),
        "TOOLBUDGET_REQUIRE_SHARED is set but {} is missing",
        missing[0].display()
    );
    missing.is_empty()
}

/// The folder of one `report` run from the repository root (`--quiet`), made by the first test
/// that asks and reused by the others: a full report takes minutes in a debug build.
pub fn report_once() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-once");
        // An earlier test run's folder (the report would also accept it as its own).
        let _ = std::fs::remove_dir_all(&dir);
        toolbudget()
            .current_dir(repo(""))
            .args(["report", "--quiet", "--out"])
            .arg(&dir)
            .assert()
            .success();
        dir
    })
}

/// Every file under a folder (a report, a test's work folder), by path relative to it
/// (`/`-separated), sorted, with its bytes.
pub fn files_under(root: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}
