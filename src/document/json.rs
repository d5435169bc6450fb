//! JSON: a `Value` like serde_json's own, except that a key repeated in one object is an error
//! (`StrictJson`), and the positions of every value, found in one pass over text that already
//! parsed (`JsonScan` into `JNode`). Before any of it, `count_values` counts the values of the
//! text in one pass without building anything, against the node budget.

use serde::Deserialize;
use serde_json::{Map, Number, Value};

use super::Seg;
use crate::error::Position;

// ---------------------------------------------------------------------------------------------
// JSON: a `Value` like serde_json's own, except that a key repeated in one object is an error.
// serde_json silently keeps the last one and YAML rejects it; `{"name": "a", "name": "b"}`
// must not quietly become tool "b".

///
/// Objects are built at their exact size (serde_json's own `Value` leaves a one-key object with
/// room for three, 312 bytes of entries instead of 104): a tree of small objects takes about
/// half the memory. Deserializing a `StrictJson` from a `&Value` gives the same tight copy
/// (`TightValue`, used where a loader keeps part of a document).
pub struct StrictJson(pub Value);

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
                items.shrink_to_fit();
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
                // Moved (not copied) into a map of its exact size.
                let mut tight = Map::with_capacity(out.len());
                tight.extend(out);
                Ok(StrictJson(Value::Object(tight)))
            }
        }
        d.deserialize_any(V)
    }
}

// ---------------------------------------------------------------------------------------------
// JSON: the values of a text counted in one pass over its bytes, before anything is built. A
// value is an object, an array, a string (not a key), a number, `true`, `false` or `null`.

/// Counts the values of JSON `text` up to `limit`: `Err(offset)` at the start of the first
/// value past it. Text that is not JSON is counted as far as it goes (the parser reports it);
/// counting stops, `Ok`, at nesting deeper than `max_depth` (the parser refuses that too), so
/// every byte before an `Err` offset is nested at most `max_depth` deep.
pub(super) fn count_values(text: &[u8], limit: u64, max_depth: usize) -> Result<u64, usize> {
    // One entry a container: whether it is an object (whose strings alternate key, value).
    let mut stack: Vec<bool> = Vec::new();
    let mut key_next = false;
    let mut count: u64 = 0;
    let mut i = 0;
    let n = text.len();
    let value_at = |at: usize, count: &mut u64| {
        *count += 1;
        if *count > limit { Err(at) } else { Ok(()) }
    };
    while i < n {
        match text[i] {
            b'"' => {
                if !key_next {
                    value_at(i, &mut count)?;
                }
                i += 1;
                while i < n {
                    match text[i] {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                i += 1;
            }
            b @ (b'{' | b'[') => {
                value_at(i, &mut count)?;
                if stack.len() >= max_depth {
                    return Ok(count);
                }
                stack.push(b == b'{');
                key_next = b == b'{';
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                key_next = false;
                i += 1;
            }
            b',' => {
                key_next = stack.last().copied().unwrap_or(false);
                i += 1;
            }
            b':' => {
                key_next = false;
                i += 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            _ => {
                // A number, true, false or null: one value up to the next delimiter.
                value_at(i, &mut count)?;
                while i < n
                    && !matches!(
                        text[i],
                        b',' | b'}' | b']' | b':' | b'"' | b' ' | b'\t' | b'\n' | b'\r'
                    )
                {
                    i += 1;
                }
            }
        }
    }
    Ok(count)
}

// ---------------------------------------------------------------------------------------------
// JSON: positions of every value, found in one pass over text that already parsed. Built on
// the first `locate` only (most JSON files never need a position), then each lookup walks the
// tree: a scenario or query file locating each of its 100,000 entries stays linear. Recursion
// is safe: serde_json already refused anything nested deeper than MAX_JSON_DEPTH.

#[derive(Debug)]
pub(super) struct JNode {
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
    pub(super) fn position(&self) -> Position {
        Position {
            line: self.line as usize,
            column: self.column as usize,
        }
    }

    /// The `i`th entry of an object (its key and value) or item of an array (no key).
    pub(super) fn child(&self, i: usize) -> Option<(Option<&str>, &JNode)> {
        match &self.kids {
            JKids::Object(entries) => entries.get(i).map(|(k, n)| (Some(k.as_str()), n)),
            JKids::Array(items) => items.get(i).map(|n| (None, n)),
            JKids::Leaf => None,
        }
    }

    pub(super) fn locate(&self, path: &[Seg]) -> Position {
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
pub(super) struct JsonScan<'a> {
    text: &'a str,
    pos: usize,
    line: u32,
    column: u32,
}

impl<'a> JsonScan<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        JsonScan {
            text,
            pos: 0,
            line: 1,
            column: 1,
        }
    }

    pub(super) fn spans(text: &str) -> Option<JNode> {
        JsonScan::new(text).value()
    }

    /// Walks one value, keeping in `path` the way to the innermost value whose span holds
    /// byte `target`: `Some(true)` when found (the path is then complete), `None` when the
    /// text does not parse.
    pub(super) fn find(&mut self, target: usize, path: &mut Vec<Seg>) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b'{' => {
                self.bump();
                self.ws();
                if self.peek()? == b'}' {
                    self.bump();
                    return Some(false);
                }
                loop {
                    self.ws();
                    let key = self.key()?;
                    self.ws();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.bump();
                    path.push(Seg::Key(key));
                    if self.find(target, path)? {
                        return Some(true);
                    }
                    path.pop();
                    self.ws();
                    match self.peek()? {
                        b',' => self.bump(),
                        b'}' => {
                            self.bump();
                            return Some(false);
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.bump();
                self.ws();
                if self.peek()? == b']' {
                    self.bump();
                    return Some(false);
                }
                let mut index = 0;
                loop {
                    path.push(Seg::Index(index));
                    if self.find(target, path)? {
                        return Some(true);
                    }
                    path.pop();
                    index += 1;
                    self.ws();
                    match self.peek()? {
                        b',' => self.bump(),
                        b']' => {
                            self.bump();
                            return Some(false);
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => {
                let start = self.pos;
                self.string()?;
                Some((start..self.pos).contains(&target))
            }
            _ => {
                let start = self.pos;
                self.scalar();
                Some((start..self.pos).contains(&target))
            }
        }
    }

    /// Past a number, `true`, `false` or `null`.
    fn scalar(&mut self) {
        while !matches!(
            self.peek(),
            None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
        ) {
            self.pos += 1;
        }
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
                entries.shrink_to_fit();
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
                items.shrink_to_fit();
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
