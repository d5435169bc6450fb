"""Fusion candidates, written apart from the Rust code they mirror (src/search/hybrid.rs).
Each takes (bm25, sem) lists of (tool, score) best first, depth <= 100, and returns tool ids
best first (ties by id)."""
import statistics

from common import DEPTH, order


def only_bm25(b, s):
    return [t for t, _ in b]


def only_sem(b, s):
    return [t for t, _ in s]


def rrf(k=60, wb=1.0, ws=1.0):
    def f(b, s):
        sc = {}
        for w, lst in ((wb, b), (ws, s)):
            for i, (t, _) in enumerate(lst):
                sc[t] = sc.get(t, 0.0) + w / (k + i + 1)
        return order(sc)
    return f


def minmax(wb=0.5, ws=0.5):
    def f(b, s):
        sc = {}
        for w, lst in ((wb, b), (ws, s)):
            if not lst:
                continue
            hi, lo = lst[0][1], min(x for _, x in lst)
            for t, x in lst:
                sc[t] = sc.get(t, 0.0) + w * ((x - lo) / (hi - lo) if hi > lo else 1.0)
        return order(sc)
    return f


def previous_blend(wb=0.4, ws=0.6, floor=20):
    """The previous default: wb · (bm25 − bm25_floor)/bm25_top + ws · (cos − cos_floor)."""
    def f(b, s):
        sc = {}
        if b and b[0][1] > 0:
            fb = b[floor - 1][1] if len(b) >= floor else 0.0
            for t, x in b:
                sc[t] = wb * max(0.0, x - fb) / b[0][1]
        if s:
            fs = s[floor - 1][1] if len(s) >= floor else s[-1][1]
            for t, x in s:
                sc[t] = sc.get(t, 0.0) + ws * max(0.0, x - fs)
        return order(sc)
    return f


def _lead_in_spread(lst, floor, missing):
    """tool -> (score − floor)+ / σ over DEPTH places, places past the list's end filled."""
    if not lst:
        return {}
    values = [x for _, x in lst[:DEPTH]]
    values += [missing(values)] * (DEPTH - len(values))
    sd = statistics.pstdev(values)
    if sd <= 0:
        return {}
    fl = values[min(floor, len(values)) - 1]
    return {t: max(0.0, x - fl) / sd for t, x in lst[:DEPTH]}


def spread_blend(wb=0.5, ws=0.5, floor=20):
    """The default: each list's lead over its 20th score in units of its own spread."""
    def f(b, s):
        sc = {}
        for w, lst, missing in ((wb, b, lambda v: 0.0), (ws, s, lambda v: v[-1])):
            for t, p in _lead_in_spread(lst, floor, missing).items():
                sc[t] = sc.get(t, 0.0) + w * p
        return order(sc)
    return f
