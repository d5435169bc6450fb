#!/usr/bin/env python3
"""A small but real tool-search scorer for toolbudget's external-scorer protocol 1.

Okapi BM25 (k1 1.2, b 0.75) over each tool's name (split at _ - . and camelCase, counted
twice), description and argument names, with a light English suffix stemmer. Standard library
only. Run it through toolbudget:

    toolbudget eval -c catalog.json --queries q.jsonl --scorer exec:'python3 examples/python/bm25_adapter.py'

Protocol (docs/external-scorers.md): one JSON object per line on stdin and stdout.
    <- {"type": "index", "protocol": 1, "tools": [...]}   -> {"type": "ready", ...}
    <- {"type": "search", "id", "query", "limit", "candidates"?} -> {"type": "results", ...}
It exits when stdin closes.
"""
import json
import math
import re
import sys
import time

NAME = "py-bm25"
VERSION = "1.0.0"
K1, B = 1.2, 0.75
STOP = {"a", "an", "the", "of", "to", "for", "in", "on", "and", "or", "is", "it", "me", "my",
        "i", "with", "from", "by", "this", "that", "be", "can", "you", "please", "what", "how"}


def words(text):
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text or "")
    for w in re.split(r"[^A-Za-z0-9]+", text.lower()):
        if w and w not in STOP:
            yield stem(w)


def stem(w):
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            return w[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return w


def document(tool):
    props = (tool.get("input_schema") or {}).get("properties") or {}
    terms = list(words(tool["name"])) * 2
    terms += words(tool.get("description", ""))
    terms += [t for p in props for t in words(p)]
    return terms


class Index:
    def __init__(self, tools):
        self.ids = [t["id"] for t in tools]
        self.postings = {}
        self.lengths = []
        for doc, tool in enumerate(tools):
            terms = document(tool)
            self.lengths.append(len(terms))
            counts = {}
            for t in terms:
                counts[t] = counts.get(t, 0) + 1
            for t, tf in counts.items():
                self.postings.setdefault(t, []).append((doc, tf))
        self.avg = (sum(self.lengths) / len(self.lengths)) if self.lengths else 1.0

    def search(self, query, limit, allowed=None):
        n = len(self.ids)
        scores = {}
        for term in set(words(query)):
            plist = self.postings.get(term, [])
            if not plist:
                continue
            idf = math.log(1 + (n - len(plist) + 0.5) / (len(plist) + 0.5))
            for doc, tf in plist:
                norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * self.lengths[doc] / self.avg))
                scores[doc] = scores.get(doc, 0.0) + idf * norm
        ranked = [(self.ids[d], s) for d, s in scores.items()
                  if allowed is None or self.ids[d] in allowed]
        ranked.sort(key=lambda p: (-p[1], p[0]))
        return ranked[:limit]


def send(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    index = None
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        kind = message.get("type")
        if kind == "index":
            index = Index(message["tools"])
            send({"type": "ready", "name": NAME, "version": VERSION})
        elif kind == "search":
            start = time.perf_counter_ns()
            if index is None:
                send({"type": "error", "id": message.get("id"), "message": "no index yet"})
                continue
            allowed = set(message["candidates"]) if "candidates" in message else None
            ranked = index.search(message["query"], message["limit"], allowed)
            send({
                "type": "results",
                "id": message["id"],
                "results": [{"id": i, "score": round(s, 6)} for i, s in ranked],
                "elapsed_us": (time.perf_counter_ns() - start) / 1000,
            })


if __name__ == "__main__":
    main()
