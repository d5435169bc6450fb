"""Evaluate fusion candidates on every set and stress variant.
usage: evaluate.py [set ...]   (prints recall@5 / MRR tables)"""
import sys
from common import SETS, load, variants, metrics, ids_from_dumps
import fusions as F

def candidates():
    return {
        "bm25": F.only_bm25,
        "semantic": F.only_sem,
        "blend .3/.7 (current)": F.blend(0.3, 0.7),
        "rrf k60": F.rrf(60),
    }

def main(names, cands=None, variant_names=None):
    cands = cands or candidates()
    res = {}
    for name in names:
        data = load(name)
        pool = ids_from_dumps(name)  # every tool seen in any dump: the pool for random stress lists
        for vn, rows in variants(name, data, pool).items():
            if variant_names and vn not in variant_names:
                continue
            for cn, f in cands.items():
                res[(name, vn, cn)] = metrics(rows, f)
    return res

def table(res, names, vnames, cnames, which=0):
    cols = [(n, v) for n in names for v in vnames]
    w = max(len(c) for c in cnames) + 2
    print("".ljust(w) + "".join(f"{n[:6]}/{v[:9]:>10}"[:17].rjust(18) for n, v in cols))
    for c in cnames:
        print(c.ljust(w) + "".join(f"{res[(n, v, c)][which]:18.3f}" for n, v in cols))

if __name__ == "__main__":
    names = sys.argv[1:] or list(SETS)
    res = main(names)
    vn = sorted({k[1] for k in res}, key=lambda v: v != "intact")
    for i, m in enumerate(("recall@5", "MRR")):
        print("==", m)
        for n in names:
            table(res, [n], vn, list(candidates()), i)
