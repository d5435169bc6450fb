#!/usr/bin/env bash
# Scoring regression check: evaluates the shipped query set (fixtures/queries/fixtures.jsonl over
# the fixture catalogs) with keyword and bm25, then compares with the committed baseline
# baselines/scoring.json: exit 1 when any scorer's recall@5 drops by more than 0.01.
#
#   bash scripts/check-scoring.sh            # the check (CI, `just check-scoring`)
#   bash scripts/check-scoring.sh --refresh  # accept the current scoring as the new baseline:
#                                            # review `git diff baselines/` and commit it with
#                                            # the change that moved the numbers
set -euo pipefail
cd "$(dirname "$0")/.."

eval_fixtures() {
    local catalogs=(-c fixtures/catalogs/builtins.yaml)
    for f in fixtures/catalogs/mcp/*.json; do catalogs+=(-c "$f"); done
    cargo run --quiet -- --quiet eval "${catalogs[@]}" --queries fixtures/queries/fixtures.jsonl \
        -s keyword -s bm25 --per-query --format json --out "$1"
}

if [[ "${1:-}" == "--refresh" ]]; then
    eval_fixtures baselines/scoring.json
    echo "baselines/scoring.json refreshed; review the diff and commit it" >&2
    exit 0
fi

out=$(mktemp --suffix .json)
trap 'rm -f "$out"' EXIT
eval_fixtures "$out"
cargo run --quiet -- compare baselines/scoring.json "$out" --metric recall@5 --max-drop 0.01
