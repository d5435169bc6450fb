//! `catalog import` against small MCP servers of our own (tests/mcp_fakes/*.py): one that
//! paginates correctly, and ones that exit at once, never answer, print garbage, loop their
//! cursor or answer with a malformed result. They need only python3.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn bin() -> Command {
    Command::new(crate::support::bin())
}

fn fake(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp_fakes")
        .join(name)
}

/// python3 on PATH, or a printed reason to skip.
fn python() -> Option<&'static str> {
    match Command::new("python3").arg("--version").output() {
        Ok(o) if o.status.success() => Some("python3"),
        _ => {
            eprintln!(
                "skipped: python3 is not installed (the fake MCP servers are Python scripts)"
            );
            None
        }
    }
}

fn stdio_line(py: &str, script: &str, extra: &str) -> String {
    format!("{py} '{}' {extra}", fake(script).display())
}

fn import_stdio(line: &str, extra: &[&str]) -> Output {
    bin()
        .args(["catalog", "import", "--stdio", line, "--server"])
        .args(extra)
        .output()
        .expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn paginated_server_is_imported_in_order_with_fields_and_counts() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("weather.json");
    let o = import_stdio(
        &stdio_line(py, "paginated_server.py", ""),
        &[
            "weather",
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["servers"][0]["status"], "ok");
    assert_eq!(report["servers"][0]["tools"], 3);
    assert_eq!(report["servers"][0]["pages"], 2);
    assert_eq!(report["servers"][0]["server_info"], "fake-weather 0.0.1");
    assert_eq!(report["tokenizer"], "o200k_base");

    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("{\n  \"tools\": [\n    {\n      \"name\": \"get_weather\",\n"));
    assert!(text.contains("(°C)"), "non-ASCII is kept as UTF-8");
    assert!(text.ends_with("}\n"));
    let doc: Value = serde_json::from_str(&text).unwrap();
    let tools = doc["tools"].as_array().unwrap();
    let names: Vec<_> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["get_weather", "get_forecast", "set_units"]);
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&tools[0]),
        ["name", "title", "description", "inputSchema", "annotations"]
    );
    // The schema keeps the server's key order, which is what the token count renders.
    assert_eq!(
        keys(&tools[0]["inputSchema"]),
        ["required", "type", "properties"]
    );
    assert_eq!(tools[1]["_meta"]["vendor/tag"], "forecast");

    // The tokens printed by import are the tokens `count` finds in the written file.
    let c = bin()
        .args(["count", "--format", "json", "--catalog"])
        .arg(format!("weather={}", out.display()))
        .output()
        .unwrap();
    assert_eq!(c.status.code(), Some(0), "{}", stderr(&c));
    let count: Value = serde_json::from_slice(&c.stdout).unwrap();
    assert_eq!(count["total_tokens"], report["total_tokens"]);
    assert!(report["total_tokens"].as_u64().unwrap() > 50);
    assert_eq!(count["tools"][2]["id"], "mcp__weather__set_units");

    // Same server, same bytes.
    let again = dir.path().join("again.json");
    let o = import_stdio(
        &stdio_line(py, "paginated_server.py", ""),
        &["weather", "--out", again.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read(&again).unwrap(), text.as_bytes());
}

#[test]
fn without_out_the_catalog_goes_to_stdout_and_the_summary_to_stderr() {
    let Some(py) = python() else { return };
    let o = import_stdio(&stdio_line(py, "paginated_server.py", ""), &["w"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["tools"].as_array().unwrap().len(), 3);
    assert!(stderr(&o).starts_with("w: 3 tools, "), "{}", stderr(&o));
    assert!(stderr(&o).contains("2 pages"), "{}", stderr(&o));
}

#[test]
fn a_server_that_exits_at_once_is_reported_with_its_status_and_stderr() {
    let Some(py) = python() else { return };
    let o = import_stdio(&stdio_line(py, "exits_at_once.py", ""), &["gh"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.starts_with("error: server \"gh\" ("), "{e}");
    assert!(e.contains("`initialize` failed"), "{e}");
    assert!(e.contains("the server exited with status 3"), "{e}");
    assert!(e.contains("  | fatal: GITHUB_TOKEN is not set\n"), "{e}");
    assert!(o.stdout.is_empty());
}

#[test]
fn a_server_that_never_answers_times_out_and_its_process_group_is_killed() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("grandchild.pid");
    let started = Instant::now();
    let o = bin()
        .args([
            "catalog",
            "import",
            "--server",
            "stuck",
            "--timeout-secs",
            "2",
        ])
        .arg("--stdio")
        .arg(stdio_line(py, "never_answers.py", ""))
        .env("FAKE_GRANDCHILD_PID_FILE", &pid_file)
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("no answer to `initialize` within 2 s"), "{e}");
    assert!(!e.contains("exited with status"), "we killed it: {e}");
    assert!(
        e.contains("| listening on stdio (but never answering)"),
        "{e}"
    );
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert_gone(&pid_file);
}

/// The process whose pid is in `pid_file` stops running within a few seconds (it is gone, or
/// a zombie waiting for its new parent to reap it). SIGKILL is delivered asynchronously, so a
/// busy machine may need a moment.
fn assert_gone(pid_file: &Path) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let pid = std::fs::read_to_string(pid_file).expect("the fake server wrote its child's pid");
    let pid = pid.trim();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Field 3 of /proc/PID/stat is the state; the name before it is in parentheses.
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next();
        if matches!(state, None | Some("Z" | "X")) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "grandchild {pid} still runs: {stat}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_server_that_prints_garbage_is_named_with_its_first_line() {
    let Some(py) = python() else { return };
    let o = import_stdio(
        &stdio_line(py, "sends_garbage.py", ""),
        &["noisy", "--timeout-secs", "3"],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("no answer to `initialize` within 3 s"), "{e}");
    assert!(
        e.contains(
            "on stdout that are not JSON-RPC, the first: \"Server v1.2 listening on stdio\""
        ),
        "{e}"
    );
    assert!(e.contains("(the server wrote nothing on stderr)"), "{e}");
}

#[test]
fn broken_pagination_and_malformed_results_are_errors() {
    let Some(py) = python() else { return };
    let cases = [
        ("--cursor-loop", "returned the cursor \"again\" again"),
        (
            "--bad-tools",
            "(page 1) failed: the answer is not a valid tools/list result",
        ),
        (
            "--list-error",
            "(page 1) failed: Mcp error: -32603: database is locked",
        ),
        // Rejected at once, not waited out as "no answer within 20 s".
        (
            "--too-deep",
            "(page 1) failed: the answer cannot be read: it is nested deeper than 128 levels",
        ),
    ];
    for (mode, expected) in cases {
        let o = import_stdio(&stdio_line(py, "paginated_server.py", mode), &["w"]);
        assert_eq!(o.status.code(), Some(2), "{mode}");
        let e = stderr(&o);
        assert!(e.starts_with("error: server \"w\""), "{mode}: {e}");
        assert!(e.contains(expected), "{mode}: {e}");
        assert!(
            !e.contains("exited with status"),
            "{mode}: we closed it: {e}"
        );
        assert!(o.stdout.is_empty(), "{mode}");
    }
}

#[test]
fn a_missing_program_and_bad_flags_are_usage_errors() {
    let o = import_stdio("no-such-mcp-server-binary --x", &["n"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: server \"n\" (no-such-mcp-server-binary --x): cannot start"),
        "{}",
        stderr(&o)
    );
    let o = import_stdio("python3 'unclosed", &["n"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: --stdio: cannot split"),
        "{}",
        stderr(&o)
    );
    let o = import_stdio("python3", &["n", "--timeout-secs", "0"]);
    assert_eq!(o.status.code(), Some(2));
    let o = bin()
        .args(["catalog", "import", "--stdio", "x"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "--server is required with --stdio"
    );
}

#[test]
fn a_config_imports_every_stdio_server_and_one_failure_does_not_stop_the_rest() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    // A relative script path: the server runs in the config's folder, as in Claude Code.
    std::fs::copy(fake("paginated_server.py"), dir.path().join("weather.py")).unwrap();
    let pid_file = dir.path().join("gc.pid");
    let config = serde_json::json!({"mcpServers": {
        "broken": {"command": py, "args": [fake("exits_at_once.py")]},
        "weather": {"type": "stdio", "command": py, "args": ["weather.py"]},
        "remote": {"type": "http", "url": "https://example.com/mcp"},
        "stuck": {"command": py, "args": [fake("never_answers.py")],
                  "env": {"FAKE_GRANDCHILD_PID_FILE": pid_file}},
        "nocommand": {"args": []}
    }});
    let cfg = dir.path().join(".mcp.json");
    std::fs::write(&cfg, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    let out = dir.path().join("snap");
    let scenario = dir.path().join("mine.yaml");
    let o = bin()
        .args([
            "catalog",
            "import",
            "--timeout-secs",
            "4",
            "--format",
            "json",
            "--config",
        ])
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .arg("--scenario")
        .arg(&scenario)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "a server failed: {}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows: Vec<(String, String)> = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["server"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expect = [
        ("broken", "failed"),
        ("weather", "ok"),
        ("remote", "skipped"),
        ("stuck", "failed"),
        ("nocommand", "failed"),
    ];
    assert_eq!(
        rows,
        expect.map(|(a, b)| (a.to_string(), b.to_string())).to_vec()
    );
    assert_eq!(report["total_tools"], 3);
    let mut written: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    written.sort();
    // The catalog, and the list of what toolbudget wrote there.
    assert_eq!(written, [".toolbudget-files", "weather.json"]);
    // The starter scenario names only the servers that were imported, relative to itself.
    let yaml = std::fs::read_to_string(&scenario).unwrap();
    assert!(yaml.contains("name: \"mine\"\n"), "{yaml}");
    assert!(
        yaml.contains(
            "catalogs:\n  - path: \"snap/weather.json\"\n    server: \"weather\"\ndeferred:"
        ),
        "{yaml}"
    );
    let e = stderr(&o);
    assert!(e.contains("error: server \"broken\""), "{e}");
    assert!(e.contains("error: server \"stuck\""), "{e}");
    // One line per server: its name, its state, its tools and time (#27); on a pipe, no bar.
    assert!(
        e.lines()
            .any(|l| l.starts_with("weather: imported, 3 tools, ") && l.contains(" s -> ")),
        "{e}"
    );
    assert!(
        e.lines().any(|l| l.starts_with("broken: failed after ")),
        "{e}"
    );
    assert!(
        e.lines()
            .any(|l| l.starts_with("remote: skipped (http server")),
        "{e}"
    );
    assert!(!e.contains('\r') && !e.contains('\u{1b}'), "{e:?}");
    assert!(
        e.contains("missing \\\"command\\\"") || e.contains("missing \"command\""),
        "{e}"
    );
    // The env of the config reached the server: it wrote its child's pid where told.
    assert_gone(&pid_file);
}

#[test]
fn a_file_that_is_not_a_config_is_a_located_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.json");
    std::fs::write(&cfg, "{\"mcpServers\": [1, 2]}").unwrap();
    let o = bin()
        .args(["catalog", "import", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.starts_with(&format!("error: {}:1:", cfg.display())),
        "{e}"
    );
    assert!(e.contains("must be an object"), "{e}");
}

/// `--config DIR/x.mcp.json --out DIR` where the user's own `DIR/weather.json` exists (#40 probe
/// 10): refused, naming it, before any server starts; the file is kept. Once toolbudget wrote a
/// `weather.json` there (its list says so), the next import replaces it.
#[test]
fn a_config_import_replaces_only_catalogs_it_wrote() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let pid_file = dir.path().join("started.pid");
    let config = serde_json::json!({"mcpServers": {
        "weather": {"command": py, "args": [fake("paginated_server.py")]},
        "stuck": {"command": py, "args": [fake("never_answers.py")],
                  "env": {"FAKE_GRANDCHILD_PID_FILE": pid_file}}
    }});
    let cfg = d.join("x.mcp.json");
    std::fs::write(&cfg, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    let mine = "{\"tools\":[{\"name\":\"my_own\",\"description\":\"hand-written\",\"inputSchema\":{\"type\":\"object\"}}]}\n";
    std::fs::write(d.join("weather.json"), mine).unwrap();
    let import = || {
        bin()
            .args(["-q", "catalog", "import", "--timeout-secs", "2", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(&d)
            .output()
            .unwrap()
    };
    let o = import();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.starts_with(&format!(
            "error: {}: exists and toolbudget did not write it",
            d.join("weather.json").display()
        )),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("weather.json")).unwrap(),
        mine
    );
    assert!(!pid_file.exists(), "no server was started");

    // Without the user's file, the import writes its own; a second import replaces it.
    std::fs::remove_file(d.join("weather.json")).unwrap();
    let config = serde_json::json!({"mcpServers": {
        "weather": {"command": py, "args": [fake("paginated_server.py")]}
    }});
    std::fs::write(&cfg, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    for _ in 0..2 {
        let o = import();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    assert!(
        std::fs::read_to_string(d.join("weather.json"))
            .unwrap()
            .contains("\"tools\"")
    );
}
