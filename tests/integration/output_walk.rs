//! Every output flag of every command, pointed at each input the command reads (named on the
//! command line, or inside a scenario or an MCP config), is refused before any work: exit 2,
//! an `error:` naming the flag, the input byte for byte as it was. The flags are walked from the
//! CLI reference, so a new output flag without a case here fails the test.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::{repo, toolbudget};

/// Flags that write a file or a folder.
const OUTPUT_FLAGS: [&str; 6] = [
    "--out",
    "--queries-out",
    "--write-run",
    "--cassette",
    "--api-cache",
    "--scenario",
];

/// (command, flag) pairs with nothing to protect: the command reads no input file.
const NO_INPUT: [(&str, &str); 1] = [("catalog generate", "--out")];

/// One case: the command's words, then its arguments with `@` where the output goes.
struct Case {
    command: &'static str,
    flag: &'static str,
    args: &'static [&'static str],
    /// Inputs the output is pointed at in turn.
    targets: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        command: "count",
        flag: "--out",
        args: &["count", "-c", "gh.json", "--out", "@"],
        targets: &["gh.json"],
    },
    Case {
        command: "count",
        flag: "--api-cache",
        args: &[
            "count",
            "-c",
            "gh.json",
            "--counter",
            "anthropic-api",
            "--api-cache",
            "@",
        ],
        targets: &["gh.json"],
    },
    Case {
        command: "search",
        flag: "--out",
        args: &["search", "-c", "gh.json", "read", "--out", "@"],
        targets: &["gh.json"],
    },
    Case {
        command: "eval",
        flag: "--out",
        args: &[
            "eval",
            "-c",
            "gh.json",
            "--queries",
            "q.jsonl",
            "--out",
            "@",
        ],
        targets: &["gh.json", "q.jsonl"],
    },
    Case {
        command: "eval",
        flag: "--write-run",
        args: &[
            "eval",
            "-c",
            "gh.json",
            "--queries",
            "q.jsonl",
            "--write-run",
            "@",
        ],
        targets: &["gh.json", "q.jsonl"],
    },
    Case {
        command: "compare",
        flag: "--out",
        args: &["compare", "a.json", "b.json", "--out", "@"],
        targets: &["a.json", "b.json"],
    },
    Case {
        command: "diff",
        flag: "--out",
        args: &["diff", "a.json", "b.json", "--out", "@"],
        targets: &["a.json", "b.json"],
    },
    Case {
        command: "simulate",
        flag: "--out",
        args: &["simulate", "s.yaml", "--out", "@"],
        targets: &["s.yaml", "gh.json"],
    },
    Case {
        command: "simulate",
        flag: "--api-cache",
        args: &[
            "simulate",
            "s.yaml",
            "--counter",
            "anthropic-api",
            "--api-cache",
            "@",
        ],
        targets: &["s.yaml", "gh.json"],
    },
    Case {
        command: "report",
        flag: "--out",
        args: &["report", "--scenarios", "sc", "--out", "@"],
        targets: &["sc", "."],
    },
    Case {
        command: "catalog import",
        flag: "--out",
        args: &[
            "catalog",
            "import",
            "--config",
            "cfg.mcp.json",
            "--out",
            "@",
        ],
        targets: &["cfg.mcp.json"],
    },
    Case {
        command: "catalog import",
        flag: "--scenario",
        args: &[
            "catalog",
            "import",
            "--config",
            "cfg.mcp.json",
            "--scenario",
            "@",
        ],
        targets: &["cfg.mcp.json"],
    },
    Case {
        command: "session import",
        flag: "--out",
        args: &["session", "import", "logs/s.jsonl", "--out", "@"],
        targets: &["logs/s.jsonl"],
    },
    Case {
        command: "session import",
        flag: "--queries-out",
        args: &["session", "import", "logs", "--queries-out", "@"],
        targets: &["logs/s.jsonl"],
    },
    Case {
        command: "live",
        flag: "--cassette",
        args: &[
            "live",
            "s.yaml",
            "--provider",
            "openai-chat",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--cassette",
            "@",
        ],
        targets: &["s.yaml", "gh.json"],
    },
    Case {
        command: "live",
        flag: "--out",
        args: &[
            "live",
            "s.yaml",
            "--provider",
            "openai-chat",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--out",
            "@",
        ],
        targets: &["s.yaml", "gh.json"],
    },
    Case {
        command: "check",
        flag: "--out",
        args: &[
            "check",
            "-c",
            "gh.json",
            "--queries",
            "q.jsonl",
            "--out",
            "@",
        ],
        targets: &["gh.json", "q.jsonl"],
    },
];

const CATALOG: &str = r#"{"tools": [{"name": "read_file", "description": "Read a file from disk.", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}]}"#;

/// The inputs every case reads, in `dir`.
fn inputs(dir: &Path) {
    let w = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w("gh.json", CATALOG);
    w(
        "s.yaml",
        "catalogs: [{path: gh.json, server: gh}]\nconversation: [{user: hi}]\n",
    );
    w(
        "sc/t.yaml",
        "catalogs: [{path: ../gh.json, server: gh}]\nconversation: [{user: hi}]\n",
    );
    w(
        "q.jsonl",
        "{\"id\":\"q1\",\"query\":\"read a file\",\"expected\":[\"mcp__gh__read_file\"]}\n",
    );
    w("a.json", "{}");
    w("b.json", "{}");
    w(
        "cfg.mcp.json",
        "{\"mcpServers\": {\"w\": {\"command\": \"true\"}}}",
    );
    let log = repo("fixtures/sessions/claude/plain/7f3c1e2a-5b6d-4c8e-9f01-a1b2c3d4e5f6.jsonl");
    w("logs/s.jsonl", &std::fs::read_to_string(log).unwrap());
}

#[test]
fn no_output_flag_of_any_command_replaces_an_input() {
    for case in CASES {
        for target in case.targets {
            let tmp = tempfile::tempdir().unwrap();
            inputs(tmp.path());
            let before = crate::support::files_under(tmp.path());
            let args: Vec<&str> = case
                .args
                .iter()
                .map(|a| if *a == "@" { *target } else { *a })
                .collect();
            let out = toolbudget()
                .current_dir(tmp.path())
                .env_remove("ANTHROPIC_API_KEY")
                .args(&args)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            let first = err.lines().find(|l| l.starts_with("error:")).unwrap_or("");
            assert!(
                first.starts_with(&format!("error: {} {target}", case.flag)),
                "{args:?}: the refusal names the flag and the path: {err}"
            );
            assert_eq!(
                crate::support::files_under(tmp.path()),
                before,
                "{args:?} changed the folder"
            );
        }
    }
}

/// The cases cover every output flag the CLI reference lists, per command.
#[test]
fn every_output_flag_in_the_cli_reference_has_a_case() {
    let text = std::fs::read_to_string(repo("docs/reference/cli.md")).unwrap();
    let mut listed = BTreeSet::new();
    let mut command = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("## `toolbudget ") {
            command = rest.trim_end_matches('`').to_string();
        } else if let Some(rest) = line.strip_prefix("* `") {
            let flag = rest.split([' ', '`']).next().unwrap_or("");
            if OUTPUT_FLAGS.contains(&flag) {
                listed.insert((command.clone(), flag.to_string()));
            }
        }
    }
    assert!(listed.len() >= 15, "{listed:?}");
    let covered: BTreeSet<(String, String)> = CASES
        .iter()
        .map(|c| (c.command.to_string(), c.flag.to_string()))
        .chain(
            NO_INPUT
                .iter()
                .map(|(c, f)| ((*c).to_string(), (*f).to_string())),
        )
        .collect();
    let missing: Vec<_> = listed.difference(&covered).collect();
    assert!(missing.is_empty(), "output flags with no case: {missing:?}");
}
