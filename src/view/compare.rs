//! The views of a comparison of two evaluations (`compare`): one row per scorer and metric with
//! the paired interval and p-value, the queries that got worse or better, and the verdict; the
//! json of the [`Comparison`].

use super::pr_section;
use crate::eval::compare::{Comparison, ScorerComparison};
use crate::output::{Format, code_for, csv, to_json, words_for};

const HEADERS: [&str; 8] = [
    "scorer",
    "metric",
    "base",
    "candidate",
    "difference",
    "95% CI",
    "p",
    "check",
];

/// Most worse/better queries listed per scorer in table form (json lists all).
const LISTED_QUERIES: usize = 10;

fn signed(x: f64) -> String {
    format!("{x:+.4}")
}

/// A figure, or n/a where the file has no query it is defined on.
fn figure(x: Option<f64>, show: impl Fn(f64) -> String) -> String {
    x.map_or_else(|| "n/a".to_string(), show)
}

/// Renders the comparison; pure. Markdown is the pull-request summary ([`summary`]).
pub fn render(c: &Comparison, format: Format) -> String {
    match format {
        Format::Json => to_json(c),
        Format::Csv => csv(&HEADERS, &rows(c, format)),
        Format::Table => report(c, format),
        Format::Md => summary(c),
    }
}

/// The comparison in full: the table, the queries that moved, the notes and the verdict.
fn report(c: &Comparison, format: Format) -> String {
    let table = crate::output::table_for(format);
    let mut out = table(
        &HEADERS,
        &rows(c, format),
        &[false, false, true, true, true, true, true, false],
    );
    out.push('\n');
    out.push_str(&query_lists(c, format));
    out.push_str(&verdict(c, format));
    out
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

/// One line: passed or failed, on which metric, by how much allowed, and why.
pub fn verdict_line(c: &Comparison) -> String {
    let checked = c
        .results
        .iter()
        .filter(|r| checked_diff(c, r).is_some())
        .count();
    if !c.has_regression() {
        return format!(
            "compare: passed: no scorer dropped more than {} on {} ({})",
            c.max_drop,
            c.metric,
            crate::number::plural(checked, "scorer checked", "scorers checked")
        );
    }
    let mut why = Vec::new();
    if !c.regressions.is_empty() {
        why.push(format!(
            "{} dropped more than {} on {}",
            c.regression_names(),
            c.max_drop,
            c.metric
        ));
    }
    if !c.missing.is_empty() {
        why.push(format!("the candidate lacks {}", c.missing.join(", ")));
    }
    why.extend(c.unchecked.iter().cloned());
    format!("compare: FAILED: {}", why.join("; "))
}

/// The checked metric's difference of one scorer, when both files define it.
fn checked_diff(c: &Comparison, r: &ScorerComparison) -> Option<(f64, f64, f64)> {
    let m = r.metrics.iter().find(|m| m.metric == c.metric)?;
    Some((m.base?, m.candidate?, m.difference?))
}

/// The pull-request summary (`--format md`, and what `GITHUB_STEP_SUMMARY` gets): the verdict
/// first, the scorers whose checked metric fell, those whose rose, the comparison folded.
pub fn summary(c: &Comparison) -> String {
    let md = Format::Md;
    let mut out = format!("## {}\n", crate::output::md_text(&verdict_line(c)));
    let mut worse = Vec::new();
    let mut better = Vec::new();
    for r in &c.results {
        let Some((base, candidate, d)) = checked_diff(c, r) else {
            continue;
        };
        let queries = if r.paired {
            format!(
                "; {} of {} paired queries worse, {} better",
                r.worse.len(),
                r.paired_queries,
                r.better.len()
            )
        } else {
            String::new()
        };
        let line = format!(
            "- {} {}: {base:.4} → {candidate:.4} ({}{}){queries}\n",
            scorer_label(r, md),
            c.metric,
            signed(d),
            if r.regression {
                ", over the allowed drop"
            } else {
                ""
            },
        );
        if d < 0.0 {
            worse.push((d, line));
        } else if d > 0.0 {
            better.push((-d, line));
        }
    }
    let lacking = c
        .missing
        .iter()
        .map(|m| format!("- the candidate lacks {}\n", words_for(md, m)))
        .collect();
    pr_section(&mut out, "What got worse", worse, lacking);
    pr_section(&mut out, "What got better", better, Vec::new());
    out.push_str("\n<details><summary>Details</summary>\n\n");
    out.push_str(&report(c, md));
    out.push_str("\n</details>\n");
    out
}
