#!/usr/bin/env bash
# Reproduces the README's fusion stress table: dumps the top 100 of bm25 and semantic for every
# query (real CLI calls, about 15 minutes on 2 cores), then scores fusion variants on the dumps
# with one list replaced by flat random scores (seeded). Needs the model and ../shared/data.
# Writes into target/fusion-stress (FUSION_WORK).
set -euo pipefail
cd "$(dirname "$0")/../.."
work="${FUSION_WORK:-target/fusion-stress}"
mkdir -p "$work"
cargo build --release --quiet
bin=target/release/toolbudget
[ -f "$work/gen10k.json" ] || "$bin" -q catalog generate --tools 10000 --servers 100 --out "$work/gen10k.json"
[ -f "$work/gen1k.json" ] || "$bin" -q catalog generate --tools 1000 --servers 20 --out "$work/gen1k.json"
python3 scripts/fusion-stress/make_q10k.py "$work/gen10k.json" "$work/q10k.jsonl"
python3 scripts/fusion-stress/genq.py "$work/gen1k.json" "$work/q1k.jsonl" 200 7
# Embed each catalog once before the parallel dump, so two processes never embed the same one.
for c in "$work/gen1k.json" "$work/gen10k.json" ../shared/data/catalogs/bfcl.json ../shared/data/catalogs/stabletoolbench.json; do
    "$bin" -q search --catalog "$c" --scorer semantic warmup > /dev/null
done
python3 scripts/fusion-stress/dump.py
cd scripts/fusion-stress && python3 final.py
