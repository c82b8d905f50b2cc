"""Compiled kernels of the waypoint polish (:mod:`regn.query.paths.waypoints`): the
polyline that bends only on a given set of active constraints, solved
exactly. :func:`bends` turns each waypoint's active constraints into the
line (or point) its bend may slide along; :func:`newton` finds where on
those lines the polyline from s to g is shortest (a tridiagonal Newton
solve, the lines' parameters clamped to their ends).

The constraints are those of :mod:`regn.query.paths._polish_kernels`.
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import copy_items, kernel
from ...tolerances import BARY_TOL

#: a bend's curvature is taken as at least this fraction of the largest it
#: can have (its line's length squared over its shorter segment)
FLAT_CURVATURE = 1e-9
#: Newton steps at most per solve
MAX_NEWTON = 60


@kernel
def slack(con, i, c, u, v):
    return con[i, c, 0] + con[i, c, 1] * u + con[i, c, 2] * v


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
        s0 = slack(con, i, c, start[0], start[1])
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
        ok = ok and slack(con, i, c, u, v) >= -BARY_TOL
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
def bends(tri, con, ncon, fvid, act, X, var_of, A, D, lo, hi, t):
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
def bend_points(s, g, A, D, t, m, B):
    """B (m+2,3): s, the bend points A + t D, g."""
    for d in range(3):
        B[0, d] = s[d]
        B[m + 1, d] = g[d]
        for j in range(m):
            B[j + 1, d] = A[j, d] + t[j] * D[j, d]


@kernel
def polyline_length(B, m):
    total = 0.0
    for j in range(m + 1):
        total += math.sqrt((B[j + 1, 0] - B[j, 0]) ** 2 + (B[j + 1, 1] - B[j, 1]) ** 2
                           + (B[j + 1, 2] - B[j, 2]) ** 2)
    return total


@kernel
def newton(s, g, A, D, lo, hi, t, m, floor):
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
    bend_points(s, g, A, D, t, m, B)
    f = polyline_length(B, m)
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
            bend_points(s, g, A, D, trial, m, B)
            ft = polyline_length(B, m)
            if ft <= f:
                better = True
                break
            alpha *= 0.5
        if not better:
            bend_points(s, g, A, D, t, m, B)
            return f                     # no decrease left: settled to rounding
        settled = f - ft <= 1e-15 * f
        copy_items(t, 0, trial, 0, m)
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

