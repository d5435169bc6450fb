#!/usr/bin/env python3
"""Checks toolbudget's metrics for a run file against ir_measures (pytrec_eval, i.e. trec_eval)
on the same run and labels, to 1e-6: per query and averaged.

    python3 scripts/ir-measures-agree.py QUERIES.jsonl RUN_FILE EVAL.json

EVAL.json is `toolbudget eval --queries QUERIES --run RUN_FILE --per-query --run-ties trec
--format json` (trec_eval breaks ties by document id descending; toolbudget does the same with
--run-ties trec). Labels are binary (relevance 1 for each expected tool); queries that expect no
tool are left out, as toolbudget leaves them out of the averages. Averages count a query the run
lacks as 0, as `trec_eval -c` does. Measures: R@k, Success@k (hit@k), RR (MRR@depth, see below),
nDCG@10, all computed by ir_measures' pytrec_eval provider (trec_eval's own code, its tie rule;
ir_measures' fallback for RR@k breaks ties the other way). trec_eval's recip_rank has no cutoff,
so the run is first cut to the evaluation's depth in trec_eval's order (score descending, then
document id descending) and scored with RR, which is then RR@depth. Exit 1 on any
disagreement, listing the first ones.
"""
import json
import sys

import ir_measures
from ir_measures import R, Success, RR, nDCG

TOLERANCE = 1e-6


def main(queries_path, run_path, eval_path):
    qrels = []
    answerable = []
    with open(queries_path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            q = json.loads(line)
            if q["expected"]:
                answerable.append(q["id"])
                for tool in q["expected"]:
                    qrels.append(ir_measures.Qrel(q["id"], tool, 1))
    result = json.load(open(eval_path, encoding="utf-8"))
    [ours] = result["results"]
    ks = result["ks"]
    depth = result["depth"]
    by_query = {}
    for d in ir_measures.read_trec_run(run_path):
        by_query.setdefault(d.query_id, []).append(d)
    run = []
    for docs in by_query.values():
        docs.sort(key=lambda d: d.doc_id, reverse=True)
        docs.sort(key=lambda d: d.score, reverse=True)
        run.extend(docs[:depth])
    names = {}
    for k in ks:
        names[R @ k] = f"recall@{k}"
        names[Success @ k] = f"hit@{k}"
    names[RR] = "mrr"
    names[nDCG @ 10] = "ndcg@10"
    theirs = {}
    for m in ir_measures.pytrec_eval.iter_calc(list(names), qrels, run):
        theirs[(m.query_id, names[m.measure])] = m.value
    rows = {r["id"]: r for r in ours["per_query"]}
    bad = []
    checked = 0
    for metric in names.values():
        values = []
        for qid in answerable:
            mine = rows[qid]["metrics"][metric]
            other = theirs.get((qid, metric), 0.0)  # absent from the run: trec_eval -c counts 0
            values.append(other)
            checked += 1
            if abs(mine - other) > TOLERANCE:
                bad.append(f"{qid} {metric}: toolbudget {mine}, ir_measures {other}")
        mean = sum(values) / len(values)
        if abs(ours["metrics"][metric] - mean) > TOLERANCE:
            bad.append(f"mean {metric}: toolbudget {ours['metrics'][metric]}, ir_measures {mean}")
    if bad:
        print(f"{len(bad)} disagreements, e.g.:", *bad[:10], sep="\n  ")
        return 1
    version = __import__("importlib.metadata").metadata.version("ir_measures")
    print(f"agree: {checked} per-query values and {len(names)} means over {len(answerable)} "
          f"queries (ir_measures {version}), within {TOLERANCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
