"""Shared loading, stress variants, metrics. Rankings are lists of (tool_id, score), best first."""
import json, math, random, os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORK = os.environ.get("FUSION_WORK", os.path.join(ROOT, "target", "fusion-stress"))
D = os.environ.get("TOOLBUDGET_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data"))
SETS = {
    "bfcl": (f"{D}/catalogs/bfcl.json", f"{D}/queries/bfcl.jsonl"),
    "stabletoolbench": (f"{D}/catalogs/stabletoolbench.json", f"{D}/queries/stabletoolbench.jsonl"),
    "synthetic": (f"{WORK}/gen10k.json", f"{WORK}/q10k.jsonl"),
    # held out: never used to choose parameters
    "synthetic1k": (f"{WORK}/gen1k.json", f"{WORK}/q1k.jsonl"),
}
DUMPS = f"{WORK}/dumps"
DEPTH = 100

def catalog_ids(path):
    c = json.load(open(path))
    if isinstance(c, dict) and "servers" in c:
        out = []
        for s in c["servers"]:
            for t in s["tools"]:
                out.append(t.get("id") or f"mcp__{s['name']}__{t['name']}")
        return out
    raise ValueError(path)

def ids_from_dumps(name):
    """Fallback catalog: every id seen in any dump of the set (enough for random stress lists)."""
    seen = set()
    for sc in ("bm25", "semantic"):
        for l in open(f"{DUMPS}/{name}.{sc}.jsonl"):
            seen.update(m[0] for m in json.loads(l)["matches"])
    return sorted(seen)

def load(name):
    cat, qf = SETS[name]
    qs = [json.loads(l) for l in open(qf) if l.strip()]
    dumps = {}
    for sc in ("bm25", "semantic"):
        dumps[sc] = {}
        for l in open(f"{DUMPS}/{name}.{sc}.jsonl"):
            r = json.loads(l)
            dumps[sc][r["id"]] = [tuple(m) for m in r["matches"]][:DEPTH]
    out = []
    missing = [q["id"] for q in qs if q["id"] not in dumps["bm25"] or q["id"] not in dumps["semantic"]]
    if missing:
        print(f"# {name}: {len(missing)} queries not dumped yet, skipped")
    skip = set(missing)
    for q in qs:
        if q["id"] in skip:
            continue
        out.append({"id": q["id"], "query": q["query"], "expected": q["expected"],
                    "bm25": dumps["bm25"][q["id"]], "sem": dumps["semantic"][q["id"]]})
    return out

def _rng(*key):
    return random.Random(":".join(map(str, key)))

def random_list(pool, rng, lo, hi, n=DEPTH):
    tools = rng.sample(pool, min(n, len(pool)))
    return sorted(((t, rng.uniform(lo, hi)) for t in tools), key=lambda x: (-x[1], x[0]))

def variants(name, data, pool):
    """Intact data plus stress variants. Each yields (variant, list of (query, bm25, sem))."""
    v = {"intact": [(q, q["bm25"], q["sem"]) for q in data]}
    # (a) semantic found nothing: 100 random tools, flat cosines U[0.2, 0.3]
    v["sem_flat"] = [(q, q["bm25"], random_list(pool, _rng(name, q["id"], "semflat"), 0.2, 0.3)) for q in data]
    # (a') semantic keeps its tools but its order is noise: flat random cosines on the same tools
    def reshuffle(lst, rng, lo, hi):
        return sorted(((t, rng.uniform(lo, hi)) for t, _ in lst), key=lambda x: (-x[1], x[0]))
    v["sem_flat_same"] = [(q, q["bm25"], reshuffle(q["sem"], _rng(name, q["id"], "semsame"), 0.2, 0.3)) for q in data]
    # (b) bm25 weak: 100 random tools with flat scores U[1, 1.5] (a query matching only common words)
    v["bm25_flat"] = [(q, random_list(pool, _rng(name, q["id"], "bmflat"), 1.0, 1.5), q["sem"]) for q in data]
    # (b') bm25 weak but confident-looking: the query's real bm25 score profile on random tools
    def profile(lst, rng):
        tools = rng.sample(pool, len(lst))
        return [(t, s) for t, (_, s) in zip(tools, lst)]
    v["bm25_shuffled"] = [(q, profile(q["bm25"], _rng(name, q["id"], "bmshuf")), q["sem"]) for q in data]
    # (b'') bm25 refused every query (the >500-char case): empty list
    v["bm25_empty"] = [(q, [], q["sem"]) for q in data]
    # (a'') semantic confident-looking but wrong: real cosine profile on random tools
    v["sem_shuffled"] = [(q, q["bm25"], profile(q["sem"], _rng(name, q["id"], "semshuf"))) for q in data]
    return v

def metrics(rows, fuse):
    """rows: (query, bm25, sem); fuse(bm25, sem) -> ranked ids. Returns (recall@5, MRR)."""
    r5 = mrr = 0.0
    for q, b, s in rows:
        ranked = fuse(b[:DEPTH], s[:DEPTH])
        pos = {t: i + 1 for i, t in reversed(list(enumerate(ranked)))}
        ranks = [pos.get(e) for e in q["expected"]]
        r5 += sum(1 for r in ranks if r is not None and r <= 5) / len(ranks)
        found = [r for r in ranks if r is not None]
        mrr += 1.0 / min(found) if found else 0.0
    return r5 / len(rows), mrr / len(rows)

def order(scores):
    """dict tool -> score  ->  ids best first, ties by tool id."""
    return [t for t, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))]
