#!/usr/bin/env python3
"""The least an adapter can do: answers every search with the first `limit` tools it may
return, scored 1/rank. Used by the benchmark of the protocol's own overhead
(`benches/toolbudget.rs`, `external/exec_roundtrip`); not a search."""
import json
import sys

ids = []
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "index":
        ids = [t["id"] for t in m["tools"]]
        print(json.dumps({"type": "ready", "name": "trivial", "version": "1"}), flush=True)
    elif m["type"] == "search":
        pool = m.get("candidates", ids)[: m["limit"]]
        results = [{"id": i, "score": 1.0 / (r + 1)} for r, i in enumerate(pool)]
        print(json.dumps({"type": "results", "id": m["id"], "results": results,
                          "elapsed_us": 0}), flush=True)
