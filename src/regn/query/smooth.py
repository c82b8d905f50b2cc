"""Smoothing a corridor: the shortest polyline through its portal triangles.

Each waypoint x_i is constrained to its portal triangle and the sum of
segment lengths is minimised (a convex problem). Solved by a primal
barrier (interior-point) method on the 2k barycentric coordinates (u_i, v_i)
of the waypoints, started at the centroids (the barrier's analytic centre):

* each length |d_j| is written as a second-order cone t_j >= |d_j| with
  barrier -log(t_j^2 - |d_j|^2); the cone variable is eliminated in closed
  form, leaving  psi(d) = a - log(1 + a),  a = sqrt(1 + tau^2 |d|^2),  a
  smooth self-concordant stand-in for tau * |d|;
* the barycentric constraints u, v, 1-u-v > 0 get log barriers, so
  degenerate (zero-area) triangles still give a positive-definite Hessian;
* Newton steps solve the block-tridiagonal (2x2 blocks) system in O(k),
  with fraction-to-boundary and backtracking line search; tau grows 100x
  whenever the squared Newton decrement drops below 1e-2.

Stop rule: any segment multipliers |y_j| <= 1 give the weak-duality lower
bound D(y) = y_k.g - y_0.s + sum_i min over the vertices v of tri[i] of
(y_{i-1} - y_i).v. Each iteration tries y_j = tau d_j/(1+a_j) (the central
path's dual) and its Newton-linearised update clipped to the unit ball;
iteration stops once  length - max D <= rtol * max D  (a certified relative
optimality gap; ``RTOL`` = 1e-4 by default), or after ``max_sweeps`` Newton
steps. Both bounds land within ~3x of the barrier's gap m / tau, so they are
only computed once m / tau is within 30x of the target (about a third of
the iterations). Waypoints stay
strictly inside their triangles; the portal-centroid polyline is returned
if it is not longer (or if the input is degenerate or non-finite). The
whole computation is one numba kernel (pure Python if numba is missing).
"""

from __future__ import annotations

import math

import numpy as np

_KERNEL = {}


def _eval_py(P0, E1, E2, s, g, w, tau, X, D, A):
    """Waypoints X, segments D, a_j into A; returns (length, barrier objective)."""
    k = P0.shape[0]
    for c in range(3):
        X[0, c] = s[c]
        X[k + 1, c] = g[c]
    for i in range(k):
        u = w[i, 0]
        v = w[i, 1]
        q = 1.0 - u - v
        if not (u > 0.0 and v > 0.0 and q > 0.0):
            return np.inf, np.inf
        for c in range(3):
            X[i + 1, c] = P0[i, c] + u * E1[i, c] + v * E2[i, c]
    length = 0.0
    phi = 0.0
    for j in range(k + 1):
        r2 = 0.0
        for c in range(3):
            dc = X[j + 1, c] - X[j, c]
            D[j, c] = dc
            r2 += dc * dc
        length += math.sqrt(r2)
        a = math.sqrt(1.0 + tau * tau * r2)
        A[j] = a
        # one log per waypoint: its barrier terms and segment j's log(1+a)
        if j < k:
            phi += a - math.log(w[j, 0] * w[j, 1] * (1.0 - w[j, 0] - w[j, 1]) * (1.0 + a))
        else:
            phi += a - math.log1p(a)
    return length, phi


def _dual_py(P0, E1, E2, s, g, Y):
    """Dual objective for segment multipliers Y ((k+1,3), each |y_j| <= 1):
    y_k.g - y_0.s + sum_i min over the vertices v of tri[i] of (y_{i-1}-y_i).v,
    a lower bound on the shortest length (weak duality)."""
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
        dual += min(v0, v1, v2)
    return dual


def _ipm_py(P0, E1, E2, s, g, rtol, max_iter, w, mu, ctol):
    """Barrier method in place on w ((k,2) barycentrics, strictly feasible).

    Inputs are normalised so the starting polyline has length ~1. Returns
    (iterations, certified gap, status) with status 0 = gap reached,
    1 = iteration cap, 2 = numerical stall."""
    k = P0.shape[0]
    m = 5.0 * k + 2.0                    # barrier parameter: 2 per cone, 1 per log
    X = np.empty((k + 2, 3))
    D = np.empty((k + 1, 3))
    A = np.empty(k + 1)
    G = np.empty((k + 1, 3))
    H = np.empty((k + 1, 6))             # xx xy xz yy yz zz
    grad = np.empty((k, 2))
    Sinv = np.empty((k, 3))              # inverse Schur blocks (a b c)
    Lo = np.empty((k, 4))                # block (i+1, i): rows w_{i+1}, cols w_i
    b = np.empty((k, 2))
    dw = np.empty((k, 2))
    wt = np.empty((k, 2))
    Y = np.empty((k + 1, 3))
    best = -np.inf                       # best dual lower bound so far
    tau = m                              # duality-gap bound m/tau ~ initial length
    gap = np.inf
    status = 1
    it = 0
    fresh = False                        # X, D, A, length, phi already hold w at tau
    length = phi = 0.0
    while it < max_iter:
        it += 1
        if not fresh:
            length, phi = _eval(P0, E1, E2, s, g, w, tau, X, D, A)
        if not (phi < np.inf):
            status = 2
            break
        for j in range(k + 1):
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
        # the bounds below come out within ~3x of the barrier's m / tau, so
        # they are only worth computing once that is near the target
        # (skipping one only ever delays the stop)
        near = m <= 30.0 * rtol * tau * length
        if near:
            # dual bound from y_j = G_j / tau; any |y_j| <= 1 gives a lower bound
            for j in range(k + 1):
                Y[j, 0] = G[j, 0] / tau
                Y[j, 1] = G[j, 1] / tau
                Y[j, 2] = G[j, 2] / tau
            best = max(best, _dual(P0, E1, E2, s, g, Y))
            gap = length - best
            if gap <= rtol * max(best, 0.0) + 1e-13:
                status = 0
                break
        # gradient and block-tridiagonal Hessian in w, factorised on the fly
        for i in range(k):
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
            grad[i, 0] = g0
            grad[i, 1] = g1
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
            if not (det > 0.0 and da > 0.0):
                status = 2
                break
            Sinv[i, 0] = dc / det
            Sinv[i, 1] = -db / det
            Sinv[i, 2] = da / det
            b[i, 0] = r0
            b[i, 1] = r1
            if i + 1 < k:
                # coupling through segment i+1: -E_{i+1}^T H_{i+1} E_i
                hxx, hxy, hxz = H[i + 1, 0], H[i + 1, 1], H[i + 1, 2]
                hyy, hyz, hzz = H[i + 1, 3], H[i + 1, 4], H[i + 1, 5]
                he0 = hxx * e0 + hxy * e1 + hxz * e2
                he1 = hxy * e0 + hyy * e1 + hyz * e2
                he2 = hxz * e0 + hyz * e1 + hzz * e2
                hf0 = hxx * f0 + hxy * f1 + hxz * f2
                hf1 = hxy * f0 + hyy * f1 + hyz * f2
                hf2 = hxz * f0 + hyz * f1 + hzz * f2
                n0, n1, n2 = E1[i + 1, 0], E1[i + 1, 1], E1[i + 1, 2]
                p0, p1, p2 = E2[i + 1, 0], E2[i + 1, 1], E2[i + 1, 2]
                Lo[i, 0] = -(n0 * he0 + n1 * he1 + n2 * he2)
                Lo[i, 1] = -(n0 * hf0 + n1 * hf1 + n2 * hf2)
                Lo[i, 2] = -(p0 * he0 + p1 * he1 + p2 * he2)
                Lo[i, 3] = -(p0 * hf0 + p1 * hf1 + p2 * hf2)
        if status == 2:
            break
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
        if not (lam2 >= 0.0 and lam2 < np.inf):
            status = 2
            break
        if near:
            # linearised dual at the Newton point (error O(lam^2) instead of
            # O(lam)), pulled back into the unit ball
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
            best = max(best, _dual(P0, E1, E2, s, g, Y))
            gap = length - best
            if gap <= rtol * max(best, 0.0) + 1e-13:
                status = 0
                break
        # fraction to boundary, then backtracking (skipped in the quadratic
        # region lam < 1/4, where the full step provably decreases phi and
        # rounding in phi ~ tau*length would make the test unreliable)
        amax = 1.0
        for i in range(k):
            du = dw[i, 0]
            dv = dw[i, 1]
            dq = -du - dv
            if du < 0.0:
                amax = min(amax, -0.99 * w[i, 0] / du)
            if dv < 0.0:
                amax = min(amax, -0.99 * w[i, 1] / dv)
            if dq < 0.0:
                amax = min(amax, -0.99 * (1.0 - w[i, 0] - w[i, 1]) / dq)
        alpha = amax
        ok = False
        for _ in range(60):
            for i in range(k):
                wt[i, 0] = w[i, 0] + alpha * dw[i, 0]
                wt[i, 1] = w[i, 1] + alpha * dw[i, 1]
            lent, phit = _eval(P0, E1, E2, s, g, wt, tau, X, D, A)
            if phit < np.inf and (lam2 < 0.0625 or phit <= phi - 0.25 * alpha * lam2):
                ok = True
                break
            alpha *= 0.5
        if not ok:
            status = 2
            break
        for i in range(k):
            w[i, 0] = wt[i, 0]
            w[i, 1] = wt[i, 1]
        length, phi = lent, phit
        fresh = True
        if lam2 < ctol:
            fresh = False
            tau *= mu
            if tau > 1e14 * m:
                status = 2
                break
    return it, gap, status


def _solve_py(s, g, tri, rtol, max_iter, out):
    """Everything behind smooth_polyline in one compiled call (numpy call
    overhead would otherwise dominate): centroid start, scaling, barrier
    method, waypoints, fallback to the centroid polyline."""
    k = tri.shape[0]
    for c in range(3):
        out[0, c] = s[c]
        out[k + 1, c] = g[c]
    finite = True
    for i in range(k):
        for c in range(3):
            out[i + 1, c] = (tri[i, 0, c] + tri[i, 1, c] + tri[i, 2, c]) / 3.0
            for v in range(3):
                finite = finite and math.isfinite(tri[i, v, c])
    L0 = 0.0
    for j in range(k + 1):
        L0 += math.sqrt((out[j + 1, 0] - out[j, 0]) ** 2 + (out[j + 1, 1] - out[j, 1]) ** 2
                        + (out[j + 1, 2] - out[j, 2]) ** 2)
    if not (finite and math.isfinite(L0) and L0 > 0.0):
        return -1
    # coordinates relative to s, scaled by the centroid length, so the
    # barrier parameter and the absolute gap floor are scale-free
    P0 = np.empty((k, 3))
    E1 = np.empty((k, 3))
    E2 = np.empty((k, 3))
    s0 = np.zeros(3)
    g0 = np.empty(3)
    for c in range(3):
        g0[c] = (g[c] - s[c]) / L0
        for i in range(k):
            P0[i, c] = (tri[i, 0, c] - s[c]) / L0
            E1[i, c] = (tri[i, 1, c] - tri[i, 0, c]) / L0
            E2[i, c] = (tri[i, 2, c] - tri[i, 0, c]) / L0
    w = np.full((k, 2), 1.0 / 3.0)
    _, _, status = _ipm(P0, E1, E2, s0, g0, rtol, max_iter, w, 100.0, 1e-2)
    # waypoints from barycentrics in the caller's coordinates: inside by construction
    x = np.empty((k + 2, 3))
    for c in range(3):
        x[0, c] = s[c]
        x[k + 1, c] = g[c]
        for i in range(k):
            x[i + 1, c] = (tri[i, 0, c] + w[i, 0] * (tri[i, 1, c] - tri[i, 0, c])
                           + w[i, 1] * (tri[i, 2, c] - tri[i, 0, c]))
    L = 0.0
    for j in range(k + 1):
        L += math.sqrt((x[j + 1, 0] - x[j, 0]) ** 2 + (x[j + 1, 1] - x[j, 1]) ** 2
                       + (x[j + 1, 2] - x[j, 2]) ** 2)
    if not (L <= L0):                    # also catches NaN
        return -1
    for j in range(k + 2):
        for c in range(3):
            out[j, c] = x[j, c]
    return status


_eval = _eval_py
_dual = _dual_py
_ipm = _ipm_py


def _kernel():
    if "solve" not in _KERNEL:
        try:
            import numba
            jit = numba.njit(cache=True, nogil=True)
            # helpers are compiled first and rebound so the kernel calls them
            g = globals()
            for name in ("_eval", "_dual", "_ipm"):
                g[name] = jit(g[name + "_py"])
            _KERNEL["solve"] = jit(_solve_py)
        except Exception:
            _KERNEL["solve"] = _solve_py
    return _KERNEL["solve"]


#: the certified relative optimality gap find_path's smoothing stops at: ten
#: times inside the 0.1 % the paths promise, and 1.6x faster than 1e-6
RTOL = 1e-4


def smooth_polyline(s, g, tri, *, rtol=RTOL, max_sweeps=20000):
    """Shortest polyline s -> x_1..x_k -> g with x_i in triangle tri[i] ((k,3,3)).

    ``rtol`` is the certified relative optimality gap to stop at and
    ``max_sweeps`` caps the Newton iterations (see the module docstring)."""
    s = np.ascontiguousarray(s, np.float64).reshape(3)
    g = np.ascontiguousarray(g, np.float64).reshape(3)
    tri = np.ascontiguousarray(tri, np.float64).reshape(-1, 3, 3)
    out = np.empty((len(tri) + 2, 3))
    if len(tri) == 0:
        out[0], out[1] = s, g
        return out
    _kernel()(s, g, tri, float(rtol), int(max_sweeps), out)
    return out
