"""Compiled kernels of the waypoints (:mod:`regn.query.paths.waypoints`): the
active-set polish that turns the smoother's near-optimal polyline into the exact
optimum of its active constraints (the solve for one active set is
:mod:`regn.query.paths._bend_solve_kernels`; keeping only the points where
the polyline turns, :mod:`regn.query.paths._turning_points_kernels`).

Each waypoint i of a corridor lies in its portal triangle tri[i], written
in barycentrics (u, v) of x = t0 + u (t1 - t0) + v (t2 - t0); its
constraints are half-planes a + b u + c v >= 0 of (u, v): the triangle's
three (u >= 0, v >= 0, 1 - u - v >= 0; ids 0, 1, 2) and, for a path with a
radius, the smoother's planes (ids 3...; rows cstart[i]..cstart[i+1]-1 of
cdata, as in :mod:`regn.query.paths._smooth_kernels`). ``con`` (k, m, 3) holds
them normalised (b^2 + c^2 = 1, so a + b u + c v is the distance to the
line in the (u, v) plane) and ``ncon`` (k,) their count.
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import copy_rows, kernel, set_row
from ...tolerances import BARY_TOL
from ._bend_solve_kernels import bend_points, bends, newton, slack

#: a constraint whose normalised slack at the smoother's answer is below this
#: starts active (the active-set loop corrects a wrong guess)
ACTIVE_SLACK = 1e-3

#: active-set solves at most
MAX_SETS = 32


@kernel
def constraint_table(cstart, cdata, k, shrink):
    """(con (k, m, 3), ncon (k,)): each waypoint's normalised constraints,
    the triangle's three first (see the module docstring), those three
    requiring barycentric coordinates of at least ``shrink``."""
    m = 3
    if cdata is not None:
        for i in range(k):
            m = max(m, 3 + cstart[i + 1] - cstart[i])
    con = np.zeros((k, m, 3))
    ncon = np.full(k, 3, dtype=np.int64)
    s2 = math.sqrt(0.5)
    for i in range(k):
        con[i, 0, 0] = -shrink                   # u >= shrink
        con[i, 0, 1] = 1.0
        con[i, 1, 0] = -shrink                   # v >= shrink
        con[i, 1, 2] = 1.0
        con[i, 2, 0] = s2 * (1.0 - shrink)       # 1 - u - v >= shrink
        con[i, 2, 1] = -s2
        con[i, 2, 2] = -s2
        if cdata is not None:
            for c in range(cstart[i], cstart[i + 1]):
                norm = math.sqrt(cdata[c, 1] ** 2 + cdata[c, 2] ** 2)
                if norm > 0.0:
                    j = ncon[i]
                    con[i, j, 0] = cdata[c, 0] / norm
                    con[i, j, 1] = cdata[c, 1] / norm
                    con[i, j, 2] = cdata[c, 2] / norm
                    ncon[i] = j + 1
    return con, ncon


@kernel
def _guess_active(con, ncon, w, act):
    """act (k,2): the (up to) two constraints of each waypoint with the
    smallest slacks below ACTIVE_SLACK at barycentrics w, -1 for none."""
    for i in range(w.shape[0]):
        act[i, 0] = -1
        act[i, 1] = -1
        best0 = ACTIVE_SLACK
        best1 = ACTIVE_SLACK
        for c in range(ncon[i]):
            s = slack(con, i, c, w[i, 0], w[i, 1])
            if s < best0:
                act[i, 1], best1 = act[i, 0], best0
                act[i, 0], best0 = c, s
            elif s < best1:
                act[i, 1], best1 = c, s


@kernel
def plane_uv(tri, i, x0, x1, x2):
    """Barycentrics (u, v) of point x's projection on the plane of triangle
    tri[i] ((3,3) corners): x's foot is corner 0 + u (corner 1 - corner 0)
    + v (corner 2 - corner 0); NaN or inf for a degenerate triangle."""
    a = b = c = p = q = 0.0
    for d in range(3):
        e1 = tri[i, 1, d] - tri[i, 0, d]
        e2 = tri[i, 2, d] - tri[i, 0, d]
        r = (x0 if d == 0 else x1 if d == 1 else x2) - tri[i, 0, d]
        a += e1 * e1
        b += e1 * e2
        c += e2 * e2
        p += e1 * r
        q += e2 * r
    det = a * c - b * b
    return (c * p - b * q) / det, (a * q - b * p) / det


@kernel
def _crossings(tri, s, g, B, var_of, X, uv):
    """X (k+2,3): s, each waypoint's point, g: a bend's point, or where the
    straight segment between the bends around a free waypoint crosses its
    triangle's plane; uv (k,2) their barycentrics."""
    k = tri.shape[0]
    set_row(X, 0, s)
    set_row(X, k + 1, g)
    i = 0
    prev = 0                             # B row of the bend before (0: s)
    while i < k:
        if var_of[i] >= 0:
            prev = var_of[i] + 1
            copy_rows(X, i + 1, B, prev, 1)
            uv[i, 0], uv[i, 1] = plane_uv(tri, i, B[prev, 0], B[prev, 1], B[prev, 2])
            i += 1
            continue
        nxt = i
        while nxt < k and var_of[nxt] < 0:
            nxt += 1
        after = B.shape[0] - 1 if nxt == k else var_of[nxt] + 1
        for f in range(i, nxt):          # free waypoints on the segment prev -> after
            n0, n1, n2 = _normal(tri, f)
            e0, e1, e2 = B[after, 0] - B[prev, 0], B[after, 1] - B[prev, 1], \
                B[after, 2] - B[prev, 2]
            den = n0 * e0 + n1 * e1 + n2 * e2
            alpha = (n0 * (tri[f, 0, 0] - B[prev, 0]) + n1 * (tri[f, 0, 1] - B[prev, 1])
                     + n2 * (tri[f, 0, 2] - B[prev, 2])) / den
            for d in range(3):
                X[f + 1, d] = B[prev, d] + alpha * (B[after, d] - B[prev, d])
            uv[f, 0], uv[f, 1] = plane_uv(tri, f, X[f + 1, 0], X[f + 1, 1], X[f + 1, 2])
        i = nxt


@kernel
def _normal(tri, i):
    ux, uy, uz = tri[i, 1, 0] - tri[i, 0, 0], tri[i, 1, 1] - tri[i, 0, 1], \
        tri[i, 1, 2] - tri[i, 0, 2]
    vx, vy, vz = tri[i, 2, 0] - tri[i, 0, 0], tri[i, 2, 1] - tri[i, 0, 1], \
        tri[i, 2, 2] - tri[i, 0, 2]
    return uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx


@kernel
def _add_broken(tri, con, ncon, uv, var_of, act):
    """Each free waypoint whose crossing breaks a constraint (slack below
    -BARY_TOL) takes its most broken one as active; returns whether any did."""
    changed = False
    for i in range(tri.shape[0]):
        if var_of[i] >= 0:
            continue
        worst, c_worst = -BARY_TOL, -1
        for c in range(ncon[i]):
            sl = slack(con, i, c, uv[i, 0], uv[i, 1])
            if sl < worst:
                worst, c_worst = sl, c
        if c_worst >= 0:
            act[i, 0] = c_worst
            act[i, 1] = -1
            changed = True
    return changed


@kernel
def _release_one(tri, con, X, var_of, act, tried):
    """Release the active constraint its bend presses on least, if one is
    not pressed on at all (the direction that shortens the polyline raises
    its slack) and was not ``tried`` ((k, m) bool) before; returns whether
    one was, marking it tried. A fan (waypoints bending on one mesh edge,
    sharing one variable) moves off it together: its other members release
    every constraint the fan's pull does not press on too (one alone would
    stay pinned by the rest)."""
    best, i_best, slot_best = 1e-9, -1, -1
    for i in range(tri.shape[0]):
        if var_of[i] < 0:
            continue
        for slot in range(2):
            c = act[i, slot]
            if c >= 0 and not tried[i, c]:
                rise = _rise(tri, con, X, var_of, i, c)
                if rise > best:
                    best, i_best, slot_best = rise, i, slot
    if i_best < 0:
        return False
    tried[i_best, act[i_best, slot_best]] = True
    first, last = _fan(var_of, i_best)
    for j in range(first, last + 1):
        if var_of[j] < 0:
            continue
        for slot in range(2):
            c = act[j, slot]
            if c >= 0 and (j == i_best and slot == slot_best
                           or j != i_best and _rise(tri, con, X, var_of, j, c) > 1e-9):
                act[j, slot] = -1
        if act[j, 0] < 0:
            act[j, 0], act[j, 1] = act[j, 1], -1
    return True


@kernel
def _rise(tri, con, X, var_of, i, c):
    """How much the pull on waypoint i's bend raises constraint c's slack
    (per unit of pull; 0 without a pull)."""
    gu, gv = _pull(tri, X, var_of, i)
    scale = math.sqrt(gu * gu + gv * gv)
    if not scale > 0.0:
        return 0.0
    return (con[i, c, 1] * gu + con[i, c, 2] * gv) / scale


@kernel
def _fan(var_of, i):
    """(first, last): the waypoints around i sharing its variable."""
    first = i
    while first > 0 and var_of[first - 1] == var_of[i]:
        first -= 1
    last = i
    while last + 1 < var_of.shape[0] and var_of[last + 1] == var_of[i]:
        last += 1
    return first, last


@kernel
def _pull(tri, X, var_of, i):
    """The barycentric components (in waypoint i's triangle) of the pull on
    its bend: the unit vectors to the points before and after the bend (a
    fan's members share it, :func:`_fan`), summed; moving along it shortens
    the polyline."""
    first, last = _fan(var_of, i)
    gx = gy = gz = 0.0
    for nb in (first, last + 2):
        dx, dy, dz = X[nb, 0] - X[i + 1, 0], X[nb, 1] - X[i + 1, 1], X[nb, 2] - X[i + 1, 2]
        dn = math.sqrt(dx * dx + dy * dy + dz * dz)
        if dn > 0.0:
            gx, gy, gz = gx + dx / dn, gy + dy / dn, gz + dz / dn
    return plane_uv(tri, i, tri[i, 0, 0] + gx, tri[i, 0, 1] + gy, tri[i, 0, 2] + gz)


@kernel
def polish(s, g, tri, fvid, con, ncon, w, X):
    """The exact shortest polyline through waypoints constrained as the
    module docstring says, from the smoother's answer (barycentrics w,
    (k,2)): guess the active constraints (slack below ACTIVE_SLACK), solve
    the polyline bending only on them exactly (:func:`newton`), activate
    what a straight stretch breaks until none does, then try releasing the
    bend pressed on least, keeping the release only if the polyline comes
    out shorter, else going back to the best set and trying the next one
    (each constraint is tried once, so the loop cannot cycle; at most
    MAX_SETS solves). X
    (k+2,3) gets s, each waypoint's point, g. Returns (length, is_bend
    (k,) bool), length NaN when no solve comes out feasible."""
    k = tri.shape[0]
    act = np.empty((k, 2), dtype=np.int64)
    _guess_active(con, ncon, w, act)
    var_of = np.empty(k, dtype=np.int64)
    A = np.empty((k, 3))
    D = np.empty((k, 3))
    lo = np.empty(k)
    hi = np.empty(k)
    t = np.empty(k)
    uv = np.empty((k, 2))
    Xw = np.empty((k + 2, 3))
    _waypoints_of(tri, s, g, w, Xw)
    scale = math.sqrt((g[0] - s[0]) ** 2 + (g[1] - s[1]) ** 2 + (g[2] - s[2]) ** 2)
    best = math.inf
    best_act = act.copy()
    tried = np.zeros((k, con.shape[1]), dtype=np.bool_)
    bend = np.zeros(k, dtype=np.bool_)
    for _ in range(MAX_SETS):
        m = bends(tri, con, ncon, fvid, act, Xw, var_of, A, D, lo, hi, t)
        if m < 0:
            break
        length = newton(s, g, A, D, lo, hi, t, m, 1e-12 * scale + 1e-300)
        B = np.empty((m + 2, 3))
        bend_points(s, g, A, D, t, m, B)
        _crossings(tri, s, g, B, var_of, Xw, uv)
        if _add_broken(tri, con, ncon, uv, var_of, act):
            continue
        if length < best:
            best = length
            copy_rows(best_act, 0, act, 0, act.shape[0])
            copy_rows(X, 0, Xw, 0, Xw.shape[0])
            for i in range(k):
                bend[i] = var_of[i] >= 0
        else:                            # the last release did not pay: back
            copy_rows(act, 0, best_act, 0, act.shape[0])
            copy_rows(Xw, 0, X, 0, Xw.shape[0])
            bends(tri, con, ncon, fvid, act, Xw, var_of, A, D, lo, hi, t)
        if not _release_one(tri, con, Xw, var_of, act, tried):
            break
    if best == math.inf:
        return math.nan, bend
    return best, bend


@kernel
def _waypoints_of(tri, s, g, w, X):
    """X (k+2,3) = s, the points of barycentrics w in tri, g."""
    k = tri.shape[0]
    for d in range(3):
        X[0, d] = s[d]
        X[k + 1, d] = g[d]
        for i in range(k):
            X[i + 1, d] = tri[i, 0, d] + w[i, 0] * (tri[i, 1, d] - tri[i, 0, d]) \
                + w[i, 1] * (tri[i, 2, d] - tri[i, 0, d])

