//! `session import`, the files it writes and the calibration files it is read back with,
//! against hostile numbers and sizes (issue #26): usage past any bill is an `error:` naming
//! the field at `FILE:LINE:COL` (never wrapped, never saturated), calibration values out of
//! range are refused where they stand, degenerate `calibrate` observations are never written,
//! and a session too long for a scenario fails naming its own log, before anything is written.

use std::fmt::Write as _;
use std::path::Path;

use crate::session_import::{fixture, run};

const PLAIN: &str = "claude/plain/7f3c1e2a-5b6d-4c8e-9f01-a1b2c3d4e5f6.jsonl";
const CODEX: &str =
    "codex/2026/01/15/rollout-2026-01-15T10-00-00-019b2c3d-4e5f-7a6b-8c7d-9e0f1a2b3c4d.jsonl";

/// A copy of a fixture with `line` (1-based) edited, in a fresh folder; the copy's path.
fn edited(rel: &str, line: usize, edit: impl Fn(&str) -> String) -> (tempfile::TempDir, String) {
    let text = std::fs::read_to_string(fixture(rel)).unwrap();
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        let l = if i + 1 == line {
            edit(l)
        } else {
            l.to_string()
        };
        assert!(
            i + 1 != line || l != text.lines().nth(i).unwrap(),
            "edit changed nothing"
        );
        out.push_str(&l);
        out.push('\n');
    }
    let dir = tempfile::tempdir().unwrap();
    let name = Path::new(rel).file_name().unwrap();
    let path = dir.path().join("logs").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, out).unwrap();
    (dir, path.display().to_string())
}

/// Where `needle` starts in line `line` of `path`, 1-based (the column an error must name).
fn column_of(path: &str, line: usize, needle: &str) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().nth(line - 1).unwrap().find(needle).unwrap() + 1
}

fn import_into(dir: &Path, path: &str) -> (Option<i32>, String, String) {
    let out = dir.join("out");
    run(&[
        "session",
        "import",
        path,
        "--out",
        out.to_str().unwrap(),
        "--allow-unknown-tools",
    ])
}

#[test]
fn claude_usage_past_any_bill_is_an_error_naming_the_field_and_its_place() {
    // Line 4 is the plain fixture's first billed response.
    for (value, says) in [
        (
            "18446744073709551615",
            "usage input_tokens is 18446744073709551615, more than the 1000000000 tokens any request can bill",
        ),
        (
            "18446744073709551616",
            "usage input_tokens is 1.8446744073709552e19, more than the 1000000000",
        ),
        (
            "9223372036854775807",
            "usage input_tokens is 9223372036854775807, more than",
        ),
        ("9.2e18", "usage input_tokens is 9.2e18, more than"),
        (
            "-3",
            "usage input_tokens is -3: a token count cannot be negative",
        ),
    ] {
        let (dir, path) = edited(PLAIN, 4, |l| {
            let at = l.find("\"input_tokens\":").unwrap() + "\"input_tokens\":".len();
            let end = at + l[at..].find(',').unwrap();
            format!("{}{value}{}", &l[..at], &l[end..])
        });
        let (code, _, stderr) = import_into(dir.path(), &path);
        assert_eq!(code, Some(2), "{value}: {stderr}");
        // serde_json names the value's last character.
        let col = column_of(&path, 4, value) + value.len() - 1;
        let head = format!("error: {path}:4:{col}: ");
        assert!(stderr.contains(&head), "{value}: want {head} in {stderr}");
        assert!(stderr.contains(says), "{value}: {stderr}");
        assert!(!dir.path().join("out").exists(), "nothing written");
    }
    // Several fields that sum past u64 but each within its bound: summed exactly.
    let (dir, path) = edited(PLAIN, 4, |l| {
        l.replace("\"input_tokens\":3,", "\"input_tokens\":1000000000,")
            .replace(
                "\"cache_creation_input_tokens\":",
                "\"cache_creation_input_tokens\":99",
            )
    });
    let (code, stdout, stderr) = run(&[
        "session",
        "import",
        &path,
        "--allow-unknown-tools",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let billed = v["sessions"][0]["billed_input_tokens"].as_u64().unwrap();
    assert!(billed > 1_000_000_000, "{billed}");
    drop(dir);
}

#[test]
fn codex_usage_past_any_bill_is_an_error_naming_the_field_and_its_place() {
    // Line 11 is the 2026 rollout's first token_count with usage.
    let (dir, path) = edited(CODEX, 11, |l| {
        l.replacen(
            "\"last_token_usage\":{\"input_tokens\":9120",
            "\"last_token_usage\":{\"input_tokens\":18446744073709551614",
            1,
        )
    });
    let (code, _, stderr) = import_into(dir.path(), &path);
    assert_eq!(code, Some(2), "{stderr}");
    let col = column_of(&path, 11, "18446744073709551614") + "18446744073709551614".len() - 1;
    assert!(
        stderr.contains(&format!("error: {path}:11:{col}: "))
            && stderr.contains("usage input_tokens is 18446744073709551614, more than the 1000000000 tokens any request can bill"),
        "{stderr}"
    );
    // A running total past any session's (the request's own usage is fine).
    let (dir, path) = edited(CODEX, 11, |l| {
        l.replacen(
            "\"total_token_usage\":{\"input_tokens\":9120",
            "\"total_token_usage\":{\"input_tokens\":18446744073709551614",
            1,
        )
    });
    let (code, _, stderr) = import_into(dir.path(), &path);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("error: {path}:11:"))
            && stderr.contains("usage input_tokens is 18446744073709551614, more than the 1000000000000000 tokens any session can total"),
        "{stderr}"
    );
    drop(dir);
}

#[test]
fn a_bill_read_back_by_the_report_is_checked_like_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (code, _, stderr) = run(&[
        "--quiet",
        "session",
        "import",
        &fixture("claude/plain"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let bill = out.join("7f3c1e2a-5b6d-4c8e-9f01-a1b2c3d4e5f6.usage.json");
    let text = std::fs::read_to_string(&bill).unwrap();
    let (line, l) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with("\"cache_read\":"))
        .unwrap();
    let number = l
        .trim()
        .trim_start_matches("\"cache_read\":")
        .trim_end_matches(',')
        .trim();
    let edited = text.replacen(l, &l.replacen(number, "18446744073709551615", 1), 1);
    std::fs::write(&bill, edited).unwrap();
    let e = toolbudget::experiment::sessions::load_dir(&out)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.starts_with(&format!("{}:{}:", bill.display(), line + 1)),
        "{e}"
    );
    assert!(
        e.contains("usage cache_read is 18446744073709551615, more than the 1000000000"),
        "{e}"
    );
}

#[test]
fn simulate_refuses_a_calibration_out_of_range_where_it_stands() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (code, _, stderr) = run(&[
        "--quiet",
        "session",
        "import",
        crate::support::repo("fixtures/sessions/known")
            .to_str()
            .unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let cal = out.join("calibration.json");
    let text = std::fs::read_to_string(&cal).unwrap();
    let scenario = out.join("5a1e7c3b-2d4f-4e6a-8b9c-0d1e2f3a4b5c.yaml");
    let line_of = |key: &str| {
        text.lines()
            .position(|l| l.trim_start().starts_with(&format!("\"{key}\":")))
            .unwrap()
            + 1
    };
    for (key, value, says) in [
        (
            "system_prompt_tokens",
            "1e300",
            "system_prompt_tokens: 1e300 is not a system prompt size: expected 0 to 10000000 tokens",
        ),
        (
            "system_prompt_tokens",
            "-1",
            "system_prompt_tokens: -1 is not a system prompt size",
        ),
        (
            "scale",
            "1e300",
            "scale: 1e300 is not a scale: expected at most 100",
        ),
        ("scale", "NaN", "invalid JSON"),
    ] {
        let line = line_of(key);
        let old = text.lines().nth(line - 1).unwrap();
        let new = format!("{}\"{key}\": {value},", &old[..old.find('"').unwrap()]);
        std::fs::write(&cal, text.replacen(old, &new, 1)).unwrap();
        let (code, _, stderr) = run(&[
            "simulate",
            scenario.to_str().unwrap(),
            "--calibration",
            cal.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(2), "{key} {value}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: {}:{line}:", cal.display())),
            "{key} {value}: {stderr}"
        );
        assert!(stderr.contains(says), "{key} {value}: {stderr}");
    }
    // The file as written reads, and applies.
    std::fs::write(&cal, &text).unwrap();
    let (code, _, stderr) = run(&[
        "simulate",
        scenario.to_str().unwrap(),
        "--calibration",
        cal.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn calibrate_write_refuses_degenerate_observations_and_leaves_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("obs.json");
    let committed = crate::support::repo("fixtures/calibration/anthropic-count-tokens.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(committed).unwrap()).unwrap();
    for (edit, says) in [
        (
            (|v: &mut serde_json::Value| v["observations"][0]["billed"] = 0.into())
                as fn(&mut serde_json::Value),
            "billed 0 tokens",
        ),
        (
            |v: &mut serde_json::Value| {
                for o in v["observations"].as_array_mut().unwrap() {
                    o["billed"] = 5000.into();
                }
            },
            "not a positive ratio",
        ),
    ] {
        let mut bad = v.clone();
        edit(&mut bad);
        let text = serde_json::to_string_pretty(&bad).unwrap();
        std::fs::write(&data, &text).unwrap();
        let (code, _, stderr) = run(&["calibrate", "--data", data.to_str().unwrap(), "--write"]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: {}: ", data.display())) && stderr.contains(says),
            "{stderr}"
        );
        assert_eq!(std::fs::read_to_string(&data).unwrap(), text, "untouched");
    }
    // A sound file writes a fit its own --check reads back.
    v["observations"][0]["billed"] = (v["observations"][0]["billed"].as_u64().unwrap() + 7).into();
    std::fs::write(&data, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (code, _, stderr) = run(&["calibrate", "--data", data.to_str().unwrap(), "--write"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, _, stderr) = run(&["calibrate", "--data", data.to_str().unwrap(), "--check"]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// A Claude Code session of `turns` one-word prompts, each answered in one response (ids of
/// its own: records two files share are copied history).
fn long_session(dir: &Path, id: &str, turns: usize) -> String {
    let mut s = String::with_capacity(turns * 260);
    for i in 0..turns {
        writeln!(
            s,
            r#"{{"type":"user","sessionId":"{id}","uuid":"{id}-u{i}","message":{{"role":"user","content":"go"}}}}"#
        )
        .unwrap();
        writeln!(
            s,
            r#"{{"type":"assistant","sessionId":"{id}","uuid":"{id}-a{i}","requestId":"{id}-r{i}","message":{{"id":"{id}-m{i}","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"text","text":"ok"}}],"usage":{{"input_tokens":{},"output_tokens":1}}}}}}"#,
            3000 + i
        )
        .unwrap();
    }
    let path = dir.join(format!("{id}.jsonl"));
    std::fs::write(&path, s).unwrap();
    path.display().to_string()
}

#[test]
fn a_session_too_long_for_a_scenario_fails_naming_its_log_before_writing() {
    use toolbudget::simulate::scenario::MAX_TURNS;
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let id = "0c0c0c0c-0000-4000-8000-000000000001";
    let path = long_session(&logs, id, MAX_TURNS + 1);
    let out = dir.path().join("out");
    let (code, _, stderr) = run(&[
        "session",
        "import",
        logs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: {path}: this session cannot be imported: its scenario ({id}.json, not written) has {} turns in one conversation, more than the {MAX_TURNS} a scenario may hold",
            MAX_TURNS + 1
        )),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing written");
}

#[test]
fn a_scenario_past_the_yaml_budget_is_written_as_json_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let id = "0c0c0c0c-0000-4000-8000-000000000002";
    // Seven YAML nodes a turn: 30,000 turns pass the 200,000-node budget.
    long_session(&logs, id, 30_000);
    let small = "0c0c0c0c-0000-4000-8000-000000000003";
    long_session(&logs, small, 3);
    let out = dir.path().join("out");
    let (code, stdout, stderr) = run(&[
        "--quiet",
        "session",
        "import",
        logs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let big = out.join(format!("{id}.json"));
    assert_eq!(
        v["sessions"][0]["scenario"].as_str(),
        Some(big.to_str().unwrap())
    );
    assert!(out.join(format!("{small}.yaml")).is_file());
    assert!(!out.join(format!("{id}.yaml")).exists());
    let bill: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join(format!("{id}.usage.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(bill["scenario"], format!("{id}.json"));
    let s = toolbudget::simulate::load_scenario(&big).unwrap();
    assert_eq!(s.conversation.len(), 30_000);
    // And the report reads the folder back.
    let (imported, _) = toolbudget::experiment::sessions::load_dir(&out).unwrap();
    assert_eq!(imported.len(), 2);
}

/// An interrupted import removes the `--out` folder it made (it was left behind empty): 300
/// distinct sessions, SIGINT as soon as the folder exists.
#[cfg(unix)]
#[test]
fn an_interrupted_import_removes_the_folder_it_made() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let text = std::fs::read_to_string(fixture(PLAIN)).unwrap();
    let uuid =
        regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{8}").unwrap();
    for i in 0..300 {
        // Each copy its own session: every id's last four digits are the copy's number.
        let copy = uuid.replace_all(&text, |c: &regex::Captures<'_>| format!("{}{i:04x}", &c[0]));
        std::fs::write(logs.join(format!("s{i}.jsonl")), copy.as_bytes()).unwrap();
    }
    let out = dir.path().join("out");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolbudget"))
        .args(["-q", "session", "import"])
        .arg(&logs)
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while !out.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before making its folder"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // SAFETY: a signal to the child this test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(130), "{stderr}");
    assert!(!out.exists(), "the folder this run made is left: {stderr}");
}

/// A response with more parallel tool calls than one response may make (400,000 took 1.8 GB
/// before it was refused after conversion) is refused at its line while it is read.
#[test]
fn a_response_with_too_many_tool_calls_is_refused_at_its_line() {
    let max = toolbudget::session::read::claude::MAX_CALLS_PER_RESPONSE;
    let (dir, path) = edited(PLAIN, 5, |l| {
        let mut blocks = String::new();
        for i in 0..=max {
            if i > 0 {
                blocks.push(',');
            }
            write!(
                blocks,
                r#"{{"type":"tool_use","id":"toolu_x{i}","name":"Read","input":{{}}}}"#
            )
            .unwrap();
        }
        let start = l.find(r#""content":["#).unwrap() + r#""content":["#.len();
        format!("{}{blocks},{}", &l[..start], &l[start..])
    });
    let (code, _, stderr) = import_into(dir.path(), &path);
    assert_eq!(code, Some(2), "{stderr}");
    let error = stderr.lines().find(|l| l.starts_with("error:")).unwrap();
    assert!(
        error.starts_with(&format!(
            "error: {path}:5:1: this response makes {} tool calls, more than the {max} one \
             response may make",
            max + 2
        )),
        "{stderr}"
    );
    assert!(!dir.path().join("out").exists());
}
