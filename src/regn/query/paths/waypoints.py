"""The waypoints of a smoothed path: only the points where it turns.

The smoother (:mod:`regn.query.paths.smooth`, :mod:`regn.query.radius.keep_clear`) puts
one waypoint in each portal, within a certified 0.01 % of the shortest
polyline; on the straight stretches those waypoints bend by tiny amounts
that are not turns at all. :func:`turning_points` first *polishes* the
answer into the exact optimum of the constraints it rests on: at the
optimum a waypoint either lies strictly inside its portal, where the
polyline goes straight through, or on one constraint's line (a portal edge
or, with a radius, a plane that keeps a wall away), where it bends, or on
two (a corner). Guessing those from the smoother's answer, the polyline
bending only there is found exactly by Newton's method; a straight stretch
that leaves a portal makes that constraint active, a bend the polyline does
not press against is released, and this repeats until nothing changes (an
active-set method). The result is never longer than the smoother's and
crosses every portal. Its points are s, the bends and g; the waypoints
between them lie on its straight stretches and are dropped, and of two
consecutive points closer than :data:`regn.tolerances.WAYPOINT_GAP_REL`
times the length the second is dropped. Where the polish does not settle,
the smoother's polyline is kept as it is (less such near-duplicates).
"""

from __future__ import annotations

import numpy as np

from ...tolerances import SMOOTH_RTOL, WAYPOINT_GAP_REL, WAYPOINT_NUDGE_REL
from .smooth import MAX_SWEEPS as SMOOTH_MAX_SWEEPS


def smoothed_turning_points(mesh, s, g, portals):
    """A point's path through ``portals`` from s to g: the smoother's
    polyline (:func:`regn.query.paths.smooth.smooth_polyline`, default tolerance)
    reduced to its turning points (see the module docstring); returns
    (points (n,3), the smoother's polyline (k+2,3)). One compiled call."""
    from ._turning_points_kernels import smooth_path
    from ..locating.locate import locate_tables
    fv = np.asarray(mesh.face_vertices)[portals]
    tri = np.ascontiguousarray(np.asarray(mesh.vertices)[fv], dtype=np.float64)
    X = np.empty((len(portals) + 2, 3))
    out = np.empty_like(X)
    n = smooth_path(locate_tables(mesh), np.ascontiguousarray(s, dtype=np.float64),
                    np.ascontiguousarray(g, dtype=np.float64), tri, fv.astype(np.int64),
                    SMOOTH_RTOL, SMOOTH_MAX_SWEEPS, WAYPOINT_GAP_REL, WAYPOINT_NUDGE_REL, X, out)
    return out[:n].copy(), X
