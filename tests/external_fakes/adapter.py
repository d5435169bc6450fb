#!/usr/bin/env python3
"""A misbehaving external scorer for the tests: MODE (argv[1]) picks how it breaks.

ok          answers each search with the first `limit` tools, scores 1/rank
crash       exits with status 3 on the first search (after a line on stderr)
hang        never answers a search (and ignores stdin closing)
garbage     answers a search with a line that is not JSON
unknown     answers with a tool id the catalog lacks
outside     answers with a tool that is not among the candidates (when candidates are sent)
twice       lists the same tool twice
wrong-id    answers for another query id
error       answers with {"type": "error"}
no-ready    answers the index with a search result
slow-start  sleeps 30 s before `ready`
old         says it speaks protocol 2
spawns      starts a grandchild that sleeps, writes its pid to argv[2], then hangs on search
"""
import json
import os
import subprocess
import sys
import time

mode = sys.argv[1]
ids = []
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "index":
        ids = [t["id"] for t in m["tools"]]
        if mode == "slow-start":
            time.sleep(30)
        if mode == "no-ready":
            print(json.dumps({"type": "results", "id": "x", "results": []}), flush=True)
            continue
        ready = {"type": "ready", "name": "fake-" + mode, "version": "0.1"}
        if mode == "old":
            ready["protocol"] = 2
        if mode == "spawns":
            child = subprocess.Popen(["sleep", "300"])
            with open(sys.argv[2], "w") as f:
                f.write(str(child.pid))
        print(json.dumps(ready), flush=True)
        continue
    pool = m.get("candidates", ids)
    top = pool[: m["limit"]]
    results = [{"id": i, "score": 1.0 / (r + 1)} for r, i in enumerate(top)]
    if mode == "crash":
        print("fake adapter: out of cheese", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode in ("hang", "spawns"):
        time.sleep(600)
    if mode == "garbage":
        print("this is not json", flush=True)
        continue
    if mode == "unknown":
        results[0]["id"] = "mcp__nowhere__nothing"
    if mode == "outside":
        outside = [i for i in ids if i not in pool]
        if outside:
            results[0]["id"] = outside[0]
    if mode == "twice" and len(results) > 1:
        results[1]["id"] = results[0]["id"]
    answer = {"type": "results", "id": m["id"], "results": results}
    if mode == "wrong-id":
        answer["id"] = "someone-else"
    if mode == "error":
        answer = {"type": "error", "id": m["id"], "message": "index not warm"}
    print(json.dumps(answer), flush=True)
