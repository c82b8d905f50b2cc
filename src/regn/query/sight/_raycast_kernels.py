"""Compiled kernels of the segment walk (:mod:`regn.query.sight.raycast`).

``W`` (T,12) and ``nbv`` (T,4) are :class:`regn.query.locating.locate.LocateTables`'
affine rows and neighbours by vertex slot. A walk ends with one of the
outcomes below: the status codes CLEAR, HIT and LOST (step cap) of
:mod:`regn.status`, or one of three internal reasons, each reported to
users as "lost".
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import kernel, prefetch
from ...status import CLEAR, HIT, LOST, START_OUTSIDE
from ...tolerances import BARY_TOL, SEGMENT_END_TOL
from ..locating._locate_kernels import barycentric, fine_cell, locate_in_cell

#: (tet, came-from) pairs a walk remembers at one fraction (see walk_segment)
RING = 32

# internal walk outcomes (all "lost" to users)
STUCK = 100          # an edge tie with no other way out
BEYOND = 101         # the exit lies past b, yet b failed the inside test (rounding)
OUT_OF_RANGE = 102   # a neighbour index outside [0, T) (never from a sound Mesh)


@kernel
def crossing(l, dl, s_cur):
    """Fraction where the coordinate l + s * dl reaches 0 when decreasing
    (inf otherwise, and for NaN), raised to s_cur: numpy's
    ``maximum(nan_to_inf(where(dl < 0, -l / dl, inf)), s_cur)``."""
    if dl < 0:
        s = -l / dl
        if s != s:
            s = math.inf
    else:
        s = math.inf
    return s if s > s_cur else s_cur


@kernel
def tie_exit(nbv, t, prev, j, la0, la1, la2, la3, d0, d1, d2, d3):
    """The edge tie's way out: among the other decreasing coordinates not
    leading back to prev, the vertex slot whose crossing -l/dl is smallest
    (first on ties); -1 when none is finite."""
    best = math.inf
    bk = -1
    for k in range(4):
        if k == 0:
            l, dl = la0, d0
        elif k == 1:
            l, dl = la1, d1
        elif k == 2:
            l, dl = la2, d2
        else:
            l, dl = la3, d3
        if k == j or dl >= 0 or nbv[t, k] == prev:
            continue
        s = -l / dl
        if s != s:
            return -1             # NaN geometry: no trustworthy way out
        if bk < 0 or s < best:
            best, bk = s, k
    if bk < 0 or not math.isfinite(best):
        return -1
    return bk


@kernel
def forward_exit(s_cur, la0, la1, la2, la3, d0, d1, d2, d3):
    """The way out of a cycle: the vertex slot whose decreasing coordinate
    reaches 0 first strictly past s_cur (first slot on ties; NaN never),
    with that fraction; (-1, inf) when none does."""
    best = math.inf
    bk = -1
    for k in range(4):
        if k == 0:
            l, dl = la0, d0
        elif k == 1:
            l, dl = la1, d1
        elif k == 2:
            l, dl = la2, d2
        else:
            l, dl = la3, d3
        if dl < 0:
            s = -l / dl
            if s > s_cur and s < best:
                best, bk = s, k
    return bk, best


@kernel
def seen_before(seen, n_seen, t, prev):
    """Is (t, prev) among the first n_seen pairs of ``seen`` (RING, 2)?"""
    found = False
    for r in range(min(n_seen, seen.shape[0])):
        if seen[r, 0] == t and seen[r, 1] == prev:
            found = True
    return found


@kernel
def _prefetch_neighbours(W, nbv, t):
    """Start loading the rows of t's neighbours (the walk's next tetrahedron
    is one of them), so a step does not wait on a cache miss (~115 -> ~70 ns
    a step on the benchmark map)."""
    n_tets = W.shape[0]
    for k in range(4):
        u = nbv[t, k]
        if u >= 0 and u < n_tets:
            prefetch(W, 12 * u)
            prefetch(W, 12 * u + 11)
            prefetch(nbv, 4 * u)


@kernel
def walk_segment(W, nbv, ax, ay, az, bx, by, bz, t, cap, crossed, seen):
    """Walk a -> b from tetrahedron t, at most ``cap`` steps.

    Returns (outcome, tet, exit vertex slot, fraction, tets crossed). The
    crossed tetrahedra are written to ``crossed`` while it has room (the
    count keeps going, so a caller with a short buffer can retry). ``seen``
    is scratch of (RING, 2) int64.

    In t the barycentric coordinates along the segment are linear in the
    fraction s; the segment leaves t where the first decreasing coordinate
    reaches 0 (first slot on ties; NaN counts as never), through the face
    opposite that vertex. At an edge tie (that exit leads back into the tet
    just left) it takes, among the other decreasing coordinates, the one that
    reaches 0 first: that is where the segment really leaves t. It stops
    (BEYOND, not clear) when the exit fraction exceeds 1 + SEGMENT_END_TOL: b
    should then have been inside t, and only rounding can have said
    otherwise, so the walk does not guess.

    What the walk does in a tet depends only on the tet, the one it came
    from and the fraction reached, so entering a tet again from the same tet
    at the same fraction would go round in circles until the step cap (as
    around an edge the segment runs along, whose coordinates rounding makes
    cross at that fraction). The walk remembers the (tet, came-from) pairs
    entered since the fraction last grew (the first RING of them) and, rather
    than enter one again, leaves through :func:`forward_exit`: the first
    crossing past the current fraction."""
    n_tets = W.shape[0]
    prev = -1
    s_cur = 0.0
    n_seen = 0
    if crossed.shape[0] > 0:
        crossed[0] = t
    n = 1
    for _ in range(cap):
        _prefetch_neighbours(W, nbv, t)
        la0, la1, la2, la3 = barycentric(W, t, ax, ay, az)
        lb0, lb1, lb2, lb3 = barycentric(W, t, bx, by, bz)
        if (lb0 >= -BARY_TOL and lb1 >= -BARY_TOL and lb2 >= -BARY_TOL
                and lb3 >= -BARY_TOL):          # NaN fails
            return CLEAR, t, -1, s_cur, n
        d0 = lb0 - la0
        d1 = lb1 - la1
        d2 = lb2 - la2
        d3 = lb3 - la3
        j = 0
        sj = crossing(la0, d0, s_cur)
        s = crossing(la1, d1, s_cur)
        if s < sj:
            j, sj = 1, s
        s = crossing(la2, d2, s_cur)
        if s < sj:
            j, sj = 2, s
        s = crossing(la3, d3, s_cur)
        if s < sj:
            j, sj = 3, s
        nxt = nbv[t, j]
        if nxt == prev and nxt >= 0:
            # edge tie: never step back into the tet just left
            j = tie_exit(nbv, t, prev, j, la0, la1, la2, la3, d0, d1, d2, d3)
            if j < 0:
                return STUCK, t, -1, s_cur, n
            nxt = nbv[t, j]
        if sj > s_cur:
            n_seen = 0
        elif seen_before(seen, n_seen, nxt, t):
            j, sj = forward_exit(s_cur, la0, la1, la2, la3, d0, d1, d2, d3)
            if j < 0:
                return STUCK, t, -1, s_cur, n
            nxt = nbv[t, j]
            n_seen = 0
        if n_seen < seen.shape[0]:
            seen[n_seen, 0] = nxt
            seen[n_seen, 1] = t
        n_seen += 1
        if not sj <= 1.0 + SEGMENT_END_TOL:   # (a wall past b is no hit either)
            return BEYOND, t, j, s_cur, n
        s_cur = sj
        if nxt < 0:
            return HIT, t, j, s_cur, n
        if nxt >= n_tets:
            return OUT_OF_RANGE, t, j, s_cur, n
        prev = t
        t = nxt
        if n < crossed.shape[0]:
            crossed[n] = t
        n += 1
    return LOST, t, -1, s_cur, n


@kernel
def raycast_segment(tables, ax, ay, az, bx, by, bz, crossed):
    """raycast's one compiled call: locate a (the fine-grid scan of
    ``tables``, a :class:`regn.query.locating.locate.LocateTables`), then
    :func:`walk_segment` to b (finite, checked by the caller). Returns
    walk_segment's tuple, with outcome START_OUTSIDE when a is outside the
    volume."""
    W, nbv, frame, dims = tables.W, tables.nbv, tables.frame, tables.dims
    c = fine_cell(frame, dims, ax, ay, az)
    t = -1 if c < 0 else locate_in_cell(W, tables.cell_start, tables.cell_tets, c, ax, ay, az)
    if t < 0:
        return START_OUTSIDE, -1, -1, 0.0, 0
    return walk_segment(W, nbv, ax, ay, az, bx, by, bz, t, W.shape[0] + 8, crossed,
                        np.empty((RING, 2), np.int64))
