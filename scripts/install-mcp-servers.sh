#!/usr/bin/env bash
# Installs pinned versions of real MCP reference servers into .mcp-servers/ (git-ignored), for
# tests/mcp_live.rs and `just snapshot`. Needs node >= 20 with npm, python3 with venv, and
# network access to the npm registry and PyPI. Re-running it is cheap.
#
# The pins live next to this script, in scripts/mcp-servers/:
#   package.json + package-lock.json   npm servers and every dependency (npm ci installs exactly these)
#   python-constraints.txt             every dependency of the Python servers (pip freeze)
# Bump a server: edit its version here and in package.json, refresh the lock/constraints, then
# update the expectations in tests/mcp_live.rs and run `just snapshot` (tool lists change
# between releases).
set -euo pipefail
cd "$(dirname "$0")/.."

PY_SERVERS=(
  "mcp-server-time==2026.10.19"
  "mcp-server-git==2026.10.19"
)
DEST=.mcp-servers
PINS=scripts/mcp-servers

mkdir -p "$DEST"
cp "$PINS/package.json" "$PINS/package-lock.json" "$DEST/"
echo "install-mcp-servers: npm servers into $DEST/node_modules" >&2
npm ci --prefix "$DEST" --no-audit --no-fund --loglevel=error

echo "install-mcp-servers: Python servers into $DEST/venv" >&2
if [ ! -x "$DEST/venv/bin/python" ]; then
  python3 -m venv "$DEST/venv"
fi
"$DEST/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -c "$PINS/python-constraints.txt" "${PY_SERVERS[@]}"

echo "install-mcp-servers: ready:" \
  "$(cd "$DEST/node_modules/.bin" && ls mcp-server-* | tr '\n' ' ')" \
  "$(cd "$DEST/venv/bin" && ls mcp-server-* | tr '\n' ' ')" >&2
