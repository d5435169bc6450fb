#!/usr/bin/env bash
# Reproduces the fusion tables (docs/decisions/0001-hybrid-fusion-by-lead-in-spread.md,
# docs/methodology/search-quality.md) from real rankings: `toolbudget eval` dumps the top 100
# of bm25 and semantic, with scores, for every query of every dev set in both settings (own
# catalog, pooled among every catalog of the shared data); then final.py scores the fusions on
# those dumps, intact and with one list replaced by noise (seeded), and cv.py cross-validates
# the blend's weight (leave one dev set out). Needs the model and ../shared/data. Writes into
# target/fusion-stress (FUSION_WORK).
set -euo pipefail
cd "$(dirname "$0")/../.."
work="${FUSION_WORK:-target/fusion-stress}"
mkdir -p "$work"
DATA="${DATA:-../shared/data}"
source scripts/devsets/sets.sh
cargo build --release --quiet
for name in bfcl stabletoolbench mcp-devops mcp-desktop mcp-mixed; do
    devset "$name" || { echo "no dev set $name under $DATA: skipped" >&2; continue; }
    for setting in own pooled; do
        out="$work/$name.$setting.json"
        [[ -f "$out" ]] && continue
        pool=()
        [[ $setting == pooled ]] && pool=(--pool "$DATA/catalogs")
        echo "== $name, $setting" >&2
        target/release/toolbudget --quiet eval "${DEVSET[@]}" "${pool[@]}" -s bm25 -s semantic \
            --k 1,5,10,100 --depth 100 --per-query --format json --out "$out"
    done
done
cd scripts/fusion-stress
python3 final.py
python3 cv.py
