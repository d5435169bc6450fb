//! JSON: a `Value` like serde_json's own, except that a key repeated in one object is an error
//! (`StrictJson`), and the positions of every value, found in one pass over text that already
//! parsed (`JsonScan` into `JNode`).

use serde::Deserialize;
use serde_json::{Map, Number, Value};

use super::Seg;
use crate::error::Position;

// ---------------------------------------------------------------------------------------------
// JSON: a `Value` like serde_json's own, except that a key repeated in one object is an error.
// serde_json silently keeps the last one and YAML rejects it; `{"name": "a", "name": "b"}`
// must not quietly become tool "b".

pub(super) struct StrictJson(pub(super) Value);

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
