//! The `anthropic-api` counter against a fake `count_tokens` endpoint on 127.0.0.1: a thread
//! with a TcpListener that checks each request's shape and answers like the real API (a count
//! from a fixed rule, or a scripted error).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;
use toolbudget::counter::ToolChoice;
use toolbudget::counter::api::{ApiError, CacheLoad, Client, MAX_ATTEMPTS, Settings, Ureq};

const KEY: &str = "sk-test-123";

/// The fake's bill: 9 for any request, a token per 4 bytes (rounded up) of each message, one
/// per 4 bytes of the system prompt, 300 when any tool is sent, and per tool 20 + one token per
/// 10 bytes of its description (so per-tool differences are known exactly).
fn fake_count(body: &Value) -> usize {
    let mut n = 9;
    if let Some(s) = body.get("system").and_then(Value::as_str) {
        n += s.len() / 4;
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        n += m["content"].as_str().unwrap_or("").len().div_ceil(4);
    }
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        n += 300;
        for t in tools {
            n += 20 + t["description"].as_str().unwrap().len() / 10;
        }
    }
    n
}

fn tool_cost(description: &str) -> usize {
    20 + description.len() / 10
}

/// A scripted answer: status, extra headers, body.
#[derive(Clone)]
struct Answer(u16, Vec<(&'static str, &'static str)>, String);

/// One request as the fake saw it: path, headers (lowercased names), body.
type Request = (String, Vec<(String, String)>, Value);

#[derive(Default)]
struct Seen {
    requests: Vec<Request>,
    problems: Vec<String>,
}

struct Fake {
    url: String,
    seen: Arc<Mutex<Seen>>,
}

/// Serves `script` first, then counts by `fake_count`. Checks path, headers and body keys.
fn serve(script: Vec<Answer>) -> Fake {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let script = Arc::new(Mutex::new(VecDeque::from(script)));
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            let mut headers = Vec::new();
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                let (k, v) = h.split_once(':').unwrap();
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
            let len: usize = headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .map_or(0, |(_, v)| v.parse().unwrap());
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let mut problems = check_shape(&line, &path, &headers, &body);
            let answer = script.lock().unwrap().pop_front().unwrap_or_else(|| {
                Answer(
                    200,
                    vec![],
                    format!("{{\"input_tokens\":{}}}", fake_count(&body)),
                )
            });
            let mut seen = s2.lock().unwrap();
            seen.problems.append(&mut problems);
            seen.requests.push((path, headers, body));
            drop(seen);
            let mut resp = format!(
                "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                answer.0,
                answer.2.len()
            );
            for (k, v) in &answer.1 {
                resp.push_str(&format!("{k}: {v}\r\n"));
            }
            resp.push_str("\r\n");
            resp.push_str(&answer.2);
            let _ = stream.write_all(resp.as_bytes());
        }
    });
    Fake { url, seen }
}

fn check_shape(line: &str, path: &str, headers: &[(String, String)], body: &Value) -> Vec<String> {
    let mut p = Vec::new();
    let h = |k: &str| {
        headers
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    };
    if !line.starts_with("POST ") {
        p.push(format!("method: {line}"));
    }
    if path != "/v1/messages/count_tokens" {
        p.push(format!("path {path}"));
    }
    if h("x-api-key") != Some(KEY) {
        p.push(format!("x-api-key {:?}", h("x-api-key")));
    }
    if h("anthropic-version") != Some("2023-06-01") {
        p.push("anthropic-version".into());
    }
    if !h("content-type").is_some_and(|v| v.starts_with("application/json")) {
        p.push("content-type".into());
    }
    let Some(obj) = body.as_object() else {
        p.push("body is not an object".into());
        return p;
    };
    for k in obj.keys() {
        if !["model", "system", "messages", "tools", "tool_choice"].contains(&k.as_str()) {
            p.push(format!("unexpected body key {k}"));
        }
    }
    if !body["model"].is_string() {
        p.push("model".into());
    }
    let msgs = body["messages"].as_array();
    if !msgs.is_some_and(|m| {
        !m.is_empty()
            && m.iter()
                .all(|x| x["role"] == "user" && x["content"].is_string())
    }) {
        p.push("messages".into());
    }
    if let Some(tools) = body.get("tools") {
        let ok = tools.as_array().is_some_and(|ts| {
            ts.iter().all(|t| {
                t["name"].as_str().is_some_and(|n| {
                    !n.is_empty()
                        && n.len() <= 64
                        && n.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                }) && t["description"].is_string()
                    && t["input_schema"].is_object()
            })
        });
        if !ok {
            p.push("tools".into());
        }
    }
    p
}

const CATALOG: &str = r#"[
  {"name": "notes_search", "description": "Search the team's notes by keyword; returns titles and links.", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}},
  {"name": "notes_create", "description": "Create a note.", "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}}},
  {"name": "calendar_free", "description": "Find a free slot for the given people, by email, within the next two weeks.", "input_schema": {"type": "object", "properties": {"who": {"type": "array", "items": {"type": "string"}}}}}
]"#;

fn descriptions() -> Vec<String> {
    let v: Value = serde_json::from_str(CATALOG).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t["description"].as_str().unwrap().to_string())
        .collect()
}

fn setup() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("tools.json");
    std::fs::write(&cat, CATALOG).unwrap();
    let cache = dir.path().join("cache/counts.json");
    (
        dir,
        cat.to_string_lossy().into_owned(),
        cache.to_string_lossy().into_owned(),
    )
}

fn count(cat: &str, cache: &str, url: Option<&str>, key: Option<&str>) -> std::process::Output {
    let mut c = Command::cargo_bin("toolbudget").unwrap();
    c.args([
        "count",
        "--counter",
        "anthropic-api",
        "--format",
        "json",
        "-c",
        cat,
    ])
    .args(["--api-cache", cache])
    .env_remove("ANTHROPIC_API_KEY")
    .env_remove("ANTHROPIC_BASE_URL");
    if let Some(u) = url {
        c.env("ANTHROPIC_BASE_URL", u);
    }
    if let Some(k) = key {
        c.env("ANTHROPIC_API_KEY", k);
    }
    c.output().unwrap()
}

fn json(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn counts_by_differences_then_reuses_the_cache_offline() {
    let (_d, cat, cache) = setup();
    let fake = serve(vec![]);
    let first = json(&count(&cat, &cache, Some(&fake.url), Some(KEY)));
    {
        let seen = fake.seen.lock().unwrap();
        assert!(seen.problems.is_empty(), "{:?}", seen.problems);
        // N + 2 requests: the probe alone, every tool, each tool alone.
        assert_eq!(seen.requests.len(), 3 + 2);
        assert_eq!(seen.requests[0].2["model"], "claude-sonnet-4-6");
    }
    assert_eq!(first["counter"], "anthropic-api");
    assert_eq!(first["fixed_tokens"], 300);
    let want: Vec<usize> = descriptions().iter().map(|d| tool_cost(d)).collect();
    let got: Vec<usize> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tokens"].as_u64().unwrap() as usize)
        .collect();
    assert_eq!(got, want);
    assert_eq!(first["total_tokens"], want.iter().sum::<usize>());
    // No key, no server: every answer comes from the cache, byte for byte the same output.
    let again = count(&cat, &cache, Some("http://127.0.0.1:9"), None);
    assert_eq!(json(&again), first);
    assert_eq!(fake.seen.lock().unwrap().requests.len(), 5);
}

#[test]
fn a_bad_key_is_a_clear_error() {
    let (_d, cat, cache) = setup();
    let fake = serve(vec![Answer(
        401,
        vec![],
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
            .into(),
    )]);
    let out = count(&cat, &cache, Some(&fake.url), Some(KEY));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(
            "error: anthropic-api: the API refused the key (HTTP 401): invalid x-api-key"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // One request, no retry of a refused key.
    assert_eq!(fake.seen.lock().unwrap().requests.len(), 1);
}

#[test]
fn a_missing_answer_offline_is_a_clear_error() {
    let (_d, cat, cache) = setup();
    let out = count(&cat, &cache, None, None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: anthropic-api: the cache "), "{err}");
    assert!(err.contains("ANTHROPIC_API_KEY is not set"), "{err}");
    assert!(
        !Path::new(&cache).exists(),
        "nothing to cache, nothing written"
    );
}

#[test]
fn a_corrupted_cache_is_rebuilt_never_trusted() {
    let (_d, cat, cache) = setup();
    let fake = serve(vec![]);
    let good = json(&count(&cat, &cache, Some(&fake.url), Some(KEY)));
    // Tamper with one answer: the checksum no longer matches, so the file is discarded.
    let text = std::fs::read_to_string(&cache).unwrap();
    let tampered = text.replacen("\"input_tokens\": 10", "\"input_tokens\": 1", 1);
    assert_ne!(text, tampered);
    std::fs::write(&cache, tampered).unwrap();
    let out = count(&cat, &cache, Some(&fake.url), Some(KEY));
    assert!(String::from_utf8_lossy(&out.stderr).contains("was discarded (checksum mismatch)"));
    assert_eq!(json(&out), good);
    assert_eq!(
        std::fs::read_to_string(&cache).unwrap(),
        text,
        "rebuilt to the same bytes"
    );
    // A file that cannot be told for a cache (cut short here) is someone's: refused, kept.
    let cut = "{\"format\": \"toolbudget-count-tok";
    std::fs::write(&cache, cut).unwrap();
    let out = count(&cat, &cache, Some(&fake.url), Some(KEY));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not an answers cache"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), cut);
}

type Sleeps = Arc<Mutex<Vec<Duration>>>;

fn client(url: &str, sleeps: &Sleeps) -> Client {
    let s = sleeps.clone();
    Client::new(
        Settings {
            base_url: url.into(),
            key: Some(KEY.into()),
            model: "claude-sonnet-4-6".into(),
            cache_path: "unused.json".into(),
            offline: false,
        },
        None,
        Box::new(Ureq::default()),
        Box::new(move |d, _: &str| s.lock().unwrap().push(d)),
    )
}

fn overloaded(status: u16) -> Answer {
    Answer(
        status,
        vec![],
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(),
    )
}

#[test]
fn rate_limits_wait_for_retry_after_then_succeed() {
    let fake = serve(vec![
        Answer(
            429,
            vec![("retry-after", "7")],
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#.into(),
        ),
        overloaded(529),
    ]);
    let sleeps = Sleeps::default();
    let mut c = client(&fake.url, &sleeps);
    assert_eq!(c.request(None, ".", &[], ToolChoice::Auto), Ok(10));
    assert_eq!(
        *sleeps.lock().unwrap(),
        [Duration::from_secs(7), Duration::from_secs(2)]
    );
    assert_eq!(c.sent, 3);
    assert_eq!(c.load, CacheLoad::Missing);
    assert!(c.cache.is_dirty() && c.cache.len() == 1);
    // Cached now: no further request.
    assert_eq!(c.request(None, ".", &[], ToolChoice::Auto), Ok(10));
    assert_eq!(fake.seen.lock().unwrap().requests.len(), 3);
}

#[test]
fn server_errors_are_retried_a_bounded_number_of_times_with_backoff() {
    let fake = serve(vec![overloaded(500); 10]);
    let sleeps = Sleeps::default();
    let mut c = client(&fake.url, &sleeps);
    let e = c.request(None, ".", &[], ToolChoice::Auto).unwrap_err();
    assert!(
        matches!(
            e,
            ApiError::GaveUp {
                attempts: MAX_ATTEMPTS,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("HTTP 500: Overloaded"), "{e}");
    let waited: Vec<u64> = sleeps
        .lock()
        .unwrap()
        .iter()
        .map(Duration::as_secs)
        .collect();
    assert_eq!(waited, [1, 2, 4, 8]);
    assert_eq!(fake.seen.lock().unwrap().requests.len(), MAX_ATTEMPTS);
    assert!(c.cache.is_empty());
}

#[test]
fn other_client_errors_fail_at_once_with_the_api_message() {
    let fake = serve(vec![Answer(
        400,
        vec![],
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"model: not found"}}"#
            .into(),
    )]);
    let sleeps = Sleeps::default();
    let mut c = client(&fake.url, &sleeps);
    let e = c.request(None, ".", &[], ToolChoice::Auto).unwrap_err();
    assert_eq!(
        e,
        ApiError::Rejected {
            status: 400,
            message: "model: not found".into()
        }
    );
    assert!(sleeps.lock().unwrap().is_empty());
}

#[test]
fn simulate_counts_its_first_request_through_the_api() {
    let (dir, cat, cache) = setup();
    let system = "You keep the team's notes and calendar in order.";
    let user = "Find my notes about the offsite, then book an hour with Sam.";
    let sc = dir.path().join("s.yaml");
    std::fs::write(
        &sc,
        format!(
            "name: api\nmodel: claude-sonnet-4-6\ncounter: anthropic-api\nsystem_prompt: {system:?}\ncatalogs: [{cat:?}]\nconversation:\n  - user: {user:?}\n"
        ),
    )
    .unwrap();
    let fake = serve(vec![]);
    let run = |url: Option<&str>, key: Option<&str>| {
        let mut c = Command::cargo_bin("toolbudget").unwrap();
        c.args(["simulate", "--format", "json", "--api-cache", &cache])
            .arg(&sc)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL");
        if let Some(u) = url {
            c.env("ANTHROPIC_BASE_URL", u);
        }
        if let Some(k) = key {
            c.env("ANTHROPIC_API_KEY", k);
        }
        c.output().unwrap()
    };
    let v = json(&run(Some(&fake.url), Some(KEY)));
    assert!(fake.seen.lock().unwrap().problems.is_empty());
    let s = &v["scenarios"][0];
    assert_eq!(s["counter"], "anthropic-api");
    // What the fake bills for the whole first request: system, user message, every tool.
    let tools: Vec<Value> = serde_json::from_str(CATALOG).unwrap();
    let whole = fake_count(&serde_json::json!({
        "system": system,
        "messages": [{"role": "user", "content": user}],
        "tools": tools,
    }));
    assert_eq!(s["eager"]["first_request_tokens"], whole);
    // Offline, from the cache alone: the same bytes.
    let again = json(&run(None, None));
    assert_eq!(again, v);
}

#[test]
fn a_retry_after_past_the_cap_fails_at_once_naming_the_endpoint_and_the_header() {
    let fake = serve(vec![Answer(
        429,
        vec![("retry-after", "600")],
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#.into(),
    )]);
    let sleeps = Sleeps::default();
    let mut c = client(&fake.url, &sleeps);
    let e = c.request(None, ".", &[], ToolChoice::Auto).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "anthropic-api: {}/v1/messages/count_tokens answered HTTP 429 with `retry-after: \
             600`, longer than the 60 s toolbudget waits; try again later (answers already had \
             are cached)",
            fake.url
        )
    );
    assert!(sleeps.lock().unwrap().is_empty(), "no ten-minute silence");
    assert_eq!(c.sent, 1);
    assert!(c.cache.is_empty());
}

#[test]
fn every_wait_is_said_on_stderr() {
    let (_d, cat, cache) = setup();
    let fake = serve(vec![Answer(
        429,
        vec![("retry-after", "1")],
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#.into(),
    )]);
    let out = count(&cat, &cache, Some(&fake.url), Some(KEY));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err.lines().next(),
        Some(
            format!(
                "note: anthropic-api: {}/v1/messages/count_tokens answered HTTP 429 (rate \
                 limited); waiting 1 s before attempt 2 of 5",
                fake.url
            )
            .as_str()
        ),
        "{err}"
    );
}

/// Answers every request with headers, then its body one byte every 200 ms.
fn trickle() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n";
                if stream.write_all(head.as_bytes()).is_err() {
                    return;
                }
                for _ in 0..1000 {
                    std::thread::sleep(Duration::from_millis(200));
                    if stream
                        .write_all(b" ")
                        .and_then(|()| stream.flush())
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    url
}

#[test]
fn a_trickled_body_hits_the_per_request_deadline() {
    let url = trickle();
    let sleeps = Sleeps::default();
    let s = sleeps.clone();
    let mut c = Client::new(
        Settings {
            base_url: url.clone(),
            key: Some(KEY.into()),
            model: "claude-sonnet-4-6".into(),
            cache_path: "unused.json".into(),
            offline: false,
        },
        None,
        // A second for the whole request, the body included (the default is a minute).
        Box::new(Ureq::with_timeout(Duration::from_secs(1))),
        Box::new(move |d, _: &str| s.lock().unwrap().push(d)),
    );
    let e = c.request(None, ".", &[], ToolChoice::Auto).unwrap_err();
    let ApiError::GaveUp { attempts, last } = &e else {
        panic!("{e}")
    };
    assert_eq!(*attempts, MAX_ATTEMPTS);
    assert!(
        last.starts_with(&format!("{url}/v1/messages/count_tokens: ")) && last.contains("imeout"),
        "{last}"
    );
    assert_eq!(sleeps.lock().unwrap().len(), MAX_ATTEMPTS - 1);
    assert!(c.cache.is_empty());
}

/// The cache file's entries (none when there is no file).
fn cached_entries(cache: &str) -> usize {
    std::fs::read_to_string(cache).map_or(0, |text| {
        let v: Value = serde_json::from_str(&text).unwrap();
        v["entries"].as_object().unwrap().len()
    })
}

#[test]
fn implausible_answers_are_refused_and_never_cached() {
    let cases = [
        (r#"{"input_tokens":0}"#, "0 tokens for a request of"),
        (
            r#"{"input_tokens":18446744073709551615}"#,
            "18446744073709551615 tokens for a request of",
        ),
        (
            r#"{"input_tokens":900000}"#,
            "900000 tokens for a request of",
        ),
        (
            r#"{"input_tokens":12.5}"#,
            "input_tokens is 12.5, not a whole number",
        ),
    ];
    for (body, why) in cases {
        let (_d, cat, cache) = setup();
        let fake = serve(vec![Answer(200, vec![], body.into())]);
        let out = count(&cat, &cache, Some(&fake.url), Some(KEY));
        assert_eq!(out.status.code(), Some(2), "{body}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with(&format!(
                "error: anthropic-api: {}/v1/messages/count_tokens gave an answer that is not a \
                 plausible count: {why}",
                fake.url
            )) && err.contains("; it is not cached"),
            "{body}: {err}"
        );
        assert_eq!(cached_entries(&cache), 0, "{body}");
    }
    // A constant answer is a plausible count each time, but the series does not add up: not
    // one of its answers is kept.
    let (_d, cat, cache) = setup();
    let constant = Answer(200, vec![], r#"{"input_tokens":10}"#.into());
    let fake = serve(vec![constant; 5]);
    let out = count(&cat, &cache, Some(&fake.url), Some(KEY));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "counts 10 tokens, no more than the 10 without tools (the answers for this catalog \
             are taken out of the cache)"
        ),
        "{err}"
    );
    assert_eq!(fake.seen.lock().unwrap().requests.len(), 5);
    assert_eq!(cached_entries(&cache), 0);
}
