//! The `bm25` scorer: BM25F over four weighted fields, our own code so every score can be
//! explained per term and field.
//!
//! Fields: name (for MCP tools the server and tool name, `mcp__` dropped; CamelCase split),
//! description, argument names (CamelCase split) and argument descriptions, walked through
//! nested `properties` (see [`super::text::schema_text`]). Tokens are lowercase alphanumeric
//! words: every non-alphanumeric character, `_` included, separates words. With `normalize`
//! (the default), a short English stopword list is dropped and plurals are folded to the
//! singular ([`super::text::stem_plural`]), in tools and queries alike: on the dev sets this
//! adds about 0.07 recall@5 on StableToolBench and 0.015 on BFCL (k1 1.2, b 0.75).
//!
//! Formula (BM25F, Robertson & Zaragoza 2009): for a query term t and tool d,
//! `tf~ = Σ_f w_f · tf_f(t, d) / (1 − b + b · len_f(d) / avglen_f)` and
//! `score(t, d) = idf(t) · tf~ / (k1 + tf~)` with `idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))`
//! (Lucene's non-negative idf; N tools, df tools with t in any field). A tool's score sums its
//! query terms, each distinct term once. Statistics (N, df, average lengths) are those of the
//! whole catalog, also when a search is restricted to candidates, so a tool's score does not
//! depend on which other tools are deferred.
//!
//! Defaults ([`Bm25Params::default`]): the textbook k1 = 1.2 and b = 0.75; field weights name
//! 2.0, description 1.0, argument names 1.0, argument descriptions 0.5. The weights come from a
//! small grid on the two dev sets (`tests/search_devsets.rs`, `BM25_GRID=1`); the region around
//! them is flat (±0.01), so they are not tuned to a peak. Measured with these defaults:
//! StableToolBench recall@5 0.705, MRR 0.779; BFCL recall@5 0.812, MRR 0.712 (plain one-field
//! BM25, k1 1.5, b 0.75: 0.563 / 0.672 and 0.802 / 0.704).
//!
//! The index (postings per term: tool and per-field term frequencies) is built once per
//! catalog; a query touches only the postings of its terms.

use super::Field;
use std::collections::HashMap;
use std::sync::Arc;

use super::text::{Camel, STOPWORDS, schema_text, stem_plural, strip_prefix_ignore_case, words};
use super::{
    Contribution, Explanation, Hit, Scorer, ScorerKind, SearchError, SearchOutcome, SearchRequest,
    rank_hits,
};
use crate::catalog::{Catalog, Tool};
use crate::error::InputError;

pub const DEFAULT_K1: f64 = 1.2;
pub const DEFAULT_B: f64 = 0.75;
pub const DEFAULT_NAME_WEIGHT: f64 = 2.0;
pub const DEFAULT_DESCRIPTION_WEIGHT: f64 = 1.0;
pub const DEFAULT_ARGUMENT_NAME_WEIGHT: f64 = 1.0;
pub const DEFAULT_ARGUMENT_DESCRIPTION_WEIGHT: f64 = 0.5;
pub const DEFAULT_NORMALIZE: bool = true;
pub const MAX_QUERY_CHARS: usize = 500;

pub const FIELD_COUNT: usize = Field::LEXICAL.len();

/// The tunable parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    pub k1: f64,
    pub b: f64,
    /// Drop [`STOPWORDS`] and fold plurals ([`stem_plural`]) in tools and queries.
    pub normalize: bool,
    /// Per field, in [`Field::LEXICAL`] order.
    pub weights: [f64; FIELD_COUNT],
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params {
            k1: DEFAULT_K1,
            b: DEFAULT_B,
            normalize: DEFAULT_NORMALIZE,
            weights: [
                DEFAULT_NAME_WEIGHT,
                DEFAULT_DESCRIPTION_WEIGHT,
                DEFAULT_ARGUMENT_NAME_WEIGHT,
                DEFAULT_ARGUMENT_DESCRIPTION_WEIGHT,
            ],
        }
    }
}

impl Bm25Params {
    /// The ranges the formula is meant for: `k1` ≥ 0, `b` in [0, 1], weights ≥ 0 and not all
    /// zero, everything finite. (A negative weight or `b` > 1 can make a field's factor
    /// negative, and then scores stop meaning "more matching text ranks higher".)
    pub fn validate(&self) -> Result<(), String> {
        if !(self.k1.is_finite() && self.k1 >= 0.0) {
            return Err(format!("bm25 k1 must be a number >= 0, got {}", self.k1));
        }
        if !(self.b.is_finite() && (0.0..=1.0).contains(&self.b)) {
            return Err(format!("bm25 b must be between 0 and 1, got {}", self.b));
        }
        if self.weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(format!(
                "bm25 field weights must be numbers >= 0, got {:?}",
                self.weights
            ));
        }
        if self.weights.iter().all(|&w| w == 0.0) {
            return Err("bm25 field weights are all 0: no tool could score".to_string());
        }
        Ok(())
    }
}

/// Parses field weights written `NAME,DESCRIPTION,ARGUMENT_NAMES,ARGUMENT_DESCRIPTIONS`
/// (e.g. `2,1,1,0.5`), each a number >= 0.
pub fn parse_weights(text: &str) -> Result<[f64; FIELD_COUNT], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let err = || {
        format!(
            "expected {FIELD_COUNT} numbers >= 0 as {}, got {text:?}",
            Field::LEXICAL.map(Field::name).join(",")
        )
    };
    if parts.len() != FIELD_COUNT {
        return Err(err());
    }
    let mut weights = [0f64; FIELD_COUNT];
    for (w, p) in weights.iter_mut().zip(parts) {
        *w = p.parse().map_err(|_| err())?;
        if !(w.is_finite() && *w >= 0.0) {
            return Err(err());
        }
    }
    Ok(weights)
}

/// Stopwords dropped and plurals folded, when `normalize` is on.
fn normalized(mut tokens: Vec<String>, normalize: bool) -> Vec<String> {
    if normalize {
        tokens.retain(|w| !STOPWORDS.contains(&w.as_str()));
        for w in &mut tokens {
            *w = stem_plural(w);
        }
    }
    tokens
}

/// The words of each field of one tool.
pub fn tool_fields(tool: &Tool, normalize: bool) -> [Vec<String>; FIELD_COUNT] {
    let mut fields: [Vec<String>; FIELD_COUNT] = Default::default();
    let name = strip_prefix_ignore_case(&tool.id, "mcp__").unwrap_or(&tool.id);
    words(name, Camel::Acronyms, &mut fields[0]);
    words(&tool.description, Camel::Off, &mut fields[1]);
    let schema = schema_text(&tool.input_schema);
    for n in &schema.names {
        words(n, Camel::Acronyms, &mut fields[2]);
    }
    for d in &schema.descriptions {
        words(d, Camel::Off, &mut fields[3]);
    }
    fields.map(|f| normalized(f, normalize))
}

/// The words of a query, each distinct word once, in first-seen order.
pub fn query_terms(query: &str, normalize: bool) -> Vec<String> {
    let mut all = Vec::new();
    words(query, Camel::Acronyms, &mut all);
    let mut all = normalized(all, normalize);
    let mut seen = std::collections::HashSet::new();
    all.retain(|w| seen.insert(w.clone()));
    all
}

/// Corpus statistics, apart from the formula: tool count, document frequencies and the
/// average length of each field.
#[derive(Debug, Clone)]
pub struct CorpusStats {
    pub tools: usize,
    pub avg_len: [f64; FIELD_COUNT],
}

impl CorpusStats {
    /// Lucene's non-negative BM25 idf.
    pub fn idf(&self, df: usize) -> f64 {
        let n = self.tools as f64;
        let df = df as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    tool: u32,
    tf: [u16; FIELD_COUNT],
}

/// One term's postings, struct-of-arrays: a query reads only `tools` and `points`, in order;
/// `tf` is kept for explanations.
#[derive(Debug, Clone, Default)]
struct PostingList {
    tools: Vec<u32>,
    /// The term's whole BM25F score in each tool, `idf · tf~ / (k1 + tf~)`: it depends only on
    /// the term and the tool, so it is computed once at build time, not per query.
    points: Vec<f64>,
    tf: Vec<[u16; FIELD_COUNT]>,
}

pub struct Bm25Scorer {
    catalog: Arc<Catalog>,
    params: Bm25Params,
    stats: CorpusStats,
    term_ids: HashMap<String, u32>,
    postings: Vec<PostingList>,
    /// `w_f / (1 − b + b · len_f / avglen_f)` per tool and field: the length normalisation,
    /// computed once.
    field_factor: Vec<[f64; FIELD_COUNT]>,
}

impl Bm25Scorer {
    pub fn new(catalog: Arc<Catalog>) -> Bm25Scorer {
        Bm25Scorer::with_params(catalog, Bm25Params::default())
    }

    pub fn with_params(catalog: Arc<Catalog>, params: Bm25Params) -> Bm25Scorer {
        let mut term_ids: HashMap<String, u32> = HashMap::new();
        let mut raw: Vec<Vec<Posting>> = Vec::new();
        let mut lengths: Vec<[usize; FIELD_COUNT]> = Vec::with_capacity(catalog.len());
        for (tool, t) in catalog.tools().iter().enumerate() {
            let fields = tool_fields(t, params.normalize);
            lengths.push(std::array::from_fn(|f| fields[f].len()));
            for (f, field) in fields.iter().enumerate() {
                for w in field {
                    let id = if let Some(&id) = term_ids.get(w.as_str()) {
                        id
                    } else {
                        raw.push(Vec::new());
                        let id = (raw.len() - 1) as u32;
                        term_ids.insert(w.clone(), id);
                        id
                    };
                    let list = &mut raw[id as usize];
                    if list.last().is_none_or(|p| p.tool != tool as u32) {
                        list.push(Posting {
                            tool: tool as u32,
                            tf: [0; FIELD_COUNT],
                        });
                    }
                    let p = list.last_mut().expect("pushed above");
                    p.tf[f] = p.tf[f].saturating_add(1);
                }
            }
        }
        let n = catalog.len();
        let avg_len: [f64; FIELD_COUNT] = std::array::from_fn(|f| {
            if n == 0 {
                0.0
            } else {
                lengths.iter().map(|l| l[f]).sum::<usize>() as f64 / n as f64
            }
        });
        let field_factor: Vec<[f64; FIELD_COUNT]> = lengths
            .iter()
            .map(|l| {
                std::array::from_fn(|f| {
                    let relative = if avg_len[f] > 0.0 {
                        l[f] as f64 / avg_len[f]
                    } else {
                        0.0
                    };
                    params.weights[f] / (1.0 - params.b + params.b * relative)
                })
            })
            .collect();
        let mut scorer = Bm25Scorer {
            stats: CorpusStats { tools: n, avg_len },
            catalog,
            params,
            term_ids,
            postings: Vec::new(),
            field_factor,
        };
        scorer.postings = raw.iter().map(|list| scorer.posting_list(list)).collect();
        scorer
    }

    /// Freezes one term's postings with their precomputed points.
    fn posting_list(&self, list: &[Posting]) -> PostingList {
        let idf = self.stats.idf(list.len());
        PostingList {
            tools: list.iter().map(|p| p.tool).collect(),
            points: list
                .iter()
                .map(|p| self.term_score(idf, self.weighted_tf(p.tool, p.tf).0))
                .collect(),
            tf: list.iter().map(|p| p.tf).collect(),
        }
    }

    fn check_query(query: &str) -> Result<(), InputError> {
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(InputError::usage(format!(
                "bm25 query is {chars} characters long; at most {MAX_QUERY_CHARS} are allowed"
            )));
        }
        Ok(())
    }

    /// Pseudo term frequency of a posting (the BM25F `tf~`) and each field's share of it.
    fn weighted_tf(&self, tool: u32, tf: [u16; FIELD_COUNT]) -> (f64, [f64; FIELD_COUNT]) {
        let factor = &self.field_factor[tool as usize];
        let parts: [f64; FIELD_COUNT] = std::array::from_fn(|f| tf[f] as f64 * factor[f]);
        (parts.iter().sum(), parts)
    }

    fn term_score(&self, idf: f64, tf: f64) -> f64 {
        idf * tf / (self.params.k1 + tf)
    }

    /// The postings of the query's known terms, each distinct term once.
    fn query_postings(&self, query: &str) -> Vec<(String, &PostingList)> {
        query_terms(query, self.params.normalize)
            .into_iter()
            .filter_map(|term| {
                let id = *self.term_ids.get(&term)?;
                Some((term, &self.postings[id as usize]))
            })
            .collect()
    }
}

impl Scorer for Bm25Scorer {
    fn name(&self) -> String {
        ScorerKind::Bm25.name().to_string()
    }

    fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError> {
        Self::check_query(request.query)?;
        let lists = self.query_postings(request.query);
        // A dense accumulator indexed by tool (no hashing per posting); `touched` lists the
        // tools seen, each once, so collecting costs the postings read, not the catalog size.
        // Seen is its own flag, not a score of 0: a term found only in a field weighted 0
        // scores 0 points, and a later term would have listed the tool again.
        let mut score = vec![0f64; self.catalog.len()];
        let mut seen = vec![false; self.catalog.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (_, list) in &lists {
            for (&tool, &points) in list.tools.iter().zip(&list.points) {
                if !request.is_candidate(tool as usize) {
                    continue;
                }
                if !std::mem::replace(&mut seen[tool as usize], true) {
                    touched.push(tool);
                }
                score[tool as usize] += points;
            }
        }
        let hits = touched
            .into_iter()
            .map(|tool| Hit {
                tool: tool as usize,
                score: score[tool as usize],
            })
            .filter(|h| h.score > 0.0)
            .collect();
        Ok(SearchOutcome {
            hits: rank_hits(&self.catalog, hits, request.limit),
            not_found: Vec::new(),
            ambiguous: Vec::new(),
            total_tools: request.searchable(self.catalog.len()),
            reported_us: None,
        })
    }

    /// A term's score is not a sum over fields in BM25F; each field is credited with the share
    /// of the term's score equal to its share of `tf~`.
    fn explain_tool(
        &self,
        request: &SearchRequest<'_>,
        tool: usize,
    ) -> Result<Explanation, SearchError> {
        let query = request.query;
        Self::check_query(query)?;
        let mut contributions = Vec::new();
        let mut total = 0.0;
        for (term, list) in self.query_postings(query) {
            let Ok(at) = list.tools.binary_search(&(tool as u32)) else {
                continue;
            };
            let tf_f = &list.tf[at];
            let idf = self.stats.idf(list.tools.len());
            let (tf, parts) = self.weighted_tf(tool as u32, *tf_f);
            let term_score = list.points[at];
            total += term_score;
            for f in 0..FIELD_COUNT {
                // A field weighted 0 contributes nothing (and tf~ may then be 0).
                if tf_f[f] > 0 && parts[f] > 0.0 {
                    contributions.push(Contribution {
                        term: term.clone(),
                        field: Field::LEXICAL[f],
                        detail: format!(
                            "tf={} df={} idf={idf:.3} tf~={tf:.3}",
                            tf_f[f],
                            list.tools.len()
                        ),
                        points: term_score * parts[f] / tf,
                    });
                }
            }
        }
        Ok(Explanation::from_parts(total, contributions, None))
    }

    fn settings(&self) -> Vec<(String, String)> {
        let w = self.params.weights;
        vec![
            ("k1".into(), self.params.k1.to_string()),
            ("b".into(), self.params.b.to_string()),
            ("normalize".into(), self.params.normalize.to_string()),
            (
                "weights".into(),
                format!(
                    "name={} description={} argument_names={} argument_descriptions={}",
                    w[0], w[1], w[2], w[3]
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

    fn tiny() -> Arc<Catalog> {
        catalog(vec![
            builtin("ReadFile", "read a file"),
            builtin("WriteFile", "write a file to disk"),
            tool(
                "search",
                Some("web"),
                "search the web",
                json!({"type": "object", "properties": {"query": {"type": "string", "description": "what to find"}}}),
            ),
        ])
    }

    #[test]
    fn fields_and_query_terms() {
        let cat = tiny();
        let f = tool_fields(cat.get(2), false);
        assert_eq!(f[0], ["web", "search"]);
        assert_eq!(f[2], ["query"]);
        assert_eq!(f[3], ["what", "to", "find"]);
        assert_eq!(
            query_terms("Read the FILE, read it", false),
            ["read", "the", "file", "it"]
        );
    }

    /// One field (the description) with weight 1, so the numbers can be done by hand.
    #[test]
    fn hand_computed_score() {
        let params = Bm25Params {
            k1: 1.2,
            b: 0.75,
            normalize: false,
            weights: [0.0, 1.0, 0.0, 0.0],
        };
        let s = Bm25Scorer::with_params(tiny(), params);
        // Description lengths 3, 5, 3: average 11/3. "disk" is only in tool 1 (df 1, tf 1).
        let idf = (1.0f64 + (3.0 - 1.0 + 0.5) / (1.0 + 0.5)).ln();
        let norm = 1.0 - 0.75 + 0.75 * 5.0 / (11.0 / 3.0);
        let tf = 1.0 / norm;
        let want = idf * tf / (1.2 + tf);
        let out = s.search(&SearchRequest::new("disk", 5)).unwrap();
        assert_eq!(out.hits.len(), 1);
        assert_eq!(out.hits[0].tool, 1);
        assert!(
            (out.hits[0].score - want).abs() < 1e-12,
            "{} vs {want}",
            out.hits[0].score
        );
        // ln(8/3) · 0.7857 / 1.9857 ≈ 0.3881
        assert!((want - 0.3881).abs() < 1e-4, "{want}");
        let e = s.explain_tool(&SearchRequest::new("disk", 5), 1).unwrap();
        assert_eq!(e.value, out.hits[0].score);
        assert_eq!(e.children.len(), 1);
        assert!(e.children[0].label.starts_with("description"), "{e:?}");
    }

    /// "query" is only in tool 2's argument names, weighted 0 here; "web" is in its
    /// description: the tool is one hit, scored by "web" alone.
    #[test]
    fn a_term_of_a_field_weighted_0_does_not_list_a_tool_twice() {
        let params = Bm25Params {
            weights: [0.0, 1.0, 0.0, 0.0],
            ..Bm25Params::default()
        };
        let s = Bm25Scorer::with_params(tiny(), params);
        let both = s.search(&SearchRequest::new("query web", 5)).unwrap();
        let web = s.search(&SearchRequest::new("web", 5)).unwrap();
        assert_eq!(both.hits.len(), 1, "{:?}", both.hits);
        assert_eq!(both.hits, web.hits);
        assert_eq!(both.hits[0].tool, 2);
    }

    #[test]
    fn name_outweighs_description_and_ties_break_by_id() {
        let s = Bm25Scorer::new(tiny());
        let out = s.search(&SearchRequest::new("file", 5)).unwrap();
        let ids: Vec<&str> = out
            .hits
            .iter()
            .map(|h| s.catalog.get(h.tool).id.as_str())
            .collect();
        // Both have `file` in name and description; ReadFile is shorter, so it ranks first.
        assert_eq!(ids, ["ReadFile", "WriteFile"]);
        let out = s.search(&SearchRequest::new("search", 5)).unwrap();
        assert_eq!(out.hits[0].tool, 2);
        assert!(s.search(&SearchRequest::new(&"a".repeat(501), 5)).is_err());
        assert!(
            s.search(&SearchRequest::new("nothing matches", 5))
                .unwrap()
                .hits
                .is_empty()
        );
    }

    #[test]
    fn candidates_filter_without_changing_scores() {
        let s = Bm25Scorer::new(tiny());
        let all = s.search(&SearchRequest::new("file", 5)).unwrap();
        let only = [false, true, false];
        let some = s
            .search(&SearchRequest {
                query: "file",
                limit: 5,
                candidates: Some(&only),
                id: None,
            })
            .unwrap();
        assert_eq!(some.total_tools, 1);
        assert_eq!(some.hits, vec![all.hits[1]]);
    }

    #[test]
    fn params_are_validated_and_weights_parsed() {
        assert!(Bm25Params::default().validate().is_ok());
        let bad = |f: fn(&mut Bm25Params)| {
            let mut p = Bm25Params::default();
            f(&mut p);
            p.validate().unwrap_err()
        };
        assert!(bad(|p| p.k1 = -1.0).contains("k1"));
        assert!(bad(|p| p.b = 1.5).contains("between 0 and 1"));
        assert!(bad(|p| p.b = f64::NAN).contains("b must"));
        assert!(bad(|p| p.weights[3] = -0.5).contains("weights"));
        assert!(bad(|p| p.weights = [0.0; FIELD_COUNT]).contains("all 0"));
        assert_eq!(parse_weights("2, 1,1,0.5"), Ok([2.0, 1.0, 1.0, 0.5]));
        for bad in ["2,1,1", "2,1,1,x", "2,1,1,-1", "2,1,1,0.5,3", "inf,1,1,1"] {
            let e = parse_weights(bad).unwrap_err();
            assert!(e.contains("name,description,argument_names"), "{e}");
        }
    }

    /// Settings change scores the way the formula says: weight 0 on the name removes the
    /// name's share, and k1 = 0 makes every matching term worth exactly its idf.
    #[test]
    fn params_change_scores() {
        let name_off = Bm25Params {
            weights: [0.0, 1.0, 1.0, 0.5],
            ..Bm25Params::default()
        };
        let fields = |s: &Bm25Scorer| -> Vec<String> {
            let e = s.explain_tool(&SearchRequest::new("web", 5), 2).unwrap();
            e.children
                .into_iter()
                .map(|c| c.label.split(' ').next().unwrap_or_default().to_string())
                .collect()
        };
        assert_eq!(fields(&Bm25Scorer::new(tiny())), ["name", "description"]);
        let s = Bm25Scorer::with_params(tiny(), name_off);
        assert_eq!(fields(&s), ["description"]);
        let saturated = Bm25Params {
            k1: 0.0,
            ..Bm25Params::default()
        };
        let s = Bm25Scorer::with_params(tiny(), saturated);
        let out = s.search(&SearchRequest::new("disk", 5)).unwrap();
        let idf = (1.0f64 + (3.0 - 1.0 + 0.5) / (1.0 + 0.5)).ln();
        assert!((out.hits[0].score - idf).abs() < 1e-12);
        assert!(s.settings().contains(&("k1".to_string(), "0".to_string())));
    }

    /// A field weighted 0 makes a term worth 0 points in a tool that has it only there; the
    /// tool was listed once per such term before another term scored it (#26).
    #[test]
    fn a_zero_weight_field_does_not_repeat_tools() {
        let cat = catalog(vec![
            tool(
                "reply",
                Some("chat"),
                "reply to a channel message",
                json!({"type": "object", "properties": {"post": {"type": "string", "description": "a post to send"}}}),
            ),
            builtin("Other", "nothing in common"),
        ]);
        let params = Bm25Params {
            weights: [2.0, 1.0, 1.0, 0.0],
            ..Bm25Params::default()
        };
        let s = Bm25Scorer::with_params(cat, params);
        // "send" and "post" are only in the zero-weighted argument descriptions / names.
        let out = s
            .search(&SearchRequest::new("send a post to a channel", 10))
            .unwrap();
        assert_eq!(out.hits.len(), 1, "{out:?}");
        assert_eq!(out.hits[0].tool, 0);
    }

    /// BM25F written the plain way, from the module's formula over [`tool_fields`]: every
    /// tool, every distinct query term, statistics of the whole catalog.
    fn naive(cat: &Catalog, query: &str, p: &Bm25Params, candidates: &[bool]) -> Vec<(usize, f64)> {
        let fields: Vec<[Vec<String>; FIELD_COUNT]> = cat
            .tools()
            .iter()
            .map(|t| tool_fields(t, p.normalize))
            .collect();
        let n = fields.len() as f64;
        let avg: [f64; FIELD_COUNT] =
            std::array::from_fn(|f| fields.iter().map(|d| d[f].len()).sum::<usize>() as f64 / n);
        let terms = query_terms(query, p.normalize);
        let mut out = Vec::new();
        for (i, d) in fields.iter().enumerate() {
            let mut total = 0.0;
            for term in &terms {
                let df = fields
                    .iter()
                    .filter(|d| d.iter().flatten().any(|w| w == term))
                    .count();
                if df == 0 {
                    continue;
                }
                let idf = (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln();
                let tf: f64 = (0..FIELD_COUNT)
                    .map(|f| {
                        let count = d[f].iter().filter(|w| *w == term).count() as f64;
                        let rel = if avg[f] > 0.0 {
                            d[f].len() as f64 / avg[f]
                        } else {
                            0.0
                        };
                        count * (p.weights[f] / (1.0 - p.b + p.b * rel))
                    })
                    .sum();
                if d.iter().flatten().any(|w| w == term) {
                    total += idf * tf / (p.k1 + tf);
                }
            }
            if candidates[i] && total > 0.0 {
                out.push((i, total));
            }
        }
        out.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| cat.get(a.0).id.cmp(&cat.get(b.0).id))
        });
        out
    }

    fn arb_tools() -> impl Strategy<Value = Arc<Catalog>> {
        let word = "[a-e]{1,3}";
        let text = "[a-eA-E ]{0,24}";
        let arg = (word, text);
        let one = (
            proptest::collection::vec(word, 1..3).prop_map(|w| w.join("_")),
            proptest::option::of("[a-c]{1,2}"),
            text,
            proptest::collection::vec(arg, 0..3),
        );
        proptest::collection::vec(one, 1..10).prop_map(|tools| {
            let mut seen = std::collections::HashSet::new();
            let tools = tools
                .into_iter()
                .filter_map(|(name, server, desc, args)| {
                    let props: serde_json::Map<String, serde_json::Value> = args
                        .into_iter()
                        .map(|(n, d)| (n, json!({"type": "string", "description": d})))
                        .collect();
                    let t = tool(
                        &name,
                        server.as_deref(),
                        &desc,
                        json!({"type": "object", "properties": props}),
                    );
                    seen.insert(t.id.clone()).then_some(t)
                })
                .collect();
            catalog(tools)
        })
    }

    fn arb_params() -> impl Strategy<Value = Bm25Params> {
        let weight = prop_oneof![Just(0.0), Just(1.0), 0.0f64..3.0];
        (
            prop_oneof![Just(0.0), 0.0f64..3.0],
            prop_oneof![Just(0.0), Just(1.0), 0.0f64..=1.0],
            any::<bool>(),
            [weight.clone(), weight.clone(), weight.clone(), weight],
        )
            .prop_map(|(k1, b, normalize, weights)| Bm25Params {
                k1,
                b,
                normalize,
                weights,
            })
            .prop_filter("not every weight 0", |p| p.validate().is_ok())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn indexed_scoring_equals_the_naive_formula(
            cat in arb_tools(),
            params in arb_params(),
            query in proptest::collection::vec("[a-eA-E]{1,3}", 1..5),
            mask in proptest::collection::vec(any::<bool>(), 10),
            restrict in any::<bool>(),
        ) {
            let query = query.join(" ");
            let candidates: Vec<bool> = (0..cat.len()).map(|i| !restrict || mask[i]).collect();
            let s = Bm25Scorer::with_params(cat.clone(), params);
            let request = SearchRequest {
                query: &query,
                limit: 100,
                candidates: restrict.then_some(&candidates[..]),
                id: None,
            };
            let out = s.search(&request).unwrap();
            let want = naive(&cat, &query, &params, &candidates);
            let got: Vec<usize> = out.hits.iter().map(|h| h.tool).collect();
            let want_tools: Vec<usize> = want.iter().map(|w| w.0).collect();
            // Scores equal to rounding; the order may differ only between near-equal scores.
            prop_assert_eq!(got.len(), want.len(), "{:?} vs {:?}", out.hits, want);
            let mut sorted_got = got.clone();
            sorted_got.sort_unstable();
            let mut sorted_want = want_tools.clone();
            sorted_want.sort_unstable();
            prop_assert_eq!(&sorted_got, &sorted_want);
            for (h, w) in out.hits.iter().zip(&want) {
                prop_assert!((h.score - w.1).abs() <= 1e-9 * w.1.abs().max(1.0), "{:?} vs {:?}", h, w);
            }
            for h in &out.hits {
                let e = s.explain_tool(&request, h.tool).unwrap();
                prop_assert!((e.value - h.score).abs() < 1e-9);
            }
        }

        #[test]
        fn deterministic_unique_and_explained(
            descs in proptest::collection::vec("[abc ]{0,12}", 1..8),
            q in "[abc ]{1,8}",
        ) {
            let tools = descs.iter().enumerate().map(|(i, d)| builtin(&format!("T{i}"), d)).collect();
            let s = Bm25Scorer::new(catalog(tools));
            let out = s.search(&SearchRequest::new(&q, 20)).unwrap();
            let mut seen = std::collections::HashSet::new();
            prop_assert!(out.hits.iter().all(|h| seen.insert(h.tool)));
            prop_assert_eq!(&out, &s.search(&SearchRequest::new(&q, 20)).unwrap());
            for h in &out.hits {
                let e = s.explain_tool(&SearchRequest::new(&q, 20), h.tool).unwrap();
                prop_assert!((e.value - h.score).abs() < 1e-9);
                let sum: f64 = e.children.iter().map(|c| c.value).sum();
                prop_assert!((sum - h.score).abs() < 1e-9);
            }
        }
    }
}
