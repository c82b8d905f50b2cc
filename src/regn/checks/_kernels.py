"""Compiled (numba) per-tetrahedron arithmetic of ``regn.verify``; imported only
on first use (``regn.checks._tet_arrays`` falls back to numpy without numba).

:func:`tet_arrays` computes, in one pass over the tetrahedra, the arrays the
tetrahedron checks compare with their tolerances, with the numpy code's
arithmetic (einsum's ``(x0*y0 + x2*y2) + x1*y1`` dot products, norm's
``(x0^2 + x1^2) + x2^2``, left-to-right sums) and its NaN behaviour
(``np.sort`` puts NaN last, ``np.argmax`` and ``np.max`` take the first NaN).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._geometry_nb import _nmax, _nmin   # NaN-propagating, like np.maximum/minimum

_JIT = dict(cache=True, nogil=True)


@njit(**_JIT)
def _after(a, b):
    """``a`` sorts after ``b`` in np.sort's order (NaN last)."""
    if a != a:
        return b == b
    return a > b


@njit(**_JIT)
def tet_arrays(pts, nrm, d, tf, pairs):
    """pts (T,4,3), nrm (F,3), d (F,), tf (T,4) in range, pairs (6,2) ->
    vol (T,) signed volume, size (T,) largest bounding-box side, off (T,4)
    n.v+d of each slot's plane at its off-plane vertex, third (T,4)
    third-smallest |n.v+d| of the slot, opp (T,4) the off-plane vertex
    (argmax |n.v+d|), mean (T,3), rad (T,) max vertex distance from the mean,
    want (T,6) distance of the portal pairs' face centroids."""
    n_t = pts.shape[0]
    vol = np.empty(n_t)
    size = np.empty(n_t)
    off = np.empty((n_t, 4))
    third = np.empty((n_t, 4))
    opp = np.empty((n_t, 4), np.int64)
    mean = np.empty((n_t, 3))
    rad = np.empty(n_t)
    want = np.empty((n_t, 6))
    s = np.empty(4)
    fc = np.empty((4, 3))
    dk = np.empty(4)
    for t in range(n_t):
        # signed volume: cross(v1-v0, v2-v0) . (v3-v0) / 6, einsum's order
        a0 = pts[t, 1, 0] - pts[t, 0, 0]
        a1 = pts[t, 1, 1] - pts[t, 0, 1]
        a2 = pts[t, 1, 2] - pts[t, 0, 2]
        b0 = pts[t, 2, 0] - pts[t, 0, 0]
        b1 = pts[t, 2, 1] - pts[t, 0, 1]
        b2 = pts[t, 2, 2] - pts[t, 0, 2]
        c0 = pts[t, 3, 0] - pts[t, 0, 0]
        c1 = pts[t, 3, 1] - pts[t, 0, 1]
        c2 = pts[t, 3, 2] - pts[t, 0, 2]
        x0 = a1 * b2 - a2 * b1
        x1 = a2 * b0 - a0 * b2
        x2 = a0 * b1 - a1 * b0
        vol[t] = ((x0 * c0 + x2 * c2) + x1 * c1) / 6.0
        # the bounding box's largest side, NaN propagating (np.max)
        big = 0.0
        for e in range(3):
            hi = _nmax(_nmax(pts[t, 0, e], pts[t, 1, e]), _nmax(pts[t, 2, e], pts[t, 3, e]))
            lo = _nmin(_nmin(pts[t, 0, e], pts[t, 1, e]), _nmin(pts[t, 2, e], pts[t, 3, e]))
            big = hi - lo if e == 0 else _nmax(big, hi - lo)
        size[t] = big
        for k in range(4):
            f = tf[t, k]
            n0, n1, n2, df = nrm[f, 0], nrm[f, 1], nrm[f, 2], d[f]
            for v in range(4):
                x = (n0 * pts[t, v, 0] + n2 * pts[t, v, 2]) + n1 * pts[t, v, 1] + df
                dk[v] = x
                s[v] = abs(x)
            # argmax: the first maximum, or the first NaN
            best = 0
            for v in range(1, 4):
                if s[best] == s[best] and (s[v] > s[best] or s[v] != s[v]):
                    best = v
            opp[t, k] = best
            off[t, k] = dk[best]
            # the third smallest, NaN sorting last (insertion sort of 4)
            for i in range(1, 4):
                x = s[i]
                j = i - 1
                while j >= 0 and _after(s[j], x):
                    s[j + 1] = s[j]
                    j -= 1
                s[j + 1] = x
            third[t, k] = s[2]
            # the centroid of the three vertices on the plane, in vertex order
            for e in range(3):
                acc = 0.0
                first = True
                masked = 0.0         # numpy adds the off vertex times 0
                for v in range(4):
                    if v != best:
                        if first:
                            acc = pts[t, v, e]
                            first = False
                        else:
                            acc = acc + pts[t, v, e]
                    elif not np.isfinite(pts[t, v, e]):
                        masked = np.nan      # inf * 0 or NaN * 0
                fc[k, e] = (acc + masked) / 3.0
        for e in range(3):
            mean[t, e] = (((pts[t, 0, e] + pts[t, 1, e]) + pts[t, 2, e]) + pts[t, 3, e]) / 4
        r = 0.0
        for v in range(4):
            a = pts[t, v, 0] - mean[t, 0]
            b = pts[t, v, 1] - mean[t, 1]
            c = pts[t, v, 2] - mean[t, 2]
            x = np.sqrt((a * a + b * b) + c * c)
            if v == 0 or x > r or x != x:
                if r == r:
                    r = x
        rad[t] = r
        for p in range(6):
            i, j = pairs[p, 0], pairs[p, 1]
            a = fc[i, 0] - fc[j, 0]
            b = fc[i, 1] - fc[j, 1]
            c = fc[i, 2] - fc[j, 2]
            want[t, p] = np.sqrt((a * a + b * b) + c * c)
    return vol, size, off, third, opp, mean, rad, want


@njit(**_JIT)
def sphere_reach(centre, radius, ref_c, ref_t, cell_lo, cell_hi):
    """How many references (cell ref_c[r], tet ref_t[r]) have the tet's sphere
    reach the closed cell box: |c - clip(c, lo, hi)| <= radius * (1 + 1e-6)
    (np.clip propagates NaN, which reaches nothing)."""
    n = 0
    for r in range(len(ref_c)):
        cc = ref_c[r]
        t = ref_t[r]
        acc = 0.0
        for e in range(3):
            x = centre[t, e]
            q = x
            if x == x:
                q = min(max(x, cell_lo[cc, e]), cell_hi[cc, e])
            dx = x - q
            acc = dx * dx if e == 0 else acc + dx * dx
        if np.sqrt(acc) <= radius[t] * (1 + 1e-6):
            n += 1
    return n


@njit(**_JIT)
def grid_compare(indptr, ref_t, exp_c, exp_t, home, n_t):
    """The file's grid (cell c lists ref_t[indptr[c]:indptr[c+1]]) against
    the expected pairs (exp_c ascending, then exp_t; every index in range).
    Returns hit (R,) the reference is an expected pair, exp_listed (E,) the
    expected pair is listed, listed_home (T,) the tet's home cell lists it,
    and the number of duplicate references (repeats within a cell)."""
    n_r = len(ref_t)
    n_e = len(exp_t)
    hit = np.zeros(n_r, np.bool_)
    exp_listed = np.zeros(n_e, np.bool_)
    listed_home = np.zeros(n_t, np.bool_)
    mark = np.full(n_t, -1, np.int64)      # cell in which t is expected
    pos = np.zeros(n_t, np.int64)          # ... as expected pair pos[t]
    seen = np.full(n_t, -1, np.int64)      # cell in which t was last listed
    dupes = 0
    e = 0
    for c in range(len(indptr) - 1):
        while e < n_e and exp_c[e] == c:
            t = exp_t[e]
            mark[t] = c
            pos[t] = e
            e += 1
        for r in range(indptr[c], indptr[c + 1]):
            t = ref_t[r]
            if seen[t] == c:
                dupes += 1
            else:
                seen[t] = c
            if mark[t] == c:
                hit[r] = True
                exp_listed[pos[t]] = True
            if home[t] == c:
                listed_home[t] = True
    return hit, exp_listed, listed_home, dupes
