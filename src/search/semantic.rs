//! The `semantic` scorer: cosine similarity between the query's embedding and each tool
//! document's embedding (all-MiniLM-L6-v2, see `embed`).
//!
//! A tool's document is its name split into words (`mcp__slack__send_message` → "slack send
//! message", `NotebookEdit` → "Notebook Edit"), its description and its argument names split the
//! same way; queries embed as given. Both are truncated at 256 word pieces. Argument
//! descriptions are left out on purpose: adding them was measured to lift BFCL recall@5 from
//! 0.848 to 0.874 but to drop a generated 10,000-tool catalog from 0.93 to 0.77 (templated
//! argument text drowns the tool's purpose), and it left hybrid barely above its parts. Document vectors are
//! computed once per catalog (batched, parallel) and cached on disk (`embed_cache`); they sit in
//! one contiguous row-major `f32` matrix, so a query is one embedding (~8 ms) plus `n × 384`
//! multiply-adds.

use std::path::Path;
use std::sync::Arc;

use super::embed::{Embedder, MAX_TOKENS, MODEL_NAME};
use super::embed_cache::{CacheStatus, DocumentKey, EmbedCache};
use super::query_vectors::QueryVectors;
use super::text::name_words;
use super::{
    Contribution, Explanation, Hit, Scorer, ScorerKind, SearchError, SearchOutcome, SearchRequest,
};
use crate::catalog::{Catalog, Tool};
use crate::error::{Error, InputError};

/// Queries are cut to this many characters before tokenizing, which bounds the tokenizer's work;
/// the model reads only the first 256 word pieces anyway, and no realistic 256 pieces span more
/// (a long query is not an error: every labeled query must be answerable).
pub const MAX_QUERY_CHARS: usize = 20_000;

/// `query` cut at `MAX_QUERY_CHARS` characters: the text the model embeds.
pub fn cut_query(query: &str) -> &str {
    query
        .char_indices()
        .nth(MAX_QUERY_CHARS)
        .map_or(query, |(at, _)| &query[..at])
}

pub struct SemanticScorer {
    catalog: Arc<Catalog>,
    embedder: Arc<Embedder>,
    documents: Vec<String>,
    /// `catalog.len() × dim` unit vectors, row i = tool i.
    matrix: Vec<f32>,
    dim: usize,
    cache_status: CacheStatus,
    query_vectors: Option<Arc<QueryVectors>>,
}

impl SemanticScorer {
    /// Embeds every tool's document, reading and writing the cache under `cache_dir` when given.
    /// This is also the entry point for the index-build benchmarks (cold: a fresh `cache_dir`;
    /// cached: the same one twice).
    pub fn new(
        catalog: Arc<Catalog>,
        embedder: Arc<Embedder>,
        cache_dir: Option<&Path>,
    ) -> Result<SemanticScorer, Error> {
        Self::with_progress(catalog, embedder, cache_dir, &crate::progress::Quiet)
    }

    /// [`SemanticScorer::new`], reporting to `progress` (a phase over the tools) while a cold
    /// index is embedded; a cached one reports nothing.
    pub fn with_progress(
        catalog: Arc<Catalog>,
        embedder: Arc<Embedder>,
        cache_dir: Option<&Path>,
        progress: &dyn crate::progress::Progress,
    ) -> Result<SemanticScorer, Error> {
        let documents: Vec<String> = catalog.tools().iter().map(document_text).collect();
        let dim = embedder.dim();
        let key = DocumentKey::new(&documents);
        let cache = cache_dir.map(|d| EmbedCache::new(d, embedder.fingerprint()));
        if let Some(cache) = &cache
            && let Some(matrix) = cache.load(&key, dim)
        {
            return Ok(SemanticScorer {
                cache_status: CacheStatus::Hit(cache.path_for(&key)),
                catalog,
                embedder,
                documents,
                matrix,
                dim,
                query_vectors: None,
            });
        }
        let texts: Vec<&str> = documents.iter().map(String::as_str).collect();
        progress.phase(
            "embedding",
            texts.len() as u64,
            crate::progress::Unit::Items("tools"),
        );
        let matrix = embedder.embed_all(&texts, progress);
        progress.finish();
        let matrix = matrix.map_err(Error::Missing)?;
        let cache_status = match &cache {
            None => CacheStatus::Disabled,
            Some(cache) => match cache.store(&key, dim, &matrix) {
                Ok(path) => CacheStatus::Written(path),
                Err(e) => CacheStatus::WriteFailed(e.to_string()),
            },
        };
        Ok(SemanticScorer {
            catalog,
            embedder,
            documents,
            matrix,
            dim,
            cache_status,
            query_vectors: None,
        })
    }

    /// Whether the vectors came from the cache (for `-v` output and tests).
    pub fn cache_status(&self) -> &CacheStatus {
        &self.cache_status
    }

    /// The text embedded for tool `i`.
    pub fn document(&self, tool: usize) -> &str {
        &self.documents[tool]
    }

    /// Uses `vectors` for the queries they hold instead of embedding them again (the same
    /// `embed_one` vectors: see `query_vectors`).
    pub fn with_query_vectors(mut self, vectors: Option<Arc<QueryVectors>>) -> SemanticScorer {
        self.query_vectors = vectors;
        self
    }

    fn query_vector(&self, query: &str) -> Result<Vec<f32>, InputError> {
        if query.trim().is_empty() {
            return Err(InputError::usage("the query is empty"));
        }
        let cut = cut_query(query);
        if let Some(v) = self
            .query_vectors
            .as_deref()
            .and_then(|qv| qv.get(self.embedder.fingerprint(), cut))
        {
            return Ok(v.to_vec());
        }
        self.embedder
            .embed_one(cut)
            .map_err(|e| InputError::usage(format!("cannot embed the query: {e}")))
    }

    /// Cosine of every searchable tool, unsorted. Large catalogs are split over the cores: at
    /// 10,000 tools the matrix is 15 MB, more than one core reads in the time of the query's
    /// embedding.
    fn cosines(&self, query: &[f32], request: &SearchRequest<'_>) -> Vec<Hit> {
        const ROWS_PER_TASK: usize = 2_048;
        let score = |(tool, row): (usize, &[f32])| Hit {
            tool,
            score: f64::from(super::bert::dot(query, row)),
        };
        let rows = self.matrix.chunks_exact(self.dim).enumerate();
        let mut hits: Vec<Hit> = if self.catalog.len() > ROWS_PER_TASK {
            use rayon::prelude::*;
            self.matrix
                .par_chunks_exact(self.dim)
                .with_min_len(ROWS_PER_TASK)
                .enumerate()
                .map(score)
                .collect()
        } else {
            rows.map(score).collect()
        };
        if request.candidates.is_some() {
            hits.retain(|h| request.is_candidate(h.tool));
        }
        hits
    }
}

impl Scorer for SemanticScorer {
    fn name(&self) -> String {
        ScorerKind::Semantic.name().to_string()
    }

    fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError> {
        let query = self.query_vector(request.query)?;
        let hits = self.cosines(&query, request);
        Ok(SearchOutcome {
            total_tools: hits.len(),
            reported_us: None,
            hits: crate::search::rank_hits(&self.catalog, hits, request.limit),
            not_found: Vec::new(),
            ambiguous: Vec::new(),
        })
    }

    fn explain_tool(
        &self,
        request: &SearchRequest<'_>,
        tool: usize,
    ) -> Result<Explanation, SearchError> {
        let query = request.query;
        let q = self.query_vector(query)?;
        // Ranked among the tools the search ranks (the request's candidates: never the search
        // tool), so the rank agrees with the search's "among N tools".
        let among = self.cosines(&q, request);
        let row = &self.matrix[tool * self.dim..(tool + 1) * self.dim];
        let cosine = f64::from(super::bert::dot(&q, row));
        let id = &self.catalog.get(tool).id;
        let rank = 1 + among
            .iter()
            .filter(|h| {
                h.score > cosine || (h.score == cosine && self.catalog.get(h.tool).id < *id)
            })
            .count();
        let why = Contribution {
            term: query.to_string(),
            field: crate::search::Field::Document,
            detail: format!("cosine {cosine:.4}, rank {rank} of {}", among.len()),
            points: cosine,
        };
        let note = format!("document: {:?}", self.documents[tool]);
        Ok(Explanation::from_parts(cosine, vec![why], Some(note)))
    }

    fn settings(&self) -> Vec<(String, String)> {
        vec![
            ("model".into(), MODEL_NAME.into()),
            (
                "model_sha256".into(),
                self.embedder.fingerprint()[..12].to_string(),
            ),
            ("max_tokens".into(), MAX_TOKENS.to_string()),
            ("pooling".into(), "mean, l2-normalised".into()),
            (
                "document".into(),
                "name words + description + argument names".into(),
            ),
        ]
    }
}

/// The text embedded for a tool: name words, description, argument names.
pub fn document_text(tool: &Tool) -> String {
    let name = name_words(&tool.id);
    let description = tool.description.trim();
    let arguments: Vec<String> = tool
        .input_schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|props| props.keys().map(|k| name_words(k)).collect())
        .unwrap_or_default();
    let mut text = name;
    for part in [description.to_string(), arguments_sentence(&arguments)] {
        if part.is_empty() {
            continue;
        }
        if !text.ends_with(['.', '!', '?']) {
            text.push('.');
        }
        text.push(' ');
        text.push_str(&part);
    }
    text
}

fn arguments_sentence(arguments: &[String]) -> String {
    if arguments.is_empty() {
        String::new()
    } else {
        format!("Arguments: {}.", arguments.join(", "))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::search::embed::tests::test_embedder;
    use serde_json::json;

    pub(crate) fn tool(id: &str, description: &str, args: &[&str]) -> Tool {
        let props: serde_json::Map<String, serde_json::Value> = args
            .iter()
            .map(|a| (a.to_string(), json!({"type": "string"})))
            .collect();
        let (server, name) = match id.strip_prefix("mcp__").and_then(|r| r.split_once("__")) {
            Some((s, n)) => (Some(s.to_string()), n.to_string()),
            None => (None, id.to_string()),
        };
        Tool {
            id: id.to_string(),
            name,
            server,
            description: description.to_string(),
            input_schema: json!({"type": "object", "properties": props}),
            should_defer: None,
            always_load: false,
            search_hint: None,
            depends_on: Vec::new(),
            origin: None,
        }
    }

    pub(crate) fn small_catalog() -> Arc<Catalog> {
        Arc::new(
            Catalog::from_tools(vec![
                tool(
                    "mcp__slack__send_message",
                    "Post a message to a Slack channel.",
                    &["channel", "text"],
                ),
                tool(
                    "Read",
                    "Reads a file from the local filesystem.",
                    &["file_path"],
                ),
                tool(
                    "mcp__weather__get_forecast",
                    "Get the weather forecast for a city.",
                    &["city", "days"],
                ),
                tool(
                    "NotebookEdit",
                    "Edit a cell of a Jupyter notebook.",
                    &["cell_id"],
                ),
            ])
            .unwrap(),
        )
    }

    #[test]
    fn document_has_name_description_and_arguments() {
        let t = tool(
            "mcp__slack__send_message",
            "Post a message.",
            &["channel_id", "text"],
        );
        assert_eq!(
            document_text(&t),
            "slack send message. Post a message. Arguments: channel id, text."
        );
        let bare = tool("Read", "", &[]);
        assert_eq!(document_text(&bare), "Read");
    }

    #[test]
    fn top_hits_breaks_ties_by_id() {
        let catalog = small_catalog();
        let hits = vec![
            Hit {
                tool: 2,
                score: 0.5,
            },
            Hit {
                tool: 1,
                score: 0.5,
            },
            Hit {
                tool: 0,
                score: 0.9,
            },
            Hit {
                tool: 3,
                score: 0.1,
            },
        ];
        let top = crate::search::rank_hits(&catalog, hits, 2);
        // "Read" < "mcp__weather__get_forecast" in byte order.
        assert_eq!(top.iter().map(|h| h.tool).collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn ranks_by_meaning_and_respects_candidates() {
        let Some(model) = test_embedder() else { return };
        let scorer = SemanticScorer::new(small_catalog(), model, None).unwrap();
        assert_eq!(scorer.cache_status(), &CacheStatus::Disabled);
        let out = scorer
            .search(&SearchRequest::new("will it rain in Paris tomorrow", 4))
            .unwrap();
        assert_eq!(out.hits[0].tool, 2);
        assert_eq!(out.total_tools, 4);
        assert_eq!(out.hits.len(), 4);
        let mask = [true, true, false, true];
        let mut req = SearchRequest::new("will it rain in Paris tomorrow", 4);
        req.candidates = Some(&mask);
        let out = scorer.search(&req).unwrap();
        assert_eq!(out.total_tools, 3);
        assert!(out.hits.iter().all(|h| h.tool != 2));

        let e = scorer
            .explain_tool(&SearchRequest::new("open the jupyter notebook cell", 5), 3)
            .unwrap();
        assert!(e.children[0].label.contains("rank 1 of 4"), "{e:?}");
        // Ranked among the request's candidates, as the search's "among N tools" counts.
        let mut req = SearchRequest::new("open the jupyter notebook cell", 5);
        req.candidates = Some(&mask);
        let masked = scorer.explain_tool(&req, 3).unwrap();
        assert!(
            masked.children[0].label.contains("rank 1 of 3"),
            "{masked:?}"
        );
        assert_eq!(masked.value, e.value);
        assert!(e.value > 0.2 && e.value <= 1.0);
        assert!(scorer.search(&SearchRequest::new("  ", 5)).is_err());
    }

    #[test]
    fn missing_model_fails_both_scorers_naming_the_recipe() {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::search::ScorerConfig {
            model_dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        };
        for kind in [ScorerKind::Semantic, ScorerKind::Hybrid] {
            let Err(err) = crate::search::build(kind, small_catalog(), &config) else {
                panic!("{kind} built without a model")
            };
            assert!(matches!(err, Error::Missing(_)), "{err:?}");
            assert!(err.to_string().contains("run `just model`"), "{err}");
        }
    }

    #[test]
    fn second_build_reads_the_cache() {
        let Some(model) = test_embedder() else { return };
        let dir = tempfile::tempdir().unwrap();
        let first = SemanticScorer::new(small_catalog(), model.clone(), Some(dir.path())).unwrap();
        assert!(matches!(first.cache_status(), CacheStatus::Written(_)));
        let second = SemanticScorer::new(small_catalog(), model, Some(dir.path())).unwrap();
        assert!(matches!(second.cache_status(), CacheStatus::Hit(_)));
        assert_eq!(first.matrix, second.matrix);
    }
}
