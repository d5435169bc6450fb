#!/usr/bin/env bash
# Installs pinned versions of real MCP reference servers into .mcp-servers/ (git-ignored), for
# `tests/mcp_live.rs` and `just snapshot`. Needs node/npm and python3 (with venv) on PATH and
# network access to the npm registry and PyPI. Re-running is cheap: npm and pip skip what is there.
#
# Pinned versions: bump them together with the expectations in tests/mcp_live.rs and re-run
# `just snapshot` (the tool lists change between releases).
set -euo pipefail
cd "$(dirname "$0")/.."

NPM_SERVERS=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
)
PY_SERVERS=(
  "mcp-server-time==2026.10.19"
  "mcp-server-git==2026.10.19"
)

DEST=.mcp-servers
mkdir -p "$DEST"

echo "installing npm servers into $DEST/node_modules" >&2
npm install --prefix "$DEST" --no-audit --no-fund --no-save --loglevel=error "${NPM_SERVERS[@]}"

echo "installing Python servers into $DEST/venv" >&2
if [ ! -x "$DEST/venv/bin/python" ]; then
  python3 -m venv "$DEST/venv"
fi
"$DEST/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${PY_SERVERS[@]}"

echo "done: $(ls "$DEST/node_modules/@modelcontextprotocol" | tr '\n' ' ')+ venv ($("$DEST/venv/bin/python" -m pip list --format=freeze 2>/dev/null | grep -E '^mcp-server-' | tr '\n' ' '))" >&2
