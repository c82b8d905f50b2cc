"""Compiled kernels of the waypoints (:mod:`regn.query.paths.waypoints`): from
the polished optimum (:mod:`regn.query.paths._polish_kernels`), keep only the
points where the polyline turns, nudge them off the walls they touch until
the segment walk passes every segment, and the whole smoothed path of a
point in one compiled call (:func:`smooth_path`).
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import copy_rows, kernel, set_row
from ...status import CLEAR
from ..sight._raycast_kernels import raycast_segment
from ._bend_solve_kernels import polyline_length
from ._polish_kernels import constraint_table, plane_uv, polish
from ._smooth_kernels import no_constraints, solve

#: merging close points may change a path's length by this fraction of it
LENGTH_BUDGET_REL = 1e-9

#: ... and a point whose dropping saves less than this fraction of that
#: budget is no turn
STRAIGHT_REL = 1e-3

#: nudges tried (each 10 times the one before) before the shrunk portals
NUDGES = 3


@kernel
def simplify(s, g, tri, fvid, cstart, cdata, w, X, gap_rel, budget_rel, shrink, out, origin):
    """The turning points of polyline X (k+2,3; s, one point per portal at
    barycentrics w (k,2), g) into out; returns their number. From
    :func:`polish`'s exact optimum when it settles and is no longer than X:
    s, the bends, g (the other waypoints lie on the straight stretches
    between them); otherwise X's own points. Either way points closer than
    gap_rel times the length to the point before are then dropped while
    they change the length by at most ``budget_rel`` of it
    (:func:`_merge_close`; LENGTH_BUDGET_REL, or 0 to drop only points
    exactly on the line through their neighbours). ``shrink``: see
    :func:`constraint_table` (then no two waypoints share a bend).
    origin[j]: the waypoint out[j] stands for (-1 for s and g)."""
    k = tri.shape[0]
    con, ncon = constraint_table(cstart, cdata, k, shrink)
    if shrink > 0.0:
        fvid = fvid[:0]
    P = np.empty((k + 2, 3))
    length, bend = polish(s, g, tri, fvid, con, ncon, w, P)
    base = polyline_length(X, k)
    src = X
    if length <= base * (1.0 + 1e-12) and np.all(np.isfinite(P)):
        src = P
        base = polyline_length(P, k)
    else:
        bend[:] = True
    set_row(out, 0, s)
    origin[0] = -1
    n = 1
    for i in range(k):
        if bend[i] and _dist(out, n - 1, src, i + 1) > 0.0:
            copy_rows(out, n, src, i + 1, 1)
            origin[n] = i
            n += 1
    set_row(out, n, g)
    origin[n] = -1
    return _merge_close(out, origin, n + 1, gap_rel * base, budget_rel * base)


@kernel
def _merge_close(out, origin, n, gap, budget):
    """Drop from out[:n] each interior point closer than ``gap`` to the
    point kept before it (or to the last point), or where the polyline
    does not turn (dropping it would save less than STRAIGHT_REL of the
    budget: a straight stretch grazing a portal's edge), as long as the
    dropped points shorten the polyline by at most ``budget`` in all;
    returns the new count."""
    used = 0.0
    kept = 1
    for j in range(1, n - 1):
        near = _dist(out, kept - 1, out, j) < gap or _dist(out, j, out, n - 1) < gap
        saving = (_dist(out, kept - 1, out, j) + _dist(out, j, out, j + 1)
                  - _dist(out, kept - 1, out, j + 1))
        if (near or saving <= STRAIGHT_REL * budget) and used + saving <= budget:
            used += saving
            continue
        copy_rows(out, kept, out, j, 1)
        origin[kept] = origin[j]
        kept += 1
    copy_rows(out, kept, out, n - 1, 1)
    origin[kept] = origin[n - 1]
    return kept + 1


@kernel
def _dist(a, i, b, j):
    return math.sqrt((a[i, 0] - b[j, 0]) ** 2 + (a[i, 1] - b[j, 1]) ** 2
                     + (a[i, 2] - b[j, 2]) ** 2)


@kernel
def simplify_polyline(tables, s, g, tri, fvid, X, gap_rel, nudge, out):
    """:func:`simplify` for a point's path (the triangles' constraints only),
    from the smoother's polyline X, then each turning point moved
    ``nudge`` times its portal's longest edge away from the corner it turns
    round (against the pull of its neighbours): an exact bend on an edge
    that is a wall lies on the wall, and a segment walked from a point on a
    wall may leave through it at once. Every segment is then walked
    (:func:`regn.query.sight._raycast_kernels.raycast_segment`; ``tables`` a
    :class:`regn.query.locating.locate.LocateTables`), and if one is not clear the
    nudge is tried 10 and 100 times larger (NUDGES); if none passes (the
    optimum passes a pinch or grazes a wall edge), the same again on the
    portals shrunk as much as the largest nudge (no nudge needed); if that
    fails too, the answer is X's own points. Returns the number of points
    in out."""
    k = tri.shape[0]
    w = np.empty((k, 2))
    for i in range(k):
        w[i, 0], w[i, 1] = plane_uv(tri, i, X[i + 1, 0], X[i + 1, 1], X[i + 1, 2])
    origin = np.empty(k + 2, dtype=np.int64)
    exact = np.empty_like(out)
    cstart, cdata = no_constraints(k)
    n = simplify(s, g, tri, fvid, cstart, cdata, w, X, gap_rel, LENGTH_BUDGET_REL, 0.0, exact,
                 origin)
    if n < k + 2:
        for step in range(NUDGES):       # the smallest nudge the walk accepts
            copy_rows(out, 0, exact, 0, n)
            _nudge(tri, out, origin, n, nudge * 10.0 ** step)
            if _walks_clear(tables, out, n):
                return n
    # the exact optimum touches a wall the walk trips on (a pinch, a graze):
    # the same on portals shrunk as much as the largest nudge, every point
    # inside them
    n = simplify(s, g, tri, fvid, cstart, cdata, w, X, gap_rel, LENGTH_BUDGET_REL,
                 nudge * 10.0 ** (NUDGES - 1), out, origin)
    if n < k + 2 and _walks_clear(tables, out, n):
        return n
    copy_rows(out, 0, X, 0, k + 2)
    return k + 2


@kernel
def _nudge(tri, out, origin, n, nudge):
    """Move each interior point of out[:n] by ``nudge`` times the longest
    edge of its portal (origin[j]) against the pull of its neighbours (away
    from the corner it turns round)."""
    for j in range(1, n - 1):
        i = origin[j]
        size = 0.0
        for a in range(3):
            b = (a + 1) % 3
            size = max(size, math.sqrt((tri[i, a, 0] - tri[i, b, 0]) ** 2
                                       + (tri[i, a, 1] - tri[i, b, 1]) ** 2
                                       + (tri[i, a, 2] - tri[i, b, 2]) ** 2))
        gx = gy = gz = 0.0
        for nb in (j - 1, j + 1):
            dn = _dist(out, nb, out, j)
            if dn > 0.0:
                gx += (out[nb, 0] - out[j, 0]) / dn
                gy += (out[nb, 1] - out[j, 1]) / dn
                gz += (out[nb, 2] - out[j, 2]) / dn
        gn = math.sqrt(gx * gx + gy * gy + gz * gz)
        if gn > 0.0:
            out[j, 0] -= nudge * size * gx / gn
            out[j, 1] -= nudge * size * gy / gn
            out[j, 2] -= nudge * size * gz / gn


@kernel
def _walks_clear(tables, out, n):
    """Is every segment of out[:n] clear by the segment walk?"""
    crossed = np.empty(0, dtype=np.int64)
    ok = True
    for j in range(n - 1):
        outcome, _, _, _, _ = raycast_segment(tables, out[j, 0], out[j, 1], out[j, 2],
                                              out[j + 1, 0], out[j + 1, 1], out[j + 1, 2],
                                              crossed)
        ok = ok and outcome == CLEAR
    return ok


@kernel
def smooth_path(tables, s, g, tri, fvid, rtol, max_iter, gap_rel, nudge, X, out):
    """A point's smoothed path in one compiled call: the smoother's polyline
    (:func:`regn.query.paths._smooth_kernels.solve`) into X (k+2,3), then its
    turning points (:func:`simplify_polyline`) into out; returns their
    number."""
    solve(s, g, tri, rtol, max_iter, X)
    return simplify_polyline(tables, s, g, tri, fvid, X, gap_rel, nudge, out)

