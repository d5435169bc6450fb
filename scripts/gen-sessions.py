#!/usr/bin/env python3
"""Synthetic Claude Code session logs for timing `toolbudget session import` (not fixtures).

Writes N sessions of about SIZE bytes each into OUT: the record shapes of real Claude Code
logs (metadata on every record, one record per content block, tool results repeated in
`toolUseResult`, usage on every assistant record, a subagent file every tenth session), text
drawn from a seeded word and code-line pool so token density is realistic. Same arguments,
same bytes.

    python3 scripts/gen-sessions.py --sessions 1000 --size 1000000 --out target/sessions-synth
"""

import argparse
import json
import os
import random

WORDS = (
    "the a to of and in is for on that with this it be as are from by at or an not we you "
    "cart coupon total price order invoice tax line item customer refund payment checkout "
    "basket discount amount round currency test assert fixture module import return self "
    "value error missing field update delete create list query table index schema migrate "
    "log debug trace retry timeout cache function class struct impl async await config "
    "request response handler router service client server token parse render output"
).split()

CODE = [
    "    def {w}(self, {v}):",
    "        return self.{w}.get({v!r}, None)",
    "    if {v} is None:",
    "        raise ValueError(\"{w} {v} missing\")",
    "for (i, {v}) in {w}.iter().enumerate() {{",
    "    let {v} = {w}.{v}()?;",
    "}}",
    "import {w}.{v} as {v}",
    "const {W} = {n};",
    "// {w} the {v} before {w}",
    "    {v}_{w} = [{n}, {n}, {n}]",
]


class Pool:
    """Random text, cut from pre-built chunks (fast enough for a gigabyte)."""

    def __init__(self, rng):
        self.rng = rng
        self.prose = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 30))) for _ in range(4000)]
        self.code = []
        for _ in range(4000):
            t = rng.choice(CODE)
            self.code.append(t.format(w=rng.choice(WORDS), v=rng.choice(WORDS), W=rng.choice(WORDS).upper(), n=rng.randint(0, 9999)))

    def text(self, chars):
        out, n = [], 0
        while n < chars:
            s = self.rng.choice(self.prose)
            out.append(s)
            n += len(s) + 1
        return " ".join(out)[:chars]

    def code_block(self, chars):
        out, n, i = [], 0, 1
        while n < chars:
            s = f"{i:>6}\t{self.rng.choice(self.code)}"
            out.append(s)
            n += len(s) + 1
            i += 1
        return "\n".join(out)


TOOLS = ["Read", "Bash", "Grep", "Glob", "Edit", "Write"]


def tool_input(rng, pool, tool):
    if tool == "Read":
        return {"file_path": f"/home/dev/app/src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py"}
    if tool == "Bash":
        return {"command": f"pytest -q tests/test_{rng.choice(WORDS)}.py", "description": pool.text(30)}
    if tool == "Grep":
        return {"pattern": rng.choice(WORDS), "path": "src", "output_mode": "content"}
    if tool == "Glob":
        return {"pattern": f"src/**/{rng.choice(WORDS)}*.py"}
    if tool == "Edit":
        return {"file_path": f"/home/dev/app/src/{rng.choice(WORDS)}.py", "old_string": pool.code_block(200), "new_string": pool.code_block(220)}
    return {"file_path": f"/home/dev/app/{rng.choice(WORDS)}.md", "content": pool.text(800)}


class Session:
    def __init__(self, sid, agent=None):
        self.sid, self.agent, self.n, self.parent, self.lines, self.msgs = sid, agent, 0, None, [], 0

    def rec(self, typ, extra):
        self.n += 1
        uuid = f"{self.sid[:8]}-{self.n:04d}-4000-8000-{self.n:012d}"
        r = {"parentUuid": self.parent, "isSidechain": self.agent is not None, "userType": "external",
             "cwd": "/home/dev/app", "sessionId": self.sid, "version": "2.0.42", "gitBranch": "main"}
        if self.agent:
            r["agentId"] = self.agent
        r["type"] = typ
        r.update(extra)
        r["uuid"] = uuid
        r["timestamp"] = f"2025-11-06T{(self.n // 3600) % 24:02d}:{(self.n // 60) % 60:02d}:{self.n % 60:02d}.000Z"
        self.parent = uuid
        self.lines.append(json.dumps(r, separators=(",", ":"), ensure_ascii=False))

    def user(self, content, extra=None):
        self.rec("user", dict({"message": {"role": "user", "content": content}}, **(extra or {})))

    def assistant(self, blocks, usage, model):
        self.msgs += 1
        mid = f"msg_01{self.sid[:8]}{self.agent or ''}{self.msgs:05d}"
        for b in blocks:
            self.rec("assistant", {"message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                                               "content": [b], "stop_reason": None, "stop_sequence": None,
                                               "usage": usage}, "requestId": "req_" + mid[4:]})

    def size(self):
        return sum(len(l) + 1 for l in self.lines)


def usage(rng, prompt):
    read = int(prompt * 0.9)
    return {"input_tokens": 3, "cache_creation_input_tokens": prompt - read - 3, "cache_read_input_tokens": read,
            "output_tokens": rng.randint(20, 600), "service_tier": "standard"}


def turn(rng, pool, s, prompt, model="claude-sonnet-4-5-20250929"):
    """One user turn with 0-4 requests of tool calls; returns the prompt size reached."""
    s.user(pool.text(rng.randint(40, 600)))
    for step in range(rng.randint(0, 4)):
        prompt += rng.randint(200, 3000)
        calls = [rng.choice(TOOLS) for _ in range(1 if rng.random() < 0.7 else 2)]
        blocks = [{"type": "text", "text": pool.text(rng.randint(20, 200))}] if rng.random() < 0.5 else []
        ids = []
        for c in calls:
            tid = f"toolu_01{s.sid[:6]}{s.n:06d}{len(ids)}"
            ids.append((tid, c))
            blocks.append({"type": "tool_use", "id": tid, "name": c, "input": tool_input(rng, pool, c)})
        s.assistant(blocks, usage(rng, prompt), model)
        for tid, c in ids:
            body = pool.code_block(rng.randint(300, 9000)) if c in ("Read", "Grep") else pool.text(rng.randint(100, 3000))
            s.user([{"type": "tool_result", "tool_use_id": tid, "content": body}],
                   {"toolUseResult": {"stdout": body, "stderr": "", "interrupted": False}})
    prompt += rng.randint(200, 3000)
    s.assistant([{"type": "text", "text": pool.text(rng.randint(50, 1200))}], usage(rng, prompt), model)
    return prompt


def session(rng, pool, k, size, out):
    sid = f"{k:08x}-5e55-4a0b-8c0d-{rng.getrandbits(48):012x}"
    s = Session(sid)
    prompt = 15000
    agent = None
    while s.size() < size:
        prompt = turn(rng, pool, s, prompt)
        if agent is None and k % 10 == 0:
            agent = f"a{k:06x}"
            tid = f"toolu_01task{k:08d}"
            s.assistant([{"type": "tool_use", "id": tid, "name": "Task", "input": {"description": "Survey", "prompt": pool.text(300)}}],
                        usage(rng, prompt), "claude-sonnet-4-5-20250929")
            sub = Session(sid, agent)
            turn(rng, pool, sub, 6000, "claude-haiku-4-5-20251001")
            path = os.path.join(out, sid, "subagents", f"agent-{agent}.jsonl")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write("\n".join(sub.lines) + "\n")
            s.user([{"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": pool.text(400)}]}],
                   {"toolUseResult": {"status": "completed", "agentId": agent}})
            prompt = turn(rng, pool, s, prompt)
    with open(os.path.join(out, f"{sid}.jsonl"), "w") as f:
        f.write("\n".join(s.lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--size", type=int, default=1_000_000, help="bytes per session file (about)")
    ap.add_argument("--out", default="target/sessions-synth")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    pool = Pool(rng)
    for k in range(a.sessions):
        session(rng, pool, k, a.size, a.out)


if __name__ == "__main__":
    main()
