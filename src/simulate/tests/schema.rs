//! `scenarios/schema.json` against the structs the loader reads, and the shipped scenarios
//! loaded and run over the fixtures.

use super::*;

fn shipped_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

fn shipped_scenarios() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(shipped_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    v.sort();
    v
}

fn schema_json() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(shipped_dir().join("schema.json")).unwrap())
        .unwrap()
}

fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no properties in {v}"))
        .keys()
        .cloned()
        .collect();
    k.sort();
    k
}

fn values(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("no enum in {v}"))
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    k.sort();
    k
}

/// Every object of `scenarios/schema.json` against the struct that reads it: adding a key to
/// one and not the other fails here, naming both lists.
#[test]
fn schema_lists_exactly_the_keys_the_loader_accepts() {
    use super::profile::Override;
    use super::scenario::{
        Failures, Published, RawCall, RawCatalogEntry, RawDeferred, RawEvent, RawScenario,
        RawSubagent, RawTurn, Sizes,
    };
    use crate::names::{of, sorted};

    let schema = schema_json();
    let p = &schema["properties"];
    let d = &schema["$defs"];
    let objects: [(&str, &serde_json::Value, Option<&[&str]>); 12] = [
        ("texts", &p["texts"], of::<super::scenario::RawTexts>()),
        ("scenario", &schema, of::<RawScenario>()),
        ("deferred", &p["deferred"], of::<RawDeferred>()),
        ("sizes", &p["sizes"], of::<Sizes>()),
        ("failures", &p["failures"], of::<Failures>()),
        ("model_overrides", &p["model_overrides"], of::<Override>()),
        ("published", &p["published"]["items"], of::<Published>()),
        (
            "catalog entry",
            &p["catalogs"]["items"]["oneOf"][1],
            of::<RawCatalogEntry>(),
        ),
        ("turn", &d["turn"], of::<RawTurn>()),
        ("call", &d["call"], of::<RawCall>()),
        ("event", &d["event"], of::<RawEvent>()),
        (
            "subagent",
            &d["turn"]["properties"]["subagent"],
            of::<RawSubagent>(),
        ),
    ];
    for (what, object, names) in objects {
        let names = names.unwrap_or_else(|| panic!("{what}: not a derived type"));
        assert_eq!(
            keys(object),
            sorted(names),
            "{what}: schema.json vs the reader"
        );
    }
}

/// Every `enum` of `scenarios/schema.json` against the enum that parses it.
#[test]
fn schema_lists_exactly_the_values_the_loader_accepts() {
    use super::scenario::{Discovery, EventKind, ListStyle, Listing, RetryStep, Reveal};
    use crate::names::{of, sorted};
    use crate::search::ScorerKind;

    let schema = schema_json();
    let p = &schema["properties"];
    let d = &schema["$defs"];
    let dp = &p["deferred"]["properties"];
    let enums: [(&str, &serde_json::Value, Option<&[&str]>); 12] = [
        ("client", &p["client"], of::<super::client::ClientName>()),
        ("scorer", &dp["scorer"]["oneOf"][0], of::<ScorerKind>()),
        ("discovery", &dp["discovery"], of::<Discovery>()),
        ("listing", &dp["listing"], of::<Listing>()),
        ("list_style", &dp["list_style"], of::<ListStyle>()),
        ("reveal", &dp["reveal"], of::<Reveal>()),
        ("retry", &dp["retry"]["items"], of::<RetryStep>()),
        (
            "event",
            &d["event"]["properties"]["event"],
            of::<EventKind>(),
        ),
        ("tokenizer", &p["tokenizer"], of::<Tokenizer>()),
        ("render", &p["render"], of::<Render>()),
        (
            "counter",
            &p["counter"],
            of::<crate::counter::CounterKind>(),
        ),
        (
            "tool_choice",
            &p["tool_choice"],
            of::<crate::counter::ToolChoice>(),
        ),
    ];
    for (what, e, names) in enums {
        let names = names.unwrap_or_else(|| panic!("{what}: not a derived enum"));
        assert_eq!(
            values(e),
            sorted(names),
            "{what}: schema.json vs the reader"
        );
    }
    let pp = &p["published"]["items"]["properties"];
    assert_eq!(
        values(&pp["metric"]),
        sorted(of::<super::published::Quantity>().unwrap())
    );
    assert_eq!(
        keys(&pp["variant"]),
        sorted(of::<super::published::Variant>().unwrap())
    );
    for side in ["eager_parts", "deferred_parts"] {
        assert_eq!(
            keys(&d[side.split('_').next_back().unwrap()]),
            sorted(of::<super::published::Stated>().unwrap()),
            "{side}"
        );
    }
    let models: Vec<String> = p["model"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, profile::names());
}

/// The schema test above would pass with both sides empty; this one proves it reads keys.
#[test]
fn the_schema_test_sees_a_key_missing_from_the_schema() {
    use super::scenario::RawTurn;
    let names = crate::names::of::<RawTurn>().unwrap();
    assert!(
        names.contains(&"repeat") && names.contains(&"subagent"),
        "{names:?}"
    );
}

#[test]
fn shipped_scenarios_load() {
    let all = shipped_scenarios();
    assert!(all.len() >= 8, "{all:?}");
    for path in all {
        let sc = load_scenario(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!sc.catalogs.is_empty());
    }
}

/// Runs every shipped scenario over the project's fixtures (skipped when they are absent,
/// as in a branch without them). The test scorer stands in for the keyword scorer.
#[test]
fn shipped_scenarios_run_over_the_fixtures() {
    for path in shipped_scenarios() {
        let sc = load_scenario(&path).unwrap();
        if let Some(missing) = sc.catalogs.iter().find(|c| !c.path.exists()) {
            eprintln!(
                "skipping {}: fixture {} is absent",
                path.display(),
                missing.path.display()
            );
            continue;
        }
        let prep = prepare(&sc, counter_for(&sc, None), &word_builder).unwrap();
        let r = run(&sc, &prep).unwrap();
        assert!(
            r.eager.first_request_tokens > r.deferred.first_request_tokens,
            "{}",
            sc.name
        );
        assert_eq!(r.deferred.parts.total(), r.deferred.total_input_tokens);
    }
}

/// 1,000 conversations × 20 turns over a 500-tool catalog. Run with
/// `cargo test --release --lib simulate::tests::thousand -- --ignored --nocapture`.
#[test]
#[ignore = "a scale run of minutes; run it in release by hand"]
fn thousand_conversations_over_500_tools() {
    let v = crate::generate::ten_servers::ten_servers();
    let mut tools = Vec::new();
    for s in v["servers"].as_array().unwrap() {
        let server = s["name"].as_str().unwrap();
        for t in s["tools"].as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            let mut tool = tool(&crate::catalog::mcp_id(server, name), Some(server));
            tool.name = name.into();
            tool.description = t["description"].as_str().unwrap().into();
            tool.input_schema = t["input_schema"].clone();
            tools.push(tool);
        }
    }
    let catalog = Catalog::from_tools(tools).unwrap();
    let tokens = ToolTokens::compute(&catalog, Tokenizer::O200kBase, Render::Json);
    let ids: Vec<String> = catalog.tools().iter().map(|t| t.id.clone()).collect();
    let mut rng = replay::Rng::new(1);
    let mut scenarios = Vec::new();
    for c in 0..1000 {
        let mut y =
            format!("name: c{c}\nsystem_prompt_tokens: 2000\ncatalogs: [x.json]\nconversation:\n");
        for _ in 0..20 {
            y.push_str("  - user: please do the next step of the task\n");
            let n = rng.next_u64() % 3;
            if n > 0 {
                y.push_str("    calls:\n");
            }
            for _ in 0..n {
                let id = &ids[(rng.next_u64() % ids.len() as u64) as usize];
                let mut words = Vec::new();
                text::words(
                    id.rsplit("__").next().unwrap(),
                    Camel::LowerToUpper,
                    &mut words,
                );
                let words = words.join(" ");
                y.push_str(&format!(
                    "      - {{tool: {id}, query: \"{words}\", result_tokens: 200}}\n"
                ));
            }
        }
        scenarios.push(scenario(&y).unwrap());
    }
    let prep = prepare_with(&scenarios[0], catalog, tokens, &word_builder).unwrap();
    let start = std::time::Instant::now();
    let mut requests = 0;
    for sc in &scenarios {
        let r = run(sc, &prep).unwrap();
        requests += r.eager.requests + r.deferred.requests;
    }
    eprintln!(
        "1000 conversations x 20 turns over 500 tools: {:?}, {requests} requests",
        start.elapsed()
    );
}
