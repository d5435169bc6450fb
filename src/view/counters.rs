//! The views of a counter comparison (`count --compare-counters`): the per-tool table, the
//! per-counter summary, the json of the [`CounterComparison`] and the per-tool CSV.

use super::count::error_note;
use crate::experiment::count::CounterComparison;
use crate::output::{Format, csv, to_json};

pub fn render(r: &CounterComparison, format: Format) -> String {
    let summary_headers = [
        "counter",
        "tokenizer",
        "preamble of",
        "tools",
        "fixed",
        "request",
        "per tool",
        "vs o200k-json",
    ];
    let summary: Vec<Vec<String>> = r
        .counters
        .iter()
        .map(|c| {
            vec![
                c.counter.0.name().to_string(),
                c.counter.0.tokenizer_label().to_string(),
                c.preamble
                    .as_ref()
                    .map_or_else(|| "none".to_string(), |p| p.model.clone()),
                format!("{}{}", c.tools_tokens, error_note(c.error_pct)),
                c.fixed_tokens.to_string(),
                c.request_tokens.to_string(),
                format!("{:.1}", c.per_tool_mean),
                format!("{:+.1}%", c.vs_o200k_json_pct),
            ]
        })
        .collect();
    let mut tool_headers = vec!["tool".to_string()];
    tool_headers.extend(r.counters.iter().map(|c| c.counter.0.name().to_string()));
    let tool_rows: Vec<Vec<String>> = r
        .tools
        .iter()
        .map(|t| {
            let mut row = vec![t.id.clone()];
            row.extend(t.tokens.iter().map(usize::to_string));
            row
        })
        .collect();
    let th: Vec<&str> = tool_headers.iter().map(String::as_str).collect();
    match format {
        Format::Json => to_json(r),
        Format::Csv => csv(&th, &tool_rows),
        Format::Table | Format::Md => {
            let table = crate::output::table_for(format);
            let mut right = vec![false];
            right.extend(r.counters.iter().map(|_| true));
            let mut out = table(&th, &tool_rows, &right);
            out.push('\n');
            out.push_str(&table(
                &summary_headers,
                &summary,
                &[false, false, false, true, true, true, true, true],
            ));
            for s in &r.skipped {
                out.push_str(&format!("{} skipped: {}\n", s.counter, s.reason));
            }
            out.push_str(&format!(
                "{} tools, tool_choice {}; request = tools + fixed (the tool-use preamble of the model named, none for a provider-neutral counter, and the counter's framing)\n",
                r.tool_count, r.tool_choice
            ));
            out
        }
    }
}
