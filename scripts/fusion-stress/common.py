"""Shared loading, stress variants, metrics. Rankings are lists of (tool_id, score), best first."""
import json
import os
import random

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORK = os.environ.get("FUSION_WORK", os.path.join(ROOT, "target", "fusion-stress"))
SETS = ["bfcl", "stabletoolbench", "mcp-devops", "mcp-desktop"]
# Kept out of every design decision and of the cross-validation: the held-out check set.
HELD_OUT = ["mcp-mixed"]
DEPTH = 100


def load(name, setting):
    """The queries that expect a tool, each with its bm25 and semantic top 100 (from the
    `eval --per-query` dump of run.sh)."""
    result = json.load(open(os.path.join(WORK, f"{name}.{setting}.json")))
    by_scorer = {r["scorer"]: r["per_query"] for r in result["results"]}
    out = []
    for b, s in zip(by_scorer["bm25"], by_scorer["semantic"]):
        if not b["expected"]:
            continue
        out.append({
            "id": b["id"],
            "expected": b["expected"],
            "class": b["class"],
            "bm25": list(zip(b["top"], b.get("scores", []))),
            "sem": list(zip(s["top"], s.get("scores", []))),
        })
    return out


def ids_seen(data):
    """Every tool in any list of the set: the pool random stress lists draw from."""
    seen = set()
    for q in data:
        seen.update(t for t, _ in q["bm25"] + q["sem"])
    return sorted(seen)


def _rng(*key):
    return random.Random(":".join(map(str, key)))


def random_list(pool, rng, lo, hi, n=DEPTH):
    tools = rng.sample(pool, min(n, len(pool)))
    return sorted(((t, rng.uniform(lo, hi)) for t in tools), key=lambda x: (-x[1], x[0]))


def variants(name, data):
    """Intact data plus stress variants. Each yields (variant, list of (query, bm25, sem))."""
    pool = ids_seen(data)
    v = {"intact": [(q, q["bm25"], q["sem"]) for q in data]}
    # semantic found nothing: 100 random tools, flat cosines U[0.2, 0.3]
    v["sem_flat"] = [(q, q["bm25"], random_list(pool, _rng(name, q["id"], "semflat"), 0.2, 0.3)) for q in data]
    # semantic confident-looking but wrong: its real cosine profile on random tools
    def profile(lst, rng):
        tools = rng.sample(pool, len(lst))
        return [(t, s) for t, (_, s) in zip(tools, lst)]
    v["sem_shuffled"] = [(q, q["bm25"], profile(q["sem"], _rng(name, q["id"], "semshuf"))) for q in data]
    # bm25 weak: 100 random tools with flat scores U[1, 1.5] (a query matching only common words)
    v["bm25_flat"] = [(q, random_list(pool, _rng(name, q["id"], "bmflat"), 1.0, 1.5), q["sem"]) for q in data]
    # bm25 weak but confident-looking: its real score profile on random tools
    v["bm25_shuffled"] = [(q, profile(q["bm25"], _rng(name, q["id"], "bmshuf")), q["sem"]) for q in data]
    # bm25 refused every query (the >500-character case): empty list
    v["bm25_empty"] = [(q, [], q["sem"]) for q in data]
    return v


def metrics(rows, fuse):
    """rows: (query, bm25, sem); fuse(bm25, sem) -> ranked ids. Returns (recall@5, MRR@10)."""
    r5 = mrr = 0.0
    for q, b, s in rows:
        ranked = fuse(b[:DEPTH], s[:DEPTH])
        pos = {t: i + 1 for i, t in reversed(list(enumerate(ranked)))}
        ranks = [pos.get(e) for e in q["expected"]]
        r5 += sum(1 for r in ranks if r is not None and r <= 5) / len(ranks)
        found = [r for r in ranks if r is not None and r <= 10]
        mrr += 1.0 / min(found) if found else 0.0
    return r5 / len(rows), mrr / len(rows)


def order(scores):
    """dict tool -> score  ->  ids best first, ties by tool id."""
    return [t for t, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))]
