//! `report` is whole or nothing: interrupted at seeded random points (SIGINT), the out folder
//! is either the previous report, untouched, or a complete new one, and nothing temporary is
//! left beside it.
//!
//! The report here is a small one (one scenario, the fixture catalogs without their queries:
//! 26 files, under 2 s) written by the same code as the full one: 21 runs of the shipped
//! report (80 files, 6 s each) made this test two thirds of the suite's time.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const TRIALS: u64 = 20;

/// The inputs of the small report under `root`: `scenarios/hi.yaml` (its catalogs are
/// `../fixtures/catalogs/...`) and the fixture catalogs in `fixtures/catalogs`.
fn small_inputs(root: &Path) {
    let repo = crate::support::repo("");
    let mcp = root.join("fixtures/catalogs/mcp");
    std::fs::create_dir_all(&mcp).unwrap();
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    std::fs::copy(
        repo.join("scenarios/hi.yaml"),
        root.join("scenarios/hi.yaml"),
    )
    .unwrap();
    std::fs::copy(
        repo.join("fixtures/catalogs/builtins.yaml"),
        root.join("fixtures/catalogs/builtins.yaml"),
    )
    .unwrap();
    for e in std::fs::read_dir(repo.join("fixtures/catalogs/mcp")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, mcp.join(p.file_name().unwrap())).unwrap();
    }
}

fn report(inputs: &Path, out: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolbudget"));
    cmd.args(["--quiet", "report", "--out"])
        .arg(out)
        .arg("--scenarios")
        .arg(inputs.join("scenarios"))
        .arg("--fixtures")
        .arg(inputs.join("fixtures"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// A complete report: its index links only to files that exist, and nothing temporary is in it.
fn assert_complete(dir: &Path, files: &BTreeMap<String, Vec<u8>>) {
    let index = String::from_utf8(files["index.md"].clone()).unwrap();
    let mut links = 0;
    for part in index.split("](").skip(1) {
        let target = part.split(')').next().unwrap();
        if target.starts_with("http") || target.starts_with('#') {
            continue;
        }
        links += 1;
        assert!(
            dir.join(target).is_file(),
            "index.md links to missing {target}"
        );
    }
    assert!(links > 5, "the index links its charts and data");
    assert!(files.contains_key(".toolbudget-output"));
    assert!(
        files.keys().all(|p| !p.contains(".tmp")),
        "{:?}",
        files.keys().collect::<Vec<_>>()
    );
}

#[test]
fn an_interrupted_report_leaves_the_old_one_or_a_whole_new_one() {
    let inputs = tempfile::tempdir().unwrap();
    small_inputs(inputs.path());
    let inputs = inputs.path();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    let start = Instant::now();
    let status = report(inputs, &out).status().unwrap();
    assert!(status.success());
    let full = start.elapsed();
    let mut before = crate::support::files_under(&out);
    assert_complete(&out, &before);

    // Seeded delays over the whole run, most of them late (the write phase).
    let mut rng = toolbudget::rng::SplitMix64::new(0x9e37_79b9_7f4a_7c15);
    let (mut kept, mut replaced) = (0, 0);
    for trial in 0..TRIALS {
        let fraction = 0.3 + 1.2 * (rng.next_u64() as f64 / u64::MAX as f64);
        let delay = full.mul_f64(fraction);

        let child = report(inputs, &out).spawn().unwrap();
        std::thread::sleep(delay);
        // SAFETY: the pid is our child's; it may have exited already (then this is a no-op).
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let result = child.wait_with_output().unwrap();
        let code = result.status.code();
        assert!(
            code == Some(0) || code == Some(130),
            "trial {trial}: exit {code:?}: {}",
            String::from_utf8_lossy(&result.stderr)
        );
        let after = crate::support::files_under(&out);
        if after == before {
            kept += 1;
        } else {
            assert_complete(&out, &after);
            replaced += 1;
            before = after;
        }
        let beside: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            beside,
            vec![std::ffi::OsString::from("report")],
            "trial {trial}"
        );
    }
    eprintln!(
        "{TRIALS} trials over a {full:?} run: {kept} left the previous report, {replaced} a new one"
    );
    assert_eq!(kept + replaced, TRIALS);
}
