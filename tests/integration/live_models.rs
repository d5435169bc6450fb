//! `toolbudget live --model A,B`: several models played in one invocation against the same
//! scripted Chat Completions server and cassette, shown side by side (a row per model and
//! mode, with the repeats and adoption figures); the cassette replayed offline to the same
//! bytes; each model's result the one a run of that model alone gives; a model the cassette
//! lacks named in the offline error with what it holds; `report --live` of the folder.

use std::path::Path;

use serde_json::Value;

use crate::live::{chat_text, scripted_chat, serve};
use crate::support::{files_under, repo, toolbudget};

/// Model `a` searches and calls right every run; model `b` answers without a tool in run 0
/// (seed 1) and plays as `a` in run 1 (seed 2): right in one of two runs, so every turn flips.
fn two_models(n: usize, body: &Value) -> (u16, Value) {
    if body["model"] == "b" && body["seed"] == 1 {
        return (200, chat_text("I cannot help with that."));
    }
    scripted_chat(n, body)
}

fn live(models: &str, url: &str, cassette: &Path, out: &Path, format: &str) -> assert_cmd::Command {
    let mut c = toolbudget();
    c.arg("live")
        .arg(repo("scenarios/live/memory-and-time.yaml"))
        .args([
            "--provider",
            "openai-chat",
            "--model",
            models,
            "--repeat",
            "2",
        ])
        .args(["--base-url", url, "--cassette"])
        .arg(cassette)
        .arg("--out")
        .arg(out)
        .args(["--format", format])
        .env_remove("OPENAI_API_KEY");
    c
}

fn ok(c: &mut assert_cmd::Command) -> Vec<u8> {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// The side by side files of the recorded run: one row per model and mode (accuracy with its
/// interval, the repeats, searches, adoption) in the CSV and `summary.md`, the model first in
/// the turns CSV.
fn side_by_side(files: &std::collections::BTreeMap<String, Vec<u8>>) {
    // One row per model and mode: accuracy with its interval, the repeats, searches, adoption.
    let csv = String::from_utf8(files["data/live-models.csv"].clone()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 4, "{csv}");
    assert!(lines[0].starts_with("model,provider,scenarios,mode,turns,correct,accuracy,"));
    assert!(lines[0].contains(",runs,pass_rate,pass_hat_k,pass_at_k,flip_rate,"));
    assert!(lines[0].ends_with(
        ",select_searches,empty_searches,deferred_calls,found_calls,first_calls,failed_first_calls"
    ));
    assert!(
        lines[3].starts_with("b,openai-chat,live-memory-and-time,eager,4,2,0.5,"),
        "{csv}"
    );
    assert!(
        lines[3].contains(",2,0.5,0.0,1.0,1.0,"),
        "b: pass rate, pass^2, pass@2, flips: {csv}"
    );
    let summary = String::from_utf8(files["summary.md"].clone()).unwrap();
    assert!(summary.starts_with("## Models side by side\n"), "{summary}");
    for row in [
        "| a | openai-chat | eager | 4 | 100.0% [51.0–100.0%] | 2: 100.0% / 100.0% / 0.0% | 0 (0 / 0) | 0 / 0 (0) |",
        "| a | openai-chat | deferred | 4 | 100.0% [51.0–100.0%] | 2: 100.0% / 100.0% / 0.0% | 4 (0 / 0) | 4 / 0 (0) |",
        "| b | openai-chat | eager | 4 | 50.0% [15.0–85.0%] | 2: 50.0% / 0.0% / 100.0% | 0 (0 / 0) | 0 / 0 (0) |",
        "| b | openai-chat | deferred | 4 | 50.0% [15.0–85.0%] | 2: 50.0% / 0.0% / 100.0% | 2 (0 / 0) | 2 / 0 (0) |",
    ] {
        assert!(summary.contains(row), "{row}\n{summary}");
    }
    assert!(summary.contains("\n## Model a\n") && summary.contains("\n## Model b\n"));
    let turns = String::from_utf8(files["turns.csv"].clone()).unwrap();
    assert!(
        turns.starts_with("model,scenario,mode,run,turn,"),
        "{turns}"
    );
    assert_eq!(turns.lines().filter(|l| l.starts_with("b,")).count(), 8);
}

/// `report --live` of a `live --model A,B` folder shows the models side by side.
fn report_of_the_folder(folder: &Path, csv: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    // `report --live` of the folder shows the models side by side.
    let out = dir.path().join("report");
    ok(toolbudget()
        .args(["report", "--quiet", "--format", "md", "--out"])
        .arg(&out)
        .arg("--live")
        .arg(folder));
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    let at = index
        .find("\n## Model in the loop: runs side by side\n")
        .expect("the side by side section");
    assert!(index[at..].contains("| b | openai-chat | deferred | 4 | 50.0% [15.0–85.0%] |"));
    assert_eq!(
        std::fs::read(out.join("data/live-models.csv")).unwrap(),
        csv
    );
}

/// Offline, a model the cassette does not hold: the error names it and what the cassette holds.
fn a_missing_model_is_named(cassette: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let o = live(
        "a,c",
        "http://127.0.0.1:9/v1",
        cassette,
        &dir.path().join("c"),
        "json",
    )
    .arg("--offline")
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "has no answer for this request (model \"c\", run 0) and --offline is set; it holds \
             37 answers: 22 of openai-chat model \"a\" in runs 0-1; 15 of openai-chat model \"b\" \
             in runs 0-1"
        ),
        "{stderr}"
    );
}

#[test]
fn several_models_play_side_by_side_and_replay_offline_byte_for_byte() {
    let (url, seen) = serve(80, two_models);
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("c.json");
    let online = ok(&mut live(
        "a,b",
        &format!("{url}/v1"),
        &cassette,
        &dir.path().join("online"),
        "json",
    ));
    // a: 11 requests a run (eager 2 + 3, deferred 3 + 3); b: 4 in run 0, 11 in run 1.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 22 + 15);
    let r: Value = serde_json::from_slice(&online).unwrap();
    let models = r["models"].as_array().unwrap();
    let names: Vec<&str> = models
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(models[0]["deferred"]["correct"], 4);
    assert_eq!(models[1]["deferred"]["correct"], 2);
    assert_eq!(models[1]["repeats"]["deferred"]["flipped"], 2);
    // Adoption by the shared definition, per model: every deferred call found by a search.
    assert_eq!(models[0]["deferred"]["adoption"]["found_calls"], 4);
    assert_eq!(models[1]["deferred"]["adoption"]["found_calls"], 2);
    assert_eq!(models[1]["deferred"]["adoption"]["first_calls"], 0);

    // The cassette holds both models' answers; offline, the same bytes come back.
    let entries = crate::live::cassette_entries(&cassette);
    let of = |m: &str| {
        entries
            .iter()
            .filter(|e| e["request"]["model"] == m)
            .count()
    };
    assert_eq!((of("a"), of("b")), (22, 15));
    let offline = ok(live(
        "a,b",
        "http://127.0.0.1:9/v1",
        &cassette,
        &dir.path().join("offline"),
        "json",
    )
    .arg("--offline"));
    assert_eq!(offline, online, "the offline replay differs");
    let files = files_under(&dir.path().join("online"));
    assert_eq!(files, files_under(&dir.path().join("offline")));
    let paths: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(
        paths,
        [
            ".toolbudget-output",
            "charts/live-models.svg",
            "data/live-models.csv",
            "live.json",
            "requests.csv",
            "searches.csv",
            "summary.md",
            "turns.csv"
        ]
    );
    assert_eq!(
        files["live.json"], online,
        "live.json is what --format json prints"
    );

    side_by_side(&files);

    // Each model's result is the one a run of that model alone gives (from the same cassette).
    let alone = ok(live(
        "b",
        "http://127.0.0.1:9/v1",
        &cassette,
        &dir.path().join("b"),
        "json",
    )
    .arg("--offline"));
    assert_eq!(serde_json::from_slice::<Value>(&alone).unwrap(), models[1]);
    // The terminal table ends with the models side by side.
    let table = ok(live(
        "a,b",
        "http://127.0.0.1:9/v1",
        &cassette,
        &dir.path().join("t"),
        "table",
    )
    .arg("--offline"));
    let table = String::from_utf8(table).unwrap();
    let side = &table[table
        .find("== models side by side ==\n")
        .expect("the side by side table")..];
    assert_eq!(
        side.lines()
            .filter(|l| l.starts_with("a ") || l.starts_with("b "))
            .count(),
        4,
        "{side}"
    );

    a_missing_model_is_named(&cassette);

    report_of_the_folder(&dir.path().join("online"), &files["data/live-models.csv"]);
}

/// A model named twice, or an empty name in the list, is refused before anything is sent.
#[test]
fn a_model_list_names_each_model_once() {
    let dir = tempfile::tempdir().unwrap();
    for (models, message) in [
        ("a,a", "--model \"a,a\": \"a\" is named twice"),
        ("a,", "--model \"a,\": an empty model name in the list"),
    ] {
        let o = live(
            models,
            "http://127.0.0.1:9/v1",
            &dir.path().join("c.json"),
            &dir.path().join("o"),
            "json",
        )
        .output()
        .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(message), "{stderr}");
        assert!(!dir.path().join("c.json").exists());
    }
}
