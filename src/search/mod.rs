//! The search core: one trait, one file per scorer. The simulator, the evaluator, the CLI and
//! the benchmarks all rank tools through `Scorer::search`; nothing else reimplements scoring.
//!
//! A scorer is built once per catalog (indexes precomputed) and then answers queries over all
//! tools or over a candidate subset (the simulator searches only the deferred tools).

// The encoder lives in its own crate (crates/bert) so that its kernels are optimised in dev and
// test builds too ([profile.dev.package.toolbudget-bert]). Semantic search is the `semantic`
// feature (default); without it `semantic` and `hybrid` are refused when built.
#[cfg(feature = "semantic")]
pub use toolbudget_bert as bert;
pub mod bm25;
#[cfg(feature = "semantic")]
pub mod embed;
#[cfg(feature = "semantic")]
pub mod embed_cache;
pub mod external;
pub mod hybrid;
pub mod keyword;
#[cfg(feature = "semantic")]
pub mod query_vectors;
pub mod regex_scorer;
pub mod scorer_name;
#[cfg(feature = "semantic")]
pub mod semantic;
pub mod spec;
pub mod text;
pub mod trigram;

use std::path::PathBuf;
use std::sync::Arc;
#[cfg(feature = "semantic")]
use std::{path::Path, sync::Mutex};

use crate::catalog::Catalog;
use crate::error::InputError;

pub use scorer_name::ScorerName;
pub use spec::{ScorerSpec, build_spec};

/// One ranked tool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Index into the catalog the scorer was built on.
    pub tool: usize,
    pub score: f64,
}

/// What a query asks for.
#[derive(Debug, Clone, Copy)]
pub struct SearchRequest<'a> {
    pub query: &'a str,
    /// Most results wanted. Scorers may apply their own cap (keyword: 20).
    pub limit: usize,
    /// When set, only tools whose flag is true are searchable (`len() == catalog.len()`).
    pub candidates: Option<&'a [bool]>,
    /// The caller's name for the query (a labeled query's id), which an external scorer
    /// receives and error messages name; `None`: the scorer numbers its queries itself.
    pub id: Option<&'a str>,
}

impl<'a> SearchRequest<'a> {
    pub fn new(query: &'a str, limit: usize) -> Self {
        SearchRequest {
            query,
            limit,
            candidates: None,
            id: None,
        }
    }

    pub fn is_candidate(&self, tool: usize) -> bool {
        self.candidates.is_none_or(|c| c[tool])
    }

    /// Number of searchable tools (`total_tools` in the contract's json).
    pub fn searchable(&self, catalog_len: usize) -> usize {
        match self.candidates {
            Some(c) => c.iter().filter(|&&b| b).count(),
            None => catalog_len,
        }
    }
}

/// A ranking, best first, ties broken by tool id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchOutcome {
    pub hits: Vec<Hit>,
    /// `select:` names that matched no tool (keyword scorer only).
    pub not_found: Vec<String>,
    /// `select:` names that stand for several tools, none selected (keyword scorer only).
    pub ambiguous: Vec<Ambiguous>,
    /// How many tools were searchable.
    pub total_tools: usize,
    /// The time an external scorer says it spent on the query (its `elapsed_us`), beside the
    /// round trip toolbudget measures.
    pub reported_us: Option<f64>,
}

/// A shortened `select:` name that fits several tools, and their ids.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Ambiguous {
    pub name: String,
    pub candidates: Vec<String>,
}

/// The part of a tool a score comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Id,
    Name,
    Description,
    ArgumentNames,
    ArgumentDescriptions,
    SearchHint,
    /// The whole embedded document (semantic).
    Document,
}

impl Field {
    /// The lexical fields of bm25 and regex, in the order of their weights.
    pub const LEXICAL: [Field; 4] = [
        Field::Name,
        Field::Description,
        Field::ArgumentNames,
        Field::ArgumentDescriptions,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Name => "name",
            Field::Description => "description",
            Field::ArgumentNames => "argument_names",
            Field::ArgumentDescriptions => "argument_descriptions",
            Field::SearchHint => "search_hint",
            Field::Document => "document",
        }
    }
}

impl std::fmt::Display for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One reason for points, as a scorer finds it: a (term, field) pair and what matched. It
/// becomes a leaf of an [`Explanation`].
#[derive(Debug, Clone, PartialEq)]
pub struct Contribution {
    pub term: String,
    pub field: Field,
    pub detail: String,
    pub points: f64,
}

/// A node of an explanation tree (tantivy's `Explanation` is the model): what it stands for,
/// its value, and the nodes it is made of. `Scorer::explain` returns a root whose children are
/// the ranked tools; a tool's children are its contributions, or, for hybrid, the nested
/// explanations of its two parts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Explanation {
    pub label: String,
    pub value: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Explanation>,
}

impl Explanation {
    pub fn leaf(label: impl Into<String>, value: f64) -> Explanation {
        Explanation {
            label: label.into(),
            value,
            children: Vec::new(),
        }
    }

    /// A tool's score made of `contributions`; `note` says what is not a sum of them (a
    /// filter, a fused rank), else the label says the score is their sum.
    pub fn from_parts(score: f64, contributions: Vec<Contribution>, note: Option<String>) -> Self {
        let label = note.unwrap_or_else(|| match contributions.len() {
            0 => "no term matched".to_string(),
            1 => "one match".to_string(),
            n => format!("sum of {n} matches"),
        });
        Explanation {
            label,
            value: score,
            children: contributions
                .into_iter()
                .map(|c| {
                    Explanation::leaf(format!("{} {:?}: {}", c.field, c.term, c.detail), c.points)
                })
                .collect(),
        }
    }

    /// Every node depth first with its depth (the root is 0), for tables.
    pub fn flatten(&self) -> Vec<(usize, &Explanation)> {
        let mut out = Vec::new();
        let mut stack = vec![(0, self)];
        while let Some((depth, node)) = stack.pop() {
            out.push((depth, node));
            stack.extend(node.children.iter().rev().map(|c| (depth + 1, c)));
        }
        out
    }
}

/// Why a search returned no ranking.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    /// The scorer cannot answer this query (a bad regex, a query too long): `eval` counts it
    /// refused and scores it 0, the simulator stops at the scenario line that sent it.
    #[error("{0}")]
    Refused(#[from] InputError),
    /// The scorer itself failed (an external scorer crashed, timed out or answered something
    /// that is not an answer): the run stops with the message.
    #[error("{0}")]
    Failed(String),
}

impl SearchError {
    /// The message without its kind.
    pub fn message(&self) -> &str {
        match self {
            SearchError::Refused(e) => &e.message,
            SearchError::Failed(m) => m,
        }
    }
}

impl From<SearchError> for crate::error::Error {
    fn from(e: SearchError) -> Self {
        match e {
            SearchError::Refused(e) => crate::error::Error::Input(e),
            SearchError::Failed(m) => crate::error::Error::Scorer(m),
        }
    }
}

pub trait Scorer: Send + Sync {
    /// The name every output gives the scorer: a built-in's name (`bm25`), or an external
    /// scorer's `exec:NAME` / `mcp:NAME` as it reported itself.
    fn name(&self) -> String;

    /// Ranks tools for the query. Invalid queries (bad regex, too long) are refused; a scorer
    /// that cannot answer at all (an external process that crashed) fails.
    fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError>;

    /// Why `tool` gets the score `search` gives it for `request` (0 when it is not ranked).
    fn explain_tool(
        &self,
        request: &SearchRequest<'_>,
        tool: usize,
    ) -> Result<Explanation, SearchError>;

    /// The ranking `search` returns for `request`, explained: a root whose children are the
    /// ranked tools in rank order (`hits[i]` of the same search is child `i`).
    fn explain(&self, request: &SearchRequest<'_>) -> Result<Explanation, SearchError> {
        let outcome = self.search(request)?;
        let children = outcome
            .hits
            .iter()
            .enumerate()
            .map(|(rank, h)| {
                let mut e = self.explain_tool(request, h.tool)?;
                e.label = format!("rank {}: {}", rank + 1, e.label);
                Ok(e)
            })
            .collect::<Result<Vec<_>, SearchError>>()?;
        Ok(Explanation {
            label: format!(
                "{} ranked {} of {} tools for {:?}",
                self.name(),
                children.len(),
                outcome.total_tools,
                request.query
            ),
            value: children.len() as f64,
            children,
        })
    }

    /// How many searchable tools the query matches before any limit (a scorer that ranks
    /// every tool, as semantic does, matches them all).
    fn count_matches(&self, request: &SearchRequest<'_>) -> Result<usize, SearchError> {
        let all = SearchRequest {
            limit: usize::MAX,
            ..*request
        };
        Ok(self.search(&all)?.hits.len())
    }

    /// The parameters in force, printed with every result (`k1=1.2`, `weights=...`).
    fn settings(&self) -> Vec<(String, String)>;
}

/// The scorer names of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScorerKind {
    Keyword,
    Regex,
    Bm25,
    Semantic,
    Hybrid,
}

impl ScorerKind {
    pub const ALL: [ScorerKind; 5] = [
        ScorerKind::Keyword,
        ScorerKind::Regex,
        ScorerKind::Bm25,
        ScorerKind::Semantic,
        ScorerKind::Hybrid,
    ];

    /// The most results the scorer returns, if it has a maximum (Claude Code's ToolSearch
    /// returns at most 20).
    pub fn max_limit(self) -> Option<usize> {
        match self {
            ScorerKind::Keyword => Some(keyword::MAX_LIMIT),
            ScorerKind::Regex | ScorerKind::Bm25 | ScorerKind::Semantic | ScorerKind::Hybrid => {
                None
            }
        }
    }
}

crate::named_enum!(ScorerKind, "scorer");

/// Sorts hits best first with the tool id as tie-break, and keeps the first `limit`.
/// Selects the best `limit` before sorting, so a query matching most of a large catalog costs
/// linear time, not a full sort.
pub fn rank_hits(catalog: &Catalog, mut hits: Vec<Hit>, limit: usize) -> Vec<Hit> {
    let order = |a: &Hit, b: &Hit| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| catalog.get(a.tool).id.cmp(&catalog.get(b.tool).id))
    };
    if limit == 0 {
        return Vec::new();
    }
    if hits.len() > limit {
        hits.select_nth_unstable_by(limit - 1, order);
        hits.truncate(limit);
    }
    hits.sort_by(order);
    hits
}

/// Settings for building scorers, from CLI flags or a scenario. Each scorer documents its
/// defaults; `Default` gives them.
#[derive(Debug, Clone, Default)]
pub struct ScorerConfig {
    /// Where the embedding model lives (semantic and hybrid scorers); `None`: see
    /// `embed::resolve_model_dir` (env `TOOLBUDGET_MODEL_DIR`, then `models/all-MiniLM-L6-v2`).
    pub model_dir: Option<PathBuf>,
    /// Embedding cache folder; `None`: see `embed_cache::resolve_cache_dir` (env
    /// `TOOLBUDGET_CACHE_DIR`, then `$XDG_CACHE_HOME/toolbudget`, then `~/.cache/toolbudget`).
    pub cache_dir: Option<PathBuf>,
    /// Compute embeddings without reading or writing the cache.
    pub no_cache: bool,
    /// How `hybrid` fuses bm25 with semantic.
    pub fusion: hybrid::FusionConfig,
    /// bm25's k1, b and field weights (also the lexical half of `hybrid`).
    pub bm25: bm25::Bm25Params,
    /// Told how far a cold semantic index has got; `None`: silent.
    pub progress: Option<crate::progress::Shared>,
    /// How external scorers (`exec:`, `mcp:`) are started and waited for.
    pub external: external::ExternalConfig,
    /// A query set's vectors, computed once for every semantic and hybrid scorer of a run that
    /// measures no latency (`eval --no-latency`); `None`: each scorer embeds each query.
    #[cfg(feature = "semantic")]
    pub query_vectors: Option<Arc<query_vectors::QueryVectors>>,
}

impl ScorerConfig {
    /// The embedding cache folder these settings use; `None` with `no_cache` or when none is
    /// known.
    #[cfg(feature = "semantic")]
    pub fn embedding_cache_dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            None
        } else {
            embed_cache::resolve_cache_dir(self.cache_dir.as_deref())
        }
    }
}

/// Builds the scorer of `kind` over `catalog`, precomputing its index.
pub fn build(
    kind: ScorerKind,
    catalog: Arc<Catalog>,
    config: &ScorerConfig,
) -> crate::Result<Box<dyn Scorer>> {
    match kind {
        ScorerKind::Keyword => Ok(Box::new(keyword::KeywordScorer::new(catalog))),
        ScorerKind::Regex => Ok(Box::new(regex_scorer::RegexScorer::new(catalog))),
        ScorerKind::Bm25 => {
            config.bm25.validate().map_err(crate::error::Error::usage)?;
            Ok(Box::new(bm25::Bm25Scorer::with_params(
                catalog,
                config.bm25,
            )))
        }
        #[cfg(not(feature = "semantic"))]
        ScorerKind::Semantic | ScorerKind::Hybrid => Err(crate::error::Error::usage(format!(
            "the {} scorer needs toolbudget's `semantic` feature, which this build was compiled without",
            ScorerName::from(kind)
        ))),
        #[cfg(feature = "semantic")]
        ScorerKind::Semantic => Ok(Box::new(build_semantic(catalog, config)?)),
        #[cfg(feature = "semantic")]
        ScorerKind::Hybrid => {
            config.fusion.validate()?;
            let semantic = build_semantic(catalog.clone(), config)?;
            let lexical = build(ScorerKind::Bm25, catalog.clone(), config)?;
            Ok(Box::new(hybrid::HybridScorer::new(
                catalog,
                lexical,
                Box::new(semantic),
                config.fusion,
            )?))
        }
    }
}

/// Builds the semantic scorer (model found per `config`, cache per `config`).
#[cfg(feature = "semantic")]
pub fn build_semantic(
    catalog: Arc<Catalog>,
    config: &ScorerConfig,
) -> crate::Result<semantic::SemanticScorer> {
    let embedder = load_embedder(config.model_dir.as_deref())?;
    let cache_dir = config.embedding_cache_dir();
    let progress: &dyn crate::progress::Progress = match &config.progress {
        Some(p) => &**p,
        None => &crate::progress::Quiet,
    };
    Ok(
        semantic::SemanticScorer::with_progress(catalog, embedder, cache_dir.as_deref(), progress)?
            .with_query_vectors(config.query_vectors.clone()),
    )
}

/// Loads the model once per process and folder: `eval` building semantic and hybrid shares it.
#[cfg(feature = "semantic")]
pub fn load_embedder(model_dir: Option<&Path>) -> crate::Result<Arc<embed::Embedder>> {
    static LOADED: Mutex<Vec<(PathBuf, Arc<embed::Embedder>)>> = Mutex::new(Vec::new());
    let dir = embed::resolve_model_dir(model_dir)?;
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, e)) = loaded.iter().find(|(d, _)| *d == dir) {
        return Ok(e.clone());
    }
    let embedder = Arc::new(embed::Embedder::load(&dir)?);
    loaded.push((dir, embedder.clone()));
    Ok(embedder)
}
