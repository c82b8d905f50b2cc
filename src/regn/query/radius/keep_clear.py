"""Smoothing a corridor for an agent of radius r: the shortest polyline
through the corridor's portals found in rounds, none giving up r.

The start is the witness polyline of :mod:`regn.query.radius.portals`, which
keeps r. Keeping r is not a convex condition (the polyline must stay out of
the r-neighbourhood of every wall), so each round replaces it by a convex
one that implies it: for each segment and each wall that can come within r
of the segment's tetrahedron, the plane through the wall's closest point,
square to the closest pair; the segment's two end waypoints must stay r
beyond that plane (then so does every point of the segment, and the wall
lies behind it). Those are linear constraints on the waypoints'
barycentric coordinates, which the barrier method of
:mod:`regn.query.paths.smooth` takes as extra log barriers, starting from the
current polyline (it satisfies them). The answer keeps r from every wall,
is never longer than the polyline it started from, and is checked exactly
(segment against every wall) before it replaces it. Each round's barrier
method stops at a certified gap of ``RADIUS_SMOOTH_RTOL``, and the rounds
once one shortens the polyline by less than 0.3 times that fraction of its
length (at most ``MAX_ROUNDS``). The answer is then polished into the exact optimum of
the last round's constraints it rests on, and reduced to its turning points
(:mod:`regn.query.paths.waypoints`).

What the rounds converge to is a polyline that no shorter one beats among
those keeping each segment beyond the planes taken at its own contacts: a
local optimum of "shortest through the portals, keeping r"; the whole
computation is one compiled call,
:func:`regn.query.radius._keep_clear_kernels.smooth_keeping`.
"""

from __future__ import annotations

import numpy as np

from ...tolerances import RADIUS_SMOOTH_RTOL, WAYPOINT_GAP_REL
from ..common import scratch

#: rounds of constraints at most
MAX_ROUNDS = 8
#: Newton steps at most in a round
MAX_SWEEPS = 20000


def smooth_keeping(mesh, ends, corridor, portals, points, radius, r_eff, near):
    """The polyline ``points`` (s, one point strictly inside each portal,
    g; keeping r_eff, the radius plus its margin) shortened as the module
    docstring says and reduced to its turning points
    (:mod:`regn.query.paths.waypoints`); a new array. ``near``: (start, walls), the walls that
    may come within r_eff of each tetrahedron
    (:func:`regn.query.radius.portals.radius_graph`)."""
    from ..walls.nearest import _wall_bvh
    fv = np.asarray(mesh.face_vertices)[portals]
    out = np.array(points, dtype=np.float64)
    # the exact check keeps half the margin: rounding in the constraints
    # cannot eat that much, and nothing ever comes below the radius asked for
    r_check = 0.5 * (radius + r_eff)
    args = (_wall_bvh(mesh), np.ascontiguousarray(ends[0], dtype=np.float64),
            np.ascontiguousarray(ends[1], dtype=np.float64),
            np.ascontiguousarray(np.asarray(mesh.vertices)[fv], dtype=np.float64),
            fv.astype(np.int64), np.ascontiguousarray(corridor, dtype=np.int64),
            near[0], near[1], float(r_eff), float(r_check), float(RADIUS_SMOOTH_RTOL),
            MAX_ROUNDS, MAX_SWEEPS, float(WAYPOINT_GAP_REL), out)
    s = scratch(mesh)
    if "keep_clear" not in s:            # (numba's type dispatch would cost ~20 us a call)
        from . import _keep_clear_kernels as K
        from ..._jit import entry_point
        s["keep_clear"] = entry_point(K.smooth_keeping, args)
    n = s["keep_clear"](*args)
    return out[:n].copy()
