# toolbudget tasks. Install just with: python3 -m pip install rust-just

default: test

# Run the test suite (the README's test command).
test:
    cargo test

# What CI runs.
ci:
    bash .ci/run

# Criterion benchmarks, then the full report into reports/ (the README's main-job command).
bench:
    cargo bench --bench toolbudget
    cargo run --release -- report

# The report alone, into reports/; e.g. `just report --data ../shared/data` adds the real data.
report *ARGS:
    cargo run --release -- report {{ARGS}}

# Save the benchmarks as a named criterion baseline (default: main).
bench-save NAME="main":
    cargo bench --bench toolbudget -- --save-baseline {{NAME}}

# Run the benchmarks and compare each against a saved baseline (see bench-save).
bench-compare NAME="main":
    cargo bench --bench toolbudget -- --baseline {{NAME}}
