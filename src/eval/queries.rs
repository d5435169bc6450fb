//! Labeled query files: JSONL (one `{"id", "query", "expected", "class"?}` object a line), or a
//! JSON or YAML list of the same objects. Loading validates against the catalog, so evaluation
//! never meets an unknown tool: every problem is an input error with `file:line:column`.
//! `expected: []` is a query no tool answers (class `no-match`); a query without `class` gets
//! the one `classes::derive` finds.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::classes;
use crate::budget::{self, Kind};
use crate::catalog::Catalog;
use crate::document::{Document, Seg, json_error};
use crate::error::{Error, Position, Result};
use crate::path;

/// One labeled query, resolved against a catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct LabeledQuery {
    pub id: String,
    pub query: String,
    /// Expected tool ids, in file order, no repeats.
    pub expected: Vec<String>,
    /// Catalog indices of `expected`, same order.
    pub expected_tools: Vec<usize>,
    /// The query's class, as given in the file or derived (`eval::classes`).
    pub class: classes::QueryClass,
    /// Where the query object starts in its file.
    pub position: Position,
}

/// A loaded query file.
#[derive(Debug, Clone)]
pub struct QuerySet {
    pub path: PathBuf,
    pub queries: Vec<LabeledQuery>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a query (a mapping with id, query, expected and an optional class)"
)]
struct RawQuery {
    id: String,
    query: String,
    expected: Vec<String>,
    #[serde(default)]
    class: Option<String>,
}

/// Where a raw query came from, for errors found after parsing.
enum Place<'a> {
    /// JSONL: the line's number and text.
    Line(usize, &'a str),
    /// JSON/YAML list: the document and the item's index.
    Item(&'a Document, usize),
}

impl Place<'_> {
    /// An input error at `sub` (a path inside the query object).
    fn error(&self, path: &Path, sub: &[Seg], message: String) -> Error {
        match self {
            Place::Line(line, text) => {
                // Re-parse the one line only on this error path to find the column.
                let column = Document::parse(path, text.as_bytes().to_vec())
                    .ok()
                    .and_then(|d| d.locate(sub))
                    .map_or(1, |p| p.column);
                Error::input(
                    path,
                    Some(Position {
                        line: *line,
                        column,
                    }),
                    message,
                )
            }
            Place::Item(doc, i) => {
                let mut full = vec![Seg::Index(*i)];
                full.extend_from_slice(sub);
                doc.error_at(&full, message)
            }
        }
    }

    fn start(&self) -> Position {
        match self {
            Place::Line(line, text) => Position {
                line: *line,
                column: text.len() - text.trim_start().len() + 1,
            },
            Place::Item(doc, i) => doc
                .locate(&path![*i])
                .unwrap_or(Position { line: 1, column: 1 }),
        }
    }
}

/// Refuses a query set whose searches times the tools searched (`catalog`: the pool
/// included) are over `budget::MAX_EVAL_WORK`, before any scorer is built.
pub fn check_work(set: &QuerySet, catalog: &Catalog) -> Result<()> {
    let work = (set.queries.len() as u64).saturating_mul(catalog.len() as u64);
    budget::check(Kind::EvalWork, work).map_err(|over| {
        Error::input(
            &set.path,
            None,
            format!(
                "{} queries over {} tools {over}: use fewer queries or a smaller catalog",
                set.queries.len(),
                catalog.len()
            ),
        )
    })
}

/// Charges one query set's search work to the run's `budget` before it is searched: the
/// queries times the tools searched (`catalog`, pool included) times the `scorers`
/// evaluated, plus, when the keyword scorer is among them, each `select:` query's names times
/// the tools. Over the run's budget (`budget::MAX_SEARCH_WORK`, summed over every set of one
/// `eval` or `report`) it is an error naming the set, its share and the run's total.
pub fn charge_work(
    set: &QuerySet,
    catalog: &Catalog,
    scorers: usize,
    keyword: bool,
    budget: &mut budget::Budget,
) -> Result<()> {
    let tools = catalog.len() as u64;
    let pairs = (set.queries.len() as u64)
        .saturating_mul(tools)
        .saturating_mul(scorers as u64);
    let select = if keyword {
        set.queries
            .iter()
            .map(|q| crate::search::keyword::select_names(&q.query))
            .fold(0u64, u64::saturating_add)
            .saturating_mul(tools)
    } else {
        0
    };
    let work = pairs.saturating_add(select);
    budget.charge(Kind::SearchWork, work).map_err(|over| {
        Error::input(
            &set.path,
            None,
            format!(
                "{} queries over {} tools with {scorers} scorers ({work} query × tool pairs{}) \
                 {over}: evaluate fewer query sets or scorers in one run, or use smaller ones",
                set.queries.len(),
                catalog.len(),
                if select > 0 {
                    format!(", {select} of them select: names")
                } else {
                    String::new()
                },
            ),
        )
    })
}

/// Reads `path` and resolves every expected id in `catalog`.
pub fn load_queries(path: &Path, catalog: &Catalog) -> Result<QuerySet> {
    let bytes = crate::input::read(path)?;
    parse_queries(path, bytes, catalog)
}

/// Parses query-file bytes that came from `path` (used in errors and to pick the syntax).
pub fn parse_queries(path: &Path, bytes: Vec<u8>, catalog: &Catalog) -> Result<QuerySet> {
    let is_jsonl = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("jsonl"))
        // A file whose first object is not the whole file is JSONL whatever its name.
        || bytes_start_with_object(&bytes);
    let queries = if is_jsonl {
        parse_jsonl(path, bytes, catalog)?
    } else {
        parse_list(path, bytes, catalog)?
    };
    if queries.is_empty() {
        return Err(Error::input(
            path,
            None,
            "no queries in file, expected at least one {\"id\", \"query\", \"expected\"} object",
        ));
    }
    Ok(QuerySet {
        path: path.to_path_buf(),
        queries,
    })
}

fn bytes_start_with_object(bytes: &[u8]) -> bool {
    let text = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    text.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

fn parse_jsonl(path: &Path, bytes: Vec<u8>, catalog: &Catalog) -> Result<Vec<LabeledQuery>> {
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        // Document reports the first invalid byte with its line and column.
        Err(e) => {
            return Err(Document::parse(path, e.into_bytes())
                .err()
                .unwrap_or_else(|| Error::input(path, None, "file is not valid UTF-8")));
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut checker = Checker::new(path, catalog);
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        // serde reads a JSON list as a struct's fields in order ("expected a string" for
        // `[1]`); a line must be an object, so say that first.
        let first = line.trim_start().chars().next();
        if first != Some('{') {
            let found = match first {
                Some('[') => "a list",
                Some('"') => "a string",
                Some('-' | '0'..='9') => "a number",
                _ => "something else",
            };
            let column = line.len() - line.trim_start().len() + 1;
            return Err(Error::input(
                path,
                Some(Position {
                    line: line_no,
                    column,
                }),
                format!(
                    "invalid query: each line must be a JSON object \
                     {{\"id\", \"query\", \"expected\": [tool ids]}}, found {found}"
                ),
            ));
        }
        let raw: RawQuery = serde_json::from_str(line).map_err(|e| {
            // serde_json counts lines inside the string it parsed: always 1 here.
            let located = json_error(path, &e);
            let column = e.column().max(1);
            match located {
                Error::Input(mut inner) => {
                    inner.position = Some(Position {
                        line: line_no,
                        column,
                    });
                    inner.message = inner.message.replacen("invalid JSON", "invalid query", 1);
                    Error::Input(inner)
                }
                other => other,
            }
        })?;
        checker.add(raw, Place::Line(line_no, line))?;
    }
    Ok(checker.queries)
}

fn parse_list(path: &Path, bytes: Vec<u8>, catalog: &Catalog) -> Result<Vec<LabeledQuery>> {
    let doc = Document::parse(path, bytes)?;
    let Value::Array(items) = &doc.value else {
        return Err(doc.error_at(
            &[],
            "expected a list of {\"id\", \"query\", \"expected\"} objects (or JSONL, one object a line)",
        ));
    };
    let mut checker = Checker::new(path, catalog);
    for (i, item) in items.iter().enumerate() {
        let raw: RawQuery = doc.decode(&path![i], item)?;
        checker.add(raw, Place::Item(&doc, i))?;
    }
    Ok(checker.queries)
}

/// Validates queries one by one: unique ids, non-empty text, known expected tools.
struct Checker<'a> {
    path: &'a Path,
    catalog: &'a Catalog,
    queries: Vec<LabeledQuery>,
    seen: HashMap<String, Position>,
}

impl<'a> Checker<'a> {
    fn new(path: &'a Path, catalog: &'a Catalog) -> Self {
        Checker {
            path,
            catalog,
            queries: Vec::new(),
            seen: HashMap::new(),
        }
    }

    fn add(&mut self, raw: RawQuery, place: Place<'_>) -> Result<()> {
        let path = self.path;
        if let Err(over) = budget::check(Kind::Queries, self.queries.len() as u64 + 1) {
            return Err(Error::input(
                path,
                Some(place.start()),
                format!("the file {over}: split it"),
            ));
        }
        if raw.id.trim().is_empty() {
            return Err(place.error(path, &path!["id"], "query id is empty".into()));
        }
        let start = place.start();
        if let Some(first) = self.seen.get(&raw.id) {
            return Err(place.error(
                path,
                &path!["id"],
                format!(
                    "duplicate query id {:?} (first at line {})",
                    raw.id, first.line
                ),
            ));
        }
        if raw.query.trim().is_empty() {
            return Err(place.error(
                path,
                &path!["query"],
                format!("query {:?} has empty query text", raw.id),
            ));
        }
        self.check_class(&raw, &place)?;
        let mut expected_tools = Vec::with_capacity(raw.expected.len());
        for (j, tool) in raw.expected.iter().enumerate() {
            let Some(index) = self.catalog.index_of(tool) else {
                return Err(place.error(
                    path,
                    &path!["expected", j],
                    format!(
                        "query {:?} expects tool {:?}, which is not in the catalog",
                        raw.id, tool
                    ),
                ));
            };
            if expected_tools.contains(&index) {
                return Err(place.error(
                    path,
                    &path!["expected", j],
                    format!("query {:?} lists tool {:?} twice", raw.id, tool),
                ));
            }
            expected_tools.push(index);
        }
        self.seen.insert(raw.id.clone(), start);
        let class = match raw.class {
            Some(c) => classes::QueryClass::new(&c),
            None => classes::derive(&raw.query, &expected_tools, self.catalog),
        };
        self.queries.push(LabeledQuery {
            id: raw.id,
            query: raw.query,
            expected: raw.expected,
            expected_tools,
            class,
            position: start,
        });
        Ok(())
    }

    /// A given class is a lowercase name, and `no-match` goes with `expected: []` and only
    /// with it (a query no tool answers has nothing else to be).
    fn check_class(&self, raw: &RawQuery, place: &Place<'_>) -> Result<()> {
        let path = self.path;
        let no_match = classes::NO_MATCH.as_str();
        match raw.class.as_deref() {
            Some(c) if !classes::is_valid_name(c) => Err(place.error(
                path,
                &path!["class"],
                format!(
                    "query {:?} has class {c:?}: expected lowercase letters, digits and '-' \
                     (exact-name, partial-name, paraphrase, no-match or a name of your own)",
                    raw.id
                ),
            )),
            Some(c) if c == no_match && !raw.expected.is_empty() => Err(place.error(
                path,
                &path!["class"],
                format!(
                    "query {:?} is {no_match} but expects tools; a {no_match} query has \
                     `expected: []`",
                    raw.id
                ),
            )),
            Some(c) if c != no_match && raw.expected.is_empty() => Err(place.error(
                path,
                &path!["expected"],
                format!(
                    "query {:?} expects no tool but has class {c:?}; give it class {no_match} \
                     or the tools that answer it",
                    raw.id
                ),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::catalog::Tool;

    pub(crate) fn catalog(ids: &[&str]) -> Catalog {
        Catalog::from_tools(
            ids.iter()
                .map(|id| Tool {
                    id: id.to_string(),
                    name: id.to_string(),
                    server: None,
                    description: format!("the {id} tool"),
                    input_schema: serde_json::json!({"type": "object"}),
                    should_defer: None,
                    always_load: false,
                    search_hint: None,
                    depends_on: vec![],
                    origin: None,
                })
                .collect(),
        )
        .unwrap()
    }

    fn parse(name: &str, text: &str) -> Result<QuerySet> {
        parse_queries(
            Path::new(name),
            text.as_bytes().to_vec(),
            &catalog(&["Read", "Bash", "mcp__gh__create_issue"]),
        )
    }

    fn err(name: &str, text: &str) -> String {
        parse(name, text).unwrap_err().to_string()
    }

    #[test]
    fn jsonl_loads_and_resolves() {
        let set = parse(
            "q.jsonl",
            "{\"id\": \"q1\", \"query\": \"read a file\", \"expected\": [\"Read\"]}\n\n\
             {\"id\": \"q2\", \"query\": \"open an issue\", \"expected\": [\"mcp__gh__create_issue\", \"Bash\"]}\n",
        )
        .unwrap();
        assert_eq!(set.queries.len(), 2);
        assert_eq!(set.queries[1].expected_tools, vec![2, 1]);
        assert_eq!(set.queries[1].position, Position { line: 3, column: 1 });
    }

    #[test]
    fn yaml_and_json_lists_load() {
        let y = parse(
            "q.yaml",
            "- id: q1\n  query: read a file\n  expected: [Read]\n- id: q2\n  query: run ls\n  expected:\n    - Bash\n",
        )
        .unwrap();
        assert_eq!(y.queries[1].expected_tools, vec![1]);
        assert_eq!(y.queries[1].position.line, 4);
        let j = parse(
            "q.json",
            "[{\"id\": \"q1\", \"query\": \"read\", \"expected\": [\"Read\"]}]",
        )
        .unwrap();
        assert_eq!(j.queries[0].id, "q1");
    }

    #[test]
    fn unknown_tool_names_query_tool_and_position() {
        let e = err(
            "q.jsonl",
            "{\"id\": \"q1\", \"query\": \"read\", \"expected\": [\"Read\"]}\n\
             {\"id\": \"q2\", \"query\": \"edit\", \"expected\": [\"Read\", \"Edit\"]}\n",
        );
        // column 52 is the opening quote of "Edit" on line 2
        assert_eq!(
            e,
            "q.jsonl:2:52: query \"q2\" expects tool \"Edit\", which is not in the catalog"
        );
        let e = err(
            "q.yaml",
            "- id: q1\n  query: read\n  expected:\n    - Read\n    - Edit\n",
        );
        assert_eq!(
            e,
            "q.yaml:5:7: query \"q1\" expects tool \"Edit\", which is not in the catalog"
        );
    }

    #[test]
    fn malformed_jsonl_line_gives_line_and_column() {
        let e = err(
            "q.jsonl",
            "{\"id\": \"q1\", \"query\": \"read\", \"expected\": [\"Read\"]}\n\
             {\"id\": \"q2\", \"query\": \"read\" \"expected\": []}\n",
        );
        assert!(
            e.starts_with("q.jsonl:2:30: invalid query: expected `,`"),
            "{e}"
        );
        let e = err(
            "q.jsonl",
            "{\"id\": \"q1\", \"query\": 3, \"expected\": [\"Read\"]}\n",
        );
        assert!(
            e.starts_with("q.jsonl:1:23: invalid query: invalid type: integer `3`"),
            "{e}"
        );
        let e = err("q.jsonl", "{\"id\": \"q1\", \"query\": \"x\"}\n");
        assert!(e.contains("missing field `expected`"), "{e}");
        let e = err(
            "q.jsonl",
            "{\"id\": \"q1\", \"query\": \"x\", \"expected\": [\"Read\"], \"extra\": 1}\n",
        );
        assert!(e.contains("unknown field `extra`"), "{e}");
    }

    #[test]
    fn duplicate_ids_and_empty_text_are_errors() {
        let e = err(
            "q.jsonl",
            "{\"id\": \"q1\", \"query\": \"a\", \"expected\": [\"Read\"]}\n\
             {\"id\": \"q1\", \"query\": \"b\", \"expected\": [\"Bash\"]}\n",
        );
        assert_eq!(
            e,
            "q.jsonl:2:8: duplicate query id \"q1\" (first at line 1)"
        );
        let e = err(
            "q.jsonl",
            "{\"id\": \"q1\", \"query\": \"  \", \"expected\": [\"Read\"]}",
        );
        assert_eq!(e, "q.jsonl:1:23: query \"q1\" has empty query text");
        let e = err(
            "q.jsonl",
            "{\"id\": \"q1\", \"query\": \"a\", \"expected\": [\"Read\", \"Read\"]}",
        );
        assert!(e.contains("lists tool \"Read\" twice"), "{e}");
        let e = err("q.json", "{}");
        assert!(e.contains("missing field"), "{e}");
        let e = err("q.yaml", "queries: []\n");
        assert!(e.contains("expected a list"), "{e}");
        let e = err("q.jsonl", "\n\n");
        assert!(e.contains("no queries"), "{e}");
    }

    #[test]
    fn classes_are_given_or_derived_and_no_match_has_no_tools() {
        let set = parse(
            "q.jsonl",
            "{\"id\": \"q1\", \"query\": \"call mcp__gh__create_issue now\", \"expected\": [\"mcp__gh__create_issue\"]}\n\
             {\"id\": \"q2\", \"query\": \"run it\", \"expected\": [\"Bash\"], \"class\": \"typo\"}\n\
             {\"id\": \"q3\", \"query\": \"order a pizza\", \"expected\": []}\n\
             {\"id\": \"q4\", \"query\": \"book a flight\", \"expected\": [], \"class\": \"no-match\"}\n",
        )
        .unwrap();
        let classes: Vec<&str> = set.queries.iter().map(|q| q.class.as_str()).collect();
        assert_eq!(classes, ["exact-name", "typo", "no-match", "no-match"]);
        assert!(set.queries[2].expected_tools.is_empty());
        let e = err(
            "q.jsonl",
            "{\"id\": \"q1\", \"query\": \"a\", \"expected\": [], \"class\": \"paraphrase\"}",
        );
        assert!(
            e.starts_with(
                "q.jsonl:1:40: query \"q1\" expects no tool but has class \"paraphrase\""
            ),
            "{e}"
        );
        let e = err(
            "q.jsonl",
            "{\"id\": \"q1\", \"query\": \"a\", \"expected\": [\"Read\"], \"class\": \"no-match\"}",
        );
        assert!(
            e.starts_with("q.jsonl:1:59: query \"q1\" is no-match"),
            "{e}"
        );
        let e = err(
            "q.yaml",
            "- id: q1\n  query: a\n  expected: [Read]\n  class: Exact Name\n",
        );
        assert!(e.starts_with("q.yaml:4:10: query \"q1\" has class"), "{e}");
    }

    /// The shared data directory, when this checkout has one (`TOOLBUDGET_SHARED_DATA`, else
    /// `../shared/data`); under `TOOLBUDGET_REQUIRE_SHARED=1` (CI) its absence fails the test.
    pub(crate) fn shared_data() -> Option<PathBuf> {
        let p = std::env::var("TOOLBUDGET_SHARED_DATA").map_or_else(
            |_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
            PathBuf::from,
        );
        if p.is_dir() {
            return Some(p);
        }
        let required =
            std::env::var("TOOLBUDGET_REQUIRE_SHARED").is_ok_and(|v| !v.is_empty() && v != "0");
        assert!(
            !required,
            "TOOLBUDGET_REQUIRE_SHARED is set but {} is missing",
            p.display()
        );
        None
    }

    /// The shared labeled sets with their catalogs, loaded once per test binary (a debug
    /// build takes long to load the 1.6 MB catalog; tests share it rather than reload).
    pub(crate) fn shared_sets() -> Option<&'static [(String, Catalog, QuerySet)]> {
        static SETS: std::sync::OnceLock<Option<Vec<(String, Catalog, QuerySet)>>> =
            std::sync::OnceLock::new();
        SETS.get_or_init(|| {
            let dir = shared_data()?;
            Some(
                ["bfcl", "stabletoolbench"]
                    .iter()
                    .map(|name| {
                        let catalog =
                            crate::catalog::load_catalogs(&[crate::catalog::CatalogSource {
                                path: dir.join(format!("catalogs/{name}.json")),
                                server: None,
                            }])
                            .unwrap();
                        let set =
                            load_queries(&dir.join(format!("queries/{name}.jsonl")), &catalog)
                                .unwrap();
                        (name.to_string(), catalog, set)
                    })
                    .collect(),
            )
        })
        .as_deref()
    }

    #[test]
    fn shared_query_sets_resolve_against_their_catalogs() {
        let Some(sets) = shared_sets() else {
            eprintln!("skipped: no shared data (set TOOLBUDGET_SHARED_DATA)");
            return;
        };
        for ((name, catalog, set), count) in sets.iter().zip([1477, 765]) {
            assert_eq!(set.queries.len(), count, "{name}");
            for q in &set.queries {
                assert_eq!(q.expected.len(), q.expected_tools.len());
                for (id, &t) in q.expected.iter().zip(&q.expected_tools) {
                    assert_eq!(&catalog.get(t).id, id);
                }
            }
        }
    }
}
