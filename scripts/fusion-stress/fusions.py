"""Fusion candidates. Each takes (bm25, sem) lists of (tool, score) best first, depth <= 100,
and returns tool ids best first (ties by id)."""
import math
from common import order

def only_bm25(b, s):
    return [t for t, _ in sorted(b, key=lambda x: (-x[1], x[0]))] if b else only_sem(b, s) if False else [t for t, _ in b]

def only_sem(b, s):
    return [t for t, _ in s]

def blend(wb=0.3, ws=0.7):
    """Current default: wb*bm25/max + ws*cosine (missing cosine -> lowest cosine of the list)."""
    def f(b, s):
        top = max((x for _, x in b), default=0.0)
        lo = min((x for _, x in s), default=0.0)
        bm = {t: (x / top if top > 0 else 0.0) for t, x in b}
        se = dict(s)
        tools = set(bm) | set(se)
        return order({t: wb * bm.get(t, 0.0) + ws * se.get(t, lo) for t in tools})
    return f

def rrf(k=60, wb=1.0, ws=1.0):
    def f(b, s):
        sc = {}
        for w, lst in ((wb, b), (ws, s)):
            for i, (t, _) in enumerate(lst):
                sc[t] = sc.get(t, 0.0) + w / (k + i + 1)
        return order(sc)
    return f

def _floor(lst, r):
    """The list's r-th best score (0 if the list is shorter than r, i.e. the rest scored 0 or
    were cut); r=None -> no floor."""
    if r is None or len(lst) < r:
        return None
    return lst[r - 1][1]

def excess(wb=0.3, ws=0.7, rb=None, rs=100, bm_div="top"):
    """Generalised blend: each list counts only by how much a tool's score exceeds that list's
    rb-th / rs-th best score (clipped at 0; a missing tool gets 0). bm25's excess is divided by
    its top score; the cosine excess is used as it is. rb=None, rs=100 is the current blend.
    For a list shorter than r the floor is 0 for bm25 (cosine: its lowest score)."""
    def f(b, s):
        top = b[0][1] if b else 0.0
        fb = _floor(b, rb) or 0.0
        fs = _floor(s, rs)
        if fs is None:
            fs = s[-1][1] if s else 0.0
        sc = {}
        if top > 0:
            for t, x in b:
                v = max(0.0, x - fb) / top
                if v > 0:
                    sc[t] = wb * v
        for t, x in s:
            sc[t] = sc.get(t, 0.0) + ws * max(0.0, x - fs)
        for t, _ in b:
            sc.setdefault(t, 0.0)
        return order(sc)
    return f
