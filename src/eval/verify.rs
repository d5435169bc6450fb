//! What `compare` checks of an `eval` file before it trusts a number of it: that it evaluates
//! something, that every metric is a number its definition allows, and — when the file keeps
//! its per-query rows — that the rows agree with themselves and with the aggregates. A metric
//! is recomputed from the ranks of the expected tools (`eval::metrics`), the ranks are checked
//! against the stored top results, and each aggregate against the mean of its rows, so a
//! hand-edited, stale or reversed file cannot pass the gate.

use super::metrics::Metric;
use super::metrics::{
    complete_at, hit_at, mean, ndcg_at, recall_at, reciprocal_rank, round_metric,
};
use super::result::{EvalResult, QueryResult, ScorerResult};
use super::run::REFUSAL;

/// Largest difference tolerated between a stored metric and its recomputation: the files
/// round to 6 decimals.
pub const TOLERANCE: f64 = 1.5e-6;

/// A metric recomputed from the ranks of one query's expected tools; `None` for a name that
/// is not a metric of `eval`.
pub fn metric_from_ranks(name: &str, ranks: &[Option<usize>]) -> Option<f64> {
    if name == "mrr" {
        return Some(reciprocal_rank(ranks));
    }
    let (kind, k) = name.split_once('@')?;
    let k: usize = k.parse().ok().filter(|&k| k > 0)?;
    match kind {
        "recall" => Some(recall_at(ranks, k)),
        "hit" => Some(hit_at(ranks, k)),
        "complete" => Some(complete_at(ranks, k)),
        "ndcg" => Some(ndcg_at(ranks, k)),
        _ => None,
    }
}

/// Checks one eval file; the message names the file, the scorer and the query.
pub fn verify(file: &str, result: &EvalResult) -> Result<(), String> {
    if result.results.is_empty() {
        return Err(format!(
            "{file}: the file holds no results (`results` is empty): there is nothing to check"
        ));
    }
    for r in &result.results {
        let at = |what: &str| format!("{file}: scorer {}: {what}", r.scorer);
        // A null (n/a) mean is checked against the rows (`verify_rows`) or the classes
        // (`compare::check_figures`).
        for (name, v) in r.metrics.iter().filter_map(|(n, v)| Some((n, (*v)?))) {
            check_value(name, v).map_err(|why| at(&why))?;
        }
        for (class, c) in &r.classes {
            for (name, &v) in &c.metrics {
                check_value(name, v).map_err(|why| at(&format!("class {class}: {why}")))?;
            }
        }
        if let Some(rows) = &r.per_query {
            verify_rows(result, r, rows).map_err(|why| at(&why))?;
        }
    }
    Ok(())
}

/// Every metric of `eval` is a share or a mean of shares: a number from 0 to 1.
fn check_value(name: &Metric, v: f64) -> Result<(), String> {
    if *name != REFUSAL && metric_from_ranks(&name.to_string(), &[]).is_none() {
        return Err(format!("{name} is not a metric toolbudget eval writes"));
    }
    if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
        return Err(format!(
            "{name} is {v}, outside 0..1 where every metric lies"
        ));
    }
    Ok(())
}

fn verify_rows(result: &EvalResult, r: &ScorerResult, rows: &[QueryResult]) -> Result<(), String> {
    if result.query_count != 0 && rows.len() != result.query_count {
        return Err(format!(
            "per_query has {} rows for {} queries",
            rows.len(),
            result.query_count
        ));
    }
    for q in rows {
        verify_row(result, q).map_err(|why| format!("query {:?}: {why}", q.id))?;
    }
    // Each aggregate is the mean over the queries that expect a tool.
    let answerable: Vec<&QueryResult> = rows.iter().filter(|q| !q.expected.is_empty()).collect();
    for (name, &stored) in &r.metrics {
        let text = name.to_string();
        let values: Vec<f64> = answerable
            .iter()
            .filter_map(|q| metric_from_ranks(&text, &q.ranks))
            .collect();
        // No query expects a tool: the mean is n/a (null); a file of an older version
        // stored 0 for it, which is read as n/a too.
        let recomputed = (!answerable.is_empty()).then(|| round_metric(mean(&values)));
        let agrees = match (recomputed, stored) {
            (Some(r), Some(s)) => (r - s).abs() <= TOLERANCE,
            (None, None) => true,
            (None, Some(s)) => s.abs() <= TOLERANCE,
            _ => false,
        };
        if !agrees {
            let show =
                |v: Option<f64>| v.map_or_else(|| "null (n/a)".to_string(), |v| v.to_string());
            return Err(format!(
                "{name} is stored as {}, but the mean of its per-query rows is {}: the file \
                 disagrees with itself",
                show(stored),
                show(recomputed)
            ));
        }
    }
    Ok(())
}

fn verify_row(result: &EvalResult, q: &QueryResult) -> Result<(), String> {
    if q.ranks.len() != q.expected.len() {
        return Err(format!(
            "{} ranks for {} expected tools",
            q.ranks.len(),
            q.expected.len()
        ));
    }
    let depth = if result.depth > 0 {
        result.depth
    } else {
        usize::MAX
    };
    for (e, rank) in q.expected.iter().zip(&q.ranks) {
        match *rank {
            Some(0) => return Err(format!("{e} has rank 0; ranks start at 1")),
            Some(r) if r > depth => {
                return Err(format!("{e} has rank {r}, deeper than the depth {depth}"));
            }
            Some(r) if r <= q.top.len() && q.top[r - 1] != *e => {
                return Err(format!(
                    "{e} has rank {r}, but the stored top results hold {} there",
                    q.top[r - 1]
                ));
            }
            None if q.top.contains(e) => {
                return Err(format!(
                    "{e} is among the stored top results but has no rank"
                ));
            }
            _ => {}
        }
    }
    for (i, t) in q.top.iter().enumerate() {
        if q.top[..i].contains(t) {
            return Err(format!("the stored top results list {t} twice"));
        }
    }
    for (name, &stored) in &q.metrics {
        check_value(name, stored)?;
        let recomputed = if *name == REFUSAL {
            if q.top.is_empty() { 1.0 } else { 0.0 }
        } else if q.expected.is_empty() {
            return Err(format!("{name} is stored for a query that expects no tool"));
        } else {
            metric_from_ranks(&name.to_string(), &q.ranks).unwrap_or(f64::NAN)
        };
        if (round_metric(recomputed) - stored).abs() > TOLERANCE {
            return Err(format!(
                "{name} is stored as {stored}, but its ranks {} give {}",
                ranks_text(&q.ranks),
                round_metric(recomputed)
            ));
        }
    }
    Ok(())
}

fn ranks_text(ranks: &[Option<usize>]) -> String {
    let parts: Vec<String> = ranks
        .iter()
        .map(|r| r.map_or_else(|| "none".to_string(), |r| r.to_string()))
        .collect();
    format!("[{}]", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::run::tests::fixture_result;

    #[test]
    fn a_real_result_passes_and_every_edit_is_caught() {
        let good = fixture_result(&[1, 3, 5, 10], true);
        verify("a.json", &good).unwrap();

        let mut empty = good.clone();
        empty.results.clear();
        assert!(
            verify("a.json", &empty)
                .unwrap_err()
                .contains("holds no results")
        );

        let mut absurd = good.clone();
        absurd.results[0]
            .metrics
            .insert("recall@5".into(), Some(5.0));
        let e = verify("a.json", &absurd).unwrap_err();
        assert!(e.contains("recall@5 is 5, outside 0..1"), "{e}");
        absurd.results[0]
            .metrics
            .insert("recall@5".into(), Some(f64::NAN));
        assert!(verify("a.json", &absurd).is_err());

        // An aggregate edited by hand disagrees with the rows.
        let mut edited = good.clone();
        let v = edited.results[0].metrics[&Metric::Mrr].unwrap();
        edited.results[0]
            .metrics
            .insert("mrr".into(), Some((v + 0.1).min(1.0)));
        let e = verify("a.json", &edited).unwrap_err();
        assert!(
            e.contains("mrr is stored as") && e.contains("disagrees"),
            "{e}"
        );

        // A stored ranking reversed contradicts the ranks.
        let mut reversed = good.clone();
        for q in reversed.results[0].per_query.as_mut().unwrap() {
            q.top.reverse();
        }
        let e = verify("a.json", &reversed).unwrap_err();
        assert!(
            e.contains("query ") && e.contains("stored top results"),
            "{e}"
        );

        // Ranks edited together with the top list still disagree with the stored metrics.
        let mut moved = good.clone();
        let row = &mut moved.results[0].per_query.as_mut().unwrap()[0];
        row.ranks = vec![None; row.ranks.len()];
        row.top.retain(|t| !row.expected.contains(t));
        assert!(
            verify("a.json", &moved)
                .unwrap_err()
                .contains("is stored as")
        );
    }
}
