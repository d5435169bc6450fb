//! Writes a catalog in the native form (`builtins:` / `servers:`), as JSON. Loading the output
//! gives back the same tools: the round trip is property-tested.

use serde_json::{Map, Value, json};

use super::Catalog;

/// The native-form JSON of `catalog`; servers appear in first-seen order, each tool keeps its
/// flags, and schemas keep their key order.
pub fn to_native_json(catalog: &Catalog) -> String {
    let mut builtins = Vec::new();
    let mut servers: Vec<(String, Vec<Value>)> = Vec::new();
    for t in catalog.tools() {
        let server_hint = t.server.as_ref().and_then(|name| {
            catalog
                .servers()
                .iter()
                .find(|s| &s.name == name)
                .and_then(|s| s.flags.search_hint.as_ref())
        });
        let mut obj = Map::new();
        obj.insert("name".into(), json!(t.name));
        obj.insert("description".into(), json!(t.description));
        obj.insert("input_schema".into(), t.input_schema.clone());
        if let Some(d) = t.should_defer {
            obj.insert("should_defer".into(), json!(d));
        }
        if t.always_load {
            obj.insert("always_load".into(), json!(true));
        }
        if let Some(h) = &t.search_hint
            && Some(h) != server_hint
        {
            obj.insert("search_hint".into(), json!(h));
        }
        if !t.depends_on.is_empty() {
            obj.insert("depends_on".into(), json!(t.depends_on));
        }
        match &t.server {
            None => builtins.push(Value::Object(obj)),
            Some(s) => match servers.iter_mut().find(|(name, _)| name == s) {
                Some((_, tools)) => tools.push(Value::Object(obj)),
                None => servers.push((s.clone(), vec![Value::Object(obj)])),
            },
        }
    }
    let servers: Vec<Value> = servers
        .into_iter()
        .map(|(name, tools)| {
            let mut obj = Map::new();
            obj.insert("name".into(), json!(name));
            if let Some(info) = catalog.servers().iter().find(|s| s.name == name) {
                if let Some(d) = &info.description {
                    obj.insert("description".into(), json!(d));
                }
                if info.flags.always_load {
                    obj.insert("always_load".into(), json!(true));
                }
                if let Some(d) = info.flags.should_defer {
                    obj.insert("should_defer".into(), json!(d));
                }
                if let Some(h) = &info.flags.search_hint {
                    obj.insert("search_hint".into(), json!(h));
                }
            }
            obj.insert("tools".into(), Value::Array(tools));
            Value::Object(obj)
        })
        .collect();
    let mut top = Map::new();
    if !builtins.is_empty() {
        top.insert("builtins".into(), Value::Array(builtins));
    }
    if !servers.is_empty() || top.is_empty() {
        top.insert("servers".into(), Value::Array(servers));
    }
    let mut s = serde_json::to_string_pretty(&Value::Object(top)).expect("values serialize");
    s.push('\n');
    s
}
