//! Bring your own search, end to end through the binary: the reference adapters of
//! `examples/` as scorers, every way an adapter can break (`tests/external_fakes/adapter.py`),
//! no child outliving toolbudget, run files in each form, and `compare` refusing files that
//! were relabeled or edited.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{bin, env_flag, repo};

const QUERIES: &str = "fixtures/queries/fixtures.jsonl";

/// The fixture catalogs, as `-c` arguments.
fn catalogs() -> Vec<String> {
    let mut args = vec![
        "-c".to_string(),
        "fixtures/catalogs/builtins.yaml".to_string(),
    ];
    let mut mcp: Vec<PathBuf> = std::fs::read_dir(repo("fixtures/catalogs/mcp"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    mcp.sort();
    for p in mcp {
        args.push("-c".into());
        args.push(format!(
            "fixtures/catalogs/mcp/{}",
            p.file_name().unwrap().to_string_lossy()
        ));
    }
    args
}

fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(repo(""))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn eval(extra: &[&str]) -> Output {
    let cats = catalogs();
    let mut args: Vec<&str> = vec!["--quiet", "eval"];
    args.extend(cats.iter().map(String::as_str));
    args.extend(["--queries", QUERIES]);
    args.extend(extra);
    run(&args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn fake(mode: &str) -> String {
    format!("exec:python3 tests/external_fakes/adapter.py {mode}")
}

/// Whether `node` runs here; CI (TOOLBUDGET_REQUIRE_ADAPTERS=1) fails instead of skipping.
fn node() -> bool {
    let ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok || !env_flag("TOOLBUDGET_REQUIRE_ADAPTERS"),
        "TOOLBUDGET_REQUIRE_ADAPTERS is set but node does not run"
    );
    ok
}

#[test]
fn the_reference_adapters_are_scorers_named_by_what_they_report() {
    let mut scorers = vec![
        "-s",
        "bm25",
        "-s",
        "exec:python3 examples/python/bm25_adapter.py",
    ];
    let has_node = node();
    if has_node {
        scorers.extend(["-s", "exec:node examples/node/tfidf_adapter.mjs"]);
    } else {
        crate::support::skip("node adapter", "node is not installed");
    }
    scorers.extend(["--format", "json"]);
    let v = json(&eval(&scorers));
    let results = v["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["scorer"].as_str().unwrap())
        .collect();
    let mut want = vec!["bm25", "exec:py-bm25"];
    if has_node {
        want.push("exec:node-tfidf");
    }
    assert_eq!(names, want);
    for r in &results[1..] {
        assert_eq!(r["settings"]["version"], "1.0.0");
        assert_eq!(r["settings"]["protocol"], "1");
        // Real scorers: most fixture queries find their tool in the top 5.
        let recall = r["metrics"]["recall@5"].as_f64().unwrap();
        assert!(recall > 0.7, "{}: recall@5 {recall}", r["scorer"]);
        // The process said how long it took; the round trip is at least that.
        let own = r["reported_latency_us"]["p50"].as_f64().unwrap();
        let trip = r["latency_us"]["p50"].as_f64().unwrap();
        assert!(own > 0.0 && own <= trip, "{own} vs {trip}");
    }
    // The table names the scorer and the version it reported.
    let table = eval(&["-s", "exec:python3 examples/python/bm25_adapter.py"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("exec:py-bm25: recall@5"), "{text}");
    assert!(text.contains("name=py-bm25 version=1.0.0"), "{text}");
}

#[test]
fn search_answers_one_query_through_an_adapter() {
    let o = run(&[
        "search",
        "-c",
        "fixtures/catalogs/builtins.yaml",
        "--scorer",
        "exec:python3 examples/python/bm25_adapter.py",
        "--format",
        "json",
        "read the contents of a file",
    ]);
    let v = json(&o);
    assert_eq!(v["scorer"], "exec:py-bm25");
    let ids: Vec<&str> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 5);
    assert!(ids.contains(&"Read"), "{ids:?}");
    assert_eq!(v["settings"]["version"], "1.0.0");
}

/// Each way an adapter breaks is exit 2 with one `error:` naming the command and, once it
/// searches, the query.
#[test]
fn every_broken_adapter_is_a_clear_error() {
    let cases: [(&str, &[&str], &str); 10] = [
        (
            "crash",
            &[],
            "it exited with status 3 before answering; its stderr ended with: fake adapter: out of cheese",
        ),
        (
            "garbage",
            &[],
            "expected `results`, got \"this is not json\" (not JSON)",
        ),
        (
            "unknown",
            &[],
            "tool \"mcp__nowhere__nothing\" is not in the catalog",
        ),
        ("twice", &[], "is listed twice"),
        ("wrong-id", &[], "the answer is for query \"someone-else\""),
        ("error", &[], "it answered with an error: index not warm"),
        ("no-ready", &[], "expected `ready` after the index"),
        ("old", &[], "it speaks protocol 2; toolbudget speaks 1"),
        (
            "hang",
            &["--scorer-timeout", "0.5"],
            "no answer within 0.5 s (the timeout is 0.5 s; raise it with --scorer-timeout)",
        ),
        (
            "slow-start",
            &["--scorer-start-timeout", "0.5"],
            "`ready`: no answer within 0.5 s (the start timeout is 0.5 s",
        ),
    ];
    for (mode, flags, want) in cases {
        let spec = fake(mode);
        let mut args = vec!["-s", spec.as_str()];
        args.extend(flags);
        let o = eval(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{mode}: {err}");
        assert!(
            err.starts_with("error: exec:python3 tests/external_fakes/adapter.py"),
            "{mode}: {err}"
        );
        assert!(err.contains(want), "{mode}: {err}");
        if !["no-ready", "old", "slow-start"].contains(&mode) {
            // The first labeled query is named.
            assert!(err.contains("query \"fx-001\""), "{mode}: {err}");
            assert!(err.contains(&format!("(fake-{mode} 0.1)")), "{mode}: {err}");
        }
        assert_eq!(err.lines().count(), 1, "{mode}: {err}");
    }
    let o = eval(&["-s", "exec:no-such-program-here --x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot start it"), "{}", stderr(&o));
    let o = eval(&["-s", "exec:"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("exec: needs a command line"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
}

/// A process is gone: exited and reaped, or a zombie nobody is left to reap (this machine's
/// init does not reap orphans).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

fn wait_for_pid(file: &Path) -> u32 {
    for _ in 0..600 {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the adapter never wrote {}", file.display());
}

#[cfg(unix)]
#[test]
fn no_child_outlives_toolbudget_after_a_timeout_or_an_interrupt() {
    let tmp = tempfile::tempdir().unwrap();
    // A timeout: the adapter and the grandchild it started are killed with their group.
    let pid_file = tmp.path().join("timeout.pid");
    let spec = format!("{} {}", fake("spawns"), pid_file.display());
    let o = eval(&["-s", &spec, "--scorer-timeout", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let grandchild = wait_for_pid(&pid_file);
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        gone(grandchild),
        "the adapter's child {grandchild} outlived toolbudget"
    );

    // SIGINT while waiting for an answer.
    let pid_file = tmp.path().join("sigint.pid");
    let spec = format!("{} {}", fake("spawns"), pid_file.display());
    let cats = catalogs();
    let mut args: Vec<&str> = vec!["--quiet", "eval"];
    args.extend(cats.iter().map(String::as_str));
    args.extend(["--queries", QUERIES, "-s", &spec]);
    let child = Command::new(bin())
        .current_dir(repo(""))
        .args(&args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let grandchild = wait_for_pid(&pid_file);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        gone(grandchild),
        "the adapter's child {grandchild} outlived an interrupt"
    );
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn run_files_in_every_form_score_like_the_scorer_they_came_from() {
    let tmp = tempfile::tempdir().unwrap();
    let jsonl = tmp.path().join("all.jsonl").display().to_string();
    let direct = json(&eval(&[
        "-s",
        "bm25",
        "-s",
        "keyword",
        "--write-run",
        &jsonl,
        "--format",
        "json",
    ]));
    // JSONL as written: both scorers back, same metrics.
    let back = json(&eval(&["--run", &jsonl, "--format", "json"]));
    for (a, b) in direct["results"]
        .as_array()
        .unwrap()
        .iter()
        .zip(back["results"].as_array().unwrap())
    {
        assert_eq!(a["scorer"], b["scorer"]);
        assert_eq!(a["metrics"], b["metrics"]);
        assert_eq!(b["run"]["format"], "jsonl");
        assert_eq!(b["run"]["missing_queries"], 0);
    }
    // The bm25 lines as a TREC run and as ranx JSON (scores unrounded, so no ties move).
    let mut trec = String::new();
    let mut ranx = serde_json::Map::new();
    for line in std::fs::read_to_string(&jsonl).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["scorer"] != "bm25" {
            continue;
        }
        let qid = v["id"].as_str().unwrap();
        let mut scores = serde_json::Map::new();
        for (i, r) in v["results"].as_array().unwrap().iter().enumerate() {
            trec.push_str(&format!(
                "{qid} Q0 {} {} {} mine\n",
                r["id"].as_str().unwrap(),
                i + 1,
                r["score"]
            ));
            scores.insert(r["id"].as_str().unwrap().into(), r["score"].clone());
        }
        ranx.insert(qid.into(), Value::Object(scores));
    }
    let t = write(tmp.path(), "bm25.trec", &trec);
    let j = write(tmp.path(), "ranx.json", &Value::Object(ranx).to_string());
    let v = json(&eval(&[
        "--run",
        &t,
        "--run",
        &format!("other={j}"),
        "--format",
        "json",
    ]));
    let bm25 = &direct["results"][0]["metrics"];
    assert_eq!(v["results"][0]["scorer"], "mine");
    assert_eq!(v["results"][0]["run"]["format"], "trec");
    assert_eq!(&v["results"][0]["metrics"], bm25);
    assert_eq!(v["results"][1]["scorer"], "other");
    assert_eq!(&v["results"][1]["metrics"], bm25);

    // A run without some queries: they score 0, and the output says how many.
    let half: String = trec
        .lines()
        .filter(|l| !l.starts_with("fx-00"))
        .map(|l| format!("{l}\n"))
        .collect();
    let h = write(tmp.path(), "half.trec", &half);
    let o = eval(&["--run", &h]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("9 queries without a ranking (scored 0)"),
        "{text}"
    );
}

#[test]
fn bad_run_files_are_located_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "extra.trec",
            "fx-001 Q0 Read 1 2 t\nnope Q0 Read 1 2 t\n",
            "extra.trec:2:1: the run ranks query \"nope\"",
        ),
        (
            "unknown.trec",
            "fx-001 Q0 Read 1 2 t\nfx-001 Q0 Nope 2 1 t\n",
            "unknown.trec:2:11: query \"fx-001\" ranks \"Nope\", which is not a tool of the catalog",
        ),
        (
            "twice.trec",
            "fx-001 Q0 Read 1 2 t\nfx-001 Q0 Read 2 1 t\n",
            "twice.trec:2:11: query \"fx-001\" lists tool \"Read\" twice",
        ),
        (
            "nan.trec",
            "fx-001 Q0 Read 1 NaN t\n",
            "nan.trec:1:18: tool \"Read\" has the score NaN",
        ),
        (
            "nan.json",
            "{\"fx-001\": {\"Read\": NaN}}",
            "NaN or infinite",
        ),
        (
            "odd.txt",
            "fx-001 Read\n",
            "odd.txt:1:1: expected a TREC run line",
        ),
    ];
    for (name, text, want) in cases {
        let p = write(tmp.path(), name, text);
        let o = eval(&["--run", &p]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
    }
    // Unknown tools may count as not relevant instead, keeping their rank.
    let p = write(tmp.path(), "u.trec", "fx-001 Q0 Nope 1 2 t\n");
    let v = json(&eval(&[
        "--run",
        &p,
        "--allow-unknown-tools",
        "--per-query",
        "--format",
        "json",
    ]));
    assert_eq!(v["results"][0]["run"]["unknown_tools"], 1);
    assert_eq!(v["results"][0]["per_query"][0]["top"][0], "Nope");
}

/// `compare` recomputes what it checks: a relabeled query set, reversed rankings and hand-edited
/// aggregates are refused (exit 2), where they once passed as "0 worse, 0 better".
#[test]
fn compare_refuses_relabeled_reversed_and_edited_files() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base.json");
    let o = eval(&[
        "-s",
        "exec:python3 examples/python/bm25_adapter.py",
        "-s",
        "bm25",
        "--per-query",
        "--format",
        "json",
        "--out",
        base.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b = base.display().to_string();
    let ok = run(&["compare", &b, &b]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(
        text.contains("exec:py-bm25: 95 queries paired; 0 worse, 0 better"),
        "{text}"
    );

    let original: Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    let edit = |name: &str, f: &dyn Fn(&mut Value)| -> String {
        let mut v = original.clone();
        f(&mut v);
        write(tmp.path(), name, &v.to_string())
    };
    // The same ids with their labels shuffled (rotated by one), every row consistent with
    // itself and every aggregate unchanged: only pairing the queries tells.
    let shuffled = edit("shuffled.json", &|v| {
        for r in v["results"].as_array_mut().unwrap() {
            let rows = r["per_query"].as_array_mut().unwrap();
            let moved: Vec<Value> = rows.clone();
            for (i, q) in rows.iter_mut().enumerate() {
                let from = &moved[(i + 1) % moved.len()];
                for key in ["expected", "ranks", "top", "scores", "metrics", "class"] {
                    q[key] = from[key].clone();
                }
            }
        }
    });
    // Every stored ranking reversed.
    let reversed = edit("reversed.json", &|v| {
        for r in v["results"].as_array_mut().unwrap() {
            for q in r["per_query"].as_array_mut().unwrap() {
                q["top"].as_array_mut().unwrap().reverse();
            }
        }
    });
    // A metric raised by hand.
    let inflated = edit("inflated.json", &|v| {
        v["results"][0]["metrics"]["recall@5"] = Value::from(0.99);
    });
    let absurd = edit("absurd.json", &|v| {
        v["results"][0]["metrics"]["recall@5"] = Value::from(5.0);
    });
    let empty = edit("empty.json", &|v| v["results"] = Value::Array(vec![]));
    for (file, want) in [
        (&shuffled, "differ in their expected tools"),
        (&reversed, "stored top results"),
        // 0.99 above recall@10 is refused as impossible before the rows are recomputed.
        (&inflated, "cannot fall as k rises"),
        (&absurd, "recall@5 is 5,"),
        (&empty, "holds no results"),
    ] {
        for (x, y) in [(&b, file), (file, &b)] {
            let o = run(&["compare", x, y]);
            assert_eq!(o.status.code(), Some(2), "{file}: {}", stderr(&o));
            assert!(stderr(&o).contains(want), "{file}: {}", stderr(&o));
        }
    }
}

/// The MCP path, through the example server (PyPI `mcp`, installed for the live MCP tests).
#[test]
fn an_mcp_servers_search_tool_is_a_scorer() {
    let python = repo(".mcp-servers/venv/bin/python");
    let has_mcp = python.is_file()
        && Command::new(&python)
            .args(["-c", "import mcp"])
            .status()
            .is_ok_and(|s| s.success());
    if !has_mcp {
        assert!(
            !env_flag("TOOLBUDGET_REQUIRE_LIVE_MCP"),
            "TOOLBUDGET_REQUIRE_LIVE_MCP is set but {} cannot import mcp",
            python.display()
        );
        return crate::support::skip(
            "an_mcp_servers_search_tool_is_a_scorer",
            "no PyPI mcp in .mcp-servers/venv (bash scripts/install-mcp-servers.sh)",
        );
    }
    let mut mcp_files: Vec<String> = catalogs()
        .into_iter()
        .filter(|a| a.ends_with(".json"))
        .collect();
    mcp_files.sort();
    let spec = format!(
        "mcp:{} examples/mcp-search-server/server.py {}",
        python.display(),
        mcp_files.join(" ")
    );
    let v = json(&eval(&["-s", &spec, "--format", "json"]));
    let r = &v["results"][0];
    assert_eq!(r["scorer"], "mcp:tiny-tool-search");
    assert_eq!(r["settings"]["tool"], "search_tools");
    assert_eq!(r["settings"]["query_arg"], "query");
    assert_eq!(r["settings"]["limit_arg"], "limit");
    // The server indexes only the MCP tools: it finds the queries that expect one of them.
    let recall = r["metrics"]["recall@10"].as_f64().unwrap();
    assert!(recall > 0.3 && recall < 1.0, "recall@10 {recall}");
    // The simulator's deferred searches through the server's tool find each called tool.
    let v = simulate(&["scenarios/builtins-plus-mcp.yaml", "--scorer", &spec]);
    let sc = &v["scenarios"][0];
    assert_eq!(sc["settings"]["scorer"], "mcp:tiny-tool-search");
    assert_eq!(sc["deferred"]["searches"], 3, "{}", sc["deferred"]);
    assert_eq!(sc["deferred"]["misses"], 0, "{}", sc["deferred"]);
    // Naming a tool it lacks is an error that lists its tools.
    let o = eval(&["-s", &spec, "--mcp-tool", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .contains("it has no tool \"nope\" (--mcp-tool); its tools: search_tools, call_tool"),
        "{}",
        stderr(&o)
    );
}

/// A scenario over the fixture catalogs, with `deferred.scorer` as given.
fn scenario_with_scorer(dir: &Path, scorer: &str) -> String {
    let shipped = std::fs::read_to_string(repo("scenarios/builtins-plus-mcp.yaml")).unwrap();
    let fixtures = repo("fixtures").display().to_string();
    let text = shipped
        .replace("../fixtures", &fixtures)
        .replace("  scorer: keyword\n", &format!("  scorer: {scorer}\n"));
    assert!(text.contains(scorer), "the shipped scenario changed shape");
    write(dir, "scenario.yaml", &text)
}

fn simulate(args: &[&str]) -> Value {
    let mut all = vec!["--quiet", "simulate"];
    all.extend(args);
    all.extend(["--format", "json"]);
    json(&run(&all))
}

/// The deferred search runs through the user's scorer, from the command line or the scenario
/// (whose command runs in the scenario's folder), and the output names it.
#[test]
fn simulate_searches_through_the_users_scorer() {
    let shipped = "scenarios/builtins-plus-mcp.yaml";
    let builtin = simulate(&[shipped]);
    let mut adapters = vec![(
        "exec:python3 examples/python/bm25_adapter.py",
        "exec:py-bm25",
    )];
    if node() {
        adapters.push((
            "exec:node examples/node/tfidf_adapter.mjs",
            "exec:node-tfidf",
        ));
    }
    for (spec, name) in adapters {
        let v = simulate(&[shipped, "--scorer", spec]);
        let sc = &v["scenarios"][0];
        assert_eq!(sc["settings"]["scorer"], name, "{spec}");
        assert_eq!(sc["settings"]["scorer_settings"]["version"], "1.0.0");
        // Eager does not search: the same request whatever the scorer.
        assert_eq!(sc["eager"], builtin["scenarios"][0]["eager"], "{spec}");
        // Each of the three calls found its tool through the adapter's search.
        assert_eq!(sc["deferred"]["searches"], 3, "{spec}: {}", sc["deferred"]);
        assert_eq!(sc["deferred"]["misses"], 0, "{spec}: {}", sc["deferred"]);
    }
    // In the scenario itself, as a mapping; the command runs beside the scenario file.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo("examples/python/bm25_adapter.py"),
        dir.path().join("adapter.py"),
    )
    .unwrap();
    let file = scenario_with_scorer(dir.path(), "{exec: \"python3 adapter.py\"}");
    let v = simulate(&[&file]);
    assert_eq!(v["scenarios"][0]["settings"]["scorer"], "exec:py-bm25");
    // A scenario naming a command that fails is the command's error, located at the scenario.
    let bad = scenario_with_scorer(dir.path(), "{exec: \"python3 missing.py\"}");
    let o = run(&["--quiet", "simulate", &bad]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("python3 missing.py"), "{}", stderr(&o));
    let bad = scenario_with_scorer(dir.path(), "{exec: \"\"}");
    let o = run(&["--quiet", "simulate", &bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("exec: needs a command line"),
        "{}",
        stderr(&o)
    );
}

/// Two evaluations of an adapter compare by its name; a candidate without it fails the gate.
#[test]
fn compare_gates_an_adapter_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str, scorers: &[&str]| {
        let path = dir.path().join(name).display().to_string();
        let mut args: Vec<&str> = scorers.to_vec();
        args.extend(["--format", "json", "--per-query", "--out", &path]);
        let o = eval(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        path
    };
    let py = ["-s", "exec:python3 examples/python/bm25_adapter.py"];
    let base = out("base.json", &py);
    let cand = out("cand.json", &py);
    let o = run(&["--quiet", "compare", &base, &cand]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("exec:py-bm25"), "{text}");
    let other = out("other.json", &["-s", "bm25"]);
    let o = run(&["--quiet", "compare", &base, &other]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("exec:py-bm25"), "{}", stderr(&o));
}

/// `report --scorer` adds the adapter to every evaluation; `--scenario-scorer` drives the
/// scenarios' deferred search through it.
#[test]
fn report_evaluates_and_simulates_with_the_users_scorer() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    scenario_with_scorer(&scenarios, "keyword");
    let out = dir.path().join("report");
    let spec = "exec:python3 examples/python/bm25_adapter.py";
    let o = run(&[
        "--quiet",
        "report",
        "--scenarios",
        &scenarios.display().to_string(),
        "--scorer",
        spec,
        "--scenario-scorer",
        spec,
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    assert!(index.contains("exec:py-bm25"), "{index}");
    let evals = std::fs::read_to_string(out.join("data/eval.csv")).unwrap();
    let rows: Vec<&str> = evals
        .lines()
        .filter(|l| l.contains("exec:py-bm25"))
        .collect();
    assert!(!rows.is_empty(), "{evals}");
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("data/report.json")).unwrap()).unwrap();
    let sc = &report["scenarios"][0];
    assert_eq!(sc["settings"]["scorer"], "exec:py-bm25");
    assert_eq!(sc["deferred"]["searches"], 3);
    assert_eq!(sc["deferred"]["misses"], 0);
    assert!(
        index.contains("scorer `exec:py-bm25`"),
        "the scenario's settings name the adapter"
    );
}
