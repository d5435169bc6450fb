//! Loaders for the catalog forms of CONTRACT.md: MCP `tools/list` results, the native
//! catalog (built-ins and servers), and Anthropic / OpenAI `tools` arrays. The form is
//! detected from content. Every problem is reported with file and `line:column`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Deserialize;
use serde::de::Unexpected;
use serde_json::{Value, json};

use super::{Catalog, Origin, ServerFlags, ServerInfo, Tool, mcp_id};
use crate::document::{Document, Seg, with_path};
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
/// when it contains `=`; a file name that is not UTF-8 is always a path.
pub fn parse_catalog_arg(arg: impl AsRef<std::ffi::OsStr>) -> CatalogSource {
    let arg = arg.as_ref();
    if !Path::new(arg).exists()
        && let Some((server, path)) = arg.to_str().and_then(|a| a.split_once('='))
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
    // 100,000 servers. A later entry of the same server wins, as before.
    let descs: HashMap<String, ServerInfo> =
        descs.into_iter().map(|d| (d.name.clone(), d)).collect();
    catalog.set_server_info(&descs);
    Ok(catalog)
}

/// A native server entry's own description and flags.
type ServerDesc = ServerInfo;

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

// ---------------------------------------------------------------------------------------------
// The forms as written. MCP and API tool objects carry keys of their own (title, annotations,
// outputSchema, strict, ...) that are not ours to refuse; the native form is ours, so it
// refuses unknown keys.

/// An MCP `tools/list` tool, also an Anthropic `tools` entry.
#[derive(Deserialize)]
#[serde(expecting = "a tool object")]
struct RawTool {
    name: String,
    description: Option<String>,
    #[serde(rename = "inputSchema")]
    input_schema_camel: Option<SchemaObject>,
    input_schema: Option<SchemaObject>,
    /// Anthropic's tool search: `defer_loading: true` defers the tool.
    defer_loading: Option<bool>,
    /// MCP's `_meta`; Claude Code reads `anthropic/alwaysLoad` from it.
    #[serde(rename = "_meta")]
    meta: Option<RawMeta>,
}

/// The part of an MCP tool's `_meta` that deferral reads; other keys are the server's.
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct RawMeta {
    #[serde(rename = "anthropic/alwaysLoad")]
    always_load: Option<bool>,
}

/// An OpenAI function (Chat Completions' `function` object, or a Responses API tool).
#[derive(Deserialize)]
#[serde(expecting = "a function object")]
struct RawFunction {
    name: String,
    description: Option<String>,
    parameters: Option<SchemaObject>,
    /// OpenAI's tool search: `defer_loading: true` defers the function.
    defer_loading: Option<bool>,
}

/// The keys beside Chat Completions' `function` object that deferral reads.
#[derive(Deserialize)]
#[serde(expecting = "a tool object")]
struct RawWrapper {
    defer_loading: Option<bool>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a native catalog (a mapping with builtins: and/or servers:)"
)]
struct RawNative {
    #[serde(default)]
    builtins: Vec<RawNativeTool>,
    #[serde(default)]
    servers: Vec<RawServer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a server object")]
struct RawServer {
    name: String,
    description: Option<String>,
    always_load: Option<bool>,
    should_defer: Option<bool>,
    search_hint: Option<String>,
    #[serde(default)]
    tools: Vec<RawNativeTool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a tool object")]
struct RawNativeTool {
    name: String,
    description: Option<String>,
    input_schema: Option<SchemaObject>,
    #[serde(rename = "inputSchema")]
    input_schema_camel: Option<SchemaObject>,
    should_defer: Option<bool>,
    always_load: Option<bool>,
    search_hint: Option<String>,
    depends_on: Option<Vec<String>>,
}

/// An MCP / Anthropic tool's flags: `defer_loading` and `_meta`'s `anthropic/alwaysLoad`.
fn raw_flags(t: &RawTool) -> (Option<bool>, bool) {
    let always = t.meta.as_ref().and_then(|m| m.always_load).unwrap_or(false);
    (t.defer_loading, always)
}

/// A tool's input schema: any JSON object.
struct SchemaObject(Value);

impl<'de> Deserialize<'de> for SchemaObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.is_object() {
            return Ok(SchemaObject(v));
        }
        let unexpected = match &v {
            Value::Null => Unexpected::Unit,
            Value::Bool(b) => Unexpected::Bool(*b),
            Value::Number(_) => Unexpected::Other("a number"),
            Value::String(s) => Unexpected::Str(s),
            Value::Array(_) => Unexpected::Seq,
            Value::Object(_) => Unexpected::Map,
        };
        Err(serde::de::Error::invalid_type(
            unexpected,
            &"a JSON Schema object",
        ))
    }
}

/// The first schema given (with the key it was given under), or the schema of a tool that
/// takes no arguments (MCP requires a schema; a tool without one takes none).
fn schema_or_empty(
    first: (&'static str, Option<SchemaObject>),
    second: (&'static str, Option<SchemaObject>),
) -> (Option<&'static str>, Value) {
    match (first, second) {
        ((key, Some(s)), _) | (_, (key, Some(s))) => (Some(key), s.0),
        _ => (None, json!({"type": "object", "properties": {}})),
    }
}

/// Counts the bytes written to it, keeping none.
struct CountingWriter(u64);

impl std::io::Write for CountingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len() as u64);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The length of `schema` as compact JSON (the form a tool is rendered in), counted without
/// building the string.
fn schema_bytes(schema: &Value) -> u64 {
    let mut w = CountingWriter(0);
    // Writing a Value to a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut w, schema);
    w.0
}

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
                self.load_native()
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

    /// A tool's or server's name, refused when blank.
    fn name(&self, p: &[Seg], name: String) -> Result<String> {
        if name.trim().is_empty() {
            let mut q = p.to_vec();
            q.push(Seg::from("name"));
            return Err(self.doc.error_at(&q, with_path(&q, "must not be empty")));
        }
        Ok(name)
    }

    /// A tool's description, refused over `budget::MAX_DESCRIPTION_BYTES` (a 50 MB one took
    /// 2.5 GB to count and 5.6 GB to embed).
    fn description(&self, p: &[Seg], description: Option<String>) -> Result<String> {
        let description = description.unwrap_or_default();
        if let Err(over) = crate::budget::check(
            crate::budget::Kind::DescriptionBytes,
            description.len() as u64,
        ) {
            let mut q = p.to_vec();
            q.push(Seg::from("description"));
            return Err(self.doc.error_at(&q, with_path(&q, &over.to_string())));
        }
        Ok(description)
    }

    /// A tool's input schema, refused over `budget::MAX_SCHEMA_BYTES` as compact JSON (a
    /// 50 MB one was bounded only by the file size limit); `key` is where it was written.
    fn schema(&self, p: &[Seg], name: &str, (key, schema): (Option<&str>, Value)) -> Result<Value> {
        if let Err(over) =
            crate::budget::check(crate::budget::Kind::SchemaBytes, schema_bytes(&schema))
        {
            let mut q = p.to_vec();
            q.extend(key.map(Seg::from));
            return Err(self.doc.error_at(
                &q,
                with_path(&q, &format!("the input schema of tool {name:?} {over}")),
            ));
        }
        Ok(schema)
    }

    /// A tool of the MCP or API forms; its flags are `defer_loading` and MCP `_meta`.
    fn plain_tool(
        &self,
        p: &[Seg],
        server: Option<&str>,
        name: String,
        description: Option<String>,
        input_schema: (Option<&str>, Value),
        flags: (Option<bool>, bool),
    ) -> Result<Tool> {
        let name = self.name(p, name)?;
        let description = self.description(p, description)?;
        let input_schema = self.schema(p, &name, input_schema)?;
        let (should_defer, always_load) = flags;
        self.consistent(p, should_defer, always_load, "defer_loading")?;
        Ok(Tool {
            id: server.map_or_else(|| name.clone(), |s| mcp_id(s, &name)),
            name,
            server: server.map(str::to_string),
            description,
            input_schema,
            should_defer,
            always_load,
            search_hint: None,
            depends_on: Vec::new(),
            origin: self.origin(p),
        })
    }

    /// Refuses `always_load: true` beside a request to defer: the two contradict.
    fn consistent(
        &self,
        p: &[Seg],
        should_defer: Option<bool>,
        always_load: bool,
        key: &str,
    ) -> Result<()> {
        if always_load && should_defer == Some(true) {
            return Err(self.doc.error_at(
                p,
                with_path(
                    p,
                    &format!("always_load: true and {key}: true contradict (choose one)"),
                ),
            ));
        }
        Ok(())
    }

    fn load_tools_list(&self, at: &[Seg], tools: &Value) -> Result<(Vec<Tool>, Vec<ServerDesc>)> {
        let raw: Vec<RawTool> = self.doc.decode(at, tools)?;
        let server = self.server_name();
        if server.is_empty() {
            return Err(self
                .doc
                .error_at(at, "cannot tell the server name: use SERVER=PATH"));
        }
        let mut out = Vec::with_capacity(raw.len());
        for (i, t) in raw.into_iter().enumerate() {
            let mut p = at.to_vec();
            p.push(Seg::Index(i));
            let flags = raw_flags(&t);
            let schema = schema_or_empty(
                ("inputSchema", t.input_schema_camel),
                ("input_schema", t.input_schema),
            );
            out.push(self.plain_tool(&p, Some(&server), t.name, t.description, schema, flags)?);
        }
        Ok((out, Vec::new()))
    }

    fn load_native(&self) -> Result<(Vec<Tool>, Vec<ServerDesc>)> {
        if self.server_override.is_some() {
            return Err(self.doc.error_at(
                &[],
                "SERVER=PATH applies to tools/list files and tools arrays; a native catalog names its servers under servers:",
            ));
        }
        let raw: RawNative = self.doc.decode(&[], &self.doc.value)?;
        let mut out = Vec::new();
        let mut descs = Vec::new();
        for (i, t) in raw.builtins.into_iter().enumerate() {
            out.push(self.native_tool(&path!["builtins", i], t, None, None)?);
        }
        for (si, server) in raw.servers.into_iter().enumerate() {
            let sp = path!["servers", si];
            let name = self.name(&sp, server.name)?;
            let flags = ServerFlags {
                should_defer: server.should_defer,
                always_load: server.always_load.unwrap_or(false),
                search_hint: server.search_hint,
            };
            self.consistent(&sp, flags.should_defer, flags.always_load, "should_defer")?;
            for (ti, t) in server.tools.into_iter().enumerate() {
                let p = path!["servers", si, "tools", ti];
                out.push(self.native_tool(&p, t, Some(&name), flags.search_hint.as_deref())?);
            }
            descs.push(ServerDesc {
                name,
                description: server.description,
                flags,
            });
        }
        Ok((out, descs))
    }

    fn native_tool(
        &self,
        p: &[Seg],
        raw: RawNativeTool,
        server: Option<&str>,
        server_hint: Option<&str>,
    ) -> Result<Tool> {
        let name = self.name(p, raw.name)?;
        let description = self.description(p, raw.description)?;
        let input_schema = self.schema(
            p,
            &name,
            schema_or_empty(
                ("input_schema", raw.input_schema),
                ("inputSchema", raw.input_schema_camel),
            ),
        )?;
        let always_load = raw.always_load.unwrap_or(false);
        self.consistent(p, raw.should_defer, always_load, "should_defer")?;
        Ok(Tool {
            id: server.map_or_else(|| name.clone(), |s| mcp_id(s, &name)),
            name,
            server: server.map(str::to_string),
            description,
            input_schema,
            should_defer: raw.should_defer,
            always_load,
            search_hint: raw.search_hint.or_else(|| server_hint.map(str::to_string)),
            depends_on: raw.depends_on.unwrap_or_default(),
            origin: self.origin(p),
        })
    }

    fn load_api_array(&self, items: &[Value]) -> Result<(Vec<Tool>, Vec<ServerDesc>)> {
        let server = self.server_override;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let p = path![i];
            // OpenAI Chat Completions: {type: function, function: {name, description, parameters}};
            // OpenAI Responses: {type: function, name, description, parameters};
            // Anthropic: {name, description, input_schema}.
            let tool = if let Some(f) = item.get("function") {
                let fp = path![i, "function"];
                let raw: RawFunction = self.doc.decode(&fp, f)?;
                let outer: RawWrapper = self.doc.decode(&p, item)?;
                let schema = schema_or_empty(("parameters", raw.parameters), ("parameters", None));
                let flags = (outer.defer_loading.or(raw.defer_loading), false);
                let mut t =
                    self.plain_tool(&fp, server, raw.name, raw.description, schema, flags)?;
                t.origin = self.origin(&p);
                t
            } else if item.get("type").and_then(Value::as_str) == Some("function") {
                let raw: RawFunction = self.doc.decode(&p, item)?;
                let schema = schema_or_empty(("parameters", raw.parameters), ("parameters", None));
                let flags = (raw.defer_loading, false);
                self.plain_tool(&p, server, raw.name, raw.description, schema, flags)?
            } else {
                let raw: RawTool = self.doc.decode(&p, item)?;
                let flags = raw_flags(&raw);
                let schema = schema_or_empty(
                    ("input_schema", raw.input_schema),
                    ("inputSchema", raw.input_schema_camel),
                );
                self.plain_tool(&p, server, raw.name, raw.description, schema, flags)?
            };
            out.push(tool);
        }
        Ok((out, Vec::new()))
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
        // The server's always_load is the server's, not copied into its tools.
        assert!(!c.get(1).always_load);
        assert!(c.servers()[0].flags.always_load);
        assert_eq!(c.servers()[0].flags.defer(), Some(false));
        assert_eq!(c.get(1).description, "");
    }

    #[test]
    fn server_level_should_defer_and_search_hint_are_accepted() {
        let text = "servers:
  - name: gh
    should_defer: false
    search_hint: git forge
    tools:
      - name: a
      - name: b
        search_hint: own words
        should_defer: true
";
        let c = load("cat.yaml", text, None).unwrap();
        let s = &c.servers()[0];
        assert_eq!(s.flags.should_defer, Some(false));
        assert_eq!(s.flags.defer(), Some(false));
        // A tool without a hint takes its server's; its own wins.
        assert_eq!(c.get(0).search_hint.as_deref(), Some("git forge"));
        assert_eq!(c.get(1).search_hint.as_deref(), Some("own words"));
        assert_eq!(c.get(0).defer(), None);
        assert_eq!(c.get(1).defer(), Some(true));
        // The native writer keeps the server's keys and drops the inherited hint.
        let written = crate::catalog::to_native_json(&c);
        assert_eq!(written.matches("git forge").count(), 1, "{written}");
        let again = load_catalog_bytes(Path::new("w.json"), written.into_bytes(), None).unwrap();
        let flags = |c: &Catalog| -> Vec<(String, Option<bool>, bool, Option<String>)> {
            c.tools()
                .iter()
                .map(|t| {
                    (
                        t.id.clone(),
                        t.should_defer,
                        t.always_load,
                        t.search_hint.clone(),
                    )
                })
                .collect()
        };
        assert_eq!(flags(&again), flags(&c));
        assert_eq!(again.servers(), c.servers());
    }

    #[test]
    fn contradicting_flags_are_refused_where_written() {
        let e = err(
            "c.yaml",
            "servers:\n  - name: gh\n    always_load: true\n    should_defer: true\n",
        );
        assert!(
            e.contains(
                "c.yaml:2:5: servers[0]: always_load: true and should_defer: true contradict"
            ),
            "{e}"
        );
    }

    #[test]
    fn mcp_meta_always_load_and_api_defer_loading_are_read() {
        let text = r#"{"tools": [{"name": "a", "_meta": {"anthropic/alwaysLoad": true, "other": 1}}, {"name": "b", "_meta": {"x": 2}}]}"#;
        let c = load("gh.json", text, None).unwrap();
        assert!(c.get(0).always_load);
        assert_eq!(c.get(0).defer(), Some(false));
        assert_eq!(c.get(1).defer(), None);
        let a = r#"[{"name": "w", "input_schema": {"type": "object"}, "defer_loading": true}, {"name": "v"}]"#;
        let c = load("a.json", a, None).unwrap();
        assert_eq!(c.get(0).should_defer, Some(true));
        assert_eq!(c.get(1).should_defer, None);
        let o = r#"[{"type": "function", "function": {"name": "f"}, "defer_loading": true}, {"type": "function", "name": "g", "defer_loading": false}]"#;
        let c = load("o.json", o, None).unwrap();
        assert_eq!(c.get(0).should_defer, Some(true));
        assert_eq!(c.get(1).should_defer, Some(false));
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
            e.contains("m.json:2:3: tools[0]: missing field `name`"),
            "{e}"
        );
        let e = err(
            "s.json",
            "{\"tools\": [{\"name\": \"a\", \"inputSchema\": [1]}]}",
        );
        assert!(
            e.contains("s.json:1:41: tools[0].inputSchema: invalid type: a list, expected a JSON Schema object"),
            "{e}"
        );
        let e = err("u.yaml", "builtins:\n  - name: Read\n    colour: red\n");
        assert!(
            e.contains("u.yaml:3:13: builtins[0]: unknown field `colour`, expected one of"),
            "{e}"
        );
        let e = err("n.yaml", "servers:\n  - name: ' '\n");
        assert!(
            e.contains("n.yaml:2:11: servers[0].name: must not be empty"),
            "{e}"
        );
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
