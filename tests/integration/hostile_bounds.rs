//! Issue #40's bounds, measured on the binary with inputs generated here (none committed): the
//! memory a JSON input may take (peak RSS of the child, measured by a small python3 parent), readers that stay linear
//! (a time ratio of one run, never a wall-clock bound), outputs refused before they are written
//! when their own readers would refuse them.

#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{bin, repo};

/// How a child ended: exit code, peak resident memory (KiB), stderr, stdout.
pub struct Measured {
    pub code: i32,
    pub peak_kib: u64,
    pub stderr: String,
    pub stdout: String,
}

/// Runs `BIN ARGS...` and writes its `RUSAGE_CHILDREN` peak RSS (KiB) to the file `argv[1]`:
/// the binary is started by this small process, not by the test binary, whose own peak (the
/// other tests' inputs, all in memory) an exec'd child of ours would inherit in `ru_maxrss`.
const RUN_AND_MEASURE: &str = "import resource, subprocess, sys\n\
p = subprocess.run(sys.argv[2:])\n\
open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n\
sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)\n";

/// Runs the binary in `dir` through [`RUN_AND_MEASURE`]: its exit code, its own peak RSS, its
/// output.
pub fn measure(dir: &Path, args: &[&str]) -> Measured {
    measure_with(dir, &[], args)
}

/// [`measure`] with environment variables set for the binary.
pub fn measure_with(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Measured {
    let out = dir.join(".stdout");
    let err = dir.join(".stderr");
    let peak = dir.join(".peak");
    let status = Command::new("python3")
        .current_dir(dir)
        .arg("-c")
        .arg(RUN_AND_MEASURE)
        .arg(&peak)
        .arg(bin())
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .status()
        .expect("python3 starts");
    let peak_kib = std::fs::read_to_string(&peak)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak measured: {status:?}"));
    Measured {
        code: status.code().unwrap_or(-1),
        peak_kib,
        stderr: std::fs::read_to_string(&err).unwrap_or_default(),
        stdout: std::fs::read_to_string(&out).unwrap_or_default(),
    }
}

/// `n` one-key objects as one JSON array's items: the costliest shape per value.
fn tiny_objects(n: u64) -> String {
    let mut s = String::with_capacity(8 * n as usize + 2);
    s.push('[');
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str("{\"a\":1}");
    }
    s.push(']');
    s
}

/// A catalog of one tool whose schema holds `objects` one-key objects: 11 + 2 × objects values.
fn catalog_of_objects(objects: u64) -> String {
    format!(
        "{{\"tools\":[{{\"name\":\"big\",\"description\":\"d\",\"inputSchema\":{{\"type\":\
         \"object\",\"properties\":{{\"x\":{{\"type\":\"array\",\"default\":{}}}}}}}}}]}}",
        tiny_objects(objects)
    )
}

/// The memory a run may take at the JSON value bound: the stated "about 1 GB" of
/// docs/reference/errors-and-limits.md.
const PEAK_BOUND_KIB: u64 = 1024 * 1024;

/// `count` on a catalog exactly at `MAX_JSON_NODES` values, in the costliest shape, stays under
/// 1 GiB; one value more is refused at its line:column before anything is built. The input is
/// generated here. Raising the bound (or a loader copying the schema again) fails this test.
#[test]
fn a_json_catalog_at_the_value_bound_is_counted_within_the_memory_bound() {
    let bound = toolbudget::document::MAX_JSON_NODES;
    let dir = tempfile::tempdir().unwrap();
    let at_bound = (bound - 11) / 2;
    std::fs::write(dir.path().join("at.json"), catalog_of_objects(at_bound)).unwrap();
    let m = measure(dir.path(), &["-q", "count", "-c", "at.json"]);
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert!(m.stdout.contains("big"), "{}", m.stdout);
    assert!(
        m.peak_kib < PEAK_BOUND_KIB,
        "count at {bound} values peaked at {} KiB, over the stated {PEAK_BOUND_KIB} KiB",
        m.peak_kib
    );
    std::fs::write(
        dir.path().join("over.json"),
        catalog_of_objects(at_bound + 1),
    )
    .unwrap();
    let m = measure(dir.path(), &["-q", "count", "-c", "over.json"]);
    assert_eq!(m.code, 2, "{}", m.stderr);
    // The value past the bound: the last object's `1`, after the 118 bytes before the array
    // and 8 bytes per object before it.
    let column = 118 + 8 * at_bound + 6;
    let first = m.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!(
            "error: over.json:1:{column}: tools[0].inputSchema.properties.x.default[{at_bound}].a: \
             the file holds more than 2,000,000 JSON values"
        )),
        "{first}"
    );
    assert_eq!(m.stderr.lines().count(), 1, "{}", m.stderr);
    // Refused from a count over the text: nothing of the tree was built.
    assert!(m.peak_kib < 200 * 1024, "refusing took {} KiB", m.peak_kib);
}

/// The same bound for a scenario: one call `input` of one-key objects, at the bound, replayed
/// by `simulate` within the memory bound (it took 4.3 GB at 15 MB before).
#[test]
fn a_json_scenario_at_the_value_bound_is_simulated_within_the_memory_bound() {
    let bound = toolbudget::document::MAX_JSON_NODES;
    let dir = tempfile::tempdir().unwrap();
    let db = repo("fixtures/catalogs/mcp/db.json");
    let head = format!(
        "{{\"name\":\"big\",\"system_prompt_tokens\":100,\"catalogs\":[{{\"path\":{},\
         \"server\":\"db\"}}],\"deferred\":{{\"defer_mcp\":true}},\"conversation\":[{{\"user\":\
         \"hi\",\"calls\":[{{\"tool\":\"mcp__db__run_query\",\"input\":{{\"x\":",
        serde_json::to_string(&db.display().to_string()).unwrap()
    );
    // Values outside the array: root, name, 100, catalogs, its entry, path, server, deferred,
    // defer_mcp, conversation, the turn, user, calls, the call, tool, input, the array.
    let objects = (bound - 17) / 2;
    let text = format!("{head}{}}}}}]}}]}}", tiny_objects(objects));
    std::fs::write(dir.path().join("s.json"), &text).unwrap();
    let m = measure(
        dir.path(),
        &["-q", "simulate", "s.json", "--format", "json"],
    );
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert!(m.stdout.contains("\"big\""), "{}", &m.stdout[..200]);
    assert!(
        m.peak_kib < PEAK_BOUND_KIB,
        "simulate at {bound} values peaked at {} KiB, over the stated {PEAK_BOUND_KIB} KiB",
        m.peak_kib
    );
    let text = format!("{head}{}}}}}]}}]}}", tiny_objects(objects + 1));
    std::fs::write(dir.path().join("s.json"), &text).unwrap();
    let m = measure(dir.path(), &["-q", "simulate", "s.json"]);
    assert_eq!(m.code, 2, "{}", m.stderr);
    assert!(
        m.stderr.starts_with("error: s.json:1:")
            && m.stderr.contains("conversation[0].calls[0].input.x[")
            && m.stderr.contains("more than 2,000,000 JSON values"),
        "{}",
        m.stderr
    );
}

/// The shortest of five timings of each of `small` and `large`, taken in turn: the machine is
/// shared (other tests run beside this one), and the minimum of interleaved runs is the least
/// disturbed by it.
fn fastest(mut small: impl FnMut(), mut large: impl FnMut()) -> (Duration, Duration) {
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        start.elapsed()
    };
    (0..5).fold((Duration::MAX, Duration::MAX), |(s, l), _| {
        (s.min(time(&mut small)), l.min(time(&mut large)))
    })
}

/// Linear within a generous margin: eight times the entries may take at most twenty times as
/// long (a location searched per entry made it 50 to 90 times). Measured in one run, as a
/// ratio, never against the clock.
fn assert_linear(what: &str, small: Duration, large: Duration) {
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
    assert!(
        ratio < 20.0,
        "{what}: 80k entries took {large:?}, 10k took {small:?}: ×{ratio:.1}, not linear"
    );
}

/// A ranx JSON run and a JSONL run of `n` entries for one query.
fn run_texts(n: usize) -> (String, String) {
    let ids: Vec<String> = (0..n).map(|i| format!("mcp__x__t{i}")).collect();
    let json = format!(
        "{{\"q1\": {{{}}}}}",
        ids.iter()
            .enumerate()
            .map(|(i, id)| format!("\"{id}\": {}.0", n - i))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let jsonl = format!(
        "{{\"id\": \"q1\", \"results\": [{}]}}\n",
        ids.iter()
            .enumerate()
            .map(|(i, id)| format!("{{\"id\": \"{id}\", \"score\": {}.0}}", n - i))
            .collect::<Vec<_>>()
            .join(", ")
    );
    (json, jsonl)
}

/// Run files are read in linear time: 10k vs 80k entries of one query, ranx JSON and JSONL,
/// and every entry still carries its own place (the last one's column is checked).
#[test]
fn run_files_are_read_in_linear_time() {
    use toolbudget::eval::runfile::parse_runs;
    let parse = |name: &str, text: &str| {
        parse_runs(Path::new(name), text.as_bytes().to_vec(), None).expect("the run reads")
    };
    let (json10, jsonl10) = run_texts(10_000);
    let (json80, jsonl80) = run_texts(80_000);
    for (form, small, large) in [
        ("ranx JSON", (&json10, "r.json"), (&json80, "r.json")),
        ("JSONL", (&jsonl10, "r.jsonl"), (&jsonl80, "r.jsonl")),
    ] {
        let (t10, t80) = fastest(
            || drop(parse(small.1, small.0)),
            || drop(parse(large.1, large.0)),
        );
        assert_linear(form, t10, t80);
        let runs = parse(large.1, large.0);
        let entries = &runs[0].queries["q1"].entries;
        assert_eq!(entries.len(), 80_000);
        let last = entries[79_999].position.expect("placed");
        let needle = if form == "JSONL" {
            "\"mcp__x__t79999\", \"score\""
        } else {
            "\"mcp__x__t79999\":"
        };
        let byte = large.0.find(needle).unwrap();
        // ranx places the score (the value at the key), JSONL the tool id.
        let column = if form == "JSONL" {
            byte + 1
        } else {
            byte + needle.len() + 2
        };
        assert_eq!((last.line, last.column), (1, column), "{form}");
    }
}

/// `deferred.depends_on` with 80k keys is read in linear time, each key and dependency placed.
#[test]
fn depends_on_is_read_in_linear_time() {
    use toolbudget::document::Document;
    let scenario = |n: usize| {
        let deps: Vec<String> = (0..n)
            .map(|i| format!("\"mcp__s__t{i}\": [\"mcp__s__t{}\"]", (i + 1) % n))
            .collect();
        format!(
            "{{\"name\": \"dep\", \"catalogs\": [\"cat.json\"], \"deferred\": {{\"defer_mcp\": \
             true, \"depends_on\": {{{}}}}}, \"conversation\": [{{\"user\": \"hi\"}}]}}",
            deps.join(",\n")
        )
    };
    let read = |text: &str| {
        let doc = Document::parse(Path::new("s.json"), text.as_bytes().to_vec()).unwrap();
        toolbudget::simulate::scenario::parse(&doc).expect("the scenario reads")
    };
    let (s10, s80) = (scenario(10_000), scenario(80_000));
    let (t10, t80) = fastest(|| drop(read(&s10)), || drop(read(&s80)));
    assert_linear("depends_on", t10, t80);
    let sc = read(&s80);
    let (key, deps) = &sc.explicit.depends_on[79_999];
    assert_eq!(key.id, "mcp__s__t79999");
    let key_at = key.at.expect("placed");
    let dep_at = deps[0].at.expect("placed");
    // Line 80,000 holds `"mcp__s__t79999": ["mcp__s__t0"]`: the list at 19, its item at 20.
    assert_eq!((key_at.line, key_at.column), (80_000, 19));
    assert_eq!((dep_at.line, dep_at.column), (80_000, 20));
}

/// `catalog generate` refuses, before writing, a catalog that count, search and eval would
/// refuse, and says how many tools fit; that many are written and fit.
#[test]
fn generate_writes_only_a_catalog_its_readers_accept() {
    let dir = tempfile::tempdir().unwrap();
    let m = measure(
        dir.path(),
        &[
            "-q", "catalog", "generate", "--tools", "100000", "--out", "gen.json",
        ],
    );
    assert_eq!(m.code, 2, "{}", m.stderr);
    assert_eq!(
        m.stderr,
        "error: catalog generate --tools 100000: the catalog would be 95.2 MiB (99,821,478 \
         bytes), over the 64 MiB one input may hold, so count, search and eval could not read \
         it; nothing was written. Generate at most about 66556 tools\n"
    );
    assert!(!dir.path().join("gen.json").exists());
    let m = measure(
        dir.path(),
        &[
            "-q", "catalog", "generate", "--tools", "66556", "--out", "gen.json",
        ],
    );
    assert_eq!(m.code, 0, "{}", m.stderr);
    let size = std::fs::metadata(dir.path().join("gen.json"))
        .unwrap()
        .len();
    assert!(size <= toolbudget::input::MAX_INPUT_BYTES, "{size}");
}

/// `eval --write-run` and `eval --per-query --format json --out` of 60,000 long queries would
/// exceed what `eval --run` and `compare` read: refused before either file is written.
#[test]
fn eval_writes_only_outputs_its_readers_accept() {
    let dir = tempfile::tempdir().unwrap();
    let catalog: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo("fixtures/catalogs/mcp/db.json")).unwrap())
            .unwrap();
    let names: Vec<&str> = catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let queries: String = (0..60_000)
        .map(|i| {
            let name = names[i % names.len()];
            format!(
                "{{\"id\": \"query-{i:06}\", \"query\": \"{} for the table orders{}\", \
                 \"expected\": [\"mcp__db__{name}\"]}}\n",
                name.replace('_', " "),
                " please".repeat(100)
            )
        })
        .collect();
    std::fs::write(dir.path().join("q.jsonl"), queries).unwrap();
    let db = repo("fixtures/catalogs/mcp/db.json").display().to_string();
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "-q",
            "eval",
            "-c",
            &db,
            "--queries",
            "q.jsonl",
            "-s",
            "keyword",
        ];
        a.extend_from_slice(&["--per-query", "--format", "json", "--out", "pq.json"]);
        a.extend_from_slice(extra);
        a.iter().map(|s| (*s).to_string()).collect::<Vec<String>>()
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        measure(dir.path(), &a)
    };
    let m = run(args(&["--write-run", "run.jsonl"]));
    assert_eq!(m.code, 2, "{}", m.stderr);
    assert!(
        m.stderr.starts_with("error: --write-run run.jsonl: the output would be ")
            && m.stderr.contains("over the 64 MiB one input may hold, so `eval --run` could not read it back; nothing was written"),
        "{}",
        m.stderr
    );
    let m = run(args(&[]));
    assert_eq!(m.code, 2, "{}", m.stderr);
    assert!(
        m.stderr
            .starts_with("error: --out pq.json: the output would")
            && m.stderr
                .contains("so `compare` could not read it back; nothing was written"),
        "{}",
        m.stderr
    );
    assert!(!dir.path().join("pq.json").exists() && !dir.path().join("run.jsonl").exists());
}

/// An MCP server for `catalog import` whose one `tools/list` page is one tool whose schema
/// holds `argv[1]` one-key objects: 14 values + 2 a object.
const ONE_PAGE_SERVER: &str = r#"import json, sys
n = int(sys.argv[1]); arr = ",".join(['{"a":1}'] * n)
def send(s): sys.stdout.write(s + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m: continue
    if m["method"] == "initialize":
        send(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "big", "version": "1"}}}))
    elif m["method"] == "tools/list":
        send('{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"x":{"type":"array","default":[%s]}}}}]}}' % (json.dumps(m["id"]), arr))
    else:
        send(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {}}))
"#;

/// `catalog import` of one page at `mcp::client::MAX_MESSAGE_VALUES` values, in the costliest
/// shape, stays under the memory bound (one 14 MB page of 1.8 million objects took 2.4 GB);
/// one value more is refused from a count over the raw line, before the MCP library reads it.
#[test]
fn an_mcp_page_at_the_value_bound_is_imported_within_the_memory_bound() {
    let bound = toolbudget::mcp::client::MAX_MESSAGE_VALUES;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("srv.py"), ONE_PAGE_SERVER).unwrap();
    let at = (bound - 14) / 2;
    let stdio = format!("python3 srv.py {at}");
    let m = measure(
        dir.path(),
        &[
            "-q", "catalog", "import", "--stdio", &stdio, "--server", "big", "--out", "at.json",
        ],
    );
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert!(
        m.peak_kib < PEAK_BOUND_KIB,
        "one page at {bound} values peaked at {} KiB, over the stated {PEAK_BOUND_KIB} KiB",
        m.peak_kib
    );
    let stdio = format!("python3 srv.py {}", at + 1);
    let m = measure(
        dir.path(),
        &[
            "-q",
            "catalog",
            "import",
            "--stdio",
            &stdio,
            "--server",
            "big",
            "--out",
            "over.json",
        ],
    );
    assert_eq!(m.code, 2, "{}", m.stderr);
    assert!(
        m.stderr.contains(&format!(
            "the server sent an answer of more than {bound} JSON values"
        )),
        "{}",
        m.stderr
    );
    assert!(!dir.path().join("over.json").exists());
    assert!(m.peak_kib < 200 * 1024, "refusing took {} KiB", m.peak_kib);
}
