"""An MCP server (raw JSON-RPC over stdio) whose own words are hostile, for the tests.
MODE (argv[1]):

list-error   names itself with escape sequences and a line break, and answers tools/list with
             a JSON-RPC error of 8 MB holding ESC, CR and 3,000 lines
call-error   lists one search tool and answers tools/call with that error
setsid       double-forks a grandchild that leaves the process group and the session (setsid)
             and sleeps 300 s, writes its pid to argv[2], then lists one tool
"""
import json
import os
import sys

mode = sys.argv[1]
if mode == "setsid":
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(sys.argv[2] + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(sys.argv[2] + ".tmp", sys.argv[2])
            os.execvp("sleep", ["sleep", "300"])
        os._exit(0)
    os.wait()


def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()


big = "bad\x1b[31mRED\r\n" + "\n".join("l%d" % i for i in range(3000)) + "E" * (8 * 1024 * 1024)
search_tool = {
    "name": "search_tools",
    "description": "search",
    "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
}
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        name = "srv\x1b[31mRED\x1b]0;t\x07\r\nforged" if mode != "setsid" else "forker"
        send({"jsonrpc": "2.0", "id": m["id"], "result": {
            "protocolVersion": m["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": name, "version": "1"}}})
    elif m["method"] == "tools/list" and mode == "list-error":
        send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32000, "message": big}})
    elif m["method"] == "tools/list":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"tools": [search_tool]}})
    elif m["method"] == "tools/call":
        send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32000, "message": big}})
    else:
        send({"jsonrpc": "2.0", "id": m["id"], "result": {}})
