//! The views of a count (`count`): the tools and servers tables, the json of the
//! [`CountReport`], and the one-column CSV.

use crate::experiment::count::{CountReport, PreambleInfo};
use crate::output::{Format, csv, to_json};

/// `± 4.2%` beside an estimate, empty for exact counters.
pub fn error_note(error_pct: Option<f64>) -> String {
    error_pct.map_or(String::new(), |e| format!(" ± {e}%"))
}

pub fn render(report: &CountReport, format: Format) -> String {
    let mut tool_rows: Vec<Vec<String>> = report
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
        Format::Csv => {
            // What sending any tools adds, after the tools, in parentheses (no tool id has
            // them): whose preamble, and the counter's framing.
            tool_rows.push(vec![
                format!("(tool-use preamble: {})", preamble_owner(report)),
                report.preamble.as_ref().map_or(0, |p| p.tokens).to_string(),
            ]);
            tool_rows.push(vec![
                format!("(tools block framing: {})", report.counter.0),
                report.framing_tokens.to_string(),
            ]);
            csv(&["id", "tokens"], &tool_rows)
        }
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
                "{}, {} tokens in total{} (counter {}: {}, {} rendering); per tool: mean {:.1}, median {:.1}, max {}\n",
                crate::number::plural(report.tool_count, "tool", "tools"),
                report.total_tokens,
                error_note(report.error_pct),
                report.counter.0,
                report.counter.0.tokenizer_label(),
                report.counter.0.render_name(),
                report.per_tool.mean,
                report.per_tool.median,
                report.per_tool.max,
            ));
            out.push_str(&fixed_sentence(report));
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

/// `claude-sonnet-4-6 (Anthropic)`, or `none` under a provider-neutral counter.
fn preamble_owner(report: &CountReport) -> String {
    match &report.preamble {
        Some(p) => format!(
            "{} ({}), tool_choice {}",
            p.model, p.provider, report.tool_choice
        ),
        None => "none".into(),
    }
}

/// What sending any tools adds beyond the definitions, naming the preamble and whose it is.
fn fixed_sentence(report: &CountReport) -> String {
    let framing = format!("{} of the counter's framing", report.framing_tokens);
    match &report.preamble {
        Some(PreambleInfo {
            model,
            provider,
            tokens,
            source,
        }) => {
            let source = if source.is_empty() {
                String::new()
            } else {
                format!("; source: {source}")
            };
            format!(
                "sending any tools adds {} more: {tokens} of {provider}'s tool-use preamble for \
                 {model} (tool_choice {}{source}) + {framing}\n",
                report.fixed_tokens, report.tool_choice
            )
        }
        None => format!(
            "sending any tools adds {} more ({framing}); no tool-use preamble added: {} is \
             provider-neutral (--model PROFILE adds that model's)\n",
            report.fixed_tokens, report.counter.0
        ),
    }
}
