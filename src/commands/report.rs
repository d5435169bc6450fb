//! `toolbudget report`: runs the shipped scenarios, the evaluations and the scale sweep,
//! measures scorer latency, and writes the Markdown report with its CSV, JSON and SVG files.
//! The pieces it runs are library calls; this file only gathers inputs, times searches, shows
//! progress and writes files.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::catalog::{Catalog, CatalogSource, load_catalogs};
use crate::cli::ReportArgs;
use crate::error::{Error, Result};
use crate::generate;
use crate::output::write_atomic;
use crate::report::sweep::{self, ListingMode, SweepLatency, SweepSettings};
use crate::report::{CatalogRow, ReportData, ReportSettings};
use crate::search::{ScorerConfig, ScorerKind, SearchRequest};
use crate::tokenize::{Render, Tokenizer, ToolTokens};

/// Scorers timed in the sweep. Semantic and hybrid embed every tool (≈ 150 tools/s here), so
/// 10,000 tools would take minutes; they are timed by `eval` on the real sets instead.
const SWEEP_SCORERS: [ScorerKind; 3] = [ScorerKind::Keyword, ScorerKind::Regex, ScorerKind::Bm25];
/// Queries timed per scorer and catalog size.
const SWEEP_QUERIES: usize = 50;
/// The non-tool system prompt of the sweep's first request (the contract's example scenario).
const SWEEP_SYSTEM_PROMPT_TOKENS: usize = 3_000;

/// Progress on stderr, hidden when stderr is not a terminal or with `--quiet`.
struct Progress {
    visible: bool,
}

impl Progress {
    fn bar(&self, len: usize, what: &str) -> ProgressBar {
        if !self.visible {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len as u64);
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {msg}")
                .expect("the template is valid")
                .progress_chars("=> "),
        );
        bar.set_prefix(what.to_string());
        bar
    }
}

pub fn run(args: &ReportArgs, quiet: bool) -> Result<()> {
    let progress = Progress {
        visible: !quiet && std::io::stderr().is_terminal(),
    };
    let tokenizer = Tokenizer::default();
    let render = Render::default();
    let mut data = ReportData {
        settings: ReportSettings {
            tokenizer: tokenizer.name().to_string(),
            render: render.name().to_string(),
            profile: Vec::new(),
            other: Vec::new(),
        },
        ..ReportData::default()
    };

    let fixtures = fixture_sources(&args.fixtures)?;
    let fixture_catalog = load_catalogs(&fixtures)?;
    data.catalogs.push(catalog_row(
        "fixtures",
        &fixture_catalog,
        &ToolTokens::compute(&fixture_catalog, tokenizer, render),
    ));
    if let Some(dir) = &args.data {
        real_catalogs(&mut data, dir, tokenizer, render, &progress)?;
    }

    run_sweep(&mut data, tokenizer, render, &progress)?;

    let files = crate::report::render(&data).map_err(|e| Error::Missing(e.to_string()))?;
    let bar = progress.bar(files.len(), "writing");
    for f in &files {
        write_atomic(&args.out.join(&f.path), &f.bytes)?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    if !quiet {
        eprintln!(
            "wrote {} files to {}",
            files.len(),
            args.out.join("index.md").display()
        );
    }
    Ok(())
}

/// The fixture catalogs: `catalogs/builtins.yaml` and every `catalogs/mcp/*.json` (server =
/// file stem), sorted by name so the order never depends on the file system.
fn fixture_sources(dir: &Path) -> Result<Vec<CatalogSource>> {
    let catalogs = dir.join("catalogs");
    let mut sources = Vec::new();
    let builtins = catalogs.join("builtins.yaml");
    if builtins.is_file() {
        sources.push(CatalogSource {
            path: builtins,
            server: None,
        });
    }
    for path in sorted_files(&catalogs.join("mcp"), &["json", "yaml", "yml"])? {
        sources.push(CatalogSource { path, server: None });
    }
    if sources.is_empty() {
        return Err(Error::usage(format!(
            "no fixture catalogs under {} (run from the repository root, or pass --fixtures DIR)",
            catalogs.display()
        )));
    }
    Ok(sources)
}

/// Files in `dir` with one of the extensions, sorted by name; empty if `dir` does not exist.
fn sorted_files(dir: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::input(
                dir,
                None,
                format!("cannot read the folder: {e}"),
            ));
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| extensions.contains(&x))
        })
        .collect();
    files.sort();
    Ok(files)
}

fn catalog_row(name: &str, catalog: &Catalog, tokens: &ToolTokens) -> CatalogRow {
    let n = catalog.len();
    CatalogRow {
        name: name.to_string(),
        tools: n,
        servers: catalog.servers().len(),
        tokens: tokens.total(),
        mean_tokens: if n == 0 {
            0.0
        } else {
            (tokens.total() as f64 / n as f64 * 10.0).round() / 10.0
        },
        max_tokens: tokens.counts().iter().copied().max().unwrap_or(0),
    }
}

/// One row per real catalog file, and one per folder of catalogs (`docker/`, `livemcpbench/`).
fn real_catalogs(
    data: &mut ReportData,
    dir: &Path,
    tokenizer: Tokenizer,
    render: Render,
    progress: &Progress,
) -> Result<()> {
    let root = dir.join("catalogs");
    if !root.is_dir() {
        return Err(Error::usage(format!(
            "--data {}: no catalogs/ folder inside",
            dir.display()
        )));
    }
    let mut groups: Vec<(String, Vec<PathBuf>)> = sorted_files(&root, &["json", "yaml", "yml"])?
        .into_iter()
        .map(|p| (file_name(&p), vec![p]))
        .collect();
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map_err(|e| Error::input(&root, None, format!("cannot read the folder: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for sub in subdirs {
        let files = sorted_files(&sub, &["json", "yaml", "yml"])?;
        if !files.is_empty() {
            groups.push((format!("{}/", file_name(&sub)), files));
        }
    }
    let bar = progress.bar(groups.len(), "catalogs");
    for (name, files) in groups {
        bar.set_message(name.clone());
        let sources: Vec<CatalogSource> = files
            .into_iter()
            .map(|path| CatalogSource { path, server: None })
            .collect();
        let catalog = load_catalogs(&sources)?;
        let tokens = ToolTokens::compute(&catalog, tokenizer, render);
        data.catalogs.push(catalog_row(&name, &catalog, &tokens));
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(())
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The deferred-tools list of every tool of `catalog` in `mode`.
///
/// Mirrors the simulator's listing texts (`<available-deferred-tools>` with one line per tool
/// id, `id: description` cut at 100 characters, or one line per server with its tool count and
/// first three names).
fn deferred_list_text(catalog: &Catalog, mode: ListingMode) -> String {
    const DESCRIPTION_CHARS: usize = 100;
    let mut s = String::from("<available-deferred-tools>");
    let one_line = |d: &str| {
        let line = d
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        if line.chars().count() <= DESCRIPTION_CHARS {
            line.to_string()
        } else {
            let mut s: String = line.chars().take(DESCRIPTION_CHARS - 1).collect();
            s.push('…');
            s
        }
    };
    match mode {
        ListingMode::Names => {
            for t in catalog.tools() {
                s.push('\n');
                s.push_str(&t.id);
            }
        }
        ListingMode::Descriptions => {
            for t in catalog.tools() {
                s.push('\n');
                s.push_str(&format!("{}: {}", t.id, one_line(&t.description)));
            }
        }
        ListingMode::Servers => {
            let mut servers: Vec<(&str, Vec<&str>)> = Vec::new();
            for t in catalog.tools() {
                match &t.server {
                    None => {
                        s.push('\n');
                        s.push_str(&t.id);
                    }
                    Some(name) => match servers.iter_mut().find(|(n, _)| n == name) {
                        Some((_, names)) => names.push(&t.name),
                        None => servers.push((name, vec![&t.name])),
                    },
                }
            }
            for (server, names) in servers {
                s.push('\n');
                s.push_str(&format!("{server}: {} tools: ", names.len()));
                s.push_str(&names[..names.len().min(3)].join(", "));
                if names.len() > 3 {
                    s.push('…');
                }
            }
        }
    }
    s.push_str("\n</available-deferred-tools>");
    s
}

/// The sweep's search tool: a ToolSearch-style definition, counted like any tool.
fn search_tool_text() -> String {
    let tool = crate::catalog::Tool {
        id: "ToolSearch".into(),
        name: "ToolSearch".into(),
        server: None,
        description: "Search the deferred tools and load the ones you need. Only the names of \
deferred tools are listed at the start; load a tool's full definition with this tool before \
calling it. Query forms: keywords (\"slack send message\") return the best matches up to \
max_results; \"select:A,B\" loads exactly the named tools; prefix a word with + to require it \
in the tool name. Loaded tools stay available for the rest of the session."
            .into(),
        input_schema: serde_json::json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Keywords, or \"select:ID,ID\" to load specific tools."},
                "max_results": {"type": "number", "default": 5, "description": "Maximum number of tools to return and load."}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
        should_defer: Some(false),
        always_load: true,
        search_hint: None,
        depends_on: Vec::new(),
        origin: None,
    };
    crate::tokenize::render_json(&tool)
}

/// Deterministic queries for timing: words of every n-th tool's name and description.
fn sweep_queries(catalog: &Catalog, count: usize) -> Vec<String> {
    let step = (catalog.len() / count.max(1)).max(1);
    catalog
        .tools()
        .iter()
        .step_by(step)
        .take(count)
        .map(|t| {
            let mut words: Vec<&str> = t.name.split('_').collect();
            words.extend(t.description.split_whitespace().skip(2).take(3));
            words.join(" ")
        })
        .collect()
}

fn percentile_us(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    let d = sorted[rank.clamp(1, sorted.len()) - 1];
    (d.as_nanos() as f64 / 100.0).round() / 10.0
}

fn run_sweep(
    data: &mut ReportData,
    tokenizer: Tokenizer,
    render: Render,
    progress: &Progress,
) -> Result<()> {
    // The claude-sonnet-4.5 profile's tool preamble and window (the simulator's default).
    let settings = SweepSettings {
        tokenizer: tokenizer.name().to_string(),
        render: render.name().to_string(),
        seed: sweep::SEED,
        tools_per_server: sweep::TOOLS_PER_SERVER,
        system_prompt_tokens: SWEEP_SYSTEM_PROMPT_TOKENS,
        tool_overhead_tokens: 346,
        search_tool_tokens: tokenizer.count(&search_tool_text()),
        profile: "claude-sonnet-4.5".into(),
        context_window: 200_000,
    };
    let bar = progress.bar(sweep::SIZES.len(), "sweep");
    let mut points = Vec::new();
    let mut unavailable: Vec<String> = Vec::new();
    for size in sweep::SIZES {
        bar.set_message(format!("{size} tools"));
        let catalog = generate::generate(size, sweep::servers_for(size), sweep::SEED);
        let tokens = ToolTokens::compute(&catalog, tokenizer, render);
        points.push(sweep::sweep_point(&catalog, &tokens, &settings, |mode| {
            tokenizer.count(&deferred_list_text(&catalog, mode))
        }));
        let catalog = Arc::new(catalog);
        let queries = sweep_queries(&catalog, SWEEP_QUERIES);
        for kind in SWEEP_SCORERS {
            let start = Instant::now();
            let scorer = match crate::search::build(kind, catalog.clone(), &ScorerConfig::default())
            {
                Ok(s) => s,
                Err(e) => {
                    let why = format!("`{kind}` not timed in the sweep: {e}");
                    if !unavailable.contains(&why) {
                        unavailable.push(why);
                    }
                    continue;
                }
            };
            let build = start.elapsed();
            let mut times = Vec::with_capacity(queries.len());
            for q in &queries {
                let t = Instant::now();
                // A query a scorer rejects is timed all the same: the time to reject it.
                let _ = scorer.search(&SearchRequest::new(q, 10));
                times.push(t.elapsed());
            }
            times.sort_unstable();
            data.latency.sweep.push(SweepLatency {
                tools: size,
                scorer: kind.name().to_string(),
                build_ms: (build.as_secs_f64() * 10_000.0).round() / 10.0,
                queries: times.len(),
                p50_us: percentile_us(&times, 50.0),
                p95_us: percentile_us(&times, 95.0),
            });
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    data.notes.extend(unavailable);
    data.sweep = Some(sweep::Sweep { settings, points });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_texts_have_one_line_per_tool_or_server() {
        let c = generate::generate(30, 3, 1);
        let names = deferred_list_text(&c, ListingMode::Names);
        assert_eq!(names.lines().count(), 30 + 2);
        assert!(names.contains("\nmcp__greenhouse__"));
        let servers = deferred_list_text(&c, ListingMode::Servers);
        assert_eq!(servers.lines().count(), 3 + 2);
        assert!(servers.contains("\ngreenhouse: 10 tools: "));
        let desc = deferred_list_text(&c, ListingMode::Descriptions);
        assert!(desc.lines().skip(1).take(30).all(|l| l.contains(": ")));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let d: Vec<Duration> = (1..=10).map(Duration::from_micros).collect();
        assert_eq!(percentile_us(&d, 50.0), 5.0);
        assert_eq!(percentile_us(&d, 95.0), 10.0);
        assert_eq!(percentile_us(&[], 50.0), 0.0);
    }
}
