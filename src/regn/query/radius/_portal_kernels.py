"""Compiled kernels of paths for agents with a radius
(:mod:`regn.query.radius.portals`): the portals' witnesses (once per mesh), the
clearance of the search graph's edges (settled per radius) and one radius
query's search (locate, the ends'
clearances, the links from the ends, the search of
:mod:`regn.query.paths._path_kernels` on the graph masked for the radius, the
corridor and its witness polyline).

``bvh`` is a :class:`regn.query.walls.nearest.WallBVH`, ``graph``/``work``/
``tables`` the records of :mod:`regn.query.paths.path`; ``witness`` (F+1,3) holds
each face's witness point in the search graph's internal numbering (row F
and walls: NaN).
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import copy_items, kernel, prange, set_row
from ...status import GOAL_TOO_CLOSE, OK, START_TOO_CLOSE, TOO_NARROW, UNREACHABLE
from ..paths._path_kernels import (BROKEN_CHAIN, ET0, _route_cost, _search, _trace_route, _write_corridor, locate_ends)
from ..sight._sweep_kernels import segment_clearance
from ..paths._polish_kernels import plane_uv

#: barycentric coordinates of a face's candidate witnesses: its centroid and
#: three points towards its vertices
CANDIDATES = np.array([[1 / 3, 1 / 3, 1 / 3], [0.6, 0.2, 0.2], [0.2, 0.6, 0.2],
                       [0.2, 0.2, 0.6]])


@kernel
def _clearance_of_point(box, node, tri, tbox, flat, stack, x, cap):
    """(distance to the nearest wall, nearest wall point) of x, exact
    below ``cap`` ((cap, NaN...) beyond it)."""
    d, _, _, _, _, qx, qy, qz = segment_clearance(box, node, tri, tbox, flat, stack, x[0],
                                                  x[1], x[2], x[0], x[1], x[2], cap, False)
    return d, qx, qy, qz


@kernel
def _wall_within(box, node, tri, tbox, flat, stack, x, d):
    """Is some wall closer than d to x?"""
    _, k, _, _, _, _, _, _ = segment_clearance(box, node, tri, tbox, flat, stack, x[0],
                                               x[1], x[2], x[0], x[1], x[2], d, True)
    return k >= 0


@kernel
def _into_face(t, x, min_bary, out):
    """out = the point of face t (9,) whose barycentric coordinates are
    those of x's projection on its plane, each raised to at least min_bary
    and renormalised (a degenerate face: its centroid)."""
    u, v = plane_uv(t.reshape(1, 3, 3), 0, x[0], x[1], x[2])
    if not (math.isfinite(u) and math.isfinite(v)):
        u = v = 1.0 / 3.0
    w0 = max(1.0 - u - v, min_bary)
    w1 = max(u, min_bary)
    w2 = max(v, min_bary)
    total = w0 + w1 + w2
    for d in range(3):
        out[d] = (w0 * t[d] + w1 * t[3 + d] + w2 * t[6 + d]) / total


@kernel
def _unit_normal(t):
    """Unit normal of face t (9,), (0, 0, 0) when it has no area."""
    ux, uy, uz = t[3] - t[0], t[4] - t[1], t[5] - t[2]
    vx, vy, vz = t[6] - t[0], t[7] - t[1], t[8] - t[2]
    nx = uy * vz - uz * vy
    ny = uz * vx - ux * vz
    nz = ux * vy - uy * vx
    nn = math.sqrt(nx * nx + ny * ny + nz * nz)
    if not nn > 0.0:
        return 0.0, 0.0, 0.0
    return nx / nn, ny / nn, nz / nn


@kernel
def _climb(box, node, tri, tbox, flat, stack, x, trial, best, qx, qy, qz):
    """Move x to ``trial`` when trial is farther from the walls than x
    (clearance best, nearest wall point q); returns x's clearance and
    nearest wall point after. Trial is measured exactly only when no wall
    is closer to it than best (a cheap test), and only up to best + the
    jump (the distance is 1-Lipschitz)."""
    if _wall_within(box, node, tri, tbox, flat, stack, trial, best):
        return best, qx, qy, qz
    jump = math.sqrt((trial[0] - x[0]) ** 2 + (trial[1] - x[1]) ** 2
                     + (trial[2] - x[2]) ** 2)
    d, tx, ty, tz = _clearance_of_point(box, node, tri, tbox, flat, stack, trial,
                                        (best + jump) * (1.0 + 1e-6) + 1e-300)
    if d > best and tx == tx:
        copy_items(x, 0, trial, 0, x.shape[0])
        return d, tx, ty, tz
    return best, qx, qy, qz


@kernel
def _witness(box, node, tris, tbox, flat, stack, t, steps, min_bary, x):
    """Face t (9,)'s witness into x; returns its clearance (see
    :func:`portal_witnesses`)."""
    trial = np.empty(3)
    for d in range(3):
        x[d] = (t[d] + t[3 + d] + t[6 + d]) / 3.0
    best, qx, qy, qz = _clearance_of_point(box, node, tris, tbox, flat, stack, x, math.inf)
    radius = 0.0
    for c in range(3):
        radius = max(radius, math.sqrt((t[3 * c] - x[0]) ** 2 + (t[3 * c + 1] - x[1]) ** 2
                                       + (t[3 * c + 2] - x[2]) ** 2))
    for c in range(1, CANDIDATES.shape[0]):
        for d in range(3):
            trial[d] = (CANDIDATES[c, 0] * t[d] + CANDIDATES[c, 1] * t[3 + d]
                        + CANDIDATES[c, 2] * t[6 + d])
        best, qx, qy, qz = _climb(box, node, tris, tbox, flat, stack, x, trial, best,
                                  qx, qy, qz)
    step = 0.25 * radius
    nx, ny, nz = _unit_normal(t)
    for _ in range(steps):
        ux, uy, uz = x[0] - qx, x[1] - qy, x[2] - qz
        un = ux * nx + uy * ny + uz * nz
        ux, uy, uz = ux - un * nx, uy - un * ny, uz - un * nz
        norm = math.sqrt(ux * ux + uy * uy + uz * uz)
        if not norm > 0.0:
            break
        trial[0] = x[0] + step * ux / norm
        trial[1] = x[1] + step * uy / norm
        trial[2] = x[2] + step * uz / norm
        _into_face(t, trial, min_bary, trial)
        was = best
        best, qx, qy, qz = _climb(box, node, tris, tbox, flat, stack, x, trial, best,
                                  qx, qy, qz)
        if not best > was:
            step *= 0.5
    return best


@kernel(parallel=True)
def portal_witnesses(bvh, tri, steps, min_bary, out_w, out_d):
    """Each face tri[p] (P,9)'s witness into out_w (P,3) and its exact
    distance to the nearest wall into out_d (P,) (NaN and -1 for a face
    with a non-finite vertex): the farthest from the walls of the
    CANDIDATES, then ``steps`` steps uphill (away from the nearest wall
    point, within the face's plane, a quarter of the face's radius long,
    halved after a step that does not climb). The witness keeps barycentric
    coordinates of at least ``min_bary`` (the candidates do)."""
    box, node, tris, tbox, flat, depth = (bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat,
                                          bvh.depth)
    for p in prange(tri.shape[0]):
        stack = np.empty(2 * depth + 4, dtype=np.int64)
        x = np.full(3, np.nan)
        d = -1.0
        if np.all(np.isfinite(tri[p])):
            d = _witness(box, node, tris, tbox, flat, stack, tri[p], steps, min_bary, x)
        set_row(out_w, p, x)
        out_d[p] = d


@kernel(parallel=True)
def refine_edges(bvh, edge, edge_int, witness, lo, hi, r_eff):
    """Settle, for r_eff, every edge whose clearance bounds do not: lo[f, k]
    <= clearance <= hi[f, k] of the segment joining the witnesses of face f
    and of its edge k's other face. An edge with lo < r_eff <= hi is
    measured: no wall closer than r_eff raises lo to r_eff, a wall closer
    lowers hi to its distance. Measured from the lower face, copied to the
    twin."""
    box, node, tri, tbox, flat, depth = (bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat,
                                         bvh.depth)
    F = edge.shape[0] - 1
    for f in prange(F):
        stack = np.empty(2 * depth + 4, dtype=np.int64)
        for k in range(6):
            v = edge_int[f, 2 * k + 1]
            if v >= F or v < f or not (lo[f, k] < r_eff and r_eff <= hi[f, k]):
                continue
            d, found, _, _, _, _, _, _ = segment_clearance(
                box, node, tri, tbox, flat, stack, witness[f, 0], witness[f, 1],
                witness[f, 2], witness[v, 0], witness[v, 1], witness[v, 2], r_eff, True)
            if found < 0:
                lo[f, k] = r_eff
            else:
                hi[f, k] = d
    _copy_to_twins(edge, edge_int, lo)
    _copy_to_twins(edge, edge_int, hi)


@kernel
def _copy_to_twins(edge, edge_int, out):
    """out[f, k] for the edges measured from their other face (v < f): the
    twin slot of v's block leading back to f through the same tetrahedron."""
    F = edge.shape[0] - 1
    for f in range(F):
        for k in range(6):
            v = edge_int[f, 2 * k + 1]
            if v >= f or not edge[f, 2 * k] >= 0.0:
                continue
            t = edge_int[f, ET0 + k // 3]
            for j in range(6):
                if edge_int[v, 2 * j + 1] == f and edge_int[v, ET0 + j // 3] == t:
                    out[f, k] = out[v, j]


@kernel
def _keeps(box, node, tri, tbox, flat, stack, p, q, r_eff):
    """Does segment p q keep r_eff from every wall (no wall within r_eff)?"""
    _, k, _, _, _, _, _, _ = segment_clearance(box, node, tri, tbox, flat, stack, p[0],
                                               p[1], p[2], q[0], q[1], q[2], r_eff, True)
    return k < 0


@kernel
def _witness_polyline(graph, witness, portals, points, ends, n):
    """points[:n+2] = s, the portals' witnesses, g; returns its length and
    turns ``portals`` into file face numbers."""
    for d in range(3):
        points[0, d] = ends[0, d]
        points[n + 1, d] = ends[1, d]
    for i in range(n):
        f = portals[i]
        for d in range(3):
            points[i + 1, d] = witness[f, d]
        portals[i] = graph.face_order[f]
    length = 0.0
    for i in range(n + 1):
        length += math.sqrt((points[i + 1, 0] - points[i, 0]) ** 2
                            + (points[i + 1, 1] - points[i, 1]) ** 2
                            + (points[i + 1, 2] - points[i, 2]) ** 2)
    return length


@kernel
def _link_keeps(box, node, tri, tbox, flat, stack, p, dp, q, dq, r_eff):
    """Does segment p q keep r_eff, p and q having clearances dp and dq?
    Settled by the bounds where they can be (the distance to the walls is
    1-Lipschitz: along the segment it is at least (dp + dq - |pq|) / 2, and
    at most min(dp, dq)), else measured."""
    span = math.sqrt((q[0] - p[0]) ** 2 + (q[1] - p[1]) ** 2 + (q[2] - p[2]) ** 2)
    if not min(dp, dq) >= r_eff:
        return False
    if 0.5 * (dp + dq - span) >= r_eff:
        return True
    return _keeps(box, node, tri, tbox, flat, stack, p, q, r_eff)


@kernel
def find_path_radius(graph, tables, work, bvh, witness, wclear, ends, scale, excl, plain,
                     hw, lw, qid, r_eff, seed_open):
    """One radius query, as :func:`regn.query.paths._path_kernels.find_path` on the
    graph masked for the radius (edges whose witness segment keeps r_eff),
    returning (status, cost, n, length) the same way, with
    ``work.points[:n + 2]`` the witness polyline (s, each portal's witness,
    g), which keeps r_eff (``wclear``: the witnesses' clearances). After the
    outside and excluded checks: an end closer than r_eff to a wall is
    START_TOO_CLOSE / GOAL_TOO_CLOSE; S == G
    with a segment s g that keeps r_eff is OK at once; the links from s (g)
    to the faces of S (G) are open only where the segment to the face's
    witness keeps r_eff (``seed_open``, (2,4) scratch); no route is
    TOO_NARROW (the caller tells it from unreachable). ``lw``: the weight
    of the landmark bounds (the masked graph only lacks edges, so the full
    graph's landmark distances still bound it)."""
    corridor, points = work.corridor, work.points
    box, node, tri, tbox, flat = bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat
    stack = np.empty(2 * bvh.depth + 4, dtype=np.int64)
    nothing = 0.0
    code = locate_ends(tables, ends, corridor, excl)
    if code != OK:
        return code, nothing, 0, nothing
    S = corridor[0]
    G = corridor[1]
    s = ends[0]
    g = ends[1]
    ds = segment_clearance(box, node, tri, tbox, flat, stack, s[0], s[1], s[2], s[0], s[1],
                           s[2], math.inf, False)[0]
    if not ds >= r_eff:
        return START_TOO_CLOSE, nothing, 0, nothing
    dg = segment_clearance(box, node, tri, tbox, flat, stack, g[0], g[1], g[2], g[0], g[1],
                           g[2], math.inf, False)[0]
    if not dg >= r_eff:
        return GOAL_TOO_CLOSE, nothing, 0, nothing
    if S == G and _link_keeps(box, node, tri, tbox, flat, stack, s, ds, g, dg, r_eff):
        set_row(points, 0, s)
        set_row(points, 1, g)
        d = math.sqrt((g[0] - s[0]) ** 2 + (g[1] - s[1]) ** 2 + (g[2] - s[2]) ** 2)
        return OK, d, 0, d
    if graph.component[S] != graph.component[G]:
        return UNREACHABLE, nothing, 0, nothing
    for side in range(2):
        T = S if side == 0 else G
        for k in range(4):
            f = graph.tet_faces[T, k]
            seed_open[side, k] = graph.is_portal[f] and _link_keeps(
                box, node, tri, tbox, flat, stack, ends[side], ds if side == 0 else dg,
                witness[f], wclear[f], r_eff)
    best, meet_u, meet_v = _search(graph, work, ends, S, G, scale, excl, plain, hw, lw, qid,
                                   seed_open)
    if not best < np.inf:
        return TOO_NARROW, nothing, 0, nothing
    n = _trace_route(graph, work.portals, meet_u, meet_v)
    if n < 0 or not _write_corridor(graph, work.portals, corridor, S, G, n):
        return BROKEN_CHAIN, best, 0, nothing
    best = _route_cost(graph, work.portals, corridor, ends, scale, plain, n)
    return OK, best, n, _witness_polyline(graph, witness, work.portals, points, ends, n)


@kernel
def push_clear(bvh, inward, pts, inside, r_eff, max_pushes, out):
    """Move each point pts[i] (N,3) to a position at least r_eff from every
    wall, into out (NaN where none is reached in ``max_pushes`` pushes).
    ``inside[i]``: pts[i] lies in the volume. A point inside with that room
    stays. A push moves the point to r_eff from its nearest wall point q:
    from inside the volume straight away from q, from outside through q
    (along the line from the point to q, or, when the point lies on the
    wall, along that wall's ``inward`` normal (K,3, rows of bvh.tri)). For
    a point whose nearest wall belongs to one convex rock this is the
    nearest position with that room; where walls meet (a corner, a gap) the
    pushes go on from the new position."""
    box, node, tri, tbox, flat = bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat
    stack = np.empty(2 * bvh.depth + 4, dtype=np.int64)
    x = np.empty(3)
    for i in range(pts.shape[0]):
        for d in range(3):
            x[d] = pts[i, d]
            out[i, d] = np.nan
        within = inside[i]
        for _ in range(max_pushes + 1):
            dist, k, _, _, _, qx, qy, qz = segment_clearance(
                box, node, tri, tbox, flat, stack, x[0], x[1], x[2], x[0], x[1], x[2],
                math.inf, False)
            if k < 0:
                break                    # no wall (or NaN)
            if within and dist >= r_eff:
                set_row(out, i, x)
                break
            ux, uy, uz = x[0] - qx, x[1] - qy, x[2] - qz
            if not within:
                ux, uy, uz = -ux, -uy, -uz
            norm = math.sqrt(ux * ux + uy * uy + uz * uz)
            if not norm > 0.0:
                ux, uy, uz, norm = inward[k, 0], inward[k, 1], inward[k, 2], 1.0
            x[0] = qx + r_eff * ux / norm
            x[1] = qy + r_eff * uy / norm
            x[2] = qz + r_eff * uz / norm
            within = True


@kernel
def approach_clear(bvh, starts, targets, r_eff, steps, out):
    """out[i]: the point nearest targets[i] on the segment from starts[i]
    (which has the room) such that the whole segment from starts[i] to it
    keeps r_eff from every wall, to 2^-steps of the segment's length
    (bisection: a segment that keeps r_eff has every prefix keep it too)."""
    box, node, tri, tbox, flat = bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat
    stack = np.empty(2 * bvh.depth + 4, dtype=np.int64)
    p = np.empty(3)
    for i in range(starts.shape[0]):
        good, bad = 0.0, 1.0
        for d in range(3):
            p[d] = targets[i, d]
        if not _keeps(box, node, tri, tbox, flat, stack, starts[i], p, r_eff):
            for _ in range(steps):
                mid = 0.5 * (good + bad)
                for d in range(3):
                    p[d] = starts[i, d] + mid * (targets[i, d] - starts[i, d])
                if _keeps(box, node, tri, tbox, flat, stack, starts[i], p, r_eff):
                    good = mid
                else:
                    bad = mid
        else:
            good = 1.0
        for d in range(3):
            out[i, d] = starts[i, d] + good * (targets[i, d] - starts[i, d])
