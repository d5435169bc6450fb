//! The views of a `check` ([`CheckResult`]): the table and Markdown reports, the findings as
//! CSV, the JSON, and the GitHub form: workflow annotations for located findings, then a
//! summary sized for a pull-request comment (verdict first, what got worse, what got better,
//! the report folded in `<details>`), which is also what a step summary gets.

use serde::Deserialize;

use crate::experiment::check::{CheckDiff, CheckResult, Finding, Level};
use crate::number::plural;
use crate::output::{Format, csv, md_code, md_text, table_for, to_json};

/// `check --format`: the common formats and `github`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckFormat {
    #[default]
    Table,
    Md,
    Json,
    Csv,
    Github,
}

crate::named_enum!(CheckFormat, "format");

/// Rows of a findings table shown in the Markdown details at most (a PR comment holds 65,536
/// characters).
pub const MAX_DETAIL_FINDINGS: usize = 150;
/// Items of each list in the summary's worse/better sections.
pub const MAX_SUMMARY_ITEMS: usize = 10;

pub fn render(r: &CheckResult, format: CheckFormat) -> String {
    match format {
        CheckFormat::Json => to_json(r),
        CheckFormat::Csv => findings_csv(&r.findings),
        CheckFormat::Table => report(r, Format::Table, usize::MAX),
        CheckFormat::Md => report(r, Format::Md, usize::MAX),
        CheckFormat::Github => {
            let mut out = annotations(r);
            out.push_str(&summary(r));
            out
        }
    }
}

/// One line: passed or failed, the counts, and why.
pub fn verdict_line(r: &CheckResult) -> String {
    let v = &r.verdict;
    let status = if v.passed { "passed" } else { "FAILED" };
    let mut why = Vec::new();
    if v.budget_exceeded {
        why.push("a token budget is exceeded".to_string());
    }
    if v.failing > 0 {
        let what = match (r.baseline.is_some(), v.failing == 1) {
            (true, true) => "new finding",
            (true, false) => "new findings",
            (false, true) => "finding",
            (false, false) => "findings",
        };
        why.push(format!(
            "{} {what} at --fail-on {}",
            v.failing,
            v.fail_on.map_or("-", Level::name)
        ));
    }
    let mut line = format!(
        "toolbudget check {status}: {}, {}, {} in {} tools",
        plural(v.errors, "error", "errors"),
        plural(v.warnings, "warning", "warnings"),
        plural(v.notes, "note", "notes"),
        r.report.tool_count
    );
    if !why.is_empty() {
        line.push_str(&format!(" ({})", why.join("; ")));
    }
    line
}

fn place(f: &Finding) -> String {
    match (&f.file, f.line, f.column) {
        (Some(file), Some(l), Some(c)) => format!("{file}:{l}:{c}"),
        (Some(file), _, _) => file.clone(),
        _ => String::new(),
    }
}

fn findings_csv(findings: &[Finding]) -> String {
    let rows: Vec<Vec<String>> = findings
        .iter()
        .map(|f| {
            vec![
                f.level.name().to_string(),
                f.id.clone(),
                f.tool.clone().unwrap_or_default(),
                f.subject.clone().unwrap_or_default(),
                f.client.clone().unwrap_or_default(),
                f.file.clone().unwrap_or_default(),
                f.line.map(|n| n.to_string()).unwrap_or_default(),
                f.column.map(|n| n.to_string()).unwrap_or_default(),
                f.message.clone(),
            ]
        })
        .collect();
    csv(
        &[
            "level", "id", "tool", "subject", "client", "file", "line", "column", "message",
        ],
        &rows,
    )
}

/// A user's text in a cell: a code span in Markdown, as is in a text table.
fn code(text: &str, format: Format) -> String {
    if format == Format::Md && !text.is_empty() {
        md_code(text)
    } else {
        text.to_string()
    }
}

fn prose(text: &str, format: Format) -> String {
    if format == Format::Md {
        md_text(text)
    } else {
        text.to_string()
    }
}

fn heading(out: &mut String, title: &str, format: Format) {
    out.push('\n');
    if format == Format::Md {
        out.push_str(&format!("### {title}\n\n"));
    } else {
        out.push_str(&format!("{title}\n"));
    }
}

fn signed(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

fn opt(n: Option<usize>) -> String {
    n.map_or_else(|| "-".to_string(), |n| n.to_string())
}

fn findings_table(findings: &[Finding], format: Format, max: usize) -> String {
    let table = table_for(format);
    let rows: Vec<Vec<String>> = findings
        .iter()
        .take(max)
        .map(|f| {
            vec![
                code(&place(f), format),
                f.level.name().to_string(),
                f.id.clone(),
                f.tool
                    .as_deref()
                    .map(|t| code(t, format))
                    .unwrap_or_default(),
                f.client.clone().unwrap_or_default(),
                prose(&f.message, format),
            ]
        })
        .collect();
    let mut out = table(
        &["where", "level", "id", "tool", "client", "message"],
        &rows,
        &[false; 6],
    );
    if findings.len() > max {
        out.push_str(&format!(
            "\n{} more findings: see `--format json` or `--format csv`.\n",
            findings.len() - max
        ));
    }
    out
}

/// The whole report as a text table or Markdown; `max_findings` cuts the findings table.
fn report(r: &CheckResult, format: Format, max_findings: usize) -> String {
    let mut out = String::new();
    if format == Format::Md {
        out.push_str(&format!("**{}**\n", md_text(&verdict_line(r))));
    } else {
        out.push_str(&verdict_line(r));
        out.push('\n');
    }

    clients_section(&mut out, r, format);
    listing_section(&mut out, r, format);
    findings_section(&mut out, r, format, max_findings);
    cost_section(&mut out, r, format);
    confusable_section(&mut out, r, format);
    queries_section(&mut out, r, format);
    baseline_section(&mut out, r, format);
    heading(&mut out, "How the reachability queries are made", format);
    for rule in &r.rules {
        out.push_str(&format!("- {}\n", prose(rule, format)));
    }
    out
}

/// The clients side by side: what each loads and defers, what its search misses.
fn clients_section(out: &mut String, r: &CheckResult, format: Format) {
    let rep = &r.report;
    let table = table_for(format);
    heading(out, "Clients", format);
    let rows: Vec<Vec<String>> = rep
        .clients
        .iter()
        .map(|c| {
            vec![
                c.client.clone(),
                c.scorer.clone(),
                c.max_results.to_string(),
                c.loaded.len().to_string(),
                c.deferred.len().to_string(),
                c.unreachable.to_string(),
                c.hard_to_find.to_string(),
                c.loaded_tokens.to_string(),
                format!(
                    "{} ({})",
                    c.listing_tokens.get(&c.listing).copied().unwrap_or(0),
                    c.listing
                ),
                c.deferred_tokens.to_string(),
                c.counter.clone(),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "client",
            "search",
            "top",
            "loaded",
            "deferred",
            "unreachable",
            "hard to find",
            "always-loaded tokens",
            "deferred list tokens",
            "deferred definitions",
            "counter",
        ],
        &rows,
        &[
            false, false, true, true, true, true, true, true, true, true, false,
        ],
    ));
}

/// What the deferred list costs in each listing mode.
fn listing_section(out: &mut String, r: &CheckResult, format: Format) {
    let rep = &r.report;
    let table = table_for(format);
    heading(out, "Deferred list per listing mode (tokens)", format);
    let modes = ["names", "descriptions", "servers", "stubs", "none"];
    let rows: Vec<Vec<String>> = rep
        .clients
        .iter()
        .map(|c| {
            let mut row = vec![c.client.clone()];
            row.extend(
                modes
                    .iter()
                    .map(|m| c.listing_tokens.get(*m).copied().unwrap_or(0).to_string()),
            );
            row
        })
        .collect();
    let mut headers = vec!["client"];
    headers.extend(modes);
    out.push_str(&table(
        &headers,
        &rows,
        &[false, true, true, true, true, true],
    ));
}

/// Every finding, cut at `max_findings`.
fn findings_section(out: &mut String, r: &CheckResult, format: Format, max_findings: usize) {
    heading(out, "Findings", format);
    if r.findings.is_empty() {
        out.push_str("none\n");
    } else {
        out.push_str(&findings_table(&r.findings, format, max_findings));
    }
}

/// The costliest tools and parameters under the report's counter.
fn cost_section(out: &mut String, r: &CheckResult, format: Format) {
    let rep = &r.report;
    let table = table_for(format);
    heading(
        out,
        &format!(
            "Costliest tools ({}; whole catalog {} tokens)",
            rep.cost.counter, rep.cost.total_tokens
        ),
        format,
    );
    let rows: Vec<Vec<String>> = rep
        .cost
        .costliest
        .iter()
        .map(|t| vec![code(&t.id, format), t.tokens.to_string()])
        .collect();
    out.push_str(&table(&["tool", "tokens"], &rows, &[false, true]));
    if !rep.cost.costliest_parameters.is_empty() {
        heading(out, "Costliest parameters (schema JSON)", format);
        let rows: Vec<Vec<String>> = rep
            .cost
            .costliest_parameters
            .iter()
            .map(|p| {
                vec![
                    code(&p.tool, format),
                    code(&p.parameter, format),
                    p.tokens.to_string(),
                ]
            })
            .collect();
        out.push_str(&table(
            &["tool", "parameter", "tokens"],
            &rows,
            &[false, false, true],
        ));
    }
}

/// Pairs a scorer confuses, with each side's distinguishing words.
fn confusable_section(out: &mut String, r: &CheckResult, format: Format) {
    let rep = &r.report;
    let table = table_for(format);
    if !rep.confusable.is_empty() {
        heading(
            out,
            "Confusable pairs (winner ranked first for the intended tool's own query)",
            format,
        );
        let rows: Vec<Vec<String>> = rep
            .confusable
            .iter()
            .map(|p| {
                vec![
                    code(&p.intended, format),
                    code(&p.winner, format),
                    p.seen.join(", "),
                    prose(&p.intended_words.join(" "), format),
                    prose(&p.winner_words.join(" "), format),
                ]
            })
            .collect();
        out.push_str(&table(
            &[
                "intended",
                "winner",
                "seen",
                "only intended has",
                "only winner has",
            ],
            &rows,
            &[false; 5],
        ));
    }
}

/// The author's labeled queries: recall per client, false positives, tools below recall 1.
fn queries_section(out: &mut String, r: &CheckResult, format: Format) {
    let rep = &r.report;
    let table = table_for(format);
    if let Some(queries) = &rep.queries {
        heading(out, "Labeled queries", format);
        let rows: Vec<Vec<String>> = queries
            .iter()
            .map(|q| {
                vec![
                    q.client.clone(),
                    q.k.to_string(),
                    q.queries.to_string(),
                    q.recall.map_or_else(|| "-".into(), |x| format!("{x:.3}")),
                    q.no_match.to_string(),
                    q.false_positives.to_string(),
                    q.true_negatives.to_string(),
                ]
            })
            .collect();
        out.push_str(&table(
            &[
                "client",
                "k",
                "queries",
                "recall@k",
                "no-match",
                "false positives",
                "true negatives",
            ],
            &rows,
            &[false, true, true, true, true, true, true],
        ));
        let rows: Vec<Vec<String>> = queries
            .iter()
            .flat_map(|q| {
                q.per_tool.iter().filter(|t| t.found < t.queries).map(|t| {
                    vec![
                        q.client.clone(),
                        code(&t.id, format),
                        t.queries.to_string(),
                        t.found.to_string(),
                        format!("{:.3}", t.recall),
                    ]
                })
            })
            .collect();
        if !rows.is_empty() {
            heading(out, "Tools below recall 1", format);
            out.push_str(&table(
                &["client", "tool", "queries", "found", "recall@k"],
                &rows,
                &[false, false, true, true, true],
            ));
        }
    }
}

/// The difference from the baseline catalog: tokens, findability, confusable pairs.
fn baseline_section(out: &mut String, r: &CheckResult, format: Format) {
    let table = table_for(format);
    if let Some(d) = &r.baseline {
        heading(
            out,
            &format!(
                "Against the baseline ({} tools; {} added, {} removed)",
                d.tool_count,
                d.tools_added.len(),
                d.tools_removed.len()
            ),
            format,
        );
        let rows: Vec<Vec<String>> = d
            .tokens
            .iter()
            .map(|t| {
                vec![
                    code(&t.what, format),
                    t.counter.clone(),
                    opt(t.before),
                    opt(t.after),
                    signed(t.delta),
                ]
            })
            .collect();
        out.push_str(&table(
            &["tokens", "counter", "before", "after", "delta"],
            &rows,
            &[false, false, true, true, true],
        ));
        if !d.findability.is_empty() {
            out.push('\n');
            let rows: Vec<Vec<String>> = d
                .findability
                .iter()
                .map(|f| {
                    vec![
                        f.client.clone(),
                        code(&f.tool, format),
                        f.change.clone(),
                        f.before.clone(),
                        f.after.clone(),
                    ]
                })
                .collect();
            out.push_str(&table(
                &["client", "tool", "change", "before (form rank)", "after"],
                &rows,
                &[false; 5],
            ));
        }
        for (title, pairs) in [
            ("new confusable pairs", &d.new_confusable),
            ("resolved confusable pairs", &d.resolved_confusable),
        ] {
            if !pairs.is_empty() {
                let list: Vec<String> = pairs
                    .iter()
                    .map(|p| {
                        format!(
                            "{} -> {}",
                            code(&p.intended, format),
                            code(&p.winner, format)
                        )
                    })
                    .collect();
                out.push_str(&format!("\n{title}: {}\n", list.join(", ")));
            }
        }
        out.push_str(&format!(
            "\nnew findings: {}; fixed findings: {}\n",
            d.new_findings.len(),
            d.fixed_findings.len()
        ));
    }
}

/// The pull-request summary: the verdict, what got worse, what got better, the report folded.
pub fn summary(r: &CheckResult) -> String {
    let mut out = format!("## {}\n", md_text(&verdict_line(r)));
    let list = |out: &mut String, items: Vec<String>| {
        let n = items.len();
        for i in items.into_iter().take(MAX_SUMMARY_ITEMS) {
            out.push_str(&i);
        }
        if n > MAX_SUMMARY_ITEMS {
            out.push_str(&format!("- … and {} more\n", n - MAX_SUMMARY_ITEMS));
        }
    };
    if let Some(d) = &r.baseline
        && !d.tools_removed.is_empty()
        && d.tools_removed.len() == d.tool_count
        && !d.tools_added.is_empty()
    {
        out.push_str(
            "\nNo tool id is in both versions: give both the same server name \
             (`-c SERVER=PATH --baseline SERVER=PATH`).\n",
        );
    }
    out.push_str("\n### What got worse\n\n");
    let (worse, better) = match &r.baseline {
        Some(d) => changes(d),
        None => (
            r.findings
                .iter()
                .filter(|f| f.level != Level::Note)
                .map(summary_item)
                .collect(),
            Vec::new(),
        ),
    };
    if worse.is_empty() {
        out.push_str("Nothing.\n");
    }
    list(&mut out, worse);
    out.push_str("\n### What got better\n\n");
    if r.baseline.is_none() {
        out.push_str("No baseline given (`--baseline`): nothing to compare with.\n");
    } else if better.is_empty() {
        out.push_str("Nothing.\n");
    }
    list(&mut out, better);
    out.push_str("\n<details><summary>Details</summary>\n\n");
    out.push_str(&report(r, Format::Md, MAX_DETAIL_FINDINGS));
    out.push_str("\n</details>\n");
    out
}

/// A finding as a line of the pull-request summary.
fn summary_item(f: &Finding) -> String {
    let mut s = format!("- **{}** `{}`", f.level.name(), f.id);
    if let Some(t) = &f.tool {
        s.push_str(&format!(" {}", md_code(t)));
    }
    s.push_str(&format!(": {}", md_text(&f.message)));
    let at = place(f);
    if !at.is_empty() {
        s.push_str(&format!(" ({})", md_code(&at)));
    }
    s.push('\n');
    s
}

/// What got worse and what got better against the baseline, as summary lines.
fn changes(d: &CheckDiff) -> (Vec<String>, Vec<String>) {
    let mut worse = Vec::new();
    let mut better = Vec::new();
    for (ids, verb, sign) in [
        (&d.tools_added, "added", 1),
        (&d.tools_removed, "removed", -1),
    ] {
        if ids.is_empty() {
            continue;
        }
        let tokens: i64 = d
            .tokens
            .iter()
            .filter(|t| ids.contains(&t.what))
            .map(|t| t.delta)
            .sum();
        let shown: Vec<String> = ids
            .iter()
            .take(MAX_SUMMARY_ITEMS)
            .map(|i| md_code(i))
            .collect();
        let line = format!(
            "- {} {verb} ({} tokens): {}{}\n",
            plural(ids.len(), "tool", "tools"),
            signed(tokens),
            shown.join(", "),
            if ids.len() > MAX_SUMMARY_ITEMS {
                ", …"
            } else {
                ""
            }
        );
        if sign > 0 {
            worse.push(line);
        } else {
            better.push(line);
        }
    }
    // A tool added or removed is in its line above.
    for t in d
        .tokens
        .iter()
        .filter(|t| t.delta != 0 && (t.before.is_some() && t.after.is_some()))
    {
        let line = format!(
            "- {} tokens: {} → {} ({}, {})\n",
            md_code(&t.what),
            opt(t.before),
            opt(t.after),
            signed(t.delta),
            t.counter
        );
        if t.delta > 0 {
            worse.push(line);
        } else {
            better.push(line);
        }
    }
    findability_changes(d, &mut worse, &mut better);
    (worse, better)
}

/// Tools harder or easier to find, confusable pairs made or resolved, findings new or fixed.
fn findability_changes(d: &CheckDiff, worse: &mut Vec<String>, better: &mut Vec<String>) {
    for f in &d.findability {
        let line = format!(
            "- {} is {} to find under {}: {} (was {})\n",
            md_code(&f.tool),
            f.change,
            f.client,
            f.after,
            f.before
        );
        if f.change == "harder" {
            worse.push(line);
        } else {
            better.push(line);
        }
    }
    for p in &d.new_confusable {
        worse.push(format!(
            "- new confusable pair: {} wins {}'s own query\n",
            md_code(&p.winner),
            md_code(&p.intended)
        ));
    }
    for p in &d.resolved_confusable {
        better.push(format!(
            "- resolved confusable pair: {} no longer wins {}'s own query\n",
            md_code(&p.winner),
            md_code(&p.intended)
        ));
    }
    worse.extend(
        d.new_findings
            .iter()
            .filter(|f| f.level != Level::Note && f.id != "harder-to-find")
            .map(summary_item),
    );
    better.extend(
        d.fixed_findings
            .iter()
            .filter(|f| f.level != Level::Note)
            .map(|f| format!("- fixed {}", &summary_item(f)[2..])),
    );
}

/// GitHub's escaping of a workflow command's message.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub's escaping of a workflow command's property value.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// `::error file=F,line=L,col=C,title=ID::MESSAGE` for every finding with a file (notes as
/// `::notice`).
pub fn annotations(r: &CheckResult) -> String {
    let mut out = String::new();
    for f in crate::experiment::check::located(&r.findings) {
        let kind = match f.level {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "notice",
        };
        let mut props = vec![format!(
            "file={}",
            escape_property(f.file.as_deref().unwrap_or(""))
        )];
        if let Some(l) = f.line {
            props.push(format!("line={l}"));
        }
        if let Some(c) = f.column {
            props.push(format!("col={c}"));
        }
        props.push(format!(
            "title={}",
            escape_property(&format!("toolbudget {}", f.id))
        ));
        out.push_str(&format!(
            "::{kind} {}::{}\n",
            props.join(","),
            escape_data(&f.message)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_text_is_escaped_as_github_reads_it() {
        assert_eq!(escape_data("50% done\nnext\r"), "50%25 done%0Anext%0D");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}
