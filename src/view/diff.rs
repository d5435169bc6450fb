//! The views of a difference of two simulation results (`diff`): one row per scenario and
//! figure, base → head with the change; the pull-request summary (`--format md`, and what
//! `GITHUB_STEP_SUMMARY` gets); the json of the [`Diff`].

use super::pr_section;
use crate::experiment::diff::{Diff, FigureDiff, GATED, Measure};
use crate::number::{int, plural, usd_exact};
use crate::output::{Format, code_for, csv, to_json, words_for};

const HEADERS: [&str; 6] = ["scenario", "figure", "base", "head", "change", "change %"];

/// Renders the difference; pure. Markdown is the pull-request summary ([`summary`]).
pub fn render(d: &Diff, format: Format) -> String {
    match format {
        Format::Json => to_json(d),
        Format::Csv => csv(&HEADERS, &rows(d, Format::Csv)),
        Format::Table => report(d, Format::Table),
        Format::Md => summary(d),
    }
}

/// A figure's value as written: plain in CSV, grouped or in dollars elsewhere.
fn value(f: &FigureDiff, x: f64, format: Format) -> String {
    match (format == Format::Csv, f.unit) {
        (true, Measure::Count) => format!("{x:.0}"),
        (true, Measure::Usd) => format!("{x}"),
        (false, Measure::Count) => int(x as usize),
        (false, Measure::Usd) => usd_exact(x),
    }
}

/// The change with its sign: `+1,234`, `-$0.0012`, `0`.
fn change(f: &FigureDiff, format: Format) -> String {
    let sign = if f.change > 0.0 {
        "+"
    } else if f.change < 0.0 {
        "-"
    } else {
        ""
    };
    if format == Format::Csv {
        return match f.unit {
            Measure::Count => format!("{:.0}", f.change),
            Measure::Usd => format!("{}", f.change),
        };
    }
    let abs = f.change.abs();
    match f.unit {
        Measure::Count => format!("{sign}{}", int(abs as usize)),
        Measure::Usd => format!("{sign}{}", usd_exact(abs)),
    }
}

/// The change in percent of base: `+5.3%`, `n/a` from 0.
fn change_pct(f: &FigureDiff, format: Format) -> String {
    match (f.change_pct, format) {
        (Some(p), Format::Csv) => format!("{p}"),
        (Some(0.0), _) => "0.0%".to_string(),
        (Some(p), _) => format!("{p:+.1}%"),
        (None, Format::Csv) => String::new(),
        (None, _) if f.change == 0.0 => "0.0%".to_string(),
        (None, _) => "new".to_string(),
    }
}

/// One row per scenario and figure.
fn rows(d: &Diff, format: Format) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for s in &d.scenarios {
        for f in &s.figures {
            rows.push(vec![
                code_for(format, &s.name),
                f.figure.clone(),
                value(f, f.base, format),
                value(f, f.head, format),
                change(f, format),
                change_pct(f, format),
            ]);
        }
    }
    rows
}

/// The difference in full: the table, the scenarios in one file only, the notes, the verdict.
fn report(d: &Diff, format: Format) -> String {
    let table = crate::output::table_for(format);
    let mut out = table(
        &HEADERS,
        &rows(d, format),
        &[false, false, true, true, true, true],
    );
    out.push('\n');
    out.push_str(&notes(d, format));
    if format == Format::Table {
        out.push_str(&verdict_line(d));
        out.push('\n');
    }
    out
}

/// The scenarios in one file only, and the settings that differ.
fn notes(d: &Diff, format: Format) -> String {
    let mut out = String::new();
    let names = |v: &[String]| {
        v.iter()
            .map(|n| code_for(format, n))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut lines = Vec::new();
    if !d.only_in_base.is_empty() {
        lines.push(format!(
            "only in base ({}): {}",
            words_for(format, &d.base),
            names(&d.only_in_base)
        ));
    }
    if !d.only_in_head.is_empty() {
        lines.push(format!(
            "only in head ({}): {}",
            words_for(format, &d.head),
            names(&d.only_in_head)
        ));
    }
    for n in &d.notes {
        lines.push(format!(
            "note: {} (figures not measured the same way)",
            words_for(format, n)
        ));
    }
    for l in lines {
        if format == Format::Md {
            out.push_str("- ");
        }
        out.push_str(&l);
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// One line: passed or failed, on what, and why.
pub fn verdict_line(d: &Diff) -> String {
    let compared = plural(d.scenarios.len(), "scenario compared", "scenarios compared");
    let failed = d.failed();
    let Some(max) = d.max_increase_pct else {
        let worse = d
            .scenarios
            .iter()
            .filter(|s| s.gated().change > 0.0)
            .count();
        return format!(
            "diff: passed: no gate (--max-increase not given); {compared}, {} with more {GATED}",
            int(worse)
        );
    };
    if failed.is_empty() {
        return format!("diff: passed: no scenario's {GATED} grew more than {max}% ({compared})");
    }
    let which: Vec<String> = failed
        .iter()
        .map(|s| {
            let g = s.gated();
            format!(
                "{} ({})",
                s.name,
                change_pct(g, Format::Table).replace("new", "from 0")
            )
        })
        .collect();
    format!(
        "diff: FAILED: {GATED} grew more than {max}% in {}",
        which.join(", ")
    )
}

/// The pull-request summary: the verdict first, the figures that rose, those that fell, the
/// full table folded.
pub fn summary(d: &Diff) -> String {
    let md = Format::Md;
    let mut out = format!("## {}\n", crate::output::md_text(&verdict_line(d)));
    let mut worse = Vec::new();
    let mut better = Vec::new();
    for s in &d.scenarios {
        for f in &s.figures {
            if f.change == 0.0 {
                continue;
            }
            let over = s.over_gate && f.figure == GATED;
            let line = format!(
                "- {} {}: {} → {} ({}, {}){}\n",
                code_for(md, &s.name),
                f.figure,
                value(f, f.base, md),
                value(f, f.head, md),
                change(f, md),
                change_pct(f, md),
                if over {
                    ", over the allowed increase"
                } else {
                    ""
                }
            );
            let key = f.change_pct.unwrap_or(f64::INFINITY);
            if f.change > 0.0 {
                worse.push((-key, line));
            } else {
                better.push((key, line));
            }
        }
    }
    let lost = d
        .only_in_base
        .iter()
        .map(|n| format!("- {} is only in base\n", code_for(md, n)))
        .collect();
    pr_section(&mut out, "What got worse", worse, lost);
    pr_section(&mut out, "What got better", better, Vec::new());
    out.push_str("\n<details><summary>Details</summary>\n\n");
    out.push_str(&report(d, md));
    out.push_str("</details>\n");
    out
}
