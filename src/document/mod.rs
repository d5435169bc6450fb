//! Reading a JSON or YAML input file into a `serde_json::Value` (key order preserved) while
//! keeping a way back to the text: `Document::locate` turns a path inside the value
//! (`tools[3].name`) into a `line:column`, so validation errors found after parsing can still
//! point at the offending place. Used by every loader (catalogs, scenarios, queries).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

mod json;
mod wide;
mod yaml;

pub use wide::{path_at, wide_integer, wide_integer_message};

pub use json::StrictJson as TightValue;
use json::{JNode, JsonScan, StrictJson};
use yaml::{YNode, nesting_message, on_big_stack, parse_yaml};

use crate::error::{Error, Position, Result, position_of_offset};

/// Largest input file we read: far above any real catalog (the largest public one is ~2 MB).
pub const MAX_FILE_BYTES: u64 = crate::input::MAX_INPUT_BYTES;
/// Deepest nesting accepted in YAML.
pub const MAX_YAML_DEPTH: usize = 128;
/// Deepest nesting of arrays and objects accepted in JSON: serde_json refuses its 128th
/// nested container (its recursion limit), so 127 is what loads.
pub const MAX_JSON_DEPTH: usize = 127;
/// Most values (objects, arrays, strings, numbers, booleans, nulls; keys not counted) one JSON
/// input may hold, counted in one pass over the text before anything is built: YAML has its
/// node cap, and without this one a 15 MB catalog of 1.9 million one-key objects took 1.8 GB.
/// At the bound, in its costliest shape (one-key objects), `count` peaks near 0.6 GB and
/// `simulate` near 0.9 GB (tests measure both). A catalog toolbudget generates holds one value
/// per 55 bytes (64 MiB of it is under the bound); an eval result one per 29 bytes, so `eval`
/// refuses to write one past the bound, as it does one past the size limit.
pub const MAX_JSON_NODES: u64 = 2_000_000;

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
                if let Err(at) = json::count_values(text.as_bytes(), MAX_JSON_NODES, MAX_JSON_DEPTH)
                {
                    return Err(too_many_values(path, &text, at));
                }
                let StrictJson(value) =
                    serde_json::from_str(&text).map_err(|e| json_error(path, &e))?;
                if let Some(at) = wide_integer(text.as_bytes()) {
                    return Err(wide_integer_error(path, &text, at));
                }
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
                    let mut place = Vec::new();
                    if let Some((pos, literal)) = node.wide_integer(&text, &mut None, &mut place) {
                        return Err(Error::input(
                            path,
                            Some(pos),
                            with_path(&place, &wide_integer_message(literal)),
                        ));
                    }
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

    /// Where the value at `path` and its parts are written, walked by index in the order
    /// written (`None` when the path is not in the document). Each step is one look-up, so a
    /// reader can place every entry of an object of 100,000 keys in one pass, where a `locate`
    /// per entry searches the keys before it.
    pub fn spans(&self, path: &[Seg]) -> Option<Spans<'_>> {
        let mut node = match &self.yaml_spans {
            Some(node) => SpanNode::Yaml(node),
            None => SpanNode::Json(
                self.json_spans
                    .get_or_init(|| JsonScan::spans(&self.text))
                    .as_ref()?,
            ),
        };
        for seg in path {
            let here = Spans(node);
            node = match seg {
                Seg::Index(i) => match here.entry(*i)? {
                    (None, item) => item.0,
                    (Some(_), _) => return None,
                },
                Seg::Key(k) => {
                    (0..)
                        .map_while(|i| here.entry(i))
                        .find(|(key, _)| *key == Some(k.as_str()))?
                        .1
                        .0
                }
            };
        }
        Some(Spans(node))
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

/// A place in a document's text and the places of its parts ([`Document::spans`]).
#[derive(Clone, Copy)]
pub struct Spans<'d>(SpanNode<'d>);

#[derive(Clone, Copy)]
enum SpanNode<'d> {
    Json(&'d JNode),
    Yaml(&'d YNode),
}

impl<'d> Spans<'d> {
    /// Where this value is written.
    pub fn position(&self) -> Option<Position> {
        match self.0 {
            SpanNode::Json(n) => Some(n.position()),
            SpanNode::Yaml(n) => n.position(),
        }
    }

    /// The `i`th entry of a mapping, with its key, or item of a list (key `None`), in the order
    /// written.
    pub fn entry(&self, i: usize) -> Option<(Option<&'d str>, Spans<'d>)> {
        match self.0 {
            SpanNode::Json(n) => n.child(i).map(|(k, c)| (k, Spans(SpanNode::Json(c)))),
            SpanNode::Yaml(n) => n.child(i).map(|(k, c)| (k, Spans(SpanNode::Yaml(c)))),
        }
    }

    /// The `i`th entry's value when its key is `key` (a reader walking a mapping in order
    /// checks it is where it expects), else `None`.
    pub fn keyed(&self, i: usize, key: &str) -> Option<Spans<'d>> {
        self.entry(i)
            .and_then(|(k, s)| (k == Some(key)).then_some(s))
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

/// YAML reads unquoted `true` and `false` as booleans (YAML 1.2: `yes`, `no`, `on`, `off`
/// are text): where text was expected, say how to keep the word.
fn with_quoting_hint(message: &str) -> String {
    if message.starts_with("invalid type: boolean") && message.contains("expected a string") {
        let word = if message.contains("`true`") {
            "true"
        } else {
            "false"
        };
        format!(
            "{message}; YAML reads unquoted true and false as booleans: put the text in quotes \
             (\"{word}\")"
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

/// An integer literal of JSON `text` (from `path`) at byte range `at` that does not fit 64
/// bits, as a located input error naming its path in the document.
fn wide_integer_error(path: &Path, text: &str, at: std::ops::Range<usize>) -> Error {
    let place = path_at(text, at.start);
    Error::input(
        path,
        Some(position_of_offset(text, at.start)),
        with_path(&place, &wide_integer_message(&text[at])),
    )
}

/// JSON `text` (from `path`) whose value at byte `at` is one past [`MAX_JSON_NODES`], as a
/// located input error naming its path in the document.
fn too_many_values(path: &Path, text: &str, at: usize) -> Error {
    let place = path_at(text, at);
    Error::input(
        path,
        Some(position_of_offset(text, at)),
        with_path(
            &place,
            &format!(
                "the file holds more than {} JSON values (objects, arrays, strings, numbers, \
                 booleans, nulls), the most one input may hold (memory grows with each); split \
                 it into smaller files",
                grouped(MAX_JSON_NODES)
            ),
        ),
    )
}

/// Refuses JSON `bytes` (from `path`) holding more than `limit` values, counted in one pass
/// before anything is built: a located error at the first value past it, with its path. For
/// JSON read by a reader of its own (a cassette; an MCP message), as [`Document::parse`] does
/// for every input document with [`MAX_JSON_NODES`]. Text that is not UTF-8 is left to its
/// parser.
pub fn check_json_values(path: &Path, bytes: &[u8], limit: u64) -> Result<()> {
    match json::count_values(bytes, limit, MAX_JSON_DEPTH) {
        Ok(_) => Ok(()),
        Err(at) => {
            let Ok(text) = std::str::from_utf8(bytes) else {
                return Ok(());
            };
            let place = path_at(text, at);
            Err(Error::input(
                path,
                Some(position_of_offset(text, at)),
                with_path(
                    &place,
                    &format!(
                        "the text holds more than {} JSON values (objects, arrays, strings, \
                         numbers, booleans, nulls), the most it may hold (memory grows with each)",
                        grouped(limit)
                    ),
                ),
            ))
        }
    }
}

/// How many values JSON `bytes` holds, up to `limit`: `Err(offset)` at the first value past
/// it (see [`check_json_values`]).
pub fn json_values_within(bytes: &[u8], limit: u64) -> std::result::Result<u64, usize> {
    json::count_values(bytes, limit, MAX_JSON_DEPTH)
}

/// What makes text toolbudget is about to write unreadable by its own readers: more bytes than
/// any input may hold, or (JSON) more values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    /// Values (true) or bytes (false).
    pub values: bool,
    /// The size computed: every byte or value of the text.
    pub size: u64,
    pub limit: u64,
}

impl TooLarge {
    /// The share of the text that would fit (for "at most about N" advice).
    pub fn fitting_share(&self) -> f64 {
        self.limit as f64 / self.size.max(1) as f64
    }
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.values {
            write!(
                f,
                "would hold {} JSON values, over the {} one input may hold",
                grouped(self.size),
                grouped(self.limit)
            )
        } else {
            write!(
                f,
                "would be {:.1} MiB ({} bytes), over the {} MiB one input may hold",
                self.size as f64 / 1_048_576.0,
                grouped(self.size),
                self.limit / 1_048_576
            )
        }
    }
}

/// Checks text toolbudget is about to write against what its readers accept: at most
/// [`MAX_FILE_BYTES`] bytes and, for a JSON document (`json`), at most [`MAX_JSON_NODES`]
/// values (a JSONL file is read a line at a time). An output past either would be written
/// only for the next command to refuse it.
pub fn readable_back(text: &str, json: bool) -> std::result::Result<(), TooLarge> {
    let bytes = text.len() as u64;
    if bytes > MAX_FILE_BYTES {
        return Err(TooLarge {
            values: false,
            size: bytes,
            limit: MAX_FILE_BYTES,
        });
    }
    if json {
        let values = json::count_values(text.as_bytes(), u64::MAX, usize::MAX).unwrap_or(u64::MAX);
        if values > MAX_JSON_NODES {
            return Err(TooLarge {
                values: true,
                size: values,
                limit: MAX_JSON_NODES,
            });
        }
    }
    Ok(())
}

/// `3000000` → `3,000,000`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
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
    fn yaml_1_1_boolean_words_stay_text_in_keys_and_values() {
        let d = doc(
            "a.yaml",
            "properties:\n  n: {enum: [yes, no, on, off, y, N]}\n  y: 1\n  on: 2\n  Off: 3\n  \
             true: 4\nflags: [true, false, True, FALSE]\n",
        );
        let v = &d.value;
        let keys: Vec<&str> = v["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["n", "y", "on", "Off", "true"]);
        assert_eq!(
            v["properties"]["n"]["enum"],
            serde_json::json!(["yes", "no", "on", "off", "y", "N"])
        );
        assert_eq!(v["flags"], serde_json::json!([true, false, true, false]));
    }

    #[test]
    fn a_wide_yaml_integer_reached_through_an_alias_is_refused_at_its_anchor() {
        for text in [
            "x: &big 18446744073709551616\ny: {maximum: *big}\n",
            "d: &d {maximum: 18446744073709551616}\ny: {type: integer, <<: *d}\n",
            "y: [1, &big\n    -18446744073709551616, *big]\n",
        ] {
            let Err(e) = Document::parse(Path::new("a.yaml"), text.as_bytes().to_vec()) else {
                panic!("{text}: loaded");
            };
            let e = e.to_string();
            assert!(e.contains("does not fit in 64 bits"), "{text}: {e}");
            assert!(
                e.starts_with("a.yaml:1:") || e.starts_with("a.yaml:2:5"),
                "{text}: {e}"
            );
        }
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

    fn refused(name: &str, text: &str) -> String {
        match Document::parse(Path::new(name), text.as_bytes().to_vec()) {
            Ok(d) => panic!("{name} loaded as {}", d.value),
            Err(e) => e.to_string(),
        }
    }

    /// Integers beyond 64 bits would be read as floats (and written back changed): refused
    /// in both syntaxes at their place, the path named; floats and strings of digits are not.
    #[test]
    fn integers_beyond_64_bits_are_refused_where_they_are_written() {
        let e = refused(
            "s.json",
            "{\"tools\": [\n {\"name\": \"a\", \"inputSchema\": {\"maximum\": 18446744073709551616}}]}",
        );
        assert!(
            e.starts_with("s.json:2:43: tools[0].inputSchema.maximum: the integer 18446744073709551616 does not fit in 64 bits"),
            "{e}"
        );
        let e = refused("s.yaml", "a:\n  - {b: 1, c: -9223372036854775809}\n");
        assert!(
            e.starts_with("s.yaml:2:15: a[0].c: the integer -9223372036854775809 does not fit"),
            "{e}"
        );
        let e = refused("s.yaml", "a:\n  b:   +99999999999999999999 # note\n");
        assert!(
            e.starts_with("s.yaml:2:8: a.b: the integer +99999999999999999999"),
            "{e}"
        );
        let d = doc(
            "ok.yaml",
            "a: 18446744073709551615\nb: -9223372036854775808\nc: 1.5e30\nd: '18446744073709551616'\ne: 18446744073709551616.0\n",
        );
        assert_eq!(d.value["a"], u64::MAX);
        assert_eq!(d.value["b"], i64::MIN);
        assert_eq!(d.value["d"], "18446744073709551616");
        let d = doc(
            "ok.json",
            r#"{"a": 18446744073709551615, "b": -9223372036854775808, "c": "18446744073709551616", "d": 1e30}"#,
        );
        assert_eq!(d.value["a"], u64::MAX);
        assert_eq!(d.value["b"], i64::MIN);
    }

    /// The count of values agrees with the parsed tree, keys and text in strings aside.
    #[test]
    fn json_values_are_counted_without_parsing() {
        fn tree(v: &Value) -> u64 {
            1 + match v {
                Value::Array(items) => items.iter().map(tree).sum(),
                Value::Object(map) => map.values().map(tree).sum(),
                _ => 0,
            }
        }
        for text in [
            "1",
            "[]",
            "{}",
            r#"{"a": 1}"#,
            r#"[{"a":1},{"a":{"b":[true,null,"x"]}}]"#,
            r#"{"k,\"{[": "v,:]}", "n": [1e5, -2, "\\"], "o": {}}"#,
            " [ 1 , [ ] , { \"é\" : \"ü\" } ] ",
        ] {
            let want = tree(&serde_json::from_str(text).unwrap());
            assert_eq!(
                json::count_values(text.as_bytes(), u64::MAX, 127),
                Ok(want),
                "{text}"
            );
            if want > 1 {
                assert!(json::count_values(text.as_bytes(), want - 1, 127).is_err());
            }
        }
        // The offset is the first value past the limit; nesting past the depth stops counting.
        assert_eq!(json::count_values(b"[1,2,3]", 3, 127), Err(5));
        assert_eq!(json::count_values(b"[[[[1,2,3]]]]", 100, 3), Ok(4));
    }

    #[test]
    fn non_utf8_and_empty_files_are_errors() {
        assert!(Document::parse(Path::new("x.json"), vec![b'{', 0xff, b'}']).is_err());
        assert!(Document::parse(Path::new("x.yaml"), b"  \n".to_vec()).is_err());
        let d = doc("bom.json", "\u{feff}{\"a\": 1}");
        assert_eq!(d.value["a"], 1);
    }
}
