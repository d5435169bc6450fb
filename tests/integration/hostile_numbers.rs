//! Numbers no reader can use, where they are read: a `live` endpoint's `usage` holding 2⁶⁴−1,
//! a negative or a fractional count (each provider shape, online and from a cassette whose
//! checksum was recomputed), cassette latencies of −1 and 1e308, and a model profile rate
//! that makes every modeled time infinite. Each gives one located `error:` and exit 2, never a
//! panic, and what was answered before stays recorded.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolbudget::live::cassette::{Cassette, Entry};

use crate::live::{cassette_entries, live_cmd, serve};
use crate::support::{repo, toolbudget};

/// The providers, the usage field each test makes hostile, and its base URL's suffix.
const SHAPES: [(&str, &str, &str); 3] = [
    ("openai-chat", "prompt_tokens", "/v1"),
    ("openai-responses", "input_tokens", "/v1"),
    // Anthropic adds cache writes to the input: the overflowing addition.
    ("anthropic", "cache_creation_input_tokens", ""),
];

/// A plain text answer of `provider` with `field` of its usage set to `value`.
fn answer(provider: &str, field: &str, value: Value) -> Value {
    let mut a = match provider {
        "openai-chat" => json!({"choices": [{"message": {"role": "assistant", "content": "ok"},
            "finish_reason": "stop"}], "usage": {"prompt_tokens": 120, "completion_tokens": 3}}),
        "openai-responses" => json!({"status": "completed", "output": [{"type": "message",
            "content": [{"type": "output_text", "text": "ok"}]}],
            "usage": {"input_tokens": 120, "output_tokens": 3}}),
        _ => json!({"content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 120, "cache_creation_input_tokens": 0, "output_tokens": 3}}),
    };
    a["usage"][field] = value;
    a
}

fn hostile_values() -> [(Value, &'static str); 3] {
    [
        (json!(u64::MAX), "18446744073709551615"),
        (json!(-1), "-1"),
        (json!(1.5), "1.5"),
    ]
}

fn base(url: &str, suffix: &str) -> String {
    format!("{url}{suffix}")
}

fn run(cmd: &mut assert_cmd::Command) -> (Option<i32>, String) {
    let o = cmd.output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn live_refuses_hostile_usage_online_and_keeps_what_was_answered() {
    for (provider, field, suffix) in SHAPES {
        for (value, shown) in hostile_values() {
            // The first answer is sound, the second holds the hostile count.
            let bad = answer(provider, field, value.clone());
            let good = answer(provider, field, json!(5));
            let (url, seen) = serve(5, move |n, _| {
                (200, if n == 0 { good.clone() } else { bad.clone() })
            });
            let dir = tempfile::tempdir().unwrap();
            let cassette = dir.path().join("c.json");
            let (code, stderr) = run(&mut live_cmd(
                provider,
                &base(&url, suffix),
                &cassette,
                &dir.path().join("o"),
            ));
            let what = format!("{provider} {field}={shown}");
            assert_eq!(code, Some(2), "{what}: {stderr}");
            assert!(!stderr.contains("panicked"), "{what}: {stderr}");
            let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
            assert_eq!(
                errors,
                [format!(
                    "error: live: {provider} answered usage.{field} is {shown}, not a token count \
                     (a whole number from 0 to 1000000000000); the answer is not recorded and the \
                     run stops"
                )],
                "{what}: {stderr}"
            );
            assert_eq!(seen.lock().unwrap().len(), 2, "{what}");
            // The sound exchange was saved before the error ended the run; the hostile one not.
            assert_eq!(cassette_entries(&cassette).len(), 1, "{what}");
        }
    }
}

/// Records a sound run of `provider` into `dir/rec.json` and returns its path.
fn record(provider: &str, field: &str, suffix: &str, dir: &Path) -> PathBuf {
    let good = answer(provider, field, json!(5));
    let (url, _) = serve(40, move |_, _| (200, good.clone()));
    let cassette = dir.join("rec.json");
    let (code, stderr) = run(&mut live_cmd(
        provider,
        &base(&url, suffix),
        &cassette,
        &dir.join("rec"),
    ));
    assert_eq!(code, Some(0), "{stderr}");
    cassette
}

/// `cassette` with its first entry (in key order) changed by `edit`, written with its checksum
/// recomputed (a file of its own kind); returns the new file and the changed entry's line.
fn tampered(cassette: &Path, name: &str, edit: impl Fn(&mut Value)) -> (PathBuf, usize) {
    let text = std::fs::read_to_string(cassette).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let mut c = Cassette::default();
    let mut first = None;
    for (k, e) in v["entries"].as_object().unwrap() {
        let mut e = e.clone();
        if first.is_none() {
            edit(&mut e);
            first = Some(k.clone());
        }
        c.insert(k.clone(), serde_json::from_value::<Entry>(e).unwrap());
    }
    let out = cassette.with_file_name(name);
    let bytes = c.to_bytes();
    std::fs::write(&out, &bytes).unwrap();
    let key = format!("\"{}\":", first.unwrap());
    let line = String::from_utf8(bytes)
        .unwrap()
        .lines()
        .position(|l| l.starts_with(&key))
        .unwrap()
        + 1;
    (out, line)
}

/// A change to one cassette entry.
type Edit = Box<dyn Fn(&mut Value)>;

#[test]
fn a_cassette_with_hostile_numbers_is_refused_at_their_line() {
    for (provider, field, suffix) in SHAPES {
        let dir = tempfile::tempdir().unwrap();
        let recorded = record(provider, field, suffix, dir.path());
        let mut cases: Vec<(String, Edit, String)> = Vec::new();
        for (value, shown) in hostile_values() {
            cases.push((
                format!("usage-{shown}.json"),
                Box::new(move |e: &mut Value| e["response"]["usage"][field] = value.clone()),
                format!("usage.{field} is {shown}, not a token count"),
            ));
        }
        for (latency, shown) in [(-1.0, "-1.0"), (1e308, "1e+308")] {
            cases.push((
                format!("latency-{shown}.json"),
                Box::new(move |e: &mut Value| e["latency_ms"] = json!(latency)),
                format!(
                    "latency_ms is {shown}, not a latency (from 0 to 86400000 ms, a day: the \
                     longest --timeout-secs)"
                ),
            ));
        }
        for (name, edit, message) in &cases {
            let (cassette, line) = tampered(&recorded, name, edit);
            for offline in [true, false] {
                let mut cmd = live_cmd(
                    provider,
                    "http://127.0.0.1:9/v1",
                    &cassette,
                    &dir.path().join("o"),
                );
                if offline {
                    cmd.arg("--offline");
                }
                let (code, stderr) = run(&mut cmd);
                let what = format!("{provider} {name} offline={offline}");
                assert_eq!(code, Some(2), "{what}: {stderr}");
                let at = format!("error: {}:{line}:", cassette.display());
                assert!(stderr.starts_with(&at), "{what}: {stderr}");
                assert!(
                    stderr.contains(&format!(": the cassette's answer holds {message}")),
                    "{what}: {stderr}"
                );
                assert_eq!(stderr.lines().count(), 1, "{what}: {stderr}");
            }
        }
    }
}

/// A rate so small that every modeled time is infinite is refused at its line:column, saying
/// the range.
#[test]
fn a_profile_rate_that_makes_times_infinite_is_refused_where_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = repo("fixtures/catalogs/mcp/chat.json");
    let scenario = dir.path().join("s.yaml");
    for (key, value) in [
        ("decode_tokens_per_s", "5e-324"),
        ("prefill_tokens_per_s", "1e-300"),
        ("cached_prefill_tokens_per_s", "0.0000001"),
    ] {
        std::fs::write(
            &scenario,
            format!(
                "name: s\nmodel_overrides:\n  {key}: {value}\ncatalogs: [{{path: {}, server: chat}}]\nconversation:\n  - user: hi\n",
                catalog.display()
            ),
        )
        .unwrap();
        let o = toolbudget()
            .args(["simulate", "--format", "json"])
            .arg(&scenario)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{key}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: {}:3:", scenario.display())),
            "{key}: {stderr}"
        );
        assert!(
            stderr.contains("at least 0.001 (tokens per second)"),
            "{key}: {stderr}"
        );
    }
}

/// A published figure past any real size (1e300 printed 301-digit figures in every table) is
/// refused at its line:column with the bound; a token count past its bound is refused with the
/// number short (its 301 digits made a 439-character message).
#[test]
fn absurd_published_figures_and_counts_are_refused_short_and_located() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = repo("fixtures/catalogs/mcp/db.json");
    let scenario = dir.path().join("s.yaml");
    let head = format!(
        "name: s\nsystem_prompt_tokens: 100\ncatalogs:\n  - {{path: {}, server: db}}\n",
        catalog.display()
    );
    let cases = [
        (
            "deferred: {defer_mcp: true}\nconversation:\n  - {user: hi, reply_tokens: 20}\npublished:\n  - {claim: x, source: y, metric: catalog_tool_tokens, eager_tokens: 1e300, deferred_tokens: 1}\n",
            ":9:",
            "published[0].eager_tokens: 1e300 is too large: at most 1000000000000",
        ),
        (
            "deferred: {defer_mcp: true}\nconversation:\n  - {user: hi, reply_tokens: 20}\npublished:\n  - {claim: x, source: y, eager_range: [1, 1e20]}\n",
            ":9:",
            "published[0].eager_range: 1e20 is too large: at most 1000000000000",
        ),
        (
            "conversation:\n  - user: hi\n    calls:\n      - {tool: mcp__db__run_query, result_tokens: 1e300}\n",
            ":8:",
            "result_tokens: 1e300 is too large: expected a whole number of tokens ≥ 0, at most 1000000000000",
        ),
    ];
    for (tail, at, message) in cases {
        std::fs::write(&scenario, format!("{head}{tail}")).unwrap();
        let o = toolbudget()
            .arg("simulate")
            .arg(&scenario)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{tail}: {stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with(&format!("error: {}{at}", scenario.display())),
            "{first}"
        );
        assert!(first.contains(message), "{first}");
        assert!(first.len() < 300, "{first}");
    }
}

/// A date the calendar does not have is refused, whichever end of the range it names; the
/// last day of each month, leap days included, is a date.
#[test]
fn session_import_refuses_an_impossible_date() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, date, days) in [
        ("--since", "2025-02-30", 28),
        ("--since", "2025-02-29", 28),
        ("--until", "2024-02-30", 29),
        ("--since", "1900-02-29", 28),
        ("--until", "2025-04-31", 30),
    ] {
        let o = toolbudget()
            .args(["session", "import"])
            .arg(dir.path())
            .args([flag, date])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{date}: {stderr}");
        assert!(
            stderr.starts_with(&format!(
                "error: invalid value '{date}' for '{flag} <DATE>': invalid date \"{date}\": {} \
                 has {days} days, so there is no day {}",
                &date[..7],
                &date[8..].trim_start_matches('0')
            )),
            "{date}: {stderr}"
        );
    }
    for date in ["2024-02-29", "2000-02-29", "2025-04-30", "2025-12-31"] {
        assert_eq!(toolbudget::session::parse_date(date).as_deref(), Ok(date));
    }
}
