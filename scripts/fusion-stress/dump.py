"""Dump top-100 bm25 and semantic rankings (with scores) for every query of every set.
Output: $FUSION_WORK/dumps/<set>.<scorer>.jsonl, one line {"id", "matches": [[tool, score], ...], "error"?}.
Resumable: queries already dumped are skipped. At most 2 processes."""
import json, os, subprocess, sys
from multiprocessing import Pool

from common import ROOT, SETS, DUMPS as OUT
BIN = os.path.join(ROOT, "target", "release", "toolbudget")

def run(args):
    cat, scorer, q = args
    cmd = [BIN, "-q", "search", "--catalog", cat, "--scorer", scorer, "--limit", "100",
           "--format", "json", "--", q["query"]]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"id": q["id"], "matches": [], "error": p.stderr.strip()[:300], "rc": p.returncode}
    j = json.loads(p.stdout)
    return {"id": q["id"], "matches": [[m["id"], m["score"]] for m in j["matches"]]}

def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (cat, qf) in SETS.items():
        qs = [json.loads(l) for l in open(qf) if l.strip()]
        for scorer in ("bm25", "semantic"):
            path = f"{OUT}/{name}.{scorer}.jsonl"
            done = set()
            if os.path.exists(path):
                done = {json.loads(l)["id"] for l in open(path) if l.strip()}
            todo = [(cat, scorer, q) for q in qs if q["id"] not in done]
            print(name, scorer, "todo", len(todo), flush=True)
            with open(path, "a") as f, Pool(2 if scorer == "semantic" else 1) as pool:
                for i, r in enumerate(pool.imap(run, todo, chunksize=4)):
                    f.write(json.dumps(r) + "\n"); f.flush()
                    if i % 200 == 0:
                        print(" ", name, scorer, i, flush=True)

if __name__ == "__main__":
    main()
