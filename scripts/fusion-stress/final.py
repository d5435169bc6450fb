"""The fusion tables (docs/decisions/0001-hybrid-fusion-by-lead-in-spread.md): recall@5 (and
MRR@10) of every candidate on every dev set and setting, intact and with one list replaced by
noise. Writes final.json beside the dumps."""
import json
import os

import fusions as F
from common import SETS, WORK, load, metrics, variants

CANDIDATES = {
    "bm25": F.only_bm25,
    "semantic": F.only_sem,
    "default: lead in spread .5/.5": F.spread_blend(),
    "previous: lead blend .4/.6": F.previous_blend(),
    "rrf k60": F.rrf(),
    "minmax .5/.5": F.minmax(),
}
VARIANTS = ["intact", "sem_flat", "sem_shuffled", "bm25_flat", "bm25_shuffled", "bm25_empty"]

res = {}
for setting in ("own", "pooled"):
    for name in SETS:
        if not os.path.exists(os.path.join(WORK, f"{name}.{setting}.json")):
            continue
        data = load(name, setting)
        for vn, rows in variants(name, data).items():
            for cn, f in CANDIDATES.items():
                res[(setting, name, vn, cn)] = metrics(rows, f)
json.dump({"|".join(k): v for k, v in res.items()}, open(os.path.join(WORK, "final.json"), "w"), indent=0)
SHORT = {"bfcl": "BFCL", "stabletoolbench": "STB", "mcp-devops": "devops", "mcp-desktop": "desktop"}
for setting in ("own", "pooled"):
    names = [n for n in SETS if (setting, n, "intact", "bm25") in res]
    for title, cols in (("one list replaced by flat noise", ["intact", "sem_flat", "bm25_flat"]),
                        ("one list's real score profile put on random tools", ["sem_shuffled", "bm25_shuffled"])):
        print(f"\nrecall@5, {setting}: {title}")
        print("| fusion | " + " | ".join(f"{SHORT[n]} {v}" for n in names for v in cols) + " |")
        print("|---|" + "---:|" * (len(names) * len(cols)))
        for cn in CANDIDATES:
            cells = [f"{res[(setting, n, v, cn)][0]:.3f}" for n in names for v in cols]
            print(f"| {cn} | " + " | ".join(cells) + " |")
