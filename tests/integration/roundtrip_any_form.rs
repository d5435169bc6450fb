//! Any loadable catalog, in any of the forms (MCP tools/list, JSON-RPC tools/list response,
//! Anthropic and OpenAI tools arrays, native JSON or YAML), round-trips through the native
//! form: same ids, names, servers, descriptions and schemas, schema key order included.
//! (`catalog_roundtrip.rs` covers native input with flags; this covers every input form.)

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Value, json};
use toolbudget::catalog::{Catalog, load_catalog_bytes, to_native_json};

fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"$ref": "#"})),
        Just(json!({"type": "number", "default": -1.5e-7})),
        Just(json!({"enum": ["z", "a", "é\n\"q\""]})),
    ];
    prop::collection::vec(("[a-zA-Z_$]{1,8}", leaf), 0..5).prop_map(|props| {
        let mut m = serde_json::Map::new();
        for (k, v) in props {
            m.insert(k, v);
        }
        json!({"type": "object", "properties": Value::Object(m), "additionalProperties": false})
    })
}

fn tools() -> impl Strategy<Value = Vec<(String, String, Value)>> {
    prop::collection::vec(
        ("[A-Za-z][A-Za-z0-9_.-]{0,10}", "\\PC{0,30}", schema()),
        1..5,
    )
    .prop_map(|mut v| {
        let mut seen = std::collections::HashSet::new();
        v.retain(|(n, _, _)| seen.insert(n.clone()));
        v
    })
}

fn load(name: &str, text: String, server: Option<&str>) -> Catalog {
    load_catalog_bytes(Path::new(name), text.into_bytes(), server)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn same(a: &Catalog, b: &Catalog) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.len(), b.len());
    for (x, y) in a.tools().iter().zip(b.tools()) {
        prop_assert_eq!(&x.id, &y.id);
        prop_assert_eq!(&x.name, &y.name);
        prop_assert_eq!(&x.server, &y.server);
        prop_assert_eq!(&x.description, &y.description);
        prop_assert_eq!(x.input_schema.to_string(), y.input_schema.to_string());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn every_form_round_trips_through_native(tools in tools(), form in 0usize..6) {
        let objs = |schema_key: &str| -> Vec<Value> {
            tools.iter().map(|(n, d, s)| json!({"name": n, "description": d, schema_key: s})).collect()
        };
        let (name, text, server) = match form {
            0 => ("gh.json", json!({"tools": objs("inputSchema")}).to_string(), Some("git-hub.v2")),
            1 => ("rpc.json", json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": objs("inputSchema")}}).to_string(), None),
            2 => ("anthropic.json", Value::Array(objs("input_schema")).to_string(), None),
            3 => (
                "openai.json",
                Value::Array(tools.iter().map(|(n, d, s)| json!({"type": "function", "function": {"name": n, "description": d, "parameters": s}})).collect()).to_string(),
                None,
            ),
            4 => (
                "responses.json",
                Value::Array(tools.iter().map(|(n, d, s)| json!({"type": "function", "name": n, "description": d, "parameters": s})).collect()).to_string(),
                Some("srv"),
            ),
            _ => ("native.json", json!({"servers": [{"name": "s", "tools": objs("input_schema")}]}).to_string(), None),
        };
        let a = load(name, text, server);
        prop_assert_eq!(a.len(), tools.len());
        let native = to_native_json(&a);
        let b = load("native.json", native.clone(), None);
        same(&a, &b)?;
        // Written again, the native text is byte-identical: the form is a fixed point.
        prop_assert_eq!(to_native_json(&b), native);
    }
}
