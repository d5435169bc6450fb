//! YAML: parsed on a thread with a stack of known size, into a value tree that remembers
//! where each node was written (`YNode`), then turned into a `serde_json::Value`.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Number, Value};

use super::{MAX_YAML_DEPTH, Seg};
use crate::error::{Error, Position, Result};

/// Stack for parsing YAML. The parser recurses a few frames per nesting level, and in a debug
/// build 128 levels can pass 2 MiB: the stack of rayon workers and test threads (a fuzz input
/// overflowed a test thread). Parsing on a thread of known size makes the depth limit, not
/// the caller's thread, decide. Only touched pages are ever allocated.
const YAML_STACK_BYTES: usize = 64 * 1024 * 1024;

pub(super) fn on_big_stack<T: Send>(f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
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

/// YAML 1.2's core schema: only `true` and `false` (any case) are booleans. With YAML 1.1's
/// (the library's default) a schema property or a key named `n`, `y`, `on` or `no` became
/// `false` or `true` without a word, and `description: no` the boolean false.
pub(super) fn parse_yaml(path: &Path, text: &str) -> Result<YNode> {
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! { max_depth: MAX_YAML_DEPTH },
        strict_booleans: true,
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
pub(super) fn nesting_message(msg: &str, limit: usize) -> String {
    if msg.starts_with("recursion limit exceeded") {
        format!("nesting deeper than {limit} levels")
    } else {
        msg.to_string()
    }
}

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
pub(super) struct YNode {
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
    /// The `i`th entry of a mapping (its key and value) or item of a sequence (no key).
    pub(super) fn child(&self, i: usize) -> Option<(Option<&str>, &YNode)> {
        match &self.value {
            YValue::Map(entries) => entries.get(i).map(|(k, n)| (Some(k.as_str()), n)),
            YValue::Seq(items) => items.get(i).map(|n| (None, n)),
            _ => None,
        }
    }

    pub(super) fn position(&self) -> Option<Position> {
        (self.line > 0).then(|| Position {
            line: self.line as usize,
            column: self.column.max(1) as usize,
        })
    }

    pub(super) fn to_value(&self, path: &Path, depth: usize) -> Result<Value> {
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

    /// The first number that YAML `text` (this tree's source) writes as an integer but that
    /// was read as a float because it does not fit 64 bits, with its place and its text.
    /// Floats are rare in catalogs: the line index is built only when one is met.
    /// `path` ends as the way to it.
    pub(super) fn wide_integer<'t>(
        &self,
        text: &'t str,
        lines: &mut Option<Vec<usize>>,
        path: &mut Vec<Seg>,
    ) -> Option<(Position, &'t str)> {
        match &self.value {
            YValue::Float(_) => {
                let starts = lines.get_or_insert_with(|| {
                    std::iter::once(0)
                        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                        .collect()
                });
                let start = *starts.get((self.line as usize).checked_sub(1)?)?;
                let line = &text[start..];
                let from = line
                    .char_indices()
                    .nth((self.column.max(1) - 1) as usize)
                    .map_or(line.len(), |(i, _)| i);
                let token = &line[from..];
                let end = token
                    .find(|c: char| c.is_whitespace() || matches!(c, ',' | ']' | '}' | '#'))
                    .unwrap_or(token.len());
                let token = &token[..end];
                let digits = token.strip_prefix(['-', '+']).unwrap_or(token);
                (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| {
                    (
                        self.position().unwrap_or(Position { line: 1, column: 1 }),
                        token,
                    )
                })
            }
            YValue::Seq(items) => items.iter().enumerate().find_map(|(i, n)| {
                path.push(Seg::Index(i));
                let found = n.wide_integer(text, lines, path);
                if found.is_none() {
                    path.pop();
                }
                found
            }),
            YValue::Map(entries) => entries.iter().find_map(|(k, n)| {
                path.push(Seg::Key(k.clone()));
                let found = n.wide_integer(text, lines, path);
                if found.is_none() {
                    path.pop();
                }
                found
            }),
            _ => None,
        }
    }

    pub(super) fn locate(&self, path: &[Seg]) -> Option<Position> {
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
