//! The scale sweep: what the first request costs eagerly and deferred as a catalog grows from
//! 10 to 10,000 tools, for each way of listing the deferred tools.
//!
//! Eager, the first request carries every definition. Deferred, it carries the search tool's
//! definition and the deferred list instead, and the list grows with the catalog too: one line
//! per tool in `names` and `descriptions` modes, one per server in `servers` mode. So deferral
//! saves a roughly constant ~95% of the *definitions*, while the list becomes the dominant
//! cost at scale; the sweep shows at which size each listing mode stops fitting a budget.
//!
//! [`run`] generates the catalogs (`crate::generate`), counts them, and times the lexical
//! scorers on them with the one harness through the caller's clock; the timings come back apart
//! ([`SweepRun::latency`]), so the [`Sweep`] itself is deterministic. [`sweep_point`] is the
//! pure part: one catalog's costs from its counts.

use std::sync::Arc;

use serde::Serialize;

use crate::catalog::Catalog;
use crate::counter::{CounterKeys, CounterKind, CounterNames, ToolChoice, ToolTokens};
use crate::generate;
use crate::number::{percent_of, round};
use crate::progress::{Progress, Unit};
use crate::search::{self, ScorerConfig, ScorerKind, SearchRequest};
use crate::simulate::scenario::Listing;
use crate::simulate::{self, Profile};
use crate::timing::{Clock, LatencyUs, time_searches};

/// The catalog sizes of the sweep.
pub const SIZES: [usize; 4] = [10, 100, 1_000, 10_000];
/// Generated catalogs put this many tools on a server: the mean of the real MCP catalogs
/// measured in `crate::generate` is 11.6 (median 7).
pub const TOOLS_PER_SERVER: usize = 12;
/// Seed of every generated sweep catalog.
pub const SEED: u64 = 1;

/// The number of servers a generated catalog of `tools` tools gets.
pub fn servers_for(tools: usize) -> usize {
    tools.div_ceil(TOOLS_PER_SERVER).max(1)
}

/// How the deferred tools are announced to the model (the simulator's `listing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ListingMode {
    /// One tool id a line (Claude Code).
    Names,
    /// `id: first line of the description` cut at 100 characters.
    Descriptions,
    /// One line per server with its tool count and first tool names.
    Servers,
}

impl ListingMode {
    pub const ALL: [ListingMode; 3] = [
        ListingMode::Names,
        ListingMode::Descriptions,
        ListingMode::Servers,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ListingMode::Names => "names",
            ListingMode::Descriptions => "descriptions",
            ListingMode::Servers => "servers",
        }
    }
}

/// Fixed parts of the first request, the same in both modes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepSettings {
    /// The counter of every count in the sweep (the default profile's), with its tokenizer and
    /// rendering.
    #[serde(flatten)]
    pub counter: CounterKeys,
    pub seed: u64,
    pub tools_per_server: usize,
    /// The non-tool system prompt.
    pub system_prompt_tokens: usize,
    /// The provider's tool-use preamble (model profile).
    pub tool_overhead_tokens: usize,
    /// The search tool's definition, counted like any tool.
    pub search_tool_tokens: usize,
    /// The model profile whose context window the occupancy is measured against.
    pub profile: String,
    pub context_window: usize,
}

/// The deferred first request under one listing mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListingCost {
    pub mode: ListingMode,
    /// Tokens of the deferred list.
    pub list_tokens: usize,
    /// Tokens per listed tool (`list_tokens / tools`), 2 decimals.
    pub list_tokens_per_tool: f64,
    pub first_request_tokens: usize,
    /// `(eager - deferred) / eager`, in %, 2 decimals.
    pub savings_pct: f64,
    /// First request as a % of the context window, 2 decimals.
    pub window_pct: f64,
}

/// One catalog size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    pub tools: usize,
    pub servers: usize,
    /// Sum of every tool definition's tokens.
    pub tool_tokens: usize,
    pub eager_first_request_tokens: usize,
    pub eager_window_pct: f64,
    pub deferred: Vec<ListingCost>,
}

/// A scorer's measured search time on one generated catalog (varies run to run; kept apart
/// from the deterministic results).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepLatency {
    pub tools: usize,
    pub scorer: ScorerKind,
    /// Index build time, milliseconds.
    pub build_ms: f64,
    pub latency_us: crate::timing::LatencyUs,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    pub settings: SweepSettings,
    pub points: Vec<SweepPoint>,
}

/// The sweep point of one catalog. `list_tokens(mode)` gives the tokens of the deferred list
/// of every tool in `mode` (the simulator's listing, counted with the sweep's tokenizer).
pub fn sweep_point(
    catalog: &Catalog,
    tokens: &ToolTokens,
    settings: &SweepSettings,
    mut list_tokens: impl FnMut(ListingMode) -> usize,
) -> SweepPoint {
    let fixed = settings.system_prompt_tokens + settings.tool_overhead_tokens;
    let tool_tokens = tokens.total();
    let eager = fixed + tool_tokens;
    let window = settings.context_window as f64;
    let deferred = ListingMode::ALL
        .into_iter()
        .map(|mode| {
            let list = list_tokens(mode);
            let first = fixed + settings.search_tool_tokens + list;
            ListingCost {
                mode,
                list_tokens: list,
                list_tokens_per_tool: if catalog.is_empty() {
                    0.0
                } else {
                    round(list as f64 / catalog.len() as f64, 2)
                },
                first_request_tokens: first,
                savings_pct: percent_of(eager as f64 - first as f64, eager as f64),
                window_pct: percent_of(first as f64, window),
            }
        })
        .collect();
    SweepPoint {
        tools: catalog.len(),
        servers: catalog.servers().len(),
        tool_tokens,
        eager_first_request_tokens: eager,
        eager_window_pct: percent_of(eager as f64, window),
        deferred,
    }
}

/// Scorers timed in the sweep. Semantic and hybrid embed every tool (≈ 150 tools/s here), so
/// 10,000 tools would take minutes; they are timed by `eval` on the real sets instead.
pub const SWEEP_SCORERS: [ScorerKind; 3] =
    [ScorerKind::Keyword, ScorerKind::Regex, ScorerKind::Bm25];
/// Queries timed per scorer and catalog size.
pub const SWEEP_QUERIES: usize = 50;
/// The non-tool system prompt of the sweep's first request (the contract's example scenario).
pub const SWEEP_SYSTEM_PROMPT_TOKENS: usize = 3_000;

/// The sweep with what running it measured: the timings and what could not be timed.
#[derive(Debug, Clone)]
pub struct SweepRun {
    pub sweep: Sweep,
    pub latency: Vec<SweepLatency>,
    pub notes: Vec<String>,
}

/// Runs the sweep: every size of [`SIZES`] generated, counted by `counter` under `profile`'s
/// preamble and window, and timed (build and searches of [`SWEEP_SCORERS`]) with `clock`.
pub fn run(
    counter: CounterKind,
    profile: &Profile,
    clock: Clock<'_>,
    progress: &dyn Progress,
) -> SweepRun {
    let settings = SweepSettings {
        counter: CounterNames(counter),
        seed: SEED,
        tools_per_server: TOOLS_PER_SERVER,
        system_prompt_tokens: SWEEP_SYSTEM_PROMPT_TOKENS,
        // The model's tool-use preamble and the counter's framing of the tools block.
        tool_overhead_tokens: profile.preamble(counter, ToolChoice::Auto)
            + counter.tools_fixed(None),
        search_tool_tokens: counter.tool(&simulate::default_search_tool()),
        profile: profile.name.clone(),
        context_window: profile.context_window,
    };
    progress.phase("sweep", SIZES.len() as u64, Unit::Items(""));
    let mut points = Vec::new();
    let (mut latency, mut notes) = (Vec::new(), Vec::new());
    for size in SIZES {
        progress.step(&format!("{size} tools"));
        let catalog = generate::generate(size, servers_for(size), SEED);
        let tokens = counter.tools(&catalog);
        points.push(sweep_point(&catalog, &tokens, &settings, |mode| {
            counter.text(&deferred_list_text(&catalog, mode))
        }));
        let catalog = Arc::new(catalog);
        time_scorers(&catalog, clock, &mut latency, &mut notes);
        progress.advance(1);
    }
    progress.finish();
    SweepRun {
        sweep: Sweep { settings, points },
        latency,
        notes,
    }
}

/// Times the sweep's scorers on one generated catalog: build time and the searches of
/// `sweep_queries`, through the one harness.
fn time_scorers(
    catalog: &Arc<Catalog>,
    clock: Clock<'_>,
    latency: &mut Vec<SweepLatency>,
    notes: &mut Vec<String>,
) {
    let queries = sweep_queries(catalog, SWEEP_QUERIES);
    let requests: Vec<SearchRequest<'_>> =
        queries.iter().map(|q| SearchRequest::new(q, 10)).collect();
    for kind in SWEEP_SCORERS {
        let start = clock();
        let scorer = match search::build(kind, catalog.clone(), &ScorerConfig::default()) {
            Ok(s) => s,
            Err(e) => {
                let why = format!("`{kind}` not timed in the sweep: {e}");
                if !notes.contains(&why) {
                    notes.push(why);
                }
                continue;
            }
        };
        let build = clock().saturating_sub(start);
        // A query a scorer refuses is timed all the same: the time to refuse it.
        let timed = time_searches(scorer.as_ref(), &requests, clock);
        latency.push(SweepLatency {
            tools: catalog.len(),
            scorer: kind,
            build_ms: (build.as_secs_f64() * 10_000.0).round() / 10.0,
            latency_us: LatencyUs::of_timed(&timed),
        });
    }
}

/// The deferred-tools list of every tool of `catalog` in `mode`: the simulator's own text.
pub fn deferred_list_text(catalog: &Catalog, mode: ListingMode) -> String {
    let all: Vec<usize> = (0..catalog.len()).collect();
    let listing = match mode {
        ListingMode::Names => Listing::Names,
        ListingMode::Descriptions => Listing::Descriptions,
        ListingMode::Servers => Listing::Servers,
    };
    simulate::listing::full_text(catalog, &all, listing)
}

/// Deterministic queries for timing: words of every n-th tool's name and description.
pub fn sweep_queries(catalog: &Catalog, count: usize) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::{Render, Tokenizer};

    fn settings() -> SweepSettings {
        SweepSettings {
            counter: CounterNames(CounterKind::O200kJson),
            seed: SEED,
            tools_per_server: TOOLS_PER_SERVER,
            system_prompt_tokens: 1000,
            tool_overhead_tokens: 300,
            search_tool_tokens: 80,
            profile: "test".into(),
            context_window: 10_000,
        }
    }

    #[test]
    fn point_adds_the_parts_by_hand() {
        let catalog = crate::generate::generate(4, 2, 1);
        let tokens =
            ToolTokens::from_counts(Tokenizer::O200kBase, Render::Json, vec![100, 200, 300, 400]);
        let p = sweep_point(&catalog, &tokens, &settings(), |m| match m {
            ListingMode::Names => 20,
            ListingMode::Descriptions => 60,
            ListingMode::Servers => 10,
        });
        assert_eq!(p.tool_tokens, 1000);
        assert_eq!(p.eager_first_request_tokens, 2300);
        assert_eq!(p.eager_window_pct, 23.0);
        let names = &p.deferred[0];
        assert_eq!(names.first_request_tokens, 1000 + 300 + 80 + 20);
        assert_eq!(names.list_tokens_per_tool, 5.0);
        // (2300 - 1400) / 2300 = 39.13%
        assert_eq!(names.savings_pct, 39.13);
        assert_eq!(p.deferred[2].first_request_tokens, 1390);
        assert_eq!(p.servers, 2);
    }

    #[test]
    fn servers_follow_the_real_mean() {
        assert_eq!(servers_for(10), 1);
        assert_eq!(servers_for(100), 9);
        assert_eq!(servers_for(10_000), 834);
    }

    #[test]
    fn sweep_lists_are_the_simulators_texts() {
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
    fn the_sweep_times_its_searches_with_the_injected_clock() {
        let (mut latency, mut notes) = (Vec::new(), Vec::new());
        let catalog = Arc::new(generate::generate(30, 3, 1));
        let clock = crate::timing::ticking_clock(std::time::Duration::from_micros(7));
        time_scorers(&catalog, &clock, &mut latency, &mut notes);
        assert_eq!(latency.len(), SWEEP_SCORERS.len());
        assert!(notes.is_empty());
        for l in &latency {
            assert_eq!(l.latency_us.searches, SWEEP_QUERIES.min(30));
            assert_eq!((l.latency_us.p50, l.latency_us.p95), (7.0, 7.0));
            assert_eq!(l.build_ms, 0.0);
        }
    }
}
