//! Adversarial use of the binary: devices, pipes, FIFOs, symlinks, closed or full stdout,
//! interrupted runs. Each case must end at once with exit 2 (or 1 for a failed gate) and one
//! `error:` line, with bounded memory; nothing may hang, so every run has a timeout.

#![cfg(unix)]

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(60);

use crate::support::bin;

fn builtins() -> String {
    crate::support::repo("fixtures/catalogs/builtins.yaml")
        .display()
        .to_string()
}

struct Done {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the binary, killing it after [`TIMEOUT`] (a hang fails the test instead of stalling it).
fn run_with(mut cmd: Command) -> Done {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().expect("the binary starts");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = if let Ok(out) = rx.recv_timeout(TIMEOUT) {
        out.expect("waited")
    } else {
        // SAFETY: the pid is our child's.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        panic!("no answer within {TIMEOUT:?}: {cmd:?}");
    };
    Done {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn run(dir: &Path, args: &[&str]) -> Done {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir).args(args).stdin(Stdio::null());
    run_with(cmd)
}

/// Exit 2, one `error:` line first, which contains every `needle`.
fn refused(d: &Done, needles: &[&str]) {
    let first = d.stderr.lines().next().unwrap_or_default();
    assert_eq!(d.code, Some(2), "stderr: {}", d.stderr);
    assert!(first.starts_with("error: "), "stderr: {}", d.stderr);
    for n in needles {
        assert!(first.contains(n), "{n:?} not in {first:?}");
    }
    assert!(!d.stderr.contains("panicked"), "{}", d.stderr);
}

#[test]
fn devices_are_refused_before_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let b = builtins();
    let cases: [&[&str]; 5] = [
        &["count", "-c", "/dev/zero"],
        &["count", "-c", "/dev/urandom"],
        &["eval", "-c", &b, "--queries", "/dev/zero"],
        &["compare", "/dev/zero", "x.json"],
        &["simulate", "/dev/zero"],
    ];
    for args in cases {
        let start = Instant::now();
        let d = run(tmp.path(), args);
        refused(&d, &["/dev/", "character device", "regular file"]);
        // Refused before reading: well under the timeout (no GB read first).
        assert!(start.elapsed() < TIMEOUT / 2, "{args:?}");
    }
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("f");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for args in [&["simulate", "f"][..], &["count", "-c", "f"]] {
        refused(&run(tmp.path(), args), &["f: is a FIFO"]);
    }
}

/// An endless producer on stdin: `yes | toolbudget count -c -` stops at the size limit, and
/// `/dev/stdin` (a pipe) is refused at once.
#[test]
fn an_endless_pipe_is_bounded() {
    for path in ["-", "/dev/stdin"] {
        let mut cmd = Command::new(bin());
        cmd.args(["count", "-c", path]).stdin(Stdio::piped());
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let chunk = vec![b'y'; 1 << 16];
            // Until the reader stops reading (broken pipe) or 256 MiB, far past the limit.
            for _ in 0..4096 {
                if stdin.write_all(&chunk).is_err() {
                    return;
                }
            }
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        let d = Done {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        if path == "-" {
            refused(&d, &["-: standard input is larger than the limit"]);
        } else {
            refused(&d, &["/dev/stdin: is a FIFO"]);
        }
    }
}

#[test]
fn out_onto_special_files_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let b = builtins();
    let target = tmp.path().join("target.txt");
    std::fs::write(&target, "keep me").unwrap();
    std::os::unix::fs::symlink(&target, tmp.path().join("link.txt")).unwrap();
    std::fs::create_dir(tmp.path().join("folder")).unwrap();
    for (out, what) in [
        ("link.txt", "symbolic link"),
        ("/dev/null", "character device"),
        ("folder", "directory"),
    ] {
        let d = run(tmp.path(), &["count", "-c", &b, "--out", out]);
        refused(&d, &[out, what]);
        assert!(d.stdout.is_empty());
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    assert!(tmp.path().join("link.txt").is_symlink());
    // A regular file and a new path are fine.
    for out in ["target.txt", "new/out.json"] {
        let d = run(
            tmp.path(),
            &["count", "-c", &b, "--format", "json", "--out", out],
        );
        assert_eq!(d.code, Some(0), "{}", d.stderr);
        assert!(
            std::fs::read_to_string(tmp.path().join(out))
                .unwrap()
                .contains("\"tools\"")
        );
    }
}

#[test]
fn report_out_is_checked_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("afile"), "x").unwrap();
    std::fs::create_dir(tmp.path().join("home")).unwrap();
    std::fs::write(tmp.path().join("home/notes.txt"), "mine").unwrap();
    std::os::unix::fs::symlink(tmp.path().join("home"), tmp.path().join("linked")).unwrap();
    for (out, what) in [
        ("afile", "is a file"),
        ("home", "did not write (notes.txt)"),
        ("linked", "symbolic link"),
    ] {
        let start = Instant::now();
        refused(&run(tmp.path(), &["report", "--out", out]), &[out, what]);
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "refused only after the work"
        );
    }
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("home/notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn a_closed_or_full_stdout_is_an_error() {
    let b = builtins();
    let mut cmd = Command::new(bin());
    cmd.args(["count", "-c", &b]);
    // SAFETY: close(2) between fork and exec touches no memory.
    unsafe {
        cmd.pre_exec(|| {
            libc::close(1);
            Ok(())
        });
    }
    let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("standard output is closed"),
        "{err}"
    );

    if Path::new("/dev/full").exists() {
        let mut cmd = Command::new(bin());
        cmd.args(["count", "-c", &b]).stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        );
        let out = cmd.stderr(Stdio::piped()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("No space left on device"), "{err}");
    }
    // `> /dev/null` on purpose is not an error.
    let out = Command::new(bin())
        .args(["count", "-c", &b])
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// The issue's 9-line scenario: a turn repeated 3,000 times holding a subagent whose turn is
/// repeated 3,000 times. Refused before anything is expanded (it used to abort allocating 3 GB).
#[test]
fn nested_repeats_are_refused_by_the_work_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let yaml = format!(
        "name: boom\ncatalogs:\n  - path: {}\nconversation:\n  - user: go\n    repeat: 3000\n    subagent:\n      conversation:\n        - {{user: sub, repeat: 3000}}\n",
        builtins()
    );
    std::fs::write(tmp.path().join("boom.yaml"), yaml).unwrap();
    let d = run(tmp.path(), &["simulate", "boom.yaml"]);
    refused(
        &d,
        &[
            "boom.yaml:5:5:",
            "expands to at least 9,006,000 requests",
            "over the budget of 500,000 requests of one run",
        ],
    );
}

fn eval_json(scorers: &[&str], ids: std::ops::Range<usize>) -> String {
    let rows: Vec<String> = ids
        .clone()
        .map(|i| {
            // Odd queries found their one tool first, even ones missed it: rows `compare`
            // can check against their ranks.
            let (rank, top) = if i % 2 == 1 { ("1", r#""a""#) } else { ("null", "") };
            format!(
                r#"{{"id": "q{i}", "expected": ["a"], "ranks": [{rank}], "top": [{top}], "metrics": {{"recall@5": {}}}}}"#,
                i % 2
            )
        })
        .collect();
    let results: Vec<String> = scorers
        .iter()
        .map(|s| {
            format!(
                r#"{{"scorer": "{s}", "metrics": {{"recall@5": 0.5}}, "per_query": [{}]}}"#,
                rows.join(",")
            )
        })
        .collect();
    format!(
        r#"{{"tool_count": 39, "query_count": {}, "results": [{}]}}"#,
        ids.len(),
        results.join(",")
    )
}

/// The regression gate fails closed: a vanished scorer fails the check, different query sets
/// and no query in common are refused.
#[test]
fn the_compare_gate_cannot_be_fooled() {
    let tmp = tempfile::tempdir().unwrap();
    let w = |name: &str, text: String| std::fs::write(tmp.path().join(name), text).unwrap();
    w("base.json", eval_json(&["bm25", "semantic"], 0..96));
    w("no_semantic.json", eval_json(&["bm25"], 0..96));
    w("half.json", eval_json(&["bm25", "semantic"], 0..50));
    w("other.json", eval_json(&["bm25", "semantic"], 200..210));

    let d = run(tmp.path(), &["compare", "base.json", "no_semantic.json"]);
    assert_eq!(d.code, Some(1), "{}", d.stderr);
    assert!(
        d.stdout.contains("FAIL: the candidate lacks semantic"),
        "{}",
        d.stdout
    );
    let d = run(
        tmp.path(),
        &[
            "compare",
            "base.json",
            "no_semantic.json",
            "--allow-missing",
            "semantic",
        ],
    );
    assert_eq!(d.code, Some(0), "{}", d.stderr);

    let d = run(tmp.path(), &["compare", "base.json", "half.json"]);
    refused(
        &d,
        &[
            "96 queries in base.json, 50 in half.json, 50 in common",
            "--paired-only",
        ],
    );
    let d = run(
        tmp.path(),
        &["compare", "base.json", "half.json", "--paired-only"],
    );
    assert_eq!(d.code, Some(0), "{}", d.stderr);
    assert!(d.stdout.contains("50 queries paired"), "{}", d.stdout);

    let d = run(
        tmp.path(),
        &["compare", "base.json", "other.json", "--paired-only"],
    );
    refused(&d, &["no query id in common"]);
}

/// Two scenarios with one name in a run would overwrite each other's charts: refused, naming both.
#[test]
fn scenario_names_are_unique_within_a_run() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        "catalogs:\n  - path: {}\nconversation:\n  - user: hi\n",
        builtins()
    );
    std::fs::create_dir(tmp.path().join("sc")).unwrap();
    std::fs::write(tmp.path().join("sc/a.yaml"), format!("name: same\n{body}")).unwrap();
    std::fs::write(tmp.path().join("sc/b.yaml"), format!("name: same\n{body}")).unwrap();
    std::fs::write(tmp.path().join("sc/c.yaml"), format!("name: Same!\n{body}")).unwrap();
    let d = run(tmp.path(), &["simulate", "sc/a.yaml", "sc/b.yaml"]);
    refused(&d, &["sc/b.yaml:", "\"same\" is already used by sc/a.yaml"]);
    // Names whose chart files would collide count as the same.
    let d = run(tmp.path(), &["simulate", "sc/a.yaml", "sc/c.yaml"]);
    refused(&d, &["sc/c.yaml:", "already used by sc/a.yaml"]);
    let d = run(tmp.path(), &["report", "--scenarios", "sc", "--out", "r"]);
    refused(&d, &["sc/b.yaml:", "already used by"]);
    assert!(!tmp.path().join("r").exists());
}

/// `--out` never replaces what the command reads (#26): the baseline of a compare, the query
/// file of an eval, a report folder holding the run's sessions; and a report folder with
/// someone else's files in it is refused, naming them, with nothing deleted.
#[test]
fn out_never_replaces_an_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("base.json"), "{\"keep\": true}").unwrap();
    std::fs::write(dir.join("cand.json"), "{}").unwrap();
    let d = run(
        dir,
        &["compare", "base.json", "cand.json", "--out", "./base.json"],
    );
    refused(
        &d,
        &[
            "--out ./base.json",
            "one of this command's inputs (base.json)",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("base.json")).unwrap(),
        "{\"keep\": true}"
    );

    let queries = "{\"id\":\"q1\",\"query\":\"read a file\",\"expected\":[\"Read\"]}\n";
    std::fs::write(dir.join("q.jsonl"), queries).unwrap();
    let d = run(
        dir,
        &[
            "eval",
            "-c",
            &builtins(),
            "--queries",
            "q.jsonl",
            "--out",
            "q.jsonl",
        ],
    );
    refused(&d, &["--out q.jsonl", "inputs (q.jsonl)"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("q.jsonl")).unwrap(),
        queries
    );

    // The natural layout: sessions imported under reports/, then a report into reports/.
    std::fs::create_dir_all(dir.join("reports/sessions")).unwrap();
    std::fs::write(dir.join("reports/sessions/a.yaml"), "name: a\n").unwrap();
    let d = run(
        dir,
        &[
            "report",
            "--out",
            "reports",
            "--sessions",
            "reports/sessions",
        ],
    );
    refused(&d, &["--out reports", "reports/sessions"]);
    let d = run(dir, &["report", "--out", "reports"]);
    refused(&d, &["did not write (sessions/a.yaml)"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("reports/sessions/a.yaml")).unwrap(),
        "name: a\n"
    );
    // The current folder cannot be swapped out either: refused before the work.
    refused(
        &run(&dir.join("reports"), &["report", "--out", "."]),
        &["current folder"],
    );
}

/// `-` twice: the second read found standard input drained and said "file is empty" (#26).
#[test]
fn stdin_given_twice_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("r.json"), eval_json(&["keyword"], 0..3)).unwrap();
    let mut cmd = Command::new(bin());
    cmd.current_dir(tmp.path())
        .args(["compare", "-", "-"])
        .stdin(std::fs::File::open(tmp.path().join("r.json")).unwrap());
    let d = run_with(cmd);
    refused(&d, &["`-` (standard input) is given more than once"]);
}

/// User-settable numbers that sized a loop: --fusion-depth 2^64-1 hung (#26).
#[test]
fn fusion_numbers_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let d = run(
        tmp.path(),
        &[
            "search",
            "-c",
            &builtins(),
            "--scorer",
            "hybrid",
            "--fusion-depth",
            "18446744073709551615",
            "read",
        ],
    );
    refused(&d, &["fusion depth must be between 1 and 200000"]);
}

/// Two symlinks to `..` inside a `--pool` folder made the walk exponential (#26): links to
/// folders are not followed, the pool's one catalog is read once.
#[test]
fn pool_symlink_loops_are_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let pool = tmp.path().join("pool");
    std::fs::create_dir(&pool).unwrap();
    std::fs::copy(
        crate::support::repo("fixtures/catalogs/builtins.yaml"),
        pool.join("other.yaml"),
    )
    .unwrap();
    std::os::unix::fs::symlink("..", pool.join("up1")).unwrap();
    std::os::unix::fs::symlink("..", pool.join("up2")).unwrap();
    let queries = "{\"id\":\"q1\",\"query\":\"read a file\",\"expected\":[\"Read\"]}\n";
    std::fs::write(tmp.path().join("q.jsonl"), queries).unwrap();
    let d = run(
        tmp.path(),
        &[
            "eval",
            "-c",
            &builtins(),
            "--queries",
            "q.jsonl",
            "--pool",
            "pool",
            "--format",
            "json",
        ],
    );
    assert_eq!(d.code, Some(0), "{}", d.stderr);
    assert!(d.stdout.contains("\"pool\""), "{}", d.stdout);
}

/// A scorer (`exec:` protocol, argv[1] EXEC) or MCP server (MCP) that first double-forks a
/// `setsid()` grandchild sleeping for minutes, out of its process group, and writes the
/// grandchild's pid to `argv[2]` before it answers anything.
const DOUBLE_FORKER: &str = r#"import json, os, sys, time
mode, pidfile = sys.argv[1], sys.argv[2]
r, w = os.pipe()
mid = os.fork()
if mid == 0:
    os.setsid()
    g = os.fork()
    if g == 0:
        os.execvp("sleep", ["sleep", "300"])
    os.write(w, str(g).encode()); os._exit(0)
os.waitpid(mid, 0); os.close(w)
open(pidfile, "w").write(os.read(r, 32).decode())
def send(m): sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if mode == "EXEC":
        if m["type"] == "index": send({"type": "ready", "name": "forker", "version": "1"})
        elif m["type"] == "search": send({"type": "results", "id": m["id"], "results": []})
        continue
    if "id" not in m: continue
    if m["method"] == "initialize":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "f", "version": "1"}}})
    elif m["method"] == "tools/list":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"tools": [{"name": "t", "description": "d", "inputSchema": {"type": "object"}}]}})
    else:
        send({"jsonrpc": "2.0", "id": m["id"], "result": {}})
"#;

/// Whether `pid` names a process still running (not gone, not a zombie).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .next();
        state != Some("Z") && state != Some("X")
    })
}

/// No process outlives the run: a `setsid()` grandchild of an `exec:` scorer and of an MCP
/// server started by `catalog import` (out of the process group we kill) is ended with the run
/// (both kept running, re-parented to init, before toolbudget became a child subreaper).
#[cfg(target_os = "linux")]
#[test]
fn a_setsid_grandchild_of_a_scorer_or_mcp_server_does_not_outlive_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("forker.py"), DOUBLE_FORKER).unwrap();
    let db = crate::support::repo("fixtures/catalogs/mcp/db.json");
    let runs: [(&str, Vec<String>); 2] = [
        (
            "exec.pid",
            vec![
                "search".into(),
                "-c".into(),
                db.display().to_string(),
                "run query".into(),
                "--scorer".into(),
                "exec:python3 forker.py EXEC exec.pid".into(),
            ],
        ),
        (
            "mcp.pid",
            vec![
                "catalog".into(),
                "import".into(),
                "--stdio".into(),
                "python3 forker.py MCP mcp.pid".into(),
                "--server".into(),
                "f".into(),
            ],
        ),
    ];
    for (pidfile, args) in runs {
        let mut cmd = Command::new(bin());
        cmd.current_dir(dir.path()).arg("-q").args(&args);
        let done = run_with(cmd);
        assert_eq!(done.code, Some(0), "{args:?}: {}", done.stderr);
        let pid: i32 = std::fs::read_to_string(dir.path().join(pidfile))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let alive = running(pid);
        if alive {
            // SAFETY: ends the test's own stray grandchild.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        assert!(!alive, "{args:?}: the grandchild {pid} outlived the run");
    }
}

/// A folder files are added to (`session import --out`) is written only where its list says
/// toolbudget wrote before (#40 probe 2): a user's own `calibration.json` (or a file named like
/// a session's scenario) beside the logs is refused, naming it, before any file is written; a
/// folder of its own output is replaced file by file, run after run.
#[test]
fn session_import_replaces_only_files_it_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let log = "d0f1b2c3-9e0a-4b12-b324-354657687980";
    let logs = dir.join("d");
    std::fs::create_dir(&logs).unwrap();
    std::fs::copy(
        crate::support::repo(&format!("fixtures/sessions/claude/searches/{log}.jsonl")),
        logs.join(format!("{log}.jsonl")),
    )
    .unwrap();
    let mine = "{\"note\": \"hand-made\"}";
    std::fs::write(logs.join("calibration.json"), mine).unwrap();
    let tracker = format!(
        "tracker={}",
        crate::support::repo("fixtures/catalogs/mcp/tracker.json").display()
    );
    let import = |out: &str| {
        run(
            dir,
            &[
                "-q",
                "session",
                "import",
                "d",
                "-c",
                &builtins(),
                "-c",
                &tracker,
                "--out",
                out,
            ],
        )
    };
    refused(
        &import("d"),
        &["d/calibration.json", "toolbudget did not write it"],
    );
    assert_eq!(
        std::fs::read_to_string(logs.join("calibration.json")).unwrap(),
        mine
    );
    assert!(
        !logs.join(format!("{log}.yaml")).exists(),
        "nothing written"
    );

    // Its own folder: written, then replaced by the next run.
    for _ in 0..2 {
        let d = import("out");
        assert_eq!(d.code, Some(0), "{}", d.stderr);
    }
    assert!(dir.join("out/calibration.json").is_file());
    // A user's file named like a scenario the import writes, in a folder of its own.
    std::fs::create_dir(dir.join("other")).unwrap();
    std::fs::write(dir.join(format!("other/{log}.yaml")), "name: mine\n").unwrap();
    refused(&import("other"), &[&format!("other/{log}.yaml")]);
    assert_eq!(
        std::fs::read_to_string(dir.join(format!("other/{log}.yaml"))).unwrap(),
        "name: mine\n"
    );
    assert!(!dir.join("other/calibration.json").exists());
}

/// `report --out` onto a folder of notes that holds a catalog a scenario reads (#40 probe 15):
/// the catalog is an input (refused as such), and without it the folder is still no old
/// report (an `index.md` and `.json` files are not a report's layout): refused, naming them.
#[test]
fn report_never_takes_a_notes_folder_for_an_old_report() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for d in ["scen", "cats", "fix/catalogs/mcp"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    let db = crate::support::repo("fixtures/catalogs/mcp/db.json");
    std::fs::copy(&db, dir.join("fix/catalogs/mcp/db.json")).unwrap();
    std::fs::copy(&db, dir.join("cats/db.json")).unwrap();
    std::fs::write(dir.join("cats/index.md"), "# my notes\n").unwrap();
    std::fs::write(
        dir.join("scen/a.yaml"),
        "name: a\nsystem_prompt_tokens: 100\ncatalogs:\n  - {path: ../cats/db.json, server: db}\n\
         deferred: {defer_mcp: true}\nconversation:\n  - {user: hi, reply_tokens: 20}\n",
    )
    .unwrap();
    let report = || {
        run(
            dir,
            &[
                "-q",
                "report",
                "--scenarios",
                "scen",
                "--fixtures",
                "fix",
                "--out",
                "cats",
            ],
        )
    };
    refused(
        &report(),
        &["--out cats", "holding one of this run's inputs", "db.json"],
    );
    // No scenario reads it now: still a folder of someone's files, not an old report.
    std::fs::remove_file(dir.join("scen/a.yaml")).unwrap();
    refused(&report(), &["did not write (db.json, index.md)"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("cats/index.md")).unwrap(),
        "# my notes\n"
    );
    assert!(dir.join("cats/db.json").is_file());
}

/// A server name holding `__` makes ids ambiguous (`mcp__a__b__run`: server `a__b`'s `run`, or
/// server `a`'s `b__run`): refused wherever a server name enters, located, saying why (#40
/// probe 49).
#[test]
fn a_server_name_with_a_double_underscore_is_refused_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let list = "{\"tools\":[{\"name\":\"run\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}}]}\n";
    std::fs::write(dir.join("x.json"), list).unwrap();
    std::fs::write(dir.join("a__b.json"), list).unwrap();
    std::fs::write(
        dir.join("native.yaml"),
        "servers:\n  - name: a__b\n    tools:\n      - {name: run, description: d, input_schema: {type: object}}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("s.yaml"),
        "catalogs: [{path: x.json, server: a__b}]\nconversation: [{user: hi}]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("x.mcp.json"),
        "{\"mcpServers\": {\"a__b\": {\"command\": \"true\"}}}\n",
    )
    .unwrap();
    let why = "contains \"__\": tool ids are mcp__<server>__<tool>";
    refused(
        &run(dir, &["count", "-c", "a__b=x.json"]),
        &["x.json:1:", why],
    );
    refused(
        &run(dir, &["count", "-c", "a__b.json"]),
        &["a__b.json:1:", why, "file's stem"],
    );
    refused(
        &run(dir, &["count", "-c", "native.yaml"]),
        &["native.yaml:2:", "servers[0].name", why],
    );
    refused(&run(dir, &["simulate", "s.yaml"]), &["x.json:1:", why]);
    refused(
        &run(
            dir,
            &["catalog", "import", "--stdio", "true", "--server", "a__b"],
        ),
        &["--server", why],
    );
    let d = run(
        dir,
        &[
            "catalog",
            "import",
            "--config",
            "x.mcp.json",
            "--out",
            "snap",
        ],
    );
    assert_eq!(d.code, Some(2), "{}", d.stderr);
    assert!(
        d.stderr.contains("x.mcp.json:1:") && d.stderr.contains(why),
        "{}",
        d.stderr
    );
    assert!(!dir.join("snap/a__b.json").exists());
}
