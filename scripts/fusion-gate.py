"""The fusion requirement on one dev set (scripts/check-scoring.sh): hybrid's recall@5 at least
that of bm25, semantic and RRF over the same two lists. Exit 1 otherwise.
Usage: fusion-gate.py NAME MAIN.json (bm25 + hybrid) SEMANTIC-RRF.json (semantic + hybrid under
--fusion rrf, one run)"""
import json
import sys

name, main, sem_rrf = sys.argv[1:]
r5 = {r["scorer"]: r["metrics"]["recall@5"] for r in json.load(open(main))["results"]}
other = {r["scorer"]: r for r in json.load(open(sem_rrf))["results"]}
assert other["hybrid"]["settings"]["fusion"] == "rrf", f"{sem_rrf}: hybrid is not rrf"
r5["semantic"] = other["semantic"]["metrics"]["recall@5"]
r5["rrf"] = other["hybrid"]["metrics"]["recall@5"]
best = max(("bm25", "semantic", "rrf"), key=r5.get)
ok = r5["hybrid"] >= r5[best]
print(f"fusion {name}: hybrid recall@5 {r5['hybrid']:.4f} {'>=' if ok else '<'} "
      f"max(bm25 {r5['bm25']:.4f}, semantic {r5['semantic']:.4f}, rrf {r5['rrf']:.4f})"
      + ("" if ok else ": FAILED"))
sys.exit(0 if ok else 1)
