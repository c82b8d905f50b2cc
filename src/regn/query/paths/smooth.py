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
optimality gap; :data:`regn.tolerances.SMOOTH_RTOL` = 1e-4 by default), or after ``max_sweeps`` Newton
steps. Both bounds land within ~3x of the barrier's gap m / tau, so they are
only computed once m / tau is within 30x of the target (about a third of
the iterations). Waypoints stay
strictly inside their triangles; the portal-centroid polyline is returned
if it is not longer (or if the input is degenerate or non-finite). The
whole computation is one compiled call,
:func:`regn.query.paths._smooth_kernels.solve`.
"""

from __future__ import annotations

import numpy as np

from ...tolerances import SMOOTH_RTOL


#: Newton steps at most (smooth_polyline's default)
MAX_SWEEPS = 20000


def smooth_polyline(s, g, tri, *, rtol=SMOOTH_RTOL, max_sweeps=MAX_SWEEPS):
    """Shortest polyline s -> x_1..x_k -> g with x_i in triangle tri[i] ((k,3,3)).

    ``rtol`` is the certified relative optimality gap to stop at (the
    default is ten times inside the 0.1 % the paths promise, and 1.6x faster
    than 1e-6) and ``max_sweeps`` caps the Newton iterations (see the module
    docstring)."""
    from ._smooth_kernels import solve
    s = np.ascontiguousarray(s, np.float64).reshape(3)
    g = np.ascontiguousarray(g, np.float64).reshape(3)
    tri = np.ascontiguousarray(tri, np.float64).reshape(-1, 3, 3)
    out = np.empty((len(tri) + 2, 3))
    if len(tri) == 0:
        out[0], out[1] = s, g
        return out
    solve(s, g, tri, float(rtol), int(max_sweeps), out)
    return out
