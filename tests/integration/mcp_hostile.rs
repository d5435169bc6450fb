//! `catalog import` against hostile MCP servers written here (Python 3 stdlib): one that floods
//! requests of its own and never reads its stdin, one that floods notifications, one whose
//! `tools/list` page is over the SDK's 16 MiB line limit. Each must end at once with an error
//! that says what the server did, not as a timeout and not by growing without bound; a server
//! that sends a few pings of its own is still imported.

use std::path::Path;
use std::process::{Command, Output};

/// The part every script shares: answers `initialize`, then hands each request to `on(msg)`.
const PRELUDE: &str = r#"
import json, sys
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()
def serve(on):
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue
        if msg["method"] == "initialize":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"}}})
        else:
            on(msg)
"#;

fn python() -> Option<&'static str> {
    match Command::new("python3").arg("--version").output() {
        Ok(o) if o.status.success() => Some("python3"),
        _ => {
            eprintln!("skipped: python3 is not installed (the hostile servers are Python scripts)");
            None
        }
    }
}

/// Writes the script into `dir` and imports from it with the default timeouts (20 s): an
/// error that came from a timeout would say "no answer".
fn import(dir: &Path, py: &str, body: &str) -> Output {
    let script = dir.join("server.py");
    std::fs::write(&script, format!("{PRELUDE}\n{body}")).unwrap();
    Command::new(crate::support::bin())
        .args(["catalog", "import", "--server", "h", "--stdio"])
        .arg(format!("{py} '{}'", script.display()))
        .output()
        .expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_server_that_floods_pings_and_never_reads_is_stopped_with_a_count() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Answers `initialize`, then never reads its stdin again: every answer toolbudget owes it
    // would pile up unwritten.
    let o = import(
        dir.path(),
        py,
        r#"
init = json.loads(sys.stdin.readline())
send({"jsonrpc": "2.0", "id": init["id"], "result": {
    "protocolVersion": init["params"]["protocolVersion"], "capabilities": {"tools": {}},
    "serverInfo": {"name": "hostile", "version": "1"}}})
i = 0
while True:
    i += 1
    sys.stdout.write('{"jsonrpc":"2.0","id":"s%d","method":"ping"}\n' % i)
"#,
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    // Lines `{"jsonrpc":"2.0","id":"sN","method":"ping"}` and a newline, N = 1..=10001.
    let bytes: usize = (1..=10_001usize).map(|i| 43 + i.to_string().len()).sum();
    assert!(
        e.contains(&format!(
            "`tools/list` (page 1) failed: the server sent 10001 requests of its own ({bytes} bytes; the \
             first: \"ping\"), over the most one session answers (10000 requests, 64 MiB)"
        )),
        "{e}"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn a_server_that_pings_before_initialize_and_never_reads_times_out_saying_so() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("server.py");
    // Before the handshake the SDK answers each ping at once, so it waits on the full pipe
    // (bounded) and the start timeout ends it; the error says why.
    std::fs::write(
        &script,
        format!(
            "{PRELUDE}\nwhile True:\n    sys.stdout.write('{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}\\n')\n"
        ),
    )
    .unwrap();
    let o = Command::new(crate::support::bin())
        .args([
            "catalog",
            "import",
            "--server",
            "h",
            "--timeout-secs",
            "2",
            "--stdio",
        ])
        .arg(format!("{py} '{}'", script.display()))
        .output()
        .expect("the binary runs");
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(
            "`initialize` failed: no answer to `initialize` within 2 s (raise it with \
             --timeout-secs); the server does not read its stdin (toolbudget's write to it is \
             still waiting)"
        ),
        "{e}"
    );
}

#[test]
fn a_few_pings_of_the_servers_own_are_answered_and_the_import_goes_on() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let o = import(
        dir.path(),
        py,
        r#"
def on(msg):
    if msg["method"] == "tools/list":
        for i in range(5):
            send({"jsonrpc": "2.0", "id": "p%d" % i, "method": "ping"})
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "listing"}})
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [
            {"name": "t", "inputSchema": {"type": "object"}}]}})
serve(on)
"#,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let catalog: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(catalog["tools"][0]["name"], "t", "{catalog}");
    assert_eq!(
        catalog["tools"].as_array().map(Vec::len),
        Some(1),
        "{catalog}"
    );
}

#[test]
fn a_notification_flood_without_an_answer_is_stopped() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let o = import(
        dir.path(),
        py,
        r#"
def on(msg):
    while True:
        send({"jsonrpc": "2.0", "method": "notifications/progress",
              "params": {"progressToken": 1, "progress": 0}})
serve(on)
"#,
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(
            "`tools/list` (page 1) failed: the server sent more than 10000 notifications \
             without answering (the last: \"notifications/progress\")"
        ),
        "{e}"
    );
}

#[test]
fn a_page_over_the_sdk_line_limit_is_an_error_with_its_size_not_a_timeout() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    // 17 MiB of description: the SDK would drop the line silently and wait out the timeout.
    let o = import(
        dir.path(),
        py,
        r#"
def on(msg):
    tool = {"name": "big", "description": "x" * (17 * 1024 * 1024), "inputSchema": {"type": "object"}}
    line = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [tool]}}) + "\n"
    sys.stderr.write("answer bytes %d\n" % len(line))
    sys.stdout.write(line)
    sys.stdout.flush()
serve(on)
"#,
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    // The server says on stderr how long its line was (the id is the SDK's).
    let bytes: usize = e
        .split("answer bytes ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the server's stderr is shown: {e}"));
    assert!(bytes > 17 * 1024 * 1024, "{bytes}");
    assert!(
        e.contains(&format!(
            "`tools/list` (page 1) failed: the server sent a message of {bytes} bytes, over the \
             16 MiB limit on one MCP message (the MCP SDK's); a server with that many tools \
             must paginate `tools/list`"
        )),
        "{e}"
    );
    assert!(!e.contains("no answer"), "{e}");
}

#[test]
fn a_server_with_more_tools_than_a_run_may_hold_is_stopped_at_the_page_that_passes_the_limit() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    // 10,000 tools a page and always another page: the 21st passes the 200,000-tool limit.
    let o = import(
        dir.path(),
        py,
        r#"
def on(msg):
    page = int((msg.get("params") or {}).get("cursor") or 0)
    tools = [{"name": "t%d_%d" % (page, i), "inputSchema": {"type": "object"}} for i in range(10000)]
    send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": tools, "nextCursor": str(page + 1)}})
serve(on)
"#,
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(
            "`tools/list` had listed 210000 tools by page 21, more than the limit of 200000 tools \
             in a run"
        ),
        "{e}"
    );
}

/// An integer beyond 64 bits in a listed schema would be read by the SDK as a float and
/// written back changed (`1.8446744073709552e+19`): the tee refuses the answer, naming the
/// page, the tool, the path and the column; `u64::MAX` itself is imported exactly.
#[test]
fn an_integer_beyond_64_bits_in_a_listed_schema_is_refused_and_u64_max_is_kept() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let body = |max: &str| {
        format!(
            r#"
def on(msg):
    tools = [{{"name": "ok", "inputSchema": {{"type": "object"}}}},
             {{"name": "wide", "description": "18446744073709551616 in text is fine",
               "inputSchema": {{"type": "object", "properties": {{"n": {{"type": "integer", "maximum": {max}}}}}}}}}]
    send({{"jsonrpc": "2.0", "id": msg["id"], "result": {{"tools": tools}}}})
serve(on)
"#
        )
    };
    let o = import(dir.path(), py, &body("18446744073709551616"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(
            "`tools/list` (page 1) failed: the server's answer (JSON-RPC id 1) for tool \"wide\" \
             holds, at result.tools[1].inputSchema.properties.n.maximum (column "
        ),
        "{e}"
    );
    assert!(
        e.contains(
            "the integer 18446744073709551616 does not fit in 64 bits: JSON numbers beyond 64 \
             bits would be stored as floats and changed (18446744073709551616 would become \
             1.8446744073709552e+19); the server must write it as a string"
        ),
        "{e}"
    );
    assert!(!e.contains("no answer"), "{e}");
    let o = import(dir.path(), py, &body("18446744073709551615"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("\"maximum\": 18446744073709551615"), "{out}");
}
