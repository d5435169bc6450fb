#!/usr/bin/env bash
# Scoring regression check: evaluates labeled query sets in two settings — each against its own
# catalog, and pooled (its expected tools ranked among distractors) — then compares each result
# with its committed baseline in baselines/: exit 1 when any scorer's recall@5 drops by more
# than 0.01.
#
#   - the shipped set, fixtures/queries/fixtures.jsonl over the fixture catalogs; pooled with
#     fixtures/live and fixtures/catalogs/generated/ten-servers.json (committed): always;
#   - the held-out MCP sets fixtures/queries/mcp/*.jsonl over the real catalogs of
#     ../shared/data (or TOOLBUDGET_SHARED_DATA), pooled with every catalog there: when that
#     data is present (skipped with a message otherwise).
#
# Scorers: keyword and bm25; hybrid too when the embedding model is present (models/ or
# TOOLBUDGET_MODEL_DIR), as in CI With the model, each MCP set in each setting must also keep
# hybrid's recall@5 at least that of bm25, semantic and RRF (scripts/fusion-gate.py).
# Recall only: every eval runs with --no-latency, so each query set is embedded once (then read
# from the embedding cache by every later run over it) instead of once per scorer and run.
#
#   bash scripts/check-scoring.sh            # the check (CI, `just check-scoring`)
#   bash scripts/check-scoring.sh --refresh  # accept the current scoring as the new baselines:
#                                            # review `git diff baselines/` and commit it with
#                                            # the change that moved the numbers
set -euo pipefail
cd "$(dirname "$0")/.."

refresh=false
[[ "${1:-}" == "--refresh" ]] && refresh=true
# CHECK_SCORING_BIN: a binary already built (CI runs this beside clippy, which holds cargo's
# build lock: a no-op `cargo build` would wait for it).
if [[ -n "${CHECK_SCORING_BIN:-}" ]]; then
    bin="$CHECK_SCORING_BIN"
else
    cargo build --release --quiet
    bin=target/release/toolbudget
fi
data="${TOOLBUDGET_SHARED_DATA:-../shared/data}"

scorers=(-s keyword -s bm25)
model="${TOOLBUDGET_MODEL_DIR:-models/all-MiniLM-L6-v2}"
if [[ -f "$model/model.safetensors" ]]; then
    scorers+=(-s hybrid)
elif [[ "${TOOLBUDGET_REQUIRE_MODEL:-0}" != 0 ]]; then
    echo "error: check-scoring: TOOLBUDGET_REQUIRE_MODEL is set but $model has no model" >&2
    exit 1
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
    "$bin" --quiet eval "$@" "${scorers[@]}" --no-latency --per-query --format json \
        --out "$work/$name.json"
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

# fusion_gate NAME ARGS...: the fusion requirement on a dev set, after check NAME ARGS...:
# hybrid's recall@5 at least that of bm25, semantic and RRF of the same two lists (exit 1
# otherwise). Needs the model.
fusion_gate() {
    local name="$1"
    shift
    [[ " ${scorers[*]} " == *" hybrid "* ]] || return 0
    # One run for both (--fusion only changes hybrid): the catalogs are read, indexed and their
    # vectors loaded once.
    "$bin" --quiet eval "$@" -s semantic -s hybrid --fusion rrf --no-latency --format json \
        --out "$work/$name.semantic-rrf.json"
    python3 scripts/fusion-gate.py "$name" "$work/$name.json" "$work/$name.semantic-rrf.json" ||
        failed=1
}

fixtures=(-c fixtures/catalogs/builtins.yaml)
for f in fixtures/catalogs/mcp/*.json; do fixtures+=(-c "$f"); done
fixtures+=(--queries fixtures/queries/fixtures.jsonl)
check scoring "${fixtures[@]}"
# The pool is named file by file, so that a fixture added to those folders later does not move
# the baseline (a bigger pool is a different measurement: refresh on purpose, not by accident).
pool=(--pool fixtures/live --pool fixtures/catalogs/generated/ten-servers.json)
check scoring-pooled "${fixtures[@]}" "${pool[@]}"

DATA="$data"
source scripts/devsets/sets.sh
if [[ -d "$data/catalogs" ]]; then
    for name in mcp-devops mcp-desktop mcp-mixed; do
        devset "$name"
        check "$name" "${DEVSET[@]}"
        fusion_gate "$name" "${DEVSET[@]}"
        check "$name-pooled" "${DEVSET[@]}" --pool "$data/catalogs"
        fusion_gate "$name-pooled" "${DEVSET[@]}" --pool "$data/catalogs"
    done
    # The public dev sets: the fusion requirement only (no baseline; a few minutes).
    for name in bfcl stabletoolbench; do
        [[ " ${scorers[*]} " == *" hybrid "* ]] || break
        devset "$name"
        for setting in own pooled; do
            pool=()
            [[ $setting == pooled ]] && pool=(--pool "$data/catalogs")
            "$bin" --quiet eval "${DEVSET[@]}" "${pool[@]}" -s bm25 -s hybrid --no-latency \
                --format json --out "$work/$name-$setting.json"
            fusion_gate "$name-$setting" "${DEVSET[@]}" "${pool[@]}"
        done
    done
elif [[ "${TOOLBUDGET_REQUIRE_SHARED:-0}" != 0 ]]; then
    echo "error: check-scoring: TOOLBUDGET_REQUIRE_SHARED is set but $data has no catalogs" >&2
    failed=1
else
    echo "check-scoring: no shared data at $data: the dev sets are not checked" >&2
fi

if $refresh; then
    echo "review the diff of baselines/ and commit it" >&2
fi
exit "$failed"
