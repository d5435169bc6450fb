//! The bodies of the fuzz targets, shared with `tests/fuzz_corpus.rs`, which replays the
//! committed corpus through them under plain `cargo test` (no nightly, no libFuzzer).
//! Each takes any bytes and must return without panicking; the asserts are the properties.
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, OnceLock};

use toolbudget::catalog::{Catalog, load_catalog_bytes};
use toolbudget::document::Document;
use toolbudget::eval::parse_queries;
use toolbudget::search::{self, Scorer, ScorerConfig, ScorerKind, SearchRequest};
use toolbudget::simulate::scenario;

/// Any bytes as a catalog file: a catalog or an input error. The first byte picks the file
/// name (and so the syntax) and whether a `SERVER=` override applies; the rest is the file.
pub fn catalog_parse(data: &[u8]) {
    const NAMES: [&str; 4] = ["catalog.json", "catalog.yaml", "catalog", "server.jsonl"];
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let name = NAMES[usize::from(first) % NAMES.len()];
    let server = (first & 0x80 != 0).then_some("srv");
    if let Ok(catalog) = load_catalog_bytes(Path::new(name), rest.to_vec(), server) {
        // A loaded catalog has unique ids: every id finds its own tool.
        for (i, t) in catalog.tools().iter().enumerate() {
            assert_eq!(catalog.index_of(&t.id), Some(i));
        }
    }
}

/// Any bytes as a scenario file: a scenario or an input error. Catalogs it names are not read
/// (that is `catalog_parse`).
pub fn scenario_parse(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let name = if first & 1 == 0 { "s.yaml" } else { "s.json" };
    if let Ok(doc) = Document::parse(Path::new(name), rest.to_vec()) {
        let _ = scenario::parse(&doc);
    }
}

const CATALOG: &str = r#"
builtins:
  - name: Read
    description: Read a file from the local filesystem.
    input_schema: {type: object, properties: {file_path: {type: string, description: absolute path}}}
    search_hint: open view file contents
  - name: Bash
    description: Run a shell command (ls, git, cargo test).
  - name: WebFetch
    description: Fetch a URL and return its text.
servers:
  - name: github
    tools:
      - name: create_issue
        description: Create a new issue in a repository.
        input_schema: {type: object, properties: {title: {type: string}, body: {type: string}}}
      - name: list_pull_requests
        description: List pull requests; filter by state.
  - name: my-server.v2
    tools:
      - name: ask_codex
        description: "Ask Codex a question about code: \\b word-boundary test, ünïcödé."
"#;

struct Fixture {
    catalog: Arc<Catalog>,
    scorers: Vec<Box<dyn Scorer>>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let catalog = Arc::new(
            load_catalog_bytes(Path::new("fixed.yaml"), CATALOG.as_bytes().to_vec(), None)
                .expect("the fixed catalog loads"),
        );
        let scorers = [ScorerKind::Keyword, ScorerKind::Regex, ScorerKind::Bm25]
            .into_iter()
            .map(|k| search::build(k, catalog.clone(), &ScorerConfig::default()).unwrap())
            .collect();
        Fixture { catalog, scorers }
    })
}

/// Any text as a search query (keyword with `select:` and `+term`, regex, bm25) over a
/// small fixed catalog, or any bytes as a labeled-query file: results or input errors; a
/// ranking never holds a tool twice and respects the limit.
pub fn query_parse(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let f = fixture();
    if first & 1 == 0 {
        let Ok(query) = std::str::from_utf8(rest) else {
            return;
        };
        let limit = usize::from(first >> 1) % 25;
        for scorer in &f.scorers {
            let request = SearchRequest::new(query, limit);
            if let Ok(out) = scorer.search(&request) {
                let mut seen = vec![false; f.catalog.len()];
                for h in &out.hits {
                    assert!(!seen[h.tool], "tool {} returned twice", h.tool);
                    seen[h.tool] = true;
                    let _ = scorer.explain_tool(&request, h.tool);
                }
                // Every scorer honours the limit, select: included.
                assert!(out.hits.len() <= limit);
                if let Ok(tree) = scorer.explain(&request) {
                    assert_eq!(tree.children.len(), out.hits.len());
                }
            }
        }
    } else {
        let name = if first & 2 == 0 { "q.jsonl" } else { "q.yaml" };
        let _ = parse_queries(Path::new(name), rest.to_vec(), &f.catalog);
    }
}

/// Any bytes as an `eval --format json` file, then compared — with itself, with a fixed
/// baseline, paired and not — and rendered in every format: an input error or a comparison,
/// never a panic. Comparing a file with itself is never a regression.
pub fn compare_parse(data: &[u8]) {
    use toolbudget::eval::compare::{CompareOptions, EvalFile, compare};
    use toolbudget::eval::result::parse_eval_result;
    use toolbudget::output::Format;
    let Ok(doc) = Document::parse(Path::new("candidate.json"), data.to_vec()) else {
        return;
    };
    let Ok(result) = parse_eval_result(&doc) else {
        return;
    };
    let candidate = EvalFile {
        path: "candidate.json".into(),
        result,
    };
    let baseline = EvalFile {
        path: "baseline.json".into(),
        result: Document::parse(Path::new("baseline.json"), BASELINE.as_bytes().to_vec())
            .and_then(|d| parse_eval_result(&d))
            .expect("the fixed baseline parses"),
    };
    for metric in ["recall@5", "mrr"] {
        for paired_only in [false, true] {
            let mut options = CompareOptions::new(metric, 0.01);
            options.paired_only = paired_only;
            if let Ok(c) = compare(&candidate, &candidate, &options) {
                assert!(c.regressions.is_empty(), "a file regressed against itself");
            }
            for (b, c) in [(&baseline, &candidate), (&candidate, &baseline)] {
                if let Ok(c) = compare(b, c, &options) {
                    for format in Format::all() {
                        let _ = toolbudget::view::compare::render(&c, *format);
                    }
                }
            }
        }
    }
}

const BASELINE: &str = r#"{"tool_count": 3, "query_count": 2, "results": [
  {"scorer": "bm25", "metrics": {"recall@5": 0.5, "mrr": 0.5},
   "per_query": [{"id": "q1", "metrics": {"recall@5": 1.0, "mrr": 1.0}},
                 {"id": "q2", "metrics": {"recall@5": 0.0, "mrr": 0.0}}]}]}"#;

/// Any bytes as a `texts:` file (a JSON object of named texts) and a text to fill: the
/// expanded length is computed without building, and wherever it is small enough to build,
/// the built text has exactly that length; a text naming nothing is left as it is.
pub fn texts_expand(data: &[u8]) {
    use toolbudget::simulate::scenario::texts::Texts;
    // The target text is after the last NUL; the texts file before it.
    let (file, target) = match data.iter().rposition(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"{{a}}{{b}}"[..]),
    };
    let Ok(target) = std::str::from_utf8(target) else {
        return;
    };
    let Ok(doc) = Document::parse(Path::new("texts.json"), file.to_vec()) else {
        return;
    };
    let serde_json::Value::Object(map) = &doc.value else {
        return;
    };
    let texts = Texts::new(map);
    let len = texts.expanded_len(target);
    if !texts.names_any(target) {
        assert_eq!(len, target.len() as u64);
    }
    if len <= 1 << 20 {
        assert_eq!(texts.fill(target).len() as u64, len);
    }
    for v in map.values() {
        if let serde_json::Value::String(s) = v
            && texts.expanded_len(s) <= 1 << 20
        {
            assert_eq!(texts.fill(s).len() as u64, texts.expanded_len(s));
        }
    }
}

/// Any bytes as a calibration file (`simulate --calibration`): an input error or entries
/// whose every value is in range, as `simulate` relies on.
pub fn calibration_parse(data: &[u8]) {
    use toolbudget::simulate::calibration::{CalibrationFile, MAX_SCALE, MAX_SYSTEM_PROMPT_TOKENS};
    let Ok(file) = CalibrationFile::parse(Path::new("calibration.json"), data.to_vec()) else {
        return;
    };
    for c in &file.calibrations {
        assert!((0.0..=MAX_SYSTEM_PROMPT_TOKENS).contains(&c.system_prompt_tokens));
        if let Some(s) = c.subagent_system_prompt_tokens {
            assert!((0.0..=MAX_SYSTEM_PROMPT_TOKENS).contains(&s));
        }
        assert!(c.scale.is_finite() && c.scale.abs() <= MAX_SCALE);
        assert!(!c.applied || c.scale > 0.0);
    }
    // What it writes, it reads back (`calibrate --write` then `--check`).
    let text = serde_json::to_string(&file).expect("serializes");
    let again = CalibrationFile::parse(Path::new("calibration.json"), text.into_bytes());
    assert!(again.is_ok(), "{again:?}");
}

/// An error returned as a value says what went wrong: its message is not empty.
fn assert_message(e: &toolbudget::Error) {
    match e {
        toolbudget::Error::Input(ie) => assert!(!ie.message.trim().is_empty(), "{e:?}"),
        other => assert!(!other.to_string().trim().is_empty(), "{other:?}"),
    }
}

const RUN_QUERIES: &str = r#"{"id": "q1", "query": "read a file", "expected": ["Read"]}
{"id": "q2", "query": "open an issue on github", "expected": ["mcp__github__create_issue"]}
{"id": "q3", "query": "bake a cake", "expected": []}
"#;

struct RunFixture {
    catalog: Arc<Catalog>,
    set: toolbudget::eval::queries::QuerySet,
    siblings: toolbudget::eval::siblings::Siblings,
    options: toolbudget::eval::run::EvalOptions,
}

fn run_fixture() -> &'static RunFixture {
    static F: OnceLock<RunFixture> = OnceLock::new();
    F.get_or_init(|| {
        let catalog = fixture().catalog.clone();
        let set = parse_queries(
            Path::new("q.jsonl"),
            RUN_QUERIES.as_bytes().to_vec(),
            &catalog,
        )
        .expect("the fixed queries load");
        let siblings = toolbudget::eval::siblings::Siblings::find(&catalog, |_| true);
        let mut options =
            toolbudget::eval::run::EvalOptions::new(&[1, 5], None, true).expect("valid cutoffs");
        // No bootstrap: 10,000 resamples an input would leave the fuzzer little time.
        options.resamples = 0;
        options.keep_rankings = true;
        RunFixture {
            catalog,
            set,
            siblings,
            options,
        }
    })
}

/// Any bytes as a run file (`eval --run`): TREC, ranx JSON or JSONL, told apart by their
/// content; the first byte picks the file name, `NAME=`, the tie rule and
/// `--allow-unknown-tools`. An input error with a message, or runs whose rankings over a fixed
/// query set and catalog are sorted, cut to the depth and hold no tool twice; what
/// `eval --write-run` writes of a run reads back to the same rankings.
pub fn run_parse(data: &[u8]) {
    use toolbudget::eval::result::EvalResult;
    use toolbudget::eval::run::evaluate_run;
    use toolbudget::eval::runfile::{RankedTool, TieBreak, parse_runs};
    const NAMES: [&str; 3] = ["run.txt", "run.json", "run.jsonl"];
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let path = Path::new(NAMES[usize::from(first & 3) % NAMES.len()]);
    let name = (first & 0x80 != 0).then_some("mine");
    let ties = if first & 0x40 != 0 {
        TieBreak::Trec
    } else {
        TieBreak::Id
    };
    let allow_unknown = first & 0x20 != 0;
    let runs = match parse_runs(path, rest.to_vec(), name) {
        Ok(runs) => runs,
        Err(e) => return assert_message(&e),
    };
    assert!(!runs.is_empty(), "a run file that reads holds a run");
    if let Some(n) = name {
        assert_eq!((runs.len(), runs[0].name.as_str()), (1, n));
    }
    let f = run_fixture();
    let depth = f.options.depth;
    for run in &runs {
        let rankings = match run.rankings(&f.set, &f.catalog, depth, ties, allow_unknown) {
            Ok((rankings, stats)) => {
                assert!(stats.missing_queries <= f.set.queries.len());
                rankings
            }
            Err(e) => {
                assert_message(&e);
                continue;
            }
        };
        assert_eq!(rankings.len(), f.set.queries.len());
        for ranking in &rankings {
            assert!(ranking.len() <= depth);
            assert!(ranking.iter().all(|(_, s)| s.is_finite()));
            assert!(
                ranking
                    .windows(2)
                    .all(|w| w[0].1.total_cmp(&w[1].1).is_ge()),
                "sorted by score, best first: {ranking:?}"
            );
            for (i, (t, _)) in ranking.iter().enumerate() {
                assert!(
                    !ranking[..i].iter().any(|(u, _)| u == t),
                    "{t:?} ranked twice"
                );
                if let RankedTool::Known(k) = t {
                    assert!(*k < f.catalog.len());
                }
            }
        }
        // `eval --write-run` then `eval --run`: the same rankings, scores and all (ties by id,
        // the rule the writer's order follows; unknown tools kept, as they were written).
        let score = |run| {
            evaluate_run(
                run,
                &f.catalog,
                &f.siblings,
                &f.set,
                &f.options,
                TieBreak::Id,
                true,
            )
        };
        let Ok(scored) = score(run) else {
            continue;
        };
        let written = EvalResult::new(&f.catalog, &f.set, &f.options, &f.siblings, vec![scored]);
        let text = toolbudget::view::eval::run_jsonl(&written);
        let again = parse_runs(Path::new("written.jsonl"), text.clone().into_bytes(), None)
            .unwrap_or_else(|e| panic!("the written run does not read back: {e}\n{text}"));
        assert_eq!(again.len(), 1, "{text}");
        let rescored = score(&again[0])
            .unwrap_or_else(|e| panic!("the written run does not score: {e}\n{text}"));
        assert_eq!(rescored.rankings, written.results[0].rankings, "{text}");
    }
}

const PROVIDERS: [toolbudget::live::Provider; 3] = [
    toolbudget::live::Provider::OpenaiChat,
    toolbudget::live::Provider::Anthropic,
    toolbudget::live::Provider::OpenaiResponses,
];

/// One answer read as `provider`'s shape: a reply whose counts are in range and whose calls
/// are within the bound, or a message; `check_usage` agrees with the reading.
fn read_answer(provider: toolbudget::live::Provider, v: &serde_json::Value) {
    use toolbudget::live::conversation::MAX_USAGE_TOKENS;
    use toolbudget::live::provider::MAX_PARALLEL_CALLS;
    let checked = provider.check_usage(v);
    if let Err((at, why)) = &checked {
        assert!(!at.is_empty() && !why.trim().is_empty(), "{at:?}: {why:?}");
    }
    match provider.parse(v) {
        Ok(reply) => {
            assert!(checked.is_ok(), "{provider}: read despite {checked:?}");
            assert!(reply.calls.len() <= MAX_PARALLEL_CALLS);
            let u = reply.usage;
            // Anthropic's billed input is three counts added up.
            for n in [u.input_tokens, u.output_tokens, u.cached_tokens]
                .into_iter()
                .flatten()
            {
                assert!(n <= 3 * MAX_USAGE_TOKENS, "{provider}: {u:?}");
            }
            if let Some(t) = reply.timings {
                for ms in [t.prompt_ms, t.predicted_ms].into_iter().flatten() {
                    assert!(ms.is_finite() && ms >= 0.0, "{t:?}");
                }
            }
        }
        Err(message) => assert!(!message.trim().is_empty(), "{provider}: empty message"),
    }
}

/// Answers from a script, in order.
struct Scripted(std::sync::Mutex<Vec<toolbudget::counter::api::Reply>>);

impl toolbudget::counter::api::Transport for Scripted {
    fn post(
        &self,
        _url: &str,
        _headers: &[(&str, &str)],
        _body: &str,
    ) -> Result<toolbudget::counter::api::Reply, String> {
        let mut answers = self.0.lock().expect("not poisoned");
        if answers.is_empty() {
            Err("the script has no more answers".into())
        } else {
            Ok(answers.remove(0))
        }
    }
}

/// Any bytes as an endpoint's answer in `live`: read as a JSON answer of every shape (OpenAI
/// Chat Completions, Anthropic Messages, OpenAI Responses), then sent through the endpoint
/// as the body of an HTTP answer, the first byte picking the shape and the exchange (200; a
/// 429 whose `retry-after` header is the body's text, parsed as the transport parses it, then
/// 200; a 5xx then 200; a refusal). An error with a message, or an answer that is recorded,
/// reads back from the cassette written and replays offline as it was.
pub fn live_answer_parse(data: &[u8]) {
    use std::sync::Mutex;
    use std::time::Duration;
    use toolbudget::counter::api::Reply as HttpReply;
    use toolbudget::live::cassette::{Cassette, Load};
    use toolbudget::live::endpoint::{Endpoint, RETRY_AFTER_CEILING, error_message};
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(rest) {
        for provider in PROVIDERS {
            read_answer(provider, &v);
        }
    }
    // The transport reads a body as text.
    let Ok(body) = std::str::from_utf8(rest) else {
        return;
    };
    let _ = error_message(body);
    let provider = PROVIDERS[usize::from(first & 3) % PROVIDERS.len()];
    let reply = |status: u16, retry_after: Option<f64>| HttpReply {
        status,
        retry_after,
        body: body.to_string(),
    };
    let script = match (first >> 2) & 3 {
        0 => vec![reply(200, None)],
        1 => vec![
            // `Ureq::post` reads the header so.
            reply(429, body.trim().parse::<f64>().ok()),
            reply(200, None),
        ],
        2 => vec![
            reply(if first & 0x10 == 0 { 503 } else { 408 }, None),
            reply(200, None),
        ],
        _ => vec![reply(
            [400, 401, 404, 501][usize::from(first >> 4) & 3],
            None,
        )],
    };
    let slept: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let log = slept.clone();
    let endpoint = |cassette: Cassette,
                    offline: bool,
                    script: Vec<HttpReply>,
                    log: Arc<Mutex<Vec<Duration>>>| {
        Endpoint::new(
            provider,
            "http://127.0.0.1:9/v1",
            None,
            offline,
            "cassette.json".into(),
            cassette,
            Box::new(Scripted(Mutex::new(script))),
            Box::new(move |d| log.lock().expect("not poisoned").push(d)),
            Box::new(|| Duration::ZERO),
        )
    };
    let mut ep = endpoint(Cassette::default(), false, script, log);
    let request =
        serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let exchanged = ep.exchange(0, &request, false);
    for d in slept.lock().expect("not poisoned").iter() {
        assert!(*d <= RETRY_AFTER_CEILING, "waited {d:?}");
    }
    let x = match exchanged {
        Ok(x) => x,
        Err(e) => {
            assert!(!e.to_string().trim().is_empty(), "{e:?}");
            assert!(ep.cassette.is_empty(), "a refused answer is not recorded");
            return;
        }
    };
    assert!(!x.replayed);
    assert!(
        provider.check_usage(&x.response).is_ok(),
        "recorded out of range"
    );
    read_answer(provider, &x.response);
    // What was recorded reads back and replays offline, the answer as it was.
    let path = Path::new("cassette.json");
    let bytes = ep
        .cassette
        .to_readable_bytes(path)
        .expect("a 64 KiB answer fits a cassette");
    let (cassette, load) = Cassette::read(path, &bytes).expect("the cassette written reads");
    assert_eq!(load, Load::Loaded(1), "{}", String::from_utf8_lossy(&bytes));
    assert!(cassette.check_numbers(path, &bytes).is_ok());
    let mut offline = endpoint(cassette, true, Vec::new(), Arc::default());
    let replayed = offline
        .exchange(0, &request, false)
        .expect("the recorded answer replays");
    assert!(replayed.replayed);
    assert_eq!(replayed.response, x.response);
}

/// Any bytes as a cassette file (`live --cassette`): read with its format and checksum
/// checks (the first byte's low bit clear), or, with it set, as a map of entries sealed into
/// a cassette first (the checksum right), so the checks behind the checksum see any entry.
/// A cassette loaded, discarded or refused with a message; one loaded is checked for numbers
/// out of range (at a place, with a message) and its answers read; and every cassette writes
/// back to a file that reads to the same bytes.
pub fn cassette_parse(data: &[u8]) {
    use std::collections::BTreeMap;
    use toolbudget::live::cassette::{Cassette, Entry};
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let path = Path::new("cassette.json");
    if first & 1 == 0 {
        return read_cassette(path, rest);
    }
    let Ok(entries) = serde_json::from_slice::<BTreeMap<String, Entry>>(rest) else {
        return;
    };
    let mut sealed = Cassette::default();
    for (k, e) in entries {
        sealed.insert(k, e);
    }
    match sealed.to_readable_bytes(path) {
        Ok(bytes) => read_cassette(path, &bytes),
        Err(e) => assert_message(&e),
    }
}

fn read_cassette(path: &Path, bytes: &[u8]) {
    use toolbudget::live::cassette::{Cassette, Load};
    let (cassette, load) = match Cassette::read(path, bytes) {
        Ok(read) => read,
        Err(e) => return assert_message(&e),
    };
    match &load {
        Load::Loaded(n) => assert!(*n == cassette.len() && !cassette.is_dirty()),
        Load::Discarded(why) | Load::Foreign(why) => {
            assert!(!why.trim().is_empty());
            assert!(cassette.is_empty() && cassette.is_dirty());
        }
        Load::Missing => panic!("bytes read are never a missing cassette"),
    }
    let _ = cassette.holdings();
    let numbers = cassette.check_numbers(path, bytes);
    assert_eq!(numbers.is_ok(), cassette.out_of_range().is_none());
    match numbers {
        Err(e) => assert_message(&e),
        Ok(()) if !cassette.is_empty() => {
            // Every answer is read as `live` reads it: a reply or a message.
            let keys: Vec<String> = serde_json::from_slice::<serde_json::Value>(bytes)
                .ok()
                .and_then(|v| {
                    v.get("entries")?
                        .as_object()
                        .map(|m| m.keys().cloned().collect())
                })
                .unwrap_or_default();
            for k in &keys {
                let e = cassette
                    .get(k)
                    .expect("a loaded cassette holds its file's entries");
                read_answer(e.provider, &e.response);
            }
        }
        Ok(()) => {}
    }
    // Written back, it reads back: the same entries, the same bytes.
    let written = cassette.to_bytes();
    let (again, load) = Cassette::from_bytes(&written);
    assert_eq!(
        load,
        Load::Loaded(cassette.len()),
        "{}",
        String::from_utf8_lossy(&written)
    );
    assert_eq!(again.to_bytes(), written);
}
