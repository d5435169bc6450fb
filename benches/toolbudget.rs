//! Criterion benches, one target with a module per area (one build for all of them):
//! tokenizing, index build and query per scorer (the embedding scorers apart), bm25 on a real
//! dev set, simulation throughput, and every counter over the public catalogs.
//!
//! Two sizes of run. `just bench` (the default) is sized for CI: about 3 minutes of measuring on
//! 2 cores, short measurement windows, index builds at 1,000 tools, the cold embedding at 100
//! tools. `just bench-full` (env `TOOLBUDGET_BENCH_FULL=1`) adds index builds at 10,000 tools and
//! the cold embedding at 1,000, with longer windows. Query benches and the headline names that
//! `just bench-check` compares (`HEADLINE` in scripts/bench-check.sh) are the same in both.
//!
//! Catalogs are generated deterministically (`toolbudget::generate`), so every run measures
//! the same work.
//!
//! `TOOLBUDGET_BENCH_SLOWDOWN=SCORER[:TIMES]` runs each query of that lexical scorer TIMES
//! times (default 3): a deliberately slowed scorer, only in this harness, to check that
//! `just bench-check` catches a regression (docs/guide/ci-and-benchmarks.md).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use toolbudget::catalog::Catalog;
use toolbudget::experiment::sweep::servers_for;
use toolbudget::generate::generate;

/// Short agent-style queries over the generated catalogs' vocabulary, shared by every search
/// bench. One iteration of a `query` bench runs all five.
const QUERIES: [&str; 5] = [
    "create invoice for vendor",
    "list overdue loans",
    "schedule harvest",
    "search trail closures by date",
    "export shipment manifest csv",
];

/// Sentence-long queries, as users and the dev sets write them (15-40 words); the keyword
/// scorer matches every word against every name part, so these are its worst case.
const SENTENCES: [&str; 3] = [
    "I need to create a new invoice for the vendor we paid last week and then export the \
     shipment manifest as a csv file so the accounting team can review it",
    "Can you list all of the overdue loans for our library members and schedule a reminder \
     for each of them before the end of the month",
    "Please search for trail closures by date in the national park and tell me which \
     campgrounds near those trails still have open reservations for the weekend, along with \
     the weather forecast",
];

/// Whether this run is `just bench-full`.
fn full() -> bool {
    std::env::var_os("TOOLBUDGET_BENCH_FULL").is_some_and(|v| !v.is_empty() && v != "0")
}

/// How many times each query of `scorer` runs: more than once only when slowed on purpose
/// (see the module docs).
fn repeats(scorer: &str) -> usize {
    let Ok(spec) = std::env::var("TOOLBUDGET_BENCH_SLOWDOWN") else {
        return 1;
    };
    let (name, times) = spec.split_once(':').unwrap_or((spec.as_str(), "3"));
    if name == scorer {
        times.parse().unwrap_or(3)
    } else {
        1
    }
}

/// A generated catalog of `tools` tools with the sweep's server spread.
fn catalog(tools: usize) -> Catalog {
    generate(tools, servers_for(tools), 1)
}

mod tokenizing {
    use super::*;
    use toolbudget::counter::ToolTokens;
    use toolbudget::tokenize::{Render, Tokenizer, render_json};

    pub fn bench(c: &mut Criterion) {
        let catalog = catalog(1_000);
        let mut g = c.benchmark_group("tokenize");
        g.sample_size(10);
        g.throughput(Throughput::Elements(catalog.len() as u64));
        g.bench_function("count_catalog_1000_tools", |b| {
            b.iter(|| ToolTokens::compute(black_box(&catalog), Tokenizer::O200kBase, Render::Json));
        });
        let rendered: Vec<String> = catalog.tools().iter().map(render_json).collect();
        g.bench_function("count_1000_tools_one_thread", |b| {
            b.iter(|| {
                rendered
                    .iter()
                    .map(|t| Tokenizer::O200kBase.count(black_box(t)))
                    .sum::<usize>()
            });
        });
        g.finish();
    }
}

mod search {
    use super::*;
    use toolbudget::search::{Scorer, ScorerConfig, ScorerKind, SearchRequest, build};

    const SIZES: [usize; 3] = [100, 1_000, 10_000];
    /// The lexical scorers, measured at every size. The embedding scorers have their own
    /// module below: their build is dominated by the model, and their 10,000-tool index comes
    /// from the cache.
    const SCORERS: [ScorerKind; 3] = [ScorerKind::Keyword, ScorerKind::Regex, ScorerKind::Bm25];

    fn run_all(s: &dyn Scorer, queries: &[&str], times: usize) {
        for q in queries {
            for _ in 0..times {
                let _ = black_box(s.search(&SearchRequest::new(black_box(q), 5)));
            }
        }
    }

    pub fn bench(c: &mut Criterion) {
        let config = ScorerConfig::default();
        let catalogs: Vec<(usize, Arc<Catalog>)> =
            SIZES.iter().map(|&n| (n, Arc::new(catalog(n)))).collect();
        for kind in SCORERS {
            let times = repeats(kind.name());
            let mut g = c.benchmark_group(format!("search/{kind}"));
            for (size, catalog) in &catalogs {
                let size = *size;
                // Builds are measured at 1,000 tools in CI, at every size in the full run
                // (a 10,000-tool build takes 0.1-0.3 s, so 10 samples there).
                if full() || size == 1_000 {
                    g.sample_size(if size >= 10_000 { 10 } else { 20 });
                    g.throughput(Throughput::Elements(size as u64));
                    g.bench_with_input(BenchmarkId::new("build", size), catalog, |b, c| {
                        b.iter(|| build(kind, c.clone(), &config).expect("builds"));
                    });
                }
                let scorer = build(kind, catalog.clone(), &config).expect("builds");
                g.sample_size(20);
                g.throughput(Throughput::Elements(QUERIES.len() as u64));
                g.bench_with_input(BenchmarkId::new("query", size), &scorer, |b, s| {
                    b.iter(|| run_all(s.as_ref(), &QUERIES, times));
                });
                if size == 10_000 && kind != ScorerKind::Regex {
                    g.throughput(Throughput::Elements(SENTENCES.len() as u64));
                    g.bench_with_input(BenchmarkId::new("sentences", size), &scorer, |b, s| {
                        b.iter(|| run_all(s.as_ref(), &SENTENCES, times));
                    });
                }
            }
            g.finish();
        }
    }
}

mod devset {
    //! bm25 on StableToolBench (2,479 tools, 765 queries) from ../shared/data, one query per
    //! iteration cycling through all of them: the per-query time `just bench-bm25s` sets beside
    //! the bm25s reference. Skipped with a message when the data is absent.
    use super::*;
    use std::path::PathBuf;
    use toolbudget::search::{ScorerConfig, ScorerKind, SearchRequest, build};

    fn shared_data() -> Option<PathBuf> {
        let p = std::env::var_os("TOOLBUDGET_SHARED_DATA").map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
            PathBuf::from,
        );
        p.is_dir().then_some(p)
    }

    pub fn bench(c: &mut Criterion) {
        let Some(data) = shared_data() else {
            eprintln!("bench devset: skipped (no ../shared/data)");
            return;
        };
        let source =
            toolbudget::catalog::parse_catalog_arg(data.join("catalogs/stabletoolbench.json"));
        let catalog =
            Arc::new(toolbudget::catalog::load_catalogs(&[source]).expect("dev catalog loads"));
        let queries =
            toolbudget::eval::load_queries(&data.join("queries/stabletoolbench.jsonl"), &catalog)
                .expect("dev queries load");
        let scorer = build(ScorerKind::Bm25, catalog, &ScorerConfig::default()).expect("builds");
        let mut g = c.benchmark_group("devset");
        g.sample_size(50);
        let mut next = 0;
        g.bench_function("bm25_stabletoolbench", |b| {
            b.iter(|| {
                next = (next + 1) % queries.queries.len();
                let q = &queries.queries[next].query;
                black_box(scorer.search(&SearchRequest::new(q, 5)))
            });
        });
        g.finish();
    }
}

mod embedding {
    //! semantic and hybrid (all-MiniLM-L6-v2 on the CPU), skipped with a message when the
    //! model is not fetched (`just model`).
    //!
    //! - `semantic_cold/100` (CI) or `/1000` (full): embed the tools with the cache off (what a
    //!   first run pays per tool).
    //! - `model_load`: reading and fingerprinting the model, once per process.
    //! - `{semantic,hybrid}_cached/{1000,10000}`: the same index read back from the embedding
    //!   cache (what every later run pays after the model load; the target for both together
    //!   is under 1 s at 10,000 tools).
    //! - `query/1000`, `query/10000`: one query end to end (embed the query, cosine against
    //!   every tool, rank; hybrid also runs bm25 and fuses). One query per iteration, cycling
    //!   through five, so the reported time is per query.
    //!
    //! The cache lives in Cargo's target tmp folder. The first run embeds the 10,000-tool
    //! catalog once to fill it (said on stderr); later runs reuse it.
    use super::*;
    use criterion::SamplingMode;
    use std::path::PathBuf;
    use toolbudget::search::{ScorerConfig, ScorerKind, SearchRequest, build, load_embedder};

    fn cache_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-embedding-cache")
    }

    fn fill_cache(catalogs: &[(usize, Arc<Catalog>)], cached: &ScorerConfig) {
        for (size, catalog) in catalogs {
            let started = std::time::Instant::now();
            let scorer = toolbudget::search::build_semantic(catalog.clone(), cached)
                .expect("the model loaded above");
            if matches!(
                scorer.cache_status(),
                toolbudget::search::embed_cache::CacheStatus::Written(_)
            ) {
                eprintln!(
                    "bench embed: embedded {size} tools once for the cache in {:.1?}",
                    started.elapsed()
                );
            }
        }
    }

    pub fn bench(c: &mut Criterion) {
        // As the binary does (src/main.rs).
        // SAFETY: benches run one at a time; no other thread reads the environment now.
        unsafe { toolbudget::search::embed::pin_thread_count() };
        if let Err(e) = load_embedder(None) {
            eprintln!("bench embed: skipped ({e})");
            return;
        }
        let cached = ScorerConfig {
            cache_dir: Some(cache_dir()),
            ..ScorerConfig::default()
        };
        let uncached = ScorerConfig {
            no_cache: true,
            ..ScorerConfig::default()
        };
        let catalogs: Vec<(usize, Arc<Catalog>)> = [1_000, 10_000]
            .into_iter()
            .map(|n| (n, Arc::new(catalog(n))))
            .collect();
        // Filled when a cached bench first runs, so a filter that selects none of them (`cargo
        // bench -- external`) does not embed 10,000 tools.
        let filled = std::sync::Once::new();
        let fill = || filled.call_once(|| fill_cache(&catalogs, &cached));

        let mut g = c.benchmark_group("embed/build");
        g.sampling_mode(SamplingMode::Flat).sample_size(10);
        // What every process pays once before any cached index: read and check the weights.
        let model_dir = toolbudget::search::embed::resolve_model_dir(None).expect("found above");
        g.bench_function("model_load", |b| {
            b.iter(|| toolbudget::search::embed::Embedder::load(&model_dir).expect("loads"));
        });
        let cold_size = if full() { 1_000 } else { 100 };
        let cold = Arc::new(catalog(cold_size));
        g.throughput(Throughput::Elements(cold_size as u64));
        g.measurement_time(Duration::from_secs(if full() { 60 } else { 10 }));
        g.bench_with_input(
            BenchmarkId::new("semantic_cold", cold_size),
            &cold,
            |b, c| b.iter(|| build(ScorerKind::Semantic, c.clone(), &uncached).expect("builds")),
        );
        g.measurement_time(Duration::from_secs(2));
        for kind in [ScorerKind::Semantic, ScorerKind::Hybrid] {
            for (size, catalog) in &catalogs {
                g.throughput(Throughput::Elements(*size as u64));
                g.bench_with_input(
                    BenchmarkId::new(format!("{kind}_cached"), size),
                    catalog,
                    |b, c| {
                        fill();
                        b.iter(|| build(kind, c.clone(), &cached).expect("builds"));
                    },
                );
            }
        }
        g.finish();

        let mut g = c.benchmark_group("embed/query");
        g.sample_size(20);
        for kind in [ScorerKind::Semantic, ScorerKind::Hybrid] {
            for (size, catalog) in &catalogs {
                let scorer = std::cell::OnceCell::new();
                let mut next = 0;
                g.bench_with_input(BenchmarkId::new(kind.to_string(), size), catalog, |b, c| {
                    let s = scorer.get_or_init(|| {
                        fill();
                        build(kind, c.clone(), &cached).expect("builds")
                    });
                    b.iter(|| {
                        next = (next + 1) % QUERIES.len();
                        black_box(s.search(&SearchRequest::new(QUERIES[next], 5)))
                    });
                });
            }
        }
        g.finish();
    }
}

mod simulation {
    use super::*;
    use toolbudget::simulate;

    /// Shipped scenarios replayed (eager and deferred) per iteration; catalogs are loaded,
    /// counted and indexed once outside the measurement.
    const SCENARIOS: [&str; 2] = ["builtins-plus-mcp", "coding-session-5-deferred"];

    pub fn bench(c: &mut Criterion) {
        let mut g = c.benchmark_group("simulate");
        for name in SCENARIOS {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios")
                .join(format!("{name}.yaml"));
            let scenario = simulate::load_scenario(&path).expect("shipped scenarios load");
            let counter = simulate::counter_for(&scenario, None);
            let prepared = simulate::prepare(&scenario, counter, &simulate::build_scorer)
                .expect("shipped scenarios prepare");
            let requests = {
                let r = simulate::run(&scenario, &prepared).expect("shipped scenarios run");
                r.eager.requests + r.deferred.requests
            };
            // Throughput in simulated requests (both modes) per second.
            g.throughput(Throughput::Elements(requests as u64));
            g.bench_function(name, |b| {
                b.iter(|| simulate::run(black_box(&scenario), &prepared).expect("runs"));
            });
        }
        g.finish();
    }
}

/// Every local counter over every tool of `../shared/data/catalogs` (4,747 tools; a generated
/// catalog of the same size when the folder is absent). Target: under a second each, release.
mod counters {
    use super::*;
    use std::path::{Path, PathBuf};
    use toolbudget::catalog::{CatalogSource, load_catalogs};
    use toolbudget::counter::CounterKind;

    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                files(&p, out);
            } else if p.extension().is_some_and(|x| x == "json" || x == "yaml") {
                out.push(p);
            }
        }
    }

    fn public_catalogs() -> Option<Catalog> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/catalogs");
        let mut paths = Vec::new();
        files(&dir, &mut paths);
        paths.sort();
        let sources: Vec<CatalogSource> = paths
            .into_iter()
            .map(|path| CatalogSource { path, server: None })
            .collect();
        (!sources.is_empty())
            .then(|| load_catalogs(&sources).ok())
            .flatten()
    }

    pub fn bench(c: &mut Criterion) {
        let catalog = public_catalogs().unwrap_or_else(|| catalog(4_747));
        let mut g = c.benchmark_group("counters");
        g.throughput(Throughput::Elements(catalog.len() as u64));
        for kind in CounterKind::LOCAL {
            g.bench_with_input(
                BenchmarkId::new(format!("all_{}_tools", catalog.len()), kind.name()),
                &kind,
                |b, &k| b.iter(|| k.tools(black_box(&catalog))),
            );
        }
        // The whole comparison: what `count --compare-counters` does over these tools.
        g.bench_function(
            BenchmarkId::new(
                format!("all_{}_tools", catalog.len()),
                "every-local-counter",
            ),
            |b| b.iter(|| toolbudget::counter::count_all(&CounterKind::LOCAL, black_box(&catalog))),
        );
        g.finish();
    }
}

mod external {
    //! The external-scorer protocol's own cost: a trivial adapter (`examples/python/
    //! trivial_adapter.py`, which answers at once and reports 0 µs of its own) answering one
    //! search over a 1,000-tool catalog, so the round trip is the protocol (both sides' JSON
    //! and the pipes); and starting an adapter on a 10,000-tool catalog (spawn, the index sent
    //! and parsed, `ready`).
    use super::*;
    use toolbudget::search::external::ExternalConfig;
    use toolbudget::search::external::exec::ExecScorer;
    use toolbudget::search::{Scorer, SearchRequest};

    const ADAPTER: &str = "python3 examples/python/trivial_adapter.py";

    pub fn bench(c: &mut Criterion) {
        let config = ExternalConfig::default();
        let mut g = c.benchmark_group("external");
        let small = Arc::new(catalog(1000));
        match ExecScorer::start(small, ADAPTER, &config) {
            Ok(scorer) => {
                g.bench_function("exec_roundtrip/1000", |b| {
                    b.iter(|| {
                        black_box(scorer.search(&SearchRequest::new(black_box(QUERIES[0]), 5)))
                    });
                });
            }
            Err(e) => eprintln!("external benches skipped: {e}"),
        }
        let big = Arc::new(catalog(10_000));
        g.sample_size(10);
        g.bench_function("exec_index/10000", |b| {
            b.iter(|| {
                let s =
                    ExecScorer::start(big.clone(), ADAPTER, &config).expect("the adapter starts");
                black_box(s.name())
            });
        });
        g.finish();
    }
}

/// Defaults for every group; groups lower the sample size where an iteration is long.
/// Command-line flags (`--measurement-time`, `--warm-up-time`) override these, which is how
/// `just bench-check` shortens its rounds.
fn config() -> Criterion {
    let (warm_up, measure) = if full() { (500, 2_000) } else { (300, 1_000) };
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(warm_up))
        .measurement_time(Duration::from_millis(measure))
}

criterion_group! {
    name = benches;
    config = config();
    targets = tokenizing::bench, search::bench, devset::bench, embedding::bench, simulation::bench,
        counters::bench, external::bench
}
criterion_main!(benches);
