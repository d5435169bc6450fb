//! The bytes of every output format on the fixtures, pinned: each command's stdout in table,
//! json, csv and md (and the files it writes), and every file of one `report` run. A snapshot
//! starts with the output's length and sha256, so one changed byte fails it (trailing blanks and
//! newlines included, which a text diff may not show); the text under that line shows what
//! changed. This is how a change that should not move the output (issue 25: running apart from
//! rendering, typed results) shows that it did not.
//!
//! Measured values are masked, nothing else: eval's `latency_us` and its p50/p95 columns, the
//! report's measured-latency files, section and table rows (`build`, `machine`, in index.md and
//! report.json), and the folders a run writes into (`<repo>`, relative `--out` paths). Semantic
//! and hybrid rank with the embedding model, so the report is pinned when the model and the
//! shared data are there (CI);
//! the commands use the lexical scorers only.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::support::{repo, toolbudget};

const FORMATS: [&str; 4] = ["table", "json", "csv", "md"];

/// `-c` arguments for the fixture catalogs (`builtins.yaml`, each `mcp/*.json` as its server).
fn catalog_args() -> Vec<String> {
    let mut args = vec!["-c".into(), "fixtures/catalogs/builtins.yaml".into()];
    for server in ["browser", "chat", "db", "monitor", "tracker"] {
        args.push("-c".into());
        args.push(format!("{server}=fixtures/catalogs/mcp/{server}.json"));
    }
    args
}

/// Runs the binary in `cwd` without an Anthropic key; returns the exit code and stdout.
fn run_in(cwd: &Path, args: &[String]) -> (i32, Vec<u8>) {
    let out = toolbudget()
        .current_dir(cwd)
        .env_remove("ANTHROPIC_API_KEY")
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "{args:?} exited {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, out.stdout)
}

/// Runs the binary from the repository root; fails unless it exits with `code`.
fn run(args: &[String], code: i32) -> Vec<u8> {
    let (got, stdout) = run_in(&repo(""), args);
    assert_eq!(got, code, "{args:?}");
    stdout
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_string()).collect()
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Snapshots `bytes` under `name`: their length and sha256, then the text.
fn pin(name: &str, bytes: &[u8]) {
    let text = String::from_utf8(bytes.to_vec()).expect("every output is UTF-8");
    let header = format!("{} bytes, sha256 {}", bytes.len(), sha256(bytes));
    insta::assert_snapshot!(name, format!("{header}\n{text}"));
}

/// The repository's absolute path, where an output prints it, as `<repo>`.
fn mask_repo(bytes: &[u8]) -> Vec<u8> {
    let root = repo("").canonicalize().unwrap();
    let root = root.to_string_lossy();
    let root = root.trim_end_matches('/');
    String::from_utf8(bytes.to_vec())
        .unwrap()
        .replace(root, "<repo>")
        .into_bytes()
}

/// eval's measured latencies: `latency_us` in json, the last two columns (p50, p95) of the
/// metrics table in table and md. csv has none.
fn mask_eval_latency(format: &str, bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let masked = match format {
        "json" => regex::Regex::new(r#""latency_us": \{[^}]*\}"#)
            .unwrap()
            .replace_all(&text, r#""latency_us": "<measured>""#)
            .into_owned(),
        "table" | "md" => {
            let mut out = String::new();
            let mut cut: Option<usize> = None;
            for line in text.split_inclusive('\n') {
                if line.contains("p50 µs") {
                    // Both columns follow `refused`, the last deterministic one.
                    cut = Some(line.find("refused").unwrap() + "refused".len());
                }
                match cut {
                    Some(_) if line.trim().is_empty() => {
                        cut = None;
                        out.push_str(line);
                    }
                    Some(at) if format == "table" => {
                        out.push_str(&line[..at.min(line.trim_end().len())]);
                        out.push_str("  <measured>\n");
                    }
                    Some(_) => {
                        // `| … | refused | p50 | p95 |`: the last two cells.
                        let row = line.trim_end().trim_end_matches('|');
                        let keep: Vec<&str> = row.rsplitn(3, '|').collect();
                        out.push_str(keep[2]);
                        out.push_str("| <measured> | <measured> |\n");
                    }
                    None => out.push_str(line),
                }
            }
            out
        }
        _ => text,
    };
    masked.into_bytes()
}

#[test]
fn count_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("no-cache.json");
    let base = |extra: &[&str]| {
        let mut a = strings(&["count"]);
        a.extend(catalog_args());
        a.extend(strings(&["--api-cache", cache.to_str().unwrap()]));
        a.extend(strings(extra));
        a
    };
    for f in FORMATS {
        pin(&format!("count_{f}"), &run(&base(&["--format", f]), 0));
        pin(
            &format!("count_compare_counters_{f}"),
            &run(&base(&["--compare-counters", "--format", f]), 0),
        );
    }
    let extra: [(&str, &[&str]); 3] = [
        (
            "count_openai_responses_table",
            &["--counter", "openai-responses"],
        ),
        (
            "count_anthropic_estimate_json",
            &["--counter", "anthropic-estimate", "--format", "json"],
        ),
        (
            "count_cl100k_tool_choice_any_md",
            &[
                "--tokenizer",
                "cl100k_base",
                "--tool-choice",
                "any",
                "--format",
                "md",
            ],
        ),
    ];
    for (name, args) in extra {
        pin(name, &run(&base(args), 0));
    }
}

#[test]
fn search_bytes() {
    let search = |scorer: &str, explain: bool, format: &str, query: &str| {
        let mut a = strings(&["search"]);
        a.extend(catalog_args());
        a.extend(strings(&["--scorer", scorer, "--format", format]));
        if explain {
            a.push("--explain".into());
        }
        a.push(query.into());
        run(&a, 0)
    };
    for f in FORMATS {
        pin(
            &format!("search_keyword_{f}"),
            &search("keyword", false, f, "create issue"),
        );
        pin(
            &format!("search_bm25_explain_{f}"),
            &search("bm25", true, f, "create an issue in the tracker"),
        );
    }
    pin(
        "search_keyword_explain_select_table",
        &search("keyword", true, "table", "select:Read,Grep,NoSuchTool"),
    );
    pin(
        "search_regex_explain_json",
        &search("regex", true, "json", "issue|bug"),
    );
}

#[test]
fn eval_bytes() {
    let eval = |queries: &str, extra: &[&str]| {
        let mut a = strings(&["eval", "--quiet"]);
        a.extend(catalog_args());
        a.extend(strings(&["--queries", queries]));
        for s in ["keyword", "regex", "bm25"] {
            a.extend(strings(&["--scorer", s]));
        }
        a.extend(strings(extra));
        a
    };
    for f in FORMATS {
        let out = run(
            &eval("fixtures/queries/fixtures.jsonl", &["--format", f]),
            0,
        );
        pin(&format!("eval_{f}"), &mask_eval_latency(f, &out));
        // Every derived class, a named one, no-match queries and two expected tools.
        let out = run(
            &eval(
                "tests/integration/pin/queries.jsonl",
                &["--per-query", "--thresholds", "--format", f],
            ),
            0,
        );
        pin(
            &format!("eval_per_query_thresholds_{f}"),
            &mask_eval_latency(f, &out),
        );
    }
}

#[test]
fn compare_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let eval = |name: &str, extra: &[&str]| -> PathBuf {
        let out = dir.path().join(name);
        let mut a = strings(&["eval", "--quiet", "--per-query", "--format", "json"]);
        a.extend(catalog_args());
        a.extend(strings(&["--queries", "fixtures/queries/fixtures.jsonl"]));
        a.extend(strings(&["-s", "keyword", "-s", "bm25", "--out"]));
        a.push(out.to_str().unwrap().into());
        a.extend(strings(extra));
        run(&a, 0);
        out
    };
    let base = eval("base.json", &[]);
    let better = eval("better.json", &["--bm25-weights", "1,1,1,1"]);
    let worse = eval(
        "worse.json",
        &["--bm25-b", "0", "--bm25-weights", "0,1,0,0"],
    );
    // Run beside the files, which it names as given.
    let compare = |candidate: &PathBuf, extra: &[&str], code: i32| {
        let name = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
        let mut a = vec!["compare".to_string(), name(&base), name(candidate)];
        a.extend(strings(extra));
        let (got, stdout) = run_in(dir.path(), &a);
        assert_eq!(got, code, "{a:?}");
        stdout
    };
    for f in FORMATS {
        pin(
            &format!("compare_ok_{f}"),
            &compare(&better, &["--format", f], 0),
        );
        pin(
            &format!("compare_regression_{f}"),
            &compare(&worse, &["--metric", "mrr", "--format", f], 1),
        );
    }
}

/// The shipped scenarios `simulate` can run without the shared data.
fn shipped_scenarios() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["scenarios", "scenarios/published"] {
        let mut files: Vec<String> = std::fs::read_dir(repo(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .map(|p| format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()))
            .filter(|p| !p.ends_with("tool-search-testing.yaml"))
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}

#[test]
fn simulate_bytes() {
    let all = shipped_scenarios();
    assert!(all.len() >= 17, "{all:?}");
    let some = strings(&[
        "scenarios/failure-modes.yaml",
        "scenarios/server-connects-midway-delta.yaml",
        "scenarios/published/lazy-loading-design.yaml",
    ]);
    let simulate = |files: &[String], extra: &[&str]| {
        let mut a = strings(&["simulate", "--quiet", "--search-latency", "modeled"]);
        a.extend(files.iter().cloned());
        a.extend(strings(extra));
        run(&a, 0)
    };
    for f in FORMATS {
        pin(&format!("simulate_{f}"), &simulate(&all, &["--format", f]));
        pin(
            &format!("simulate_per_request_{f}"),
            &simulate(&some, &["--per-request", "--format", f]),
        );
    }
    pin(
        "simulate_counter_openai_json",
        &simulate(
            &strings(&["scenarios/hi.yaml"]),
            &["--counter", "openai-responses", "--format", "json"],
        ),
    );
}

#[test]
fn catalog_generate_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("generated.json");
    let args = strings(&[
        "catalog",
        "generate",
        "--tools",
        "24",
        "--servers",
        "3",
        "--seed",
        "9",
    ]);
    let stdout = run(&args, 0);
    pin("catalog_generate", &stdout);
    let mut to_file = args.clone();
    to_file.extend(strings(&["--out", file.to_str().unwrap()]));
    assert!(run(&to_file, 0).is_empty());
    assert_eq!(
        std::fs::read(&file).unwrap(),
        stdout,
        "--out writes stdout's bytes"
    );
}

#[test]
fn calibrate_bytes() {
    for f in FORMATS {
        pin(
            &format!("calibrate_{f}"),
            &run(&strings(&["calibrate", "--format", f]), 0),
        );
    }
    pin(
        "calibrate_check",
        &run(&strings(&["calibrate", "--check"]), 0),
    );
}

/// Every file of a folder (recursively), sorted, as `== path ==` sections.
fn folder_text(root: &Path) -> Vec<u8> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for p in files {
        let rel = p.strip_prefix(root).unwrap().display().to_string();
        out.extend(format!("== {rel} ==\n").into_bytes());
        out.extend(std::fs::read(&p).unwrap());
        out.push(b'\n');
    }
    out
}

/// `session import` in a folder of its own (it prints the paths of the scenarios it writes, as
/// given: `out/NAME.yaml`); the fixtures by absolute path, printed as `<repo>`.
fn session_import(
    sessions: &[&str],
    catalogs: &[&str],
    extra: &[&str],
    format: &str,
) -> (Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let mut a = strings(&["session", "import", "--quiet"]);
    a.extend(sessions.iter().map(|s| repo(s).display().to_string()));
    for c in catalogs {
        let (server, path) = c.split_once('=').map_or((None, *c), |(s, p)| (Some(s), p));
        let path = repo(path).display().to_string();
        a.push("--catalog".into());
        a.push(server.map_or(path.clone(), |s| format!("{s}={path}")));
    }
    a.extend(strings(extra));
    a.extend(strings(&["--format", format, "--out", "out"]));
    let (code, stdout) = run_in(dir.path(), &a);
    assert_eq!(code, 0, "{a:?}");
    let out = dir.path().join("out");
    absolute_repo_paths(&out);
    (mask_repo(&stdout), mask_repo(&folder_text(&out)))
}

/// The scenarios' catalog paths made absolute where they point into the repository: session
/// import names a catalog relative to the scenario when both share more than the root, which
/// they do when the clone and the temporary folder are both under /tmp (a fresh clone made with
/// `mktemp -d`), and the pins hold `<repo>/...` wherever the clone is.
fn absolute_repo_paths(out: &Path) {
    let root = repo("").canonicalize().unwrap();
    for e in std::fs::read_dir(out).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let mut fixed = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            let rel = line
                .trim_end()
                .strip_prefix("- path: ")
                .filter(|v| !v.starts_with('/'));
            match rel.and_then(|v| p.parent().unwrap().join(v).canonicalize().ok()) {
                Some(abs) if abs.starts_with(&root) => {
                    fixed.push_str(&format!("- path: {}\n", abs.display()));
                }
                _ => fixed.push_str(line),
            }
        }
        std::fs::write(&p, fixed).unwrap();
    }
}

#[test]
fn session_import_bytes() {
    let sessions = ["fixtures/sessions/claude", "fixtures/sessions/known"];
    let catalogs = [
        "fixtures/catalogs/builtins.yaml",
        "tracker=fixtures/catalogs/mcp/tracker.json",
    ];
    let mut folders = Vec::new();
    for f in FORMATS {
        let extra = ["--allow-unknown-tools", "--skip-bad-lines"];
        let (stdout, folder) = session_import(&sessions, &catalogs, &extra, f);
        pin(&format!("session_import_{f}"), &stdout);
        folders.push(folder);
    }
    assert!(
        folders.iter().all(|f| *f == folders[0]),
        "one folder whatever the format"
    );
    pin("session_import_folder", &folders[0]);
    let (stdout, folder) = session_import(
        &["fixtures/sessions/codex/2025"],
        &["fixtures/sessions/codex-tools.json"],
        &[],
        "json",
    );
    pin("session_import_codex_json", &stdout);
    pin("session_import_codex_folder", &folder);
}

#[test]
fn catalog_import_bytes() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        crate::support::skip(
            "catalog_import_bytes",
            "python3 is not installed (the fake MCP server is a Python script)",
        );
        return;
    }
    let server = repo("tests/mcp_fakes/paginated_server.py");
    let config = serde_json::json!({"mcpServers": {"weather": {
        "command": "python3", "args": [server.to_str().unwrap()]}}});
    for f in FORMATS {
        // Relative paths in a folder of its own: the summary prints them, and a table's widths
        // follow them.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mcp.json"), config.to_string()).unwrap();
        let args = strings(&[
            "catalog",
            "import",
            "--quiet",
            "--config",
            "mcp.json",
            "--out",
            "catalogs",
            "--scenario",
            "scenario.yaml",
            "--format",
            f,
        ]);
        let (code, stdout) = run_in(dir.path(), &args);
        assert_eq!(code, 0);
        pin(&format!("catalog_import_{f}"), &stdout);
        if f == "json" {
            std::fs::remove_file(dir.path().join("mcp.json")).unwrap();
            pin("catalog_import_folder", &folder_text(dir.path()));
        }
    }
}

/// index.md without what is measured: the latency section, the decision page's latency row and
/// the build and machine rows.
fn mask_index(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let mut out = String::new();
    let mut in_latency = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("## ") {
            in_latency = line.contains("(measured)");
            if in_latency {
                out.push_str(line);
                out.push_str("<measured>\n\n");
                continue;
            }
        }
        if in_latency {
            continue;
        }
        // The settings' build and machine rows, and the decision page's measured latency row.
        if line.starts_with("| build |")
            || line.starts_with("| machine |")
            || (line.starts_with("| ") && line.contains(" (measured) |"))
        {
            let key = line.split('|').nth(1).unwrap_or_default();
            out.push_str(&format!("|{key}| <measured> |\n"));
            continue;
        }
        out.push_str(line);
    }
    out.into_bytes()
}

/// report.json's (and summary.json's) settings pairs of the build and the machine (the CPU model this ran on: a
/// snapshot pinned on one machine must pass on another).
fn mask_report_settings(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    regex::Regex::new(r#"("(?:build|machine)",\s*)"[^"]*""#)
        .unwrap()
        .replace_all(&text, r#"$1"<measured>""#)
        .into_owned()
        .into_bytes()
}

#[test]
fn report_bytes() {
    if !crate::support::shared_beside_repo(&[
        "provider-counts/acme-series.json",
        "provider-counts/acme-21-tools.anthropic.json",
    ]) {
        crate::support::skip(
            "report_bytes",
            "the shared data is missing: the report leaves a published scenario out",
        );
        return;
    }
    if !repo("models/all-MiniLM-L6-v2/model.safetensors").is_file() {
        crate::support::skip(
            "report_bytes",
            "the embedding model is missing: the report skips semantic and hybrid",
        );
        return;
    }
    let root = crate::support::report_once();
    let mut manifest = String::new();
    for (rel, bytes) in crate::support::files_under(root) {
        // index.html is index.md (pinned above, masked) converted: it holds the latencies too.
        if rel.contains("latency") || rel == "index.html" {
            manifest.push_str(&format!("measured {rel}\n"));
            continue;
        }
        let bytes = if rel == "index.md" {
            let masked = mask_index(&bytes);
            pin("report_index_md", &masked);
            masked
        } else if rel == "data/report.json" || rel == "data/summary.json" {
            mask_report_settings(&bytes)
        } else {
            bytes
        };
        manifest.push_str(&format!("{} {:>8} {rel}\n", sha256(&bytes), bytes.len()));
    }
    pin("report_files", manifest.as_bytes());
}
