#!/usr/bin/env bash
# Installs the independent metric implementation the tests check run-file metrics against
# (PyPI ir_measures with pytrec_eval, i.e. trec_eval's code) into target/eval-venv, pinned by
# scripts/eval-python-constraints.txt. Prints the venv's python. Re-running it is cheap.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/eval-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -c scripts/eval-python-constraints.txt ir_measures >&2
echo "$(pwd)/$venv/bin/python"
