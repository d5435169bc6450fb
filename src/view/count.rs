//! The views of a count (`count`): the tools and servers tables, the json of the
//! [`CountReport`], and the one-column CSV; for captured request bodies, what was sent whole,
//! deferred and hosted ([`CapturedCount`]).

use serde::Serialize;

pub use crate::experiment::count::{BodyEntry, CapturedCount, HostedEntry};
use crate::experiment::count::{CountReport, PreambleInfo};
use crate::output::{Format, code_for, csv, to_json, words_for};

/// `± 4.2%` beside an estimate, empty for exact counters.
pub fn error_note(error_pct: Option<f64>) -> String {
    error_pct.map_or(String::new(), |e| format!(" ± {e}%"))
}

pub fn render(report: &CountReport, format: Format) -> String {
    render_captured(report, None, format)
}

/// The report's json with a `captured` key after the contract's keys.
#[derive(Serialize)]
struct WithCaptured<'a> {
    #[serde(flatten)]
    report: &'a CountReport,
    captured: &'a CapturedCount,
}

/// Text of the user's (a file name, a model) inside a sentence: no control character, and
/// Markdown's specials escaped in md.
fn words(format: Format, s: &str) -> String {
    words_for(format, s)
}

/// `anthropic-messages` as words.
fn shape_title(key: &str) -> &str {
    match key {
        "anthropic-messages" => "Anthropic Messages",
        "openai-chat-completions" => "OpenAI Chat Completions",
        "openai-responses" => "OpenAI Responses",
        other => other,
    }
}

/// The lines after the count's own for captured bodies and hosted tools.
fn captured_lines(c: &CapturedCount, format: Format) -> String {
    let tools = |n| crate::number::plural(n, "tool", "tools");
    let mut out = String::new();
    for b in &c.bodies {
        let model = b
            .model
            .as_deref()
            .map_or(String::new(), |m| format!(", model {}", words(format, m)));
        let ignored = if b.ignored.is_empty() {
            "nothing".to_string()
        } else {
            words(format, &b.ignored.join(", "))
        };
        out.push_str(&format!(
            "captured request body {} ({}{model}): its tools array counted; ignored: {ignored}\n",
            words(format, &b.file),
            shape_title(b.shape)
        ));
    }
    out.push_str(&format!(
        "sent whole: {}, {} tokens; deferred (defer_loading: true): {}, {} tokens{}\n",
        tools(c.sent_whole),
        c.sent_whole_tokens,
        tools(c.deferred),
        c.deferred_tokens,
        if c.deferred > 0 {
            ", in context only once a search loads them"
        } else {
            ""
        }
    ));
    if !c.hosted.is_empty() {
        let rows: Vec<Vec<String>> = c
            .hosted
            .iter()
            .map(|h| {
                vec![
                    code_for(format, &h.label()),
                    h.provider.to_string(),
                    if h.search { "yes" } else { "no" }.to_string(),
                    h.tokens.map_or("-".to_string(), |t| t.to_string()),
                    h.basis.unwrap_or("none documented").to_string(),
                    h.source.unwrap_or("").to_string(),
                ]
            })
            .collect();
        out.push('\n');
        out.push_str(&crate::output::table_for(format)(
            &[
                "hosted tool",
                "provider",
                "search",
                "tokens",
                "basis",
                "source",
            ],
            &rows,
            &[false, false, false, true, false, false],
        ));
        out.push('\n');
        let unknown = c.hosted.iter().filter(|h| h.tokens.is_none()).count();
        out.push_str(&format!(
            "hosted tools are not in the total above; those with a known figure add {} tokens \
             (the provider's count, not this counter's){}\n",
            c.hosted_tokens,
            if unknown == 0 {
                String::new()
            } else {
                format!("; {unknown} listed apart: no token cost documented")
            }
        ));
    }
    out.push_str(&format!(
        "search tool: {}\n",
        c.search_tool
            .as_deref()
            .map_or("none".to_string(), |s| words(format, s))
    ));
    for n in &c.notes {
        out.push_str(&format!("note: {}\n", words(format, n)));
    }
    out
}

/// The count's views, with what captured bodies add when there are any.
pub fn render_captured(
    report: &CountReport,
    captured: Option<&CapturedCount>,
    format: Format,
) -> String {
    if let (Format::Json, Some(c)) = (format, captured) {
        return to_json(&WithCaptured {
            report,
            captured: c,
        });
    }
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
            if let Some(c) = captured {
                tool_rows.push(vec![
                    format!("(sent whole: {} tools)", c.sent_whole),
                    c.sent_whole_tokens.to_string(),
                ]);
                tool_rows.push(vec![
                    format!("(deferred: {} tools)", c.deferred),
                    c.deferred_tokens.to_string(),
                ]);
                for h in &c.hosted {
                    tool_rows.push(vec![
                        format!("(hosted: {})", h.label()),
                        h.tokens.map_or(String::new(), |t| t.to_string()),
                    ]);
                }
            }
            csv(&["id", "tokens"], &tool_rows)
        }
        Format::Table | Format::Md => {
            let table = crate::output::table_for(format);
            // Ids and server names are the user's: code spans in Markdown.
            let named = |mut rows: Vec<Vec<String>>| {
                for r in &mut rows {
                    r[0] = code_for(format, &r[0]);
                }
                rows
            };
            let (tool_rows, server_rows) = (named(tool_rows), named(server_rows));
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
                    "{} is the search tool: counted and sent in deferred mode, never sent \
                     eagerly, never a search result.\n",
                    code_for(format, t)
                ));
            }
            if let Some(c) = captured {
                out.push('\n');
                out.push_str(&captured_lines(c, format));
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
