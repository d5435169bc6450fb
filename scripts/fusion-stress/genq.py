"""Make a held-out synthetic query set in the style of q10k.jsonl (see make_q10k.py) (first sentence of a
tool's description, sometimes followed by the first 3-5 words of the second), seeded.
usage: genq.py CATALOG OUT N SEED"""
import json, random, re, sys
cat, out, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
c = json.load(open(cat))
tools = [(s["name"], t) for s in c["servers"] for t in s["tools"]]
picked = rng.sample(tools, n)
with open(out, "w") as f:
    for i, (srv, t) in enumerate(picked):
        sents = re.split(r"(?<=\.)\s+", t.get("description", "").strip())
        q = sents[0]
        if len(sents) > 1 and rng.random() < 0.6:
            q += " " + " ".join(sents[1].split()[: rng.randint(3, 5)])
        f.write(json.dumps({"id": f"q{i}", "query": q, "expected": [f"mcp__{srv}__{t['name']}"]}) + "\n")
