//! What `catalog import` writes and counts: the `tools/list` answer as a catalog file in the
//! MCP form of CONTRACT.md, and the same tools as a `Catalog` so they can be tokenized without
//! reading the file back.

use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, Tool, mcp_id};

/// `{"tools": [...]}` with 2-space indentation, keys in the order received, non-ASCII kept as
/// UTF-8, and a final newline: the same listing always gives the same bytes.
pub fn catalog_json(tools: &[Value]) -> String {
    let mut doc = Map::new();
    doc.insert("tools".into(), Value::Array(tools.to_vec()));
    let mut s = serde_json::to_string_pretty(&Value::Object(doc)).expect("JSON values serialize");
    s.push('\n');
    s
}

/// The listed tools as catalog tools of `server`, read the way the catalog loader reads an MCP
/// `tools/list` file (a missing description is empty, a missing schema takes no arguments), so
/// the counts printed by `catalog import` equal those of `count` on the written file.
pub fn to_catalog(server: &str, tools: &[Value]) -> Result<Catalog, String> {
    let mut out = Vec::with_capacity(tools.len());
    for (i, t) in tools.iter().enumerate() {
        let name = t
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| format!("tool {} has no name", i + 1))?;
        let description = match t.get("description") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(d)) => d.clone(),
            Some(_) => return Err(format!("tool {name:?}: description is not a string")),
        };
        let input_schema = match t.get("inputSchema") {
            None => json!({"type": "object", "properties": {}}),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => return Err(format!("tool {name:?}: inputSchema is not an object")),
        };
        out.push(Tool {
            id: mcp_id(server, name),
            name: name.to_string(),
            server: Some(server.to_string()),
            description,
            input_schema,
            should_defer: None,
            always_load: false,
            search_hint: None,
            depends_on: Vec::new(),
            origin: None,
        });
    }
    Catalog::from_tools(out).map_err(|e| format!("the server listed a {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_json_keeps_key_order_and_utf8() {
        let tools = vec![
            json!({"name": "b", "description": "café", "inputSchema": {"type": "object", "z": 1, "a": 2}}),
        ];
        assert_eq!(
            catalog_json(&tools),
            "{\n  \"tools\": [\n    {\n      \"name\": \"b\",\n      \"description\": \"café\",\n      \"inputSchema\": {\n        \"type\": \"object\",\n        \"z\": 1,\n        \"a\": 2\n      }\n    }\n  ]\n}\n"
        );
    }

    #[test]
    fn tools_become_mcp_ids_and_duplicates_are_refused() {
        let c = to_catalog(
            "srv",
            &[json!({"name": "x", "inputSchema": {"type": "object"}})],
        )
        .unwrap();
        assert_eq!(c.get(0).id, "mcp__srv__x");
        assert_eq!(c.get(0).description, "");
        let e = to_catalog("srv", &[json!({"name": "x"}), json!({"name": "x"})]).unwrap_err();
        assert!(e.contains("duplicate tool id \"mcp__srv__x\""), "{e}");
    }
}
