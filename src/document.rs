//! Reading a JSON or YAML input file into a `serde_json::Value` (key order preserved) while
//! keeping a way back to the text: `Document::locate` turns a path inside the value
//! (`tools[3].name`) into a `line:column`, so validation errors found after parsing can still
//! point at the offending place. Used by every loader (catalogs, scenarios, queries).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Number, Value};

use crate::error::{Error, Position, Result, position_of_offset};

/// Largest input file we read: far above any real catalog (the largest public one is ~2 MB).
pub const MAX_FILE_BYTES: u64 = crate::input::MAX_INPUT_BYTES;
/// Deepest nesting accepted in YAML.
pub const MAX_YAML_DEPTH: usize = 128;
/// Deepest nesting of arrays and objects accepted in JSON: serde_json refuses its 128th
/// nested container (its recursion limit), so 127 is what loads.
pub const MAX_JSON_DEPTH: usize = 127;

/// One step of a path into a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

impl From<&str> for Seg {
    fn from(k: &str) -> Self {
        Seg::Key(k.to_string())
    }
}

impl From<usize> for Seg {
    fn from(i: usize) -> Self {
        Seg::Index(i)
    }
}

/// Builds a path from mixed keys and indices: `path!["tools", 3, "name"]`.
#[macro_export]
macro_rules! path {
    ($($seg:expr),* $(,)?) => { [$($crate::document::Seg::from($seg)),*] };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Json,
    Yaml,
}

/// A parsed input file.
pub struct Document {
    pub path: PathBuf,
    pub syntax: Syntax,
    pub value: Value,
    text: String,
    yaml_spans: Option<YNode>,
    /// JSON only, built by the first `locate`.
    json_spans: std::sync::OnceLock<Option<JNode>>,
}

impl Document {
    /// Reads and parses `path`; the syntax comes from the extension, or from the first
    /// character when the extension says nothing (`{`/`[` mean JSON).
    pub fn read(path: &Path) -> Result<Document> {
        Self::parse(path, crate::input::read(path)?)
    }

    /// Parses bytes that came from `path` (the path only names the source in errors and
    /// picks the syntax by extension).
    pub fn parse(path: &Path, bytes: Vec<u8>) -> Result<Document> {
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let offset = e.utf8_error().valid_up_to();
                let text = String::from_utf8_lossy(e.as_bytes());
                let pos = position_of_offset(&text[..], offset.min(text.len()));
                return Err(Error::input(
                    path,
                    Some(pos),
                    "file is not valid UTF-8 (byte {offset})"
                        .replace("{offset}", &offset.to_string()),
                ));
            }
        };
        // A UTF-8 byte order mark is legal in both syntaxes; drop it so offsets stay simple.
        let text = match text.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_string(),
            None => text,
        };
        if text.trim().is_empty() {
            return Err(Error::input(
                path,
                Some(Position { line: 1, column: 1 }),
                "file is empty, expected a JSON or YAML document",
            ));
        }
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let syntax = match ext.as_deref() {
            Some("json" | "jsonl") => Syntax::Json,
            Some("yaml" | "yml") => Syntax::Yaml,
            _ => match text.trim_start().chars().next() {
                Some('{' | '[') => Syntax::Json,
                _ => Syntax::Yaml,
            },
        };
        match syntax {
            Syntax::Json => {
                let StrictJson(value) =
                    serde_json::from_str(&text).map_err(|e| json_error(path, &e))?;
                Ok(Document {
                    path: path.to_path_buf(),
                    syntax,
                    value,
                    text,
                    yaml_spans: None,
                    json_spans: std::sync::OnceLock::new(),
                })
            }
            Syntax::Yaml => {
                let (node, value) = on_big_stack(|| {
                    let node = parse_yaml(path, &text)?;
                    let value = node.to_value(path, 0)?;
                    Ok((node, value))
                })?;
                Ok(Document {
                    path: path.to_path_buf(),
                    syntax,
                    value,
                    text,
                    yaml_spans: Some(node),
                    json_spans: std::sync::OnceLock::new(),
                })
            }
        }
    }

    /// The `line:column` of the value at `path`, or of the deepest existing ancestor.
    pub fn locate(&self, path: &[Seg]) -> Option<Position> {
        match &self.yaml_spans {
            Some(node) => node.locate(path),
            None => self
                .json_spans
                .get_or_init(|| JsonScan::spans(&self.text))
                .as_ref()
                .map(|root| root.locate(path)),
        }
    }

    /// An input error located at `path` in this document.
    pub fn error_at(&self, path: &[Seg], message: impl Into<String>) -> Error {
        Error::input(&self.path, self.locate(path), message)
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Reads `value`, the node of this document at `at`, into the typed input struct `T`.
    /// A type error, unknown key or missing field becomes an input error at the `line:column`
    /// of the failing node, its message prefixed with the path (`conversation[2].calls[0]`).
    pub fn decode<'v, T: Deserialize<'v>>(&self, at: &[Seg], value: &'v Value) -> Result<T> {
        // Tracking the path costs on every node; read untracked and, on the error path only,
        // read again to learn where it failed (the same input fails at the same place).
        if let Ok(v) = T::deserialize(value) {
            return Ok(v);
        }
        serde_path_to_error::deserialize(value).map_err(|e| {
            let mut path = at.to_vec();
            path.extend(e.path().iter().filter_map(|s| match s {
                serde_path_to_error::Segment::Seq { index } => Some(Seg::Index(*index)),
                serde_path_to_error::Segment::Map { key } => Some(Seg::Key(key.clone())),
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => None,
            }));
            let message = with_quoting_hint(&in_our_words(&e.into_inner().to_string()));
            // An unknown key is located at the key; its message already names it.
            let shown = if message.starts_with("unknown field") {
                &path[..path.len().saturating_sub(1)]
            } else {
                &path[..]
            };
            self.error_at(&path, with_path(shown, &message))
        })
    }
}

/// serde's words for JSON's types, in the words of this tool's docs (which say list and
/// mapping, as YAML does); "variant" is serde's word for the value the user wrote.
fn in_our_words(message: &str) -> String {
    const WORDS: [(&str, &str); 6] = [
        ("unknown variant", "unknown value"),
        ("invalid type: sequence", "invalid type: a list"),
        ("invalid type: map", "invalid type: a mapping"),
        ("expected a sequence", "expected a list"),
        ("expected a map", "expected a mapping"),
        // serde_json's wording when a name was expected (an enum) and something else came.
        ("expected string or map", "expected a name"),
    ];
    WORDS
        .iter()
        .fold(message.to_string(), |m, (from, to)| m.replacen(from, to, 1))
}

/// YAML reads unquoted `y`, `no`, `on`, `off`, `true`, `false` as booleans: where text was
/// expected, say how to keep the word.
fn with_quoting_hint(message: &str) -> String {
    if message.starts_with("invalid type: boolean") && message.contains("expected a string") {
        format!(
            "{message}; YAML reads unquoted y/n/yes/no/on/off/true/false as true or false: \
             put the text in quotes (\"no\")"
        )
    } else {
        message.to_string()
    }
}

/// `conversation[2].calls[0].tool`: a path as the user would write it.
pub fn dotted(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// `message` with `path: ` in front, or alone at the top of the document.
pub fn with_path(path: &[Seg], message: &str) -> String {
    if path.is_empty() {
        message.to_string()
    } else {
        format!("{}: {message}", dotted(path))
    }
}

/// A serde_json syntax error as a located input error.
pub fn json_error(path: &Path, e: &serde_json::Error) -> Error {
    let msg = e.to_string();
    // serde_json appends " at line L column C"; we print the position up front instead.
    let msg = match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    let msg = nesting_message(&msg, MAX_JSON_DEPTH);
    // serde_json says "unexpected end of hex escape" for `\ud800` not followed by its pair.
    let msg =
        if msg == "unexpected end of hex escape" || msg == "lone leading surrogate in hex escape" {
            "a \\u escape is a lone UTF-16 surrogate (\\uD800-\\uDFFF without its pair), which is \
         not a character; write the character itself or a valid surrogate pair"
                .to_string()
        } else {
            msg
        };
    let pos = (e.line() > 0).then(|| Position {
        line: e.line(),
        column: e.column().max(1),
    });
    Error::input(path, pos, format!("invalid JSON: {msg}"))
}

/// Stack for parsing YAML. The parser recurses a few frames per nesting level, and in a debug
/// build 128 levels can pass 2 MiB: the stack of rayon workers and test threads (a fuzz input
/// overflowed a test thread). Parsing on a thread of known size makes the depth limit, not
/// the caller's thread, decide. Only touched pages are ever allocated.
const YAML_STACK_BYTES: usize = 64 * 1024 * 1024;

fn on_big_stack<T: Send>(f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("yaml-parse".into())
            .stack_size(YAML_STACK_BYTES)
            .spawn_scoped(scope, f)
        {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had (a process thread limit): an error, not a crash.
            Err(_) => Err(Error::usage(
                "cannot start a thread to parse YAML (process thread limit reached)",
            )),
        }
    })
}

fn parse_yaml(path: &Path, text: &str) -> Result<YNode> {
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! { max_depth: MAX_YAML_DEPTH },
    };
    serde_saphyr::from_str_with_options::<YNode>(text, options).map_err(|e| {
        let pos = e.location().and_then(|l| {
            (l.line() > 0).then(|| Position {
                line: l.line() as usize,
                column: l.column().max(1) as usize,
            })
        });
        let msg = yaml_message(e.without_snippet()).unwrap_or_else(|| {
            let mut msg = e.without_snippet().to_string();
            // The rendered message may carry its own "line L column C" text; ours comes first.
            if let Some(i) = msg.find(" at line ") {
                msg.truncate(i);
            }
            nesting_message(msg.lines().next().unwrap_or("").trim(), MAX_YAML_DEPTH)
        });
        Error::input(path, pos, format!("invalid YAML: {msg}"))
    })
}

/// Our wording for the YAML errors whose library text names its internals (`budget breached:
/// Nodes { nodes: 250001 }`, `set DuplicateKeyPolicy in Options`): what was exceeded, the limit.
fn yaml_message(e: &serde_saphyr::Error) -> Option<String> {
    use serde_saphyr::budget::BudgetBreach as B;
    let limits = serde_saphyr::Budget::default();
    // An error met while replaying an alias comes wrapped with the alias's place.
    let mut e = e;
    while let serde_saphyr::Error::AliasError { error, .. }
    | serde_saphyr::Error::WithSnippet { error, .. } = e
    {
        e = error;
    }
    Some(match e {
        serde_saphyr::Error::Budget { breach, .. } => match breach {
            B::Depth { .. } => format!("nesting deeper than {MAX_YAML_DEPTH} levels"),
            B::Nodes { .. } => format!(
                "more than {} nodes (each use of an alias counts its whole value again); \
                 write very large catalogs as JSON",
                limits.max_nodes
            ),
            B::Events { .. } => format!(
                "more than {} parser events; write very large catalogs as JSON",
                limits.max_events
            ),
            B::Aliases { .. } => format!("more than {} aliases (*name)", limits.max_aliases),
            B::Anchors { .. } => format!("more than {} anchors (&name)", limits.max_anchors),
            B::AliasAnchorRatio { aliases, anchors } => format!(
                "{aliases} aliases for {anchors} anchors: more than {} uses per anchor looks \
                 like an alias bomb",
                limits.alias_anchor_ratio_multiplier
            ),
            B::ScalarBytes { .. } => format!(
                "more than {} bytes of text in scalars",
                limits.max_total_scalar_bytes
            ),
            B::Documents { .. } => {
                format!("more than {} documents (---)", limits.max_documents)
            }
            B::MergeKeys { .. } => format!("more than {} merge keys (<<)", limits.max_merge_keys),
            other => format!("a YAML size limit was exceeded ({other:?})"),
        },
        serde_saphyr::Error::DuplicateMappingKey { key, .. } => match key {
            Some(k) => format!("duplicate key {k:?} in a mapping"),
            None => "duplicate key in a mapping".to_string(),
        },
        serde_saphyr::Error::MultipleDocuments { .. } => "a second YAML document starts here \
             (a `---` line after content); a file holds one document: remove the `---` or split \
             the file"
            .to_string(),
        serde_saphyr::Error::NonFiniteFloat { value, .. } => {
            format!("non-finite number `{value}` (JSON has no infinity or NaN)")
        }
        _ => return None,
    })
}

/// The parsers' "recursion limit exceeded" says nothing about the input; name the limit.
fn nesting_message(msg: &str, limit: usize) -> String {
    if msg.starts_with("recursion limit exceeded") {
        format!("nesting deeper than {limit} levels")
    } else {
        msg.to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// JSON: a `Value` like serde_json's own, except that a key repeated in one object is an error.
// serde_json silently keeps the last one and YAML rejects it; `{"name": "a", "name": "b"}`
// must not quietly become tool "b".

struct StrictJson(Value);

impl<'de> Deserialize<'de> for StrictJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = StrictJson;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> std::result::Result<StrictJson, E> {
                Ok(StrictJson(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<StrictJson, E> {
                Ok(StrictJson(Value::Number(v.into())))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<StrictJson, E> {
                Ok(StrictJson(Value::Number(v.into())))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<StrictJson, E> {
                Ok(StrictJson(
                    Number::from_f64(v).map_or(Value::Null, Value::Number),
                ))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<StrictJson, E> {
                Ok(StrictJson(Value::String(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<StrictJson, E> {
                Ok(StrictJson(Value::String(v)))
            }
            fn visit_unit<E>(self) -> std::result::Result<StrictJson, E> {
                Ok(StrictJson(Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<StrictJson, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(StrictJson(v)) = seq.next_element()? {
                    items.push(v);
                }
                Ok(StrictJson(Value::Array(items)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<StrictJson, A::Error> {
                let mut out = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if out.contains_key(&key) {
                        return Err(serde::de::Error::custom(format!(
                            "duplicate key {key:?} in an object"
                        )));
                    }
                    let StrictJson(v) = map.next_value()?;
                    out.insert(key, v);
                }
                Ok(StrictJson(Value::Object(out)))
            }
        }
        d.deserialize_any(V)
    }
}

// ---------------------------------------------------------------------------------------------
// YAML: a value tree that remembers where each node was written.

#[derive(Debug)]
enum YValue {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<YNode>),
    Map(Vec<(String, YNode)>),
}

#[derive(Debug)]
struct YNode {
    value: YValue,
    line: u32,
    column: u32,
}

impl<'de> Deserialize<'de> for YNode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let spanned = serde_saphyr::Spanned::<YValue>::deserialize(d)?;
        Ok(YNode {
            value: spanned.value,
            line: spanned.referenced.line() as u32,
            column: spanned.referenced.column() as u32,
        })
    }
}

/// Map keys may be any scalar in YAML; catalogs only use strings, so other scalars are
/// turned into their text.
struct YKey(String);

impl<'de> Deserialize<'de> for YKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = YKey;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a scalar mapping key")
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<YKey, E> {
                Ok(YKey(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<YKey, E> {
                Ok(YKey(v))
            }
            fn visit_bool<E>(self, v: bool) -> std::result::Result<YKey, E> {
                Ok(YKey(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<YKey, E> {
                Ok(YKey(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<YKey, E> {
                Ok(YKey(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<YKey, E> {
                Ok(YKey(v.to_string()))
            }
            fn visit_unit<E>(self) -> std::result::Result<YKey, E> {
                Ok(YKey("null".to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for YValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = YValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_unit<E>(self) -> std::result::Result<YValue, E> {
                Ok(YValue::Null)
            }
            fn visit_none<E>(self) -> std::result::Result<YValue, E> {
                Ok(YValue::Null)
            }
            fn visit_some<D: serde::Deserializer<'de>>(
                self,
                d: D,
            ) -> std::result::Result<YValue, D::Error> {
                YValue::deserialize(d)
            }
            fn visit_bool<E>(self, v: bool) -> std::result::Result<YValue, E> {
                Ok(YValue::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<YValue, E> {
                Ok(YValue::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<YValue, E> {
                Ok(YValue::UInt(v))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<YValue, E> {
                Ok(YValue::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<YValue, E> {
                Ok(YValue::Str(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<YValue, E> {
                Ok(YValue::Str(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<YValue, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<YNode>()? {
                    items.push(item);
                }
                Ok(YValue::Seq(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<YValue, A::Error> {
                let mut entries = Vec::new();
                while let Some(YKey(k)) = map.next_key::<YKey>()? {
                    let v = map.next_value::<YNode>()?;
                    entries.push((k, v));
                }
                Ok(YValue::Map(entries))
            }
        }
        d.deserialize_any(V)
    }
}

impl YNode {
    fn position(&self) -> Option<Position> {
        (self.line > 0).then(|| Position {
            line: self.line as usize,
            column: self.column.max(1) as usize,
        })
    }

    fn to_value(&self, path: &Path, depth: usize) -> Result<Value> {
        if depth > MAX_YAML_DEPTH {
            return Err(Error::input(
                path,
                self.position(),
                format!("nesting deeper than {MAX_YAML_DEPTH} levels"),
            ));
        }
        Ok(match &self.value {
            YValue::Null => Value::Null,
            YValue::Bool(b) => Value::Bool(*b),
            YValue::Int(i) => Value::Number((*i).into()),
            YValue::UInt(u) => Value::Number((*u).into()),
            YValue::Float(f) => match Number::from_f64(*f) {
                Some(n) => Value::Number(n),
                None => {
                    return Err(Error::input(
                        path,
                        self.position(),
                        "non-finite number (.inf or .nan) cannot be rendered as JSON",
                    ));
                }
            },
            YValue::Str(s) => Value::String(s.clone()),
            YValue::Seq(items) => Value::Array(
                items
                    .iter()
                    .map(|n| n.to_value(path, depth + 1))
                    .collect::<Result<_>>()?,
            ),
            YValue::Map(entries) => {
                let mut map = Map::with_capacity(entries.len());
                for (k, n) in entries {
                    map.insert(k.clone(), n.to_value(path, depth + 1)?);
                }
                Value::Object(map)
            }
        })
    }

    fn locate(&self, path: &[Seg]) -> Option<Position> {
        let mut node = self;
        for seg in path {
            let next = match (&node.value, seg) {
                (YValue::Map(entries), Seg::Key(k)) => {
                    entries.iter().find(|(key, _)| key == k).map(|(_, n)| n)
                }
                (YValue::Seq(items), Seg::Index(i)) => items.get(*i),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        node.position()
    }
}

// ---------------------------------------------------------------------------------------------
// JSON: positions of every value, found in one pass over text that already parsed. Built on
// the first `locate` only (most JSON files never need a position), then each lookup walks the
// tree: a scenario or query file locating each of its 100,000 entries stays linear. Recursion
// is safe: serde_json already refused anything nested deeper than MAX_JSON_DEPTH.

#[derive(Debug)]
struct JNode {
    line: u32,
    column: u32,
    kids: JKids,
}

#[derive(Debug)]
enum JKids {
    Leaf,
    Array(Vec<JNode>),
    /// Keys in file order; they are unique (duplicates were refused when parsing).
    Object(Vec<(String, JNode)>),
}

impl JNode {
    fn locate(&self, path: &[Seg]) -> Position {
        let mut node = self;
        for seg in path {
            let next = match (&node.kids, seg) {
                (JKids::Object(entries), Seg::Key(k)) => {
                    entries.iter().find(|(key, _)| key == k).map(|(_, n)| n)
                }
                (JKids::Array(items), Seg::Index(i)) => items.get(*i),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        Position {
            line: node.line as usize,
            column: node.column as usize,
        }
    }
}

/// Walks JSON text, keeping the 1-based line and character column of the current byte.
struct JsonScan<'a> {
    text: &'a str,
    pos: usize,
    line: u32,
    column: u32,
}

impl JsonScan<'_> {
    fn spans(text: &str) -> Option<JNode> {
        JsonScan {
            text,
            pos: 0,
            line: 1,
            column: 1,
        }
        .value()
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            if c == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if c & 0xC0 != 0x80 {
                // Not a UTF-8 continuation byte: a new character.
                self.column += 1;
            }
            self.pos += 1;
        }
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.bump();
        }
    }

    /// At an opening quote: moves past the closing quote.
    fn string(&mut self) -> Option<()> {
        self.bump();
        loop {
            match self.peek()? {
                b'\\' => {
                    self.bump();
                    self.bump();
                }
                b'"' => {
                    self.bump();
                    return Some(());
                }
                _ => self.bump(),
            }
        }
    }

    fn key(&mut self) -> Option<String> {
        let start = self.pos;
        self.string()?;
        let raw = &self.text[start..self.pos];
        if raw.contains('\\') {
            serde_json::from_str(raw).ok()
        } else {
            Some(raw[1..raw.len() - 1].to_string())
        }
    }

    fn value(&mut self) -> Option<JNode> {
        self.ws();
        let (line, column) = (self.line, self.column);
        let kids = match self.peek()? {
            b'{' => {
                self.bump();
                let mut entries = Vec::new();
                self.ws();
                if self.peek()? == b'}' {
                    self.bump();
                } else {
                    loop {
                        self.ws();
                        let key = self.key()?;
                        self.ws();
                        if self.peek()? != b':' {
                            return None;
                        }
                        self.bump();
                        entries.push((key, self.value()?));
                        self.ws();
                        match self.peek()? {
                            b',' => self.bump(),
                            b'}' => {
                                self.bump();
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                JKids::Object(entries)
            }
            b'[' => {
                self.bump();
                let mut items = Vec::new();
                self.ws();
                if self.peek()? == b']' {
                    self.bump();
                } else {
                    loop {
                        items.push(self.value()?);
                        self.ws();
                        match self.peek()? {
                            b',' => self.bump(),
                            b']' => {
                                self.bump();
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                JKids::Array(items)
            }
            b'"' => {
                self.string()?;
                JKids::Leaf
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.bump();
                }
                JKids::Leaf
            }
        };
        Some(JNode { line, column, kids })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, text: &str) -> Document {
        Document::parse(Path::new(name), text.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn json_paths_locate_values() {
        let d = doc(
            "a.json",
            "{\n  \"tools\": [\n    {\"name\": \"x\"},\n    {\"name\": \"y\", \"d\": [1, {\"z\": 2}]}\n  ]\n}",
        );
        assert_eq!(
            d.locate(&path!["tools", 1, "name"]),
            Some(Position {
                line: 4,
                column: 14
            })
        );
        assert_eq!(
            d.locate(&path!["tools", 1, "d", 1, "z"]),
            Some(Position {
                line: 4,
                column: 34
            })
        );
        // A missing key points at the enclosing object.
        assert_eq!(
            d.locate(&path!["tools", 0, "nope"]),
            Some(Position { line: 3, column: 5 })
        );
    }

    #[test]
    fn yaml_paths_locate_values_and_keep_key_order() {
        let d = doc("a.yaml", "builtins:\n  - name: Read\n    z: 1\n    a: 2\n");
        assert_eq!(
            d.locate(&path!["builtins", 0, "name"]),
            Some(Position {
                line: 2,
                column: 11
            })
        );
        let keys: Vec<_> = d.value["builtins"][0]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["name", "z", "a"]);
    }

    #[test]
    fn syntax_errors_carry_positions() {
        let e = Document::parse(Path::new("t.json"), b"{\"a\": [1,".to_vec())
            .err()
            .unwrap();
        let Error::Input(e) = e else { panic!() };
        assert!(e.position.is_some(), "{e}");
        let e = Document::parse(Path::new("t.yaml"), b"a: [1\nb: 2\n".to_vec())
            .err()
            .unwrap();
        let Error::Input(e) = e else { panic!() };
        assert!(e.position.is_some(), "{e}");
        assert!(e.to_string().starts_with("t.yaml:"), "{e}");
    }

    #[test]
    fn non_utf8_and_empty_files_are_errors() {
        assert!(Document::parse(Path::new("x.json"), vec![b'{', 0xff, b'}']).is_err());
        assert!(Document::parse(Path::new("x.yaml"), b"  \n".to_vec()).is_err());
        let d = doc("bom.json", "\u{feff}{\"a\": 1}");
        assert_eq!(d.value["a"], 1);
    }
}
