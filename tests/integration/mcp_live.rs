//! Real MCP servers: imports the pinned reference servers that scripts/install-mcp-servers.sh
//! puts in .mcp-servers/, checks the tool names and counts those versions list, that the
//! snapshots equal the committed fixtures/live/, and runs `count`, `search` and `simulate` over
//! the imported catalogs.
//!
//! Without the servers the test prints "skipped: ..." and returns; set
//! TOOLBUDGET_REQUIRE_LIVE_MCP=1 (CI does) to make a missing install a failure instead.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// Per server: the tool names (in the server's order) and the o200k_base token total that the
/// pinned versions give. 50 tools, 5294 tokens together.
const EXPECTED: &[(&str, &[&str], u64)] = &[
    (
        "everything",
        &[
            "echo",
            "get-annotated-message",
            "get-env",
            "get-resource-links",
            "get-resource-reference",
            "get-structured-content",
            "get-sum",
            "get-tiny-image",
            "gzip-file-as-resource",
            "toggle-simulated-logging",
            "toggle-subscriber-updates",
            "trigger-long-running-operation",
            "simulate-research-query",
        ],
        1149,
    ),
    (
        "filesystem",
        &[
            "read_file",
            "read_text_file",
            "read_media_file",
            "read_multiple_files",
            "write_file",
            "edit_file",
            "create_directory",
            "list_directory",
            "list_directory_with_sizes",
            "directory_tree",
            "move_file",
            "search_files",
            "get_file_info",
            "list_allowed_directories",
        ],
        1734,
    ),
    (
        "memory",
        &[
            "create_entities",
            "create_relations",
            "add_observations",
            "delete_entities",
            "delete_observations",
            "delete_relations",
            "read_graph",
            "search_nodes",
            "open_nodes",
        ],
        945,
    ),
    ("time", &["get_current_time", "convert_time"], 269),
    (
        "git",
        &[
            "git_status",
            "git_diff_unstaged",
            "git_diff_staged",
            "git_diff",
            "git_commit",
            "git_add",
            "git_reset",
            "git_log",
            "git_create_branch",
            "git_checkout",
            "git_show",
            "git_branch",
        ],
        1197,
    ),
];

const SERVER_BINARIES: &[&str] = &[
    ".mcp-servers/node_modules/.bin/mcp-server-everything",
    ".mcp-servers/node_modules/.bin/mcp-server-filesystem",
    ".mcp-servers/node_modules/.bin/mcp-server-memory",
    ".mcp-servers/venv/bin/mcp-server-time",
    ".mcp-servers/venv/bin/mcp-server-git",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> Command {
    Command::new(crate::support::bin())
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("json output")
}

/// Whether this build has a subcommand (`search` and `simulate` come from other modules).
fn has_command(name: &str) -> bool {
    run(bin().args([name, "--help"])).status.success()
}

fn catalog_args(dir: &Path) -> Vec<String> {
    EXPECTED
        .iter()
        .flat_map(|(s, _, _)| {
            [
                "--catalog".to_string(),
                format!("{s}={}", dir.join(format!("{s}.json")).display()),
            ]
        })
        .collect()
}

/// Whether the pinned servers are installed; a skip says so (and fails when they are required).
fn servers_installed() -> bool {
    let missing: Vec<&str> = SERVER_BINARIES
        .iter()
        .copied()
        .filter(|b| !root().join(b).exists())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let msg = format!(
        "skipped: MCP servers not installed (run scripts/install-mcp-servers.sh); missing {}",
        missing.join(", ")
    );
    let required =
        std::env::var("TOOLBUDGET_REQUIRE_LIVE_MCP").is_ok_and(|v| !v.is_empty() && v != "0");
    assert!(!required, "TOOLBUDGET_REQUIRE_LIVE_MCP is set but {msg}");
    eprintln!("{msg}");
    println!("{msg}");
    false
}

#[test]
fn real_servers_import_with_the_expected_tools_then_count_search_and_simulate() {
    if !servers_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();

    // 1. Import all five, for real, from the same config `just snapshot` uses.
    let report = json(&run(bin()
        .args([
            "catalog",
            "import",
            "--format",
            "json",
            "--timeout-secs",
            "60",
            "--config",
        ])
        .arg(root().join("scripts/live-servers.mcp.json"))
        .arg("--out")
        .arg(out)));
    let rows = report["servers"].as_array().unwrap();
    assert_eq!(rows.len(), EXPECTED.len());
    for ((server, names, tokens), row) in EXPECTED.iter().zip(rows) {
        assert_eq!(row["server"], *server);
        assert_eq!(row["status"], "ok", "{row}");
        assert_eq!(row["tools"], names.len() as u64, "{server}");
        assert_eq!(row["tokens"], *tokens, "{server}");
        let file = out.join(format!("{server}.json"));
        let text = std::fs::read_to_string(&file).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let got: Vec<&str> = doc["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(got, *names, "{server}: tool names of the pinned version");
        // The pins cover every dependency, so the snapshot must not drift from the fixture.
        let fixture = root().join(format!("fixtures/live/{server}.json"));
        assert!(
            std::fs::read_to_string(&fixture).unwrap() == text,
            "{server}: {} differs from a fresh import; if a pin was bumped on purpose, run `just snapshot`",
            fixture.display()
        );
    }
    assert_eq!(report["total_tools"], 50);
    assert_eq!(report["total_tokens"], 5294);

    // 2. count over the imported catalogs agrees with what import printed.
    let count = json(&run(bin()
        .args(["count", "--format", "json"])
        .args(catalog_args(out))));
    assert_eq!(count["total_tokens"], 5294);
    assert_eq!(count["tools"].as_array().unwrap().len(), 50);
    assert_eq!(count["tools"][0]["id"], "mcp__everything__echo");

    // 3. search: once the scorers are built in, the keyword scorer must find the right tools.
    if has_command("search") {
        for (query, first) in [
            ("get current time", "mcp__time__get_current_time"),
            ("git status", "mcp__git__git_status"),
            ("read text file", "mcp__filesystem__read_text_file"),
        ] {
            let r = json(&run(bin()
                .args(["search", "--format", "json", "--scorer", "keyword"])
                .args(catalog_args(out))
                .arg(query)));
            assert_eq!(r["matches"][0]["id"], first, "{query}: {r}");
            assert_eq!(r["total_tools"], 50);
        }
    } else {
        println!("note: `search` is not in this build; its checks run once it is");
    }

    // 4. simulate the shipped scenario over the freshly imported catalogs.
    if has_command("simulate") {
        let text = std::fs::read_to_string(root().join("scenarios/live-servers.yaml")).unwrap();
        let scenario = out.join("live-servers.yaml");
        std::fs::write(&scenario, text.replace("../fixtures/live/", "")).unwrap();
        let r = json(&run(bin()
            .args(["simulate", "--format", "json"])
            .arg(&scenario)));
        let s = &r["scenarios"][0];
        assert_eq!(s["tool_count"], 50);
        assert_eq!(s["deferred_count"], 50);
        let eager = s["eager"]["first_request_tokens"].as_u64().unwrap();
        let deferred = s["deferred"]["first_request_tokens"].as_u64().unwrap();
        assert!(eager >= 3000 + 5294, "eager sends every tool: {s}");
        assert!(deferred < eager, "{s}");
        assert_eq!(
            s["deferred"]["misses"], 0,
            "every call's query finds its tool: {s}"
        );
    } else {
        println!("note: `simulate` is not in this build; its checks run once it is");
    }
}
