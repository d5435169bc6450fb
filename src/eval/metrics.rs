//! Retrieval metrics for one labeled query, as pure functions.
//!
//! Definitions (GUIDE.md). For a query with expected set E and ranking R (best first):
//! - recall@k   = |E ∩ R[..k]| / |E|
//! - hit@k      = 1 if E ∩ R[..k] ≠ ∅, else 0
//! - complete@k = 1 if E ⊆ R[..k], else 0
//! - MRR        = 1 / rank of the first expected tool in R (0 if none is ranked); R is the
//!   ranking as deep as it was requested, so this is MRR@depth
//! - nDCG@k, binary gains: DCG = Σ_{i ≤ k, R[i] ∈ E} 1 / log2(i + 1) (i 1-based), divided by the
//!   ideal DCG, the DCG of min(|E|, k) hits at the top
//!
//! Every labeled query counts; a query with no results scores 0 on every metric. Averages are
//! over all queries (`mean`).
//!
//! Everything is computed from the 1-based rank of each expected tool (its first position in
//! R, `None` when absent): that is the one fact the metrics need, it is what per-query output
//! prints, and it makes a ranking that repeats a tool unable to count it twice.

/// The 1-based rank of each expected tool in `ranking` (first occurrence), `None` if absent.
pub fn expected_ranks<T: PartialEq>(expected: &[T], ranking: &[T]) -> Vec<Option<usize>> {
    expected
        .iter()
        .map(|e| ranking.iter().position(|r| r == e).map(|p| p + 1))
        .collect()
}

fn found_within(ranks: &[Option<usize>], k: usize) -> usize {
    ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count()
}

/// recall@k = |E ∩ R[..k]| / |E|; 0 when E is empty (loading forbids that).
pub fn recall_at(ranks: &[Option<usize>], k: usize) -> f64 {
    if ranks.is_empty() {
        return 0.0;
    }
    found_within(ranks, k) as f64 / ranks.len() as f64
}

/// hit@k = 1 if any expected tool is in R[..k].
pub fn hit_at(ranks: &[Option<usize>], k: usize) -> f64 {
    if found_within(ranks, k) > 0 { 1.0 } else { 0.0 }
}

/// complete@k = 1 if every expected tool is in R[..k].
pub fn complete_at(ranks: &[Option<usize>], k: usize) -> f64 {
    if !ranks.is_empty() && found_within(ranks, k) == ranks.len() {
        1.0
    } else {
        0.0
    }
}

/// Reciprocal rank: 1 / rank of the first expected tool, 0 if none is ranked.
pub fn reciprocal_rank(ranks: &[Option<usize>]) -> f64 {
    ranks
        .iter()
        .flatten()
        .min()
        .map_or(0.0, |&r| 1.0 / r as f64)
}

/// nDCG@k with binary gains; the ideal DCG places min(|E|, k) hits at ranks 1, 2, ….
pub fn ndcg_at(ranks: &[Option<usize>], k: usize) -> f64 {
    let ideal_hits = ranks.len().min(k);
    if ideal_hits == 0 {
        return 0.0;
    }
    let discount = |rank: usize| 1.0 / ((rank + 1) as f64).log2();
    let dcg: f64 = ranks
        .iter()
        .flatten()
        .filter(|&&r| r <= k)
        .map(|&r| discount(r))
        // fold from +0.0: `Sum` for f64 starts at -0.0, which would print as "-0.0000".
        .fold(0.0, |a, b| a + b);
    let ideal: f64 = (1..=ideal_hits).map(discount).sum();
    dcg / ideal
}

/// Mean over all queries; 0 for no queries.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().fold(0.0, |a, b| a + b) / values.len() as f64
    }
}

/// A metric a result names, written and read as its name (`recall@5`, `mrr`, `refusal`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Metric {
    Recall(usize),
    Hit(usize),
    Complete(usize),
    /// Mean reciprocal rank (at the evaluation's depth).
    Mrr,
    Ndcg(usize),
    /// A no-match query's: 1 when nothing was returned.
    Refusal,
    /// A name this tool does not compute (read from a file written elsewhere).
    Named(String),
}

impl Metric {
    /// The metric of that name; a name not written the way this tool writes it is kept as
    /// it is, so every name reads back unchanged.
    pub fn new(name: &str) -> Metric {
        let at_k = |f: fn(usize) -> Metric, k: &str| {
            k.parse::<usize>()
                .ok()
                .filter(|n| n.to_string() == k)
                .map(f)
        };
        let parsed = match name.split_once('@') {
            Some(("recall", k)) => at_k(Metric::Recall, k),
            Some(("hit", k)) => at_k(Metric::Hit, k),
            Some(("complete", k)) => at_k(Metric::Complete, k),
            Some(("ndcg", k)) => at_k(Metric::Ndcg, k),
            None if name == "mrr" => Some(Metric::Mrr),
            None if name == "refusal" => Some(Metric::Refusal),
            _ => None,
        };
        parsed.unwrap_or_else(|| Metric::Named(name.to_string()))
    }

    /// recall@k, mrr and ndcg@10: the figures the report's tables show.
    pub fn in_report_table(&self) -> bool {
        matches!(self, Metric::Recall(_) | Metric::Mrr | Metric::Ndcg(10))
    }
}

impl From<&str> for Metric {
    fn from(name: &str) -> Metric {
        Metric::new(name)
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Metric::Recall(k) => write!(f, "recall@{k}"),
            Metric::Hit(k) => write!(f, "hit@{k}"),
            Metric::Complete(k) => write!(f, "complete@{k}"),
            Metric::Mrr => f.write_str("mrr"),
            Metric::Ndcg(k) => write!(f, "ndcg@{k}"),
            Metric::Refusal => f.write_str("refusal"),
            Metric::Named(n) => f.write_str(n),
        }
    }
}

impl serde::Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Metric {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(Metric::new(&name))
    }
}

/// The metrics printed for the cutoffs `ks`, in output order: recall@K for each K, hit@K for
/// each K, complete@K for each K, then `mrr` and `ndcg@10`.
pub fn metric_names(ks: &[usize]) -> Vec<Metric> {
    let mut names = Vec::with_capacity(ks.len() * 3 + 2);
    for f in [Metric::Recall, Metric::Hit, Metric::Complete] {
        names.extend(ks.iter().map(|&k| f(k)));
    }
    names.push(Metric::Mrr);
    names.push(Metric::Ndcg(10));
    names
}

/// Every metric of `metric_names(ks)` for one query, in the same order.
pub fn all_metrics(ranks: &[Option<usize>], ks: &[usize]) -> Vec<f64> {
    let mut out = Vec::with_capacity(ks.len() * 3 + 2);
    out.extend(ks.iter().map(|&k| recall_at(ranks, k)));
    out.extend(ks.iter().map(|&k| hit_at(ranks, k)));
    out.extend(ks.iter().map(|&k| complete_at(ranks, k)));
    out.push(reciprocal_rank(ranks));
    out.push(ndcg_at(ranks, 10));
    out
}

/// Rounds a metric for output: 6 decimals keeps outputs byte-identical across runs and
/// platforms while hiding no difference a labeled set of < 10^6 queries can show.
pub fn round_metric(x: f64) -> f64 {
    crate::number::round(x, 6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ranks(expected: &[&str], ranking: &[&str]) -> Vec<Option<usize>> {
        expected_ranks(expected, ranking)
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn ranks_are_one_based_first_occurrence() {
        assert_eq!(
            ranks(&["b", "z", "a"], &["a", "b", "a"]),
            vec![Some(2), None, Some(1)]
        );
    }

    #[test]
    fn single_expected_tool() {
        let r = ranks(&["c"], &["a", "b", "c", "d"]);
        assert_eq!(recall_at(&r, 1), 0.0);
        assert_eq!(recall_at(&r, 3), 1.0);
        assert_eq!(hit_at(&r, 2), 0.0);
        assert_eq!(hit_at(&r, 3), 1.0);
        assert_eq!(complete_at(&r, 3), 1.0);
        close(reciprocal_rank(&r), 1.0 / 3.0);
        // DCG = 1/log2(4) = 0.5; ideal = 1/log2(2) = 1.
        close(ndcg_at(&r, 10), 0.5);
        close(ndcg_at(&r, 2), 0.0);
    }

    #[test]
    fn several_expected_tools() {
        // E = {a, b, c}; a at rank 2, c at rank 4, b absent.
        let r = ranks(&["a", "b", "c"], &["x", "a", "y", "c", "z"]);
        close(recall_at(&r, 1), 0.0);
        close(recall_at(&r, 3), 1.0 / 3.0);
        close(recall_at(&r, 5), 2.0 / 3.0);
        assert_eq!(hit_at(&r, 1), 0.0);
        assert_eq!(hit_at(&r, 2), 1.0);
        assert_eq!(complete_at(&r, 5), 0.0);
        close(reciprocal_rank(&r), 0.5);
        // DCG = 1/log2(3) + 1/log2(5); ideal = 1 + 1/log2(3) + 1/log2(4) ≈ 2.1309.
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        close(ndcg_at(&r, 10), dcg / (1.0 + 1.0 / 3f64.log2() + 0.5));
        close(ndcg_at(&r, 10), 0.49818925746641285);
        // complete once every expected tool is inside the cutoff
        let r = ranks(&["a", "b"], &["b", "x", "a"]);
        assert_eq!(complete_at(&r, 2), 0.0);
        assert_eq!(complete_at(&r, 3), 1.0);
    }

    #[test]
    fn ndcg_ideal_is_over_min_of_expected_and_k() {
        // |E| = 3 > k = 2: the ideal is two hits at ranks 1 and 2, so the top two being
        // expected tools is a perfect score even though one expected tool is missing.
        let r = ranks(&["a", "b", "c"], &["a", "b", "x"]);
        close(ndcg_at(&r, 2), 1.0);
        // one hit at rank 2 out of an ideal of two: (1/log2 3) / (1 + 1/log2 3)
        let r = ranks(&["a", "b", "c"], &["x", "b"]);
        close(ndcg_at(&r, 2), 0.6309297535714574 / 1.6309297535714574);
    }

    #[test]
    fn empty_ranking_scores_zero_everywhere() {
        let r = ranks(&["a", "b"], &[]);
        let m = all_metrics(&r, &[1, 5]);
        assert_eq!(m.len(), metric_names(&[1, 5]).len());
        // positive zeros: "-0.0000" must never reach a table
        assert!(m.iter().all(|&x| x == 0.0 && x.is_sign_positive()), "{m:?}");
        assert!(mean(&m).is_sign_positive());
        assert!(round_metric(-0.0).is_sign_positive());
        assert_eq!(format!("{:.4}", round_metric(-1e-9)), "0.0000");
    }

    #[test]
    fn names_follow_value_order() {
        let names: Vec<String> = metric_names(&[1, 5])
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            names,
            vec![
                "recall@1",
                "recall@5",
                "hit@1",
                "hit@5",
                "complete@1",
                "complete@5",
                "mrr",
                "ndcg@10"
            ]
        );
        let r = ranks(&["a"], &["x", "a"]);
        assert_eq!(
            all_metrics(&r, &[1, 5])[..6],
            [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
        );
    }

    #[test]
    fn mean_and_rounding() {
        assert_eq!(mean(&[]), 0.0);
        close(mean(&[1.0, 0.0, 0.5]), 0.5);
        assert_eq!(round_metric(2.0 / 3.0), 0.666667);
    }

    fn case() -> impl Strategy<Value = (Vec<u8>, Vec<u8>, usize)> {
        (
            proptest::collection::btree_set(0u8..30, 1..6).prop_map(|s| s.into_iter().collect()),
            proptest::collection::vec(0u8..30, 0..25),
            1usize..15,
        )
    }

    proptest! {
        #[test]
        fn metrics_stay_in_unit_interval((expected, ranking, k) in case()) {
            let r = expected_ranks(&expected, &ranking);
            for m in all_metrics(&r, &[k, 10]).into_iter().chain([ndcg_at(&r, k)]) {
                prop_assert!((0.0..=1.0 + 1e-12).contains(&m), "{m}");
            }
        }

        #[test]
        fn perfect_ranking_scores_one((expected, ranking, _k) in case()) {
            // The expected tools first, then anything else: every metric at a cutoff
            // covering |E| is 1, and nDCG is 1 at every cutoff.
            let mut perfect = expected.clone();
            perfect.extend(ranking.iter().filter(|t| !expected.contains(t)));
            let r = expected_ranks(&expected, &perfect);
            let k = expected.len();
            prop_assert_eq!(recall_at(&r, k), 1.0);
            prop_assert_eq!(hit_at(&r, 1), 1.0);
            prop_assert_eq!(complete_at(&r, k), 1.0);
            prop_assert_eq!(reciprocal_rank(&r), 1.0);
            for cut in 1..12 {
                prop_assert!((ndcg_at(&r, cut) - 1.0).abs() < 1e-12);
            }
        }

        #[test]
        fn metrics_grow_with_k((expected, ranking, k) in case()) {
            let r = expected_ranks(&expected, &ranking);
            prop_assert!(recall_at(&r, k) <= recall_at(&r, k + 1));
            prop_assert!(hit_at(&r, k) <= hit_at(&r, k + 1));
            prop_assert!(complete_at(&r, k) <= complete_at(&r, k + 1));
        }
    }
}
