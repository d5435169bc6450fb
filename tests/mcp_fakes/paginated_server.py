"""A tiny MCP server speaking newline-delimited JSON-RPC on stdio, for tests without npm.

`tools/list` answers in two pages (a cursor after the first). Modes (first argument):
  (none)         a well-behaved server
  --cursor-loop  every page hands out the same cursor again
  --bad-tools    `tools/list` answers with "tools" that is not a list
  --list-error   `tools/list` answers with a JSON-RPC error
  --too-deep     `tools/list` answers with a schema nested 300 levels deep
"""
import json
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else ""

PAGE_1 = [
    {
        "name": "get_weather",
        "title": "Weather",
        "description": "Current weather for a city (°C).",
        "inputSchema": {
            "required": ["city"],
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "get_forecast",
        "description": "Five-day forecast for a city.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        "_meta": {"vendor/tag": "forecast"},
    },
]
PAGE_2 = [
    {
        "name": "set_units",
        "description": "Choose metric or imperial units.",
        "inputSchema": {"type": "object", "properties": {"units": {"enum": ["metric", "imperial"]}}},
    }
]


def send(msg):
    sys.stdout.write(json.dumps(msg, ensure_ascii=False) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    if "id" not in msg:
        continue  # a notification (notifications/initialized)
    method, rid = msg.get("method"), msg["id"]
    params = msg.get("params") or {}
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake-weather", "version": "0.0.1"},
        }})
    elif method == "tools/list":
        cursor = params.get("cursor")
        sys.stderr.write(f"tools/list cursor={cursor!r}\n")
        sys.stderr.flush()
        if MODE == "--bad-tools":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": "not a list"}})
        elif MODE == "--list-error":
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "database is locked"}})
        elif MODE == "--too-deep":
            deep = {"type": "string"}
            for _ in range(300):
                deep = {"type": "array", "items": deep}
            tool = {"name": "deep", "description": "d", "inputSchema": {"type": "object", "properties": {"x": deep}}}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool]}}) + "\n")
            sys.stdout.flush()
        elif MODE == "--cursor-loop":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": PAGE_1 if cursor is None else [], "nextCursor": "again"}})
        elif cursor is None:
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": PAGE_1, "nextCursor": "page-2"}})
        elif cursor == "page-2":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": PAGE_2}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": f"unknown cursor {cursor}"}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"method not found: {method}"}})
