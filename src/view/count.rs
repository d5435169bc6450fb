//! The views of a count (`count`): the tools and servers tables, the json of the
//! [`CountReport`], and the one-column CSV.

use crate::experiment::count::CountReport;
use crate::output::{Format, csv, to_json};

/// `± 4.2%` beside an estimate, empty for exact counters.
pub fn error_note(error_pct: Option<f64>) -> String {
    error_pct.map_or(String::new(), |e| format!(" ± {e}%"))
}

pub fn render(report: &CountReport, format: Format) -> String {
    let tool_rows: Vec<Vec<String>> = report
        .tools
        .iter()
        .map(|t| vec![t.id.clone(), t.tokens.to_string()])
        .collect();
    let server_rows: Vec<Vec<String>> = report
        .servers
        .iter()
        .map(|s| vec![s.server.clone(), s.tools.to_string(), s.tokens.to_string()])
        .collect();
    match format {
        Format::Json => to_json(report),
        Format::Csv => csv(&["id", "tokens"], &tool_rows),
        Format::Table | Format::Md => {
            let table = crate::output::table_for(format);
            let mut out = String::new();
            out.push_str(&table(&["tool", "tokens"], &tool_rows, &[false, true]));
            out.push('\n');
            out.push_str(&table(
                &["server", "tools", "tokens"],
                &server_rows,
                &[false, true, true],
            ));
            out.push('\n');
            out.push_str(&format!(
                "{}, {} tokens in total{} (counter {}: {}, {} rendering); per tool: mean {:.1}, median {:.1}, max {}\n\
                 sending any tools adds {} more ({} preamble with tool_choice {} + the counter's framing)\n",
                crate::view::number::plural(report.tool_count, "tool", "tools"),
                report.total_tokens,
                error_note(report.error_pct),
                report.counter.0,
                report.counter.0.tokenizer_label(),
                report.counter.0.render_name(),
                report.per_tool.mean,
                report.per_tool.median,
                report.per_tool.max,
                report.fixed_tokens,
                report.model,
                report.tool_choice,
            ));
            if let Some(t) = &report.search_tool {
                out.push_str(&format!(
                    "{t} is the search tool: counted and sent in deferred mode, never sent \
                     eagerly, never a search result.\n"
                ));
            }
            out
        }
    }
}
