//! The `hybrid` scorer: fuses a lexical ranking (bm25) with the semantic one.
//!
//! Three methods, each over the top `depth` (100) results of each scorer:
//! - `blend` (default) — each list scores a tool by its *lead* over the list's 20th score
//!   (`floor_rank`), measured in the list's own spread: `(score − score₂₀) / σ`, σ the standard
//!   deviation of the list's top 100 scores (a tool outside the list counts as scoring what a
//!   missing tool scores: bm25 0, semantic its lowest cosine). Nothing below the floor. The two
//!   lists' leads are summed with weights 0.5 / 0.5.
//! - `rrf` — reciprocal rank fusion: a tool scores `Σ wᵢ / (k + rankᵢ)`, k = 60, weights 1 / 1.
//! - `minmax` — a reference: each list min-max scaled to [0, 1], summed with weights 0.5 / 0.5.
//!
//! Why this default. Fusion has to hold on catalogs it was not tuned on, inside large pools of
//! near-duplicates, for long and short queries. The previous blend (`0.4 · bm25 lead / top +
//! 0.6 · cosine lead`) assumed that a cosine lead on its raw scale weighs the same against a
//! bm25 lead over its top on every catalog: tuned on BFCL and StableToolBench, it lost to plain
//! semantic on a pooled MCP set, where bm25 matches common words of a long RapidAPI list (a
//! "best player" endpoint for "best team comp") with leads as large as a real match's, while
//! the cosine's clear lead stays a few hundredths. Rank fusion and min-max have no scale
//! assumption but give a useless list's top results as much pull as a good list's (every list
//! has a rank 1; min-max stretches any list to [0, 1]). Measuring each lead in its own list's
//! spread needs no assumption about either scale and keeps the pull proportional to how clearly
//! a list separates its top tools *for this query*: a flat list (noise) has leads under one σ,
//! a list that knows has leads of several. docs/methodology/search-quality.md has the pooled
//! numbers and the cross-validation of the one fitted setting, the weight (leave one dev set
//! out: 0.5 in every fold); docs/decisions/0001-hybrid-fusion-by-lead-in-spread.md the stress
//! table (one list replaced by noise).
//!
//! The fusion functions are pure ([`rrf`], [`weighted_blend`], [`minmax`]) so they are tested
//! on hand-made rankings; the scorer takes its two inputs as `Box<dyn Scorer>`.

use std::sync::Arc;

use super::{Explanation, Hit, Scorer, ScorerKind, SearchError, SearchOutcome, SearchRequest};
use crate::catalog::Catalog;
use crate::error::InputError;

/// How the two rankings are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FusionMethod {
    Rrf,
    Blend,
    /// Reference: each list min-max scaled to [0, 1] over its top `depth`, then summed with
    /// the weights (CombSUM of min-max scores).
    Minmax,
}

crate::named_enum!(FusionMethod, "fusion");

/// Most results of each scorer a fusion may take part: the tool limit of a run.
pub const MAX_FUSION_DEPTH: usize = crate::catalog::MAX_TOOLS;

/// Largest RRF k: past it every rank weighs the same to 15 digits.
pub const MAX_RRF_K: f64 = 1e9;

/// Fusion parameters, printed in `settings()`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionConfig {
    pub method: FusionMethod,
    /// RRF's rank offset.
    pub k: f64,
    /// Weight of the lexical (bm25) list.
    pub lexical_weight: f64,
    /// Weight of the semantic list.
    pub semantic_weight: f64,
    /// How many results of each list take part.
    pub depth: usize,
    /// `blend`: each list's score is measured from its score at this rank (1-based).
    pub floor_rank: usize,
}

impl Default for FusionConfig {
    fn default() -> Self {
        FusionConfig::for_method(FusionMethod::Blend)
    }
}

impl FusionConfig {
    /// The defaults of a method: blend 0.5 / 0.5 with floor rank 20; rrf k = 60, 1 / 1;
    /// minmax 0.5 / 0.5; depth 100.
    pub fn for_method(method: FusionMethod) -> FusionConfig {
        let (lexical_weight, semantic_weight) = match method {
            FusionMethod::Blend | FusionMethod::Minmax => (0.5, 0.5),
            FusionMethod::Rrf => (1.0, 1.0),
        };
        FusionConfig {
            method,
            k: 60.0,
            lexical_weight,
            semantic_weight,
            depth: 100,
            floor_rank: 20,
        }
    }

    /// Checks the parameters a user may set.
    pub fn validate(&self) -> Result<(), InputError> {
        let ok = |w: f64| w.is_finite() && w >= 0.0;
        if !ok(self.lexical_weight) || !ok(self.semantic_weight) {
            return Err(InputError::usage("fusion weights must be finite and >= 0"));
        }
        if self.lexical_weight + self.semantic_weight == 0.0 {
            return Err(InputError::usage("at least one fusion weight must be > 0"));
        }
        if !(self.k.is_finite() && self.k >= 0.0) {
            return Err(InputError::usage("rrf k must be finite and >= 0"));
        }
        // Every place up to the depth is visited per list and query (blend's spread), so the
        // depth is bounded like a catalog: an absurd --fusion-depth would search without end.
        if self.depth == 0 || self.depth > MAX_FUSION_DEPTH {
            return Err(InputError::usage(format!(
                "fusion depth must be between 1 and {MAX_FUSION_DEPTH} (the tool limit), got {}",
                self.depth
            )));
        }
        if self.floor_rank == 0 || self.floor_rank > MAX_FUSION_DEPTH {
            return Err(InputError::usage(format!(
                "fusion floor rank must be between 1 and {MAX_FUSION_DEPTH}, got {}",
                self.floor_rank
            )));
        }
        if self.k > MAX_RRF_K {
            return Err(InputError::usage(format!(
                "rrf k must be at most {MAX_RRF_K}, got {}",
                self.k
            )));
        }
        Ok(())
    }

    /// Fuses two rankings (best first) as the hybrid scorer does; ties by tool index.
    pub fn fuse(&self, lexical: &[Hit], semantic: &[Hit]) -> Vec<Hit> {
        let weights = [self.lexical_weight, self.semantic_weight];
        let (lexical, semantic) = (
            &lexical[..lexical.len().min(self.depth)],
            &semantic[..semantic.len().min(self.depth)],
        );
        match self.method {
            FusionMethod::Rrf => rrf(&[lexical, semantic], self.k, &weights),
            FusionMethod::Blend => weighted_blend(
                &[lexical, semantic],
                &weights,
                &BLEND,
                self.floor_rank,
                self.depth,
            ),
            FusionMethod::Minmax => minmax(&[lexical, semantic], &weights),
        }
    }
}

/// CombSUM of min-max scaled scores: tool score `Σᵢ weights[i] · (score − minᵢ) / (maxᵢ −
/// minᵢ)` over each list's scores (a list whose scores are all equal gives each of its tools
/// its full weight). A reference: it stretches any list, a flat one included, to [0, 1].
pub fn minmax(rankings: &[&[Hit]], weights: &[f64]) -> Vec<Hit> {
    let bounds: Vec<(f64, f64)> = rankings
        .iter()
        .map(|list| {
            let lo = list.iter().map(|h| h.score).fold(f64::INFINITY, f64::min);
            let hi = list
                .iter()
                .map(|h| h.score)
                .fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        })
        .collect();
    fuse_by(rankings, |list, _, score| {
        let (lo, hi) = bounds[list];
        let scaled = if hi > lo {
            (score - lo) / (hi - lo)
        } else {
            1.0
        };
        weights[list] * scaled
    })
}

/// What a tool outside each list scores in `blend`: bm25 ranks only tools that match (0 for the
/// others), semantic ranks every tool (a list cut short scores the rest at its lowest).
const BLEND: [Missing; 2] = [Missing::Zero, Missing::Lowest];

/// Reciprocal rank fusion: tool score `Σᵢ weights[i] / (k + rank in list i)`, ranks from 1.
/// Result sorted best first, ties by tool index (callers re-break ties by id).
pub fn rrf(rankings: &[&[Hit]], k: f64, weights: &[f64]) -> Vec<Hit> {
    fuse_by(rankings, |list, position, _| {
        weights[list] / (k + position as f64 + 1.0)
    })
}

/// What a tool a list does not hold scores, for the floor and spread of a blend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// 0: the list holds every tool that matched (bm25).
    Zero,
    /// The list's lowest score: the list ranks every tool, and a short list is a small catalog
    /// (semantic).
    Lowest,
}

impl Missing {
    /// The list's floor (its score at `floor_rank`) and spread (the standard deviation of its
    /// scores), both over `depth` places with the places past the list's end filled with what a
    /// missing tool scores. `None`: the list is empty or flat and adds nothing.
    pub fn floor_and_spread(
        self,
        list: &[Hit],
        floor_rank: usize,
        depth: usize,
    ) -> Option<(f64, f64)> {
        let list = &list[..list.len().min(depth)];
        let missing = match self {
            Missing::Zero => 0.0,
            Missing::Lowest => list.last()?.score,
        };
        let places = depth.max(list.len()).max(1);
        let value = |i: usize| list.get(i).map_or(missing, |h| h.score);
        let floor = value(floor_rank.clamp(1, places) - 1);
        let mean = (0..places).map(value).sum::<f64>() / places as f64;
        let variance = (0..places).map(|i| (value(i) - mean).powi(2)).sum::<f64>() / places as f64;
        let spread = variance.sqrt();
        (!list.is_empty() && spread > 0.0 && spread.is_finite()).then_some((floor, spread))
    }
}

/// Weighted blend of leads: tool score `Σᵢ weights[i] · max(0, score − floorᵢ) / spreadᵢ` (see
/// [`Missing::floor_and_spread`]). Every tool of any list is returned; result sorted best
/// first, ties by tool index.
pub fn weighted_blend(
    rankings: &[&[Hit]],
    weights: &[f64],
    missing: &[Missing],
    floor_rank: usize,
    depth: usize,
) -> Vec<Hit> {
    let bounds: Vec<Option<(f64, f64)>> = rankings
        .iter()
        .zip(missing)
        .map(|(list, m)| m.floor_and_spread(list, floor_rank, depth))
        .collect();
    fuse_by(rankings, |list, _, score| {
        lead_points(bounds[list], score, weights[list])
    })
}

/// What a score adds to a blend: its weighted lead over the floor in units of the spread
/// (`bounds` from [`Missing::floor_and_spread`]; `None` adds nothing).
fn lead_points(bounds: Option<(f64, f64)>, score: f64, weight: f64) -> f64 {
    bounds.map_or(0.0, |(floor, spread)| {
        weight * (score - floor).max(0.0) / spread
    })
}

fn fuse_by(rankings: &[&[Hit]], points: impl Fn(usize, usize, f64) -> f64) -> Vec<Hit> {
    let mut fused: std::collections::HashMap<usize, f64> = std::collections::HashMap::new();
    for (list, hits) in rankings.iter().enumerate() {
        for (position, hit) in hits.iter().enumerate() {
            *fused.entry(hit.tool).or_default() += points(list, position, hit.score);
        }
    }
    let mut out: Vec<Hit> = fused
        .into_iter()
        .map(|(tool, score)| Hit { tool, score })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.tool.cmp(&b.tool)));
    out
}

pub struct HybridScorer {
    catalog: Arc<Catalog>,
    lexical: Box<dyn Scorer>,
    semantic: Box<dyn Scorer>,
    fusion: FusionConfig,
}

impl HybridScorer {
    pub fn new(
        catalog: Arc<Catalog>,
        lexical: Box<dyn Scorer>,
        semantic: Box<dyn Scorer>,
        fusion: FusionConfig,
    ) -> Result<HybridScorer, InputError> {
        fusion.validate()?;
        Ok(HybridScorer {
            catalog,
            lexical,
            semantic,
            fusion,
        })
    }

    fn both(
        &self,
        request: &SearchRequest<'_>,
        depth: usize,
    ) -> Result<(Vec<Hit>, Vec<Hit>), SearchError> {
        let inner = SearchRequest {
            limit: depth,
            ..*request
        };
        let semantic = self.semantic.search(&inner)?.hits;
        // The lexical scorer refuses some queries outright (bm25 caps them at 500 characters,
        // an API-style limit on what a model types). Fusion exists to survive one weak signal,
        // so a refused query ranks by the other list alone instead of failing the search.
        let lexical = match self.lexical.search(&inner) {
            Ok(outcome) => outcome.hits,
            Err(SearchError::Refused(_)) => Vec::new(),
            Err(e @ SearchError::Failed(_)) => return Err(e),
        };
        Ok((lexical, semantic))
    }
}

impl Scorer for HybridScorer {
    fn name(&self) -> String {
        ScorerKind::Hybrid.name().to_string()
    }

    fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError> {
        let (lexical, semantic) = self.both(request, self.fusion.depth)?;
        let fused = self.fusion.fuse(&lexical, &semantic);
        Ok(SearchOutcome {
            hits: crate::search::rank_hits(&self.catalog, fused, request.limit),
            not_found: Vec::new(),
            ambiguous: Vec::new(),
            total_tools: request.searchable(self.catalog.len()),
            reported_us: None,
        })
    }

    /// The fused score, with one child per part: its rank and points, and under it the
    /// part's own explanation of the tool.
    fn explain_tool(
        &self,
        request: &SearchRequest<'_>,
        tool: usize,
    ) -> Result<Explanation, SearchError> {
        let everything = SearchRequest {
            limit: self.catalog.len(),
            ..*request
        };
        let (lexical, semantic) = self.both(&everything, self.catalog.len())?;
        let fused = crate::search::rank_hits(
            &self.catalog,
            self.fusion.fuse(&lexical, &semantic),
            usize::MAX,
        );
        let position = |list: &[Hit]| list.iter().position(|h| h.tool == tool);
        let fused_score = position(&fused).map_or(0.0, |p| fused[p].score);
        let weights = [self.fusion.lexical_weight, self.fusion.semantic_weight];
        let parts: [(&dyn Scorer, &Vec<Hit>); 2] = [
            (self.lexical.as_ref(), &lexical),
            (self.semantic.as_ref(), &semantic),
        ];
        let mut children = Vec::with_capacity(2);
        for (i, (part, list)) in parts.into_iter().enumerate() {
            let name = part.name();
            let (detail, points) = match position(list) {
                Some(p) if p < self.fusion.depth => {
                    let points = self.fusion.fuse_single(i, list, p, weights[i]);
                    let label = if name == "semantic" {
                        "cosine"
                    } else {
                        "score"
                    };
                    let mut detail = format!("rank {} ({label} {:.4}", p + 1, list[p].score);
                    if self.fusion.method == FusionMethod::Blend
                        && let Some((floor, spread)) = BLEND[i].floor_and_spread(
                            list,
                            self.fusion.floor_rank,
                            self.fusion.depth,
                        )
                    {
                        detail.push_str(&format!(
                            ", lead {:.4} over floor {floor:.4}, spread {spread:.4}",
                            (list[p].score - floor).max(0.0),
                        ));
                    }
                    detail.push(')');
                    (detail, points)
                }
                Some(p) => (
                    format!(
                        "rank {} ({:.4}), beyond fusion depth {}",
                        p + 1,
                        list[p].score,
                        self.fusion.depth
                    ),
                    0.0,
                ),
                None => ("not ranked (no match)".to_string(), 0.0),
            };
            // The part's own reasons; a part that refuses the query (bm25 over its length
            // limit) has none, as it has no ranking.
            let nested = match position(list) {
                Some(_) => part.explain_tool(&everything, tool).ok(),
                None => None,
            };
            children.push(Explanation {
                label: format!("{name} {detail}"),
                value: points,
                children: nested.into_iter().collect(),
            });
        }
        let label = match position(&fused) {
            Some(p) => format!(
                "fused rank {} of {}, fused score {fused_score:.6}",
                p + 1,
                fused.len()
            ),
            None => "in neither list's top results".to_string(),
        };
        Ok(Explanation {
            label,
            value: fused_score,
            children,
        })
    }

    fn settings(&self) -> Vec<(String, String)> {
        let f = &self.fusion;
        let mut out = vec![
            ("fusion".to_string(), f.method.name().to_string()),
            ("rrf_k".to_string(), format_number(f.k)),
            (
                format!("weight_{}", self.lexical.name()),
                format_number(f.lexical_weight),
            ),
            (
                format!("weight_{}", self.semantic.name()),
                format_number(f.semantic_weight),
            ),
            ("depth".to_string(), f.depth.to_string()),
        ];
        match f.method {
            FusionMethod::Rrf => {}
            FusionMethod::Minmax => {
                out.remove(1);
            }
            FusionMethod::Blend => {
                out.remove(1);
                out.push(("floor_rank".to_string(), f.floor_rank.to_string()));
            }
        }
        for (name, inner) in [&self.lexical, &self.semantic]
            .iter()
            .map(|s| (s.name(), s.settings()))
        {
            out.extend(inner.into_iter().map(|(k, v)| (format!("{name}.{k}"), v)));
        }
        out
    }
}

impl FusionConfig {
    /// The points list `list` gives the tool at `position` (for explanations).
    fn fuse_single(&self, list: usize, hits: &[Hit], position: usize, weight: f64) -> f64 {
        match self.method {
            FusionMethod::Rrf => weight / (self.k + position as f64 + 1.0),
            FusionMethod::Minmax => {
                let top = &hits[..hits.len().min(self.depth)];
                let fused = minmax(&[top], &[weight]);
                fused
                    .iter()
                    .find(|h| h.tool == hits[position].tool)
                    .map_or(0.0, |h| h.score)
            }
            FusionMethod::Blend => {
                let bounds = BLEND[list].floor_and_spread(hits, self.floor_rank, self.depth);
                lead_points(bounds, hits[position].score, weight)
            }
        }
    }
}

fn format_number(x: f64) -> String {
    let mut buffer = ryu::Buffer::new();
    let s = buffer.format(x);
    s.strip_suffix(".0").unwrap_or(s).to_string()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn hits(tools: &[(usize, f64)]) -> Vec<Hit> {
        tools
            .iter()
            .map(|&(tool, score)| Hit { tool, score })
            .collect()
    }

    #[test]
    fn rrf_sums_reciprocal_ranks() {
        let a = hits(&[(1, 9.0), (2, 5.0), (3, 1.0)]);
        let b = hits(&[(3, 0.9), (1, 0.8)]);
        let fused = rrf(&[&a, &b], 60.0, &[1.0, 1.0]);
        let score = |t: usize| fused.iter().find(|h| h.tool == t).unwrap().score;
        assert!((score(1) - (1.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-12);
        assert!((score(3) - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-12);
        assert!((score(2) - 1.0 / 62.0).abs() < 1e-12);
        assert_eq!(
            fused.iter().map(|h| h.tool).collect::<Vec<_>>(),
            vec![1, 3, 2]
        );
    }

    #[test]
    fn rrf_weights_and_ties() {
        let a = hits(&[(1, 1.0)]);
        let b = hits(&[(2, 1.0)]);
        // Equal weights: a tie, broken by tool index.
        let tie = rrf(&[&a, &b], 60.0, &[1.0, 1.0]);
        assert_eq!(tie.iter().map(|h| h.tool).collect::<Vec<_>>(), vec![1, 2]);
        let favour_b = rrf(&[&a, &b], 60.0, &[1.0, 2.0]);
        assert_eq!(favour_b[0].tool, 2);
        assert!((favour_b[0].score - 2.0 / 61.0).abs() < 1e-12);
        // Weight 0 ignores a list's order entirely.
        let only_a = rrf(&[&a, &b], 60.0, &[1.0, 0.0]);
        assert_eq!(only_a[0].tool, 1);
        assert_eq!(only_a[1].score, 0.0);
    }

    fn order(fused: &[Hit]) -> Vec<usize> {
        fused.iter().map(|h| h.tool).collect()
    }

    /// Population standard deviation, written apart from the code under test.
    fn sd(values: &[f64]) -> f64 {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt()
    }

    fn assert_scores(fused: &[Hit], want: &[(usize, f64)]) {
        assert_eq!(fused.len(), want.len(), "{fused:?}");
        for (got, &(tool, score)) in fused.iter().zip(want) {
            assert_eq!(got.tool, tool, "{fused:?}");
            assert!((got.score - score).abs() < 1e-9, "{fused:?} {want:?}");
        }
    }

    #[test]
    fn blend_measures_each_lead_over_the_floor_in_the_list_spread() {
        // Depth 3, floor rank 2: bm25's floor is 6, the cosine's 0.6.
        let bm25 = hits(&[(1, 10.0), (2, 6.0), (3, 2.0)]);
        let cosine = hits(&[(3, 0.9), (2, 0.6), (1, 0.5)]);
        let fused = weighted_blend(&[&bm25, &cosine], &[1.0, 1.0], &BLEND, 2, 3);
        let (sb, sc) = (sd(&[10.0, 6.0, 2.0]), sd(&[0.9, 0.6, 0.5]));
        assert_scores(&fused, &[(3, 0.3 / sc), (1, 4.0 / sb), (2, 0.0)]);
    }

    #[test]
    fn short_lists_are_filled_with_what_a_missing_tool_scores() {
        // Depth 4: bm25 is filled with 0 (a tool it lacks matched nothing), the cosine with
        // its lowest; the floor rank past the depth is the last place.
        let bm25 = hits(&[(1, 20.0), (2, 10.0)]);
        let cosine = hits(&[(3, 0.7), (2, 0.5), (4, 0.4)]);
        let fused = weighted_blend(&[&bm25, &cosine], &[0.5, 0.5], &BLEND, 20, 4);
        let sb = sd(&[20.0, 10.0, 0.0, 0.0]);
        let sc = sd(&[0.7, 0.5, 0.4, 0.4]);
        assert_scores(
            &fused,
            &[
                (3, 0.5 * 0.3 / sc),
                (1, 0.5 * 20.0 / sb),
                (2, 0.5 * 10.0 / sb + 0.5 * 0.1 / sc),
                (4, 0.0),
            ],
        );
        // A list with one score, or all equal, has no spread and adds nothing.
        let one = hits(&[(5, 0.3)]);
        assert_eq!(
            weighted_blend(&[&[], &one], &[0.5, 0.5], &BLEND, 20, 100)[0].score,
            0.0
        );
    }

    /// 100 tools, `first` at the top, scores falling by `step` from `top`.
    fn falling(first: &[usize], top: f64, step: f64) -> Vec<Hit> {
        let rest = (10..).filter(|t| !first.contains(t));
        first
            .iter()
            .copied()
            .chain(rest)
            .take(100)
            .enumerate()
            .map(|(i, tool)| Hit {
                tool,
                score: top - step * i as f64,
            })
            .collect()
    }

    #[test]
    fn a_flat_list_barely_moves_the_other_whichever_it_is() {
        let weights = [0.5, 0.5];
        // Flat cosines (noise: 100 tools within 0.02) under a clear bm25 order: bm25 decides.
        let bm25 = hits(&[(1, 20.0), (2, 10.0)]);
        let flat = falling(&[2, 1], 0.31, 0.0002);
        let fused = weighted_blend(&[&bm25, &flat], &weights, &BLEND, 20, 100);
        assert_eq!(order(&fused)[..2], [1, 2]);
        // Flat bm25 (100 tools within 20% of the top, its favourite first) under a clear
        // cosine order: the cosine decides.
        let flat = falling(&[1, 2, 3], 5.0, 0.01);
        let mut cosine = hits(&[(3, 0.8), (2, 0.5), (1, 0.45)]);
        cosine.extend(falling(&[], 0.2, 0.001).into_iter().take(97));
        let fused = weighted_blend(&[&flat, &cosine], &weights, &BLEND, 20, 100);
        assert_eq!(order(&fused)[..3], [3, 2, 1]);
    }

    /// A scorer that returns a fixed ranking for every query (respecting candidates and limit).
    struct Fixed {
        kind: ScorerKind,
        ranking: Vec<Hit>,
    }

    impl Scorer for Fixed {
        fn name(&self) -> String {
            self.kind.name().to_string()
        }
        fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError> {
            let hits: Vec<Hit> = self
                .ranking
                .iter()
                .filter(|h| request.is_candidate(h.tool))
                .take(request.limit)
                .copied()
                .collect();
            Ok(SearchOutcome {
                hits,
                not_found: Vec::new(),
                ambiguous: Vec::new(),
                total_tools: 0,
                reported_us: None,
            })
        }
        fn explain_tool(
            &self,
            _: &SearchRequest<'_>,
            tool: usize,
        ) -> Result<Explanation, SearchError> {
            Ok(Explanation::leaf(format!("fixed t{tool}"), 0.0))
        }
        fn settings(&self) -> Vec<(String, String)> {
            vec![("fixed".into(), "yes".into())]
        }
    }

    fn catalog(n: usize) -> Arc<Catalog> {
        let tools = (0..n)
            .map(|i| crate::search::text::test_support::builtin(&format!("t{i}"), ""))
            .collect();
        Arc::new(Catalog::from_tools(tools).unwrap())
    }

    fn hybrid(fusion: FusionConfig) -> HybridScorer {
        let lexical = Fixed {
            kind: ScorerKind::Bm25,
            ranking: hits(&[(0, 9.0), (1, 8.0), (2, 7.0)]),
        };
        let semantic = Fixed {
            kind: ScorerKind::Semantic,
            ranking: hits(&[(2, 0.9), (3, 0.8), (0, 0.1)]),
        };
        HybridScorer::new(catalog(4), Box::new(lexical), Box::new(semantic), fusion).unwrap()
    }

    #[test]
    fn hybrid_fuses_its_two_scorers() {
        let scorer = hybrid(FusionConfig::for_method(FusionMethod::Rrf));
        let out = scorer.search(&SearchRequest::new("q", 10)).unwrap();
        // t0: 1/61 + 1/63, t2: 1/63 + 1/61 (tie, t0 < t2 by id), t1: 1/62, t3: 1/62 (t1 < t3).
        let order: Vec<usize> = out.hits.iter().map(|h| h.tool).collect();
        assert_eq!(order, vec![0, 2, 1, 3]);
        assert_eq!(out.total_tools, 4);
        let limited = scorer.search(&SearchRequest::new("q", 1)).unwrap();
        assert_eq!(limited.hits.len(), 1);

        let mask = [false, true, true, true];
        let mut req = SearchRequest::new("q", 10);
        req.candidates = Some(&mask);
        let out = scorer.search(&req).unwrap();
        assert_eq!(out.total_tools, 3);
        assert_eq!(out.hits[0].tool, 2);
        assert!(out.hits.iter().all(|h| h.tool != 0));
    }

    /// A lexical scorer that refuses every query, as bm25 refuses one over 500 characters.
    struct Refuses;

    impl Scorer for Refuses {
        fn name(&self) -> String {
            ScorerKind::Bm25.name().to_string()
        }
        fn search(&self, _: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError> {
            Err(InputError::usage("query too long").into())
        }
        fn explain_tool(
            &self,
            _: &SearchRequest<'_>,
            _: usize,
        ) -> Result<Explanation, SearchError> {
            Err(InputError::usage("query too long").into())
        }
        fn settings(&self) -> Vec<(String, String)> {
            Vec::new()
        }
    }

    #[test]
    fn a_query_the_lexical_scorer_refuses_ranks_by_meaning_alone() {
        let semantic = Fixed {
            kind: ScorerKind::Semantic,
            ranking: hits(&[(2, 0.9), (3, 0.8)]),
        };
        let scorer = HybridScorer::new(
            catalog(4),
            Box::new(Refuses),
            Box::new(semantic),
            FusionConfig::for_method(FusionMethod::Blend),
        )
        .unwrap();
        let out = scorer.search(&SearchRequest::new("q", 10)).unwrap();
        let order: Vec<usize> = out.hits.iter().map(|h| h.tool).collect();
        assert_eq!(order, vec![2, 3]);
    }

    #[test]
    fn depth_limits_what_takes_part() {
        let scorer = hybrid(FusionConfig {
            depth: 1,
            ..FusionConfig::for_method(FusionMethod::Rrf)
        });
        let out = scorer.search(&SearchRequest::new("q", 10)).unwrap();
        let order: Vec<usize> = out.hits.iter().map(|h| h.tool).collect();
        assert_eq!(order, vec![0, 2]);
    }

    #[test]
    fn settings_and_explain_show_the_fusion() {
        let scorer = hybrid(FusionConfig {
            lexical_weight: 1.0,
            semantic_weight: 0.5,
            ..FusionConfig::for_method(FusionMethod::Rrf)
        });
        let settings = scorer.settings();
        let get = |k: &str| {
            settings
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("fusion"), Some("rrf"));
        assert_eq!(get("rrf_k"), Some("60"));
        assert_eq!(get("weight_bm25"), Some("1"));
        assert_eq!(get("weight_semantic"), Some("0.5"));
        assert_eq!(get("semantic.fixed"), Some("yes"));

        let q = SearchRequest::new("q", 10);
        let e = scorer.explain_tool(&q, 2).unwrap();
        assert!((e.value - (1.0 / 63.0 + 0.5 / 61.0)).abs() < 1e-12);
        assert_eq!(e.children[0].label, "bm25 rank 3 (score 7.0000)");
        assert_eq!(e.children[1].label, "semantic rank 1 (cosine 0.9000)");
        assert!((e.children[1].value - 0.5 / 61.0).abs() < 1e-12);
        assert!(e.label.starts_with("fused rank 2 of 4"), "{e:?}");
        // Each part nests its own explanation of the tool.
        assert_eq!(e.children[0].children, [Explanation::leaf("fixed t2", 0.0)]);
        assert_eq!(e.children[1].children, [Explanation::leaf("fixed t2", 0.0)]);
        let absent = scorer.explain_tool(&q, 3).unwrap();
        assert_eq!(absent.children[0].label, "bm25 not ranked (no match)");
        assert!(absent.children[0].children.is_empty());
        // The whole ranking: one child per hit, in the order `search` ranks them.
        let tree = scorer.explain(&q).unwrap();
        assert_eq!(tree.children.len(), 4);
        assert!(
            tree.children[1]
                .label
                .starts_with("rank 2: fused rank 2 of 4"),
            "{tree:?}"
        );
        assert_eq!(tree.children[1].children.len(), 2);
        assert_eq!(
            scorer
                .explain(&SearchRequest::new("q", 1))
                .unwrap()
                .children
                .len(),
            1
        );

        let blend = hybrid(FusionConfig::default());
        let settings = blend.settings();
        assert!(settings.iter().all(|(k, _)| k != "rrf_k"));
        assert_eq!(settings[0], ("fusion".to_string(), "blend".to_string()));
        assert!(settings.contains(&("floor_rank".to_string(), "20".to_string())));
        // Both lists are shorter than the depth (100): bm25 is filled with 0, the cosine with
        // its lowest (0.1), and the 20th place is such a filler.
        let mut bm25 = vec![9.0, 8.0, 7.0];
        bm25.resize(100, 0.0);
        let mut cos = vec![0.9, 0.8, 0.1];
        cos.resize(100, 0.1);
        let (sb, sc) = (sd(&bm25), sd(&cos));
        let e = blend.explain_tool(&q, 2).unwrap();
        let want = 0.5 * 7.0 / sb + 0.5 * 0.8 / sc;
        assert!((e.value - want).abs() < 1e-9, "{e:?}");
        assert!((e.children[0].value - 0.5 * 7.0 / sb).abs() < 1e-9);
        assert!((e.children[1].value - 0.5 * 0.8 / sc).abs() < 1e-9);
        assert_eq!(
            e.children[0].label,
            format!("bm25 rank 3 (score 7.0000, lead 7.0000 over floor 0.0000, spread {sb:.4})")
        );
        assert_eq!(
            e.children[1].label,
            format!(
                "semantic rank 1 (cosine 0.9000, lead 0.8000 over floor 0.1000, spread {sc:.4})"
            )
        );
        let out = blend.search(&SearchRequest::new("q", 10)).unwrap();
        // t2 both, t3 0.5 · 0.7/σc, t0 0.5 · 9/σb, t1 0.5 · 8/σb.
        let order: Vec<usize> = out.hits.iter().map(|h| h.tool).collect();
        assert_eq!(order, vec![2, 3, 0, 1]);
    }

    #[test]
    fn minmax_stretches_each_list_to_the_unit_range() {
        let bm25 = hits(&[(1, 10.0), (2, 6.0), (3, 2.0)]);
        let cosine = hits(&[(3, 0.31), (2, 0.30), (4, 0.29)]);
        let fused = minmax(&[&bm25, &cosine], &[0.5, 0.5]);
        let want = [(3, 0.5), (1, 0.5), (2, 0.25 + 0.25), (4, 0.0)];
        let score = |t: usize| fused.iter().find(|h| h.tool == t).unwrap().score;
        for (tool, s) in want {
            assert!((score(tool) - s).abs() < 1e-9, "{fused:?}");
        }
        // The flat cosine list (0.29..0.31) weighs as much as bm25's clear order.
        assert_eq!(order(&fused)[..2], [1, 2]);
        let one = hits(&[(7, 3.0)]);
        assert_eq!(minmax(&[&one], &[0.5])[0].score, 0.5);
        let scorer = hybrid(FusionConfig::for_method(FusionMethod::Minmax));
        let settings = scorer.settings();
        assert_eq!(settings[0], ("fusion".to_string(), "minmax".to_string()));
        assert!(settings.iter().all(|(k, _)| k != "rrf_k"));
        let q = SearchRequest::new("q", 10);
        for h in scorer.search(&q).unwrap().hits {
            let e = scorer.explain_tool(&q, h.tool).unwrap();
            assert!((e.value - h.score).abs() < 1e-12, "{e:?}");
            let parts: f64 = e.children.iter().map(|c| c.value).sum();
            assert!((parts - h.score).abs() < 1e-12, "{e:?}");
        }
    }

    #[test]
    fn empty_lists_fuse_to_nothing() {
        assert!(rrf(&[&[], &[]], 60.0, &[1.0, 1.0]).is_empty());
        assert!(weighted_blend(&[&[], &[]], &[1.0, 1.0], &BLEND, 20, 100).is_empty());
    }

    #[test]
    fn bad_parameters_are_input_errors() {
        let bad = [
            FusionConfig {
                lexical_weight: -1.0,
                ..Default::default()
            },
            FusionConfig {
                lexical_weight: 0.0,
                semantic_weight: 0.0,
                ..Default::default()
            },
            FusionConfig {
                k: f64::NAN,
                ..Default::default()
            },
            FusionConfig {
                depth: 0,
                ..Default::default()
            },
            FusionConfig {
                floor_rank: 0,
                ..Default::default()
            },
            // Each would visit ~10^19 places per list and query (#26: a hang).
            FusionConfig {
                depth: usize::MAX,
                ..Default::default()
            },
            FusionConfig {
                floor_rank: usize::MAX,
                ..Default::default()
            },
            FusionConfig {
                k: 1e300,
                ..Default::default()
            },
        ];
        for config in bad {
            assert!(config.validate().is_err(), "{config:?}");
        }
        assert!(FusionConfig::default().validate().is_ok());
        let e = FusionConfig {
            depth: usize::MAX,
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("between 1 and 200000") && e.contains("18446744073709551615"),
            "{e}"
        );
        assert!(
            FusionConfig {
                depth: MAX_FUSION_DEPTH,
                floor_rank: 5,
                ..Default::default()
            }
            .validate()
            .is_ok()
        );
    }
}
