//! `toolbudget count`: token counts per tool, per server and in total, under one counter or
//! (`--compare-counters`) under every counter side by side.

use serde::Serialize;

use crate::catalog::Catalog;
use crate::cli::{ApiArgs, CountArgs};
use crate::counter::api::{self, ApiToolCounts, Client, Settings};
use crate::counter::{CounterKind, ToolChoice, ToolTokens};
use crate::error::{Error, Result};
use crate::output::{Format, csv, emit, to_json, write_atomic};
use crate::simulate::profile::{self, Profile};
use crate::tokenize::{Render, Tokenizer};

#[derive(Debug, Serialize)]
pub struct CountReport {
    pub counter: String,
    pub tokenizer: String,
    pub render: String,
    /// The stated error of an estimating counter, percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_pct: Option<f64>,
    /// The model profile whose tool-use preamble `fixed_tokens` includes.
    pub model: String,
    pub tool_choice: String,
    /// What sending any tools costs beyond their definitions: the model's tool-use preamble
    /// and the counter's framing of the tools block.
    pub fixed_tokens: usize,
    pub total_tokens: usize,
    /// Every tool, the search tool included (the count every command uses).
    pub tool_count: usize,
    /// The catalog's search tool, when it has one: sent by the deferred mode, never a search
    /// result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_tool: Option<String>,
    pub per_tool: PerToolStats,
    pub servers: Vec<ServerCount>,
    pub tools: Vec<ToolCount>,
}

#[derive(Debug, Serialize)]
pub struct PerToolStats {
    pub mean: f64,
    pub median: f64,
    pub max: usize,
}

#[derive(Debug, Serialize)]
pub struct ServerCount {
    /// The MCP server, or `(built-in)`.
    pub server: String,
    pub tools: usize,
    pub tokens: usize,
}

#[derive(Debug, Serialize)]
pub struct ToolCount {
    pub id: String,
    pub tokens: usize,
}

pub const BUILTIN_GROUP: &str = "(built-in)";

/// The counter's fixed cost and the profile it was taken from.
#[derive(Debug, Clone)]
pub struct Fixed {
    pub model: String,
    pub choice: ToolChoice,
    pub tokens: usize,
}

impl Fixed {
    /// Preamble of `profile` under `counter` plus the counter's tools block framing.
    pub fn local(counter: CounterKind, profile: &Profile, choice: ToolChoice) -> Fixed {
        Fixed {
            model: profile.name.clone(),
            choice,
            tokens: profile.preamble(counter, choice) + counter.tools_fixed(None),
        }
    }
}

pub fn summarize(catalog: &Catalog, tokens: &ToolTokens, fixed: &Fixed) -> CountReport {
    let counts = tokens.counts();
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    let median = match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2] as f64,
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0,
    };
    let mut servers: Vec<ServerCount> = Vec::new();
    for (t, &c) in catalog.tools().iter().zip(counts) {
        let group = t.server.as_deref().unwrap_or(BUILTIN_GROUP);
        match servers.iter_mut().find(|s| s.server == group) {
            Some(s) => {
                s.tools += 1;
                s.tokens += c;
            }
            None => servers.push(ServerCount {
                server: group.to_string(),
                tools: 1,
                tokens: c,
            }),
        }
    }
    CountReport {
        counter: tokens.counter.name().to_string(),
        tokenizer: tokens.counter.tokenizer_label().to_string(),
        render: tokens.counter.render_name().to_string(),
        error_pct: tokens.counter.error_pct(),
        model: fixed.model.clone(),
        tool_choice: fixed.choice.name().to_string(),
        fixed_tokens: fixed.tokens,
        total_tokens: tokens.total(),
        tool_count: n,
        search_tool: catalog.search_tool().map(|i| catalog.get(i).id.clone()),
        per_tool: PerToolStats {
            mean: if n == 0 {
                0.0
            } else {
                round2(tokens.total() as f64 / n as f64)
            },
            median,
            max: sorted.last().copied().unwrap_or(0),
        },
        servers,
        tools: catalog
            .tools()
            .iter()
            .zip(counts)
            .map(|(t, &c)| ToolCount {
                id: t.id.clone(),
                tokens: c,
            })
            .collect(),
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

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
                "{} tools, {} tokens in total{} (counter {}: {}, {} rendering); per tool: mean {:.1}, median {:.1}, max {}\n\
                 sending any tools adds {} more ({} preamble with tool_choice {} + the counter's framing)\n",
                report.tool_count,
                report.total_tokens,
                error_note(report.error_pct),
                report.counter,
                report.tokenizer,
                report.render,
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

/// The profile a counter's fixed cost is quoted for: `--model`, else the model the counter
/// was made for.
pub fn reference_profile(counter: CounterKind, model: Option<&str>) -> Result<Profile> {
    let name = model.unwrap_or(match counter {
        CounterKind::OpenaiResponses => "gpt-5.4",
        CounterKind::OpenaiChat => "gpt-4o",
        CounterKind::AnthropicEstimate | CounterKind::AnthropicApi => "claude-sonnet-4-6",
        CounterKind::O200kJson | CounterKind::Cl100kJson => profile::DEFAULT_PROFILE,
    });
    profile::find(name).ok_or_else(|| {
        Error::usage(format!(
            "unknown model profile {name:?}, expected one of: {}",
            profile::names().join(", ")
        ))
    })
}

/// An API client over the cache file, with the key and base URL from the environment.
pub fn api_client(args: &ApiArgs, model: &str) -> Result<Client> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let settings = Settings {
        base_url: env("ANTHROPIC_BASE_URL").unwrap_or_else(|| api::DEFAULT_BASE_URL.into()),
        key: env("ANTHROPIC_API_KEY"),
        model: model.to_string(),
        cache_path: args.api_cache.clone(),
        offline: args.offline,
    };
    // A missing cache is an empty one; anything else goes through the bounded reader.
    let bytes = if args.api_cache.exists() {
        Some(crate::input::read(&args.api_cache)?)
    } else {
        None
    };
    let client = Client::new(
        settings,
        bytes.as_deref(),
        Box::new(api::Ureq::default()),
        Box::new(std::thread::sleep),
    );
    if let api::CacheLoad::Discarded(why) = &client.load {
        eprintln!(
            "note: {} was discarded ({why}); it is rebuilt from the API's answers",
            args.api_cache.display()
        );
    }
    Ok(client)
}

/// Writes the cache if it gained answers (or replaces a discarded file).
pub fn save_api_cache(client: &Client) -> Result<()> {
    if !client.cache.is_dirty() {
        return Ok(());
    }
    let path = client.cache_path();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    write_atomic(path, &client.cache.to_bytes())
}

/// Per-tool counts from the API; the cache is saved even when a later request fails, so
/// answers already paid for are kept.
pub fn api_counts(
    args: &ApiArgs,
    catalog: &Catalog,
    model: &Profile,
    choice: ToolChoice,
) -> Result<ApiToolCounts> {
    let mut client = api_client(args, &model.api_model)?;
    let counted = api::tool_counts(&mut client, catalog, choice);
    save_api_cache(&client)?;
    counted.map_err(|e| Error::Missing(e.to_string()))
}

/// One counter's counts and fixed cost for a catalog.
pub fn count_with(
    counter: CounterKind,
    catalog: &Catalog,
    model: Option<&str>,
    choice: ToolChoice,
    api: &ApiArgs,
) -> Result<(ToolTokens, Fixed)> {
    let profile = reference_profile(counter, model)?;
    if counter == CounterKind::AnthropicApi {
        let a = api_counts(api, catalog, &profile, choice)?;
        let fixed = Fixed {
            model: profile.name.clone(),
            choice,
            tokens: a.fixed,
        };
        return Ok((ToolTokens::of(counter, a.counts), fixed));
    }
    Ok((
        counter.tools(catalog),
        Fixed::local(counter, &profile, choice),
    ))
}

pub fn run(args: &CountArgs) -> Result<()> {
    let catalog = super::load(&args.catalog)?;
    if args.compare_counters {
        let report = super::count_compare::compare(&catalog, args)?;
        return emit(
            args.output.out.as_deref(),
            &super::count_compare::render(&report, args.output.format),
        );
    }
    let counter = args.counter.unwrap_or_else(|| {
        CounterKind::from_legacy(
            args.tokenizer.unwrap_or(Tokenizer::O200kBase),
            args.render.unwrap_or(Render::Json),
        )
    });
    let (tokens, fixed) = count_with(
        counter,
        &catalog,
        args.model.as_deref(),
        args.tool_choice,
        &args.api,
    )?;
    let report = summarize(&catalog, &tokens, &fixed);
    emit(
        args.output.out.as_deref(),
        &render(&report, args.output.format),
    )
}
