#!/usr/bin/env python3
"""A tiny MCP server with one search tool, for `--scorer mcp:'CMD ARGS'`.

It indexes a catalog file (an MCP `tools/list` result or a JSON array of {name, description})
with the BM25 of `examples/python/bm25_adapter.py` and exposes `search_tools(query, limit)`,
which answers with structured content `{"results": [{"name", "server", "score"}, ...]}` (and
the same as JSON text), the shape gateways use. Needs PyPI `mcp` (1.x or 2.x):

    toolbudget eval -c github=github.json --queries q.jsonl \\
        --scorer mcp:'python3 examples/mcp-search-server/server.py github=github.json'

Arguments: one or more catalog files, each optionally SERVER=PATH (the server of its tools;
default: the file stem).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from bm25_adapter import Index  # noqa: E402

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server  # noqa: E402
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server  # noqa: E402


def load(args):
    tools = []
    for arg in args:
        server, _, path = arg.rpartition("=")
        if not server:
            server = os.path.splitext(os.path.basename(path))[0]
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        listed = data["tools"] if isinstance(data, dict) else data
        for t in listed:
            tools.append({
                "id": f"{server}/{t['name']}",
                "name": t["name"],
                "server": server,
                "description": t.get("description", ""),
                "input_schema": t.get("inputSchema") or t.get("input_schema") or {},
            })
    return tools


TOOLS = load(sys.argv[1:])
INDEX = Index(TOOLS)
BY_ID = {t["id"]: t for t in TOOLS}
mcp = Server("tiny-tool-search")


@mcp.tool()
def search_tools(query: str, limit: int = 5) -> dict:
    """Find the tools that fit a task, best first."""
    ranked = INDEX.search(query, max(1, min(limit, 50)))
    return {
        "results": [
            {"name": BY_ID[i]["name"], "server": BY_ID[i]["server"], "score": round(s, 6)}
            for i, s in ranked
        ]
    }


@mcp.tool()
def call_tool(name: str, arguments: dict) -> str:
    """Gateways also proxy calls; this one only says it would."""
    return f"would call {name}"


if __name__ == "__main__":
    mcp.run()
