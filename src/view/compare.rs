//! The views of a comparison of two evaluations (`compare`): one row per scorer and metric with
//! the paired interval and p-value, the queries that got worse or better, and the verdict; the
//! json of the [`Comparison`].

use crate::eval::compare::{Comparison, ScorerComparison};
use crate::output::{Format, code_for, csv, to_json, words_for};

/// Most worse/better queries listed per scorer in table form (json lists all).
const LISTED_QUERIES: usize = 10;

fn signed(x: f64) -> String {
    format!("{x:+.4}")
}

/// A figure, or n/a where the file has no query it is defined on.
fn figure(x: Option<f64>, show: impl Fn(f64) -> String) -> String {
    x.map_or_else(|| "n/a".to_string(), show)
}

/// Renders the comparison; pure.
pub fn render(c: &Comparison, format: Format) -> String {
    let headers = [
        "scorer",
        "metric",
        "base",
        "candidate",
        "difference",
        "95% CI",
        "p",
        "check",
    ];
    let rows = rows(c, format);
    match format {
        Format::Json => to_json(c),
        Format::Csv => csv(&headers, &rows),
        Format::Table | Format::Md => {
            let table = crate::output::table_for(format);
            let mut out = table(
                &headers,
                &rows,
                &[false, false, true, true, true, true, true, false],
            );
            out.push('\n');
            out.push_str(&query_lists(c, format));
            out.push_str(&verdict(c, format));
            out
        }
    }
}

/// One row per scorer and metric; the checked metric says ok or FAIL.
fn rows(c: &Comparison, format: Format) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for r in &c.results {
        for m in &r.metrics {
            let check = if m.metric != c.metric {
                String::new()
            } else if m.difference.is_none() {
                "n/a".to_string()
            } else if r.regression {
                "FAIL".to_string()
            } else {
                "ok".to_string()
            };
            let ci = m.ci95.map_or_else(String::new, |[lo, hi]| {
                if format == Format::Csv {
                    format!("{lo};{hi}")
                } else {
                    format!("{}..{}", signed(lo), signed(hi))
                }
            });
            rows.push(vec![
                scorer_label(r, format),
                m.metric.to_string(),
                figure(m.base, |x| format!("{x:.4}")),
                figure(m.candidate, |x| format!("{x:.4}")),
                figure(m.difference, signed),
                ci,
                m.p_value.map_or_else(String::new, |p| format!("{p:.4}")),
                check,
            ]);
        }
    }
    rows
}

/// The scorer's name, or `BASE → CANDIDATE` when `--pair` compared two names; each a code
/// span in Markdown (names come from the files, an external scorer's from its process).
fn scorer_label(r: &ScorerComparison, format: Format) -> String {
    let base = code_for(format, &r.scorer.to_string());
    match &r.candidate_scorer {
        Some(c) => format!("{base} → {}", code_for(format, &c.to_string())),
        None => base,
    }
}

/// Per paired scorer: how many queries got worse or better, the first of each listed.
fn query_lists(c: &Comparison, format: Format) -> String {
    let mut out = String::new();
    for r in c.results.iter().filter(|r| r.paired) {
        out.push_str(&format!(
            "{}: {} queries paired; {} worse, {} better on {}\n",
            scorer_label(r, format),
            r.paired_queries,
            r.worse.len(),
            r.better.len(),
            c.metric
        ));
        for (label, list) in [("worse", &r.worse), ("better", &r.better)] {
            for q in list.iter().take(LISTED_QUERIES) {
                out.push_str(&format!(
                    "  {label}: {} {:.4} -> {:.4}\n",
                    code_for(format, &q.id),
                    q.base,
                    q.candidate
                ));
            }
            if list.len() > LISTED_QUERIES {
                out.push_str(&format!(
                    "  ... and {} more {label} (see --format json)\n",
                    list.len() - LISTED_QUERIES
                ));
            }
        }
    }
    out
}

/// Notes, then the check's outcome.
fn verdict(c: &Comparison, format: Format) -> String {
    let name = |s: &dyn std::fmt::Display| code_for(format, &s.to_string());
    let mut out = String::new();
    for s in &c.only_in_baseline {
        out.push_str(&format!(
            "note: scorer {} is only in the baseline\n",
            name(s)
        ));
    }
    for s in &c.only_in_candidate {
        out.push_str(&format!(
            "note: scorer {} is only in the candidate\n",
            name(s)
        ));
    }
    for s in &c.allowed_missing {
        out.push_str(&format!(
            "note: scorer {} is missing from the candidate (allowed by --allow-missing)\n",
            name(s)
        ));
    }
    if c.paired_only {
        out.push_str("note: every figure is over the queries both files ranked (--paired-only)\n");
    }
    // Sentences of the comparison holding names from the files: escaped as text.
    for n in &c.notes {
        out.push_str(&format!("note: {}\n", words_for(format, n)));
    }
    for m in &c.missing {
        out.push_str(&format!(
            "FAIL: the candidate lacks {}\n",
            words_for(format, m)
        ));
    }
    for u in &c.unchecked {
        out.push_str(&format!("FAIL: {}\n", words_for(format, u)));
    }
    out.push_str(&if !c.regressions.is_empty() {
        format!(
            "FAIL: {} dropped more than {} on {}\n",
            words_for(format, &c.regression_names()),
            c.max_drop,
            c.metric
        )
    } else if c.has_regression() {
        String::new()
    } else {
        format!(
            "ok: no scorer dropped more than {} on {}\n",
            c.max_drop, c.metric
        )
    });
    out
}
