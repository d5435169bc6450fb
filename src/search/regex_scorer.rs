//! The `regex` scorer, after the Anthropic API's regex tool search: the query is a pattern of at
//! most [`MAX_PATTERN_CHARS`] characters, compiled case-insensitively with the `regex` crate
//! (linear time; size limits make an oversized pattern an error rather than a memory blow-up).
//!
//! A tool matches when the pattern is found in one of its fields, tested one string at a time:
//! name (the id or the bare tool name), description, argument names, argument descriptions
//! (all of `input_schema.properties`, nested ones too, precomputed per tool). The score is the
//! weight of the best field that matched plus [`EXTRA_FIELD_BONUS`] for each other field that
//! matched; the bonus total stays below 1, so the best field always decides the order:
//! name 4 > description 3 > argument names 2 > argument descriptions 1.
//!
//! Speed: a pattern is not run over every tool. The literals any match must begin with are
//! extracted from the pattern (`regex-syntax`, case variants included), lowercased, and looked
//! up with aho-corasick in one lowercase copy of all tools' text; only tools containing one of
//! them are tested with the regex. Literals of three bytes or more are looked up in a trigram
//! index of that text instead (`trigram.rs`), so such a query reads no catalog text at all. A
//! pattern with no required literal (`\w+`, `.*`) scans every tool.

use super::Field;
use std::sync::Arc;

use aho_corasick::AhoCorasick;
use regex::{Regex, RegexBuilder};
use regex_syntax::hir::literal::Extractor;

use super::text::{SchemaText, schema_text};
use super::trigram::TrigramIndex;
use super::{
    Contribution, Explanation, Hit, Scorer, ScorerKind, SearchError, SearchOutcome, SearchRequest,
    rank_hits,
};
use crate::catalog::Catalog;
use crate::error::InputError;

pub const MAX_PATTERN_CHARS: usize = 200;
/// Compiled program size limit: a pattern like `a{1000}{1000}` errors instead of growing.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
pub const REGEX_DFA_SIZE_LIMIT: usize = 1 << 20;
pub const NAME_WEIGHT: f64 = 4.0;
pub const DESCRIPTION_WEIGHT: f64 = 3.0;
pub const ARGUMENT_NAME_WEIGHT: f64 = 2.0;
pub const ARGUMENT_DESCRIPTION_WEIGHT: f64 = 1.0;
/// Per matched field beyond the best one (at most 3 × 0.25 = 0.75 < 1).
pub const EXTRA_FIELD_BONUS: f64 = 0.25;

/// The fields a pattern is tried on, best first.
const FIELDS: [(Field, f64); 4] = [
    (Field::Name, NAME_WEIGHT),
    (Field::Description, DESCRIPTION_WEIGHT),
    (Field::ArgumentNames, ARGUMENT_NAME_WEIGHT),
    (Field::ArgumentDescriptions, ARGUMENT_DESCRIPTION_WEIGHT),
];

struct ToolFields {
    names: [String; 2],
    description: String,
    arguments: SchemaText,
}

impl ToolFields {
    /// The strings of field `f` (an index into [`FIELDS`]).
    fn strings(&self, f: usize) -> &[String] {
        match f {
            0 => &self.names,
            1 => std::slice::from_ref(&self.description),
            2 => &self.arguments.names,
            _ => &self.arguments.descriptions,
        }
    }

    /// Indices of the fields where `re` matches, best first.
    fn matched(&self, re: &Regex) -> Vec<usize> {
        (0..FIELDS.len())
            .filter(|&f| self.strings(f).iter().any(|s| re.is_match(s)))
            .collect()
    }
}

pub struct RegexScorer {
    catalog: Arc<Catalog>,
    fields: Vec<ToolFields>,
    /// Every tool's field strings, lowercased character by character, `\n`-separated, tool
    /// after tool: the haystack of the literal prefilter.
    folded: String,
    /// Where each tool's text starts in `folded`, plus its end: `catalog.len() + 1` offsets.
    starts: Vec<usize>,
    /// Trigram postings of `folded`: literals of three bytes or more are looked up here
    /// instead of scanning `folded`.
    trigrams: TrigramIndex,
}

/// Maps each character to one representative of its case-insensitive class (the simple case
/// folding the regex crate uses), one character at a time, so that `fold(a + b) == fold(a) +
/// fold(b)` and case variants fold alike: a literal found in a text in any case is found,
/// folded, in the folded text. A class with an ASCII letter folds to that letter in lowercase
/// (`K`, `k` and the Kelvin sign to `k`; `ſ` to `s`); any other class to its smallest member
/// (`Σ`, `σ` and `ς` to `Σ`).
fn fold_into(text: &str, out: &mut String) {
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(fold_non_ascii(c));
        }
    }
}

fn fold_non_ascii(c: char) -> char {
    use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};
    let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
    class.case_fold_simple();
    let members = || class.iter().flat_map(|r| r.start()..=r.end());
    match members().find(char::is_ascii) {
        Some(a) => a.to_ascii_lowercase(),
        None => members().next().unwrap_or(c),
    }
}

/// The folded literals one of which every match of `pattern` begins with; `None` when the
/// pattern has no such finite set (then every tool must be tested).
fn required_literals(pattern: &str) -> Option<Vec<String>> {
    // Parsed case-sensitively: a case-insensitive match is a case variant of a case-sensitive
    // one, so it begins with a variant of one of these literals, which folds to the same
    // string. (Extracting from the case-insensitive pattern would list every variant, and the
    // extractor cuts such sets short after a few characters.)
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let seq = Extractor::new().extract(&hir);
    let mut folded = std::collections::BTreeSet::new();
    for lit in seq.literals()? {
        // A literal trimmed by the extractor's limits may end inside a character: keep its
        // whole characters (a prefix of a required prefix is still required).
        let bytes = lit.as_bytes();
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).ok()?,
        };
        if text.is_empty() {
            return None;
        }
        let mut f = String::new();
        fold_into(text, &mut f);
        folded.insert(f);
    }
    (!folded.is_empty()).then(|| folded.into_iter().collect())
}

/// Compiles a query the way the scorer does; errors are input errors with the crate's message.
pub fn compile(pattern: &str) -> Result<Regex, InputError> {
    let chars = pattern.chars().count();
    if chars > MAX_PATTERN_CHARS {
        return Err(InputError::usage(format!(
            "regex pattern is {chars} characters long; at most {MAX_PATTERN_CHARS} are allowed"
        )));
    }
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            InputError::usage(format!(
                "invalid regex pattern {pattern:?}: {}",
                regex_error_text(&e)
            ))
        })
}

/// The regex crate's syntax errors are several lines (the pattern, a caret line, `error: ..`);
/// an error message must be one line, so keep the reason and say where the caret pointed.
fn regex_error_text(e: &regex::Error) -> String {
    match e {
        regex::Error::Syntax(text) => {
            let lines: Vec<&str> = text.lines().collect();
            let reason = lines
                .iter()
                .rev()
                .find_map(|l| l.strip_prefix("error: "))
                .unwrap_or(text.as_str())
                .trim();
            // One-line patterns print as: header, "    PATTERN", "    ^^^", "error: ...".
            let caret = (lines.len() == 4)
                .then(|| lines[2].strip_prefix("    "))
                .flatten()
                .and_then(|l| l.find('^'));
            match caret {
                Some(i) => format!("{reason} (at character {})", i + 1),
                None => reason.replace('\n', " "),
            }
        }
        regex::Error::CompiledTooBig(limit) => {
            format!("the compiled pattern exceeds the size limit of {limit} bytes")
        }
        other => other.to_string().replace('\n', " "),
    }
}

fn score_of(matched: &[usize]) -> f64 {
    match matched.first() {
        Some(&best) => FIELDS[best].1 + EXTRA_FIELD_BONUS * (matched.len() - 1) as f64,
        None => 0.0,
    }
}

impl RegexScorer {
    pub fn new(catalog: Arc<Catalog>) -> RegexScorer {
        let fields = catalog
            .tools()
            .iter()
            .map(|t| ToolFields {
                names: [t.id.clone(), t.name.clone()],
                description: t.description.clone(),
                arguments: schema_text(&t.input_schema),
            })
            .collect::<Vec<ToolFields>>();
        let mut folded = String::new();
        let mut starts = Vec::with_capacity(fields.len() + 1);
        for f in &fields {
            starts.push(folded.len());
            for s in (0..FIELDS.len()).flat_map(|i| f.strings(i)) {
                fold_into(s, &mut folded);
                folded.push('\n');
            }
        }
        starts.push(folded.len());
        let trigrams = TrigramIndex::new(folded.as_bytes(), &starts);
        RegexScorer {
            catalog,
            fields,
            folded,
            starts,
            trigrams,
        }
    }

    /// Tools whose text contains one of `literals`, ascending. One search per hit tool: after a
    /// hit the search resumes at the next tool's start.
    fn tools_containing(&self, literals: &[String]) -> Option<Vec<usize>> {
        // One literal (the usual case once case variants are folded): memmem's SIMD search;
        // several: aho-corasick, whose packed (Teddy) searcher handles small sets.
        let single = (literals.len() == 1).then(|| memchr::memmem::Finder::new(&literals[0]));
        let ac = match single {
            Some(_) => None,
            None => Some(
                AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                    .build(literals)
                    .ok()?,
            ),
        };
        let hay = self.folded.as_bytes();
        let mut tools = Vec::new();
        let mut pos = 0;
        while pos < hay.len() {
            let found = match (&single, &ac) {
                (Some(f), _) => f.find(&hay[pos..]).map(|at| pos + at),
                (None, Some(ac)) => ac
                    .find(aho_corasick::Input::new(hay).span(pos..hay.len()))
                    .map(|m| m.start()),
                (None, None) => None,
            };
            let Some(at) = found else { break };
            // The last start at or before the match: the tool it begins in.
            let tool = self.starts.partition_point(|&s| s <= at) - 1;
            tools.push(tool);
            pos = self.starts[tool + 1];
        }
        Some(tools)
    }

    /// Tools holding every trigram of one of `literals`, ascending; `None` when one literal
    /// is too short for the index.
    fn tools_with_trigrams(&self, literals: &[String]) -> Option<Vec<usize>> {
        let mut tools: Vec<u32> = Vec::new();
        for lit in literals {
            tools.extend(self.trigrams.candidates(lit.as_bytes())?);
        }
        tools.sort_unstable();
        tools.dedup();
        Some(tools.into_iter().map(|t| t as usize).collect())
    }

    /// The tools worth testing with the regex: those the trigram index allows when every
    /// required literal is long enough, else those whose text contains one of the literals,
    /// else all of them.
    fn candidates(&self, pattern: &str) -> Vec<usize> {
        required_literals(pattern)
            .and_then(|lits| {
                self.tools_with_trigrams(&lits)
                    .or_else(|| self.tools_containing(&lits))
            })
            .unwrap_or_else(|| (0..self.fields.len()).collect())
    }
}

impl Scorer for RegexScorer {
    fn name(&self) -> String {
        ScorerKind::Regex.name().to_string()
    }

    fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError> {
        let re = compile(request.query)?;
        let hits = self
            .candidates(request.query)
            .into_iter()
            .filter(|&i| request.is_candidate(i))
            .filter_map(|i| {
                let score = score_of(&self.fields[i].matched(&re));
                (score > 0.0).then_some(Hit { tool: i, score })
            })
            .collect();
        Ok(SearchOutcome {
            hits: rank_hits(&self.catalog, hits, request.limit),
            not_found: Vec::new(),
            ambiguous: Vec::new(),
            total_tools: request.searchable(self.catalog.len()),
            reported_us: None,
        })
    }

    fn explain_tool(
        &self,
        request: &SearchRequest<'_>,
        tool: usize,
    ) -> Result<Explanation, SearchError> {
        let query = request.query;
        let re = compile(query)?;
        let matched = self.fields[tool].matched(&re);
        let contributions = matched
            .iter()
            .enumerate()
            .map(|(rank, &f)| {
                let field_strings = self.fields[tool].strings(f);
                let example = field_strings.iter().find(|s| re.is_match(s));
                let found = example
                    .and_then(|s| re.find(s))
                    .map_or(String::new(), |m| m.as_str().to_string());
                Contribution {
                    term: query.to_string(),
                    field: FIELDS[f].0,
                    detail: format!("matched {found:?}"),
                    points: if rank == 0 {
                        FIELDS[f].1
                    } else {
                        EXTRA_FIELD_BONUS
                    },
                }
            })
            .collect();
        Ok(Explanation::from_parts(
            score_of(&matched),
            contributions,
            None,
        ))
    }

    fn settings(&self) -> Vec<(String, String)> {
        vec![
            ("case_insensitive".into(), "true".into()),
            ("max_pattern_chars".into(), MAX_PATTERN_CHARS.to_string()),
            (
                "weights".into(),
                format!(
                    "name={NAME_WEIGHT} description={DESCRIPTION_WEIGHT} argument_names={ARGUMENT_NAME_WEIGHT} argument_descriptions={ARGUMENT_DESCRIPTION_WEIGHT} extra_field={EXTRA_FIELD_BONUS}"
                ),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::text::test_support::*;
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn sample() -> RegexScorer {
        let schema = |name: &str, desc: &str| json!({"type": "object", "properties": {name: {"type": "string", "description": desc}}});
        RegexScorer::new(catalog(vec![
            tool(
                "weather_get",
                None,
                "Current conditions.",
                schema("city", "A city"),
            ),
            tool(
                "forecast",
                None,
                "Weather for the week.",
                schema("days", "How many"),
            ),
            tool(
                "lookup",
                None,
                "Find anything.",
                schema("weather_station", "Station id"),
            ),
            tool(
                "notes",
                Some("srv"),
                "Take notes.",
                schema("text", "Weather remarks"),
            ),
            tool("other", None, "Nothing here.", schema("x", "y")),
        ]))
    }

    fn ranked(s: &RegexScorer, q: &str) -> Vec<(String, f64)> {
        s.search(&SearchRequest::new(q, 10))
            .unwrap()
            .hits
            .iter()
            .map(|h| (s.catalog.get(h.tool).id.clone(), h.score))
            .collect()
    }

    #[test]
    fn ranks_by_best_field_case_insensitively() {
        let s = sample();
        assert_eq!(
            ranked(&s, "WEATHER"),
            [
                ("weather_get".to_string(), NAME_WEIGHT),
                ("forecast".to_string(), DESCRIPTION_WEIGHT),
                ("lookup".to_string(), ARGUMENT_NAME_WEIGHT),
                ("mcp__srv__notes".to_string(), ARGUMENT_DESCRIPTION_WEIGHT),
            ]
        );
        // Anchors apply to each string: the bare MCP name matches `^notes$`.
        assert_eq!(
            ranked(&s, "^notes$"),
            [("mcp__srv__notes".to_string(), NAME_WEIGHT)]
        );
        // Name and description both match: best field plus one bonus.
        assert_eq!(
            ranked(&s, "forecast|week")[0],
            ("forecast".to_string(), NAME_WEIGHT + EXTRA_FIELD_BONUS)
        );
        let e = s
            .explain_tool(&SearchRequest::new("forecast|week", 5), 1)
            .unwrap();
        let fields: Vec<&str> = e
            .children
            .iter()
            .map(|c| c.label.split(' ').next().unwrap_or_default())
            .collect();
        assert_eq!(fields, ["name", "description"]);
        assert_eq!(e.value, NAME_WEIGHT + EXTRA_FIELD_BONUS);
    }

    #[test]
    fn bad_and_overlong_patterns_are_input_errors() {
        let s = sample();
        let err = s.search(&SearchRequest::new("weather(", 5)).unwrap_err();
        assert!(
            err.message().contains("invalid regex pattern"),
            "{}",
            err.message()
        );
        assert!(
            err.message().contains("unclosed group"),
            "{}",
            err.message()
        );
        let long = "a".repeat(MAX_PATTERN_CHARS + 1);
        let err = s.search(&SearchRequest::new(&long, 5)).unwrap_err();
        assert!(err.message().contains("at most 200"), "{}", err.message());
        assert!(s.search(&SearchRequest::new(&"a".repeat(200), 5)).is_ok());
        // Within 200 characters but enormous once compiled: an error, not a blow-up.
        let err = s
            .search(&SearchRequest::new(r"\w{1000}{1000}", 5))
            .unwrap_err();
        assert!(err.message().contains("size limit"), "{}", err.message());
    }

    /// Text where lowercasing is not plain ASCII: the Kelvin sign, the long s, final sigma.
    fn unicode_sample() -> RegexScorer {
        RegexScorer::new(catalog(vec![
            builtin(
                "Kelvin_Read",
                "Temperature in \u{212A} (KELVIN), ſtation data",
            ),
            builtin("Odysseus", "ΟΔΥΣΣΕΥΣ and ὈΔΥΣΣΕΎΣ; Straße"),
            builtin("plain", "nothing special at all"),
            tool(
                "weather_get",
                Some("srv"),
                "Current conditions.",
                json!({"type": "object", "properties": {"cityName": {"type": "string", "description": "A CITY"}}}),
            ),
        ]))
    }

    #[test]
    fn prefilter_uses_literals_and_falls_back_without_them() {
        let s = unicode_sample();
        assert_eq!(
            required_literals("weather"),
            Some(vec!["weather".to_string()])
        );
        assert_eq!(s.candidates("WEATHER_get"), [3]);
        assert_eq!(s.candidates("city|station"), [0, 3]);
        // No required literal: every tool is tested.
        assert_eq!(required_literals(r"\w+"), None);
        assert_eq!(required_literals("a*"), None);
        assert_eq!(s.candidates(".*"), [0, 1, 2, 3]);
        // The whole literal, folded; inline flags and alternations still give each branch.
        assert_eq!(
            required_literals("Schedule harvest"),
            Some(vec!["schedule harvest".to_string()])
        );
        assert_eq!(
            required_literals("(?-i)Ab|Σx"),
            Some(vec!["ab".to_string(), "Σx".to_string()])
        );
        // The Kelvin sign matches `k` case-insensitively, and so does the prefilter.
        assert_eq!(ranked(&s, "^kelvin_read$").len(), 1);
        assert_eq!(ranked(&s, "in k ").len(), 1);
    }

    proptest! {
        /// The prefilter never drops a tool the regex matches: every tool the full scan finds
        /// is a candidate.
        #[test]
        fn prefilter_keeps_every_match(
            q in "(weather|CITY|ſ|s|k|σ|ς|Σ|ß|ss|Σς|in k|[a-z]{1,3}|\\.|\\||\\^|\\$|\\(|\\)|\\*|\\?|\\[a-z\\]|\\\\w){1,5}",
        ) {
            let s = unicode_sample();
            if let Ok(re) = compile(&q) {
                let candidates = s.candidates(&q);
                for (i, f) in s.fields.iter().enumerate() {
                    if !f.matched(&re).is_empty() {
                        prop_assert!(candidates.contains(&i), "{q:?} matches tool {i}");
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn no_tool_twice_and_deterministic(q in "[a-z.|]{1,6}") {
            let s = sample();
            let a = s.search(&SearchRequest::new(&q, 10)).unwrap();
            let mut seen = std::collections::HashSet::new();
            prop_assert!(a.hits.iter().all(|h| seen.insert(h.tool)));
            prop_assert_eq!(a.clone(), s.search(&SearchRequest::new(&q, 10)).unwrap());
            for h in &a.hits {
                let e = s.explain_tool(&SearchRequest::new(&q, 10), h.tool).unwrap();
                prop_assert_eq!(e.value, h.score);
            }
        }
    }
}
