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
