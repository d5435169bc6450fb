#!/usr/bin/env node
// A small but real tool-search scorer for toolbudget's external-scorer protocol 1, in Node
// with no dependencies: TF-IDF vectors (log tf, smoothed idf) of each tool's name words
// (weighted 2), description and argument names, ranked by cosine similarity to the query.
//
//   toolbudget eval -c catalog.json --queries q.jsonl --scorer exec:'node examples/node/tfidf_adapter.mjs'
//
// Protocol (docs/external-scorers.md): one JSON object per line on stdin and stdout; it exits
// when stdin closes.
import { createInterface } from "node:readline";

const NAME = "node-tfidf";
const VERSION = "1.0.0";
const STOP = new Set(["a", "an", "the", "of", "to", "for", "in", "on", "and", "or", "is", "it",
  "me", "my", "i", "with", "from", "by", "this", "that", "be", "can", "you", "please"]);

function words(text) {
  return (text || "")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w && !STOP.has(w))
    .map((w) => (w.length > 4 && w.endsWith("s") ? w.slice(0, -1) : w));
}

function termCounts(tool) {
  const counts = new Map();
  const add = (w, n) => counts.set(w, (counts.get(w) || 0) + n);
  for (const w of words(tool.name)) add(w, 2);
  for (const w of words(tool.description)) add(w, 1);
  const props = (tool.input_schema && tool.input_schema.properties) || {};
  for (const p of Object.keys(props)) for (const w of words(p)) add(w, 1);
  return counts;
}

let ids = [];
let vectors = [];
let idf = new Map();

function weigh(counts) {
  const v = new Map();
  let norm = 0;
  for (const [w, tf] of counts) {
    const x = (1 + Math.log(tf)) * (idf.get(w) || 0);
    if (x > 0) {
      v.set(w, x);
      norm += x * x;
    }
  }
  norm = Math.sqrt(norm) || 1;
  for (const [w, x] of v) v.set(w, x / norm);
  return v;
}

function index(tools) {
  ids = tools.map((t) => t.id);
  const counts = tools.map(termCounts);
  const df = new Map();
  for (const c of counts) for (const w of c.keys()) df.set(w, (df.get(w) || 0) + 1);
  idf = new Map();
  for (const [w, n] of df) idf.set(w, Math.log((1 + tools.length) / (1 + n)) + 1);
  vectors = counts.map(weigh);
}

function search(query, limit, candidates) {
  const q = new Map();
  for (const w of words(query)) q.set(w, (q.get(w) || 0) + 1);
  const qv = weigh(q);
  const allowed = candidates ? new Set(candidates) : null;
  const scored = [];
  vectors.forEach((v, i) => {
    if (allowed && !allowed.has(ids[i])) return;
    let s = 0;
    for (const [w, x] of qv) s += x * (v.get(w) || 0);
    if (s > 0) scored.push([ids[i], Math.round(s * 1e6) / 1e6]);
  });
  scored.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return scored.slice(0, limit);
}

const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");

createInterface({ input: process.stdin }).on("line", (line) => {
  if (!line.trim()) return;
  const m = JSON.parse(line);
  if (m.type === "index") {
    index(m.tools);
    send({ type: "ready", name: NAME, version: VERSION });
  } else if (m.type === "search") {
    const start = process.hrtime.bigint();
    const results = search(m.query, m.limit, m.candidates).map(([id, score]) => ({ id, score }));
    const elapsed_us = Number(process.hrtime.bigint() - start) / 1000;
    send({ type: "results", id: m.id, results, elapsed_us });
  }
});
