//! Any loadable catalog round-trips through the native form unchanged.

use proptest::prelude::*;
use serde_json::{Value, json};
use toolbudget::catalog::{CatalogSource, load_catalogs, to_native_json};

fn name() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9_.-]{0,12}"
}

fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": "integer", "minimum": 0})),
        Just(json!({"type": "number", "default": 0.25})),
        Just(json!({"enum": ["a", "b", "ü"]})),
    ];
    let prop = leaf.prop_recursive(3, 12, 3, |inner| {
        prop::collection::vec(("[a-z]{1,6}", inner), 1..3).prop_map(|props| {
            let mut m = serde_json::Map::new();
            for (k, v) in props {
                m.insert(k, v);
            }
            json!({"type": "object", "properties": Value::Object(m)})
        })
    });
    prop::collection::vec(("[a-z_]{1,8}", prop), 0..4).prop_map(|props| {
        let mut m = serde_json::Map::new();
        for (k, v) in props {
            m.insert(k, v);
        }
        json!({"type": "object", "properties": Value::Object(m)})
    })
}

#[derive(Debug, Clone)]
struct GenTool {
    name: String,
    description: String,
    schema: Value,
    hint: Option<String>,
    always: bool,
}

fn tool() -> impl Strategy<Value = GenTool> {
    (
        name(),
        "\\PC{0,40}",
        schema(),
        proptest::option::of("[a-z ]{1,20}"),
        any::<bool>(),
    )
        .prop_map(|(name, description, schema, hint, always)| GenTool {
            name,
            description,
            schema,
            hint,
            always,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn native_round_trip(builtins in prop::collection::vec(tool(), 0..4), mcp in prop::collection::vec(tool(), 1..5)) {
        let mut seen = std::collections::HashSet::new();
        let builtins: Vec<_> = builtins.into_iter().filter(|t| seen.insert(t.name.clone())).collect();
        let mut seen = std::collections::HashSet::new();
        let mcp: Vec<_> = mcp.into_iter().filter(|t| seen.insert(t.name.clone())).collect();
        let to_obj = |t: &GenTool| {
            let mut o = json!({"name": t.name, "description": t.description, "input_schema": t.schema});
            if let Some(h) = &t.hint { o["search_hint"] = json!(h); }
            if t.always { o["always_load"] = json!(true); }
            o
        };
        let native = json!({
            "builtins": builtins.iter().map(to_obj).collect::<Vec<_>>(),
            "servers": [{"name": "srv", "tools": mcp.iter().map(to_obj).collect::<Vec<_>>()}],
        });
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("first.json");
        std::fs::write(&first, serde_json::to_string(&native).unwrap()).unwrap();
        let a = load_catalogs(&[CatalogSource { path: first, server: None }]).unwrap();
        let second = dir.path().join("second.json");
        std::fs::write(&second, to_native_json(&a)).unwrap();
        let b = load_catalogs(&[CatalogSource { path: second, server: None }]).unwrap();
        prop_assert_eq!(a.len(), b.len());
        for (x, y) in a.tools().iter().zip(b.tools()) {
            prop_assert_eq!(&x.id, &y.id);
            prop_assert_eq!(&x.description, &y.description);
            prop_assert_eq!(&x.input_schema, &y.input_schema);
            prop_assert_eq!(x.always_load, y.always_load);
            prop_assert_eq!(&x.search_hint, &y.search_hint);
            // Key order survives too: it changes token counts.
            prop_assert_eq!(x.input_schema.to_string(), y.input_schema.to_string());
        }
    }
}
