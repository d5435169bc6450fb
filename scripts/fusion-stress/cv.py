"""Cross-validates the one fitted setting of the default blend, the bm25 weight (semantic gets
1 − w): leave one dev set out, fit w on the other three (mean recall@5, pooled), score the
held-out set. Also shows what tuning on a single set would have chosen."""
import fusions as F
from common import HELD_OUT, SETS, load, metrics

W = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
data = {n: load(n, "pooled") for n in SETS}
res = {w: {n: metrics([(q, q["bm25"], q["sem"]) for q in d], F.spread_blend(w, 1 - w))[0]
           for n, d in data.items()} for w in W}
print("recall@5, pooled, by bm25 weight")
for w in W:
    print(f"  w={w}: " + "  ".join(f"{n}={res[w][n]:.3f}" for n in SETS))
print("leave one set out (fit on the other three; ties go to the weight nearest 0.5)")
for held in SETS:
    others = [n for n in SETS if n != held]
    w = max(W, key=lambda w: (sum(res[w][n] for n in others), -abs(w - 0.5)))
    print(f"  held out {held}: fitted w={w}, held-out recall@5 {res[w][held]:.3f}")
print("tuned on one set alone")
for tune in SETS:
    w = max(W, key=lambda w: (res[w][tune], -abs(w - 0.5)))
    print(f"  tuned on {tune}: w={w}: " + "  ".join(f"{n}={res[w][n]:.3f}" for n in SETS))
print("the held-out check set (never used in a design decision), with the weight fitted on all four")
w_all = max(W, key=lambda w: (sum(res[w][n] for n in SETS), -abs(w - 0.5)))
for held in HELD_OUT:
    for setting in ("own", "pooled"):
        rows = [(q, q["bm25"], q["sem"]) for q in load(held, setting)]
        rivals = {"bm25": F.only_bm25, "semantic": F.only_sem, "rrf": F.rrf()}
        got = metrics(rows, F.spread_blend(w_all, 1 - w_all))[0]
        best = max(((n, metrics(rows, f)[0]) for n, f in rivals.items()), key=lambda x: x[1])
        print(f"  {held} {setting}: w={w_all} blend {got:.3f}; best of bm25/semantic/rrf {best[0]} {best[1]:.3f}")
