//! Loaders for the catalog forms of CONTRACT.md: MCP `tools/list` results, the native
//! catalog (built-ins and servers), and Anthropic / OpenAI `tools` arrays. The form is
//! detected from content. Every problem is reported with file and `line:column`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::{Map, Value};

use super::{Catalog, Origin, Tool, mcp_id};
use crate::document::{Document, Seg};
use crate::error::{Error, Result};
use crate::path;

/// Most tools accepted from all catalogs together.
pub const MAX_TOOLS: usize = 200_000;

/// One `--catalog` argument: a file, and the server its tools belong to when the form does
/// not say (`SERVER=PATH`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogSource {
    pub path: PathBuf,
    pub server: Option<String>,
}

/// Parses `PATH` or `SERVER=PATH`. An argument that names an existing file is a path even
/// when it contains `=`.
pub fn parse_catalog_arg(arg: &str) -> CatalogSource {
    if !Path::new(arg).exists()
        && let Some((server, path)) = arg.split_once('=')
        && !server.is_empty()
        && !server.contains('/')
    {
        return CatalogSource {
            path: PathBuf::from(path),
            server: Some(server.to_string()),
        };
    }
    CatalogSource {
        path: PathBuf::from(arg),
        server: None,
    }
}

/// Loads and validates every source, in order, into one catalog.
pub fn load_catalogs(sources: &[CatalogSource]) -> Result<Catalog> {
    let loaded: Vec<Result<(Vec<Tool>, Vec<ServerDesc>)>> =
        sources.par_iter().map(load_one).collect();
    assemble(loaded)
}

/// Loads one catalog from bytes already in memory; `path` names the source in errors and
/// picks the syntax by extension, `server` is the `SERVER=` of `SERVER=PATH`. The same
/// checks as `load_catalogs` (fuzzing and tests use it: no file is touched).
pub fn load_catalog_bytes(path: &Path, bytes: Vec<u8>, server: Option<&str>) -> Result<Catalog> {
    let doc = Document::parse(path, bytes)?;
    let loader = Loader {
        doc: &doc,
        server_override: server,
    };
    assemble(vec![loader.load()])
}

/// Joins loaded files into one catalog: the tool limit, unique ids, server descriptions.
fn assemble(loaded: Vec<Result<(Vec<Tool>, Vec<ServerDesc>)>>) -> Result<Catalog> {
    let mut tools = Vec::new();
    let mut descs = Vec::new();
    for r in loaded {
        let (t, d) = r?;
        tools.extend(t);
        descs.extend(d);
    }
    if tools.len() > MAX_TOOLS {
        return Err(Error::usage(format!(
            "{} tools loaded, more than the limit of {MAX_TOOLS}",
            tools.len()
        )));
    }
    let mut first: HashMap<&str, &Tool> = HashMap::with_capacity(tools.len());
    for t in &tools {
        if let Some(prev) = first.insert(t.id.as_str(), t) {
            let origin = t.origin.as_ref().expect("loaded tools have an origin");
            let prev = prev.origin.as_ref().expect("loaded tools have an origin");
            let first_at = match prev.position() {
                Some(p) => format!("{}:{}:{}", prev.path.display(), p.line, p.column),
                None => prev.path.display().to_string(),
            };
            return Err(Error::input(
                &origin.path,
                origin.position(),
                format!("duplicate tool id {:?} (first defined at {first_at})", t.id),
            ));
        }
    }
    drop(first);
    let mut catalog = Catalog::from_tools(tools).map_err(Error::usage)?;
    // One pass over the servers (not one search per description): a file may hold
    // 100,000 servers. A later description of the same server wins, as before.
    let descs: HashMap<String, String> = descs
        .into_iter()
        .map(|d| (d.server, d.description))
        .collect();
    catalog.set_server_descriptions(&descs);
    Ok(catalog)
}

struct ServerDesc {
    server: String,
    description: String,
}

fn load_one(source: &CatalogSource) -> Result<(Vec<Tool>, Vec<ServerDesc>)> {
    let doc = Document::read(&source.path)?;
    let loader = Loader {
        doc: &doc,
        server_override: source.server.as_deref(),
    };
    loader.load()
}

struct Loader<'a> {
    doc: &'a Document,
    server_override: Option<&'a str>,
}

const NATIVE_TOP: &[&str] = &["builtins", "servers"];
const NATIVE_TOOL: &[&str] = &[
    "name",
    "description",
    "input_schema",
    "inputSchema",
    "should_defer",
    "always_load",
    "search_hint",
    "depends_on",
];
const NATIVE_SERVER: &[&str] = &["name", "description", "always_load", "tools"];

impl Loader<'_> {
    fn load(&self) -> Result<(Vec<Tool>, Vec<ServerDesc>)> {
        let v = &self.doc.value;
        match v {
            Value::Object(map) if map.contains_key("tools") && !map.contains_key("servers") => {
                self.load_tools_list(&path!["tools"], &map["tools"])
            }
            // A raw JSON-RPC response to tools/list: {"jsonrpc", "id", "result": {"tools": [...]}}.
            Value::Object(map)
                if map
                    .get("result")
                    .and_then(|r| r.get("tools"))
                    .is_some_and(Value::is_array) =>
            {
                self.load_tools_list(&path!["result", "tools"], &map["result"]["tools"])
            }
            Value::Object(map) if map.contains_key("builtins") || map.contains_key("servers") => {
                self.load_native(map)
            }
            Value::Array(items) => self.load_api_array(items),
            _ => Err(self.doc.error_at(
                &[],
                "not a catalog: expected an MCP tools/list result ({\"tools\": [...]}), a native \
                 catalog (builtins:/servers:), or an Anthropic/OpenAI tools array",
            )),
        }
    }

    fn server_name(&self) -> String {
        match self.server_override {
            Some(s) => s.to_string(),
            None => self
                .doc
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }

    fn origin(&self, at: &[Seg]) -> Option<Origin> {
        Some(Origin {
            path: self.doc.path.clone(),
            at: at.to_vec(),
        })
    }

    fn load_tools_list(&self, at: &[Seg], tools: &Value) -> Result<(Vec<Tool>, Vec<ServerDesc>)> {
        let Value::Array(items) = tools else {
            return Err(self.doc.error_at(at, "\"tools\" must be an array"));
        };
        let server = self.server_name();
        if server.is_empty() {
            return Err(self
                .doc
                .error_at(at, "cannot tell the server name: use SERVER=PATH"));
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let mut p = at.to_vec();
            p.push(Seg::Index(i));
            let obj = self.object(&p, item, "a tool object")?;
            let name = self.name(&p, obj)?;
            let schema = self.schema(&p, obj, &["inputSchema", "input_schema"])?;
            out.push(Tool {
                id: mcp_id(&server, &name),
                name,
                server: Some(server.clone()),
                description: self.description(&p, obj)?,
                input_schema: schema,
                should_defer: None,
                always_load: false,
                search_hint: None,
                depends_on: Vec::new(),
                origin: self.origin(&p),
            });
        }
        Ok((out, Vec::new()))
    }

    fn load_native(&self, map: &Map<String, Value>) -> Result<(Vec<Tool>, Vec<ServerDesc>)> {
        if self.server_override.is_some() {
            return Err(self.doc.error_at(
                &[],
                "SERVER=PATH applies to tools/list files and tools arrays; a native catalog names its servers under servers:",
            ));
        }
        self.unknown_fields(&[], map, NATIVE_TOP, "catalog")?;
        let mut out = Vec::new();
        let mut descs = Vec::new();
        if let Some(b) = map.get("builtins") {
            let Value::Array(items) = b else {
                return Err(self
                    .doc
                    .error_at(&path!["builtins"], "builtins must be a list of tools"));
            };
            for (i, item) in items.iter().enumerate() {
                let p = path!["builtins", i];
                out.push(self.native_tool(&p, item, None, false)?);
            }
        }
        if let Some(s) = map.get("servers") {
            let Value::Array(servers) = s else {
                return Err(self
                    .doc
                    .error_at(&path!["servers"], "servers must be a list"));
            };
            for (si, server) in servers.iter().enumerate() {
                let sp = path!["servers", si].to_vec();
                let sobj = self.object(&sp, server, "a server object")?;
                self.unknown_fields(&sp, sobj, NATIVE_SERVER, "server")?;
                let name = self.name(&sp, sobj)?;
                let always = self.opt_bool(&sp, sobj, "always_load")?.unwrap_or(false);
                if let Some(d) = self.opt_string(&sp, sobj, "description")? {
                    descs.push(ServerDesc {
                        server: name.clone(),
                        description: d,
                    });
                }
                let tools = match sobj.get("tools") {
                    Some(Value::Array(t)) => t.as_slice(),
                    Some(_) => {
                        let mut p = sp.clone();
                        p.push(Seg::from("tools"));
                        return Err(self.doc.error_at(&p, "tools must be a list"));
                    }
                    None => &[],
                };
                for (ti, item) in tools.iter().enumerate() {
                    let p = path!["servers", si, "tools", ti];
                    out.push(self.native_tool(&p, item, Some(&name), always)?);
                }
            }
        }
        Ok((out, descs))
    }

    fn native_tool(
        &self,
        p: &[Seg],
        item: &Value,
        server: Option<&str>,
        server_always: bool,
    ) -> Result<Tool> {
        let obj = self.object(p, item, "a tool object")?;
        self.unknown_fields(p, obj, NATIVE_TOOL, "tool")?;
        let name = self.name(p, obj)?;
        let depends_on = match obj.get("depends_on") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                let mut deps = Vec::new();
                for (i, d) in items.iter().enumerate() {
                    let Value::String(s) = d else {
                        let mut q = p.to_vec();
                        q.extend(path!["depends_on", i]);
                        return Err(self.doc.error_at(&q, "depends_on entries must be tool ids"));
                    };
                    deps.push(s.clone());
                }
                deps
            }
            Some(_) => {
                let mut q = p.to_vec();
                q.push(Seg::from("depends_on"));
                return Err(self
                    .doc
                    .error_at(&q, "depends_on must be a list of tool ids"));
            }
        };
        Ok(Tool {
            id: match server {
                Some(s) => mcp_id(s, &name),
                None => name.clone(),
            },
            name,
            server: server.map(str::to_string),
            description: self.description(p, obj)?,
            input_schema: self.schema(p, obj, &["input_schema", "inputSchema"])?,
            should_defer: self.opt_bool(p, obj, "should_defer")?,
            always_load: server_always || self.opt_bool(p, obj, "always_load")?.unwrap_or(false),
            search_hint: self.opt_string(p, obj, "search_hint")?,
            depends_on,
            origin: self.origin(p),
        })
    }

    fn load_api_array(&self, items: &[Value]) -> Result<(Vec<Tool>, Vec<ServerDesc>)> {
        let server = self.server_override;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let p = path![i].to_vec();
            let obj = self.object(&p, item, "a tool object")?;
            // OpenAI Chat Completions: {type: function, function: {name, description, parameters}};
            // OpenAI Responses: {type: function, name, description, parameters};
            // Anthropic: {name, description, input_schema}.
            let (fp, fobj, keys): (Vec<Seg>, &Map<String, Value>, &[&str]) =
                match obj.get("function") {
                    Some(f) => {
                        let mut fp = p.clone();
                        fp.push(Seg::from("function"));
                        let fobj = self.object(&fp, f, "a function object")?;
                        (fp, fobj, &["parameters"])
                    }
                    None if obj.get("type").and_then(Value::as_str) == Some("function") => {
                        (p.clone(), obj, &["parameters"])
                    }
                    None => (p.clone(), obj, &["input_schema", "inputSchema"]),
                };
            let name = self.name(&fp, fobj)?;
            out.push(Tool {
                id: match server {
                    Some(s) => mcp_id(s, &name),
                    None => name.clone(),
                },
                name,
                server: server.map(str::to_string),
                description: self.description(&fp, fobj)?,
                input_schema: self.schema(&fp, fobj, keys)?,
                should_defer: None,
                always_load: false,
                search_hint: None,
                depends_on: Vec::new(),
                origin: self.origin(&p),
            });
        }
        Ok((out, Vec::new()))
    }

    // --- field helpers -----------------------------------------------------------------------

    fn object<'v>(&self, p: &[Seg], v: &'v Value, what: &str) -> Result<&'v Map<String, Value>> {
        v.as_object().ok_or_else(|| {
            self.doc
                .error_at(p, format!("expected {what}, found {}", kind(v)))
        })
    }

    fn name(&self, p: &[Seg], obj: &Map<String, Value>) -> Result<String> {
        let mut q = p.to_vec();
        q.push(Seg::from("name"));
        match obj.get("name") {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(Value::String(_)) => Err(self.doc.error_at(&q, "tool name is empty")),
            Some(v) => Err(self
                .doc
                .error_at(&q, format!("name must be a string, found {}", kind(v)))),
            None => Err(self.doc.error_at(p, "missing required field \"name\"")),
        }
    }

    fn description(&self, p: &[Seg], obj: &Map<String, Value>) -> Result<String> {
        Ok(self.opt_string(p, obj, "description")?.unwrap_or_default())
    }

    fn schema(&self, p: &[Seg], obj: &Map<String, Value>, keys: &[&str]) -> Result<Value> {
        for key in keys {
            if let Some(v) = obj.get(*key) {
                let mut q = p.to_vec();
                q.push(Seg::from(*key));
                return match v {
                    Value::Object(_) => Ok(v.clone()),
                    _ => Err(self.doc.error_at(
                        &q,
                        format!("{key} must be a JSON Schema object, found {}", kind(v)),
                    )),
                };
            }
        }
        // MCP requires a schema; a tool without one takes no arguments.
        Ok(serde_json::json!({"type": "object", "properties": {}}))
    }

    fn opt_string(&self, p: &[Seg], obj: &Map<String, Value>, key: &str) -> Result<Option<String>> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => {
                let mut q = p.to_vec();
                q.push(Seg::from(key));
                Err(self
                    .doc
                    .error_at(&q, format!("{key} must be a string, found {}", kind(v))))
            }
        }
    }

    fn opt_bool(&self, p: &[Seg], obj: &Map<String, Value>, key: &str) -> Result<Option<bool>> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => {
                let mut q = p.to_vec();
                q.push(Seg::from(key));
                Err(self.doc.error_at(
                    &q,
                    format!("{key} must be true or false, found {}", kind(v)),
                ))
            }
        }
    }

    fn unknown_fields(
        &self,
        p: &[Seg],
        obj: &Map<String, Value>,
        allowed: &[&str],
        what: &str,
    ) -> Result<()> {
        for key in obj.keys() {
            if !allowed.contains(&key.as_str()) {
                let mut q = p.to_vec();
                q.push(Seg::Key(key.clone()));
                return Err(self.doc.error_at(
                    &q,
                    format!(
                        "unknown field {key:?} in {what}, expected one of: {}",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        (dir, p)
    }

    fn load(name: &str, text: &str, server: Option<&str>) -> Result<Catalog> {
        let (_d, p) = file(name, text);
        load_catalogs(&[CatalogSource {
            path: p,
            server: server.map(str::to_string),
        }])
    }

    fn err(name: &str, text: &str) -> String {
        match load(name, text, None) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn tools_list_ids_use_server_or_file_stem() {
        let text = r#"{"tools": [{"name": "create_issue", "description": "d", "inputSchema": {"type": "object"}}]}"#;
        let c = load("gh.json", text, None).unwrap();
        assert_eq!(c.get(0).id, "mcp__gh__create_issue");
        let c = load("gh.json", text, Some("git-hub.v2")).unwrap();
        assert_eq!(c.get(0).id, "mcp__git-hub.v2__create_issue");
        assert_eq!(c.get(0).server.as_deref(), Some("git-hub.v2"));
    }

    #[test]
    fn native_yaml_builtins_and_servers() {
        let text = "builtins:\n  - name: Read\n    description: Read a file.\n    input_schema: {type: object}\n    search_hint: open view\n    should_defer: true\nservers:\n  - name: github\n    always_load: true\n    tools:\n      - name: create_issue\n        inputSchema: {type: object}\n";
        let c = load("cat.yaml", text, None).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(0).id, "Read");
        assert_eq!(c.get(0).search_hint.as_deref(), Some("open view"));
        assert_eq!(c.get(0).should_defer, Some(true));
        assert_eq!(c.get(1).id, "mcp__github__create_issue");
        assert!(c.get(1).always_load);
        assert_eq!(c.get(1).description, "");
    }

    #[test]
    fn anthropic_and_openai_arrays_load_as_builtins() {
        let a =
            r#"[{"name": "get_weather", "description": "w", "input_schema": {"type": "object"}}]"#;
        assert_eq!(load("a.json", a, None).unwrap().get(0).id, "get_weather");
        let o = r#"[{"type": "function", "function": {"name": "f", "description": "x", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}}]"#;
        let c = load("o.json", o, None).unwrap();
        assert_eq!(c.get(0).id, "f");
        assert!(c.get(0).server.is_none());
        assert_eq!(c.get(0).input_schema["properties"]["a"]["type"], "string");
    }

    #[test]
    fn duplicate_ids_name_both_places() {
        let e = err(
            "d.json",
            "{\"tools\": [\n{\"name\": \"a\"},\n{\"name\": \"a\"}\n]}",
        );
        assert!(
            e.contains("d.json:3:1: duplicate tool id \"mcp__d__a\""),
            "{e}"
        );
        assert!(e.contains("first defined at"), "{e}");
    }

    #[test]
    fn missing_name_wrong_schema_and_unknown_field_are_located() {
        let e = err("m.json", "{\"tools\": [\n  {\"description\": \"x\"}]}");
        assert!(
            e.contains("m.json:2:3: missing required field \"name\""),
            "{e}"
        );
        let e = err(
            "s.json",
            "{\"tools\": [{\"name\": \"a\", \"inputSchema\": [1]}]}",
        );
        assert!(
            e.contains("s.json:1:41: inputSchema must be a JSON Schema object"),
            "{e}"
        );
        let e = err("u.yaml", "builtins:\n  - name: Read\n    colour: red\n");
        assert!(e.contains("u.yaml:3:13: unknown field \"colour\""), "{e}");
    }

    #[test]
    fn not_a_catalog_is_an_error() {
        let e = err("x.json", "{\"hello\": 1}");
        assert!(e.contains("not a catalog"), "{e}");
    }

    #[test]
    fn catalog_arg_splits_server_prefix() {
        assert_eq!(
            parse_catalog_arg("github=/no/such/x.json"),
            CatalogSource {
                path: PathBuf::from("/no/such/x.json"),
                server: Some("github".into())
            }
        );
        assert_eq!(parse_catalog_arg("/a/b.json").server, None);
    }
}
