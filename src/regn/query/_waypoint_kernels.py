"""Compiled kernels of the waypoints (:mod:`regn.query.waypoints`): the
polish that turns the smoother's near-optimal polyline into the exact
optimum of its active constraints, and the simplification that keeps only
the points where the polyline turns.

Each waypoint i of a corridor lies in its portal triangle tri[i], written
in barycentrics (u, v) of x = t0 + u (t1 - t0) + v (t2 - t0); its
constraints are half-planes a + b u + c v >= 0 of (u, v): the triangle's
three (u >= 0, v >= 0, 1 - u - v >= 0; ids 0, 1, 2) and, for a path with a
radius, the smoother's planes (ids 3...; rows cstart[i]..cstart[i+1]-1 of
cdata, as in :mod:`regn.query._smooth_kernels`). ``con`` (k, m, 3) holds
them normalised (b^2 + c^2 = 1, so a + b u + c v is the distance to the
line in the (u, v) plane) and ``ncon`` (k,) their count.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel
from ..status import CLEAR
from ..tolerances import BARY_TOL
from ._raycast_kernels import raycast_segment
from ._smooth_kernels import solve

#: a constraint whose normalised slack at the smoother's answer is below this
#: starts active (the active-set loop corrects a wrong guess)
ACTIVE_SLACK = 1e-3
#: merging close points may change a path's length by this fraction of it
LENGTH_BUDGET_REL = 1e-9
#: ... and a point whose dropping saves less than this fraction of that
#: budget is no turn
STRAIGHT_REL = 1e-3
#: nudges tried (each 10 times the one before) before the shrunk portals
NUDGES = 3
#: a bend's curvature is taken as at least this fraction of the largest it
#: can have (its line's length squared over its shorter segment)
FLAT_CURVATURE = 1e-9
#: active-set solves at most, Newton steps at most per solve
MAX_SETS = 32
MAX_NEWTON = 60


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
def _slack(con, i, c, u, v):
    return con[i, c, 0] + con[i, c, 1] * u + con[i, c, 2] * v


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
            s = _slack(con, i, c, w[i, 0], w[i, 1])
            if s < best0:
                act[i, 1], best1 = act[i, 0], best0
                act[i, 0], best0 = c, s
            elif s < best1:
                act[i, 1], best1 = c, s


@kernel
def _uv_to_x(tri, i, u, v, out, row):
    for d in range(3):
        out[row, d] = tri[i, 0, d] + u * (tri[i, 1, d] - tri[i, 0, d]) \
            + v * (tri[i, 2, d] - tri[i, 0, d])


@kernel
def _line_of(con, ncon, i, a, start, direction):
    """The part of constraint a's line inside waypoint i's other
    constraints, as (u, v) = start + t direction, t in [lo, hi]; returns
    (lo, hi), lo > hi when empty."""
    ca, cb, cc = con[i, a, 0], con[i, a, 1], con[i, a, 2]
    # the foot of the origin on the line, and the line's direction
    start[0] = -ca * cb
    start[1] = -ca * cc
    direction[0] = -cc
    direction[1] = cb
    lo, hi = -math.inf, math.inf
    for c in range(ncon[i]):
        if c == a:
            continue
        s0 = _slack(con, i, c, start[0], start[1])
        ds = con[i, c, 1] * direction[0] + con[i, c, 2] * direction[1]
        if ds > 1e-15:
            lo = max(lo, -s0 / ds)
        elif ds < -1e-15:
            hi = min(hi, -s0 / ds)
        elif s0 < 0.0:
            hi = -math.inf
    return lo, hi


@kernel
def _point_of(con, i, a, b):
    """(u, v) where constraints a and b of waypoint i meet (NaN if parallel)."""
    det = con[i, a, 1] * con[i, b, 2] - con[i, a, 2] * con[i, b, 1]
    u = (-con[i, a, 0] * con[i, b, 2] + con[i, b, 0] * con[i, a, 2]) / det
    v = (-con[i, a, 1] * con[i, b, 0] + con[i, b, 1] * con[i, a, 0]) / det
    return u, v


@kernel
def _inside(con, ncon, i, u, v):
    """Does (u, v) meet waypoint i's constraints (to BARY_TOL)? Two nearly
    parallel lines meet far outside the portal: no corner there."""
    ok = True
    for c in range(ncon[i]):
        ok = ok and _slack(con, i, c, u, v) >= -BARY_TOL
    return ok


@kernel
def _same_edge(fvid, i, a, j, b):
    """Are triangle constraints a of waypoint i and b of waypoint j the same
    mesh edge (the edge opposite vertex slot c is constraint c's: u >= 0 is
    the edge opposite t1, v >= 0 opposite t2, 1 - u - v >= 0 opposite t0)?"""
    if a > 2 or b > 2:
        return False
    oa = (a + 1) % 3                     # the vertex slot constraint a leaves out
    ob = (b + 1) % 3
    p0, p1 = fvid[i, (oa + 1) % 3], fvid[i, (oa + 2) % 3]
    q0, q1 = fvid[j, (ob + 1) % 3], fvid[j, (ob + 2) % 3]
    return (p0 == q0 and p1 == q1) or (p0 == q1 and p1 == q0)


@kernel
def _bends(tri, con, ncon, fvid, act, X, var_of, A, D, lo, hi, t):
    """The bend variables of active set ``act``: a waypoint with one active
    constraint bends on that constraint's line (point A + t D, t in
    [lo, hi]), with two at their meeting point (D = 0; when that point
    breaks another of its constraints, on the first one's line); consecutive
    waypoints active on the same mesh edge share one variable (unless
    ``fvid`` is empty: the triangles are shrunk, their edges apart). var_of[i]:
    waypoint i's variable, -1 when free. t starts at the projection of X's
    waypoint. Returns the number of variables, -1 for an empty line."""
    k = tri.shape[0]
    start = np.empty(2)
    direction = np.empty(2)
    m = 0
    for i in range(k):
        var_of[i] = -1
        a, b = act[i, 0], act[i, 1]
        if a < 0:
            continue
        if (b < 0 and i > 0 and var_of[i - 1] >= 0 and act[i - 1, 1] < 0
                and fvid.shape[0] > 0 and _same_edge(fvid, i - 1, act[i - 1, 0], i, a)):
            var_of[i] = var_of[i - 1]    # a fan round one edge: one bend
            continue
        u = v = 0.0
        if b >= 0:
            u, v = _point_of(con, i, a, b)
        if b >= 0 and math.isfinite(u) and math.isfinite(v) and _inside(con, ncon, i, u, v):
            lo[m], hi[m], t[m] = 0.0, 0.0, 0.0
            _uv_to_x(tri, i, u, v, A, m)
            D[m, :] = 0.0
        else:
            act[i, 1] = -1
            lo[m], hi[m] = _line_of(con, ncon, i, a, start, direction)
            if not lo[m] <= hi[m]:
                return -1
            _uv_to_x(tri, i, start[0], start[1], A, m)
            for d in range(3):
                D[m, d] = direction[0] * (tri[i, 1, d] - tri[i, 0, d]) \
                    + direction[1] * (tri[i, 2, d] - tri[i, 0, d])
            dd = D[m, 0] ** 2 + D[m, 1] ** 2 + D[m, 2] ** 2
            proj = ((X[i + 1, 0] - A[m, 0]) * D[m, 0] + (X[i + 1, 1] - A[m, 1]) * D[m, 1]
                    + (X[i + 1, 2] - A[m, 2]) * D[m, 2]) / dd
            t[m] = min(max(proj, lo[m]), hi[m])
        var_of[i] = m
        m += 1
    return m


@kernel
def _bend_points(s, g, A, D, t, m, B):
    """B (m+2,3): s, the bend points A + t D, g."""
    for d in range(3):
        B[0, d] = s[d]
        B[m + 1, d] = g[d]
        for j in range(m):
            B[j + 1, d] = A[j, d] + t[j] * D[j, d]


@kernel
def _length(B, m):
    total = 0.0
    for j in range(m + 1):
        total += math.sqrt((B[j + 1, 0] - B[j, 0]) ** 2 + (B[j + 1, 1] - B[j, 1]) ** 2
                           + (B[j + 1, 2] - B[j, 2]) ** 2)
    return total


@kernel
def _newton(s, g, A, D, lo, hi, t, m, floor):
    """Minimise the length of s, A + t D ..., g over t in [lo, hi] (projected
    Newton on the tridiagonal Hessian, backtracking). ``floor``: segments
    shorter than this count as this long (coincident bends). Returns the
    length, NaN when it does not settle."""
    B = np.empty((m + 2, 3))
    U = np.empty((m + 1, 3))             # unit segment directions
    L = np.empty(m + 1)
    grad = np.empty(m)
    held = np.empty(m, dtype=np.bool_)
    diag = np.empty(m)
    off = np.empty(m)
    step = np.empty(m)
    trial = np.empty(m)
    _bend_points(s, g, A, D, t, m, B)
    f = _length(B, m)
    for _ in range(MAX_NEWTON):
        for j in range(m + 1):
            L[j] = max(math.sqrt((B[j + 1, 0] - B[j, 0]) ** 2 + (B[j + 1, 1] - B[j, 1]) ** 2
                                 + (B[j + 1, 2] - B[j, 2]) ** 2), floor)
            for d in range(3):
                U[j, d] = (B[j + 1, d] - B[j, d]) / L[j]
        big = 0.0
        for j in range(m):
            gj = 0.0
            for d in range(3):
                gj += D[j, d] * (U[j, d] - U[j + 1, d])
            held[j] = (t[j] <= lo[j] and gj > 0.0) or (t[j] >= hi[j] and gj < 0.0) \
                or lo[j] == hi[j]
            grad[j] = 0.0 if held[j] else gj
            big = max(big, abs(grad[j]) * math.sqrt(D[j, 0] ** 2 + D[j, 1] ** 2 + D[j, 2] ** 2))
            diag[j] = 1.0 if held[j] else \
                _quad(D, j, j, U, L, j) + _quad(D, j, j, U, L, j + 1)
            if not held[j]:              # a bend between two points on its own line
                # (a spike along a portal's edge) has no curvature: its step is
                # then a long one, cut at the line's end, not a division by 0
                diag[j] = max(diag[j], FLAT_CURVATURE * (D[j, 0] ** 2 + D[j, 1] ** 2
                                                         + D[j, 2] ** 2) / min(L[j], L[j + 1]))
        for j in range(m):               # couplings to held variables dropped
            off[j] = 0.0
            if j + 1 < m and not held[j] and not held[j + 1]:
                off[j] = -_quad(D, j, j + 1, U, L, j + 1)
        if big <= 1e-15 * f:
            return f
        _tridiagonal(diag, off, grad, step, m)
        decrease = 0.0                   # what the Newton step promises
        for j in range(m):
            decrease += grad[j] * step[j]
        if not decrease > 1e-15 * f:
            return f
        alpha = 1.0
        better = False
        for _ in range(30):
            for j in range(m):
                trial[j] = min(max(t[j] - alpha * step[j], lo[j]), hi[j])
            _bend_points(s, g, A, D, trial, m, B)
            ft = _length(B, m)
            if ft <= f:
                better = True
                break
            alpha *= 0.5
        if not better:
            _bend_points(s, g, A, D, t, m, B)
            return f                     # no decrease left: settled to rounding
        settled = f - ft <= 1e-15 * f
        t[:m] = trial[:m]
        f = ft
        if settled:
            return f
    return f


@kernel
def _quad(D, a, b, U, L, j):
    """D_a^T (I - U_j U_j^T) D_b / L_j."""
    da = D[a, 0] * D[b, 0] + D[a, 1] * D[b, 1] + D[a, 2] * D[b, 2]
    ua = D[a, 0] * U[j, 0] + D[a, 1] * U[j, 1] + D[a, 2] * U[j, 2]
    ub = D[b, 0] * U[j, 0] + D[b, 1] * U[j, 1] + D[b, 2] * U[j, 2]
    return (da - ua * ub) / L[j]


@kernel
def _tridiagonal(diag, off, rhs, out, m):
    """Solve the symmetric tridiagonal system (diag, off: the (j, j+1)
    entries) for out (Thomas algorithm; the system is positive definite)."""
    c = np.empty(m)
    for j in range(m):
        den = diag[j] - (off[j - 1] * c[j - 1] if j > 0 else 0.0)
        c[j] = off[j] / den
        out[j] = (rhs[j] - (off[j - 1] * out[j - 1] if j > 0 else 0.0)) / den
    for j in range(m - 2, -1, -1):
        out[j] -= c[j] * out[j + 1]


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
    X[0, :] = s
    X[k + 1, :] = g
    i = 0
    prev = 0                             # B row of the bend before (0: s)
    while i < k:
        if var_of[i] >= 0:
            prev = var_of[i] + 1
            X[i + 1, :] = B[prev]
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
            sl = _slack(con, i, c, uv[i, 0], uv[i, 1])
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
    the polyline bending only on them exactly (:func:`_newton`), activate
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
        m = _bends(tri, con, ncon, fvid, act, Xw, var_of, A, D, lo, hi, t)
        if m < 0:
            break
        length = _newton(s, g, A, D, lo, hi, t, m, 1e-12 * scale + 1e-300)
        B = np.empty((m + 2, 3))
        _bend_points(s, g, A, D, t, m, B)
        _crossings(tri, s, g, B, var_of, Xw, uv)
        if _add_broken(tri, con, ncon, uv, var_of, act):
            continue
        if length < best:
            best = length
            best_act[:, :] = act
            X[:, :] = Xw
            for i in range(k):
                bend[i] = var_of[i] >= 0
        else:                            # the last release did not pay: back
            act[:, :] = best_act
            Xw[:, :] = X
            _bends(tri, con, ncon, fvid, act, Xw, var_of, A, D, lo, hi, t)
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
    base = _length(X, k)
    src = X
    if length <= base * (1.0 + 1e-12) and np.all(np.isfinite(P)):
        src = P
        base = _length(P, k)
    else:
        bend[:] = True
    out[0, :] = s
    origin[0] = -1
    n = 1
    for i in range(k):
        if bend[i] and _dist(out, n - 1, src, i + 1) > 0.0:
            out[n, :] = src[i + 1]
            origin[n] = i
            n += 1
    out[n, :] = g
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
        out[kept, :] = out[j]
        origin[kept] = origin[j]
        kept += 1
    out[kept, :] = out[n - 1]
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
    (:func:`regn.query._raycast_kernels.raycast_segment`; ``tables`` a
    :class:`regn.query.locate.LocateTables`), and if one is not clear the
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
    n = simplify(s, g, tri, fvid, None, None, w, X, gap_rel, LENGTH_BUDGET_REL, 0.0, exact,
                 origin)
    if n < k + 2:
        for step in range(NUDGES):       # the smallest nudge the walk accepts
            out[:n, :] = exact[:n]
            _nudge(tri, out, origin, n, nudge * 10.0 ** step)
            if _walks_clear(tables, out, n):
                return n
    # the exact optimum touches a wall the walk trips on (a pinch, a graze):
    # the same on portals shrunk as much as the largest nudge, every point
    # inside them
    n = simplify(s, g, tri, fvid, None, None, w, X, gap_rel, LENGTH_BUDGET_REL,
                 nudge * 10.0 ** (NUDGES - 1), out, origin)
    if n < k + 2 and _walks_clear(tables, out, n):
        return n
    out[:k + 2, :] = X
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
    (:func:`regn.query._smooth_kernels.solve`) into X (k+2,3), then its
    turning points (:func:`simplify_polyline`) into out; returns their
    number."""
    solve(s, g, tri, rtol, max_iter, X)
    return simplify_polyline(tables, s, g, tri, fvid, X, gap_rel, nudge, out)
