//! Query classes: what kind of question a labeled query asks, so a scorer's strengths and
//! failures show per kind instead of averaging out. A query file may name the class
//! (`class: exact-name`); when it does not, it is derived from the text and the labels:
//!
//! - `no-match`: no tool is right (`expected: []`). The scorer should return nothing.
//! - `exact-name`: the query holds every expected tool's name as written (`create_issue`,
//!   `NotebookEdit`, `uber.ride`), case aside, bounded by non-word characters. Only names of
//!   two or more parts count: a one-word name in a sentence is a word match, not a name.
//! - `partial-name`: not exact, but for every expected tool the query has at least half of
//!   its name's parts (rounded up, at least one) as words ("list the issues" for
//!   `list_issues`: `list` matches, `issues` matches).
//! - `paraphrase`: anything else — the query says what the tool does in other words.
//!
//! A query with several expected tools takes the weakest class over them (exact > partial >
//! paraphrase): it is only as easy as its hardest label. Matching is verbatim (lowercased, no
//! stemming), so `issue` does not match the part `issues`.

use crate::catalog::{Catalog, Tool};
use crate::search::text::{self, Camel};

/// A query's class: one this module derives, or a name the query file gives. Written and read
/// as its name (`exact-name`, `typo`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum QueryClass {
    ExactName,
    PartialName,
    Paraphrase,
    NoMatch,
    /// A class a query file names beyond the derived ones.
    Named(String),
}

pub const EXACT_NAME: QueryClass = QueryClass::ExactName;
pub const PARTIAL_NAME: QueryClass = QueryClass::PartialName;
pub const PARAPHRASE: QueryClass = QueryClass::Paraphrase;
pub const NO_MATCH: QueryClass = QueryClass::NoMatch;

/// The derived classes, in the order outputs list them; classes a query file names beyond
/// these follow in order of first appearance.
pub const DERIVED: [QueryClass; 4] = [EXACT_NAME, PARTIAL_NAME, PARAPHRASE, NO_MATCH];

impl QueryClass {
    /// The derived class of that name, else the name as a class of its own.
    pub fn new(name: &str) -> QueryClass {
        DERIVED
            .into_iter()
            .find(|d| d.as_str() == name)
            .unwrap_or_else(|| QueryClass::Named(name.to_string()))
    }

    pub fn as_str(&self) -> &str {
        match self {
            QueryClass::ExactName => "exact-name",
            QueryClass::PartialName => "partial-name",
            QueryClass::Paraphrase => "paraphrase",
            QueryClass::NoMatch => "no-match",
            QueryClass::Named(n) => n,
        }
    }
}

impl From<&str> for QueryClass {
    fn from(name: &str) -> QueryClass {
        QueryClass::new(name)
    }
}

impl std::fmt::Display for QueryClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for QueryClass {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for QueryClass {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(QueryClass::new(&name))
    }
}

/// The class of a query that names none.
pub fn derive(query: &str, expected: &[usize], catalog: &Catalog) -> QueryClass {
    if expected.is_empty() {
        return NO_MATCH;
    }
    let lower = query.to_lowercase();
    let mut words = Vec::new();
    text::words(&lower, Camel::Off, &mut words);
    let strength = |t: usize| name_strength(&lower, &words, catalog.get(t));
    match expected.iter().map(|&t| strength(t)).min().unwrap_or(0) {
        2 => EXACT_NAME,
        1 => PARTIAL_NAME,
        _ => PARAPHRASE,
    }
}

/// 2: the name as written; 1: at least half of its parts as words; 0: neither.
fn name_strength(lower_query: &str, query_words: &[String], tool: &Tool) -> u8 {
    let parts = tool_name_parts(tool);
    let name = tool.name.to_lowercase();
    if parts.len() >= 2 && contains_bounded(lower_query, &name) {
        return 2;
    }
    let found = parts
        .iter()
        .filter(|p| query_words.iter().any(|w| w == *p))
        .count();
    u8::from(!parts.is_empty() && found * 2 >= parts.len())
}

/// The parts of a tool's own name (without its server): split on `_ - .`, whitespace and
/// CamelCase, lowercased.
pub fn tool_name_parts(tool: &Tool) -> Vec<String> {
    let mut parts = Vec::new();
    text::words(&tool.name, Camel::Acronyms, &mut parts);
    parts
}

/// `needle` occurs in `haystack` with no word character (ASCII letter, digit, `_`) on either
/// side.
fn contains_bounded(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let bytes = haystack.as_bytes();
    haystack.match_indices(needle).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + needle.len()).copied();
        !before.is_some_and(text::is_word_byte) && !after.is_some_and(text::is_word_byte)
    })
}

/// Whether `class` is a name a query file may give: lowercase letters, digits and `-`.
pub fn is_valid_name(class: &str) -> bool {
    !class.is_empty()
        && class
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Classes in output order: the derived ones that occur, then the others by first
/// appearance in `classes`.
pub fn ordered<'a>(classes: impl IntoIterator<Item = &'a QueryClass>) -> Vec<QueryClass> {
    let seen: Vec<&QueryClass> = classes.into_iter().fold(Vec::new(), |mut acc, c| {
        if !acc.contains(&c) {
            acc.push(c);
        }
        acc
    });
    let mut out: Vec<QueryClass> = DERIVED.into_iter().filter(|d| seen.contains(&d)).collect();
    out.extend(seen.into_iter().filter(|c| !DERIVED.contains(c)).cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::text::test_support::{builtin, mcp};

    fn catalog() -> Catalog {
        Catalog::from_tools(vec![
            mcp("github", "create_issue", "Open a new issue in a repository"),
            mcp("github", "list_issues", "List issues of a repository"),
            mcp("fetch", "fetch", "Fetch a URL"),
            builtin("NotebookEdit", "Edit a Jupyter notebook cell"),
            builtin("uber.ride", "Book a ride"),
            mcp("k8s", "pods_list_in_namespace", "List pods in a namespace"),
        ])
        .unwrap()
    }

    #[test]
    fn classes_follow_the_name_in_the_query() {
        let c = catalog();
        let class = |q: &str, e: &[usize]| derive(q, e, &c);
        assert_eq!(class("call create_issue for the bug", &[0]), EXACT_NAME);
        assert_eq!(class("CREATE_ISSUE", &[0]), EXACT_NAME);
        assert_eq!(class("use notebookedit", &[3]), EXACT_NAME);
        assert_eq!(class("uber.ride to the airport", &[4]), EXACT_NAME);
        // Bounded: a longer identifier is not the name.
        assert_eq!(class("run create_issues", &[0]), PARTIAL_NAME);
        assert_eq!(class("create an issue", &[0]), PARTIAL_NAME);
        assert_eq!(class("list the issues", &[1]), PARTIAL_NAME);
        // Half of four parts (pods, list, in, namespace) is enough.
        assert_eq!(class("pods in kube-system", &[5]), PARTIAL_NAME);
        assert_eq!(class("namespace", &[5]), PARAPHRASE);
        // One-word names are word matches, never exact.
        assert_eq!(class("fetch this page", &[2]), PARTIAL_NAME);
        assert_eq!(class("open a bug report", &[0]), PARAPHRASE);
        // Verbatim: `issue` is not the part `issues`.
        assert_eq!(class("show one issue", &[1]), PARAPHRASE);
        assert_eq!(class("anything", &[]), NO_MATCH);
        // The weakest label decides.
        assert_eq!(class("create_issue then list them", &[0, 1]), PARTIAL_NAME);
        assert_eq!(class("create_issue and list_issues", &[0, 1]), EXACT_NAME);
        assert_eq!(class("create_issue, and a cab", &[0, 4]), PARAPHRASE);
    }

    #[test]
    fn names_and_order() {
        assert!(is_valid_name("multi-tool2"));
        assert!(!is_valid_name("Exact"));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("a b"));
        let typo = QueryClass::new("typo");
        assert_eq!(
            ordered(&[typo.clone(), NO_MATCH, EXACT_NAME, typo.clone(), PARAPHRASE]),
            [EXACT_NAME, PARAPHRASE, NO_MATCH, typo]
        );
        assert_eq!(QueryClass::new("no-match"), NO_MATCH);
        assert_eq!(
            serde_json::to_string(&QueryClass::new("typo")).unwrap(),
            "\"typo\""
        );
    }
}
