#!/usr/bin/env bash
# Evaluates every scorer on every dev set in both settings — each set against its own catalog,
# and pooled among every catalog of the shared data — plus hybrid with the rrf and minmax
# fusions as references, then prints the numbers of docs/methodology/search-quality.md
# (scripts/devsets/table.py).
# Results: target/devsets/SET.SETTING[.FUSION].json. Needs the model and ../shared/data (DATA=).
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA="${DATA:-../shared/data}"
source scripts/devsets/sets.sh
[[ -d "$DATA/catalogs" ]] || { echo "no dev sets at $DATA: skipped"; exit 0; }
out=target/devsets
mkdir -p "$out"
cargo build --release --quiet
bin=target/release/toolbudget
for name in "${DEVSETS[@]}"; do
    devset "$name"
    for setting in own pooled; do
        pool=()
        [[ $setting == pooled ]] && pool=(--pool "$DATA/catalogs")
        echo "== $name, $setting" >&2
        "$bin" --quiet eval "${DEVSET[@]}" "${pool[@]}" -s keyword -s regex -s bm25 -s semantic \
            -s hybrid --k 1,5,10 --thresholds --format json --out "$out/$name.$setting.json"
        for fusion in rrf minmax; do
            "$bin" --quiet eval "${DEVSET[@]}" "${pool[@]}" -s hybrid --fusion "$fusion" \
                --k 1,5,10 --format json --out "$out/$name.$setting.$fusion.json"
        done
    done
done
python3 scripts/devsets/table.py "$out"
