"""Smoothing a corridor: the shortest polyline through its portal triangles.

Each waypoint is constrained to its portal triangle and the sum of segment
lengths is minimised (a convex problem). Solved by red-black block
coordinate descent where each waypoint is placed exactly at its optimum
given its two neighbours, iterated until a sweep shortens it by < rtol.
"""

from __future__ import annotations

import numpy as np


def _best_on_triangle(A, B, tri):
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
            x = _best_on_segment(a, b, T3[:, i], T3[:, j])
            val = np.linalg.norm(x - a, axis=1) + np.linalg.norm(x - b, axis=1)
            if best is None:
                best, bestv = x, val
            else:
                m = val < bestv
                best[m], bestv[m] = x[m], val[m]
        out[todo] = best
    return out


def _best_on_segment(a, b, p, q):
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


def smooth_polyline(s, g, tri, *, rtol=1e-6, max_sweeps=20000):
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
                pts[idx] = _best_on_triangle(pts[idx - 1], pts[idx + 1], tri[idx - 1])
        length = np.linalg.norm(np.diff(pts, axis=0), axis=1).sum()
        if prev - length <= rtol * length:
            break
        prev = length
    return pts
