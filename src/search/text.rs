//! Text handling shared by the scorers: splitting tool names into parts, word tokens, ASCII
//! word-boundary matching, and the argument fields of an input schema.
//!
//! Word boundaries follow JavaScript's `\b` (Claude Code's ToolSearch is JavaScript): a word
//! character is an ASCII letter, digit or `_`; every other character, including non-ASCII
//! letters, is a boundary. This is the regex `(?-u:\b)`.

use serde_json::Value;

use crate::catalog::Tool;

/// `true` for the bytes JavaScript's `\b` treats as word characters.
pub fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Which CamelCase boundaries split a word. Both splits are kept because each scorer's results
/// were measured with its own: the keyword scorer and BM25 split acronyms, the embedding text
/// and the simulated model's name queries do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Camel {
    /// No CamelCase split.
    Off,
    /// Before an uppercase letter that follows a lowercase letter or a digit
    /// (`getHTTPServer` → `get HTTPServer`).
    LowerToUpper,
    /// Also before the last capital of an acronym that starts a word
    /// (`HTTPServer` → `HTTP Server`).
    Acronyms,
}

/// Splits CamelCase at the boundaries `camel` names (`NotebookEdit` → `Notebook Edit`).
/// An empty `s` gives no pieces.
pub fn split_camel(s: &str, camel: Camel) -> Vec<&str> {
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let mut pieces = Vec::new();
    let mut start = 0;
    if camel != Camel::Off {
        for i in 1..chars.len() {
            let (at, c) = chars[i];
            let prev = chars[i - 1].1;
            let acronym_end = camel == Camel::Acronyms
                && prev.is_uppercase()
                && chars.get(i + 1).is_some_and(|&(_, n)| n.is_lowercase());
            let boundary =
                c.is_uppercase() && (prev.is_lowercase() || prev.is_ascii_digit() || acronym_end);
            if boundary {
                pieces.push(&s[start..at]);
                start = at;
            }
        }
    }
    if start < s.len() {
        pieces.push(&s[start..]);
    }
    pieces
}

pub fn is_name_separator(c: char) -> bool {
    c == '_' || c == '-' || c == '.' || c.is_whitespace()
}

/// The lowercase name parts the keyword scorer matches terms against.
///
/// - MCP ids: `mcp__` dropped, split on `__` and `_` (`mcp__slack__send_message` → `slack`,
///   `send`, `message`); no CamelCase split, as in Claude Code.
/// - Built-ins: split on CamelCase and `_` (`NotebookEdit` → `notebook`, `edit`).
/// - Both (ours): also split on `-`, `.` and whitespace. Empty pieces are dropped.
pub fn name_parts(tool: &Tool) -> Vec<String> {
    let mut parts = Vec::new();
    if tool.is_mcp() {
        let rest = strip_prefix_ignore_case(&tool.id, "mcp__").unwrap_or(&tool.id);
        for piece in rest.split(is_name_separator) {
            if !piece.is_empty() {
                parts.push(piece.to_lowercase());
            }
        }
    } else {
        for piece in tool.id.split(is_name_separator) {
            for sub in split_camel(piece, Camel::Acronyms) {
                if !sub.is_empty() {
                    parts.push(sub.to_lowercase());
                }
            }
        }
    }
    parts
}

pub fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    if s.len() >= prefix.len()
        && s.is_char_boundary(prefix.len())
        && s[..prefix.len()].eq_ignore_ascii_case(prefix)
    {
        Some(&s[prefix.len()..])
    } else {
        None
    }
}

/// Lowercase alphanumeric word tokens: split on every non-alphanumeric character (so `_`, `-`,
/// `.` and punctuation separate words), then on CamelCase as `camel` says.
pub fn words(text: &str, camel: Camel, out: &mut Vec<String>) {
    for piece in text.split(|c: char| !c.is_alphanumeric()) {
        for sub in split_camel(piece, camel) {
            out.push(sub.to_lowercase());
        }
    }
}

/// An id or argument name as words, case kept: the `mcp__` prefix dropped, split on `_`, `.`,
/// `-`, whitespace and lower-to-upper case changes (`getUserInfo` → "get User Info").
pub fn name_words(id: &str) -> String {
    let id = id.strip_prefix("mcp__").unwrap_or(id);
    let mut words: Vec<&str> = Vec::new();
    for part in id.split(is_name_separator) {
        words.extend(split_camel(part, Camel::LowerToUpper));
    }
    words.join(" ")
}

/// Common English function words: frequent in long natural-language queries, and saying
/// nothing about which tool is meant.
pub const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "do",
    "does", "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "she", "so", "some",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "us",
    "was", "we", "were", "what", "when", "where", "which", "who", "will", "with", "would", "you",
    "your",
];

/// A plural-only stemmer (a small part of Porter's step 1a): `queries` → `query`,
/// `boxes` → `box`, `files` → `file`; words of 3 letters or fewer, and `-ss`, `-us`, `-is`
/// endings, are kept.
pub fn stem_plural(word: &str) -> String {
    let n = word.len();
    if n <= 3 || !word.is_ascii() {
        return word.to_string();
    }
    if let Some(stem) = word.strip_suffix("ies")
        && n > 4
    {
        return format!("{stem}y");
    }
    if ["sses", "xes", "ches", "shes"]
        .iter()
        .any(|e| word.ends_with(e))
    {
        return word[..n - 2].to_string();
    }
    if word.ends_with('s') && !["ss", "us", "is"].iter().any(|e| word.ends_with(e)) {
        return word[..n - 1].to_string();
    }
    word.to_string()
}

/// Whether `needle` occurs in `haystack` with a word boundary (JavaScript `\b`) on both sides,
/// i.e. whether the regex `(?-u:\b)NEEDLE(?-u:\b)` matches. Checks every occurrence,
/// overlapping ones included. An empty needle never matches.
pub fn contains_word(haystack: &str, needle: &str) -> bool {
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    occurrences_with_boundaries(haystack.as_bytes(), &finder)
        .next()
        .is_some()
}

/// Byte offsets of every occurrence of the finder's needle in `hay` that has a `\b` on both
/// sides. Overlapping occurrences are all tried (`\b` may hold for a later, overlapping one).
pub fn occurrences_with_boundaries<'a>(
    hay: &'a [u8],
    finder: &'a memchr::memmem::Finder<'a>,
) -> impl Iterator<Item = usize> + 'a {
    let needle = finder.needle();
    let mut from = 0;
    std::iter::from_fn(move || {
        if needle.is_empty() {
            return None;
        }
        while from <= hay.len() {
            let at = from + finder.find(&hay[from..])?;
            from = at + 1;
            let end = at + needle.len();
            let left_ok = is_word_byte(needle[0]) != (at > 0 && is_word_byte(hay[at - 1]));
            let right_ok = is_word_byte(needle[needle.len() - 1])
                != (end < hay.len() && is_word_byte(hay[end]));
            if left_ok && right_ok {
                return Some(at);
            }
        }
        None
    })
}

/// The maximal runs of ASCII word characters of `text`: for a needle made only of word
/// characters, `contains_word(text, needle)` holds exactly when the needle is one of them.
pub fn ascii_word_runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// `true` when every byte is an ASCII word character (and there is at least one).
pub fn is_all_word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_word_byte)
}

/// Argument names and argument descriptions of an input schema, walking `properties`
/// recursively (also through `items`, `anyOf`, `oneOf`, `allOf`), in schema order.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SchemaText {
    pub names: Vec<String>,
    pub descriptions: Vec<String>,
}

/// Deep enough for any real schema; stops pathological nesting from recursing without end.
const MAX_SCHEMA_DEPTH: usize = 32;

pub fn schema_text(schema: &Value) -> SchemaText {
    let mut out = SchemaText::default();
    walk_schema(schema, 0, &mut out);
    out
}

fn walk_schema(schema: &Value, depth: usize, out: &mut SchemaText) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            out.names.push(name.clone());
            if let Some(d) = prop.get("description").and_then(Value::as_str)
                && !d.trim().is_empty()
            {
                out.descriptions.push(d.to_string());
            }
            walk_schema(prop, depth + 1, out);
        }
    }
    if let Some(items) = obj.get("items") {
        walk_schema(items, depth + 1, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(list) = obj.get(key).and_then(Value::as_array) {
            for s in list {
                walk_schema(s, depth + 1, out);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Small hand-made tools for the scorers' unit tests.
    use serde_json::{Value, json};

    use crate::catalog::{Catalog, Tool};

    pub fn builtin(name: &str, description: &str) -> Tool {
        tool(name, None, description, json!({"type": "object"}))
    }

    pub fn mcp(server: &str, name: &str, description: &str) -> Tool {
        tool(name, Some(server), description, json!({"type": "object"}))
    }

    pub fn tool(name: &str, server: Option<&str>, description: &str, schema: Value) -> Tool {
        Tool {
            id: match server {
                Some(s) => crate::catalog::mcp_id(s, name),
                None => name.to_string(),
            },
            name: name.to_string(),
            server: server.map(str::to_string),
            description: description.to_string(),
            input_schema: schema,
            should_defer: None,
            always_load: false,
            search_hint: None,
            depends_on: Vec::new(),
            origin: None,
        }
    }

    pub fn catalog(tools: Vec<Tool>) -> std::sync::Arc<Catalog> {
        std::sync::Arc::new(Catalog::from_tools(tools).unwrap())
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn names_split_into_parts() {
        assert_eq!(
            name_parts(&mcp("slack", "send_message", "")),
            ["slack", "send", "message"]
        );
        assert_eq!(
            name_parts(&mcp("codex", "ask_codex", "")),
            ["codex", "ask", "codex"]
        );
        assert_eq!(
            name_parts(&builtin("NotebookEdit", "")),
            ["notebook", "edit"]
        );
        assert_eq!(
            name_parts(&builtin("triangle_properties.get", "")),
            ["triangle", "properties", "get"]
        );
        assert_eq!(
            name_parts(&mcp("my-server", "Get Products", "")),
            ["my", "server", "get", "products"]
        );
        // MCP names keep their case inside a part (no CamelCase split), as in Claude Code.
        assert_eq!(name_parts(&mcp("gh", "getMe", "")), ["gh", "getme"]);
        assert_eq!(
            name_parts(&builtin("HTTPServer2Go", "")),
            ["http", "server2", "go"]
        );
    }

    #[test]
    fn word_tokens_split_on_punctuation_and_camel() {
        let mut out = Vec::new();
        words("Create a new_issue in GitHub's repo.", Camel::Off, &mut out);
        assert_eq!(
            out,
            ["create", "a", "new", "issue", "in", "github", "s", "repo"]
        );
        out.clear();
        words("getUserById", Camel::Acronyms, &mut out);
        assert_eq!(out, ["get", "user", "by", "id"]);
        out.clear();
        words("take-screenshot.v2", Camel::LowerToUpper, &mut out);
        assert_eq!(out, ["take", "screenshot", "v2"]);
    }

    #[test]
    fn acronyms_split_only_when_asked() {
        assert_eq!(
            split_camel("getHTTPServer2Go", Camel::Off),
            ["getHTTPServer2Go"]
        );
        assert_eq!(
            split_camel("getHTTPServer2Go", Camel::LowerToUpper),
            ["get", "HTTPServer2", "Go"]
        );
        assert_eq!(
            split_camel("getHTTPServer2Go", Camel::Acronyms),
            ["get", "HTTP", "Server2", "Go"]
        );
        assert!(split_camel("", Camel::Acronyms).is_empty());
    }

    #[test]
    fn name_words_split_ids() {
        assert_eq!(name_words("mcp__slack__send_message"), "slack send message");
        assert_eq!(name_words("NotebookEdit"), "Notebook Edit");
        assert_eq!(
            name_words("math.triangle_area_heron"),
            "math triangle area heron"
        );
        assert_eq!(
            name_words("mcp__Weather API__Get Forecast"),
            "Weather API Get Forecast"
        );
        assert_eq!(name_words("getUserInfo2Go"), "get User Info2 Go");
        assert_eq!(name_words("MCP__HTTPServer"), "MCP HTTPServer");
    }

    #[test]
    fn plurals_fold_to_their_singular() {
        let cases = [
            ("queries", "query"),
            ("boxes", "box"),
            ("files", "file"),
            ("matches", "match"),
            ("classes", "class"),
            ("class", "class"),
            ("status", "status"),
            ("analysis", "analysis"),
            ("ids", "ids"),
            ("cafés", "cafés"),
        ];
        for (word, stem) in cases {
            assert_eq!(stem_plural(word), stem, "{word}");
        }
    }

    #[test]
    fn boundaries_follow_javascript() {
        assert!(contains_word("read a file", "file"));
        assert!(!contains_word("read files", "file"));
        // As in JavaScript, `\bc++\b` needs a word character right after the `+`.
        assert!(!contains_word("use c++ here", "c++"));
        assert!(contains_word("use c++x", "c++"));
        assert!(!contains_word("use c++here", "c++h"));
        // Overlapping occurrence: the first `a a` is preceded by `x`, the second is fine.
        assert!(contains_word("xa a a", "a a"));
        // Non-ASCII letters are boundaries under JavaScript's ASCII `\b`.
        assert!(contains_word("café", "caf"));
        assert!(!contains_word("abc", ""));
    }

    #[test]
    fn schema_fields_are_walked_recursively() {
        let s = json!({"type": "object", "properties": {
            "owner": {"type": "string", "description": "Repository owner"},
            "filter": {"type": "object", "properties": {
                "label": {"type": "string", "description": "Label name"}}},
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"}}}}
        }});
        let t = schema_text(&s);
        assert_eq!(t.names, ["owner", "filter", "label", "items", "path"]);
        assert_eq!(t.descriptions, ["Repository owner", "Label name"]);
    }

    proptest! {
        #[test]
        fn contains_word_equals_the_regex(hay in "[a-c _.+é-]{0,24}", needle in "[a-c _.+é-]{1,4}") {
            let re = regex::Regex::new(&format!(
                r"(?-u:\b){}(?-u:\b)", regex::escape(&needle))).unwrap();
            prop_assert_eq!(contains_word(&hay, &needle), re.is_match(&hay));
            if is_all_word(&needle) {
                prop_assert_eq!(ascii_word_runs(&hay).any(|w| w == needle), re.is_match(&hay));
            }
        }
    }
}
