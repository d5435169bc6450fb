#!/usr/bin/env python3
"""Writes the hand-made session fixtures under fixtures/sessions/ (claude/, codex/): small
sessions in Claude Code's and Codex CLI's log formats, written for this project, each showing
one feature the importer must handle. The known-parameter fixture (known/) is written by
tests/session_known.rs instead.

    python3 scripts/make-session-fixtures.py fixtures/sessions
"""
import json, os, sys
root = sys.argv[1]

class S:
    def __init__(self, sid, cwd="/home/dev/shop", version="2.0.42", day="2025-11-02", logged_sid=None, tag="0000"):
        # `tag`: each file of a session numbers its records apart (uuids are unique in real logs).
        self.sid, self.cwd, self.lines, self.n, self.parent = sid, cwd, [], 0, None
        self.version, self.day, self.logged_sid, self.tag = version, day, logged_sid or sid, tag
    def uid(self):
        self.n += 1
        return f"{self.sid[:8]}-{self.tag}-4000-8000-{self.n:012d}"
    def rec(self, typ, extra, side=False, agent=None):
        u = self.uid()
        r = {"parentUuid": self.parent, "isSidechain": side, "userType": "external", "cwd": self.cwd,
             "sessionId": self.logged_sid, "version": self.version, "gitBranch": "main"}
        if agent: r["agentId"] = agent
        r["type"] = typ
        r.update(extra)
        r["uuid"] = u
        r["timestamp"] = f"{self.day}T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z"
        self.parent = u
        self.lines.append(r)
        return r
    def user(self, content, **kw):
        side = kw.pop("side", False); agent = kw.pop("agent", None)
        return self.rec("user", dict({"message": {"role": "user", "content": content}}, **kw), side, agent)
    def asst(self, mid, blocks, usage, model="claude-sonnet-4-5-20250929", side=False, agent=None):
        # One record per content block, as Claude Code streams them; usage repeated.
        for b in blocks:
            if mid is None:  # an older writer: no message id, no request id
                self.rec("assistant", {"message": {"type": "message", "role": "assistant", "model": model,
                    "content": [b], "usage": dict(usage)}}, side, agent)
                continue
            self.rec("assistant", {"message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                "content": [b], "stop_reason": None, "stop_sequence": None,
                "usage": dict(usage, service_tier="standard")}, "requestId": "req_" + mid[4:]}, side, agent)
    def raw(self, obj):
        self.lines.append(obj)
    def write(self, path, truncate=False):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = "".join(json.dumps(l, ensure_ascii=False, separators=(",", ":")) + "\n" for l in self.lines)
        if truncate:
            text = text + json.dumps(self.lines[-1], separators=(",", ":"))[:80]
        open(path, "w").write(text)

def U(i, cc, cr, o): return {"input_tokens": i, "cache_creation_input_tokens": cc, "cache_read_input_tokens": cr, "output_tokens": o}
def tu(id, name, inp): return {"type": "tool_use", "id": id, "name": name, "input": inp}
def tr(id, content, **kw): return dict({"type": "tool_result", "tool_use_id": id, "content": content}, **kw)
def text(t): return {"type": "text", "text": t}

# 1. plain: two turns, a split response, parallel calls, ignored record types.
s = S("7f3c1e2a-5b6d-4c8e-9f01-a1b2c3d4e5f6")
s.raw({"type": "summary", "summary": "Fix the cart total", "leafUuid": "x"})
s.raw({"type": "file-history-snapshot", "messageId": "m0", "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False})
s.user("The cart total is wrong when a coupon is applied. Find where it is computed.")
s.asst("msg_01PlainA", [text("I'll look at the cart code."), tu("toolu_01A", "Grep", {"pattern": "coupon", "path": "src"})], U(3, 14210, 0, 61))
s.user([tr("toolu_01A", "src/cart.py:42: total -= coupon.amount\nsrc/cart.py:57: if coupon.percent:")], toolUseResult={"mode": "content", "numFiles": 1})
s.asst("msg_01PlainB", [tu("toolu_01B", "Read", {"file_path": "/home/dev/shop/src/cart.py", "offset": 30, "limit": 40})], U(5, 120, 14210, 48))
s.user([tr("toolu_01B", "    30\tdef total(items, coupon):\n    31\t    t = sum(i.price * i.qty for i in items)\n    42\t    total -= coupon.amount\n    57\t    if coupon.percent:\n    58\t        t *= 1 - coupon.percent / 100\n")])
s.asst("msg_01PlainC", [text("The fixed coupon is subtracted before the percentage is applied, so both reduce the total twice on line 42.")], U(5, 160, 14330, 35))
s.user("Check the tests too and the changelog.")
s.asst("msg_01PlainD", [tu("toolu_01C", "Glob", {"pattern": "tests/test_cart*.py"}), tu("toolu_01D", "Grep", {"pattern": "coupon", "path": "CHANGELOG.md"})], U(4, 95, 14490, 70))
s.user([tr("toolu_01C", "tests/test_cart.py")])
s.user([tr("toolu_01D", "No matches found")])
s.asst("msg_01PlainE", [text("There is one test file and no changelog entry about coupons.")], U(6, 80, 14585, 16))
s.write(f"{root}/claude/plain/7f3c1e2a-5b6d-4c8e-9f01-a1b2c3d4e5f6.jsonl")

# 2. deferred: ToolSearch with tool_reference results, then the loaded MCP tool.
s = S("2b9d4f60-1a2b-4c3d-8e4f-5a6b7c8d9e0f")
s.user("File a bug: checkout fails when the coupon field is empty.")
s.asst("msg_01DefA", [tu("toolu_02A", "ToolSearch", {"query": "tracker create issue", "max_results": 5})], U(3, 9120, 0, 40))
s.user([tr("toolu_02A", [{"type": "tool_reference", "tool_name": "mcp__tracker__create_issue"}, {"type": "tool_reference", "tool_name": "mcp__tracker__search_issues"}])])
s.asst("msg_01DefB", [tu("toolu_02B", "mcp__tracker__create_issue", {"project": "SHOP", "title": "Checkout fails with an empty coupon field", "type": "bug"})], U(4, 1010, 9120, 77))
s.user([tr("toolu_02B", [text("Created SHOP-311")])])
s.asst("msg_01DefC", [text("Filed SHOP-311.")], U(4, 120, 10130, 9))
s.user("Is there already a similar bug?")
s.asst("msg_01DefD", [tu("toolu_02C", "mcp__tracker__search_issues", {"query": "coupon checkout"})], U(3, 30, 10250, 38))
s.user([tr("toolu_02C", [text("SHOP-201 Coupon rounding error (closed)")])])
s.asst("msg_01DefE", [text("Only SHOP-201, closed, about rounding.")], U(5, 40, 10280, 14))
s.write(f"{root}/claude/deferred/2b9d4f60-1a2b-4c3d-8e4f-5a6b7c8d9e0f.jsonl")

# 3. subagents in their own files (newer Claude Code).
sid = "c4e8a1d2-3f4b-4a5c-8d6e-7f8091a2b3c4"
s = S(sid)
s.user("Have an agent survey the payment module while you check the README.")
s.asst("msg_01SubA", [tu("toolu_03A", "Task", {"description": "Survey payments", "prompt": "List the payment providers in src/payments and how each is configured.", "subagent_type": "general-purpose"}), tu("toolu_03B", "Read", {"file_path": "/home/dev/shop/README.md"})], U(3, 15020, 0, 96))
s.user([tr("toolu_03B", "# Shop\nA small web shop.\n")])
s.user([tr("toolu_03A", [text("Two providers: stripe (env STRIPE_KEY) and invoice (config/invoice.toml).")])], toolUseResult={"status": "completed", "agentId": "a91f0c2", "totalTokens": 5210})
s.asst("msg_01SubB", [text("Payments use stripe and invoice; the README is short.")], U(6, 150, 15020, 22))
s.write(f"{root}/claude/subagents/{sid}.jsonl")
a = S(sid, tag="a001")
a.user("List the payment providers in src/payments and how each is configured.", side=True, agent="a91f0c2")
a.asst("msg_01AgA", [tu("toolu_03C", "Glob", {"pattern": "src/payments/*.py"})], U(3, 6400, 0, 31), model="claude-haiku-4-5-20251001", side=True, agent="a91f0c2")
a.user([tr("toolu_03C", "src/payments/stripe.py\nsrc/payments/invoice.py")], side=True, agent="a91f0c2")
a.asst("msg_01AgB", [text("Two providers: stripe (env STRIPE_KEY) and invoice (config/invoice.toml).")], U(4, 40, 6400, 25), model="claude-haiku-4-5-20251001", side=True, agent="a91f0c2")
a.write(f"{root}/claude/subagents/{sid}/subagents/agent-a91f0c2.jsonl")

# 4. an inline sidechain (older Claude Code: subagent records in the session file, no agentId).
s = S("d5f9b2e3-4a5c-4b6d-9e7f-8091a2b3c4d5")
s.user("Ask an agent which files import cart.py.")
s.asst("msg_01SideA", [tu("toolu_04A", "Task", {"description": "Find importers", "prompt": "Which files import cart.py?"})], U(3, 15020, 0, 41))
main_parent = s.parent
s.parent = None
s.user("Which files import cart.py?", side=True)
s.asst("msg_01SideB", [tu("toolu_04B", "Grep", {"pattern": "import cart"})], U(3, 6200, 0, 22), side=True)
s.user([tr("toolu_04B", "src/api.py\nsrc/checkout.py")], side=True)
s.asst("msg_01SideC", [text("src/api.py and src/checkout.py import it.")], U(4, 30, 6200, 12), side=True)
s.parent = main_parent
s.user([tr("toolu_04A", [text("src/api.py and src/checkout.py import it.")])])
s.asst("msg_01SideD", [text("api.py and checkout.py import cart.py.")], U(6, 60, 15020, 14))
s.write(f"{root}/claude/sidechain/d5f9b2e3-4a5c-4b6d-9e7f-8091a2b3c4d5.jsonl")

# 5. compaction and /clear.
s = S("e6a0c3f4-5b6d-4c7e-8f90-a1b2c3d4e5f7")
s.user("Rename the Coupon class to Discount everywhere.")
s.asst("msg_01CmpA", [tu("toolu_05A", "Grep", {"pattern": "class Coupon"})], U(3, 14200, 0, 30))
s.user([tr("toolu_05A", "src/coupon.py:3:class Coupon:")])
s.asst("msg_01CmpB", [text("It is defined in src/coupon.py.")], U(4, 60, 14200, 11))
s.rec("system", {"content": "Conversation compacted", "subtype": "compact_boundary", "level": "info", "isMeta": False, "compactMetadata": {"trigger": "manual", "preTokens": 14290}})
s.user("This session is being continued from a previous conversation. Summary: the user wants Coupon renamed to Discount; it is defined in src/coupon.py.", isCompactSummary=True, isVisibleInTranscriptOnly=True)
s.user("Go ahead with the rename.")
s.asst("msg_01CmpC", [tu("toolu_05B", "Edit", {"file_path": "/home/dev/shop/src/coupon.py", "old_string": "class Coupon:", "new_string": "class Discount:"})], U(3, 14150, 0, 64))
s.user([tr("toolu_05B", "The file /home/dev/shop/src/coupon.py has been updated.")])
s.asst("msg_01CmpD", [text("Renamed.")], U(5, 90, 14150, 4))
s.user("<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>")
s.user("What does the checkout page show after payment?")
s.asst("msg_01CmpE", [tu("toolu_05C", "Read", {"file_path": "/home/dev/shop/templates/done.html"})], U(3, 14190, 0, 33))
s.user([tr("toolu_05C", "<h1>Thank you</h1>")])
s.asst("msg_01CmpF", [text("A thank-you heading.")], U(5, 30, 14190, 7))
s.write(f"{root}/claude/compaction/e6a0c3f4-5b6d-4c7e-8f90-a1b2c3d4e5f7.jsonl")

# 6. truncated last line (a session still being written).
s = S("f7b1d4a5-6c7e-4d8f-9a01-b2c3d4e5f6a7")
s.user("How many products are in the seed data?")
s.asst("msg_01TrA", [tu("toolu_06A", "Bash", {"command": "wc -l seed/products.csv", "description": "Count seed rows"})], U(3, 14220, 0, 44))
s.user([tr("toolu_06A", "101 seed/products.csv")])
s.asst("msg_01TrB", [text("100 products (101 lines with the header).")], U(4, 60, 14220, 15))
s.user("And categories?")
s.write(f"{root}/claude/truncated/f7b1d4a5-6c7e-4d8f-9a01-b2c3d4e5f6a7.jsonl", truncate=True)

# 8. records with neither message.id nor uuid (an older writer): each response its own request.
s = S("a1c2e3f4-0b1d-4e2f-8a3b-4c5d6e7f8091")
s.user("Which Python version does the project pin?")
s.asst(None, [tu("toolu_08A", "Read", {"file_path": "/home/dev/shop/.python-version"})], U(3, 13900, 0, 30))
s.user([tr("toolu_08A", "3.12.4")])
s.asst(None, [text("It pins Python 3.12.4.")], U(4, 40, 13900, 9))
s.user("And the lock file, is it current?")
s.asst(None, [text("Yes: poetry.lock was regenerated with the same pins.")], U(4, 30, 13940, 14))
for r in s.lines:
    del r["uuid"]
    r.pop("parentUuid", None)
s.write(f"{root}/claude/nokeys/a1c2e3f4-0b1d-4e2f-8a3b-4c5d6e7f8091.jsonl")

# 9. records with no top-level type (an exporter that keeps only the message): read by role.
s = S("b2d3f4a5-1c2e-4f3a-9b4c-5d6e7f809102")
s.user("Count the migrations.")
s.asst("msg_01UntA", [tu("toolu_09A", "Glob", {"pattern": "migrations/*.sql"})], U(3, 13800, 0, 28))
s.user([tr("toolu_09A", "migrations/001_init.sql\nmigrations/002_coupons.sql")])
s.asst("msg_01UntB", [text("Two migrations.")], U(4, 50, 13800, 6))
for r in s.lines[1:]:
    del r["type"]
s.raw({"note": "not a session record"})
s.write(f"{root}/claude/untyped/b2d3f4a5-1c2e-4f3a-9b4c-5d6e7f809102.jsonl")

# 10. a tool use refused by the user: the marker ends the turn, the next prompt opens one.
s = S("c3e4a5b6-2d3f-4a4b-8c5d-6e7f80910213")
s.user("Run the test suite.")
s.asst("msg_01IntA", [tu("toolu_10A", "Bash", {"command": "pytest -x", "description": "Run the tests"})], U(3, 14100, 0, 35))
s.user([tr("toolu_10A", "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.", is_error=True)])
s.user([text("[Request interrupted by user for tool use]")])
s.user("Use the make target instead, it sets the database URL.")
s.asst("msg_01IntB", [tu("toolu_10B", "Bash", {"command": "make test", "description": "Run the tests through make"})], U(4, 260, 14100, 33))
s.user([tr("toolu_10B", "41 passed in 3.2s")])
s.asst("msg_01IntC", [text("All 41 tests pass.")], U(5, 60, 14360, 8))
s.user("Thanks. Which one is slowest?")
s.asst("msg_01IntD", [text("test_checkout_flow, at 1.1 s.")], U(5, 40, 14420, 12))
s.write(f"{root}/claude/interrupted/c3e4a5b6-2d3f-4a4b-8c5d-6e7f80910213.jsonl")

# 11. a Claude Code 1.0 log: the shell-kill tool was KillBash then (KillShell later).
s = S("d4f5b6c7-3e4a-4b5c-9d6e-7f8091021324", version="1.0.98")
s.user("Start the dev server, check it answers, then stop it.")
s.asst("msg_01V1A", [tu("toolu_11A", "Bash", {"command": "npm run dev", "description": "Start the dev server", "run_in_background": True})], U(3, 13600, 0, 40))
s.user([tr("toolu_11A", "Command running in background with ID: bash_1")])
s.asst("msg_01V1B", [tu("toolu_11B", "BashOutput", {"bash_id": "bash_1"})], U(4, 80, 13600, 20))
s.user([tr("toolu_11B", "ready on http://localhost:5173")])
s.asst("msg_01V1C", [tu("toolu_11C", "KillBash", {"shell_id": "bash_1"})], U(4, 60, 13680, 18))
s.user([tr("toolu_11C", "Successfully killed shell: bash_1")])
s.asst("msg_01V1D", [text("The server came up on port 5173 and is stopped again.")], U(5, 50, 13740, 15))
s.write(f"{root}/claude/v1/d4f5b6c7-3e4a-4b5c-9d6e-7f8091021324.jsonl")

# 12. a resumed session: the second file copies the first one's history (same uuids, message
# ids and request ids) and keeps its session id, then goes on; its subagent sits in its own
# folder and carries that session id too.
first = "e5a6c7d8-4f5b-4c6d-8e7f-809102132435"
second = "f6b7d8e9-5a6c-4d7e-9f80-910213243546"
a = S(first, day="2025-11-04")
a.user("Add a discount code field to the checkout form.")
a.asst("msg_01ResA", [tu("toolu_12A", "Read", {"file_path": "/home/dev/shop/templates/checkout.html"})], U(3, 14300, 0, 31))
a.user([tr("toolu_12A", "<form id=\"checkout\"></form>")])
a.asst("msg_01ResB", [tu("toolu_12B", "Edit", {"file_path": "/home/dev/shop/templates/checkout.html", "old_string": "</form>", "new_string": "<input name=\"code\"></form>"})], U(4, 120, 14300, 60))
a.user([tr("toolu_12B", "The file /home/dev/shop/templates/checkout.html has been updated.")])
a.asst("msg_01ResC", [text("The form has a code field now.")], U(5, 90, 14420, 9))
a.write(f"{root}/claude/resumed/{first}.jsonl")
b = S(second, day="2025-11-04", logged_sid=first)
b.lines = [dict(r) for r in a.lines]
b.n, b.parent = 100, a.parent
b.user("Now have an agent check the server side accepts the code.")
b.asst("msg_01ResD", [tu("toolu_12C", "Task", {"description": "Check the handler", "prompt": "Does the checkout handler read a `code` field?", "subagent_type": "explorer"})], U(3, 14700, 0, 44))
b.user([tr("toolu_12C", [text("No: handlers/checkout.py ignores it.")])], toolUseResult={"status": "completed", "agentId": "b77c1e0", "totalTokens": 4100})
b.asst("msg_01ResE", [text("The handler ignores the field; it needs reading in handlers/checkout.py.")], U(4, 80, 14700, 20))
b.write(f"{root}/claude/resumed/{second}.jsonl")
g = S(second, day="2025-11-04", logged_sid=first, tag="a001")
g.n = 200
g.user("Does the checkout handler read a `code` field?", side=True, agent="b77c1e0")
g.asst("msg_01ResAg", [tu("toolu_12D", "Grep", {"pattern": "code", "path": "handlers/checkout.py"})], U(3, 6100, 0, 25), model="claude-haiku-4-5-20251001", side=True, agent="b77c1e0")
g.user([tr("toolu_12D", "No matches found")], side=True, agent="b77c1e0")
g.asst("msg_01ResAh", [text("No: handlers/checkout.py ignores it.")], U(4, 30, 6100, 10), model="claude-haiku-4-5-20251001", side=True, agent="b77c1e0")
g.write(f"{root}/claude/resumed/{second}/subagents/agent-b77c1e0.jsonl")

# 13. a fork: the second session copies the first one's opening turn (marked forkedFrom, its
# own session id) and both go on from there.
orig = "a7c8e9f0-6b7d-4e8f-8091-021324354657"
fork = "b8d9f0a1-7c8e-4f90-9102-132435465768"
a = S(orig, day="2025-11-05")
a.user("List the payment providers.")
a.asst("msg_01ForkA", [tu("toolu_13A", "Glob", {"pattern": "src/payments/*.py"})], U(3, 14200, 0, 27))
a.user([tr("toolu_13A", "src/payments/stripe.py\nsrc/payments/invoice.py")])
a.asst("msg_01ForkB", [text("Stripe and invoice.")], U(4, 50, 14200, 7))
cut = len(a.lines)
a.user("Make invoice the default.")
a.asst("msg_01ForkC", [tu("toolu_13B", "Edit", {"file_path": "/home/dev/shop/src/payments/__init__.py", "old_string": "DEFAULT = 'stripe'", "new_string": "DEFAULT = 'invoice'"})], U(4, 90, 14250, 52))
a.user([tr("toolu_13B", "The file /home/dev/shop/src/payments/__init__.py has been updated.")])
a.asst("msg_01ForkD", [text("Invoice is the default now.")], U(5, 70, 14340, 8))
a.write(f"{root}/claude/forked/{orig}.jsonl")
c = S(fork, day="2025-11-05")
c.lines = [dict(r, sessionId=fork, forkedFrom={"sessionId": orig, "messageUuid": r["uuid"]}) for r in a.lines[:cut]]
c.n, c.parent = 100, a.lines[cut - 1]["uuid"]
c.user("Remove the invoice provider instead.")
c.asst("msg_01ForkE", [tu("toolu_13C", "Bash", {"command": "git rm src/payments/invoice.py", "description": "Remove the invoice provider"})], U(4, 100, 14250, 30))
c.user([tr("toolu_13C", "rm 'src/payments/invoice.py'")])
c.asst("msg_01ForkF", [text("Removed.")], U(5, 60, 14350, 4))
c.write(f"{root}/claude/forked/{fork}.jsonl")

# 14. a warm-up subagent (Claude Code primes its agents' cache with "Warmup") on another model
# (Haiku through Bedrock), and a Task subagent on Haiku too.
sid = "c9e0a1b2-8d9f-4a01-a213-243546576879"
s = S(sid, day="2025-11-06")
s.user("Have an agent find the slowest endpoint.")
s.asst("msg_01WarmA", [tu("toolu_14A", "Task", {"description": "Find slow endpoint", "prompt": "Which endpoint in the access log is slowest?", "subagent_type": "explorer"})], U(3, 15100, 0, 40))
s.user([tr("toolu_14A", [text("GET /cart, 840 ms at p95.")])], toolUseResult={"status": "completed", "agentId": "c31d5e2", "totalTokens": 5000})
s.asst("msg_01WarmB", [text("GET /cart is slowest: 840 ms at p95.")], U(4, 70, 15100, 14))
s.write(f"{root}/claude/warmup/{sid}.jsonl")
w = S(sid, day="2025-11-06", tag="a001")
w.user("Warmup", side=True, agent="a0warm1")
w.asst("msg_01WarmW", [text("Ready.")], U(6, 5200, 0, 3), model="us.anthropic.claude-haiku-4-5-20251001-v1:0", side=True, agent="a0warm1")
w.write(f"{root}/claude/warmup/{sid}/subagents/agent-a0warm1.jsonl")
t = S(sid, day="2025-11-06", tag="a002")
t.n = 50
t.user("Which endpoint in the access log is slowest?", side=True, agent="c31d5e2")
t.asst("msg_01WarmT", [tu("toolu_14B", "Grep", {"pattern": "p95", "path": "logs/access.log"})], U(3, 6300, 0, 22), model="us.anthropic.claude-haiku-4-5-20251001-v1:0", side=True, agent="c31d5e2")
t.user([tr("toolu_14B", "GET /cart p95=840ms\nGET /search p95=410ms")], side=True, agent="c31d5e2")
t.asst("msg_01WarmU", [text("GET /cart, 840 ms at p95.")], U(4, 40, 6300, 11), model="us.anthropic.claude-haiku-4-5-20251001-v1:0", side=True, agent="c31d5e2")
t.write(f"{root}/claude/warmup/{sid}/subagents/agent-c31d5e2.jsonl")


# 15. a session Claude Code resumed by rewriting its history into the same file: after the first
# run ends, the history from the second request on is written again with new uuids (re-parented
# onto the first request's last result, the original timestamps, the same message, request and
# tool_use ids, a response split over records differently, a user text as a block), then the
# new turn goes on from the first run's last record.
sid = "d1e2f3a4-9b0c-4d1e-a324-354657687981"
s = S(sid, day="2025-11-07")
s.user("Rename the `total` helper to `cart_total` everywhere.")
s.asst("msg_01RifA", [text("I'll find its uses."), tu("toolu_15A", "Grep", {"pattern": "total(", "path": "src"}), tu("toolu_15B", "Glob", {"pattern": "tests/test_*.py"})], U(3, 14400, 0, 70))
s.user([tr("toolu_15A", "src/cart.py:12: def total(items):\nsrc/checkout.py:40: t = total(items)")])
s.user([tr("toolu_15B", "tests/test_cart.py")])
resume_at = s.parent
first = len(s.lines)
# One record holding both blocks (the copy splits them).
s.rec("assistant", {"message": {"id": "msg_01RifB", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
    "content": [text("Two files use it; editing."), tu("toolu_15C", "Edit", {"file_path": "/home/dev/shop/src/cart.py", "old_string": "def total(", "new_string": "def cart_total("})],
    "stop_reason": None, "stop_sequence": None, "usage": dict(U(4, 160, 14400, 58), service_tier="standard")}, "requestId": "req_01RifB"})
s.user([tr("toolu_15C", "The file /home/dev/shop/src/cart.py has been updated.")])
s.user("<command-message>check is running…</command-message>\n<command-name>/check</command-name>")
s.asst("msg_01RifC", [tu("toolu_15D", "Bash", {"command": "pytest -q", "description": "Run the tests"})], U(4, 120, 14560, 30))
s.user([tr("toolu_15D", "12 passed in 0.41s")])
s.asst("msg_01RifD", [text("Renamed; the tests pass.")], U(5, 40, 14680, 8))
end = s.rec("system", {"subtype": "stop_hook_summary", "content": "", "level": "info"})["uuid"]
copy = []
for r in s.lines[first:]:
    if r.get("type") == "system":
        break
    m = r["message"]
    if r["type"] == "assistant" and len(m["content"]) > 1:
        copy += [dict(r, message=dict(m, content=[b])) for b in m["content"]]
    elif r["type"] == "user" and isinstance(m["content"], str):
        copy.append(dict(r, message=dict(m, content=[text(m["content"])])))
    else:
        copy.append(dict(r))
s.parent = resume_at
for r in copy:
    u = s.uid()
    s.lines.append(dict(r, uuid=u, parentUuid=s.parent))
    s.parent = u
s.parent = end
s.user("Also rename it in the docs.")
s.asst("msg_01RifE", [tu("toolu_15E", "Edit", {"file_path": "/home/dev/shop/docs/cart.md", "old_string": "total(", "new_string": "cart_total("})], U(3, 200, 14720, 52))
s.user([tr("toolu_15E", "The file /home/dev/shop/docs/cart.md has been updated.")])
s.asst("msg_01RifF", [text("The docs say cart_total now.")], U(4, 60, 14920, 9))
s.write(f"{root}/claude/resumed-in-file/{sid}.jsonl")
# 17. searches of both forms: a select: query, a keyword search whose result lists no tool
# (the next call labels it), and one after which nothing was called.
s = S("d0f1b2c3-9e0a-4b12-b324-354657687980", day="2025-11-07")
s.user("Show me SHOP-201, then note on it that the fix shipped.")
s.asst("msg_01SelA", [tu("toolu_17A", "ToolSearch", {"query": "select:mcp__tracker__get_issue", "max_results": 1})], U(3, 9100, 0, 30))
s.user([tr("toolu_17A", [{"type": "tool_reference", "tool_name": "mcp__tracker__get_issue"}])])
s.asst("msg_01SelB", [tu("toolu_17B", "mcp__tracker__get_issue", {"key": "SHOP-201"})], U(4, 400, 9100, 25))
s.user([tr("toolu_17B", [text("SHOP-201 Coupon rounding error (closed)")])])
s.asst("msg_01SelC", [tu("toolu_17C", "ToolSearch", {"query": "comment on an issue", "max_results": 5})], U(4, 60, 9500, 28))
s.user([tr("toolu_17C", "Loaded: mcp__tracker__add_comment")])
s.asst("msg_01SelD", [tu("toolu_17D", "mcp__tracker__add_comment", {"key": "SHOP-201", "body": "The fix shipped in 2.4."})], U(4, 500, 9560, 40))
s.user([tr("toolu_17D", [text("Comment added")])])
s.asst("msg_01SelE", [text("Noted on SHOP-201.")], U(5, 30, 10060, 6))
s.user("Who is on call for payments this week?")
s.asst("msg_01SelF", [tu("toolu_17E", "ToolSearch", {"query": "on-call rota pager", "max_results": 5})], U(4, 40, 10090, 26))
s.user([tr("toolu_17E", "No matching deferred tools found")])
s.asst("msg_01SelG", [text("No tool here knows the on-call rota; check the team calendar.")], U(5, 60, 10130, 15))
s.write(f"{root}/claude/searches/d0f1b2c3-9e0a-4b12-b324-354657687980.jsonl")

# 7. Codex rollout.
lines = []
def L(ts, typ, payload): lines.append({"timestamp": f"2025-11-03T09:00:{ts:02d}.000Z", "type": typ, "payload": payload})
L(0, "session_meta", {"id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "timestamp": "2025-11-03T09:00:00.000Z", "cwd": "/home/dev/shop", "originator": "codex_cli_rs", "cli_version": "0.58.0", "instructions": None})
L(1, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n</environment_context>"}]})
L(1, "turn_context", {"cwd": "/home/dev/shop", "approval_policy": "on-request", "model": "gpt-5-codex", "effort": "medium", "summary": "auto"})
L(2, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "How many tests are there?"}]})
L(2, "event_msg", {"type": "user_message", "message": "How many tests are there?", "images": []})
L(3, "event_msg", {"type": "token_count", "info": None, "rate_limits": {"primary": {"used_percent": 1.0}}})
L(4, "response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Counting tests**"}], "content": None, "encrypted_content": "gAAAAB"})
L(4, "response_item", {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"bash\",\"-lc\",\"grep -c 'def test_' tests/*.py\"]}", "call_id": "call_aB1"})
L(5, "event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 5210, "cached_input_tokens": 0, "output_tokens": 64, "reasoning_output_tokens": 32, "total_tokens": 5274}, "last_token_usage": {"input_tokens": 5210, "cached_input_tokens": 0, "output_tokens": 64, "reasoning_output_tokens": 32, "total_tokens": 5274}, "model_context_window": 272000}, "rate_limits": None})
L(6, "response_item", {"type": "function_call_output", "call_id": "call_aB1", "output": "{\"output\":\"tests/test_cart.py:7\\ntests/test_api.py:4\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"})
L(7, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "11 tests: 7 in test_cart.py and 4 in test_api.py."}]})
L(7, "event_msg", {"type": "agent_message", "message": "11 tests: 7 in test_cart.py and 4 in test_api.py."})
L(8, "event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 10590, "cached_input_tokens": 5120, "output_tokens": 86, "reasoning_output_tokens": 32, "total_tokens": 10676}, "last_token_usage": {"input_tokens": 5380, "cached_input_tokens": 5120, "output_tokens": 22, "reasoning_output_tokens": 0, "total_tokens": 5402}, "model_context_window": 272000}, "rate_limits": None})
L(8, "event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 10590, "cached_input_tokens": 5120, "output_tokens": 86, "reasoning_output_tokens": 32, "total_tokens": 10676}, "last_token_usage": {"input_tokens": 5380, "cached_input_tokens": 5120, "output_tokens": 22, "reasoning_output_tokens": 0, "total_tokens": 5402}, "model_context_window": 272000}, "rate_limits": {"primary": {"used_percent": 2.0}}})
p = f"{root}/codex/2025/11/03/rollout-2025-11-03T09-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
os.makedirs(os.path.dirname(p), exist_ok=True)
open(p, "w").write("".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines))

# 15. Codex CLI 0.128: the system prompt in session_meta.base_instructions, developer, AGENTS.md
# and environment messages before the first prompt, prompts as an item and an event, unified
# exec, a namespaced MCP call, a freeform apply_patch beside update_plan, a server-side web
# search, a compaction with its replacement history, and Codex's own tool search.
lines = []
def C(t, typ, payload, day="2026-01-15"): lines.append({"timestamp": f"{day}T10:{t // 60:02d}:{t % 60:02d}.000Z", "type": typ, "payload": payload})
def tc(inp, cached, out, tot):
    last = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out, "reasoning_output_tokens": 0, "total_tokens": inp + out}
    return {"type": "token_count", "info": {"total_token_usage": dict(last, input_tokens=tot), "last_token_usage": last, "model_context_window": 272000}, "rate_limits": None}
sid = "019b2c3d-4e5f-7a6b-8c7d-9e0f1a2b3c4d"
C(0, "session_meta", {"id": sid, "timestamp": "2026-01-15T10:00:00.000Z", "cwd": "/home/dev/shop", "originator": "codex_cli_rs", "cli_version": "0.128.0", "source": "cli", "model_provider": "openai",
    "base_instructions": {"text": "You are a coding agent working in the user's terminal. Read the code before changing it, keep edits small, run the tests you touch, and say plainly what you changed and what you did not check."}})
C(0, "response_item", {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions instructions>\nCommands run in a sandbox that can write inside the workspace only. Ask before anything that needs the network.\n</permissions instructions>"}]})
C(0, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "# AGENTS.md instructions for /home/dev/shop\n\n<INSTRUCTIONS>\nRun `make test` before committing. Money amounts are integers in cents.\n</INSTRUCTIONS>"}]})
C(0, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n  <shell>bash</shell>\n</environment_context>"}]})
C(1, "turn_context", {"cwd": "/home/dev/shop", "approval_policy": "on-request", "model": "gpt-5.2-codex", "effort": "medium", "summary": "auto"})
C(1, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "The coupon total is wrong; find it and fix it."}]})
C(1, "event_msg", {"type": "user_message", "message": "The coupon total is wrong; find it and fix it.", "images": []})
C(2, "event_msg", {"type": "token_count", "info": None, "rate_limits": {"primary": {"used_percent": 3.0}}})
C(3, "response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Looking for the coupon code**"}], "content": None, "encrypted_content": "gAAAAC"})
C(3, "response_item", {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"rg -n coupon src\",\"workdir\":\"/home/dev/shop\"}", "call_id": "call_x1"})
C(4, "event_msg", tc(9120, 0, 48, 9120))
C(5, "response_item", {"type": "function_call_output", "call_id": "call_x1", "output": "Chunk ID: 1a2b\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\nsrc/cart.py:42:    total -= coupon.amount\nsrc/cart.py:57:    if coupon.percent:\n"})
C(6, "response_item", {"type": "function_call", "name": "js", "namespace": "mcp__node_repl__", "arguments": "{\"code\":\"(1000 - 250) * 0.9\"}", "call_id": "call_x2"})
C(7, "event_msg", tc(9260, 9088, 31, 18380))
C(8, "response_item", {"type": "function_call_output", "call_id": "call_x2", "output": "675"})
C(9, "response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "call_x3", "name": "apply_patch", "input": "*** Begin Patch\n*** Update File: src/cart.py\n@@\n-    total -= coupon.amount\n+    total = total * (1 - coupon.percent / 100) - coupon.amount\n*** End Patch\n"})
C(9, "response_item", {"type": "function_call", "name": "update_plan", "arguments": "{\"plan\":[{\"step\":\"Fix the order of discounts\",\"status\":\"completed\"},{\"step\":\"Run the tests\",\"status\":\"in_progress\"}]}", "call_id": "call_x4"})
C(10, "event_msg", tc(9330, 9216, 120, 27710))
C(11, "response_item", {"type": "custom_tool_call_output", "call_id": "call_x3", "output": "{\"output\":\"Success. Updated the following files:\\nM src/cart.py\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.0}}"})
C(11, "response_item", {"type": "function_call_output", "call_id": "call_x4", "output": "Plan updated"})
C(12, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "The percentage now applies before the fixed amount; 1000 cents with 10% and 250 off gives 650."}]})
C(12, "event_msg", {"type": "agent_message", "message": "The percentage now applies before the fixed amount; 1000 cents with 10% and 250 off gives 650."})
C(13, "event_msg", tc(9520, 9344, 38, 37230))
C(20, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Is that how other shops round coupons?"}]})
C(20, "event_msg", {"type": "user_message", "message": "Is that how other shops round coupons?", "images": []})
C(21, "response_item", {"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "coupon percent before fixed discount rounding"}})
C(22, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Most apply the percentage first and round each line to the cent."}]})
C(23, "event_msg", tc(9600, 9472, 90, 46830))
C(30, "compacted", {"message": "Summary: the coupon order was fixed in src/cart.py (percentage first, then the fixed amount).",
    "replacement_history": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "The coupon total is wrong; find it and fix it."}]}]})
C(31, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "File an issue about the old behaviour."}]})
C(31, "event_msg", {"type": "user_message", "message": "File an issue about the old behaviour.", "images": []})
C(32, "response_item", {"type": "tool_search_call", "call_id": "call_s1", "status": "completed", "execution": "client", "arguments": {"query": "tracker create issue", "limit": 5}})
C(33, "event_msg", tc(2410, 0, 25, 49240))
C(34, "response_item", {"type": "tool_search_output", "call_id": "call_s1", "status": "completed", "execution": "client", "tools": [{"type": "namespace", "name": "mcp__tracker__", "tools": [{"type": "function", "name": "create_issue", "parameters": {"type": "object"}}, {"type": "function", "name": "search_issues", "parameters": {"type": "object"}}]}]})
C(35, "response_item", {"type": "function_call", "name": "create_issue", "namespace": "mcp__tracker__", "arguments": "{\"project\":\"SHOP\",\"title\":\"Coupons applied the fixed amount before the percentage\"}", "call_id": "call_x5"})
C(36, "event_msg", tc(3120, 2304, 41, 52360))
C(37, "response_item", {"type": "function_call_output", "call_id": "call_x5", "output": "Created SHOP-342"})
C(38, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Filed SHOP-342."}]})
C(39, "event_msg", tc(3190, 3072, 9, 55550))
p = f"{root}/codex/2026/01/15/rollout-2026-01-15T10-00-00-{sid}.jsonl"
os.makedirs(os.path.dirname(p), exist_ok=True)
open(p, "w").write("".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines))

# 16. Codex Desktop: prompts only as event_msg user_message, the system prompt as a string,
# a dynamic tool of the app's own namespace, and a turn the user stopped.
lines = []
sid = "019b3d4e-5f60-7b7c-8d9e-0f1a2b3c4d5e"
C(0, "session_meta", {"id": sid, "timestamp": "2026-01-16T09:00:00.000Z", "cwd": "/home/dev/shop", "originator": "Codex Desktop", "cli_version": "0.129.0", "source": "vscode", "model_provider": "openai",
    "base_instructions": "You are a coding agent inside a desktop app. Prefer showing the user files in the editor over pasting them.",
    "dynamic_tools": [{"name": "open_in_editor", "description": "Opens a file of the workspace in the app's editor at a line.", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "line": {"type": "number"}}, "required": ["path"]}, "namespace": "codex_app", "deferLoading": False}]}, day="2026-01-16")
C(0, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n</environment_context>"}]}, day="2026-01-16")
C(1, "turn_context", {"cwd": "/home/dev/shop", "approval_policy": "on-request", "model": "gpt-5.2-codex", "summary": "auto"}, day="2026-01-16")
C(1, "event_msg", {"type": "user_message", "message": "Show me where refunds are computed.", "images": []}, day="2026-01-16")
C(2, "response_item", {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"rg -ln refund src\"}", "call_id": "call_d1"}, day="2026-01-16")
C(3, "event_msg", tc(6140, 0, 30, 6140), day="2026-01-16")
C(4, "response_item", {"type": "function_call_output", "call_id": "call_d1", "output": "src/refunds.py\n"}, day="2026-01-16")
C(5, "response_item", {"type": "function_call", "name": "open_in_editor", "namespace": "codex_app", "arguments": "{\"path\":\"src/refunds.py\",\"line\":12}", "call_id": "call_d2"}, day="2026-01-16")
C(6, "event_msg", tc(6230, 6016, 24, 12370), day="2026-01-16")
C(7, "response_item", {"type": "function_call_output", "call_id": "call_d2", "output": "opened"}, day="2026-01-16")
C(8, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Refunds are computed in src/refunds.py, opened at line 12."}]}, day="2026-01-16")
C(9, "event_msg", tc(6290, 6144, 17, 18660), day="2026-01-16")
C(20, "event_msg", {"type": "user_message", "message": "Now run the refund tests.", "images": []}, day="2026-01-16")
C(21, "response_item", {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"make test-refunds\"}", "call_id": "call_d3"}, day="2026-01-16")
C(22, "event_msg", tc(6360, 6272, 22, 25020), day="2026-01-16")
C(23, "response_item", {"type": "function_call_output", "call_id": "call_d3", "output": "aborted by user"}, day="2026-01-16")
C(23, "event_msg", {"type": "turn_aborted", "reason": "interrupted"}, day="2026-01-16")
C(30, "event_msg", {"type": "user_message", "message": "Only the fast ones, please.", "images": []}, day="2026-01-16")
C(31, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Run `make test-refunds FAST=1`: it skips the slow ledger tests."}]}, day="2026-01-16")
C(32, "event_msg", tc(6420, 6336, 19, 31440), day="2026-01-16")
p = f"{root}/codex/desktop/rollout-2026-01-16T09-00-00-{sid}.jsonl"
os.makedirs(os.path.dirname(p), exist_ok=True)
open(p, "w").write("".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines))
