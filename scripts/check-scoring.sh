#!/usr/bin/env bash
# Scoring regression check: evaluates labeled query sets in two settings — each against its own
# catalog, and pooled (its expected tools ranked among distractors) — then compares each result
# with its committed baseline in baselines/: exit 1 when any scorer's recall@5 drops by more
# than 0.01.
#
#   - the shipped set, fixtures/queries/fixtures.jsonl over the fixture catalogs; pooled with
#     fixtures/live and fixtures/catalogs/generated (both committed): always;
#   - the held-out MCP sets fixtures/queries/mcp/*.jsonl over the real catalogs of
#     ../shared/data (or TOOLBUDGET_SHARED_DATA), pooled with every catalog there: when that
#     data is present (skipped with a message otherwise).
#
# Scorers: keyword and bm25; hybrid too when the embedding model is present (models/ or
# TOOLBUDGET_MODEL_DIR), as in CI.
#
#   bash scripts/check-scoring.sh            # the check (CI, `just check-scoring`)
#   bash scripts/check-scoring.sh --refresh  # accept the current scoring as the new baselines:
#                                            # review `git diff baselines/` and commit it with
#                                            # the change that moved the numbers
set -euo pipefail
cd "$(dirname "$0")/.."

refresh=false
[[ "${1:-}" == "--refresh" ]] && refresh=true
cargo build --release --quiet
bin=target/release/toolbudget
data="${TOOLBUDGET_SHARED_DATA:-../shared/data}"

scorers=(-s keyword -s bm25)
model="${TOOLBUDGET_MODEL_DIR:-models/all-MiniLM-L6-v2}"
if [[ -f "$model/model.safetensors" ]]; then
    scorers+=(-s hybrid)
else
    echo "check-scoring: no embedding model at $model: hybrid not checked" >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# check NAME ARGS...: evaluates into $work/NAME.json and compares with baselines/NAME.json.
check() {
    local name="$1"
    shift
    "$bin" --quiet eval "$@" "${scorers[@]}" --per-query --format json --out "$work/$name.json"
    if $refresh; then
        cp "$work/$name.json" "baselines/$name.json"
        echo "baselines/$name.json refreshed" >&2
    elif [[ ! -f "baselines/$name.json" ]]; then
        echo "error: baselines/$name.json is missing; run with --refresh and commit it" >&2
        failed=1
    else
        echo "== $name"
        "$bin" compare "baselines/$name.json" "$work/$name.json" --metric recall@5 \
            --max-drop 0.01 || failed=1
    fi
}

fixtures=(-c fixtures/catalogs/builtins.yaml)
for f in fixtures/catalogs/mcp/*.json; do fixtures+=(-c "$f"); done
fixtures+=(--queries fixtures/queries/fixtures.jsonl)
check scoring "${fixtures[@]}"
check scoring-pooled "${fixtures[@]}" --pool fixtures/live --pool fixtures/catalogs/generated

DATA="$data"
source scripts/devsets/sets.sh
if [[ -d "$data/catalogs" ]]; then
    for name in mcp-devops mcp-desktop mcp-mixed; do
        devset "$name"
        check "$name" "${DEVSET[@]}"
        check "$name-pooled" "${DEVSET[@]}" --pool "$data/catalogs"
    done
else
    echo "check-scoring: no shared data at $data: the MCP query sets are not checked" >&2
fi

if $refresh; then
    echo "review the diff of baselines/ and commit it" >&2
fi
exit "$failed"
