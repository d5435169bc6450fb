//! Tokenizers and the json tool rendering. Which rendering and framing a count uses is a
//! counter's business (`crate::counter`), and so is `ToolTokens`, every tool's count computed once.

mod bpe;

use std::fmt::Write as _;
use std::sync::OnceLock;

use serde_json::Value;

use crate::catalog::Tool;

/// A real BPE tokenizer, compiled in (no download).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tokenizer {
    #[default]
    O200kBase,
    Cl100kBase,
}

impl Tokenizer {
    pub const ALL: [Tokenizer; 2] = [Tokenizer::O200kBase, Tokenizer::Cl100kBase];

    /// The reference implementation (tiktoken-rs) of this vocabulary.
    fn reference(self) -> tiktoken_rs::CoreBPE {
        match self {
            Tokenizer::O200kBase => tiktoken_rs::o200k_base(),
            Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base(),
        }
        .expect("the vocabularies are compiled in")
    }

    fn bpe(self) -> &'static bpe::Bpe {
        static O200K: OnceLock<bpe::Bpe> = OnceLock::new();
        static CL100K: OnceLock<bpe::Bpe> = OnceLock::new();
        let (cell, o200k) = match self {
            Tokenizer::O200kBase => (&O200K, true),
            Tokenizer::Cl100kBase => (&CL100K, false),
        };
        cell.get_or_init(|| bpe::Bpe::from_reference(&self.reference(), o200k))
    }

    /// Number of tokens in `text`; special-token text counts as ordinary text, as it would in
    /// a tool description sent to a model. Equal to tiktoken's `encode_ordinary` count, in
    /// linear time and bounded stack on any text (`bpe.rs` says why and how).
    pub fn count(self, text: &str) -> usize {
        let bpe = self.bpe();
        bpe::LOCAL_REGEX.with(|cells| {
            let regex = cells[self as usize].get_or_init(|| bpe.regex().clone());
            bpe.count(regex, text)
        })
    }
}

crate::named_enum!(Tokenizer, "tokenizer");

/// How a tool definition is turned into text before counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Render {
    /// Compact JSON of `{"name", "description", "input_schema"}` (CONTRACT.md).
    #[default]
    Json,
}

crate::named_enum!(Render, "rendering");

impl Render {
    pub fn render(self, tool: &Tool) -> String {
        match self {
            Render::Json => render_json(tool),
        }
    }
}

/// `{"name":ID,"description":D,"input_schema":S}`: no spaces, UTF-8 kept, schema keys in
/// source order, numbers written as Python's `json.dumps` writes them (the reference counts).
pub fn render_json(tool: &Tool) -> String {
    let mut out = String::with_capacity(64 + tool.description.len() * 2);
    out.push_str("{\"name\":");
    write_json_str(&mut out, &tool.id);
    out.push_str(",\"description\":");
    write_json_str(&mut out, &tool.description);
    out.push_str(",\"input_schema\":");
    write_compact(&mut out, &tool.input_schema);
    out.push('}');
    out
}

/// `{"name":ID,"description":D}`: a tool's searchable surface (name and description, no
/// parameters) in the same compact form as [`render_json`].
pub fn render_surface_json(name: &str, description: &str) -> String {
    let mut out = String::with_capacity(32 + name.len() + description.len() * 2);
    out.push_str("{\"name\":");
    write_json_str(&mut out, name);
    out.push_str(",\"description\":");
    write_json_str(&mut out, description);
    out.push('}');
    out
}

/// Compact JSON of any value with Python-compatible number formatting.
pub fn write_compact(out: &mut String, v: &Value) {
    // Iterative over an explicit stack so a deeply nested schema cannot overflow ours.
    enum Step<'a> {
        Value(&'a Value),
        Raw(&'static str),
        Key(&'a str),
    }
    let mut stack = vec![Step::Value(v)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Raw(s) => out.push_str(s),
            Step::Key(k) => {
                write_json_str(out, k);
                out.push(':');
            }
            Step::Value(v) => match v {
                Value::Null => out.push_str("null"),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Number(n) => write_number(out, n),
                Value::String(s) => write_json_str(out, s),
                Value::Array(items) => {
                    out.push('[');
                    stack.push(Step::Raw("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        if i > 0 {
                            stack.push(Step::Raw(","));
                        }
                    }
                }
                Value::Object(map) => {
                    out.push('{');
                    stack.push(Step::Raw("}"));
                    let entries: Vec<_> = map.iter().collect();
                    for (i, (k, item)) in entries.into_iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        stack.push(Step::Key(k));
                        if i > 0 {
                            stack.push(Step::Raw(","));
                        }
                    }
                }
            },
        }
    }
}

fn write_json_str(out: &mut String, s: &str) {
    // serde_json escapes exactly what Python's json.dumps(ensure_ascii=False) escapes.
    out.push_str(&serde_json::to_string(s).expect("strings always serialize"));
}

fn write_number(out: &mut String, n: &serde_json::Number) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else if let Some(f) = n.as_f64() {
        out.push_str(&python_float_repr(f));
    }
}

/// Python's `repr(float)`: the shortest round-tripping digits, in positional notation when the
/// decimal exponent is in [-4, 16), otherwise `d.ddde+XX` with at least two exponent digits.
pub fn python_float_repr(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    // ryu gives the shortest digits; normalise its output to (sign, digits, exponent).
    let mut buf = ryu::Buffer::new();
    let s = buf.format_finite(f);
    let (neg, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (mantissa, exp) = match s.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (s, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: String = format!("{int_part}{frac_part}");
    let mut point = int_part.len() as i32 + exp; // position of the decimal point in `digits`
    let lead = digits.len() - digits.trim_start_matches('0').len();
    digits.drain(..lead);
    point -= lead as i32;
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let sci_exp = point - 1;
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if (-4..16).contains(&sci_exp) {
        if point <= 0 {
            out.push_str("0.");
            out.push_str(&"0".repeat((-point) as usize));
            out.push_str(digits);
        } else if point as usize >= digits.len() {
            out.push_str(digits);
            out.push_str(&"0".repeat(point as usize - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(
            out,
            "e{}{:02}",
            if sci_exp < 0 { '-' } else { '+' },
            sci_exp.abs()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(id: &str, desc: &str, schema: Value) -> Tool {
        Tool {
            id: id.into(),
            name: id.into(),
            server: None,
            description: desc.into(),
            input_schema: schema,
            should_defer: None,
            always_load: false,
            search_hint: None,
            depends_on: vec![],
            origin: None,
        }
    }

    #[test]
    fn json_rendering_is_compact_ordered_and_keeps_utf8() {
        let schema: Value = serde_json::from_str(
            r#"{"type":"object","properties":{"z":{"type":"string","enum":["a","b"]},"a":{"type":"number","default":1.5}},"required":["z"]}"#,
        )
        .unwrap();
        let t = tool("Read", "Lit un fichier — \"vite\"\n", schema);
        assert_eq!(
            render_json(&t),
            r#"{"name":"Read","description":"Lit un fichier — \"vite\"\n","input_schema":{"type":"object","properties":{"z":{"type":"string","enum":["a","b"]},"a":{"type":"number","default":1.5}},"required":["z"]}}"#
        );
    }

    #[test]
    fn floats_render_like_python() {
        for (f, want) in [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.0, "123456789012345.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (1e100, "1e+100"),
            (2.71, "2.71"),
            (-0.0, "-0.0"),
        ] {
            assert_eq!(python_float_repr(f), want, "{f}");
        }
        assert_eq!(
            {
                let mut s = String::new();
                write_compact(
                    &mut s,
                    &json!({"a": 1e20, "b": -3, "c": 18446744073709551615u64}),
                );
                s
            },
            r#"{"a":1e+20,"b":-3,"c":18446744073709551615}"#
        );
    }

    #[test]
    fn counts_are_real_bpe_counts() {
        // Known values of the reference tiktoken implementation.
        assert_eq!(Tokenizer::Cl100kBase.count("hello world"), 2);
        assert_eq!(Tokenizer::O200kBase.count("hello world"), 2);
        assert_eq!(Tokenizer::O200kBase.count(""), 0);
    }

    #[test]
    fn tokenizer_names_parse() {
        assert_eq!("o200k_base".parse::<Tokenizer>(), Ok(Tokenizer::O200kBase));
        assert!("gpt2".parse::<Tokenizer>().is_err());
    }
}
