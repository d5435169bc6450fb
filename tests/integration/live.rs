//! `toolbudget live`: the recorded cassette of the local model replayed offline (protocol,
//! accounting, byte-identical replay), the online path against a scripted server on loopback
//! (retries, recording, keys kept out of the cassette, provider-side search), and, when
//! `TOOLBUDGET_LIVE_URL` names a running `scripts/live-server.sh`, the real model.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{env_flag, repo, skip, toolbudget};

const CASSETTE: &str = "fixtures/live-cassettes/smollm2-135m.json";
const RECORDED: &str = "fixtures/live-cassettes/smollm2-135m.live.json";
const MODEL: &str = "smollm2-135m-instruct-q4_1";

fn scenarios() -> Vec<String> {
    [
        "scenarios/live/memory-and-time.yaml",
        "scenarios/live/time-and-git.yaml",
    ]
    .iter()
    .map(|p| repo(p).to_string_lossy().into_owned())
    .collect()
}

/// The recorded run's arguments (the cassette keys depend on them).
fn recorded_args(cassette: &Path, out: &Path) -> Vec<String> {
    let mut a = vec!["live".to_string()];
    a.extend(scenarios());
    for s in [
        "--provider",
        "openai-chat",
        "--model",
        MODEL,
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--max-steps",
        "3",
        "--max-tokens",
        "128",
        "--offline",
        "--format",
        "json",
        "--cassette",
    ] {
        a.push(s.into());
    }
    a.push(cassette.to_string_lossy().into_owned());
    a.push("--out".into());
    a.push(out.to_string_lossy().into_owned());
    a
}

/// Runs `cmd`, which must exit 2 with `message` on stderr.
fn fails_with(cmd: &mut assert_cmd::Command, message: &str) {
    let o = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(message), "{stderr}");
}

fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

pub(crate) fn cassette_entries(path: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["entries"]
        .as_object()
        .unwrap()
        .values()
        .cloned()
        .collect()
}

/// One mode of a recorded scenario: its outcomes partition its turns, every request is billed
/// and counted and summed as shown, steps are bounded, eager sends every tool and deferred
/// fewer. Returns its requests.
fn check_mode(s: &Value, mode: &str, turns: u64, tools: u64) -> usize {
    let m = &s[mode];
    assert_eq!(m["turns"], turns, "{mode}");
    // The outcomes partition the turns.
    let parts: u64 = [
        "correct",
        "wrong_tool",
        "no_tool",
        "malformed",
        "hit_step_limit",
        "trajectory",
    ]
    .iter()
    .map(|k| m[k].as_u64().unwrap())
    .sum();
    assert_eq!(parts, turns);
    let rows: Vec<&Value> = s["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["mode"] == mode)
        .collect();
    assert_eq!(m["requests"], rows.len() as u64);
    // Billed usage beside toolbudget's count, for every request, summed as shown.
    let billed: u64 = rows
        .iter()
        .map(|q| q["billed_input_tokens"].as_u64().expect("usage reported"))
        .sum();
    let counted: u64 = rows
        .iter()
        .map(|q| q["counted_input_tokens"].as_u64().unwrap())
        .sum();
    assert!(
        rows.iter()
            .all(|q| q["counted_input_tokens"].as_u64().unwrap() > 0)
    );
    assert_eq!(m["billed_input_tokens"], billed);
    assert_eq!(m["counted_input_tokens"], counted);
    let ratio = ((billed as f64 / counted as f64) * 1e4).round() / 1e4;
    assert_eq!(m["billed_over_counted"].as_f64().unwrap(), ratio);
    // Steps per turn are bounded.
    assert!(rows.iter().all(|q| q["step"].as_u64().unwrap() <= 3));
    for q in &rows {
        let sent = q["tools_sent"].as_u64().unwrap();
        if mode == "eager" {
            assert_eq!(sent, tools, "eager sends every tool");
        } else {
            assert!(
                sent < tools,
                "deferred sends the search tool and what it loaded"
            );
        }
    }
    rows.len()
}

/// The deferred list in the system prompt, counted on each deferred request: 107 tokens on each
/// of memory-and-time's 2, 131 on each of time-and-git's 7 (none eager).
fn the_deferred_list_is_counted(json: &str) {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["eager"]["deferred_list_tokens"], 0);
    assert_eq!(v["deferred"]["deferred_list_tokens"], 2 * 107 + 7 * 131);
    assert_eq!(
        v["scenarios"][1]["requests"][9]["deferred_list_tokens"],
        131
    );
}

#[test]
fn the_recorded_local_model_replays_offline_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("c.json");
    std::fs::copy(repo(CASSETTE), &cassette).unwrap();
    let run = |out: &Path| {
        let o = toolbudget()
            .args(recorded_args(&cassette, out))
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{stderr}");
        (String::from_utf8(o.stdout).unwrap(), stderr)
    };
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let (json_a, stderr) = run(&a);
    let (json_b, _) = run(&b);
    assert!(stderr.contains("live: 0 requests sent"), "{stderr}");
    assert_eq!(json_a, json_b);
    assert_eq!(tree(&a), tree(&b));
    the_deferred_list_is_counted(&json_a);
    // The recorded run (online, against the local server) wrote these very bytes.
    assert_eq!(
        std::fs::read_to_string(a.join("live.json")).unwrap(),
        std::fs::read_to_string(repo(RECORDED)).unwrap(),
        "the offline replay differs from the recorded run"
    );
    assert_eq!(
        std::fs::read(&cassette).unwrap(),
        std::fs::read(repo(CASSETTE)).unwrap(),
        "an offline replay must not rewrite the cassette"
    );

    let r: Value = serde_json::from_str(&json_a).unwrap();
    // A turn that used every step without answering is never right: the recording's three
    // searches of "Thanks, that is all." end at the step limit.
    let mut at_limit = 0;
    for s in r["scenarios"].as_array().unwrap() {
        for t in s["turns"].as_array().unwrap() {
            if t["hit_step_limit"] == true {
                at_limit += 1;
                assert_eq!(t["outcome"], "step-limit", "{t}");
            }
        }
    }
    assert_eq!(
        at_limit, 7,
        "5 eager and 2 deferred turns of the recording end at the limit"
    );
    assert_eq!(r["deferred"]["correct"], 0);
    assert_eq!(r["eager"]["correct"], 0);
    assert_eq!(r["provider"], "openai-chat");
    assert_eq!(r["counter"], "openai-chat");
    let names: Vec<&str> = r["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["live-memory-and-time", "live-time-and-git"]);
    let mut requests = 0;
    for s in r["scenarios"].as_array().unwrap() {
        let turns = if s["name"] == "live-memory-and-time" {
            2
        } else {
            3
        };
        let tools = s["tools"].as_u64().unwrap();
        assert_eq!(s["deferred_tools"], tools, "every MCP tool is deferred");
        for mode in ["eager", "deferred"] {
            requests += check_mode(s, mode, turns, tools);
        }
        let p = &s["paired"];
        assert_eq!(p["pairs"], turns);
        let pv = p["p_value"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&pv));
    }
    // Every recorded exchange was used, and each is one request of the result.
    let entries = cassette_entries(&cassette);
    assert_eq!(entries.len(), requests);
    // The protocol toward the local server: a system message first, an explicit tool_choice
    // `auto`, never streaming, an assistant `content` that is a string.
    for e in &entries {
        let body = &e["request"];
        assert_eq!(body["model"], MODEL);
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["stream"], false);
        assert_eq!(body["tool_choice"], "auto");
        assert_eq!(body["max_tokens"], 128);
        for m in body["messages"].as_array().unwrap() {
            assert!(m["content"].is_string(), "{m}");
        }
        assert!(e["response"]["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    }
    // The deferred first requests list the deferred tools in the system prompt and send only
    // the search tool.
    assert!(entries.iter().any(|e| {
        let tools = e["request"]["tools"].as_array().unwrap();
        tools.len() == 1
            && tools[0]["function"]["name"] == "ToolSearch"
            && e["request"]["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("<available-deferred-tools>\nmcp__memory__create_entities\nmcp__memory__create_relations")
    }));
}

#[test]
fn offline_refuses_a_missing_answer_and_a_tampered_cassette() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("c.json");
    std::fs::copy(repo(CASSETTE), &cassette).unwrap();
    // Another max_tokens is another request: not recorded.
    let mut args = recorded_args(&cassette, &dir.path().join("o"));
    let i = args.iter().position(|a| a == "128").unwrap();
    args[i] = "64".into();
    fails_with(
        toolbudget().args(&args),
        &format!(
            "has no answer for this request (model \"{MODEL}\", run 0) and --offline is set; \
             it holds 24 answers: 24 of openai-chat model \"{MODEL}\" in run 0; record it"
        ),
    );
    // The documented offline command (docs/guide/model-in-the-loop.md) once named another
    // model: the error says which one the cassette holds.
    let mut args = recorded_args(&cassette, &dir.path().join("o"));
    let i = args.iter().position(|a| a == MODEL).unwrap();
    args[i] = "smollm2".into();
    fails_with(
        toolbudget().args(&args),
        &format!(
            "(model \"smollm2\", run 0) and --offline is set; it holds 24 answers: 24 of \
             openai-chat model \"{MODEL}\" in run 0"
        ),
    );
    let text = std::fs::read_to_string(&cassette).unwrap();
    std::fs::write(
        &cassette,
        text.replacen("\"latency_ms\":", "\"latency_ms\":1", 1),
    )
    .unwrap();
    fails_with(
        toolbudget().args(recorded_args(&cassette, &dir.path().join("p"))),
        "the cassette is not usable (checksum mismatch)",
    );
    std::fs::remove_file(&cassette).unwrap();
    fails_with(
        toolbudget().args(recorded_args(&cassette, &dir.path().join("q"))),
        "--offline replays from the cassette",
    );
}

/// One request the scripted server saw.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub head: String,
    pub body: Value,
}

/// A scripted HTTP server on loopback: answers `respond(n, body)` (status, JSON) to each
/// request, at most `max` requests and for at most 120 s, then stops by itself.
pub(crate) fn serve(
    max: usize,
    respond: impl Fn(usize, &Value) -> (u16, Value) + Send + 'static,
) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        let start = Instant::now();
        let mut n = 0;
        while n < max && start.elapsed() < Duration::from_secs(120) {
            let Ok((stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            stream.set_nonblocking(false).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (status, answer) = respond(n, &body);
            log.lock().unwrap().push(Seen { head, body });
            let text = answer.to_string();
            let mut stream = reader.into_inner();
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
            n += 1;
        }
    });
    (url, seen)
}

fn chat_call(name: &str, args: &str) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": format!("call_{name}"), "type": "function",
         "function": {"name": name, "arguments": args}}]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 7}})
}

pub(crate) fn chat_text(text: &str) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
           "usage": {"prompt_tokens": 120, "completion_tokens": 3}})
}

/// A model that searches when it has to, writes one malformed call, then calls right.
pub(crate) fn scripted_chat(_: usize, body: &Value) -> (u16, Value) {
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    let names: Vec<&str> = body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|f| f["function"]["name"].as_str().unwrap())
                .collect()
        })
        .unwrap_or_default();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
        .as_str()
        .unwrap();
    let (tool, args) = if user.starts_with("Remember") {
        (
            "mcp__memory__create_entities",
            r#"{"entities":[{"name":"Alice","entityType":"person","observations":["owns billing"]}]}"#,
        )
    } else {
        (
            "mcp__time__convert_time",
            r#"{"source_timezone":"America/New_York","time":"09:00","target_timezone":"Europe/London"}"#,
        )
    };
    if last["role"] == "tool" {
        let content = last["content"].as_str().unwrap();
        if content.starts_with("Error: invalid arguments") || content.starts_with("Loaded") {
            return (200, chat_call(tool, args));
        }
        return (200, chat_text("Done."));
    }
    if !names.contains(&tool) {
        return (
            200,
            chat_call("ToolSearch", &format!(r#"{{"query":"{}"}}"#, &tool[13..])),
        );
    }
    if tool.ends_with("convert_time") {
        return (200, chat_call(tool, "{\"time\": 9"));
    }
    (200, chat_call(tool, args))
}

pub(crate) fn live_cmd(
    provider: &str,
    url: &str,
    cassette: &Path,
    out: &Path,
) -> assert_cmd::Command {
    let mut c = toolbudget();
    c.arg("live")
        .arg(repo("scenarios/live/memory-and-time.yaml"))
        .args([
            "--provider",
            provider,
            "--model",
            "m",
            "--base-url",
            url,
            "--cassette",
        ])
        .arg(cassette)
        .arg("--out")
        .arg(out)
        .args(["--format", "json"]);
    c
}

#[test]
fn online_runs_record_retry_and_keep_keys_out_of_the_cassette() {
    // The first request is answered 503 once: the client backs off and sends it again.
    let (url, seen) = serve(40, |n, body| {
        if n == 0 {
            (503, json!({"error": {"message": "warming up"}}))
        } else {
            scripted_chat(n, body)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("rec.json");
    let online = live_cmd(
        "openai-chat",
        &format!("{url}/v1"),
        &cassette,
        &dir.path().join("a"),
    )
    .env("OPENAI_API_KEY", "sk-live-test-secret")
    .output()
    .unwrap();
    assert!(
        online.status.success(),
        "{}",
        String::from_utf8_lossy(&online.stderr)
    );
    let seen = seen.lock().unwrap().clone();
    assert!(seen[0].head.starts_with("POST /v1/chat/completions "));
    assert!(
        seen[0]
            .head
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-live-test-secret")
    );
    assert_eq!(
        seen[0].body, seen[1].body,
        "the 503 was retried with the same request"
    );
    let file = std::fs::read_to_string(&cassette).unwrap();
    assert!(!file.contains("sk-live-test-secret"));
    assert_eq!(cassette_entries(&cassette).len(), seen.len() - 1);

    let r: Value = serde_json::from_slice(&online.stdout).unwrap();
    let s = &r["scenarios"][0];
    // Eager: memory right away; convert_time malformed first, then right.
    assert_eq!(s["eager"]["correct"], 2);
    assert_eq!(s["eager"]["malformed_calls"], 1);
    assert_eq!(s["eager"]["searches"], 0);
    // Deferred: a search per turn, each returned the expected tool, which was then called.
    assert_eq!(s["deferred"]["correct"], 2);
    assert_eq!(s["deferred"]["searches"], 2);
    assert_eq!(s["deferred"]["turns_search_found_expected"], 2);
    assert_eq!(s["deferred"]["premature_calls"], 0);
    // Adoption by the definition session import uses: both deferred calls came after a search
    // that returned their tool; eager defers nothing.
    assert_eq!(
        s["deferred"]["adoption"],
        json!({"searches": 2, "select_searches": 0, "empty_searches": 0, "deferred_calls": 2,
               "found_calls": 2, "first_calls": 0, "failed_first_calls": 0})
    );
    assert_eq!(s["eager"]["adoption"]["deferred_calls"], 0);
    assert_eq!(s["paired"]["both_correct"], 2);
    assert_eq!(s["paired"]["p_value"], 1.0);
    let first_deferred = seen
        .iter()
        .find(|x| x.body["tools"].as_array().unwrap().len() == 1)
        .unwrap();
    assert_eq!(
        first_deferred.body["tools"][0]["function"]["name"],
        "ToolSearch"
    );
    let turns = s["turns"].as_array().unwrap();
    assert_eq!(turns[0]["called"], "mcp__memory__create_entities");

    // Offline, without a key or a server, the recording gives the same bytes.
    let offline = live_cmd(
        "openai-chat",
        "http://127.0.0.1:9/v1",
        &cassette,
        &dir.path().join("b"),
    )
    .arg("--offline")
    .env_remove("OPENAI_API_KEY")
    .output()
    .unwrap();
    assert!(
        offline.status.success(),
        "{}",
        String::from_utf8_lossy(&offline.stderr)
    );
    assert_eq!(offline.stdout, online.stdout);
    assert_eq!(tree(&dir.path().join("a")), tree(&dir.path().join("b")));
}

/// A model that calls the deferred tool before any search (an error: not loaded), then
/// searches by keywords that match nothing, then selects it by name, then calls it.
fn impatient_chat(_: usize, body: &Value) -> (u16, Value) {
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
        .as_str()
        .unwrap();
    let (tool, args) = if user.starts_with("Remember") {
        (
            "mcp__memory__create_entities",
            r#"{"entities":[{"name":"Alice","entityType":"person","observations":["owns billing"]}]}"#,
        )
    } else {
        (
            "mcp__time__convert_time",
            r#"{"source_timezone":"America/New_York","time":"09:00","target_timezone":"Europe/London"}"#,
        )
    };
    if last["role"] != "tool" {
        return (200, chat_call(tool, args));
    }
    let content = last["content"].as_str().unwrap();
    if content.contains("is not loaded") {
        return (200, chat_call("ToolSearch", r#"{"query":"zebra quartz"}"#));
    }
    if content.starts_with("No deferred tool matches") {
        let query = format!(r#"{{"query":"select:{tool}"}}"#);
        return (200, chat_call("ToolSearch", &query));
    }
    if content.starts_with("Loaded") {
        return (200, chat_call(tool, args));
    }
    (200, chat_text("Done."))
}

/// Adoption in `live` is counted by the definition `session import` uses (src/adoption.rs): a
/// call before any search came first and failed, an empty keyword search and a `select:`
/// search are told apart, and the call after the search found its tool.
#[test]
fn live_counts_adoption_by_the_session_import_definition() {
    let (url, _) = serve(40, impatient_chat);
    let dir = tempfile::tempdir().unwrap();
    let o = live_cmd(
        "openai-chat",
        &format!("{url}/v1"),
        &dir.path().join("c.json"),
        &dir.path().join("a"),
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = &r["deferred"];
    assert_eq!(
        d["adoption"],
        json!({"searches": 4, "select_searches": 2, "empty_searches": 2, "deferred_calls": 4,
               "found_calls": 2, "first_calls": 2, "failed_first_calls": 2})
    );
    // The older fields are the same numbers under their names.
    assert_eq!(d["searches"], 4);
    assert_eq!(d["premature_calls"], 2);
    assert_eq!(d["correct"], 2);
    assert_eq!(r["eager"]["adoption"]["deferred_calls"], 0);
    let turns = std::fs::read_to_string(dir.path().join("a/turns.csv")).unwrap();
    assert!(
        turns.lines().next().unwrap().ends_with(
            "trajectory,select_searches,empty_searches,deferred_calls,found_calls,failed_first_calls"
        ),
        "{turns}"
    );
    let summary = std::fs::read_to_string(dir.path().join("a/summary.md")).unwrap();
    assert!(
        summary
            .contains("| searches: select / keyword / returned nothing | 0 / 0 / 0 | 2 / 2 / 2 |"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "| deferred calls: after a search / came first (failed) | 0 / 0 (0) | 2 / 2 (2) |"
        ),
        "{summary}"
    );
}

#[test]
fn client_errors_fail_at_once_and_what_was_answered_stays_recorded() {
    let (url, seen) = serve(10, |n, body| {
        if n == 0 {
            scripted_chat(n, body)
        } else {
            (
                400,
                json!({"error": {"message": "context length exceeded"}}),
            )
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("rec.json");
    fails_with(
        &mut live_cmd(
            "openai-chat",
            &format!("{url}/v1"),
            &cassette,
            &dir.path().join("a"),
        ),
        "rejected the request (HTTP 400): context length exceeded",
    );
    assert_eq!(seen.lock().unwrap().len(), 2, "a 4xx is not retried");
    assert_eq!(cassette_entries(&cassette).len(), 1);
}

/// Failures that repeat the same way are not retried: a 501, and an answer over the 1 MiB
/// body limit.
#[test]
fn failures_no_retry_mends_end_the_run_after_one_request() {
    let big = json!({"padding": "x".repeat(2 << 20)});
    for (status, answer, message) in [
        (
            501,
            json!({"error": {"message": "not here"}}),
            "(HTTP 501): not here",
        ),
        (
            200,
            big,
            "failed in a way no retry mends: the response body is larger than request limit",
        ),
    ] {
        let (url, seen) = serve(5, move |_, _| (status, answer.clone()));
        let dir = tempfile::tempdir().unwrap();
        fails_with(
            &mut live_cmd(
                "openai-chat",
                &format!("{url}/v1"),
                &dir.path().join("c.json"),
                &dir.path().join("a"),
            ),
            message,
        );
        assert_eq!(seen.lock().unwrap().len(), 1, "{message}");
    }
}

#[test]
fn anthropic_provider_side_search_is_read_from_the_answer() {
    let (url, seen) = serve(20, |_, body| {
        let messages = body["messages"].as_array().unwrap();
        let last = &messages.last().unwrap()["content"];
        let last_block = last.as_array().unwrap().last().unwrap();
        let user = messages[0]["content"][0]["text"].as_str().unwrap_or("");
        let deferred = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["defer_loading"] == true);
        let (tool, input) = if messages.len() == 1 && user.starts_with("Remember") {
            ("mcp__memory__create_entities", json!({"entities": []}))
        } else {
            (
                "mcp__time__convert_time",
                json!({"source_timezone": "UTC", "time": "09:00", "target_timezone": "UTC"}),
            )
        };
        let usage = json!({"input_tokens": 90, "cache_read_input_tokens": 10, "output_tokens": 4});
        if last_block["type"] == "tool_result" {
            return (
                200,
                json!({"content": [{"type": "text", "text": "Done."}],
                                "stop_reason": "end_turn", "usage": usage}),
            );
        }
        let mut content = Vec::new();
        if deferred {
            content.push(json!({"type": "server_tool_use", "id": "srvtoolu_1",
                                "name": "tool_search_tool_bm25", "input": {"query": tool}}));
            content.push(
                json!({"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
                "content": {"type": "tool_search_tool_search_result",
                            "tool_references": [{"type": "tool_reference", "tool_name": tool}]}}),
            );
        }
        content.push(json!({"type": "tool_use", "id": "toolu_1", "name": tool, "input": input}));
        (
            200,
            json!({"content": content, "stop_reason": "tool_use", "usage": usage}),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("rec.json");
    let o = live_cmd("anthropic", &url, &cassette, &dir.path().join("a"))
        .args(["--search", "provider"])
        .env("ANTHROPIC_API_KEY", "sk-ant-test-secret")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let seen = seen.lock().unwrap().clone();
    let deferred: Vec<&Seen> = seen
        .iter()
        .filter(|x| {
            x.body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["defer_loading"] == true)
        })
        .collect();
    assert!(!deferred.is_empty());
    for x in &deferred {
        let head = x.head.to_ascii_lowercase();
        assert!(head.starts_with("post /v1/messages "));
        assert!(head.contains("anthropic-beta: advanced-tool-use-2025-11-20"));
        assert!(head.contains("x-api-key: sk-ant-test-secret"));
        let tools = x.body["tools"].as_array().unwrap();
        assert_eq!(
            tools.last().unwrap()["type"],
            "tool_search_tool_bm25_20251119"
        );
        assert_eq!(
            tools.iter().filter(|t| t["defer_loading"] == true).count(),
            11
        );
    }
    assert!(
        !std::fs::read_to_string(&cassette)
            .unwrap()
            .contains("sk-ant-test-secret")
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &r["scenarios"][0];
    assert_eq!(r["counter"], "anthropic-estimate");
    assert_eq!(s["deferred"]["searches"], 2);
    assert_eq!(s["deferred"]["turns_search_found_expected"], 2);
    assert_eq!(s["deferred"]["correct"], 2);
    assert_eq!(s["eager"]["correct"], 2);
    assert_eq!(s["eager"]["searches"], 0);
    // Billed input counts cache reads: 90 + 10 a request.
    let requests = s["deferred"]["requests"].as_u64().unwrap();
    assert_eq!(s["deferred"]["billed_input_tokens"], 100 * requests);
}

/// The real model, when `scripts/live-server.sh start` runs (CI): both modes of one scenario,
/// recorded into a fresh cassette, then replayed offline to the same bytes. Asserts the
/// protocol and the accounting, not the model's accuracy.
#[test]
fn the_local_model_server_answers_both_modes() {
    let Some(url) = std::env::var("TOOLBUDGET_LIVE_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        assert!(
            !env_flag("TOOLBUDGET_REQUIRE_LIVE_MODEL"),
            "TOOLBUDGET_REQUIRE_LIVE_MODEL is set but TOOLBUDGET_LIVE_URL is not (start the \
             server with scripts/live-server.sh start)"
        );
        skip(
            "the_local_model_server_answers_both_modes",
            "TOOLBUDGET_LIVE_URL is not set (scripts/live-server.sh start prints it)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cassette: PathBuf = dir.path().join("live.json");
    let run = |out: &str, offline: bool| {
        let mut c = live_cmd("openai-chat", &url, &cassette, &dir.path().join(out));
        c.args(["--max-steps", "2", "--max-tokens", "64"]);
        if offline {
            c.arg("--offline");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let online = run("a", false);
    let r: Value = serde_json::from_slice(&online).unwrap();
    let s = &r["scenarios"][0];
    for mode in ["eager", "deferred"] {
        let m = &s[mode];
        assert_eq!(m["turns"], 2, "{mode}");
        assert!(m["requests"].as_u64().unwrap() >= 2);
        assert_eq!(m["requests_without_usage"], 0, "the server reports usage");
        assert!(m["billed_input_tokens"].as_u64().unwrap() > 0);
        assert!(m["counted_input_tokens"].as_u64().unwrap() > 0);
    }
    assert_eq!(
        cassette_entries(&cassette).len() as u64,
        s["eager"]["requests"].as_u64().unwrap() + s["deferred"]["requests"].as_u64().unwrap()
    );
    assert_eq!(run("b", true), online, "the offline replay differs");
}

/// `report --live DIR` appends the accuracy section to index.md, with its chart and CSVs.
#[test]
fn the_report_adds_the_accuracy_section() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("c.json");
    std::fs::copy(repo(CASSETTE), &cassette).unwrap();
    let live = dir.path().join("live");
    let o = toolbudget()
        .args(recorded_args(&cassette, &live))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.path().join("report");
    let o = toolbudget()
        .args(["report", "--quiet", "--out"])
        .arg(&out)
        .arg("--live")
        .arg(&live)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    let at = index.find("\n## Model in the loop\n").expect("the section");
    let section = &index[at..];
    assert!(section.contains(
        "| live-time-and-git | deferred | 3 | 0.0% [0.0–56.1%] | 0 / 1 / 0 / 2 / 0 | 6 (2 / 1) | 8,554 / 8,261 (1.036) |"
    ), "{section}");
    assert!(section.contains("deferred only 0, neither 5; exact McNemar p = 1.000"));
    assert!(
        std::fs::read_to_string(out.join("charts/live-accuracy.svg"))
            .unwrap()
            .starts_with("<svg")
    );
    let requests = std::fs::read_to_string(out.join("data/live-requests.csv")).unwrap();
    assert_eq!(
        requests.lines().count(),
        1 + 24,
        "one row per recorded request"
    );
}

/// A scripted model behind a fake prefix cache: the prompt is the system message, the tools,
/// then the history, a token every 4 bytes; the cache keeps the previous prompt. Its answers
/// carry llama.cpp's `cached_tokens` and `timings`.
fn cached_chat(prev: &Mutex<String>, n: usize, body: &Value) -> (u16, Value) {
    let (status, mut answer) = scripted_chat(n, body);
    let messages = body["messages"].as_array().unwrap();
    let history: String = messages[1..].iter().map(Value::to_string).collect();
    let prompt = format!("{}{}{history}", messages[0], body["tools"]);
    let mut last = prev.lock().unwrap();
    let common = prompt
        .bytes()
        .zip(last.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let (tokens, cached) = (prompt.len() as u64 / 4, common as u64 / 4);
    *last = prompt;
    answer["usage"] = json!({"prompt_tokens": tokens, "completion_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": cached}});
    answer["timings"] = json!({"cache_n": cached, "prompt_n": tokens - cached,
        "prompt_ms": (tokens - cached) as f64 / 2.0, "predicted_n": 7, "predicted_ms": 35.5});
    (status, answer)
}

/// `reveal: tools-list` against `reveal: append` on a server that reports its cache: the
/// reveal breaks the cached prefix at the tools, measured and modeled alike; append keeps it.
#[test]
fn a_servers_cache_is_read_beside_the_modeled_one_for_both_reveals() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = std::fs::read_to_string(repo("scenarios/live/memory-and-time.yaml")).unwrap();
    let fixtures = repo("fixtures").to_string_lossy().into_owned();
    for reveal in ["tools-list", "append"] {
        let scenario = dir.path().join(format!("{reveal}.yaml"));
        let text = yaml
            .replace("../../fixtures", &fixtures)
            .replace("reveal: tools-list", &format!("reveal: {reveal}"))
            .replace(
                "name: live-memory-and-time",
                &format!("name: cache-{reveal}"),
            )
            // Its own system prompt: no request of it is the first scenario's, replayed from
            // the cassette without reaching the server's cache.
            .replace(
                "You are an assistant",
                &format!("You are an assistant ({reveal})"),
            );
        std::fs::write(&scenario, text).unwrap();
        let prev = Mutex::new(String::new());
        let (url, _) = serve(40, move |n, b| cached_chat(&prev, n, b));
        let out = dir.path().join(reveal);
        let cassette = dir.path().join(format!("{reveal}.json"));
        let o = live_cmd("openai-chat", &url, &cassette, &out)
            .arg(&scenario)
            .args(["--max-steps", "4"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        let s = &r["scenarios"][1];
        let deferred: Vec<&Value> = s["requests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|q| q["mode"] == "deferred")
            .collect();
        assert!(s["deferred"]["searches"].as_u64().unwrap() >= 1, "{reveal}");
        for q in &deferred {
            assert_eq!(q["generation_ms"], 35.5);
            assert!(q["prompt_evaluated_tokens"].as_u64().is_some());
        }
        let breaks: Vec<&str> = deferred
            .iter()
            .map(|q| q["modeled_cache_break"].as_str().unwrap())
            .collect();
        let cache = &s["deferred"]["cache"];
        if reveal == "tools-list" {
            assert!(breaks.contains(&"tools"), "{breaks:?}");
            assert!(cache["breaks"].as_u64().unwrap() >= 1, "{cache}");
            assert!(deferred.iter().any(|q| q["tools_sent"].as_u64() > Some(1)));
        } else {
            assert!(breaks.iter().all(|b| b.is_empty()), "{breaks:?}");
            assert_eq!(cache["breaks"], 0, "{cache}");
            assert!(deferred.iter().all(|q| q["tools_sent"] == 1));
        }
        assert_eq!(cache["agree"], cache["requests"], "{cache}");
        let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
        assert!(summary.contains("### The cache, measured beside modeled"));
        let csv = std::fs::read_to_string(out.join("requests.csv")).unwrap();
        assert!(csv.lines().next().unwrap().contains(
            "cached_tokens,prompt_evaluated_tokens,prompt_ms,generated_tokens,generation_ms,modeled_cached_tokens,modeled_cache_break"
        ));
    }
}
