//! Checks the project's own fixture catalogs and labeled queries (fixtures/), so that
//! scenarios, evaluations and the report can rely on their shape and size.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use toolbudget::catalog::{Catalog, CatalogSource, load_catalogs};
use toolbudget::counter::ToolTokens;
use toolbudget::tokenize::{Render, Tokenizer};

const BUILTIN_NAMES: [&str; 39] = [
    "Task",
    "Bash",
    "Glob",
    "Grep",
    "LS",
    "ExitPlanMode",
    "Read",
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "NotebookRead",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "TodoRead",
    "BashOutput",
    "KillShell",
    "SlashCommand",
    "Skill",
    "AskUserQuestion",
    "EnterPlanMode",
    "ListMcpResources",
    "ReadMcpResource",
    "ToolSearch",
    "TaskOutput",
    "TaskStop",
    "LSP",
    "Agent",
    "Monitor",
    "CronCreate",
    "CronList",
    "CronDelete",
    "EnterWorktree",
    "ExitWorktree",
    "TeamCreate",
    "TeamDelete",
    "SendMessage",
    "PushNotification",
];

const MCP_SERVERS: [&str; 5] = ["browser", "chat", "db", "monitor", "tracker"];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn source(path: PathBuf) -> CatalogSource {
    CatalogSource { path, server: None }
}

fn builtins_source() -> CatalogSource {
    source(fixtures_dir().join("catalogs/builtins.yaml"))
}

fn all_sources() -> Vec<CatalogSource> {
    let mut sources = vec![builtins_source()];
    for server in MCP_SERVERS {
        sources.push(source(
            fixtures_dir().join(format!("catalogs/mcp/{server}.json")),
        ));
    }
    sources
}

fn load_all() -> Catalog {
    load_catalogs(&all_sources()).expect("fixture catalogs load")
}

#[test]
fn builtins_are_the_39_chosen_names() {
    let catalog = load_all();
    let builtins: Vec<&str> = catalog
        .tools()
        .iter()
        .filter(|t| !t.is_mcp())
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(builtins, BUILTIN_NAMES.to_vec());
}

#[test]
fn mcp_catalogs_have_at_least_70_tools_over_5_servers() {
    let catalog = load_all();
    let mut per_server: BTreeMap<&str, usize> = BTreeMap::new();
    for tool in catalog.tools().iter().filter(|t| t.is_mcp()) {
        let server = tool.server.as_deref().expect("MCP tool has a server");
        assert_eq!(tool.id, format!("mcp__{server}__{}", tool.name));
        *per_server.entry(server).or_default() += 1;
    }
    assert_eq!(
        per_server.keys().copied().collect::<Vec<_>>(),
        MCP_SERVERS.to_vec()
    );
    assert!(per_server.values().all(|&n| n >= 13), "{per_server:?}");
    assert!(per_server.values().sum::<usize>() >= 70, "{per_server:?}");
}

#[test]
fn builtins_total_is_realistic_with_o200k_base() {
    let catalog = load_catalogs(&[builtins_source()]).expect("builtins load");
    let tokens = ToolTokens::compute(&catalog, Tokenizer::O200kBase, Render::Json);
    let total = tokens.total();
    assert!(
        (13_500..=16_500).contains(&total),
        "builtins total {total} tokens (o200k_base) is outside [13500, 16500]"
    );
    // The two long-form tools dominate, as in real agents.
    let bash = tokens.get(catalog.index_of("Bash").unwrap());
    let task = tokens.get(catalog.index_of("Task").unwrap());
    assert!(bash > 1_000 && task > 1_000, "Bash {bash}, Task {task}");
}

#[test]
fn builtin_loading_hints_are_set() {
    let catalog = load_all();
    let tool = |id: &str| catalog.get(catalog.index_of(id).unwrap());
    for id in ["Edit", "MultiEdit", "Write"] {
        assert_eq!(tool(id).depends_on, vec!["Read".to_string()], "{id}");
    }
    for id in [
        "WebFetch",
        "WebSearch",
        "NotebookEdit",
        "CronCreate",
        "TeamCreate",
    ] {
        assert_eq!(tool(id).should_defer, Some(true), "{id}");
    }
    assert_eq!(tool("Read").should_defer, None);
    assert_eq!(
        tool("NotebookEdit").search_hint.as_deref(),
        Some("jupyter ipynb cell")
    );
}

#[test]
fn mcp_schemas_use_refs_and_text_has_non_ascii() {
    let catalog = load_all();
    let search = catalog.get(catalog.index_of("mcp__tracker__search_issues").unwrap());
    let schema = search.input_schema.to_string();
    for needle in ["$defs", "$ref", "anyOf", "enum"] {
        assert!(
            schema.contains(needle),
            "search_issues schema lacks {needle}"
        );
    }
    let non_ascii = catalog
        .tools()
        .iter()
        .filter(|t| t.is_mcp() && !t.description.is_ascii())
        .count();
    assert!(
        non_ascii >= 2,
        "only {non_ascii} MCP descriptions with non-ASCII text"
    );
}

#[test]
fn every_expected_id_in_the_queries_exists() {
    let catalog = load_all();
    let path = fixtures_dir().join("queries/fixtures.jsonl");
    let text = std::fs::read_to_string(&path).expect("queries file readable");
    let mut ids = BTreeSet::new();
    let mut builtin_queries = 0;
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let query: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), n + 1));
        let id = query["id"].as_str().expect("query id is a string");
        assert!(ids.insert(id.to_string()), "duplicate query id {id}");
        assert!(
            !query["query"].as_str().unwrap_or("").is_empty(),
            "{id}: empty query"
        );
        let expected = query["expected"].as_array().expect("expected is a list");
        assert!(!expected.is_empty(), "{id}: nothing expected");
        for tool in expected {
            let tool = tool.as_str().expect("expected ids are strings");
            assert!(
                catalog.index_of(tool).is_some(),
                "query {id} expects {tool}, which is not in the fixture catalogs"
            );
        }
        if expected
            .iter()
            .any(|t| !t.as_str().unwrap().starts_with("mcp__"))
        {
            builtin_queries += 1;
        }
    }
    assert!(ids.len() >= 80, "only {} queries", ids.len());
    assert!(
        builtin_queries >= 15,
        "only {builtin_queries} built-in queries"
    );
}
