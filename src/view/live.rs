//! The report's accuracy section (`report --live DIR`) and the views `toolbudget live` prints
//! and writes: pure functions from a finished [`LiveResult`] to text and (path, bytes).

use crate::live::repeats::Stability;
use crate::live::result::{ModeSummary, Paired, Repeats, RequestRow, ScenarioLive, TurnRow};
use crate::live::{LiveResult, SearchSide};
use crate::number::percent;
use crate::output::{Format, csv_rows, serde_table, table_for, to_json};

use super::chart::{self as charts, ChartError, LineChart, Series};

/// Files of a view: (path relative to its folder, bytes).
pub type Files = Vec<(String, Vec<u8>)>;

/// Accuracy with its interval: `50.0% [23.7–76.3%]`.
pub fn accuracy(m: &ModeSummary) -> String {
    if m.turns == 0 {
        return "-".into();
    }
    format!(
        "{} [{}–{}]",
        percent(m.accuracy * 100.0, 1),
        percent(m.accuracy_low * 100.0, 1).trim_end_matches('%'),
        percent(m.accuracy_high * 100.0, 1)
    )
}

fn ratio(x: Option<f64>) -> String {
    x.map_or("-".into(), |r| format!("{r:.3}"))
}

/// The rows of the eager-vs-deferred table: (label, eager, deferred).
pub fn mode_rows(e: &ModeSummary, d: &ModeSummary) -> Vec<Vec<String>> {
    let row = |label: &str, f: &dyn Fn(&ModeSummary) -> String| vec![label.to_string(), f(e), f(d)];
    vec![
        row("turns (× runs)", &|m| m.turns.to_string()),
        row("correct", &|m| m.correct.to_string()),
        row("accuracy [95% Wilson]", &accuracy),
        row("wrong tool / no tool / malformed", &|m| {
            format!("{} / {} / {}", m.wrong_tool, m.no_tool, m.malformed)
        }),
        row("turns at the step limit (failed)", &|m| {
            m.hit_step_limit.to_string()
        }),
        row(
            "trajectory: forbidden / order / max calls / duplicate",
            &|m| {
                format!(
                    "{} / {} / {} / {}",
                    m.forbidden_call, m.out_of_order, m.over_max_calls, m.duplicate_call
                )
            },
        ),
        row("searches", &|m| m.searches.to_string()),
        row("turns searched / found an expected tool", &|m| {
            format!("{} / {}", m.turns_searched, m.turns_search_found_expected)
        }),
        row("calls: premature / malformed / unknown", &|m| {
            format!(
                "{} / {} / {}",
                m.premature_calls, m.malformed_calls, m.unknown_calls
            )
        }),
        row("requests (without usage)", &|m| {
            format!("{} ({})", m.requests, m.requests_without_usage)
        }),
        row("billed input tokens", &|m| {
            crate::number::thousands(m.billed_input_tokens as f64, 0)
        }),
        row("counted input tokens", &|m| {
            crate::number::thousands(m.counted_input_tokens as f64, 0)
        }),
        row("billed / counted", &|m| ratio(m.billed_over_counted)),
        row("of counted: the deferred list (at the input price)", &|m| {
            format!(
                "{} ({})",
                crate::number::thousands(m.deferred_list_tokens as f64, 0),
                crate::number::usd_exact(m.deferred_list_cost_usd)
            )
        }),
        row("billed output tokens", &|m| {
            crate::number::thousands(m.billed_output_tokens as f64, 0)
        }),
        row("latency p50 / p95 (ms)", &|m| {
            format!("{:.0} / {:.0}", m.latency_ms_p50, m.latency_ms_p95)
        }),
    ]
}

/// A share with its interval: `33.3% [6.1–79.2%]`.
fn share(p: f64, low: f64, high: f64) -> String {
    format!(
        "{} [{}–{}]",
        percent(p * 100.0, 1),
        percent(low * 100.0, 1).trim_end_matches('%'),
        percent(high * 100.0, 1)
    )
}

/// The rows of the repeats table: (label, eager, deferred).
pub fn repeat_rows(r: &Repeats) -> Vec<Vec<String>> {
    let k = r.eager.runs;
    let row =
        |label: String, f: &dyn Fn(&Stability) -> String| vec![label, f(&r.eager), f(&r.deferred)];
    vec![
        row("distinct turns".into(), &|s| s.turns.to_string()),
        row("pass rate (mean over turns)".into(), &|s| {
            percent(s.pass_rate * 100.0, 1)
        }),
        row(format!("pass^{k}: right in all {k} runs [95%]"), &|s| {
            share(s.pass_hat_k, s.pass_hat_k_low, s.pass_hat_k_high)
        }),
        row(format!("pass@{k}: right in at least one [95%]"), &|s| {
            share(s.pass_at_k, s.pass_at_k_low, s.pass_at_k_high)
        }),
        row("flip rate: right in some runs only [95%]".into(), &|s| {
            share(s.flip_rate, s.flip_rate_low, s.flip_rate_high)
        }),
        row("repeated queries: same tools every run".into(), &|s| {
            format!("{} of {}", s.stable_queries, s.repeated_queries)
        }),
    ]
}

fn repeats_text(r: &Repeats, format: Format) -> String {
    let mut out = table_for(format)(
        &[&format!("over {} runs", r.eager.runs), "eager", "deferred"],
        &repeat_rows(r),
        &[false, true, true],
    );
    if format == Format::Md {
        out.push('\n');
    }
    let rows: Vec<Vec<String>> = r
        .turns
        .iter()
        .map(|t| {
            vec![
                t.scenario.clone(),
                t.turn.to_string(),
                t.expected.clone(),
                format!("{} / {}", t.eager_correct, t.runs),
                format!("{} / {}", t.deferred_correct, t.runs),
            ]
        })
        .collect();
    out.push_str(&table_for(format)(
        &[
            "scenario",
            "turn",
            "expected",
            "eager right",
            "deferred right",
        ],
        &rows,
        &[false, true, false, true, true],
    ));
    out
}

/// The paired test in one line.
pub fn paired_line(p: &Paired) -> String {
    format!(
        "paired turns {}: both correct {}, eager only {}, deferred only {}, neither {}; exact \
         McNemar p = {:.3}",
        p.pairs, p.both_correct, p.eager_only, p.deferred_only, p.neither, p.p_value
    )
}

fn header(r: &LiveResult) -> String {
    format!(
        "provider {}, model {}, {} search, counted with {}; {} run{} a mode, at most {} \
         steps a turn, seed {}, temperature {}",
        r.provider,
        r.model,
        match r.search {
            SearchSide::Client => "client-side",
            SearchSide::Provider => "provider-side",
        },
        r.counter,
        r.repeat,
        if r.repeat == 1 { "" } else { "s" },
        r.max_steps,
        r.seed,
        r.temperature
            .map_or("(provider's default)".into(), |t| t.to_string()),
    )
}

fn mode_table(e: &ModeSummary, d: &ModeSummary, format: Format) -> String {
    table_for(format)(
        &["", "eager", "deferred"],
        &mode_rows(e, d),
        &[false, true, true],
    )
}

/// What `toolbudget live` prints (table or md): each scenario, then the total.
pub fn text(r: &LiveResult, md: bool) -> String {
    let format = if md { Format::Md } else { Format::Table };
    let br = if md { "\n\n" } else { "\n" };
    let mut out = String::new();
    out.push_str(&header(r));
    out.push_str(br);
    for s in &r.scenarios {
        out.push_str(&if md {
            format!("### {}\n\n", crate::output::md_text(&s.name))
        } else {
            format!("== {} ==\n", s.name)
        });
        out.push_str(&format!(
            "{} tools, {} deferred; scorer {}{br}",
            s.tools, s.deferred_tools, s.scorer
        ));
        out.push_str(&mode_table(&s.eager, &s.deferred, format));
        if md {
            out.push('\n');
        }
        out.push_str(&paired_line(&s.paired));
        out.push_str(br);
        if let Some(rep) = &s.repeats {
            out.push_str(&repeats_text(rep, format));
            out.push_str(br);
        }
        for n in &s.notes {
            out.push_str(&format!("* {n}\n"));
        }
        out.push('\n');
    }
    if r.scenarios.len() > 1 {
        out.push_str(if md {
            "### All scenarios\n\n"
        } else {
            "== all scenarios ==\n"
        });
        out.push_str(&mode_table(&r.eager, &r.deferred, format));
        if md {
            out.push('\n');
        }
        out.push_str(&paired_line(&r.paired));
        out.push('\n');
        if let Some(rep) = &r.repeats {
            out.push_str(br);
            out.push_str(&repeats_text(rep, format));
        }
    }
    out
}

/// The per-request table: billed usage beside toolbudget's count, for every request.
pub fn requests_table(requests: &[RequestRow], format: Format) -> String {
    let (header, mut rows) = serde_table(requests);
    let names: Vec<&str> = header.iter().map(String::as_str).collect();
    let right: Vec<bool> = names
        .iter()
        .map(|c| !matches!(*c, "scenario" | "mode" | "calls" | "stop"))
        .collect();
    // Tool names the model invented and the scenario's name are text, never Markdown or HTML.
    if format == Format::Md {
        for row in &mut rows {
            for (cell, numeric) in row.iter_mut().zip(&right) {
                if !numeric {
                    *cell = crate::output::md_text(cell);
                }
            }
        }
    }
    table_for(format)(&names, &rows, &right)
}

/// The files `toolbudget live --out DIR` writes.
pub fn files(r: &LiveResult) -> Files {
    let turns: Vec<TurnRow> = r.scenarios.iter().flat_map(|s| s.turns.clone()).collect();
    let requests: Vec<RequestRow> = r
        .scenarios
        .iter()
        .flat_map(|s| s.requests.clone())
        .collect();
    let searches: Vec<crate::live::result::SearchRow> = r
        .scenarios
        .iter()
        .flat_map(|s| s.searches.clone())
        .collect();
    let mut summary = text(r, true);
    summary.push_str("\n### Every request\n\n");
    summary.push_str(&requests_table(&requests, Format::Md));
    vec![
        ("live.json".into(), to_json(r).into_bytes()),
        ("turns.csv".into(), csv_rows(&turns).into_bytes()),
        ("requests.csv".into(), csv_rows(&requests).into_bytes()),
        ("searches.csv".into(), csv_rows(&searches).into_bytes()),
        ("summary.md".into(), summary.into_bytes()),
    ]
}

/// Mean input tokens per request of a mode: billed where reported, else counted.
fn tokens_per_request(m: &ModeSummary) -> f64 {
    if m.requests == 0 {
        return 0.0;
    }
    let with_usage = m.requests - m.requests_without_usage;
    if with_usage > 0 {
        m.billed_input_tokens as f64 / with_usage as f64
    } else {
        m.counted_input_tokens as f64 / m.requests as f64
    }
}

/// Accuracy against input tokens per request, one point per scenario and mode.
pub fn chart(r: &LiveResult) -> Result<String, ChartError> {
    let points = |f: &dyn Fn(&ScenarioLive) -> &ModeSummary| -> Vec<(f64, f64)> {
        r.scenarios
            .iter()
            .map(|s| (tokens_per_request(f(s)), f(s).accuracy))
            .collect()
    };
    let mut spec = LineChart::new(
        &format!(
            "Accuracy against input tokens ({}, {})",
            r.provider, r.model
        ),
        "input tokens per request (billed; counted where none reported)",
        "accuracy (share of turns)",
        vec![
            Series::new("eager", points(&|s| &s.eager))
                .scatter()
                .colored(0),
            Series::new("deferred", points(&|s| &s.deferred))
                .scatter()
                .colored(1),
        ],
    );
    spec.y_range = Some((0.0, 1.0));
    charts::line_chart(&spec)
}

/// The report's section: Markdown to append to index.md, and the files it links.
pub fn section(r: &LiveResult) -> Result<(String, Files), ChartError> {
    let mut md = String::from("## Model in the loop\n\n");
    md.push_str(
        "Measured by `toolbudget live` against a real endpoint (each turn's `calls` are the \
         labels). Accuracy is the share of turns whose expected tools were all called with \
         valid arguments and that ended with an answer (a turn at the step limit fails; one \
         that expects no tool passes only without any call, searches included); the interval is Wilson's 95%; the paired test compares eager and \
         deferred on the same turns. Billed tokens are the provider's `usage`, counted tokens \
         toolbudget's count of the same request under the provider's counter.\n\n",
    );
    md.push_str(&header(r));
    md.push_str("\n\n");
    let rows: Vec<Vec<String>> = r
        .scenarios
        .iter()
        .flat_map(|s| {
            [("eager", &s.eager), ("deferred", &s.deferred)].map(|(mode, m)| {
                vec![
                    crate::output::md_text(&s.name),
                    mode.into(),
                    m.turns.to_string(),
                    accuracy(m),
                    format!(
                        "{} / {} / {} / {} / {}",
                        m.wrong_tool, m.no_tool, m.malformed, m.hit_step_limit, m.trajectory
                    ),
                    format!(
                        "{} ({} / {})",
                        m.searches, m.turns_searched, m.turns_search_found_expected
                    ),
                    format!(
                        "{} / {} ({})",
                        crate::number::thousands(m.billed_input_tokens as f64, 0),
                        crate::number::thousands(m.counted_input_tokens as f64, 0),
                        ratio(m.billed_over_counted)
                    ),
                    format!("{:.0}", m.latency_ms_p50),
                ]
            })
        })
        .collect();
    md.push_str(&crate::output::md_table(
        &[
            "scenario",
            "mode",
            "turns",
            "accuracy [95%]",
            "wrong / none / malformed / step limit / trajectory",
            "searches (turns / found)",
            "input billed / counted (ratio)",
            "p50 ms",
        ],
        &rows,
        &[false, false, true, true, true, true, true, true],
    ));
    md.push('\n');
    for s in &r.scenarios {
        md.push_str(&format!(
            "- {}: {}\n",
            crate::output::md_text(&s.name),
            paired_line(&s.paired)
        ));
    }
    if r.scenarios.len() > 1 {
        md.push_str(&format!("- all scenarios: {}\n", paired_line(&r.paired)));
    }
    md.push_str("\n![accuracy against tokens](charts/live-accuracy.svg)\n\n");
    let requests: Vec<RequestRow> = r
        .scenarios
        .iter()
        .flat_map(|s| s.requests.clone())
        .collect();
    md.push_str(
        "<details><summary>Every request: billed usage beside toolbudget's count</summary>\n\n",
    );
    md.push_str(&requests_table(&requests, Format::Md));
    md.push_str("\n</details>\n\nData: [data/live-turns.csv](data/live-turns.csv), [data/live-requests.csv](data/live-requests.csv).\n");
    let turns: Vec<TurnRow> = r.scenarios.iter().flat_map(|s| s.turns.clone()).collect();
    let files = vec![
        (
            "charts/live-accuracy.svg".to_string(),
            chart(r)?.into_bytes(),
        ),
        (
            "data/live-turns.csv".to_string(),
            csv_rows(&turns).into_bytes(),
        ),
        (
            "data/live-requests.csv".to_string(),
            csv_rows(&requests).into_bytes(),
        ),
    ];
    Ok((md, files))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::result::{self, Outcome};
    use crate::live::{Provider, Settings};

    /// A tool name the model invented reaches the Markdown request table as text: no HTML,
    /// no cell or row of its own; CSV keeps it as it is.
    #[test]
    fn model_invented_names_are_escaped_in_the_markdown_request_table() {
        let name = "<script>alert(1)</script>|x`y\u{1b}[31mRED\r\nforged | row |";
        let rows = vec![RequestRow {
            scenario: "s<b>".into(),
            calls: name.into(),
            stop: "tool_calls".into(),
            ..RequestRow::default()
        }];
        let md = requests_table(&rows, Format::Md);
        let line = md.lines().nth(2).unwrap();
        assert!(
            line.contains(
                r"\<script\>alert(1)\</script\>\|x\`y\\u{1b}\[31mRED\\r\\nforged \| row \|"
            ),
            "{line}"
        );
        assert!(line.starts_with("| s\\<b\\> |"), "{line}");
        assert_eq!(md.lines().count(), 3, "{md}");
        assert!(!md.contains("<script>") && !md.contains('\u{1b}'));
        assert!(csv_rows(&rows).contains("<script>alert(1)</script>"));
    }

    fn turn(mode: &str, turn: usize, outcome: Outcome) -> TurnRow {
        TurnRow {
            scenario: "s".into(),
            mode: mode.into(),
            turn,
            outcome,
            ..TurnRow::default()
        }
    }

    fn request(mode: &str, billed: Option<u64>, counted: u64) -> RequestRow {
        RequestRow {
            scenario: "s".into(),
            mode: mode.into(),
            billed_input_tokens: billed,
            counted_input_tokens: counted,
            latency_ms: 10.0,
            ..RequestRow::default()
        }
    }

    #[test]
    fn the_section_shows_intervals_the_paired_test_and_every_request() {
        let turns = vec![
            turn("eager", 1, Outcome::Correct),
            turn("eager", 2, Outcome::WrongTool),
            turn("deferred", 1, Outcome::Correct),
            turn("deferred", 2, Outcome::Correct),
        ];
        let requests = vec![
            request("eager", Some(1200), 1000),
            request("eager", None, 900),
            request("deferred", Some(300), 250),
        ];
        let (eager, deferred, paired) = result::modes(&turns, &requests);
        assert_eq!(eager.billed_input_tokens, 1200);
        assert_eq!(
            eager.counted_input_tokens, 1000,
            "only requests that reported usage"
        );
        assert_eq!(eager.requests_without_usage, 1);
        assert_eq!(eager.billed_over_counted, Some(1.2));
        assert_eq!((paired.both_correct, paired.deferred_only), (1, 1));
        let s = ScenarioLive {
            name: "s".into(),
            scorer: "bm25".into(),
            tools: 10,
            deferred_tools: 10,
            eager,
            deferred,
            paired,
            notes: vec![],
            repeats: None,
            turns,
            requests,
            searches: vec![],
        };
        let st = Settings {
            model: "m".into(),
            search: SearchSide::Client,
            max_steps: 4,
            max_tokens: 64,
            temperature: None,
            seed: 1,
            repeat: 1,
            tool_choice: None,
        };
        let r = crate::live::finish(
            Provider::OpenaiChat,
            crate::counter::CounterKind::OpenaiChat,
            &st,
            vec![s],
        );
        let (md, files) = section(&r).unwrap();
        assert!(md.starts_with("## Model in the loop\n"));
        // 1 of 2: Wilson 9.45% to 90.5%; 2 of 2: 34.2% to 100%.
        assert!(md.contains("| s | eager | 2 | 50.0% [9.4–90.5%] |"), "{md}");
        assert!(
            md.contains("| s | deferred | 2 | 100.0% [34.2–100.0%] |"),
            "{md}"
        );
        assert!(md.contains("exact McNemar p = 1.000"));
        assert_eq!(md.matches("| s | eager | 0 | 0 | 0 |").count(), 2, "{md}");
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "charts/live-accuracy.svg",
                "data/live-turns.csv",
                "data/live-requests.csv"
            ]
        );
        assert!(String::from_utf8_lossy(&files[0].1).starts_with("<svg"));
    }
}
