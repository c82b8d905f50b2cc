"""Benchmark corridor smoothing, old vs new (not part of the tests).

    python benchmarks/bench_smooth.py [--n 100]

Builds the ~15 000-tet map of bench_query.make(2300), takes random
find_path(smooth=False) corridors and runs each through the previous
numpy red-black coordinate descent (copied below, as it was before the
interior-point rewrite) and through regn.query.paths.smooth.smooth_polyline.
Prints median ms per path for each, the ratio, and the mean relative
length difference (new - old) / old.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_query import make  # noqa: E402

from regn.query.paths.smooth import smooth_polyline  # noqa: E402


# ---- previous implementation (red-black block coordinate descent) ----

def _old_best_on_triangle(A, B, tri):
    """argmin over x in triangle of |A-x| + |x-B|, vectorised over K."""
    P0, P1, P2 = tri[:, 0], tri[:, 1], tri[:, 2]
    e1, e2 = P1 - P0, P2 - P0
    n = np.cross(e1, e2)
    nn = np.linalg.norm(n, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = n / nn[:, None]
        da = np.einsum("kd,kd->k", A - P0, u)
        db = np.einsum("kd,kd->k", B - P0, u)
        Bs = np.where((da * db > 0)[:, None], B - 2 * db[:, None] * u, B)
        dbs = np.where(da * db > 0, -db, db)
        t = da / (da - dbs)
        X = A + t[:, None] * (Bs - A)
        # barycentric of X in the triangle
        r = X - P0
        d00, d01, d11 = (e1 * e1).sum(1), (e1 * e2).sum(1), (e2 * e2).sum(1)
        d20, d21 = (r * e1).sum(1), (r * e2).sum(1)
        den = d00 * d11 - d01 * d01
        v = (d11 * d20 - d01 * d21) / den
        w = (d00 * d21 - d01 * d20) / den
        inside = (nn > 0) & np.isfinite(t) & (v >= 0) & (w >= 0) & (v + w <= 1)
    out = X.copy()
    todo = np.flatnonzero(~inside)
    if len(todo):
        a, b, T3 = A[todo], B[todo], tri[todo]
        best = None
        bestv = None
        for i, j in ((0, 1), (1, 2), (2, 0)):
            x = _old_best_on_segment(a, b, T3[:, i], T3[:, j])
            val = np.linalg.norm(x - a, axis=1) + np.linalg.norm(x - b, axis=1)
            if best is None:
                best, bestv = x, val
            else:
                m = val < bestv
                best[m], bestv[m] = x[m], val[m]
        out[todo] = best
    return out


def _old_best_on_segment(a, b, p, q):
    """argmin over x on segment pq of |a-x| + |x-b| (closed form: unfold b
    about the line into a's half-plane, intersect, clamp)."""
    e = q - p
    L = np.linalg.norm(e, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = e / L[:, None]
        ta = ((a - p) * u).sum(1)
        tb = ((b - p) * u).sum(1)
        ra = np.linalg.norm(a - p - ta[:, None] * u, axis=1)
        rb = np.linalg.norm(b - p - tb[:, None] * u, axis=1)
        den = ra + rb
        t = np.where(den > 0, ta + (tb - ta) * ra / den, 0.5 * (ta + tb))
    t = np.clip(np.nan_to_num(t), 0, np.where(L > 0, L, 0))
    return p + np.where(L[:, None] > 0, u, 0) * t[:, None]


def old_smooth_polyline(s, g, tri, *, rtol=1e-6, max_sweeps=20000):
    """Shortest polyline s -> x_1..x_k -> g with x_i in triangle tri[i] ((k,3,3))."""
    s = np.asarray(s, np.float64)
    g = np.asarray(g, np.float64)
    tri = np.asarray(tri, np.float64).reshape(-1, 3, 3)
    k = len(tri)
    if k == 0:
        return np.stack([s, g])
    pts = np.vstack([s, tri.mean(axis=1), g])
    prev = np.inf
    even = np.arange(1, k + 1, 2)
    odd = np.arange(2, k + 1, 2)
    for sweep in range(max_sweeps):
        for idx in (even, odd):
            if len(idx):
                pts[idx] = _old_best_on_triangle(pts[idx - 1], pts[idx + 1], tri[idx - 1])
        length = np.linalg.norm(np.diff(pts, axis=0), axis=1).sum()
        if prev - length <= rtol * length:
            break
        prev = length
    return pts


# ---- benchmark ----

def _length(pts):
    return float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())


def _median_ms(f, args, reps):
    out, ts = [], []
    for a in args:
        best = np.inf
        for _ in range(reps):
            t0 = time.perf_counter()
            r = f(*a)
            best = min(best, time.perf_counter() - t0)
        out.append(r)
        ts.append(best)
    return 1e3 * float(np.median(ts)), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100, help="number of corridors")
    args = ap.parse_args()
    m, _ = make(2300)
    V, FV = np.asarray(m.vertices), np.asarray(m.face_vertices)
    A = m.random_points(4 * args.n, seed=2)
    B = m.random_points(4 * args.n, seed=3)
    cases = []
    for a, b in zip(A, B):
        p = m.find_path(a, b, smooth=False)
        if p.found and len(p.portals):
            cases.append((a, b, V[FV[p.portals]]))
        if len(cases) == args.n:
            break
    ks = np.array([len(c[2]) for c in cases])
    print(f"map: {m.n_tets} tets; {len(cases)} corridors, portals per corridor "
          f"median {int(np.median(ks))}, max {ks.max()}")
    smooth_polyline(*cases[0])                       # JIT compile / cache load
    t_new, new = _median_ms(smooth_polyline, cases, 5)
    t_old, old = _median_ms(old_smooth_polyline, cases, 1)
    ln, lo = np.array([_length(p) for p in new]), np.array([_length(p) for p in old])
    rel = (ln - lo) / lo
    print(f"old (numpy coordinate descent): median {t_old:8.3f} ms/path")
    print(f"new (interior point, numba):    median {t_new:8.3f} ms/path")
    print(f"ratio old/new {t_old / t_new:.0f}x")
    long = ks >= np.quantile(ks, 0.75)
    ts, _ = _median_ms(smooth_polyline, [c for c, f in zip(cases, long) if f], 5)
    print(f"new, longest quarter ({long.sum()} corridors, >= {ks[long].min()} portals): "
          f"median {ts:.3f} ms/path")
    print(f"length (new - old)/old: mean {rel.mean():+.2e}, min {rel.min():+.2e}, "
          f"max {rel.max():+.2e}")


if __name__ == "__main__":
    main()
