#!/usr/bin/env bash
# Fuzzes each target for FUZZ_SECONDS (default 60), one after another, starting from the
# committed corpus. `just fuzz` grows that corpus (FUZZ_GROW=1); CI (`.ci/run`, 60 s a target)
# keeps new inputs in a scratch folder so a run never edits the checkout.
#
# Runs on the stable toolchain: cargo-fuzz needs `-Zsanitizer=address`, which stable rustc
# accepts with RUSTC_BOOTSTRAP=1 (the ASan runtime ships with stable's rust-std), as OSS-Fuzz
# does. A crash, or one input running over FUZZ_TIMEOUT seconds (default 30: a hang), exits
# non-zero and leaves the input in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
targets="${FUZZ_TARGETS:-catalog_parse scenario_parse query_parse compare_parse}"
if ! command -v cargo-fuzz >/dev/null; then
    cargo install cargo-fuzz --locked --version 0.13.2
fi
export RUSTC_BOOTSTRAP=1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for t in $targets; do
    if [ "${FUZZ_GROW:-0}" = 1 ]; then
        dirs=("fuzz/corpus/$t")
    else
        mkdir -p "$scratch/$t"
        dirs=("$scratch/$t" "fuzz/corpus/$t")
    fi
    echo "fuzz: $t for ${seconds} s"
    cargo fuzz run -O "$t" "${dirs[@]}" -- \
        -max_total_time="$seconds" -max_len=65536 -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=3072 \
        -print_final_stats=1
done
