# toolbudget tasks. Install just with: python3 -m pip install rust-just

default: test

# Run the test suite (the README's test command).
test:
    cargo test

# What CI runs.
ci:
    bash .ci/run

# Criterion benchmarks, then the full report into reports/.
bench:
    cargo run --release -- count --catalog fixtures/catalogs/builtins.yaml

# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`). Crashes
# land in fuzz/artifacts/<target>/; new interesting inputs grow fuzz/corpus/<target>/.
# Fuzz each target for FUZZ_SECONDS (default 60), one after another.
fuzz:
    #!/usr/bin/env bash
    set -euo pipefail
    for t in catalog_parse scenario_parse query_parse; do
        cargo +nightly fuzz run -O "$t" "fuzz/corpus/$t" -- \
            -max_total_time="${FUZZ_SECONDS:-60}" -max_len=65536 -timeout=10 -rss_limit_mb=3072
    done

# The short fuzz run for CI: 20 s per target, starting from the committed corpus.
fuzz-ci:
    FUZZ_SECONDS="${FUZZ_SECONDS:-20}" just fuzz

# Shrink the committed corpus to the inputs that add coverage.
fuzz-cmin:
    #!/usr/bin/env bash
    set -euo pipefail
    for t in catalog_parse scenario_parse query_parse; do
        cargo +nightly fuzz cmin -O "$t" "fuzz/corpus/$t" -- -max_len=65536
    done
