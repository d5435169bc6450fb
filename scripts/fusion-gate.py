"""The fusion requirement on one dev set (scripts/check-scoring.sh): hybrid's recall@5 at least
that of bm25, semantic and RRF over the same two lists. Exit 1 otherwise.
Usage: fusion-gate.py NAME MAIN.json (bm25 + hybrid) SEMANTIC.json RRF.json"""
import json
import sys

name, main, sem, rrf = sys.argv[1:]
r5 = {r["scorer"]: r["metrics"]["recall@5"] for r in json.load(open(main))["results"]}
r5["semantic"] = json.load(open(sem))["results"][0]["metrics"]["recall@5"]
r5["rrf"] = json.load(open(rrf))["results"][0]["metrics"]["recall@5"]
best = max(("bm25", "semantic", "rrf"), key=r5.get)
ok = r5["hybrid"] >= r5[best]
print(f"fusion {name}: hybrid recall@5 {r5['hybrid']:.4f} {'>=' if ok else '<'} "
      f"max(bm25 {r5['bm25']:.4f}, semantic {r5['semantic']:.4f}, rrf {r5['rrf']:.4f})"
      + ("" if ok else ": FAILED"))
sys.exit(0 if ok else 1)
