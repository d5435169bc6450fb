//! A stand-in for the five-server setup of Anthropic's engineering article "Introducing
//! advanced tool use on the Claude Developer Platform" (GitHub 35 tools ≈ 26K tokens, Slack 11
//! ≈ 21K, Sentry 5 ≈ 3K, Grafana 5 ≈ 3K, Splunk 2 ≈ 2K: 58 tools ≈ 55K), written for this
//! project (`fixtures/catalogs/generated/five-servers.json`; none of those servers' texts).
//! The article gives only tool counts and token sizes per server, so each server's tools are
//! grown, deterministically, until the server's definitions reach the article's size under
//! `anthropic-estimate` (the article counts Claude tokens): a tool is a plausible operation of
//! that kind of server with a description and a schema, then usage notes and documented
//! parameters are added in turn. The committed file is this function's output; a test checks
//! they agree (`TOOLBUDGET_REGENERATE=1 cargo test --lib generate::five_servers` rewrites it).

use serde_json::{Map, Value, json};

use crate::catalog::{Tool, mcp_id};
use crate::counter::CounterKind;

/// (server, what it is, tool names, the article's tokens for the server).
pub const SERVERS: [(&str, &str, &[&str], usize); 5] = [
    (
        "github",
        "source hosting",
        &[
            "create_pull_request",
            "merge_pull_request",
            "list_pull_requests",
            "get_pull_request",
            "update_pull_request",
            "request_review",
            "create_issue",
            "update_issue",
            "list_issues",
            "get_issue",
            "add_issue_comment",
            "search_issues",
            "search_code",
            "search_repositories",
            "get_file_contents",
            "create_or_update_file",
            "push_files",
            "create_branch",
            "list_branches",
            "list_commits",
            "get_commit",
            "create_repository",
            "fork_repository",
            "list_releases",
            "create_release",
            "list_workflow_runs",
            "rerun_workflow",
            "get_workflow_logs",
            "list_tags",
            "add_labels",
            "assign_issue",
            "list_notifications",
            "mark_notification_read",
            "get_me",
            "list_collaborators",
        ],
        26_000,
    ),
    (
        "slack",
        "team chat",
        &[
            "send_message",
            "reply_in_thread",
            "list_channels",
            "get_channel_history",
            "get_thread_replies",
            "add_reaction",
            "search_messages",
            "list_users",
            "get_user_profile",
            "create_channel",
            "upload_file",
        ],
        21_000,
    ),
    (
        "sentry",
        "error monitoring",
        &[
            "list_issues",
            "get_issue_details",
            "resolve_issue",
            "list_events",
            "get_project_stats",
        ],
        3_000,
    ),
    (
        "grafana",
        "dashboards and metrics",
        &[
            "search_dashboards",
            "get_dashboard",
            "query_datasource",
            "list_alert_rules",
            "create_annotation",
        ],
        3_000,
    ),
    (
        "splunk",
        "log search",
        &["run_search", "list_saved_searches"],
        2_000,
    ),
];

/// Usage notes a description grows by, in turn (`{o}`: the tool's object, `{s}`: the server).
const NOTES: [&str; 12] = [
    "Use this when the user names a specific {o}; to find one first, search or list them.",
    "Results are paginated: pass the cursor from the previous response to continue, and stop when it is empty.",
    "The caller's permissions in {s} apply; items the caller cannot see are left out without an error.",
    "Times are ISO 8601 in UTC; relative times such as \"last 24 hours\" must be converted before the call.",
    "Write operations are not idempotent: check the current state first when retrying after a timeout.",
    "Large fields are truncated to 4,000 characters in the response; fetch the {o} itself for the full text.",
    "Identifiers are case-sensitive and must be copied exactly from an earlier response.",
    "Returns a compact summary by default; set verbose to include every field of the {o}.",
    "Rate limits in {s} are shared with the user's other clients; on a 429 answer wait for the time it gives.",
    "Fields not given keep their current values; an empty string clears a field that allows it.",
    "Prefer filters over fetching everything: a broad call on a large {s} workspace can take seconds.",
    "The response includes links to the {o} in the {s} web interface for the user to open.",
];

/// Parameters a schema grows by, in turn: (name, type, description).
const PARAMETERS: [(&str, &str, &str); 16] = [
    (
        "cursor",
        "string",
        "Opaque pagination cursor returned by the previous call; omit it for the first page.",
    ),
    (
        "per_page",
        "integer",
        "Items per page, 1 to 100. Larger pages take longer and are truncated more often.",
    ),
    (
        "sort",
        "string",
        "Field to sort by: created, updated or name. Ties keep the server's order.",
    ),
    (
        "direction",
        "string",
        "Sort direction, asc or desc. Defaults to desc for dates and asc for names.",
    ),
    (
        "since",
        "string",
        "Only items changed at or after this ISO 8601 timestamp (UTC).",
    ),
    (
        "until",
        "string",
        "Only items changed before this ISO 8601 timestamp (UTC).",
    ),
    (
        "verbose",
        "boolean",
        "Include every field of each item instead of the compact summary.",
    ),
    (
        "include_archived",
        "boolean",
        "Also return archived or closed items, which are left out by default.",
    ),
    (
        "fields",
        "array",
        "Names of the fields to return; the others are left out of the response to keep it short.",
    ),
    (
        "labels",
        "array",
        "Labels or tags the items must all carry, matched exactly and case-sensitively.",
    ),
    (
        "owner",
        "string",
        "The account or workspace that owns the item, as its login or id; defaults to the caller's.",
    ),
    (
        "dry_run",
        "boolean",
        "Validate the request and report what would change without changing anything.",
    ),
    (
        "timeout_seconds",
        "integer",
        "Give up after this many seconds (1 to 120); long queries return what they found so far.",
    ),
    (
        "query",
        "string",
        "Free-text filter matched against titles and bodies; quote phrases to match them whole.",
    ),
    (
        "notify",
        "boolean",
        "Send the usual notifications to watchers and mentioned users (default true).",
    ),
    (
        "reason",
        "string",
        "A short note kept in the audit log with the change, shown to administrators.",
    ),
];

/// The starting tool: a description from its name and a schema with the object's id.
fn base_tool(server: &str, kind: &str, name: &str) -> (String, Map<String, Value>, Vec<Value>) {
    let mut words = name.split('_');
    let verb = words.next().unwrap_or("get");
    let object: Vec<&str> = words.collect();
    let object = object.join(" ");
    let description = format!(
        "{}{} {} in {server} ({kind}).",
        verb[..1].to_uppercase(),
        &verb[1..],
        if object.is_empty() { "items" } else { &object }
    );
    let id = format!("{}_id", singular(&object.replace(' ', "_")));
    let mut props = Map::new();
    props.insert(
        id.clone(),
        json!({"type": "string", "description": format!("Id of the {} in {server}.", if object.is_empty() { "item".to_string() } else { singular(&object) })}),
    );
    (description, props, vec![json!(id)])
}

/// `pull_requests` → `pull_request`, `saved_searches` → `saved_search`, `items` for nothing.
fn singular(name: &str) -> String {
    if name.is_empty() {
        return "item".into();
    }
    for end in ["ches", "shes"] {
        if let Some(stem) = name.strip_suffix(end) {
            return format!("{stem}{}", &end[..2]);
        }
    }
    match name.strip_suffix('s') {
        Some(stem) if !stem.ends_with('s') => stem.to_string(),
        _ => name.to_string(),
    }
}

fn tool_value(
    name: &str,
    description: &str,
    props: &Map<String, Value>,
    required: &[Value],
) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": props, "required": required}
    })
}

/// One server's tools, grown in turn (a note, then a parameter, tool by tool) until their
/// `anthropic-estimate` count reaches `target` (stopping at whichever side of it is closer).
pub fn server_tools(server: &str, kind: &str, names: &[&str], target: usize) -> Vec<Value> {
    let counter = CounterKind::AnthropicEstimate;
    let mut tools: Vec<(String, Map<String, Value>, Vec<Value>)> =
        names.iter().map(|n| base_tool(server, kind, n)).collect();
    let count = |i: usize, t: &(String, Map<String, Value>, Vec<Value>)| -> usize {
        let v = tool_value(names[i], &t.0, &t.1, &t.2);
        counter.tool(&Tool {
            id: mcp_id(server, names[i]),
            name: names[i].to_string(),
            server: Some(server.to_string()),
            description: t.0.clone(),
            input_schema: v["inputSchema"].clone(),
            should_defer: None,
            always_load: false,
            search_hint: None,
            depends_on: vec![],
            origin: None,
        })
    };
    let mut sizes: Vec<usize> = tools.iter().enumerate().map(|(i, t)| count(i, t)).collect();
    let mut step = 0usize;
    loop {
        let total: usize = sizes.iter().sum();
        let i = step % tools.len();
        let round = step / tools.len();
        let mut grown = tools[i].clone();
        let object = names[i].split('_').skip(1).collect::<Vec<_>>().join(" ");
        // Notes until each is used once, then parameters only (no sentence twice).
        if round.is_multiple_of(2) && round / 2 < NOTES.len() {
            let note = NOTES[(i + round / 2) % NOTES.len()]
                .replace("{o}", if object.is_empty() { "item" } else { &object })
                .replace("{s}", server);
            grown.0.push(' ');
            grown.0.push_str(&note);
        } else {
            let (p, ty, d) = PARAMETERS[(i + round) % PARAMETERS.len()];
            let key = if grown.1.contains_key(p) {
                format!("{p}_{round}")
            } else {
                p.to_string()
            };
            let schema = if ty == "array" {
                json!({"type": "array", "items": {"type": "string"}, "description": d})
            } else {
                json!({"type": ty, "description": d})
            };
            grown.1.insert(key, schema);
        }
        let new_size = count(i, &grown);
        let after = total - sizes[i] + new_size;
        if after.abs_diff(target) >= total.abs_diff(target) {
            break;
        }
        tools[i] = grown;
        sizes[i] = new_size;
        step += 1;
    }
    tools
        .iter()
        .enumerate()
        .map(|(i, t)| tool_value(names[i], &t.0, &t.1, &t.2))
        .collect()
}

/// The native catalog: five servers, each with a description.
pub fn five_servers() -> Value {
    let servers: Vec<Value> = SERVERS
        .iter()
        .map(|(name, kind, names, target)| {
            json!({
                "name": name,
                "description": format!("Stand-in {kind} server sized like the article's {name} server."),
                "tools": server_tools(name, kind, names, *target),
            })
        })
        .collect();
    json!({ "servers": servers })
}

/// The committed file's text (pretty JSON, trailing newline).
pub fn five_servers_text() -> String {
    let mut s = serde_json::to_string_pretty(&five_servers()).expect("serializes");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{CatalogSource, load_catalogs};

    #[test]
    fn committed_file_matches_the_generator_and_the_article_sizes() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/catalogs/generated/five-servers.json");
        let want = five_servers_text();
        if std::env::var_os("TOOLBUDGET_REGENERATE").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).expect("the generated catalog is committed");
        assert_eq!(have, want, "regenerate with TOOLBUDGET_REGENERATE=1");
        let catalog = load_catalogs(&[CatalogSource { path, server: None }]).unwrap();
        let tokens = CounterKind::AnthropicEstimate.tools(&catalog);
        for (server, _, names, target) in SERVERS {
            let (n, sum) = catalog
                .tools()
                .iter()
                .enumerate()
                .filter(|(_, t)| t.server.as_deref() == Some(server))
                .fold((0, 0), |(n, s), (i, _)| (n + 1, s + tokens.get(i)));
            assert_eq!(n, names.len(), "{server}");
            // Within 1% of the article's size (one grown note or parameter at most).
            assert!(
                sum.abs_diff(target) * 100 <= target,
                "{server}: {sum} vs {target}"
            );
        }
    }
}
