//! A deterministic synthetic catalog for the "10 servers × 50 tools" scenario
//! (`fixtures/catalogs/generated/ten-servers.json`). The committed file is this function's
//! output; a test checks they agree, and `TOOLBUDGET_REGENERATE=1 cargo test --lib
//! generate::ten_servers` rewrites it. Tools are plain CRUD-style operations (five verbs over ten
//! nouns per server) with a short description and a three-property schema, about 100
//! tokens each, the size of a typical MCP tool.

use serde_json::{Value, json};

pub const SERVERS: [(&str, &str, [&str; 10]); 10] = [
    (
        "files",
        "Cloud file storage",
        [
            "file",
            "folder",
            "share_link",
            "file_version",
            "upload",
            "download",
            "trash_item",
            "file_comment",
            "file_tag",
            "quota",
        ],
    ),
    (
        "git",
        "Source hosting",
        [
            "repository",
            "branch",
            "pull_request",
            "commit",
            "release",
            "tag",
            "webhook",
            "deploy_key",
            "review",
            "workflow_run",
        ],
    ),
    (
        "cloud",
        "Cloud infrastructure",
        [
            "instance",
            "volume",
            "snapshot",
            "network",
            "firewall_rule",
            "load_balancer",
            "dns_record",
            "bucket",
            "key_pair",
            "region_quota",
        ],
    ),
    (
        "crm",
        "Customer relationship management",
        [
            "contact", "company", "deal", "pipeline", "note", "task", "meeting", "quote",
            "product", "owner",
        ],
    ),
    (
        "mail",
        "Email",
        [
            "message",
            "draft",
            "thread",
            "label",
            "filter",
            "attachment",
            "alias",
            "signature",
            "contact_group",
            "auto_reply",
        ],
    ),
    (
        "calendar",
        "Calendars and scheduling",
        [
            "event",
            "calendar",
            "attendee",
            "reminder",
            "room",
            "availability",
            "recurrence",
            "invitation",
            "time_zone",
            "booking_page",
        ],
    ),
    (
        "analytics",
        "Product analytics",
        [
            "dashboard",
            "chart",
            "funnel",
            "cohort",
            "metric",
            "segment",
            "annotation",
            "export_job",
            "alert",
            "data_source",
        ],
    ),
    (
        "billing",
        "Payments and invoicing",
        [
            "invoice",
            "customer",
            "subscription",
            "payment",
            "refund",
            "coupon",
            "price",
            "payout",
            "tax_rate",
            "dispute",
        ],
    ),
    (
        "search",
        "Site search index",
        [
            "index",
            "document",
            "synonym",
            "ranking_rule",
            "query_log",
            "facet",
            "stop_word",
            "api_key",
            "replica",
            "crawler",
        ],
    ),
    (
        "deploy",
        "Deployment platform",
        [
            "service",
            "deployment",
            "environment",
            "secret",
            "domain",
            "build",
            "log_stream",
            "rollback",
            "scaling_rule",
            "cron_job",
        ],
    ),
];

const VERBS: [(&str, &str); 5] = [
    (
        "list",
        "Lists {n}s in the {s} account, newest first, with paging. Use filters to narrow the result; returns ids and summary fields only.",
    ),
    (
        "get",
        "Gets one {n} from the {s} account by id, with every field and related ids. Fails with not_found when the id does not exist.",
    ),
    (
        "create",
        "Creates a new {n} in the {s} account from the given fields and returns it with its id. Required fields are validated first.",
    ),
    (
        "update",
        "Updates fields of an existing {n} in the {s} account; fields not given stay unchanged. Returns the updated {n}.",
    ),
    (
        "delete",
        "Deletes a {n} from the {s} account by id. This cannot be undone; set confirm to true to proceed.",
    ),
];

fn tool(server_desc: &str, verb: usize, noun: &str) -> Value {
    let (v, text) = VERBS[verb];
    let human = noun.replace('_', " ");
    let description = text
        .replace("{n}", &human)
        .replace("{s}", &server_desc.to_lowercase());
    let second = match v {
        "list" => {
            json!({"type": "string", "description": "Filter expression, e.g. name contains 'x'."})
        }
        "delete" => json!({"type": "boolean", "description": "Must be true to delete."}),
        _ => json!({"type": "object", "description": format!("Fields of the {human}.")}),
    };
    let second_name = match v {
        "list" => "filter",
        "delete" => "confirm",
        _ => "fields",
    };
    json!({
        "name": format!("{v}_{noun}"),
        "description": description,
        "input_schema": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": format!("Id of the {human}.")},
                second_name: second,
                "limit": {"type": "integer", "description": "Most items to return.", "default": 20}
            },
            "required": ["id"]
        }
    })
}

/// The native catalog: 10 servers × 50 tools, each server with a description.
pub fn ten_servers() -> Value {
    let servers: Vec<Value> = SERVERS
        .iter()
        .map(|(name, desc, nouns)| {
            let tools: Vec<Value> = nouns
                .iter()
                .flat_map(|n| (0..VERBS.len()).map(move |v| tool(desc, v, n)))
                .collect();
            json!({"name": name, "description": desc, "tools": tools})
        })
        .collect();
    json!({ "servers": servers })
}

/// The committed file's text (pretty JSON, trailing newline).
pub fn ten_servers_text() -> String {
    let mut s = serde_json::to_string_pretty(&ten_servers()).expect("serializes");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_file_matches_the_generator() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/catalogs/generated/ten-servers.json");
        let want = ten_servers_text();
        if std::env::var_os("TOOLBUDGET_REGENERATE").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).expect("the generated catalog is committed");
        assert_eq!(have, want, "regenerate with TOOLBUDGET_REGENERATE=1");
        let v = ten_servers();
        assert_eq!(v["servers"].as_array().unwrap().len(), 10);
        assert!(
            v["servers"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["tools"].as_array().unwrap().len() == 50)
        );
    }
}
