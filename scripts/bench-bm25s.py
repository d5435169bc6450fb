#!/usr/bin/env python3
"""Per-query latency of the bm25s reference (PyPI `bm25s`) on a dev set, for `just bench-bm25s`.

Indexes the same text per tool as toolbudget's bm25 (name, description, argument names and
argument descriptions, nested properties included), English stopwords dropped, k1 1.2, b 0.75,
and times each query alone, tokenizing included (toolbudget's `search` tokenizes too): one
`tokenize` + `retrieve(k=5)` per query, after one untimed warm-up pass. Prints one JSON object.

Usage: bench-bm25s.py CATALOG.json QUERIES.jsonl
"""

import json
import statistics
import sys
import time

import bm25s


def schema_text(schema, out):
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return
    for name, spec in props.items():
        out.append(name)
        if isinstance(spec, dict):
            if isinstance(spec.get("description"), str):
                out.append(spec["description"])
            schema_text(spec, out)
            if isinstance(spec.get("items"), dict):
                schema_text(spec["items"], out)


def tool_texts(catalog):
    texts = []
    for tool in catalog.get("builtins", []):
        texts.append((tool["name"], tool))
    for server in catalog.get("servers", []):
        for tool in server.get("tools", []):
            texts.append((f"{server['name']} {tool['name']}", tool))
    docs = []
    for name, tool in texts:
        parts = [name, tool.get("description", "")]
        schema_text(tool.get("input_schema", {}), parts)
        docs.append(" ".join(p for p in parts if p))
    return docs


def main():
    catalog_path, queries_path = sys.argv[1], sys.argv[2]
    with open(catalog_path, encoding="utf-8") as f:
        docs = tool_texts(json.load(f))
    with open(queries_path, encoding="utf-8") as f:
        queries = [json.loads(line)["query"] for line in f if line.strip()]

    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(bm25s.tokenize(docs, stopwords="en", show_progress=False), show_progress=False)

    def one(q):
        tokens = bm25s.tokenize([q], stopwords="en", show_progress=False)
        retriever.retrieve(tokens, k=min(5, len(docs)), show_progress=False, n_threads=1)

    for q in queries:
        one(q)
    times = []
    for q in queries:
        start = time.perf_counter()
        one(q)
        times.append(time.perf_counter() - start)
    times.sort()
    print(json.dumps({
        "scorer": "bm25s",
        "version": bm25s.__version__,
        "tools": len(docs),
        "queries": len(queries),
        "p50_us": statistics.median(times) * 1e6,
        "p95_us": times[int(0.95 * (len(times) - 1))] * 1e6,
    }))


if __name__ == "__main__":
    main()
