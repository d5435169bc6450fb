"""Final comparison table: recall@5 and MRR, every set and stress variant. Writes final.json."""
import json, os
from common import WORK
import evaluate as E, fusions as F
sets = ["bfcl", "stabletoolbench", "synthetic", "synthetic1k"]
c = {
    "bm25": F.only_bm25,
    "semantic": F.only_sem,
    "previous default .3/.7": F.blend(0.3, 0.7),
    "default: lead blend floor 20, .4/.6": F.excess(0.4, 0.6, 20, 20),
        "runner-up excess b20 s30 wb.4": F.excess(0.4, 0.6, 20, 30),
    "runner-up blend .4/.6": F.blend(0.4, 0.6),
    "rrf k60": F.rrf(60),
}
vn = ["intact", "sem_flat", "sem_flat_same", "sem_shuffled", "bm25_flat", "bm25_empty", "bm25_shuffled"]
res = E.main(sets, c, vn)
json.dump({"|".join(k): v for k, v in res.items()}, open(os.path.join(WORK, "final.json"), "w"), indent=0)
for i, m in enumerate(("recall@5", "MRR")):
    print("=====", m)
    for s in sets:
        E.table(res, [s], vn, list(c), i)
