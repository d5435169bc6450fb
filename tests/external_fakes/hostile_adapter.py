#!/usr/bin/env python3
"""An external scorer whose own words are hostile, for the tests: MODE (argv[1]) picks how.

error-big    answers a search with an error message of 10 MB
error-esc    answers a search with an error message holding ESC, OSC, BEL, CR and 5,000 lines
ready-name   reports a `ready` name and version holding escape sequences and a line break,
             then answers a search with an error (the name is in the message)
setsid       double-forks a grandchild that leaves the process group and the session
             (setsid) and sleeps 300 s, writes its pid to argv[2], then answers normally
"""
import json
import os
import sys
import time

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

name, version = "hostile", "1"
if mode == "ready-name":
    name, version = "evil\x1b[31mRED\x1b]0;pwned\x07\r\nforged line", "1\x1b[2J"
ids = []
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "index":
        ids = [t["id"] for t in m["tools"]]
        print(json.dumps({"type": "ready", "name": name, "version": version}), flush=True)
        continue
    if mode == "setsid":
        top = m.get("candidates", ids)[: m["limit"]]
        results = [{"id": i, "score": 1.0 / (r + 1)} for r, i in enumerate(top)]
        print(json.dumps({"type": "results", "id": m["id"], "results": results}), flush=True)
        continue
    message = {
        "error-big": "E" * (10 * 1024 * 1024),
        "error-esc": "bad\x1b[31mRED\x1b]0;title\x07\rCR\n"
        + "\n".join("line %d" % i for i in range(5000)),
        "ready-name": "no",
    }[mode]
    print(json.dumps({"type": "error", "id": m["id"], "message": message}), flush=True)
