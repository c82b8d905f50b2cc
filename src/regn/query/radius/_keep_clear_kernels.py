"""Compiled kernels of the smoother that keeps a radius
(:mod:`regn.query.radius.keep_clear`): rounds of the barrier method of
:mod:`regn.query.paths._smooth_kernels` under linear constraints that keep each
segment on the far side of a plane from each nearby wall.

``wtri`` (K,9) and ``wflat`` (K,) are the wall BVH's triangles and flat
flags (:class:`regn.query.walls.nearest.WallBVH`); ``near_start``/``near`` list
the walls that may come within the radius of each tetrahedron of the mesh
(CSR by tetrahedron, rows of wtri; :func:`walls_near_tets`, once per
radius), ``cand_start``/``cand`` those of each segment of a polyline (CSR
by segment).
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import copy_items, copy_rows, kernel
from ...geometry._segment_kernels import closest_points_segment_triangle
from ..walls._nearest_kernels import box_d2
from ..paths._smooth_kernels import _ipm, _polyline_length, _scaled_corridor, _step_limit
from ..sight._sweep_kernels import segment_clearance
from ..paths._polish_kernels import plane_uv
from ..paths._turning_points_kernels import LENGTH_BUDGET_REL, simplify

#: the barrier method's parameters in a round (those of _smooth_kernels.solve)
_MU = 100.0
_CENTERING = 1e-2
#: rounds after the first start where the barrier's gap bound m / tau is
#: this (their start is already near the answer; below the usual 1e-3
#: target, so one centring usually finishes them)
_WARM_GAP = 3e-4
#: the first round's barrier weight starts at this times its barrier
#: parameter m (the witness start needs no centring at tau = m)
_COLD = 30.0
#: rounds stop once one gains less than this fraction of rtol of the length
#: (a round is certified to rtol only, so a smaller gain says little)
_STOP = 0.3
#: the first round starts this fraction of the feasible way from the
#: witnesses to the faces' centroids (-17 % of its steps on the demo map)
_CENTRE = 0.5


@kernel
def walls_near_tets(bvh, tets, pad):
    """(start (m+1,), rows): for each tetrahedron tets[i] (m,4,3), the wall
    triangles (rows of bvh.tri) that may come within ``pad`` of it (CSR):
    those whose boxes meet its box grown by pad, less those lying pad or
    more beyond the plane of one of its faces (BVH nodes too)."""
    box, node, tbox, wtri = bvh.box, bvh.node, bvh.tbox, bvh.tri
    stack = np.empty(2 * bvh.depth + 4, dtype=np.int64)
    start = np.zeros(tets.shape[0] + 1, dtype=np.int64)
    rows = np.empty(64, dtype=np.int64)
    faces = np.empty((4, 4))
    n_rows = 0
    for i in range(tets.shape[0]):
        _outward_planes(tets, i, faces)
        lx = min(tets[i, 0, 0], tets[i, 1, 0], tets[i, 2, 0], tets[i, 3, 0]) - pad
        ly = min(tets[i, 0, 1], tets[i, 1, 1], tets[i, 2, 1], tets[i, 3, 1]) - pad
        lz = min(tets[i, 0, 2], tets[i, 1, 2], tets[i, 2, 2], tets[i, 3, 2]) - pad
        hx = max(tets[i, 0, 0], tets[i, 1, 0], tets[i, 2, 0], tets[i, 3, 0]) + pad
        hy = max(tets[i, 0, 1], tets[i, 1, 1], tets[i, 2, 1], tets[i, 3, 1]) + pad
        hz = max(tets[i, 0, 2], tets[i, 1, 2], tets[i, 2, 2], tets[i, 3, 2]) + pad
        stack[0] = 0
        n = 1
        while n > 0:
            n -= 1
            k = stack[n]
            if not (_boxes_meet(box, k, lx, ly, lz, hx, hy, hz)
                    and not _box_beyond_a_face(faces, box, k, pad)):
                continue
            first = node[k, 0]
            if node[k, 1] > 0:
                for t in range(first, first + node[k, 1]):
                    if (_boxes_meet(tbox, t, lx, ly, lz, hx, hy, hz)
                            and not _wall_beyond_a_face(faces, wtri, t, pad)):
                        if n_rows == rows.shape[0]:
                            grown = np.empty(2 * n_rows, dtype=np.int64)
                            copy_items(grown, 0, rows, 0, n_rows)
                            rows = grown
                        rows[n_rows] = t
                        n_rows += 1
                continue
            stack[n] = first
            stack[n + 1] = first + 1
            n += 2
        start[i + 1] = n_rows
    return start, rows[:n_rows]


@kernel
def _outward_planes(tets, i, out):
    """out (4,4): the unit outward normal and offset (n, c: n.x = c on the
    face) of each face of tetrahedron tets[i], face k opposite vertex k (a
    degenerate face: a zero normal, which excludes nothing)."""
    for k in range(4):
        a, b, c = (k + 1) % 4, (k + 2) % 4, (k + 3) % 4
        ux, uy, uz = tets[i, b, 0] - tets[i, a, 0], tets[i, b, 1] - tets[i, a, 1], \
            tets[i, b, 2] - tets[i, a, 2]
        vx, vy, vz = tets[i, c, 0] - tets[i, a, 0], tets[i, c, 1] - tets[i, a, 1], \
            tets[i, c, 2] - tets[i, a, 2]
        nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
        nn = math.sqrt(nx * nx + ny * ny + nz * nz)
        if nn > 0.0:
            nx, ny, nz = nx / nn, ny / nn, nz / nn
        if (nx * (tets[i, k, 0] - tets[i, a, 0]) + ny * (tets[i, k, 1] - tets[i, a, 1])
                + nz * (tets[i, k, 2] - tets[i, a, 2])) > 0.0:
            nx, ny, nz = -nx, -ny, -nz
        out[k, 0] = nx
        out[k, 1] = ny
        out[k, 2] = nz
        out[k, 3] = nx * tets[i, a, 0] + ny * tets[i, a, 1] + nz * tets[i, a, 2]


@kernel
def _wall_beyond_a_face(faces, wtri, t, pad):
    """Do all three corners of wall t lie at least pad beyond one face plane?"""
    beyond = False
    for k in range(4):
        nx, ny, nz, c = faces[k, 0], faces[k, 1], faces[k, 2], faces[k, 3]
        beyond = beyond or min(nx * wtri[t, 0] + ny * wtri[t, 1] + nz * wtri[t, 2],
                               nx * wtri[t, 3] + ny * wtri[t, 4] + nz * wtri[t, 5],
                               nx * wtri[t, 6] + ny * wtri[t, 7] + nz * wtri[t, 8]) - c >= pad
    return beyond


@kernel
def _box_beyond_a_face(faces, box, k, pad):
    """Does box k (lo xyz, hi xyz) lie at least pad beyond one face plane?"""
    beyond = False
    for f in range(4):
        nx, ny, nz, c = faces[f, 0], faces[f, 1], faces[f, 2], faces[f, 3]
        # the box corner least far along n
        low = (nx * (box[k, 0] if nx >= 0.0 else box[k, 3])
               + ny * (box[k, 1] if ny >= 0.0 else box[k, 4])
               + nz * (box[k, 2] if nz >= 0.0 else box[k, 5]))
        beyond = beyond or low - c >= pad
    return beyond


@kernel
def _boxes_meet(box, k, lx, ly, lz, hx, hy, hz):
    """Does box k meet the box (l, h) (touching counts)?"""
    return (box[k, 0] <= hx and box[k, 3] >= lx and box[k, 1] <= hy and box[k, 4] >= ly
            and box[k, 2] <= hz and box[k, 5] >= lz)


@kernel
def _waypoints(tri, s, g, w, X):
    """X (k+2,3) = s, the waypoints of barycentrics w in tri, g (caller's
    coordinates, as smooth's solve writes them)."""
    k = tri.shape[0]
    for d in range(3):
        X[0, d] = s[d]
        X[k + 1, d] = g[d]
        for i in range(k):
            X[i + 1, d] = (tri[i, 0, d] + w[i, 0] * (tri[i, 1, d] - tri[i, 0, d])
                           + w[i, 1] * (tri[i, 2, d] - tri[i, 0, d]))


#: candidate rows up to this long are sorted in place by insertion
SHORT_ROW = 32


@kernel(borrows=True)
def _sort_short_row(key, lo, hi, order):
    """order[:hi - lo] = lo .. hi-1 sorted by key, NaN last (insertion sort,
    stable: for a short row, cheaper than making the array np.argsort
    returns)."""
    for i in range(hi - lo):
        v = key[lo + i]
        m = i
        while m > 0:
            u = key[order[m - 1]]
            if not (v < u or (math.isnan(u) and not math.isnan(v))):
                break
            order[m] = order[m - 1]
            m -= 1
        order[m] = lo + i


@kernel
def _choose_planes(X, cand_start, cand, wtri, wflat, key, planes, use, order):
    """Per segment j of polyline X, the planes that keep it r_eff from its
    candidate walls: walls in the order of ``key`` (their last measured
    distance; nearest first), a wall wholly behind a plane already chosen
    (its largest n.v at most that plane's h) needs none of its own, since
    that plane keeps the segment from it too (on a convex rock, the nearest
    wall's plane covers the whole rock). Any other wall gets its own: n the
    unit vector from its closest point to the segment's, h the largest n.v
    over its corners (every point of the wall has n.y <= h, every point of
    the segment n.x >= h + its distance). Writes planes[c] = (n, h) and
    use[c], and key[c] = the distance of the walls measured; returns False
    when a segment touches a wall (no plane). ``order``: scratch, one entry
    per candidate."""
    ok = True
    for j in range(X.shape[0] - 1):
        lo, hi = cand_start[j], cand_start[j + 1]
        if hi - lo <= SHORT_ROW:         # (no array made for the usual short row)
            _sort_short_row(key, lo, hi, order)
        else:
            srt = np.argsort(key[lo:hi])
            for o in range(hi - lo):
                order[o] = lo + srt[o]
        n_chosen = 0
        for o in range(hi - lo):
            c = order[o]
            t = cand[c]
            covered = False
            for m in range(n_chosen):
                p = order[m]
                nx, ny, nz, h = planes[p, 0], planes[p, 1], planes[p, 2], planes[p, 3]
                covered = covered or max(nx * wtri[t, 0] + ny * wtri[t, 1] + nz * wtri[t, 2],
                                         nx * wtri[t, 3] + ny * wtri[t, 4] + nz * wtri[t, 5],
                                         nx * wtri[t, 6] + ny * wtri[t, 7] + nz * wtri[t, 8]) <= h
            use[c] = not covered
            if covered:
                continue
            d2, px, py, pz, qx, qy, qz = closest_points_segment_triangle(
                X[j, 0], X[j, 1], X[j, 2], X[j + 1, 0], X[j + 1, 1], X[j + 1, 2],
                wtri[t, 0], wtri[t, 1], wtri[t, 2], wtri[t, 3], wtri[t, 4], wtri[t, 5],
                wtri[t, 6], wtri[t, 7], wtri[t, 8], wflat[t])
            dist = math.sqrt(d2)
            ok = ok and dist > 0.0
            nx, ny, nz = (px - qx) / dist, (py - qy) / dist, (pz - qz) / dist
            planes[c, 0] = nx
            planes[c, 1] = ny
            planes[c, 2] = nz
            planes[c, 3] = max(nx * wtri[t, 0] + ny * wtri[t, 1] + nz * wtri[t, 2],
                               nx * wtri[t, 3] + ny * wtri[t, 4] + nz * wtri[t, 5],
                               nx * wtri[t, 6] + ny * wtri[t, 7] + nz * wtri[t, 8])
            key[c] = dist
            # chosen planes first in ``order`` (it is only read up to n_chosen)
            order[n_chosen] = c
            n_chosen += 1
    return ok


@kernel
def _first_keys(X, cand_start, cand, tbox, key):
    """key[c]: squared distance from segment j's midpoint to its candidate
    wall's box, the order of the first round's walls."""
    for j in range(X.shape[0] - 1):
        mx = 0.5 * (X[j, 0] + X[j + 1, 0])
        my = 0.5 * (X[j, 1] + X[j + 1, 1])
        mz = 0.5 * (X[j, 2] + X[j + 1, 2])
        for c in range(cand_start[j], cand_start[j + 1]):
            key[c] = box_d2(tbox, cand[c], mx, my, mz)


@kernel
def _towards_centres(w, cstart, cdata):
    """Move the barycentrics w (k,2) a fraction _CENTRE of the feasible way
    towards their faces' centroids (the witnesses start the first round
    near their faces' edges, where the barrier method needs more steps)."""
    dw = 1.0 / 3.0 - w
    alpha = _step_limit(w, dw, cstart, cdata)
    w += _CENTRE * alpha * dw


@kernel
def _constraints(tri, s, L0, cand_start, planes, use, r_eff, w):
    """The rows (cstart (k+1,), cdata (c,3)) of the barrier method's
    constraints (_smooth_kernels): each plane of segment j in use binds its
    two end waypoints (j-1 and j; s and g are fixed), n.x >= h + r_eff, written
    as a slack in the barycentrics of the scaled corridor (coordinates
    relative to s, over L0). A row that the whole of its waypoint's face
    meets (all three corners) can never bind, and is left out. Returns
    (cstart, cdata, smallest slack at w)."""
    k = tri.shape[0]
    n_planes = planes.shape[0]
    row = np.empty((n_planes, 2, 3))     # per plane, its rows for waypoints j-1 and j
    need = np.zeros((n_planes, 2), dtype=np.bool_)
    cstart = np.zeros(k + 1, dtype=np.int64)
    for j in range(k + 1):
        for c in range(cand_start[j], cand_start[j + 1]):
            if not use[c]:
                continue
            for side in range(2):
                i = j - 1 + side
                if i < 0 or i >= k:
                    continue
                _plane_row(tri, s, L0, planes, c, i, r_eff, row[c, side])
                base, beta, gamma = row[c, side, 0], row[c, side, 1], row[c, side, 2]
                if min(base, base + beta, base + gamma) <= 0.0:
                    need[c, side] = True
                    cstart[i + 1] += 1
    for i in range(k):                   # counts -> starts
        cstart[i + 1] += cstart[i]
    cdata = np.empty((cstart[k], 3))
    fill = cstart[:k].copy()
    lowest = math.inf
    for j in range(k + 1):
        for c in range(cand_start[j], cand_start[j + 1]):
            for side in range(2):
                if not need[c, side]:
                    continue
                i = j - 1 + side
                cdata[fill[i], :] = row[c, side]
                fill[i] += 1
                lowest = min(lowest, row[c, side, 0] + row[c, side, 1] * w[i, 0]
                             + row[c, side, 2] * w[i, 1])
    return cstart, cdata, lowest


@kernel
def _plane_row(tri, s, L0, planes, c, i, r_eff, out):
    """out (3,): plane c's slack n.x - h - r_eff at waypoint i's point
    x = t0 + u (t1 - t0) + v (t2 - t0), over L0, as (base, beta, gamma):
    base + beta u + gamma v."""
    nx, ny, nz, h = planes[c, 0], planes[c, 1], planes[c, 2], planes[c, 3]
    out[0] = (nx * (tri[i, 0, 0] - s[0]) + ny * (tri[i, 0, 1] - s[1])
              + nz * (tri[i, 0, 2] - s[2]) + (nx * s[0] + ny * s[1] + nz * s[2]
                                               - h - r_eff)) / L0
    out[1] = (nx * (tri[i, 1, 0] - tri[i, 0, 0]) + ny * (tri[i, 1, 1] - tri[i, 0, 1])
              + nz * (tri[i, 1, 2] - tri[i, 0, 2])) / L0
    out[2] = (nx * (tri[i, 2, 0] - tri[i, 0, 0]) + ny * (tri[i, 2, 1] - tri[i, 0, 1])
              + nz * (tri[i, 2, 2] - tri[i, 0, 2])) / L0


@kernel
def _barycentrics(tri, X, w):
    """w (k,2): the barycentrics (u, v) of waypoints X[1:-1] in their faces."""
    for i in range(tri.shape[0]):
        w[i, 0], w[i, 1] = plane_uv(tri, i, X[i + 1, 0], X[i + 1, 1], X[i + 1, 2])


@kernel
def _keeps_all(bvh, X, r_check):
    """Does every segment of polyline X keep r_check from every wall?"""
    box, node, tri, tbox, flat = bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat
    stack = np.empty(2 * bvh.depth + 4, dtype=np.int64)
    ok = True
    for j in range(X.shape[0] - 1):
        _, k, _, _, _, _, _, _ = segment_clearance(
            box, node, tri, tbox, flat, stack, X[j, 0], X[j, 1], X[j, 2],
            X[j + 1, 0], X[j + 1, 1], X[j + 1, 2], r_check, True)
        ok = ok and k < 0
    return ok


@kernel
def _segment_walls(corridor, near_start, near):
    """The candidate walls of each segment j: those of its tetrahedron
    corridor[j] (CSR by segment)."""
    cand_start = np.zeros(corridor.shape[0] + 1, dtype=np.int64)
    for j in range(corridor.shape[0]):
        t = corridor[j]
        cand_start[j + 1] = cand_start[j] + near_start[t + 1] - near_start[t]
    cand = np.empty(cand_start[-1], dtype=np.int64)
    for j in range(corridor.shape[0]):
        t = corridor[j]
        cand[cand_start[j]:cand_start[j + 1]] = near[near_start[t]:near_start[t + 1]]
    return cand_start, cand


@kernel
def smooth_keeping(bvh, s, g, tri, fvid, corridor, near_start, near, r_eff, r_check, rtol,
                   max_rounds, max_iter, gap_rel, X):
    """Shorten polyline X (k+2,3): s, one point strictly inside each face
    tri[i] (k,3,3), g, segment j inside tetrahedron corridor[j] and keeping
    r_eff from every wall, without giving that up. Each round takes the
    planes of :func:`_choose_planes` for each segment and the walls that
    may come within r_eff of its tetrahedron (``near``), and requires the segment's two
    end waypoints to stay r_eff beyond each (which keeps the whole segment
    r_eff from the walls behind it); the barrier method then finds the
    shortest polyline through the faces under those constraints, starting
    from the current one (after the first round, from a barrier weight
    already near the end: the start is near the answer). Rounds stop when
    one shortens the polyline by less than _STOP * rtol of its length, or
    after ``max_rounds``. The answer is then reduced to its turning points
    (:func:`regn.query.paths._turning_points_kernels.simplify`, under the last round's
    constraints too; ``fvid`` the faces' vertex ids, ``gap_rel`` its
    tolerance), and must pass the exact check that it keeps r_check
    (failing that, the reduction that drops only points exactly on a line
    must, then the polyline before the reduction; only rounding could fail
    all three: then X is left as it came). Returns the number of
    rows of X that hold the answer (k + 2 when unchanged)."""
    k = tri.shape[0]
    cand_start, cand = _segment_walls(corridor, near_start, near)
    planes = np.empty((cand.shape[0], 4))
    use = np.empty(cand.shape[0], dtype=np.bool_)
    key = np.empty(cand.shape[0])
    order = np.empty(cand.shape[0], dtype=np.int64)
    _first_keys(X, cand_start, cand, bvh.tbox, key)
    L0 = _polyline_length(X)
    if not L0 > 0.0:
        return 0
    P0, E1, E2, s0, g0 = _scaled_corridor(s, g, tri, L0)
    w = np.empty((k, 2))
    _barycentrics(tri, X, w)
    trial = np.empty_like(X)
    length = L0
    rounds = 0
    tau0 = 0.0
    kept_start = np.zeros(k + 1, dtype=np.int64)
    kept_data = np.empty((0, 3))
    for _ in range(max_rounds):
        if not _choose_planes(trial if rounds else X, cand_start, cand, bvh.tri, bvh.flat,
                              key, planes, use, order):
            break
        cstart, cdata, lowest = _constraints(tri, s, L0, cand_start, planes, use, r_eff, w)
        if not lowest > 0.0:
            break                        # not strictly inside: no barrier start
        wt = w.copy()
        if rounds == 0:
            _towards_centres(wt, cstart, cdata)
        # (the central-path bound is skipped: it next to never stops a round)
        _, _, status = _ipm(P0, E1, E2, s0, g0, rtol, max_iter, wt, _MU, _CENTERING,
                            cstart, cdata, tau0, _COLD, np.bool_(False))
        _waypoints(tri, s, g, wt, trial)
        new = _polyline_length(trial)
        if not new <= length:
            break
        copy_rows(w, 0, wt, 0, w.shape[0])
        kept_start, kept_data = cstart, cdata
        rounds += 1
        gain = length - new
        length = new
        tau0 = (5.0 * k + 2.0 + cdata.shape[0]) / _WARM_GAP
        if gain <= _STOP * rtol * length or status == 2:
            break
    if rounds == 0:
        return k + 2
    _waypoints(tri, s, g, w, trial)
    out = np.empty_like(X)
    origin = np.empty(k + 2, dtype=np.int64)
    # the turning points; dropping a near-duplicate or a barely bent point
    # moves a segment sideways (by up to ~sqrt(budget) of the length), which
    # may cost the clearance: then only points exactly on a line go
    for budget in (LENGTH_BUDGET_REL, 0.0):
        n = simplify(s, g, tri, fvid, kept_start, kept_data, w, trial,
                     gap_rel if budget > 0.0 else 0.0, budget, 0.0, out, origin)
        if _keeps_all(bvh, out[:n], r_check):
            copy_rows(X, 0, out, 0, n)
            return n
    if _keeps_all(bvh, trial, r_check):
        copy_rows(X, 0, trial, 0, X.shape[0])
    return k + 2
