//! Loaders for the catalog forms of CONTRACT.md: MCP `tools/list` results, the native
//! catalog (built-ins and servers), and Anthropic / OpenAI `tools` arrays. The form is
//! detected from content. Every problem is reported with file and `line:column`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Deserialize;
use serde::de::Unexpected;
use serde_json::{Value, json};

use super::hosted::{self, BodyShape, Captured, HostedTool, RequestBody};
use super::{Catalog, Origin, ServerFlags, ServerInfo, Tool, mcp_id};
use crate::document::{Document, Seg, TightValue, with_path};
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
    let loaded: Vec<Result<Loaded>> = sources.par_iter().map(load_one).collect();
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
fn assemble(loaded: Vec<Result<Loaded>>) -> Result<Catalog> {
    let mut tools = Vec::new();
    let mut descs = Vec::new();
    let mut captured = Vec::new();
    for r in loaded {
        let l = r?;
        tools.extend(l.tools);
        descs.extend(l.descs);
        captured.extend(l.captured);
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
    catalog.captured = captured;
    Ok(catalog)
}

/// A native server entry's own description and flags.
type ServerDesc = ServerInfo;

/// One file's tools, its servers' own descriptions, and what it held beyond tools.
struct Loaded {
    tools: Vec<Tool>,
    descs: Vec<ServerDesc>,
    captured: Option<Captured>,
}

impl Loaded {
    fn plain((tools, descs): (Vec<Tool>, Vec<ServerDesc>)) -> Loaded {
        Loaded {
            tools,
            descs,
            captured: None,
        }
    }
}

/// What a `tools` array's entries load into: functions, namespaces' descriptions, hosted
/// entries.
#[derive(Default)]
struct ApiTools {
    tools: Vec<Tool>,
    descs: Vec<ServerDesc>,
    hosted: Vec<HostedTool>,
}

/// An OpenAI Responses namespace: functions grouped under a name, listed by it when deferred.
#[derive(Deserialize)]
#[serde(expecting = "a namespace object")]
struct RawNamespace {
    name: String,
    description: Option<String>,
    #[serde(default)]
    tools: Vec<Value>,
}

fn load_one(source: &CatalogSource) -> Result<Loaded> {
    let doc = super::builtin::read(&source.path)?;
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

/// A tool's input schema: any JSON object, copied at its exact size (`TightValue`: serde_json's
/// own copy left each small object three times the room it needs, and a catalog's schemas are
/// most of its memory).
struct SchemaObject(Value);

impl<'de> Deserialize<'de> for SchemaObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let TightValue(v) = TightValue::deserialize(d)?;
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
    fn load(&self) -> Result<Loaded> {
        let v = &self.doc.value;
        match v {
            // A captured request body: `model` beside a `tools` array (a tools/list result
            // has no `model`).
            Value::Object(map)
                if map.contains_key("model") && map.get("tools").is_some_and(Value::is_array) =>
            {
                self.load_body(map)
            }
            Value::Object(map) if map.contains_key("tools") && !map.contains_key("servers") => self
                .load_tools_list(&path!["tools"], &map["tools"])
                .map(Loaded::plain),
            // A raw JSON-RPC response to tools/list: {"jsonrpc", "id", "result": {"tools": [...]}}.
            Value::Object(map)
                if map
                    .get("result")
                    .and_then(|r| r.get("tools"))
                    .is_some_and(Value::is_array) =>
            {
                self.load_tools_list(&path!["result", "tools"], &map["result"]["tools"])
                    .map(Loaded::plain)
            }
            Value::Object(map) if map.contains_key("builtins") || map.contains_key("servers") => {
                self.load_native().map(Loaded::plain)
            }
            Value::Array(items) => {
                let api = self.load_api_array(&[], items)?;
                let captured = (!api.hosted.is_empty()).then(|| Captured {
                    path: self.doc.path.clone(),
                    body: None,
                    hosted: api.hosted,
                });
                Ok(Loaded {
                    tools: api.tools,
                    descs: api.descs,
                    captured,
                })
            }
            _ => Err(self.doc.error_at(
                &[],
                "not a catalog: expected an MCP tools/list result ({\"tools\": [...]}), a native \
                 catalog (builtins:/servers:), an Anthropic/OpenAI tools array, or a captured \
                 request body ({\"model\": ..., \"tools\": [...]})",
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

    /// Refuses a server name that makes ids ambiguous ([`super::server_name_problem`]),
    /// saying where the name came from: `SERVER=` of the argument, or the file's stem.
    fn check_server(&self, at: &[Seg], server: &str) -> Result<()> {
        let Some(problem) = super::server_name_problem(server) else {
            return Ok(());
        };
        let from = if self.server_override.is_some() {
            "the name given for this file: SERVER=PATH, or a scenario's `server:`"
        } else {
            "the name is the file's stem: give another with SERVER=PATH"
        };
        Err(self.doc.error_at(at, format!("{problem} ({from})")))
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
        self.check_server(at, &server)?;
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
            if let Some(problem) = super::server_name_problem(&name) {
                let at = path!["servers", si, "name"];
                return Err(self.doc.error_at(&at, with_path(&at, &problem)));
            }
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

    /// A captured request body: its `tools` array is the catalog; every other key is
    /// recorded as ignored (the command says so).
    fn load_body(&self, map: &serde_json::Map<String, Value>) -> Result<Loaded> {
        let items = map["tools"].as_array().map_or(&[][..], Vec::as_slice);
        let api = self.load_api_array(&path!["tools"], items)?;
        let body = RequestBody {
            shape: body_shape(map, items),
            model: map.get("model").and_then(Value::as_str).map(str::to_string),
            ignored: map
                .keys()
                .filter(|k| *k != "model" && *k != "tools")
                .cloned()
                .collect(),
        };
        Ok(Loaded {
            tools: api.tools,
            descs: api.descs,
            captured: Some(Captured {
                path: self.doc.path.clone(),
                body: Some(body),
                hosted: api.hosted,
            }),
        })
    }

    /// A `tools` array at `at` (empty for a file that is the array).
    fn load_api_array(&self, at: &[Seg], items: &[Value]) -> Result<ApiTools> {
        let mut out = ApiTools {
            tools: Vec::with_capacity(items.len()),
            ..ApiTools::default()
        };
        if let Some(server) = self.server_override {
            self.check_server(at, server)?;
        }
        self.api_items(at, items, self.server_override, &mut out)?;
        Ok(out)
    }

    fn api_items(
        &self,
        at: &[Seg],
        items: &[Value],
        server: Option<&str>,
        out: &mut ApiTools,
    ) -> Result<()> {
        for (i, item) in items.iter().enumerate() {
            let mut p = at.to_vec();
            p.push(Seg::Index(i));
            let kind = item.get("type").and_then(Value::as_str);
            // OpenAI Chat Completions: {type: function, function: {name, description, parameters}};
            // OpenAI Responses: {type: function, name, description, parameters};
            // Anthropic: {name, description, input_schema}, `type` absent or `custom`;
            // a hosted tool: any other `type` (web_search, tool_search_tool_bm25_20251119...).
            let tool = if let Some(f) = item.get("function") {
                let mut fp = p.clone();
                fp.push(Seg::from("function"));
                let raw: RawFunction = self.doc.decode(&fp, f)?;
                let outer: RawWrapper = self.doc.decode(&p, item)?;
                let schema = schema_or_empty(("parameters", raw.parameters), ("parameters", None));
                let flags = (outer.defer_loading.or(raw.defer_loading), false);
                let mut t =
                    self.plain_tool(&fp, server, raw.name, raw.description, schema, flags)?;
                t.origin = self.origin(&p);
                t
            } else if kind == Some("function") {
                let raw: RawFunction = self.doc.decode(&p, item)?;
                let schema = schema_or_empty(("parameters", raw.parameters), ("parameters", None));
                let flags = (raw.defer_loading, false);
                self.plain_tool(&p, server, raw.name, raw.description, schema, flags)?
            } else if kind == Some("namespace") {
                let raw: RawNamespace = self.doc.decode(&p, item)?;
                let name = self.name(&p, raw.name)?;
                if let Some(problem) = super::server_name_problem(&name) {
                    let mut q = p.clone();
                    q.push(Seg::from("name"));
                    return Err(self.doc.error_at(&q, with_path(&q, &problem)));
                }
                let mut tp = p.clone();
                tp.push(Seg::from("tools"));
                self.api_items(&tp, &raw.tools, Some(&name), out)?;
                out.descs.push(ServerDesc {
                    name,
                    description: raw.description,
                    flags: ServerFlags::default(),
                });
                continue;
            } else if let Some(kind) = kind.filter(|k| hosted::is_hosted_type(k)) {
                let name = item.get("name").and_then(Value::as_str).map(str::to_string);
                let defer = item.get("defer_loading").and_then(Value::as_bool);
                let origin = self.origin(&p).expect("the loader always has a path");
                out.hosted.push(hosted::hosted(kind, name, defer, origin));
                continue;
            } else {
                let raw: RawTool = self.doc.decode(&p, item)?;
                let flags = raw_flags(&raw);
                let schema = schema_or_empty(
                    ("input_schema", raw.input_schema),
                    ("inputSchema", raw.input_schema_camel),
                );
                self.plain_tool(&p, server, raw.name, raw.description, schema, flags)?
            };
            out.tools.push(tool);
        }
        Ok(())
    }
}

/// Which API a body was written for, from its tools first, then its other keys.
fn body_shape(map: &serde_json::Map<String, Value>, items: &[Value]) -> BodyShape {
    let kind = |t: &Value| t.get("type").and_then(Value::as_str).map(str::to_string);
    if items.iter().any(|t| t.get("function").is_some()) {
        return BodyShape::OpenAiChat;
    }
    let flat = items
        .iter()
        .any(|t| matches!(kind(t).as_deref(), Some("function" | "namespace")));
    if flat || map.contains_key("input") || map.contains_key("instructions") {
        return BodyShape::OpenAiResponses;
    }
    let anthropic_tool = items.iter().any(|t| {
        t.get("input_schema").is_some()
            || match kind(t) {
                None => true,
                Some(k) => k == "custom" || hosted_provider(&k) == "anthropic",
            }
    });
    if anthropic_tool || map.contains_key("system") {
        return BodyShape::AnthropicMessages;
    }
    if items
        .iter()
        .any(|t| kind(t).is_some_and(|k| hosted_provider(&k) == "openai"))
    {
        return BodyShape::OpenAiResponses;
    }
    BodyShape::Unknown
}

fn hosted_provider(kind: &str) -> &'static str {
    hosted::provider_of(kind)
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
    fn request_bodies_of_each_shape_load_their_tools() {
        let chat = r#"{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}"#;
        let c = load("chat.json", chat, None).unwrap();
        assert_eq!(c.get(0).id, "f");
        let b = c.captured()[0].body.as_ref().unwrap();
        assert_eq!(b.shape, BodyShape::OpenAiChat);
        assert_eq!(b.model.as_deref(), Some("gpt-4o"));
        assert_eq!(b.ignored, ["messages"]);
        let resp = r#"{"model": "gpt-5.4", "input": "hi", "tools": [{"type": "tool_search"},
            {"type": "function", "name": "g", "defer_loading": true}]}"#;
        let c = load("resp.json", resp, None).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c.get(0).should_defer, Some(true));
        assert_eq!(
            c.captured()[0].body.as_ref().unwrap().shape,
            BodyShape::OpenAiResponses
        );
        // An Anthropic body's tools are built-ins, not the file stem's MCP tools.
        let anth = r#"{"model": "claude-sonnet-4-6", "max_tokens": 8, "messages": [],
            "tools": [{"name": "w", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}]}"#;
        let c = load("anth.json", anth, None).unwrap();
        assert_eq!(c.get(0).id, "w");
        assert!(c.get(0).server.is_none());
        let b = c.captured()[0].body.as_ref().unwrap();
        assert_eq!(b.shape, BodyShape::AnthropicMessages);
        assert_eq!(b.ignored, ["max_tokens", "messages"]);
        let note = c.notes().join("\n");
        assert!(
            note.contains(
                "anth.json: a captured Anthropic Messages request body for claude-sonnet-4-6"
            ),
            "{note}"
        );
        assert!(note.ends_with("ignored: max_tokens, messages"), "{note}");
    }

    #[test]
    fn hosted_entries_are_kept_apart_with_their_figures() {
        let a = r#"[{"name": "w"}, {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
            {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
            {"type": "web_search"}, {"type": "something_new"}]"#;
        let c = load("h.json", a, None).unwrap();
        assert_eq!(c.len(), 1);
        let h: Vec<&HostedTool> = c.hosted().collect();
        assert_eq!(h.len(), 4);
        assert!(h[0].search && h[1].search && !h[2].search);
        assert_eq!(h[0].cost.as_ref().map(|c| c.tokens), Some(685));
        assert_eq!(h[1].cost.as_ref().map(|c| c.tokens), Some(710));
        assert_eq!((h[2].provider, h[2].cost.clone()), ("openai", None));
        assert_eq!(h[3].provider, "unknown");
        assert_eq!(h[0].origin.at, [Seg::Index(1)]);
        assert!(c.captured()[0].body.is_none());
        // Plain forms record nothing.
        let c = load("p.json", r#"[{"name": "w"}]"#, None).unwrap();
        assert!(c.captured().is_empty() && c.notes().is_empty());
    }

    #[test]
    fn responses_namespaces_load_as_servers() {
        let text = r#"{"model": "gpt-5.4", "tools": [{"type": "tool_search"}, {"type": "namespace", "name": "crm",
            "description": "Customer records.", "tools": [{"type": "function", "name": "find", "defer_loading": true}]}]}"#;
        let c = load("ns.json", text, None).unwrap();
        assert_eq!(c.get(0).id, "mcp__crm__find");
        assert_eq!(
            c.servers()[0].description.as_deref(),
            Some("Customer records.")
        );
        let e = err(
            "bad.json",
            "{\"model\": \"m\", \"tools\": [\n{\"type\": \"namespace\", \"tools\": []}]}",
        );
        assert!(
            e.contains("bad.json:2:1: tools[0]: missing field `name`"),
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
