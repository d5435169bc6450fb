//! Measures semantic and hybrid fusion variants on the dev sets in `../shared/data/queries`.
//! Long (embeds every catalog once, then ~2,200 queries), so ignored by default:
//!
//! ```text
//! TOOLBUDGET_SHARED_DATA=/work/shared/data cargo test --release --test semantic_devsets -- --ignored --nocapture
//! ```
//!
//! The lexical side is a plain BM25 written here (k1 1.5, b 0.75, lowercase word tokens split on
//! `_`, document = id + name words + description + argument names and descriptions), the
//! reference of the search issue; the project's own bm25 scorer replaces it once merged. It
//! lives in this test only, to tune fusion.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use toolbudget::catalog::{Catalog, Tool, load_catalogs, parse_catalog_arg};
use toolbudget::search::hybrid::{FusionConfig, Missing, rrf, weighted_blend};
use toolbudget::search::semantic::SemanticScorer;
use toolbudget::search::{Hit, Scorer, SearchRequest};

fn shared_data() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TOOLBUDGET_SHARED_DATA") {
        return Some(PathBuf::from(p));
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    p.is_dir().then_some(p)
}

struct Bm25 {
    docs: Vec<HashMap<String, f64>>,
    lengths: Vec<f64>,
    average: f64,
    df: HashMap<String, f64>,
}

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_string)
        .collect()
}

impl Bm25 {
    fn new(catalog: &Catalog) -> Bm25 {
        let mut docs = Vec::new();
        let mut lengths = Vec::new();
        let mut df: HashMap<String, f64> = HashMap::new();
        for tool in catalog.tools() {
            let text = lexical_document(tool);
            let tokens = words(&text);
            let mut tf: HashMap<String, f64> = HashMap::new();
            for t in &tokens {
                *tf.entry(t.clone()).or_default() += 1.0;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_default() += 1.0;
            }
            lengths.push(tokens.len() as f64);
            docs.push(tf);
        }
        let average = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
        Bm25 {
            docs,
            lengths,
            average,
            df,
        }
    }

    /// All tools with score > 0, best first, ties by index.
    fn rank(&self, query: &str) -> Vec<Hit> {
        let n = self.docs.len() as f64;
        let (k1, b) = (1.5, 0.75);
        let terms = words(query);
        let mut hits: Vec<Hit> = Vec::new();
        for (i, doc) in self.docs.iter().enumerate() {
            let mut score = 0.0;
            for t in &terms {
                if let Some(&tf) = doc.get(t) {
                    let df = self.df[t];
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    let norm = k1 * (1.0 - b + b * self.lengths[i] / self.average);
                    score += idf * tf * (k1 + 1.0) / (tf + norm);
                }
            }
            if score > 0.0 {
                hits.push(Hit { tool: i, score });
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.tool.cmp(&b.tool)));
        hits
    }
}

fn lexical_document(tool: &Tool) -> String {
    let mut text = format!(
        "{} {} {}",
        tool.id,
        toolbudget::search::semantic::name_words(&tool.id),
        tool.description
    );
    if let Some(props) = tool
        .input_schema
        .get("properties")
        .and_then(|p| p.as_object())
    {
        for (name, schema) in props {
            text.push(' ');
            text.push_str(name);
            if let Some(d) = schema.get("description").and_then(|d| d.as_str()) {
                text.push(' ');
                text.push_str(d);
            }
        }
    }
    text
}

/// The reference's blend: minmax-normalised bm25 plus the raw cosine (a tool outside the
/// semantic top list gets the list's lowest cosine, outside bm25's gets 0).
fn minmax_plus_cosine(lex: &[Hit], sem: &[Hit], wl: f64, ws: f64) -> Vec<Hit> {
    let hi = lex
        .iter()
        .map(|h| h.score)
        .fold(f64::NEG_INFINITY, f64::max);
    let lo = lex.iter().map(|h| h.score).fold(f64::INFINITY, f64::min);
    let floor = sem.iter().map(|h| h.score).fold(f64::INFINITY, f64::min);
    let mut scores: HashMap<usize, (f64, f64)> = HashMap::new();
    for h in lex {
        let n = if hi > lo {
            (h.score - lo) / (hi - lo)
        } else {
            1.0
        };
        scores.entry(h.tool).or_insert((0.0, floor)).0 = n;
    }
    for h in sem {
        scores.entry(h.tool).or_insert((0.0, floor)).1 = h.score;
    }
    let mut out: Vec<Hit> = scores
        .into_iter()
        .map(|(tool, (l, s))| Hit {
            tool,
            score: wl * l + ws * s,
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.tool.cmp(&b.tool)));
    out
}

/// A useless semantic signal: random tools with flat random cosines in [0.25, 0.35] (seeded).
fn noise_rankings(tools: usize, queries: usize, depth: usize) -> Vec<Vec<Hit>> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..queries)
        .map(|_| {
            let mut hits: Vec<Hit> = (0..depth.min(tools))
                .map(|_| Hit {
                    tool: (next() % tools as u64) as usize,
                    score: 0.25 + (next() % 1000) as f64 / 10_000.0,
                })
                .collect();
            hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.tool.cmp(&b.tool)));
            hits.dedup_by_key(|h| h.tool);
            hits
        })
        .collect()
}

struct Query {
    text: String,
    expected: Vec<usize>,
}

/// (recall@5, MRR) averaged over queries, as GUIDE.md defines them.
fn metrics(queries: &[Query], rankings: &[Vec<Hit>]) -> (f64, f64) {
    let mut recall = 0.0;
    let mut mrr = 0.0;
    for (q, r) in queries.iter().zip(rankings) {
        let top5 = r
            .iter()
            .take(5)
            .filter(|h| q.expected.contains(&h.tool))
            .count();
        recall += top5 as f64 / q.expected.len() as f64;
        if let Some(p) = r.iter().position(|h| q.expected.contains(&h.tool)) {
            mrr += 1.0 / (p + 1) as f64;
        }
    }
    let n = queries.len() as f64;
    (recall / n, mrr / n)
}

fn strip_descriptions(catalog: &Catalog) -> Catalog {
    let tools = catalog
        .tools()
        .iter()
        .map(|t| Tool {
            description: String::new(),
            ..t.clone()
        })
        .collect();
    Catalog::from_tools(tools).unwrap()
}

/// Semantic rankings (full catalog and names-only "weak" catalog) for every query, kept in
/// the target's temp dir keyed by the embedding cache file names, so re-running the fusion
/// variants does not re-embed ~2,200 queries.
fn semantic_rankings(
    set: &str,
    catalog: &Arc<Catalog>,
    queries: &[Query],
    depth: usize,
) -> (Vec<Vec<Hit>>, Vec<Vec<Hit>>) {
    let model = toolbudget::search::load_embedder(None).unwrap();
    let cache = toolbudget::search::embed_cache::resolve_cache_dir(None);
    let started = std::time::Instant::now();
    let semantic = SemanticScorer::new(catalog.clone(), model.clone(), cache.as_deref()).unwrap();
    eprintln!(
        "{set}: {} tools indexed in {:.1?} ({:?})",
        catalog.len(),
        started.elapsed(),
        semantic.cache_status()
    );
    let weak = SemanticScorer::new(
        Arc::new(strip_descriptions(catalog)),
        model.clone(),
        cache.as_deref(),
    )
    .unwrap();
    let key = format!(
        "{:?}{:?}{}",
        semantic.cache_status(),
        weak.cache_status(),
        queries.len()
    );
    let key = key.replace("Written", "Hit");
    let store = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("devset-{set}.json"));
    if let Ok(text) = std::fs::read_to_string(&store) {
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        if v["key"] == key.as_str() {
            let decode = |lists: &serde_json::Value| -> Vec<Vec<Hit>> {
                lists
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| {
                        l.as_array()
                            .unwrap()
                            .iter()
                            .map(|p| Hit {
                                tool: p[0].as_u64().unwrap() as usize,
                                score: p[1].as_f64().unwrap(),
                            })
                            .collect()
                    })
                    .collect()
            };
            return (decode(&v["sem"]), decode(&v["weak"]));
        }
    }
    let started = std::time::Instant::now();
    let rank = |scorer: &SemanticScorer| -> Vec<Vec<Hit>> {
        queries
            .iter()
            .map(|q| {
                scorer
                    .search(&SearchRequest::new(&q.text, depth))
                    .unwrap()
                    .hits
            })
            .collect()
    };
    let sem = rank(&semantic);
    eprintln!(
        "{set}: semantic search, mean per query {:.1?}",
        started.elapsed() / queries.len() as u32
    );
    let weak_sem = rank(&weak);
    let encode = |lists: &[Vec<Hit>]| -> serde_json::Value {
        lists
            .iter()
            .map(|l| {
                l.iter()
                    .map(|h| serde_json::json!([h.tool, h.score]))
                    .collect::<serde_json::Value>()
            })
            .collect()
    };
    let doc = serde_json::json!({"key": key, "sem": encode(&sem), "weak": encode(&weak_sem)});
    std::fs::write(&store, doc.to_string()).unwrap();
    (sem, weak_sem)
}

#[test]
#[ignore = "long: embeds the dev catalogs; run with --ignored --release"]
fn dev_set_table() {
    let Some(data) = shared_data() else {
        eprintln!("skipping: no shared data (set TOOLBUDGET_SHARED_DATA)");
        return;
    };
    if let Err(e) = toolbudget::search::load_embedder(None) {
        eprintln!("skipping: {e}");
        return;
    }
    for set in ["bfcl", "stabletoolbench"] {
        let catalog_path = data.join(format!("catalogs/{set}.json"));
        let catalog =
            Arc::new(load_catalogs(&[parse_catalog_arg(catalog_path.to_str().unwrap())]).unwrap());
        let text = std::fs::read_to_string(data.join(format!("queries/{set}.jsonl"))).unwrap();
        let queries: Vec<Query> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                Query {
                    text: v["query"].as_str().unwrap().to_string(),
                    expected: v["expected"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|e| catalog.index_of(e.as_str().unwrap()).unwrap())
                        .collect(),
                }
            })
            .collect();

        let bm25 = Bm25::new(&catalog);
        let depth = 100;
        let lex: Vec<Vec<Hit>> = queries
            .iter()
            .map(|q| bm25.rank(&q.text).into_iter().take(depth).collect())
            .collect();
        let (sem, weak_sem) = semantic_rankings(set, &catalog, &queries, depth);
        type Fuse<'a> = Box<dyn Fn(&[Hit], &[Hit]) -> Vec<Hit> + 'a>;
        let mut variants: Vec<(String, Fuse)> = vec![
            ("bm25 (test reference)".into(), Box::new(|l, _| l.to_vec())),
            ("semantic".into(), Box::new(|_, s| s.to_vec())),
            (
                "hybrid default".into(),
                Box::new(|l, s| FusionConfig::default().fuse(l, s)),
            ),
        ];
        for (wl, ws) in [(1.0, 1.0), (1.0, 0.7), (1.0, 0.5), (0.7, 1.0)] {
            for k in [10.0, 60.0] {
                variants.push((
                    format!("rrf k={k} w={wl}/{ws}"),
                    Box::new(move |l, s| rrf(&[l, s], k, &[wl, ws])),
                ));
            }
        }
        for (wl, ws) in [(0.5, 0.5), (0.4, 0.6), (0.3, 0.7), (0.2, 0.8)] {
            variants.push((
                format!("minmax+cosine w={wl}/{ws}"),
                Box::new(move |l, s| minmax_plus_cosine(l, s, wl, ws)),
            ));
        }
        for floor in [10, 20, 30] {
            for (wl, ws) in [(0.6, 0.4), (0.5, 0.5), (0.4, 0.6)] {
                variants.push((
                    format!("lead/spread blend floor={floor} w={wl}/{ws}"),
                    Box::new(move |l, s| {
                        weighted_blend(
                            &[l, s],
                            &[wl, ws],
                            &[Missing::Zero, Missing::Lowest],
                            floor,
                            depth,
                        )
                    }),
                ));
            }
        }
        let noise = noise_rankings(catalog.len(), queries.len(), depth);
        // A useless lexical signal on bm25's scale: flat scores in [10, 11].
        let lexical_noise: Vec<Vec<Hit>> = noise
            .iter()
            .rev()
            .map(|l| {
                l.iter()
                    .map(|h| Hit {
                        tool: (h.tool * 7 + 3) % catalog.len(),
                        score: 10.0 + (h.score - 0.25) * 10.0,
                    })
                    .collect()
            })
            .collect();
        eprintln!(
            "{:<28} {:>9} {:>7} | weak semantic: {:>9} {:>7} | noise sem: {:>5} {:>7} | noise lex: {:>5} {:>7}",
            "variant", "recall@5", "MRR", "recall@5", "MRR", "r@5", "MRR", "r@5", "MRR"
        );
        for (name, fuse) in &variants {
            let strong: Vec<Vec<Hit>> = lex.iter().zip(&sem).map(|(l, s)| fuse(l, s)).collect();
            let weak: Vec<Vec<Hit>> = lex.iter().zip(&weak_sem).map(|(l, s)| fuse(l, s)).collect();
            let noisy: Vec<Vec<Hit>> = lex.iter().zip(&noise).map(|(l, s)| fuse(l, s)).collect();
            let (r, m) = metrics(&queries, &strong);
            let (wr, wm) = metrics(&queries, &weak);
            let (nr, nm) = metrics(&queries, &noisy);
            let lex_noisy: Vec<Vec<Hit>> = lexical_noise
                .iter()
                .zip(&sem)
                .map(|(l, s)| fuse(l, s))
                .collect();
            let (lr, lm) = metrics(&queries, &lex_noisy);
            eprintln!(
                "{name:<28} {r:>9.3} {m:>7.3} | {wr:>24.3} {wm:>7.3} | {nr:>15.3} {nm:>7.3} | {lr:>15.3} {lm:>7.3}"
            );
        }
    }
}

/// Cached-index load and query latency at 10,000 tools. The cache file is written here from
/// seeded random unit vectors under the real model fingerprint (scoring cost does not depend
/// on the vectors' values), so `SemanticScorer::new` takes the cached path; queries are
/// embedded by the real model.
#[test]
#[ignore = "timing: run with --ignored --nocapture (use --release for representative numbers)"]
fn latency_at_10k_tools() {
    let model = match toolbudget::search::load_embedder(None) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("skipping: {e}");
            return;
        }
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("latency-10k-cache");
    let tools: Vec<Tool> = (0..10_000)
        .map(|i| Tool {
            id: format!("tool_{i:05}"),
            name: format!("tool_{i:05}"),
            server: None,
            description: format!("Synthetic tool number {i} for timing."),
            input_schema: serde_json::json!({"type": "object", "properties": {}}),
            should_defer: None,
            always_load: false,
            search_hint: None,
            depends_on: Vec::new(),
            origin: None,
        })
        .collect();
    let catalog = Arc::new(Catalog::from_tools(tools).unwrap());
    let documents: Vec<String> = catalog
        .tools()
        .iter()
        .map(toolbudget::search::semantic::document_text)
        .collect();
    let key = toolbudget::search::embed_cache::DocumentKey::new(&documents);
    let cache = toolbudget::search::embed_cache::EmbedCache::new(&dir, model.fingerprint());
    let dim = model.dim();
    let mut state: u64 = 42;
    let mut matrix: Vec<f32> = (0..10_000 * dim)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect();
    for row in matrix.chunks_exact_mut(dim) {
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        for x in row.iter_mut() {
            *x /= norm;
        }
    }
    cache.store(&key, dim, &matrix).unwrap();

    let started = std::time::Instant::now();
    let reloaded = toolbudget::search::embed::Embedder::load(model.dir()).unwrap();
    let model_load = started.elapsed();
    let started = std::time::Instant::now();
    let scorer = SemanticScorer::new(catalog.clone(), Arc::new(reloaded), Some(&dir)).unwrap();
    let index_load = started.elapsed();
    assert!(matches!(
        scorer.cache_status(),
        toolbudget::search::embed_cache::CacheStatus::Hit(_)
    ));
    let queries = [
        "send a message to a slack channel",
        "what's the weather in Paris tomorrow",
        "find the dimensions of a triangle with sides 3, 4 and 5",
        "list open pull requests on my repository",
        "convert 100 US dollars to euros",
    ];
    let mut times = Vec::new();
    for round in 0..10 {
        for q in queries {
            let started = std::time::Instant::now();
            let out = scorer.search(&SearchRequest::new(q, 5)).unwrap();
            let t = started.elapsed();
            assert_eq!(out.hits.len(), 5);
            if round > 0 {
                times.push(t);
            }
        }
    }
    times.sort();
    eprintln!(
        "10k tools: model load {model_load:.1?}, cached index load {index_load:.1?}, query p50 {:.1?}, p95 {:.1?}",
        times[times.len() / 2],
        times[times.len() * 95 / 100]
    );
}
