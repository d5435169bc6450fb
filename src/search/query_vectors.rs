//! A query set's embeddings, computed once and shared by every semantic and hybrid scorer of a
//! run (and, through the embedding cache, by later runs over the same queries).
//!
//! `eval --no-latency` uses them: a run that measures no latency need not embed each query again
//! per scorer. Each query is embedded alone with `Embedder::embed_one`, exactly as the scorer
//! embeds it when no vectors are given, so rankings are the same either way (a test checks it).
//! A run that measures latency never uses them: its latency must include the query's embedding.

use std::collections::HashMap;
use std::path::Path;

use super::embed::Embedder;
use super::embed_cache::{CacheStatus, DocumentKey, EmbedCache};
use super::semantic::cut_query;

/// Unit vectors of distinct query texts (as cut by `semantic::cut_query`), under one model.
pub struct QueryVectors {
    model_fingerprint: String,
    dim: usize,
    row_of: HashMap<String, usize>,
    matrix: Vec<f32>,
    cache_status: CacheStatus,
}

impl std::fmt::Debug for QueryVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryVectors")
            .field("queries", &self.row_of.len())
            .field("dim", &self.dim)
            .field("cache_status", &self.cache_status)
            .finish_non_exhaustive()
    }
}

impl QueryVectors {
    /// Embeds the distinct non-empty `queries`, reading and writing the cache under
    /// `cache_dir` when given. Empty queries are left out: the scorer refuses them.
    pub fn compute<S: AsRef<str>>(
        embedder: &Embedder,
        queries: &[S],
        cache_dir: Option<&Path>,
    ) -> Result<QueryVectors, String> {
        let mut texts: Vec<&str> = queries
            .iter()
            .map(AsRef::as_ref)
            .filter(|q| !q.trim().is_empty())
            .map(cut_query)
            .collect();
        texts.sort_unstable();
        texts.dedup();
        let dim = embedder.dim();
        let key = DocumentKey::queries(&texts);
        let cache = cache_dir.map(|d| EmbedCache::new(d, embedder.fingerprint()));
        let cached = cache
            .as_ref()
            .and_then(|c| Some((c.load(&key, dim)?, c.path_for(&key))));
        let (matrix, cache_status) = if let Some((matrix, path)) = cached {
            (matrix, CacheStatus::Hit(path))
        } else {
            let mut matrix = Vec::with_capacity(texts.len() * dim);
            for text in &texts {
                matrix.extend(
                    embedder
                        .embed_one(text)
                        .map_err(|e| format!("cannot embed the query {text:?}: {e}"))?,
                );
            }
            let status = match &cache {
                None => CacheStatus::Disabled,
                Some(c) => match c.store(&key, dim, &matrix) {
                    Ok(path) => CacheStatus::Written(path),
                    Err(e) => CacheStatus::WriteFailed(e.to_string()),
                },
            };
            (matrix, status)
        };
        let row_of = texts
            .iter()
            .enumerate()
            .map(|(row, t)| ((*t).to_string(), row))
            .collect();
        Ok(QueryVectors {
            model_fingerprint: embedder.fingerprint().to_string(),
            dim,
            row_of,
            matrix,
            cache_status,
        })
    }

    /// The vector of `cut` (a query already cut by `cut_query`) under the model of
    /// `model_fingerprint`; `None` for a query not in the set or another model.
    pub fn get(&self, model_fingerprint: &str, cut: &str) -> Option<&[f32]> {
        if model_fingerprint != self.model_fingerprint {
            return None;
        }
        let row = *self.row_of.get(cut)?;
        Some(&self.matrix[row * self.dim..(row + 1) * self.dim])
    }

    /// Distinct queries held.
    pub fn len(&self) -> usize {
        self.row_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.row_of.is_empty()
    }

    /// Whether the vectors came from the cache.
    pub fn cache_status(&self) -> &CacheStatus {
        &self.cache_status
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::search::embed::tests::test_embedder;
    use crate::search::semantic::SemanticScorer;
    use crate::search::semantic::tests::small_catalog;
    use crate::search::{Scorer, SearchRequest};

    const QUERIES: [&str; 4] = [
        "will it rain in Paris tomorrow",
        "open the jupyter notebook cell",
        "   ",
        "will it rain in Paris tomorrow",
    ];

    #[test]
    fn shared_vectors_rank_as_the_scorer_alone_and_come_back_from_the_cache() {
        let Some(model) = test_embedder() else { return };
        let dir = tempfile::tempdir().unwrap();
        let first = QueryVectors::compute(&model, &QUERIES, Some(dir.path())).unwrap();
        // The blank query is left out (the scorer refuses it); the repeat is held once.
        assert_eq!(first.len(), 2);
        assert!(matches!(first.cache_status(), CacheStatus::Written(_)));
        let second = QueryVectors::compute(&model, &QUERIES, Some(dir.path())).unwrap();
        assert!(matches!(second.cache_status(), CacheStatus::Hit(_)));
        for q in &QUERIES[..2] {
            let want = model.embed_one(q).unwrap();
            assert_eq!(first.get(model.fingerprint(), q), Some(want.as_slice()));
            assert_eq!(second.get(model.fingerprint(), q), Some(want.as_slice()));
        }
        assert_eq!(first.get("another model", QUERIES[0]), None);
        assert_eq!(
            first.get(model.fingerprint(), "a query not in the set"),
            None
        );

        let alone = SemanticScorer::new(small_catalog(), model.clone(), None).unwrap();
        let shared = SemanticScorer::new(small_catalog(), model, None)
            .unwrap()
            .with_query_vectors(Some(Arc::new(second)));
        for q in QUERIES {
            let request = SearchRequest::new(q, 4);
            match (alone.search(&request), shared.search(&request)) {
                (Ok(a), Ok(b)) => assert_eq!(a.hits, b.hits, "{q}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{q}"),
                (a, b) => panic!("{q}: {a:?} against {b:?}"),
            }
        }
    }

    #[test]
    fn a_query_set_never_reads_a_catalogs_vectors() {
        let texts = ["send mail"];
        let dir = tempfile::tempdir().unwrap();
        let cache = EmbedCache::new(dir.path(), &"0".repeat(64));
        assert_ne!(
            cache.path_for(&DocumentKey::new(&texts)),
            cache.path_for(&DocumentKey::queries(&texts))
        );
    }
}
