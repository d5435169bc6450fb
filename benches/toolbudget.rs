//! Criterion benches, one target with a module per area (one build for all of them):
//! tokenizing, index build and query per scorer, simulation throughput.
//!
//! Catalogs are generated deterministically (`toolbudget::generate`), so every run measures
//! the same work. Settings are modest (20 samples, 2 s per bench) because CI has 2 cores.
//!
//! Run: `cargo bench --bench toolbudget`; compare with a saved baseline:
//! `cargo bench --bench toolbudget -- --save-baseline main` then `-- --baseline main`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use toolbudget::catalog::Catalog;
use toolbudget::generate::generate;
use toolbudget::report::sweep::servers_for;

/// A generated catalog of `tools` tools with the sweep's server spread.
fn catalog(tools: usize) -> Catalog {
    generate(tools, servers_for(tools), 1)
}

mod tokenizing {
    use super::*;
    use toolbudget::tokenize::{Render, Tokenizer, ToolTokens, render_json};

    pub fn bench(c: &mut Criterion) {
        let catalog = catalog(1_000);
        let mut g = c.benchmark_group("tokenize");
        g.throughput(Throughput::Elements(catalog.len() as u64));
        g.bench_function("count_catalog_1000_tools", |b| {
            b.iter(|| ToolTokens::compute(black_box(&catalog), Tokenizer::O200kBase, Render::Json))
        });
        let rendered: Vec<String> = catalog.tools().iter().map(render_json).collect();
        g.bench_function("count_1000_tools_one_thread", |b| {
            b.iter(|| {
                rendered
                    .iter()
                    .map(|t| Tokenizer::O200kBase.count(black_box(t)))
                    .sum::<usize>()
            })
        });
        g.finish();
    }
}

mod search {
    use super::*;
    use toolbudget::search::{ScorerConfig, ScorerKind, SearchRequest, build};

    const SIZES: [usize; 3] = [100, 1_000, 10_000];
    const QUERIES: [&str; 5] = [
        "create invoice for vendor",
        "list overdue loans",
        "schedule harvest",
        "search trail closures by date",
        "export shipment manifest csv",
    ];

    /// Keyword, regex and bm25 always; semantic and hybrid only when their model loads
    /// (`ScorerConfig::default()` finds it or says why not).
    fn scorers() -> Vec<ScorerKind> {
        ScorerKind::ALL.to_vec()
    }

    pub fn bench(c: &mut Criterion) {
        let config = ScorerConfig::default();
        for kind in scorers() {
            let probe = Arc::new(catalog(10));
            if let Err(e) = build(kind, probe, &config) {
                eprintln!("bench search/{kind}: skipped ({e})");
                continue;
            }
            let mut g = c.benchmark_group(format!("search/{kind}"));
            // Embedding scorers index ≈ 150 tools/s on 2 cores: 10,000 tools would take a
            // minute per build, so they are measured at 100 tools only.
            let embeds = matches!(kind, ScorerKind::Semantic | ScorerKind::Hybrid);
            for size in SIZES {
                if embeds && size > 100 {
                    continue;
                }
                let catalog = Arc::new(catalog(size));
                // Building a 10,000-tool index takes ~0.1-0.3 s: 10 samples keep it near 2 s.
                g.sample_size(if embeds || size >= 10_000 { 10 } else { 20 });
                g.throughput(Throughput::Elements(size as u64));
                g.bench_with_input(BenchmarkId::new("build", size), &catalog, |b, c| {
                    b.iter(|| build(kind, c.clone(), &config).expect("built once above"))
                });
                let scorer = build(kind, catalog.clone(), &config).expect("built once above");
                g.throughput(Throughput::Elements(QUERIES.len() as u64));
                g.bench_with_input(BenchmarkId::new("query", size), &scorer, |b, s| {
                    b.iter(|| {
                        for q in QUERIES {
                            let _ = black_box(s.search(&SearchRequest::new(q, 5)));
                        }
                    })
                });
            }
            g.finish();
        }
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
            let tokenizer = simulate::tokenizer_for(&scenario, None);
            let build = |kind, catalog| {
                toolbudget::search::build(
                    kind,
                    catalog,
                    &toolbudget::search::ScorerConfig::default(),
                )
            };
            let prepared =
                simulate::prepare(&scenario, tokenizer, &build).expect("shipped scenarios prepare");
            let requests = {
                let r = simulate::run(&scenario, &prepared).expect("shipped scenarios run");
                r.eager.requests + r.deferred.requests
            };
            // Throughput in simulated requests (both modes) per second.
            g.throughput(Throughput::Elements(requests as u64));
            g.bench_function(name, |b| {
                b.iter(|| simulate::run(black_box(&scenario), &prepared).expect("runs"))
            });
        }
        g.finish();
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = tokenizing::bench, search::bench, simulation::bench
}
criterion_main!(benches);
