//! select: names resolved to tools (exact id, bare name, an unambiguous suffix), and exact-name routes before keyword scoring.

use super::*;

impl KeywordScorer {
    /// The tools a `select:` name stands for (searchable ones only): the id, else the bare
    /// MCP name, else the end of an id after `_` or `.`; the last two only when unique.
    pub(super) fn resolve_name(&self, name: &str, request: &SearchRequest<'_>) -> Resolved {
        let ok = |t: &&u32| request.is_candidate(**t as usize);
        if let Some(i) = self.catalog.index_of(name)
            && request.is_candidate(i)
        {
            return Resolved::Tools(vec![i as u32]);
        }
        let lower = name.to_lowercase();
        if let Some(list) = self.lower_ids.get(&lower) {
            let found: Vec<u32> = list.iter().filter(ok).copied().collect();
            if !found.is_empty() {
                return Resolved::Tools(found);
            }
        }
        let bare: Vec<u32> = self
            .bare_names
            .get(&lower)
            .map(|list| list.iter().filter(ok).copied().collect())
            .unwrap_or_default();
        let found = if bare.is_empty() {
            self.suffix_matches(&lower, request)
        } else {
            bare
        };
        match found.len() {
            0 => Resolved::NotFound,
            1 => Resolved::Tools(found),
            _ => Resolved::Ambiguous(found),
        }
    }

    /// Searchable tools whose lowercase id ends with `lower` right after a `_` or `.`.
    pub(super) fn suffix_matches(&self, lower: &str, request: &SearchRequest<'_>) -> Vec<u32> {
        if lower.is_empty() {
            return Vec::new();
        }
        let mut found: Vec<u32> = self
            .lower_ids
            .iter()
            .filter(|(id, _)| {
                id.len() > lower.len()
                    && id.ends_with(lower)
                    && matches!(id.as_bytes()[id.len() - lower.len() - 1], b'_' | b'.')
            })
            .flat_map(|(_, tools)| tools.iter().copied())
            .filter(|&t| request.is_candidate(t as usize))
            .collect();
        let tools = self.catalog.tools();
        found.sort_by(|&a, &b| tools[a as usize].id.cmp(&tools[b as usize].id));
        found
    }

    /// The named tools in order. Refused, before any name is looked up, when the names times
    /// the catalog are over `budget::MAX_SELECT_WORK` (a shortened name is looked up among
    /// every id).
    pub(super) fn select(
        &self,
        names: &str,
        request: &SearchRequest<'_>,
    ) -> Result<SearchOutcome, SearchError> {
        let count = names.split(',').filter(|n| !n.trim().is_empty()).count() as u64;
        crate::budget::check(
            crate::budget::Kind::SelectWork,
            count.saturating_mul(self.lower_ids.len().max(1) as u64),
        )
        .map_err(|over| {
            SearchError::Refused(InputError::usage(format!(
                "a select: query of {count} names over {} tools {over}; name fewer tools",
                self.lower_ids.len()
            )))
        })?;
        let mut chosen: Vec<u32> = Vec::new();
        let mut seen: HashSet<u32> = HashSet::new();
        let mut not_found = Vec::new();
        let mut ambiguous = Vec::new();
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let found = match self.resolve_name(name, request) {
                Resolved::Tools(found) => found,
                Resolved::NotFound => {
                    not_found.push(name.to_string());
                    continue;
                }
                Resolved::Ambiguous(candidates) => {
                    let mut candidates: Vec<String> = candidates
                        .iter()
                        .map(|&t| self.catalog.get(t as usize).id.clone())
                        .collect();
                    candidates.sort();
                    ambiguous.push(Ambiguous {
                        name: name.to_string(),
                        candidates,
                    });
                    continue;
                }
            };
            for t in found {
                if seen.insert(t) {
                    chosen.push(t);
                }
            }
        }
        let k = chosen.len();
        Ok(SearchOutcome {
            hits: chosen
                .iter()
                .enumerate()
                .map(|(i, &t)| Hit {
                    tool: t as usize,
                    score: (k - i) as f64,
                })
                .collect(),
            not_found,
            ambiguous,
            total_tools: request.searchable(self.catalog.len()),
            reported_us: None,
        })
    }

    /// The tool whose id equals the query (exact case preferred, else the first by id).
    pub(super) fn exact_id(&self, query: &str, request: &SearchRequest<'_>) -> Option<usize> {
        if let Some(i) = self.catalog.index_of(query)
            && request.is_candidate(i)
        {
            return Some(i);
        }
        self.lower_ids
            .get(&query.to_lowercase())?
            .iter()
            .map(|&t| t as usize)
            .find(|&t| request.is_candidate(t))
    }

    /// The searchable MCP tools whose bare name equals the query (case-insensitive).
    pub(super) fn exact_bare_name(&self, query: &str, request: &SearchRequest<'_>) -> Vec<usize> {
        self.bare_names
            .get(&query.to_lowercase())
            .map(|list| {
                list.iter()
                    .map(|&t| t as usize)
                    .filter(|&t| request.is_candidate(t))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The exactly named tools first (keyword score plus the bonus), then the others.
    pub(super) fn exact_first(
        &self,
        tools: &[usize],
        terms: &[Term],
        request: &SearchRequest<'_>,
        limit: usize,
    ) -> Vec<Hit> {
        let mut hits = self.keyword_hits(terms, request);
        hits.retain(|h| !tools.contains(&h.tool));
        let named: Vec<Hit> = tools
            .iter()
            .map(|&tool| Hit {
                tool,
                score: f64::from(self.score_one(terms, tool, &mut Vec::new())) + EXACT_ID_BONUS,
            })
            .collect();
        let mut ranked = rank_hits(&self.catalog, named, limit);
        ranked.extend(rank_hits(
            &self.catalog,
            hits,
            limit.saturating_sub(ranked.len()),
        ));
        ranked
    }

    pub(super) fn prefix(&self, query: &str, request: &SearchRequest<'_>) -> Vec<Hit> {
        let lower = query.to_lowercase();
        (0..self.catalog.len())
            .filter(|&t| request.is_candidate(t) && self.ids.text(t).starts_with(&lower))
            .map(|t| Hit {
                tool: t,
                score: PREFIX_SCORE,
            })
            .collect()
    }
}
