"""Prints the dev tables (docs/methodology/search-quality.md) from the eval results
scripts/devsets/run.sh writes: SET.SETTING.json (every scorer) and SET.SETTING.FUSION.json
(hybrid with a reference fusion).
Usage: python3 scripts/devsets/table.py target/devsets"""
import json
import os
import sys

SETS = ["bfcl", "stabletoolbench", "mcp-devops", "mcp-desktop", "mcp-mixed"]
LABEL = {"bfcl": "BFCL", "stabletoolbench": "StableToolBench", "mcp-devops": "mcp-devops",
         "mcp-desktop": "mcp-desktop", "mcp-mixed": "mcp-mixed"}
SCORERS = ["keyword", "regex", "bm25", "semantic", "hybrid", "rrf", "minmax"]
CURVE_SET = "mcp-devops"


def load(folder, name, setting):
    """scorer -> (eval result, scorer result), the reference fusions under their own names."""
    out = {}
    path = os.path.join(folder, f"{name}.{setting}.json")
    if not os.path.exists(path):
        return out
    main = json.load(open(path))
    for r in main["results"]:
        out[r["scorer"]] = (main, r)
    for fusion in ("rrf", "minmax"):
        p = os.path.join(folder, f"{name}.{setting}.{fusion}.json")
        if os.path.exists(p):
            e = json.load(open(p))
            out[fusion] = (e, e["results"][0])
    return out


def f3(x):
    return f"{x:.3f}"


def main_table(folder):
    print("| dev set | scorer | own R@1 | own R@5 | own R@10 | own MRR | pooled R@1 | pooled R@5 "
          "| pooled R@10 | pooled MRR | wrong sibling | p50 µs |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    checks = []
    for name in SETS:
        own, pooled = load(folder, name, "own"), load(folder, name, "pooled")
        if not own or not pooled:
            continue
        e_own, e_pool = next(iter(own.values()))[0], next(iter(pooled.values()))[0]
        answerable = e_own["query_count"] - e_own["classes"].get("no-match", 0)
        label = (f"{LABEL[name]} ({answerable} queries; {e_own['tool_count']:,} tools / "
                 f"{e_pool['tool_count']:,} pooled)")
        for s in SCORERS:
            if s not in own or s not in pooled:
                continue
            mo, mp = own[s][1]["metrics"], pooled[s][1]["metrics"]
            w = pooled[s][1].get("wrong_sibling", {})
            lat = pooled[s][1].get("latency_us") or {}
            shown = s if s in ("keyword", "regex", "bm25", "semantic", "hybrid") else f"hybrid --fusion {s}"
            cells = [label, shown] + [f3(mo[m]) for m in ("recall@1", "recall@5", "recall@10", "mrr")]
            cells += [f3(mp[m]) for m in ("recall@1", "recall@5", "recall@10", "mrr")]
            cells.append(f"{w.get('wrong', 0)}/{w.get('queries', 0)}")
            cells.append(f"{lat.get('p50', 0):,.0f}")
            print("| " + " | ".join(cells) + " |")
        for setting, res in (("own", own), ("pooled", pooled)):
            h = res["hybrid"][1]["metrics"]["recall@5"]
            rivals = {s: res[s][1]["metrics"]["recall@5"] for s in ("bm25", "semantic", "rrf") if s in res}
            best = max(rivals, key=rivals.get)
            ok = "≥" if h >= rivals[best] else "<"
            checks.append(f"{LABEL[name]} {setting}: hybrid {f3(h)} {ok} {best} {f3(rivals[best])}")
    print()
    print("hybrid against the best of bm25, semantic and rrf (recall@5):")
    for c in checks:
        print(f"- {c}")


def class_table(folder, setting):
    print(f"\nrecall@5 per query class, {setting} (no-match: share of queries answered with nothing)")
    print("| dev set | class | queries | " + " | ".join(SCORERS) + " |")
    print("|---|---|---:|" + "---:|" * len(SCORERS))
    for name in SETS:
        res = load(folder, name, setting)
        if not res:
            continue
        e = next(iter(res.values()))[0]
        for cls, n in e["classes"].items():
            metric = "refusal" if cls == "no-match" else "recall@5"
            cells = [LABEL[name], cls, str(n)]
            for s in SCORERS:
                c = res.get(s, (None, {}))[1].get("classes", {}).get(cls)
                cells.append(f3(c["metrics"][metric]) if c else "")
            print("| " + " | ".join(cells) + " |")


def curve(folder):
    res = load(folder, CURVE_SET, "pooled")
    for s in ("bm25", "semantic", "hybrid"):
        if s not in res or not res[s][1].get("thresholds"):
            continue
        print(f"\nrefusal curve, {LABEL[CURVE_SET]} pooled, {s} (results below the threshold dropped)")
        print("| threshold | false positives (no-match answered) | others answered | recall@5 |")
        print("|---:|---:|---:|---:|")
        for p in res[s][1]["thresholds"]:
            t = "none" if p["threshold"] is None else f"{p['threshold']:.4f}"
            fp = "" if p["false_positive_rate"] is None else f3(p["false_positive_rate"])
            print(f"| {t} | {fp} | {f3(p['answered'])} | {f3(p['recall']['recall@5'])} |")


if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else "target/devsets"
    main_table(folder)
    class_table(folder, "pooled")
    class_table(folder, "own")
    curve(folder)
