"""Compiled kernels of corridor smoothing (:mod:`regn.query.paths.smooth`): the
barrier method on the waypoints' barycentric coordinates, described in that
module's docstring.

The corridor is scaled so its centroid polyline has length 1: k portal
triangles P0[i] + u E1[i] + v E2[i] (u, v, 1-u-v >= 0) between the ends s
and g. The method's arrays, for k waypoints: X (k+2,3) the polyline, D
(k+1,3) its segments, A (k+1,) a_j = sqrt(1 + tau^2 |d_j|^2), G (k+1,3) and
H (k+1,6) the gradient and Hessian (xx xy xz yy yz zz) of each segment's
psi, grad (k,2) the gradient in w, Sinv (k,3) and Lo (k,4) the factorised
block-tridiagonal Hessian (inverse Schur blocks a b c; blocks (i+1, i),
rows w_{i+1}, cols w_i), b (k,2) the eliminated right-hand side, dw (k,2)
the Newton step, wt (k,2) a line-search trial, Y (k+1,3) segment
multipliers of the dual bound. The helpers take these arrays themselves,
not records: a record handed to a helper called every iteration costs
reference-count updates on every call (measured: +25 % here).

Optional linear constraints on the waypoints (the paths of agents with a
radius, :mod:`regn.query.radius.portals`): ``cstart`` (k+1,) and ``cdata`` (c,3)
list waypoint i's constraints as rows cstart[i]..cstart[i+1]-1, each
(alpha, beta, gamma) requiring the slack alpha + beta u + gamma v > 0, with
a log barrier each. Without constraints they are empty (cstart all zero,
cdata (0,3), :func:`no_constraints`): every constraint loop is then empty,
so the plain smoother's arithmetic is that of a smoother without them, and
numba compiles each helper once for both uses (None would compile a second
version of every helper: ~10 s more on a machine's first run). The ``is not
None`` branches are kept for a caller that passes None.
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import copy_rows, kernel
from ...tolerances import SMOOTH_GAP_FLOOR

# the method's parameters: fraction to the boundary, Armijo slope, backtracking
# halvings, and the tau beyond which (relative to the barrier parameter) the
# numbers are too far gone to trust
_TO_BOUNDARY = 0.99
_ARMIJO = 0.25
_HALVINGS = 60
_TAU_LIMIT = 1e14


@kernel
def _eval(P0, E1, E2, s, g, w, tau, X, D, A, cstart, cdata):
    """Waypoints X, segments D and a_j (A) of barycentrics w; returns
    (length, barrier objective), inf when w is not strictly feasible."""
    k = P0.shape[0]
    for i in range(3):
        X[0, i] = s[i]
        X[k + 1, i] = g[i]
    # (no exit from inside a loop: that costs reference-count updates on
    # every call)
    feasible = True
    for i in range(k):
        u = w[i, 0]
        v = w[i, 1]
        q = 1.0 - u - v
        feasible = feasible and u > 0.0 and v > 0.0 and q > 0.0
        for d in range(3):
            X[i + 1, d] = P0[i, d] + u * E1[i, d] + v * E2[i, d]
        if cdata is not None:
            for c in range(cstart[i], cstart[i + 1]):
                feasible = feasible and cdata[c, 0] + cdata[c, 1] * u + cdata[c, 2] * v > 0.0
    if not feasible:
        return np.inf, np.inf
    length = 0.0
    phi = 0.0
    for j in range(k + 1):
        r2 = 0.0
        for d in range(3):
            dc = X[j + 1, d] - X[j, d]
            D[j, d] = dc
            r2 += dc * dc
        length += math.sqrt(r2)
        a = math.sqrt(1.0 + tau * tau * r2)
        A[j] = a
        # one log per waypoint: its barrier terms and segment j's log(1+a)
        if j < k:
            phi += a - math.log(w[j, 0] * w[j, 1] * (1.0 - w[j, 0] - w[j, 1]) * (1.0 + a))
        else:
            phi += a - math.log1p(a)
    if cdata is not None:
        for i in range(k):
            for c in range(cstart[i], cstart[i + 1]):
                phi -= math.log(cdata[c, 0] + cdata[c, 1] * w[i, 0] + cdata[c, 2] * w[i, 1])
    return length, phi


@kernel
def _dual(P0, E1, E2, s, g, Y, lam, cstart, cdata):
    """Dual objective for segment multipliers Y ((k+1,3), each |y_j| <= 1):
    y_k.g - y_0.s + sum_i min over the vertices v of tri[i] of (y_{i-1}-y_i).v,
    a lower bound on the shortest length (weak duality). With constraints,
    their multipliers ``lam`` (>= 0) subtract lam_c times each slack inside
    the minimum (a slack is >= 0 wherever the constraints hold)."""
    k = P0.shape[0]
    dual = (Y[k, 0] * g[0] + Y[k, 1] * g[1] + Y[k, 2] * g[2]
            - Y[0, 0] * s[0] - Y[0, 1] * s[1] - Y[0, 2] * s[2])
    for i in range(k):
        c0 = Y[i, 0] - Y[i + 1, 0]
        c1 = Y[i, 1] - Y[i + 1, 1]
        c2 = Y[i, 2] - Y[i + 1, 2]
        v0 = P0[i, 0] * c0 + P0[i, 1] * c1 + P0[i, 2] * c2
        v1 = v0 + E1[i, 0] * c0 + E1[i, 1] * c1 + E1[i, 2] * c2
        v2 = v0 + E2[i, 0] * c0 + E2[i, 1] * c1 + E2[i, 2] * c2
        if cdata is not None:
            la = lb = lc = 0.0
            for c in range(cstart[i], cstart[i + 1]):
                la += lam[c] * cdata[c, 0]
                lb += lam[c] * cdata[c, 1]
                lc += lam[c] * cdata[c, 2]
            v0 -= la
            v1 -= la + lb
            v2 -= la + lc
        dual += min(v0, v1, v2)
    return dual


@kernel
def _segment_derivatives(tau, A, D, G, H):
    """Gradient G and Hessian H of each segment's psi(d) = a - log(1 + a)."""
    for j in range(A.shape[0]):
        a = A[j]
        f = tau * tau / (1.0 + a)        # d psi / d d = f d
        c2 = f * f / a                   # Hessian f I - c2 d d^T (PSD)
        d0, d1, d2 = D[j, 0], D[j, 1], D[j, 2]
        G[j, 0] = f * d0
        G[j, 1] = f * d1
        G[j, 2] = f * d2
        H[j, 0] = f - c2 * d0 * d0
        H[j, 1] = -c2 * d0 * d1
        H[j, 2] = -c2 * d0 * d2
        H[j, 3] = f - c2 * d1 * d1
        H[j, 4] = -c2 * d1 * d2
        H[j, 5] = f - c2 * d2 * d2


@kernel
def _dual_at_central_path(P0, E1, E2, s, g, tau, G, Y, w, lam, cstart, cdata):
    """The dual bound at y_j = G_j / tau (any |y_j| <= 1 gives one), and
    lam_c = 1 / (tau slack_c)."""
    for j in range(G.shape[0]):
        Y[j, 0] = G[j, 0] / tau
        Y[j, 1] = G[j, 1] / tau
        Y[j, 2] = G[j, 2] / tau
    if cdata is not None:
        for i in range(w.shape[0]):
            for c in range(cstart[i], cstart[i + 1]):
                lam[c] = 1.0 / (tau * (cdata[c, 0] + cdata[c, 1] * w[i, 0]
                                       + cdata[c, 2] * w[i, 1]))
    return _dual(P0, E1, E2, s, g, Y, lam, cstart, cdata)


@kernel(inline=True)
def _hessian_times_edges(H, j, e0, e1, e2, f0, f1, f2):
    """H_j E1 and H_j E2 for one waypoint's edge vectors e and f."""
    hxx, hxy, hxz = H[j, 0], H[j, 1], H[j, 2]
    hyy, hyz, hzz = H[j, 3], H[j, 4], H[j, 5]
    return (hxx * e0 + hxy * e1 + hxz * e2, hxy * e0 + hyy * e1 + hyz * e2,
            hxz * e0 + hyz * e1 + hzz * e2, hxx * f0 + hxy * f1 + hxz * f2,
            hxy * f0 + hyy * f1 + hyz * f2, hxz * f0 + hyz * f1 + hzz * f2)


@kernel(inline=True)
def _diagonal_block(E1, E2, G, H, w, i, cstart, cdata):
    """Waypoint i's gradient (g0, g1) and Hessian block (da db; db dc) in w:
    its two segments' psi through E_i, plus its three log barriers (and
    its constraints' log barriers)."""
    u = w[i, 0]
    v = w[i, 1]
    q = 1.0 - u - v
    gx0 = G[i, 0] - G[i + 1, 0]
    gx1 = G[i, 1] - G[i + 1, 1]
    gx2 = G[i, 2] - G[i + 1, 2]
    e0, e1, e2 = E1[i, 0], E1[i, 1], E1[i, 2]
    f0, f1, f2 = E2[i, 0], E2[i, 1], E2[i, 2]
    g0 = e0 * gx0 + e1 * gx1 + e2 * gx2 - 1.0 / u + 1.0 / q
    g1 = f0 * gx0 + f1 * gx1 + f2 * gx2 - 1.0 / v + 1.0 / q
    hxx = H[i, 0] + H[i + 1, 0]
    hxy = H[i, 1] + H[i + 1, 1]
    hxz = H[i, 2] + H[i + 1, 2]
    hyy = H[i, 3] + H[i + 1, 3]
    hyz = H[i, 4] + H[i + 1, 4]
    hzz = H[i, 5] + H[i + 1, 5]
    he0 = hxx * e0 + hxy * e1 + hxz * e2
    he1 = hxy * e0 + hyy * e1 + hyz * e2
    he2 = hxz * e0 + hyz * e1 + hzz * e2
    hf0 = hxx * f0 + hxy * f1 + hxz * f2
    hf1 = hxy * f0 + hyy * f1 + hyz * f2
    hf2 = hxz * f0 + hyz * f1 + hzz * f2
    iq2 = 1.0 / (q * q)
    da = e0 * he0 + e1 * he1 + e2 * he2 + 1.0 / (u * u) + iq2
    db = e0 * hf0 + e1 * hf1 + e2 * hf2 + iq2
    dc = f0 * hf0 + f1 * hf1 + f2 * hf2 + 1.0 / (v * v) + iq2
    if cdata is not None:
        for c in range(cstart[i], cstart[i + 1]):
            beta = cdata[c, 1]
            gamma = cdata[c, 2]
            inv = 1.0 / (cdata[c, 0] + beta * u + gamma * v)
            g0 -= beta * inv
            g1 -= gamma * inv
            da += beta * beta * inv * inv
            db += beta * gamma * inv * inv
            dc += gamma * gamma * inv * inv
    return g0, g1, da, db, dc


@kernel
def _factor(E1, E2, w, G, H, grad, Sinv, Lo, b, cstart, cdata):
    """The gradient in w (grad) and the block-tridiagonal Hessian in w
    factorised on the fly (Sinv, Lo; right-hand side b); False when a block
    is not positive definite (a numerical stall)."""
    k = E1.shape[0]
    positive = True
    for i in range(k):                   # (to the end: see _eval)
        g0, g1, da, db, dc = _diagonal_block(E1, E2, G, H, w, i, cstart, cdata)
        grad[i, 0] = g0
        grad[i, 1] = g1
        r0 = -g0
        r1 = -g1
        if i > 0:
            # S_i = D_i - L S^-1 L^T,  b_i -= L S^-1 b_{i-1}
            l00, l01, l10, l11 = Lo[i - 1, 0], Lo[i - 1, 1], Lo[i - 1, 2], Lo[i - 1, 3]
            sa, sb, sc = Sinv[i - 1, 0], Sinv[i - 1, 1], Sinv[i - 1, 2]
            m00 = l00 * sa + l01 * sb
            m01 = l00 * sb + l01 * sc
            m10 = l10 * sa + l11 * sb
            m11 = l10 * sb + l11 * sc
            da -= m00 * l00 + m01 * l01
            db -= m00 * l10 + m01 * l11
            dc -= m10 * l10 + m11 * l11
            r0 -= m00 * b[i - 1, 0] + m01 * b[i - 1, 1]
            r1 -= m10 * b[i - 1, 0] + m11 * b[i - 1, 1]
        det = da * dc - db * db
        positive = positive and det > 0.0 and da > 0.0
        Sinv[i, 0] = dc / det
        Sinv[i, 1] = -db / det
        Sinv[i, 2] = da / det
        b[i, 0] = r0
        b[i, 1] = r1
        if i + 1 < k:
            # coupling through segment i+1: -E_{i+1}^T H_{i+1} E_i
            he0, he1, he2, hf0, hf1, hf2 = _hessian_times_edges(
                H, i + 1, E1[i, 0], E1[i, 1], E1[i, 2], E2[i, 0], E2[i, 1], E2[i, 2])
            n0, n1, n2 = E1[i + 1, 0], E1[i + 1, 1], E1[i + 1, 2]
            p0, p1, p2 = E2[i + 1, 0], E2[i + 1, 1], E2[i + 1, 2]
            Lo[i, 0] = -(n0 * he0 + n1 * he1 + n2 * he2)
            Lo[i, 1] = -(n0 * hf0 + n1 * hf1 + n2 * hf2)
            Lo[i, 2] = -(p0 * he0 + p1 * he1 + p2 * he2)
            Lo[i, 3] = -(p0 * hf0 + p1 * hf1 + p2 * hf2)
    return positive


@kernel
def _newton_step(Sinv, Lo, b, grad, dw):
    """Back substitution of the factorised system into dw; returns the
    squared Newton decrement."""
    k = dw.shape[0]
    lam2 = 0.0
    for i in range(k - 1, -1, -1):
        r0 = b[i, 0]
        r1 = b[i, 1]
        if i + 1 < k:
            r0 -= Lo[i, 0] * dw[i + 1, 0] + Lo[i, 2] * dw[i + 1, 1]
            r1 -= Lo[i, 1] * dw[i + 1, 0] + Lo[i, 3] * dw[i + 1, 1]
        dw[i, 0] = Sinv[i, 0] * r0 + Sinv[i, 1] * r1
        dw[i, 1] = Sinv[i, 1] * r0 + Sinv[i, 2] * r1
        lam2 -= grad[i, 0] * dw[i, 0] + grad[i, 1] * dw[i, 1]
    return lam2


@kernel
def _dual_at_newton_point(P0, E1, E2, s, g, tau, G, H, dw, Y, w, lam, cstart, cdata):
    """The dual bound at the central-path multipliers linearised at the
    Newton point (error O(lam^2) instead of O(lam)), pulled back into the
    unit ball (constraint multipliers: 1 / (tau slack) linearised, kept >= 0)."""
    k = E1.shape[0]
    for j in range(k + 1):
        dd0 = 0.0
        dd1 = 0.0
        dd2 = 0.0
        if j < k:
            dd0 = E1[j, 0] * dw[j, 0] + E2[j, 0] * dw[j, 1]
            dd1 = E1[j, 1] * dw[j, 0] + E2[j, 1] * dw[j, 1]
            dd2 = E1[j, 2] * dw[j, 0] + E2[j, 2] * dw[j, 1]
        if j > 0:
            dd0 -= E1[j - 1, 0] * dw[j - 1, 0] + E2[j - 1, 0] * dw[j - 1, 1]
            dd1 -= E1[j - 1, 1] * dw[j - 1, 0] + E2[j - 1, 1] * dw[j - 1, 1]
            dd2 -= E1[j - 1, 2] * dw[j - 1, 0] + E2[j - 1, 2] * dw[j - 1, 1]
        y0 = (G[j, 0] + H[j, 0] * dd0 + H[j, 1] * dd1 + H[j, 2] * dd2) / tau
        y1 = (G[j, 1] + H[j, 1] * dd0 + H[j, 3] * dd1 + H[j, 4] * dd2) / tau
        y2 = (G[j, 2] + H[j, 2] * dd0 + H[j, 4] * dd1 + H[j, 5] * dd2) / tau
        ny = math.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
        sc = 1.0 / ny if ny > 1.0 else 1.0
        Y[j, 0] = y0 * sc
        Y[j, 1] = y1 * sc
        Y[j, 2] = y2 * sc
    if cdata is not None:
        for i in range(k):
            for c in range(cstart[i], cstart[i + 1]):
                sl = cdata[c, 0] + cdata[c, 1] * w[i, 0] + cdata[c, 2] * w[i, 1]
                dsl = cdata[c, 1] * dw[i, 0] + cdata[c, 2] * dw[i, 1]
                lam[c] = max((1.0 - dsl / sl) / (tau * sl), 0.0)
    return _dual(P0, E1, E2, s, g, Y, lam, cstart, cdata)


@kernel
def _step_limit(w, dw, cstart, cdata):
    """The largest step along dw, at most 1, that takes no barycentric
    coordinate (nor constraint slack) more than _TO_BOUNDARY of the way to 0."""
    amax = 1.0
    for i in range(w.shape[0]):
        du = dw[i, 0]
        dv = dw[i, 1]
        dq = -du - dv
        if du < 0.0:
            amax = min(amax, -_TO_BOUNDARY * w[i, 0] / du)
        if dv < 0.0:
            amax = min(amax, -_TO_BOUNDARY * w[i, 1] / dv)
        if dq < 0.0:
            amax = min(amax, -_TO_BOUNDARY * (1.0 - w[i, 0] - w[i, 1]) / dq)
        if cdata is not None:
            for c in range(cstart[i], cstart[i + 1]):
                dsl = cdata[c, 1] * du + cdata[c, 2] * dv
                if dsl < 0.0:
                    sl = cdata[c, 0] + cdata[c, 1] * w[i, 0] + cdata[c, 2] * w[i, 1]
                    amax = min(amax, -_TO_BOUNDARY * sl / dsl)
    return amax


@kernel
def _ipm(P0, E1, E2, s, g, rtol, max_iter, w, mu, ctol, cstart, cdata, tau0, cold, central):
    """Barrier method in place on w ((k,2) barycentrics, strictly feasible),
    on a corridor scaled so its starting polyline has length ~1, from the
    barrier weight tau0 (0: ``cold`` times the barrier parameter m, a cold
    start). ``central``: also test the gap bound at the central path before
    each step (besides the one at the Newton point after it). Returns
    (iterations, certified gap, status): 0 = gap reached, 1 = iteration cap,
    2 = numerical stall."""
    k = P0.shape[0]
    m = 5.0 * k + 2.0                    # barrier parameter: 2 per cone, 1 per log
    n_cons = 0
    if cdata is not None:
        n_cons = cdata.shape[0]
        m += n_cons
    lam = np.empty(n_cons)               # the constraints' multipliers
    X, D, A = np.empty((k + 2, 3)), np.empty((k + 1, 3)), np.empty(k + 1)
    G, H, Y = np.empty((k + 1, 3)), np.empty((k + 1, 6)), np.empty((k + 1, 3))
    grad, Sinv, Lo = np.empty((k, 2)), np.empty((k, 3)), np.empty((k, 4))
    b, dw, wt = np.empty((k, 2)), np.empty((k, 2)), np.empty((k, 2))
    best = -np.inf                       # best dual lower bound so far
    tau = cold * m                       # duality-gap bound m/tau ~ initial length
    if tau0 > 0.0:
        tau = tau0
    gap = np.inf
    it = 0
    fresh = False                        # X, D, A, length, phi already hold w at tau
    length = phi = 0.0
    while it < max_iter:
        it += 1
        if not fresh:
            length, phi = _eval(P0, E1, E2, s, g, w, tau, X, D, A, cstart, cdata)
        if not (phi < np.inf):
            return it, gap, 2
        _segment_derivatives(tau, A, D, G, H)
        # the bounds come out within ~3x of the barrier's m / tau, so they
        # are only worth computing once that is near the target (skipping
        # one only ever delays the stop)
        near = m <= 30.0 * rtol * tau * length
        if near and central:
            best = max(best, _dual_at_central_path(P0, E1, E2, s, g, tau, G, Y, w, lam,
                                                   cstart, cdata))
            gap = length - best
            if gap <= rtol * max(best, 0.0) + SMOOTH_GAP_FLOOR:
                return it, gap, 0
        if not _factor(E1, E2, w, G, H, grad, Sinv, Lo, b, cstart, cdata):
            return it, gap, 2
        lam2 = _newton_step(Sinv, Lo, b, grad, dw)
        if not (lam2 >= 0.0 and lam2 < np.inf):
            return it, gap, 2
        if near:
            best = max(best, _dual_at_newton_point(P0, E1, E2, s, g, tau, G, H, dw, Y, w,
                                                   lam, cstart, cdata))
            gap = length - best
            if gap <= rtol * max(best, 0.0) + SMOOTH_GAP_FLOOR:
                return it, gap, 0
        # fraction to the boundary, then halved until phi decreases enough
        # (skipped in the quadratic region lam < 1/4, where the full step
        # provably decreases phi and rounding in phi ~ tau*length would make
        # the test unreliable)
        alpha = _step_limit(w, dw, cstart, cdata)
        ok = False
        lent = phit = 0.0
        for _ in range(_HALVINGS):
            for i in range(k):
                wt[i, 0] = w[i, 0] + alpha * dw[i, 0]
                wt[i, 1] = w[i, 1] + alpha * dw[i, 1]
            lent, phit = _eval(P0, E1, E2, s, g, wt, tau, X, D, A, cstart, cdata)
            if phit < np.inf and (lam2 < 0.0625 or phit <= phi - _ARMIJO * alpha * lam2):
                ok = True
                break
            alpha *= 0.5
        if not ok:
            return it, gap, 2
        copy_rows(w, 0, wt, 0, w.shape[0])
        length, phi = lent, phit
        fresh = True
        if lam2 < ctol:
            fresh = False
            tau *= mu
            if tau > _TAU_LIMIT * m:
                return it, gap, 2
    return it, gap, 1


@kernel
def _centroid_polyline(s, g, tri, out):
    """s, the triangles' centroids, g into out; returns its length, or -1
    when an input is not finite."""
    k = tri.shape[0]
    for d in range(3):
        out[0, d] = s[d]
        out[k + 1, d] = g[d]
    finite = True
    for i in range(k):
        for d in range(3):
            out[i + 1, d] = (tri[i, 0, d] + tri[i, 1, d] + tri[i, 2, d]) / 3.0
            for v in range(3):
                finite = finite and math.isfinite(tri[i, v, d])
    length = _polyline_length(out)
    return length if finite and math.isfinite(length) else -1.0


@kernel
def _polyline_length(x):
    length = 0.0
    for j in range(x.shape[0] - 1):
        length += math.sqrt((x[j + 1, 0] - x[j, 0]) ** 2 + (x[j + 1, 1] - x[j, 1]) ** 2
                            + (x[j + 1, 2] - x[j, 2]) ** 2)
    return length


@kernel
def _scaled_corridor(s, g, tri, L0):
    """The corridor relative to s, scaled by 1 / L0, so the barrier
    parameter and the absolute gap floor are scale-free: (P0, E1, E2, s, g)."""
    k = tri.shape[0]
    P0 = np.empty((k, 3))
    E1 = np.empty((k, 3))
    E2 = np.empty((k, 3))
    s0 = np.zeros(3)
    g0 = np.empty(3)
    for d in range(3):
        g0[d] = (g[d] - s[d]) / L0
        for i in range(k):
            P0[i, d] = (tri[i, 0, d] - s[d]) / L0
            E1[i, d] = (tri[i, 1, d] - tri[i, 0, d]) / L0
            E2[i, d] = (tri[i, 2, d] - tri[i, 0, d]) / L0
    return P0, E1, E2, s0, g0


@kernel(inline=True)
def no_constraints(k):
    """(cstart, cdata) of k waypoints without constraints, of the types the
    constrained callers pass (int64 (k+1,) zeros, float64 (0,3))."""
    return np.zeros(k + 1, dtype=np.int64), np.empty((0, 3))


@kernel
def solve(s, g, tri, rtol, max_iter, out):
    """Everything behind smooth_polyline in one compiled call (numpy call
    overhead would otherwise dominate): centroid start, scaling, barrier
    method, waypoints into ``out``, falling back to the centroid polyline
    (left in ``out``) when the input is degenerate or non-finite or the
    answer is not shorter. Returns the method's status, -1 for the
    fallback."""
    k = tri.shape[0]
    L0 = _centroid_polyline(s, g, tri, out)
    if not L0 > 0.0:
        return -1
    w = np.full((k, 2), 1.0 / 3.0)
    P0, E1, E2, s0, g0 = _scaled_corridor(s, g, tri, L0)
    cstart, cdata = no_constraints(k)
    _, _, status = _ipm(P0, E1, E2, s0, g0, rtol, max_iter, w, 100.0, 1e-2, cstart, cdata,
                        0.0, 1.0, np.bool_(True))
    # waypoints from barycentrics in the caller's coordinates: inside by construction
    x = np.empty((k + 2, 3))
    for d in range(3):
        x[0, d] = s[d]
        x[k + 1, d] = g[d]
        for i in range(k):
            x[i + 1, d] = (tri[i, 0, d] + w[i, 0] * (tri[i, 1, d] - tri[i, 0, d])
                           + w[i, 1] * (tri[i, 2, d] - tri[i, 0, d]))
    if not (_polyline_length(x) <= L0):          # also catches NaN
        return -1
    copy_rows(out, 0, x, 0, x.shape[0])
    return status
