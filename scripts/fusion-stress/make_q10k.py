"""The 100 synthetic queries of the README's stress table: a seeded sample of the generated
10,000-tool catalog's tools, each queried by the first 8 words of its description.
usage: make_q10k.py CATALOG OUT"""
import json, random, sys

cat, out = sys.argv[1], sys.argv[2]
c = json.load(open(cat))
tools = [(t["name"], s["name"], t.get("description", "")) for s in c["servers"] for t in s["tools"]]
random.seed(1)
with open(out, "w") as f:
    for i, (name, server, desc) in enumerate(random.sample(tools, 100)):
        f.write(json.dumps({"id": f"q{i}", "query": " ".join(desc.split()[:8]),
                            "expected": [f"mcp__{server}__{name}"]}) + "\n")
