//! Issue #40's escaping, through the binary: what reaches a terminal (text tables, stderr
//! messages carrying an external scorer's or MCP server's words) is one line a message with
//! control characters shown as escapes and a bounded length; what reaches Markdown (`--format
//! md` of every command, the report) cannot open HTML, links, code or a new block.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::{bin, repo};

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// No byte a terminal acts on: ESC, CR, BEL, or any other control character but the newline
/// that ends a line.
fn assert_inert(what: &str, s: &str) {
    let raw: Vec<char> = s.chars().filter(|c| c.is_control() && *c != '\n').collect();
    assert!(raw.is_empty(), "{what}: raw {raw:?} in {s:?}");
}

/// The error line of an `exec:` scorer whose error message is 10 MB, or holds escape
/// sequences and 5,000 lines, or whose `ready` name and version hold them: one line, escapes
/// shown, at most a few KB.
#[test]
fn an_external_scorers_words_reach_stderr_as_one_bounded_line() {
    let db = repo("fixtures/catalogs/mcp/db.json").display().to_string();
    let adapter = repo("tests/external_fakes/hostile_adapter.py");
    for (mode, shown) in [
        ("error-big", "EEEE… (10485260 more bytes)"),
        (
            "error-esc",
            "bad\\x1b[31mRED\\x1b]0;title\\x07\\rCR\\nline 0\\nline 1",
        ),
        (
            "ready-name",
            "(evil\\x1b[31mRED\\x1b]0;pwned\\x07\\r\\nforged line 1\\x1b[2J)",
        ),
    ] {
        let scorer = format!("exec:python3 {} {mode}", adapter.display());
        let o = run_in(
            &repo(""),
            &["-q", "search", "-c", &db, "run query", "--scorer", &scorer],
        );
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{mode}: {err}");
        assert_eq!(err.lines().count(), 1, "{mode}: {err}");
        assert!(err.starts_with("error: exec:python3 "), "{mode}: {err}");
        assert!(err.contains(shown), "{mode}: {shown:?} not in {err}");
        assert!(err.len() < 4096, "{mode}: {} bytes", err.len());
        assert_inert(mode, &err);
    }
}

/// An MCP server's name and its JSON-RPC error text (8 MB, escapes, 3,000 lines), in
/// `catalog import` and in an `mcp:` scorer: escaped and bounded on stderr.
#[test]
fn an_mcp_servers_words_reach_stderr_escaped_and_bounded() {
    let server = repo("tests/mcp_fakes/hostile_server.py")
        .display()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "-q",
            "catalog",
            "import",
            "--stdio",
            &format!("python3 {server} list-error"),
            "--server",
            "s",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.lines()
            .next()
            .unwrap()
            .contains("bad\\x1b[31mRED\\r\\nl0\\nl1"),
        "{err}"
    );
    assert!(err.contains("more bytes)"), "{err}");
    assert!(err.len() < 4096, "{} bytes: {err}", err.len());
    assert_inert("catalog import", &err);
    let db = repo("fixtures/catalogs/mcp/db.json").display().to_string();
    let scorer = format!("mcp:python3 {server} call-error");
    let o = run_in(
        dir.path(),
        &["-q", "search", "-c", &db, "run query", "--scorer", &scorer],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("(srv\\x1b[31mRED\\x1b]0;t\\x07\\r\\nforged 1, tool search_tools)"),
        "{err}"
    );
    assert!(err.len() < 4096, "{} bytes: {err}", err.len());
    assert_inert("search mcp:", &err);
}

/// Tool names holding ESC, CR and a line break, in `count`'s text table: escaped, one row a
/// tool (a line break in a name forged a row).
#[test]
fn text_tables_show_control_characters_as_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "nl\nforged | row  999",
        "esc\x1b[31mRED\x1b[0m\x1b]0;title\x07",
        "cr\rOVERWRITE",
        "plain_tool",
    ];
    let tools: Vec<serde_json::Value> = names
        .iter()
        .map(|n| serde_json::json!({"name": n, "description": "d", "inputSchema": {"type": "object"}}))
        .collect();
    std::fs::write(
        dir.path().join("bad.json"),
        serde_json::json!({ "tools": tools }).to_string(),
    )
    .unwrap();
    let o = run_in(dir.path(), &["-q", "count", "-c", "s=bad.json"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_inert("count table", &out);
    assert!(out.contains("mcp__s__nl\\nforged | row  999"), "{out}");
    assert!(
        out.contains("mcp__s__esc\\x1b[31mRED\\x1b[0m\\x1b]0;title\\x07"),
        "{out}"
    );
    assert!(out.contains("mcp__s__cr\\rOVERWRITE"), "{out}");
    // One line a tool: no line starts with the forged text.
    assert!(!out.lines().any(|l| l.starts_with("forged")), "{out}");
}
