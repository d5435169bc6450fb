//! Progress bars (#27): every command that can run long draws its bar on stderr only when
//! stderr is a terminal. Here stderr is a pipe, so no bar byte may appear (no carriage return,
//! no escape sequence, no `[===>  ]`), stdout is the same with and without `--quiet`, and a
//! warning printed while a bar runs is a line of its own.

use crate::support::{repo, toolbudget};

struct Ran {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

fn run(args: &[&str]) -> Ran {
    let out = toolbudget()
        .current_dir(repo(""))
        .env_remove("ANTHROPIC_API_KEY")
        .args(args)
        .output()
        .unwrap();
    Ran {
        code: out.status.code(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// What indicatif writes when it draws: a carriage return or an escape (cursor moves, clears),
/// or the bar itself.
fn assert_no_bar(what: &str, stderr: &str) {
    assert!(
        !stderr.contains('\r') && !stderr.contains('\u{1b}'),
        "{what}: terminal control bytes on a piped stderr: {stderr:?}"
    );
    assert!(
        !stderr.contains("[=") && !stderr.contains("=>"),
        "{what}: a bar on a piped stderr: {stderr:?}"
    );
}

/// The command succeeds, draws no bar, and (when its output holds no measured time) prints
/// the same stdout under `--quiet`.
fn check(args: &[&str], same_stdout: bool) {
    let what = args.join(" ");
    let plain = run(args);
    assert_eq!(plain.code, Some(0), "{what}: {}", plain.stderr);
    assert_no_bar(&what, &plain.stderr);
    let mut quiet_args = vec!["--quiet"];
    quiet_args.extend_from_slice(args);
    let quiet = run(&quiet_args);
    assert_eq!(quiet.code, Some(0), "{what} --quiet: {}", quiet.stderr);
    assert_no_bar(&what, &quiet.stderr);
    if same_stdout {
        assert_eq!(
            quiet.stdout, plain.stdout,
            "{what}: stdout moved with --quiet"
        );
    } else {
        assert!(
            !quiet.stdout.is_empty() && !plain.stdout.is_empty(),
            "{what}"
        );
    }
}

#[test]
fn no_bar_is_drawn_on_a_piped_stderr() {
    let exact: &[&[&str]] = &[
        &["count", "-c", "fixtures/catalogs/mcp"],
        &["count", "-c", "fixtures/catalogs/mcp", "--compare-counters"],
        &[
            "count",
            "-c",
            "fixtures/catalogs/builtins.yaml",
            "--format",
            "json",
        ],
        &[
            "simulate",
            "scenarios/failure-modes.yaml",
            "scenarios/hi.yaml",
            "--format",
            "json",
        ],
    ];
    for args in exact {
        check(args, true);
    }
    // Measured search latencies differ between two runs: only the bar is checked.
    let timed: &[&[&str]] = &[
        &["simulate", "scenarios/failure-modes.yaml"],
        &[
            "eval",
            "-c",
            "fixtures/catalogs/builtins.yaml",
            "-c",
            "fixtures/catalogs/mcp",
            "--queries",
            "fixtures/queries/fixtures.jsonl",
            "--format",
            "json",
        ],
        &[
            "search",
            "-c",
            "fixtures/catalogs/builtins.yaml",
            "read a file",
        ],
    ];
    for args in timed {
        check(args, false);
    }
}

#[test]
fn compare_draws_no_bar_and_keeps_its_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let eval = dir.path().join("eval.json");
    let made = run(&[
        "--quiet",
        "eval",
        "-c",
        "fixtures/catalogs/builtins.yaml",
        "-c",
        "fixtures/catalogs/mcp",
        "--queries",
        "fixtures/queries/fixtures.jsonl",
        "--per-query",
        "--format",
        "json",
        "--out",
        eval.to_str().unwrap(),
    ]);
    assert_eq!(made.code, Some(0), "{}", made.stderr);
    let e = eval.to_str().unwrap();
    check(&["compare", e, e], true);
}

/// The refusal warning (a scorer refused a query) is printed while the scorer's bar runs: on
/// a pipe it is a whole line of its own, never glued to a bar's last character.
#[test]
fn a_warning_during_a_bar_is_a_line_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let queries = dir.path().join("q.jsonl");
    std::fs::write(
        &queries,
        "{\"id\": \"q1\", \"query\": \"read a file\", \"expected\": [\"Read\"]}\n\
         {\"id\": \"q2\", \"query\": \"(unclosed\", \"expected\": [\"Read\"]}\n",
    )
    .unwrap();
    let r = run(&[
        "eval",
        "-c",
        "fixtures/catalogs/builtins.yaml",
        "--queries",
        queries.to_str().unwrap(),
        "--scorer",
        "regex",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_no_bar("eval --scorer regex", &r.stderr);
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["results"][0]["refused_queries"], 1, "{v}");
    let warning =
        "warning: regex refused 1 query; they score 0 (see `refused` in --per-query rows)";
    assert!(
        r.stderr.lines().any(|l| l == warning),
        "the warning is not a line of its own: {:?}",
        r.stderr
    );
    // --quiet silences it.
    let q = run(&[
        "--quiet",
        "eval",
        "-c",
        "fixtures/catalogs/builtins.yaml",
        "--queries",
        queries.to_str().unwrap(),
        "--scorer",
        "regex",
        "--format",
        "json",
    ]);
    assert!(!q.stderr.contains("warning:"), "{}", q.stderr);
    let vq: serde_json::Value = serde_json::from_slice(&q.stdout).unwrap();
    assert_eq!(vq["results"][0]["refused_queries"], 1);
}
