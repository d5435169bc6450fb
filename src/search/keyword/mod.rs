//! The `keyword` scorer: Claude Code's ToolSearch rules (see `KEYWORD-SCORING.md`).
//!
//! Query forms, tried in this order:
//! 1. `select:A,B` returns exactly the named tools in the given order (not cut by `limit`).
//!    A name matches a tool id case-insensitively (an exact-case id wins; several ids equal up
//!    to case all match, by id), else (ours) the bare name of an MCP tool, else (ours) the end
//!    of an id after a `_` or `.` (`github__create_issue`, `ride` for `uber.ride`): models
//!    shorten names, and a shortened name that stands for one tool should not read as "no such
//!    tool". Each of the last two steps resolves only when exactly one searchable tool fits;
//!    when several do, the name goes to `ambiguous` with every candidate id, and none of them
//!    is selected (`select:` returns what was named, never a guess). Unknown names go to
//!    `not_found`. The i-th of k selected tools scores `k - i`, so scores follow the given
//!    order.
//! 2. A query equal to a tool id (case-insensitive) puts that tool first: it gets its keyword
//!    score plus [`EXACT_ID_BONUS`]; the keyword ranking of the other tools follows. Else (ours)
//!    a query equal to the bare name of MCP tools (`fetch`, `create_issue`) puts every tool of
//!    that name first the same way: a one-word name shares its score with every tool whose
//!    name merely contains the word (`fetch-businesses`), and the tie-break by id would
//!    otherwise push the exactly named tools out of the first results of a large catalog.
//! 3. A query starting with `mcp__` (no whitespace) lists the tools whose id starts with it,
//!    each scoring [`PREFIX_SCORE`], by id. When no id has that prefix, keywords are used.
//! 4. Keywords: terms split on whitespace, lowercased, `+term` required, and (ours) split on
//!    `_`, so `ask_codex` and `ask codex` both find `mcp__codex__ask_codex`. Per term, summed:
//!    a name part equals the term 10 (MCP 12); otherwise a part contains it 5 (MCP 6);
//!    otherwise, when the tool's running score is still 0, its lowercase id contains it 3; the
//!    search hint has it as a word 4; the description has it as a word 2. Words are JavaScript
//!    `\b` words (see [`super::text`]). Required terms filter first (name part equal or
//!    contained, description word or hint word) and then score like the others.
//!
//! Results: score > 0, best first, ties by id, at most `min(limit, 20)`.
//!
//! Speed: everything a term is matched against is precomputed once per catalog. Name parts
//! form a vocabulary with postings (exact parts by hash lookup; "part contains" by one
//! `memmem` pass over the vocabulary). Descriptions and hints are kept lowercased in one
//! `\n`-joined blob each, plus postings of their ASCII word runs: a term made only of word
//! characters matches `\bterm\b` exactly when it is one of those runs (a hash lookup); any
//! other term is found by a `memmem` pass over the blob with the boundary checked at each
//! occurrence (`\n` is a boundary, like the edges of a text). The 3-point fallback is one
//! `memmem` pass over the blob of lowercase ids.

use super::Field;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use memchr::memmem::Finder;

use super::text::{
    self, Camel, ascii_word_runs, is_all_word, name_parts, occurrences_with_boundaries,
};
use super::{
    Ambiguous, Contribution, Explanation, Hit, Scorer, ScorerKind, SearchError, SearchOutcome,
    SearchRequest, rank_hits,
};
use crate::catalog::Catalog;
use crate::error::InputError;

mod select;

pub const DEFAULT_LIMIT: usize = 5;
pub const MAX_LIMIT: usize = 20;
pub const PART_EXACT_BUILTIN: u32 = 10;
pub const PART_EXACT_MCP: u32 = 12;
pub const PART_CONTAINS_BUILTIN: u32 = 5;
pub const PART_CONTAINS_MCP: u32 = 6;
/// Only while the tool's running score is 0.
pub const FULL_NAME_CONTAINS: u32 = 3;
pub const HINT_WORD: u32 = 4;
pub const DESCRIPTION_WORD: u32 = 2;
/// Added to the tool whose id equals the query, so it ranks first.
pub const EXACT_ID_BONUS: f64 = 1000.0;
/// Score of each tool listed by an `mcp__` prefix query.
pub const PREFIX_SCORE: f64 = 1.0;

const SELECT_PREFIX: &str = "select:";

/// How many names a `select:` query names (0 for any other query): each is looked up among
/// every id, so eval charges names × tools to the run's search work before searching.
pub fn select_names(query: &str) -> u64 {
    text::strip_prefix_ignore_case(query.trim(), SELECT_PREFIX).map_or(0, |names| {
        names.split(',').filter(|n| !n.trim().is_empty()).count() as u64
    })
}
const MCP_PREFIX: &str = "mcp__";

/// Lowercased texts of every tool joined by `\n` (one blob), with postings of their ASCII
/// word runs.
struct TextColumn {
    blob: String,
    /// `starts[i]..starts[i + 1] - 1` is tool i's text; `starts.len() == n + 1`.
    starts: Vec<usize>,
    words: HashMap<String, Vec<u32>>,
}

impl TextColumn {
    fn new(texts: impl Iterator<Item = String>, index_words: bool) -> TextColumn {
        let mut blob = String::new();
        let mut starts = Vec::new();
        let mut words: HashMap<String, Vec<u32>> = HashMap::new();
        for (i, t) in texts.enumerate() {
            starts.push(blob.len());
            // A newline in the text would be a boundary anyway; spaces keep offsets simple.
            let t = t.replace('\n', " ");
            if index_words {
                for w in ascii_word_runs(&t) {
                    let list = words.entry(w.to_string()).or_default();
                    if list.last() != Some(&(i as u32)) {
                        list.push(i as u32);
                    }
                }
            }
            blob.push_str(&t);
            blob.push('\n');
        }
        starts.push(blob.len());
        TextColumn {
            blob,
            starts,
            words,
        }
    }

    fn text(&self, tool: usize) -> &str {
        &self.blob[self.starts[tool]..self.starts[tool + 1] - 1]
    }

    fn tool_at(&self, offset: usize) -> u32 {
        (self.starts.partition_point(|&s| s <= offset) - 1) as u32
    }

    /// Tools whose text matches `\bterm\b`, ascending, each once.
    ///
    /// Every maximal run of word characters inside the term is bounded by a non-word character
    /// of the term or by a `\b` at its edge, so in any match it is a whole word run of the
    /// text: the tools having the term's rarest run are the only candidates, checked one by
    /// one. A term without word characters (`-`, `?`) scans the whole blob.
    fn tools_with_word(&self, term: &str, out: &mut Vec<u32>) {
        out.clear();
        if is_all_word(term) {
            if let Some(list) = self.words.get(term) {
                out.extend_from_slice(list);
            }
            return;
        }
        let rarest = ascii_word_runs(term)
            .map(|w| self.words.get(w).map_or(&[][..], Vec::as_slice))
            .min_by_key(|list| list.len());
        let finder = Finder::new(term.as_bytes());
        if let Some(candidates) = rarest {
            for &t in candidates {
                let text = self.text(t as usize).as_bytes();
                if occurrences_with_boundaries(text, &finder).next().is_some() {
                    out.push(t);
                }
            }
        } else {
            let hay = self.blob.as_bytes();
            let mut from = 0;
            while let Some(at) = occurrences_with_boundaries(&hay[from..], &finder).next() {
                let t = self.tool_at(from + at);
                out.push(t);
                // One hit per tool is enough: go on with the next tool's text.
                from = self.starts[t as usize + 1];
            }
        }
    }

    /// Tools whose text contains `term`, ascending, each once.
    fn tools_containing(&self, term: &str, out: &mut Vec<u32>) {
        out.clear();
        let finder = Finder::new(term.as_bytes());
        let hay = self.blob.as_bytes();
        let mut from = 0;
        while let Some(at) = finder.find(&hay[from..]) {
            let t = self.tool_at(from + at);
            out.push(t);
            // One hit per tool is enough: go on with the next tool's text.
            from = self.starts[t as usize + 1];
        }
    }
}

/// The distinct name parts of the catalog with the tools that have each.
struct PartIndex {
    vocab: TextColumn,
    postings: Vec<Vec<u32>>,
    lookup: HashMap<String, u32>,
}

impl PartIndex {
    fn new(parts_per_tool: &[Vec<String>]) -> PartIndex {
        let mut lookup: HashMap<String, u32> = HashMap::new();
        let mut names: Vec<String> = Vec::new();
        let mut postings: Vec<Vec<u32>> = Vec::new();
        for (tool, parts) in parts_per_tool.iter().enumerate() {
            for p in parts {
                let id = *lookup.entry(p.clone()).or_insert_with(|| {
                    names.push(p.clone());
                    postings.push(Vec::new());
                    (names.len() - 1) as u32
                });
                let list = &mut postings[id as usize];
                if list.last() != Some(&(tool as u32)) {
                    list.push(tool as u32);
                }
            }
        }
        PartIndex {
            vocab: TextColumn::new(names.into_iter(), false),
            postings,
            lookup,
        }
    }

    fn exact(&self, term: &str) -> &[u32] {
        self.lookup
            .get(term)
            .map_or(&[], |&p| &self.postings[p as usize])
    }

    /// Parts containing `term` (vocabulary ids).
    fn containing(&self, term: &str, out: &mut Vec<u32>) {
        self.vocab.tools_containing(term, out);
    }
}

/// One query term after splitting.
#[derive(Debug, Clone, PartialEq)]
struct Term {
    text: String,
    required: bool,
}

fn parse_terms(query: &str) -> Vec<Term> {
    let mut terms = Vec::new();
    for raw in query.split_whitespace() {
        let (required, body) = match raw.strip_prefix('+') {
            Some(rest) => (true, rest),
            None => (false, raw),
        };
        for piece in body.to_lowercase().split('_') {
            if !piece.is_empty() {
                terms.push(Term {
                    text: piece.to_string(),
                    required,
                });
            }
        }
    }
    terms
}

/// What a `select:` name stands for.
enum Resolved {
    Tools(Vec<u32>),
    /// Several tools fit a shortened name: none is selected.
    Ambiguous(Vec<u32>),
    NotFound,
}

/// A keyword query read once against a request: the rule that ranks it. `search` and
/// `explain_tool` both match on it, so the order of the rules is written once.
enum Route<'q> {
    /// `select:a,b`: the named tools, in order.
    Select(&'q str),
    /// The query is a tool's id, or (ours) the bare name of MCP tools: those tools first
    /// (their keyword score plus a bonus, ascending by id on ties), then the keyword ranking
    /// of the others. `by_id` says which of the two matched.
    ExactId {
        tools: Vec<usize>,
        terms: Vec<Term>,
        by_id: bool,
    },
    /// One `mcp__…` word that some ids start with: those tools, listed by prefix.
    Prefix(Vec<Hit>),
    /// Words scored by the keyword rules; `+word` is required.
    Terms(Vec<Term>),
}

pub struct KeywordScorer {
    catalog: Arc<Catalog>,
    is_mcp: Vec<bool>,
    parts: PartIndex,
    ids: TextColumn,
    /// Lowercase ids of the built-ins whose name has a CamelCase split, and their tools.
    camel_ids: TextColumn,
    camel_tools: Vec<u32>,
    mcp_tools: Vec<u32>,
    descriptions: TextColumn,
    hints: TextColumn,
    /// Lowercase id → tools (several only when ids differ by case alone), ascending by id.
    lower_ids: HashMap<String, Vec<u32>>,
    /// Lowercase bare MCP tool name → tools.
    bare_names: HashMap<String, Vec<u32>>,
}

/// Per-query scratch space: scores and per-rule marks, dense over the catalog.
struct Scratch {
    score: Vec<u32>,
    touched: Vec<u32>,
    buf: Vec<u32>,
    parts: Vec<u32>,
    mark: Vec<u32>,
    generation: u32,
}

impl KeywordScorer {
    pub fn new(catalog: Arc<Catalog>) -> KeywordScorer {
        let tools = catalog.tools();
        let parts_per_tool: Vec<Vec<String>> = tools.iter().map(name_parts).collect();
        let mut lower_ids: HashMap<String, Vec<u32>> = HashMap::new();
        let mut bare_names: HashMap<String, Vec<u32>> = HashMap::new();
        for (i, t) in tools.iter().enumerate() {
            lower_ids
                .entry(t.id.to_lowercase())
                .or_default()
                .push(i as u32);
            if t.is_mcp() {
                bare_names
                    .entry(t.name.to_lowercase())
                    .or_default()
                    .push(i as u32);
            }
        }
        for list in lower_ids.values_mut() {
            list.sort_by(|&a, &b| tools[a as usize].id.cmp(&tools[b as usize].id));
        }
        let camel_tools: Vec<u32> = (0..tools.len() as u32)
            .filter(|&i| {
                let t = &tools[i as usize];
                !t.is_mcp()
                    && t.id
                        .split(text::is_name_separator)
                        .any(|p| text::split_camel(p, Camel::Acronyms).len() > 1)
            })
            .collect();
        KeywordScorer {
            camel_ids: TextColumn::new(
                camel_tools
                    .iter()
                    .map(|&i| tools[i as usize].id.to_lowercase()),
                false,
            ),
            camel_tools,
            mcp_tools: (0..tools.len() as u32)
                .filter(|&i| tools[i as usize].is_mcp())
                .collect(),
            is_mcp: tools
                .iter()
                .map(super::super::catalog::Tool::is_mcp)
                .collect(),
            parts: PartIndex::new(&parts_per_tool),
            ids: TextColumn::new(tools.iter().map(|t| t.id.to_lowercase()), false),
            descriptions: TextColumn::new(tools.iter().map(|t| t.description.to_lowercase()), true),
            hints: TextColumn::new(
                tools
                    .iter()
                    .map(|t| t.search_hint.as_deref().unwrap_or("").to_lowercase()),
                true,
            ),
            lower_ids,
            bare_names,
            catalog,
        }
    }

    fn route<'q>(&self, query: &'q str, request: &SearchRequest<'_>) -> Route<'q> {
        if let Some(names) = text::strip_prefix_ignore_case(query, SELECT_PREFIX) {
            return Route::Select(names);
        }
        let terms = parse_terms(query);
        if let Some(tool) = self.exact_id(query, request) {
            return Route::ExactId {
                tools: vec![tool],
                terms,
                by_id: true,
            };
        }
        let named = self.exact_bare_name(query, request);
        if !named.is_empty() {
            return Route::ExactId {
                tools: named,
                terms,
                by_id: false,
            };
        }
        if text::strip_prefix_ignore_case(query, MCP_PREFIX).is_some()
            && !query.contains(char::is_whitespace)
        {
            let listed = self.prefix(query, request);
            if !listed.is_empty() {
                return Route::Prefix(listed);
            }
        }
        Route::Terms(terms)
    }

    fn part_points(&self, tool: usize, exact: bool) -> u32 {
        match (exact, self.is_mcp[tool]) {
            (true, true) => PART_EXACT_MCP,
            (true, false) => PART_EXACT_BUILTIN,
            (false, true) => PART_CONTAINS_MCP,
            (false, false) => PART_CONTAINS_BUILTIN,
        }
    }

    /// A superset of the tools whose lowercase id contains `term` but none of whose name parts
    /// does: the only ones the 3-point fallback can reach (the others already scored).
    /// Without a separator character in the term, an occurrence outside every part must lie in
    /// an MCP id's `mcp` prefix or span a built-in's CamelCase boundary, so only those ids are
    /// searched; a term with a separator searches every id.
    fn fallback_candidates(&self, term: &str, out: &mut Vec<u32>) {
        if term.contains(text::is_name_separator) || !term.is_ascii() {
            self.ids.tools_containing(term, out);
            return;
        }
        self.camel_ids.tools_containing(term, out);
        for t in out.iter_mut() {
            *t = self.camel_tools[*t as usize];
        }
        if "mcp".contains(term) {
            out.extend_from_slice(&self.mcp_tools);
        }
    }

    /// Tools that pass every required term, or `None` when no term is required.
    fn required_filter(&self, terms: &[Term], s: &mut Scratch) -> Option<Vec<bool>> {
        let n = self.catalog.len();
        let mut allowed: Option<Vec<bool>> = None;
        for term in terms.iter().filter(|t| t.required) {
            let mut has = vec![false; n];
            for &t in self.parts.exact(&term.text) {
                has[t as usize] = true;
            }
            self.parts.containing(&term.text, &mut s.parts);
            for &p in &s.parts {
                for &t in &self.parts.postings[p as usize] {
                    has[t as usize] = true;
                }
            }
            for column in [&self.descriptions, &self.hints] {
                column.tools_with_word(&term.text, &mut s.buf);
                for &t in &s.buf {
                    has[t as usize] = true;
                }
            }
            allowed = Some(match allowed {
                None => has,
                Some(prev) => prev.iter().zip(&has).map(|(a, b)| *a && *b).collect(),
            });
        }
        allowed
    }

    /// Keyword scores of every searchable tool with score > 0 (unsorted).
    fn keyword_hits(&self, terms: &[Term], request: &SearchRequest<'_>) -> Vec<Hit> {
        let n = self.catalog.len();
        let mut s = Scratch {
            score: vec![0; n],
            touched: Vec::new(),
            buf: Vec::new(),
            parts: Vec::new(),
            mark: vec![0; n],
            generation: 0,
        };
        let allowed = self.required_filter(terms, &mut s);
        let ok = |t: usize| request.is_candidate(t) && allowed.as_ref().is_none_or(|a| a[t]);
        let add = |s: &mut Scratch, t: usize, points: u32| {
            if s.score[t] == 0 {
                s.touched.push(t as u32);
            }
            s.score[t] += points;
        };
        for term in terms {
            // Name parts: exact first, then "contains" for the tools not already exact.
            s.generation += 1;
            let generation = s.generation;
            for &t in self.parts.exact(&term.text) {
                let t = t as usize;
                if ok(t) {
                    s.mark[t] = generation;
                    add(&mut s, t, self.part_points(t, true));
                }
            }
            self.parts.containing(&term.text, &mut s.parts);
            let parts = std::mem::take(&mut s.parts);
            for &p in &parts {
                for &t in &self.parts.postings[p as usize] {
                    let t = t as usize;
                    if ok(t) && s.mark[t] != generation {
                        s.mark[t] = generation;
                        add(&mut s, t, self.part_points(t, false));
                    }
                }
            }
            s.parts = parts;
            self.fallback_candidates(&term.text, &mut s.buf);
            let buf = std::mem::take(&mut s.buf);
            for &t in &buf {
                let t = t as usize;
                if ok(t) && s.score[t] == 0 {
                    add(&mut s, t, FULL_NAME_CONTAINS);
                }
            }
            s.buf = buf;
            for (column, points) in [
                (&self.hints, HINT_WORD),
                (&self.descriptions, DESCRIPTION_WORD),
            ] {
                column.tools_with_word(&term.text, &mut s.buf);
                let buf = std::mem::take(&mut s.buf);
                for &t in &buf {
                    if ok(t as usize) {
                        add(&mut s, t as usize, points);
                    }
                }
                s.buf = buf;
            }
        }
        s.touched
            .iter()
            .map(|&t| Hit {
                tool: t as usize,
                score: f64::from(s.score[t as usize]),
            })
            .collect()
    }

    /// The keyword score of one tool, straight from its texts, with the reason for each point.
    /// `explain` uses it; tests check it agrees with the indexed path.
    fn score_one(&self, terms: &[Term], tool: usize, why: &mut Vec<Contribution>) -> u32 {
        let parts = name_parts(self.catalog.get(tool));
        let desc = self.descriptions.text(tool);
        let hint = self.hints.text(tool);
        let id = self.ids.text(tool);
        let mut score = 0;
        let mut push = |score: &mut u32, term: &str, field: Field, detail: String, points: u32| {
            *score += points;
            why.push(Contribution {
                term: term.to_string(),
                field,
                detail,
                points: f64::from(points),
            });
        };
        for term in terms {
            let t = term.text.as_str();
            if parts.iter().any(|p| p == t) {
                let pts = self.part_points(tool, true);
                push(
                    &mut score,
                    t,
                    Field::Name,
                    "a name part equals the term".into(),
                    pts,
                );
            } else if let Some(p) = parts.iter().find(|p| p.contains(t)) {
                let pts = self.part_points(tool, false);
                push(
                    &mut score,
                    t,
                    Field::Name,
                    format!("name part {p:?} contains the term"),
                    pts,
                );
            }
            if score == 0 && id.contains(t) {
                let detail = "the full name contains the term (score was 0)".into();
                push(&mut score, t, Field::Name, detail, FULL_NAME_CONTAINS);
            }
            if text::contains_word(hint, t) {
                push(
                    &mut score,
                    t,
                    Field::SearchHint,
                    "word in the search hint".into(),
                    HINT_WORD,
                );
            }
            if text::contains_word(desc, t) {
                let detail = "word in the description".into();
                push(&mut score, t, Field::Description, detail, DESCRIPTION_WORD);
            }
        }
        score
    }

    fn passes_required(&self, terms: &[Term], tool: usize) -> Result<(), String> {
        let parts = name_parts(self.catalog.get(tool));
        for term in terms.iter().filter(|t| t.required) {
            let t = term.text.as_str();
            let found = parts.iter().any(|p| p.contains(t))
                || text::contains_word(self.descriptions.text(tool), t)
                || text::contains_word(self.hints.text(tool), t);
            if !found {
                return Err(format!("filtered out: required term {t:?} not found"));
            }
        }
        Ok(())
    }
}

impl Scorer for KeywordScorer {
    fn name(&self) -> String {
        ScorerKind::Keyword.name().to_string()
    }

    fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError> {
        let query = request.query.trim();
        let limit = request.limit.min(MAX_LIMIT);
        let hits = match self.route(query, request) {
            Route::Select(names) => {
                let mut outcome = self.select(names, request)?;
                outcome.hits.truncate(limit);
                return Ok(outcome);
            }
            Route::ExactId { tools, terms, .. } => self.exact_first(&tools, &terms, request, limit),
            Route::Prefix(listed) => rank_hits(&self.catalog, listed, limit),
            Route::Terms(terms) => {
                rank_hits(&self.catalog, self.keyword_hits(&terms, request), limit)
            }
        };
        Ok(SearchOutcome {
            hits,
            not_found: Vec::new(),
            ambiguous: Vec::new(),
            total_tools: request.searchable(self.catalog.len()),
            reported_us: None,
        })
    }

    /// Counted without the cap of 20 that `search` applies.
    fn count_matches(&self, request: &SearchRequest<'_>) -> Result<usize, SearchError> {
        Ok(match self.route(request.query.trim(), request) {
            Route::Select(names) => self.select(names, request)?.hits.len(),
            Route::ExactId { tools, terms, .. } => {
                let others = self.keyword_hits(&terms, request);
                tools.len() + others.iter().filter(|h| !tools.contains(&h.tool)).count()
            }
            Route::Prefix(listed) => listed.len(),
            Route::Terms(terms) => self.keyword_hits(&terms, request).len(),
        })
    }

    fn explain_tool(
        &self,
        request: &SearchRequest<'_>,
        tool: usize,
    ) -> Result<Explanation, SearchError> {
        let query = request.query.trim();
        let mut why = Vec::new();
        let (score, note) = match self.route(query, request) {
            Route::Select(names) => {
                let outcome = self.select(names, request)?;
                let found = outcome.hits.iter().position(|h| h.tool == tool);
                if let Some(i) = found {
                    why.push(Contribution {
                        term: query.to_string(),
                        field: Field::Id,
                        detail: format!("selected by name, position {}", i + 1),
                        points: outcome.hits[i].score,
                    });
                }
                let note = found
                    .is_none()
                    .then(|| "not named by the select: query".to_string());
                (found.map_or(0.0, |i| outcome.hits[i].score), note)
            }
            Route::Prefix(listed) => {
                let listed = listed.iter().any(|h| h.tool == tool);
                if listed {
                    why.push(Contribution {
                        term: query.to_string(),
                        field: Field::Id,
                        detail: "the id starts with the query".into(),
                        points: PREFIX_SCORE,
                    });
                }
                let note = "mcp__ prefix query: lists ids by prefix".to_string();
                (if listed { PREFIX_SCORE } else { 0.0 }, Some(note))
            }
            Route::ExactId {
                tools,
                terms,
                by_id,
            } if tools.contains(&tool) => {
                let score = f64::from(self.score_one(&terms, tool, &mut why)) + EXACT_ID_BONUS;
                why.push(Contribution {
                    term: query.to_string(),
                    field: if by_id { Field::Id } else { Field::Name },
                    detail: if by_id {
                        "the query equals the tool id"
                    } else {
                        "the query equals the tool's name"
                    }
                    .into(),
                    points: EXACT_ID_BONUS,
                });
                (score, None)
            }
            Route::ExactId { terms, .. } | Route::Terms(terms) => {
                match self.passes_required(&terms, tool) {
                    Err(note) => (0.0, Some(note)),
                    Ok(()) => (f64::from(self.score_one(&terms, tool, &mut why)), None),
                }
            }
        };
        Ok(Explanation::from_parts(score, why, note))
    }

    fn settings(&self) -> Vec<(String, String)> {
        vec![
            ("max_limit".into(), MAX_LIMIT.to_string()),
            (
                "weights".into(),
                format!(
                    "part_exact={PART_EXACT_BUILTIN}/{PART_EXACT_MCP} part_contains={PART_CONTAINS_BUILTIN}/{PART_CONTAINS_MCP} full_name={FULL_NAME_CONTAINS} hint={HINT_WORD} description={DESCRIPTION_WORD} (built-in/MCP)"
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

    fn ids(scorer: &KeywordScorer, query: &str, limit: usize) -> Vec<(String, f64)> {
        scorer
            .search(&SearchRequest::new(query, limit))
            .unwrap()
            .hits
            .iter()
            .map(|h| (scorer.catalog.get(h.tool).id.clone(), h.score))
            .collect()
    }

    fn sample() -> KeywordScorer {
        let mut notebook = builtin("NotebookEdit", "Edit a Jupyter notebook cell.");
        notebook.search_hint = Some("ipynb cells".into());
        KeywordScorer::new(catalog(vec![
            builtin("Read", "Read a file from the local filesystem."),
            builtin("Edit", "Edit a file by replacing text."),
            notebook,
            mcp(
                "slack",
                "send_message",
                "Send a message to a Slack channel.",
            ),
            mcp("slack", "list_channels", "List channels."),
            mcp("email", "send_email", "Send an email (not slack)."),
            mcp("codex", "ask_codex", "Ask a question."),
            mcp("github", "create_issue", "Create an issue."),
            mcp("github", "get_me", "Who am I."),
        ]))
    }

    fn pairs(v: &[(&str, f64)]) -> Vec<(String, f64)> {
        v.iter().map(|(a, b)| (a.to_string(), *b)).collect()
    }

    #[test]
    fn notebook_jupyter_scores_part_and_description() {
        let s = sample();
        // notebook: built-in part equal 10 + description word 2; jupyter: description word 2.
        assert_eq!(
            ids(&s, "notebook jupyter", 5),
            pairs(&[("NotebookEdit", 14.0)])
        );
        // `file`: a description word for Read and Edit, 2 each; ties by id.
        assert_eq!(ids(&s, "file", 5), pairs(&[("Edit", 2.0), ("Read", 2.0)]));
    }

    #[test]
    fn mcp_parts_contains_hint_and_fallback() {
        let s = sample();
        // `mess`: contained in MCP part `message` → 6.
        assert_eq!(
            ids(&s, "mess", 5),
            pairs(&[("mcp__slack__send_message", 6.0)])
        );
        // `ipynb`: hint word 4 only.
        assert_eq!(ids(&s, "ipynb", 5), pairs(&[("NotebookEdit", 4.0)]));
        // `ebooke` is no part's substring but is in the id `notebookedit` → fallback 3.
        assert_eq!(ids(&s, "ebooke", 5), pairs(&[("NotebookEdit", 3.0)]));
        // Fallback needs a running score of 0: `notebook` scores 12 first, so `ebooke` adds
        // nothing.
        assert_eq!(
            ids(&s, "notebook ebooke", 5),
            pairs(&[("NotebookEdit", 12.0)])
        );
    }

    #[test]
    fn ask_codex_is_found_whether_written_with_underscore_or_space() {
        let s = sample();
        // ask 12 + description word 2, codex 12 (parts `codex`, `ask`, `codex`).
        let want = pairs(&[("mcp__codex__ask_codex", 26.0)]);
        assert_eq!(ids(&s, "ask codex", 5), want);
        // Written as the tool's name, it is also that name exactly (ours): the same points
        // plus the bonus.
        let named = pairs(&[("mcp__codex__ask_codex", 26.0 + EXACT_ID_BONUS)]);
        assert_eq!(ids(&s, "ask_codex", 5), named);
        // The id itself: terms `mcp` (id fallback 3, score still 0), `codex` 12, `ask` 14,
        // `codex` 12, plus the exact-id bonus.
        assert_eq!(
            ids(&s, "mcp__codex__ask_codex", 5)[0],
            (
                "mcp__codex__ask_codex".to_string(),
                3.0 + 12.0 + 14.0 + 12.0 + EXACT_ID_BONUS
            )
        );
    }

    #[test]
    fn required_terms_filter_then_score() {
        let s = sample();
        // send: both send_* 12 + description 2; slack: only slack tools and send_email's
        // description ("not slack") pass the filter.
        assert_eq!(
            ids(&s, "+slack send", 5),
            pairs(&[
                ("mcp__slack__send_message", 12.0 + 2.0 + 12.0 + 2.0),
                ("mcp__email__send_email", 12.0 + 2.0 + 2.0),
                ("mcp__slack__list_channels", 12.0),
            ])
        );
        assert!(ids(&s, "+nothinglikethis send", 5).is_empty());
    }

    #[test]
    fn select_keeps_order_and_reports_unknown_names() {
        let s = sample();
        let query = "select:edit, Read,get_me,nope,Read";
        let out = s.search(&SearchRequest::new(query, 5)).unwrap();
        let got: Vec<&str> = out
            .hits
            .iter()
            .map(|h| s.catalog.get(h.tool).id.as_str())
            .collect();
        assert_eq!(got, ["Edit", "Read", "mcp__github__get_me"]);
        assert_eq!(out.hits[0].score, 3.0);
        assert_eq!(out.not_found, ["nope"]);
        assert_eq!(out.total_tools, 9);
        // The limit holds for select: too, keeping the first names.
        let one = s.search(&SearchRequest::new(query, 1)).unwrap();
        assert_eq!(one.hits, out.hits[..1]);
        assert_eq!(one.not_found, ["nope"]);
        let tree = s.explain(&SearchRequest::new(query, 2)).unwrap();
        assert_eq!(tree.children.len(), 2);
    }

    /// #26: 10⁵ names cost a quadratic de-duplication (~5 s a search); now linear, and names
    /// times the catalog over `MAX_SELECT_WORK` are refused before any lookup.
    #[test]
    fn select_names_are_bounded_by_the_budget() {
        let s = sample();
        let many = format!("select:{}", vec!["Read,edit"; 50_000].join(","));
        let out = s.search(&SearchRequest::new(&many, 5)).unwrap();
        assert_eq!(out.hits.len(), 2);
        assert_eq!(s.count_matches(&SearchRequest::new(&many, 5)).unwrap(), 2);
        let tools = s.lower_ids.len() as u64;
        let names = crate::budget::MAX_SELECT_WORK / tools + 1;
        let over = format!("select:{}", vec!["Read"; names as usize].join(","));
        let e = s.search(&SearchRequest::new(&over, 5)).unwrap_err();
        assert!(matches!(e, SearchError::Refused(_)), "{e}");
        let e = e.to_string();
        assert!(
            e.starts_with(&format!(
                "a select: query of {names} names over {tools} tools asks for "
            )) && e.ends_with(
                "name × tool lookups, over the budget of 100,000,000 of one select: query; \
                 name fewer tools"
            ),
            "{e}"
        );
        assert!(s.explain(&SearchRequest::new(&over, 5)).is_err());
    }

    #[test]
    fn select_resolves_shortened_names_when_one_tool_fits() {
        let catalog = catalog(vec![
            mcp("github", "create_issue", "Open an issue"),
            mcp("server-github", "create_issue", "Open an issue"),
            mcp("github", "list_pull_requests", "List PRs"),
            builtin("uber.ride", "Book a ride"),
            mcp("tracker", "close_ticket", "Close a ticket"),
        ]);
        let s = KeywordScorer::new(catalog.clone());
        let select = |q: &str| s.search(&SearchRequest::new(q, 20)).unwrap();
        let ids = |o: &SearchOutcome| -> Vec<String> {
            o.hits
                .iter()
                .map(|h| catalog.get(h.tool).id.clone())
                .collect()
        };
        // Without `mcp__`, or without the server, or the end after `_` / `.`.
        let out = select("select:github__create_issue,pull_requests,ride,ticket");
        assert_eq!(
            ids(&out),
            [
                "mcp__github__create_issue",
                "mcp__github__list_pull_requests",
                "uber.ride",
                "mcp__tracker__close_ticket"
            ]
        );
        assert!(out.not_found.is_empty() && out.ambiguous.is_empty());
        // Two servers have create_issue: the name is ambiguous, both candidates named.
        let out = select("select:create_issue,quests,nope");
        assert!(out.hits.is_empty());
        assert_eq!(out.not_found, ["quests", "nope"]);
        assert_eq!(
            out.ambiguous,
            [Ambiguous {
                name: "create_issue".into(),
                candidates: vec![
                    "mcp__github__create_issue".into(),
                    "mcp__server-github__create_issue".into()
                ],
            }]
        );
        // A suffix must start after a separator: `ide` is not the end of a part.
        assert!(select("select:ide").hits.is_empty());
        // Only searchable tools count: with one twin out, the bare name is unique again.
        let mask = [true, false, true, true, true];
        let req = SearchRequest {
            query: "select:create_issue",
            limit: 5,
            candidates: Some(&mask),
            id: None,
        };
        assert_eq!(ids(&s.search(&req).unwrap()), ["mcp__github__create_issue"]);
    }

    #[test]
    fn a_query_equal_to_a_bare_name_puts_those_tools_first() {
        let mut tools = vec![
            mcp("explorium", "fetch-businesses", "Fetch businesses"),
            mcp("biomcp", "fetch_record", "Fetch a record"),
            mcp("aardvark", "fetcher", "Fetch anything"),
        ];
        tools.extend(["fetch", "web"].map(|s| mcp(s, "fetch", "Fetch a URL")));
        let s = KeywordScorer::new(catalog(tools));
        // Without the rule every tool scores 12 + 2 and the ids decide.
        let got = ids(&s, "Fetch", 3);
        assert_eq!(got[0].0, "mcp__fetch__fetch");
        assert_eq!(got[1].0, "mcp__web__fetch");
        assert_eq!(got[0].1, 14.0 + EXACT_ID_BONUS);
        assert_eq!(got[2].1, 14.0);
        let req = SearchRequest::new("fetch", 20);
        assert_eq!(s.count_matches(&req).unwrap(), 5);
        let e = s.explain_tool(&req, 3).unwrap();
        assert_eq!(e.value, 14.0 + EXACT_ID_BONUS);
        assert!(
            e.children
                .iter()
                .any(|c| c.label.contains("the query equals the tool's name"))
        );
        // Only the whole query: a longer query scores by the keyword rules alone.
        assert_eq!(ids(&s, "fetch page", 1)[0].1, 14.0);
    }

    #[test]
    fn exact_id_then_prefix_then_limits() {
        let s = sample();
        assert_eq!(ids(&s, "read", 5)[0].0, "Read");
        let listed = ids(&s, "mcp__slack__", 5);
        assert_eq!(
            listed,
            pairs(&[
                ("mcp__slack__list_channels", PREFIX_SCORE),
                ("mcp__slack__send_message", PREFIX_SCORE)
            ])
        );
        // Every tool mentions something with `e`; the limit caps and 20 is the ceiling.
        assert_eq!(ids(&s, "e", 2).len(), 2);
        assert!(ids(&s, "e", 100).len() <= MAX_LIMIT);
    }

    #[test]
    fn candidates_restrict_search_and_total() {
        let s = sample();
        let mut only = vec![false; 9];
        only[3] = true;
        let req = SearchRequest {
            query: "send",
            limit: 5,
            candidates: Some(&only),
            id: None,
        };
        let out = s.search(&req).unwrap();
        assert_eq!(out.total_tools, 1);
        assert_eq!(out.hits.len(), 1);
        assert_eq!(out.hits[0].tool, 3);
    }

    #[test]
    fn explain_matches_search() {
        let s = sample();
        for q in [
            "+slack send",
            "notebook jupyter",
            "ebooke",
            "mcp__codex__ask_codex",
            "select:Read",
        ] {
            for h in s.search(&SearchRequest::new(q, 20)).unwrap().hits {
                let e = s.explain_tool(&SearchRequest::new(q, 20), h.tool).unwrap();
                assert_eq!(e.value, h.score, "{q}");
            }
            // The tree lists the same tools with the same scores, in order.
            let req = SearchRequest::new(q, 20);
            let tree = s.explain(&req).unwrap();
            let scores: Vec<f64> = tree.children.iter().map(|c| c.value).collect();
            let want: Vec<f64> = s
                .search(&req)
                .unwrap()
                .hits
                .iter()
                .map(|h| h.score)
                .collect();
            assert_eq!(scores, want, "{q}");
        }
        let e = s
            .explain_tool(&SearchRequest::new("+slack send", 20), 0)
            .unwrap();
        assert_eq!(e.value, 0.0);
        assert!(e.label.contains("slack"), "{e:?}");
    }

    /// The rules written the plain way, with `regex` for `\bterm\b`: the reference the indexed
    /// path must agree with.
    fn naive(catalog: &Catalog, query: &str) -> Vec<(usize, u32)> {
        let terms = parse_terms(query);
        let word = |text: &str, term: &str| {
            regex::Regex::new(&format!(r"(?-u:\b){}(?-u:\b)", regex::escape(term)))
                .unwrap()
                .is_match(&text.to_lowercase())
        };
        let mut out = Vec::new();
        for (i, tool) in catalog.tools().iter().enumerate() {
            let parts = name_parts(tool);
            let hint = tool.search_hint.clone().unwrap_or_default();
            let pass = terms.iter().filter(|t| t.required).all(|t| {
                parts.iter().any(|p| p.contains(&t.text))
                    || word(&tool.description, &t.text)
                    || word(&hint, &t.text)
            });
            if !pass {
                continue;
            }
            let mcp = tool.is_mcp();
            let mut score = 0;
            for t in &terms {
                if parts.contains(&t.text) {
                    score += if mcp { 12 } else { 10 };
                } else if parts.iter().any(|p| p.contains(&t.text)) {
                    score += if mcp { 6 } else { 5 };
                }
                if score == 0 && tool.id.to_lowercase().contains(&t.text) {
                    score += 3;
                }
                if word(&hint, &t.text) {
                    score += 4;
                }
                if word(&tool.description, &t.text) {
                    score += 2;
                }
            }
            // The query is this MCP tool's bare name (ours): the tool goes first.
            let named = mcp && tool.name.eq_ignore_ascii_case(query.trim());
            if named {
                score += EXACT_ID_BONUS as u32;
            }
            if score > 0 {
                out.push((i, score));
            }
        }
        out.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| catalog.get(a.0).id.cmp(&catalog.get(b.0).id))
        });
        out.truncate(MAX_LIMIT);
        out
    }

    fn arb_catalog() -> impl Strategy<Value = Arc<Catalog>> {
        let word = "[a-dA-D]{1,4}";
        let name = proptest::collection::vec(word, 1..3).prop_map(|w| w.join("_"));
        let text = "[a-dA-D .+_-]{0,30}";
        let tool = (
            name,
            proptest::option::of("[a-d]{1,3}"),
            text,
            proptest::option::of(text),
        );
        proptest::collection::vec(tool, 1..12).prop_map(|tools| {
            let mut seen = std::collections::HashSet::new();
            let tools = tools
                .into_iter()
                .filter_map(|(name, server, desc, hint)| {
                    let mut t = match &server {
                        Some(s) => mcp(s, &name, &desc),
                        None => builtin(&name, &desc),
                    };
                    t.search_hint = hint;
                    seen.insert(t.id.clone()).then_some(t)
                })
                .collect();
            catalog(tools)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn indexed_scoring_equals_the_naive_rules(
            cat in arb_catalog(),
            query in proptest::collection::vec("[+]?[a-dA-D.+_-]{1,4}", 1..4),
        ) {
            let query = query.join(" ");
            // Queries that hit the exact-id or prefix forms are pinned by unit tests.
            prop_assume!(cat.tools().iter().all(|t| !t.id.eq_ignore_ascii_case(query.trim())));
            prop_assume!(!query.to_lowercase().starts_with("mcp__"));
            let scorer = KeywordScorer::new(cat.clone());
            let out = scorer.search(&SearchRequest::new(&query, MAX_LIMIT)).unwrap();
            let got: Vec<(usize, u32)> = out.hits.iter().map(|h| (h.tool, h.score as u32)).collect();
            prop_assert_eq!(&got, &naive(&cat, &query));
            let mut seen = std::collections::HashSet::new();
            prop_assert!(out.hits.iter().all(|h| seen.insert(h.tool)));
            prop_assert_eq!(scorer.search(&SearchRequest::new(&query, MAX_LIMIT)).unwrap(), out.clone());
            for h in &out.hits {
                let e = scorer.explain_tool(&SearchRequest::new(&query, MAX_LIMIT), h.tool).unwrap();
                prop_assert_eq!(e.value, h.score);
            }
        }
    }
}
