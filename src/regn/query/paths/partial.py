"""Partial paths: when the goal cannot be reached, a path to the point
nearest it that can.

``find_path(start, goal, partial=True)`` answers as usual when the goal is
reached. When the plain search ends ``goal_outside`` (the goal is in a rock
or out of the box), ``unreachable`` (another component, or cut off by
``exclude``, blockers or impassable costs) or ``excluded`` (the goal's
tetrahedron only), the answer is instead the path to the point of the
region reachable from the start that is nearest the goal, with status
``"partial"``:

1. the region: one :func:`regn.query.paths.field.cost_field` search from the
   start, with the query's options (the face graph is undirected, so a
   tetrahedron whose cost from the start is finite can be flown to);
2. its nearest point to the goal lies on the region's border: a face of a
   reached tetrahedron that is a wall or leads to one not reached. The
   closest point of each such face is computed
   (:func:`regn.geometry._closest_kernels.closest_points_on_triangles`) and the
   nearest taken (on a tie, the first in tetrahedron, then face-slot order);
3. that point lies on a face, where locating it may name the tetrahedron on
   the other side, so it is moved towards its tetrahedron's centroid by the
   smallest of 1e-7, 1e-5, 1e-3, 0.1 and 1 of the way that locates it to a
   reached tetrahedron; the path is then ``find_path`` to that point.

This is a point's search: a ``radius`` with ``partial`` is refused (the
region a sphere can reach would need a sphere's search from the start).
"""

from __future__ import annotations

import numpy as np

from ...status import CODES, NAMES, PARTIAL

#: the statuses a partial path replaces
REPLACES = frozenset(("goal_outside", "unreachable", "excluded"))

#: fractions of the way from the border point to its tetrahedron's centroid
NUDGES = (1e-7, 1e-5, 1e-3, 0.1, 1.0)


def nearest_reachable(mesh, start, goal, *, cost_scale=None, exclude=None,
                      filter=None):
    """The point nearest ``goal`` that a point's path from ``start`` can
    reach, moved just inside a reached tetrahedron; None when the start's
    own tetrahedron cannot be left or entered (outside, excluded)."""
    from .field import cost_field
    field = cost_field(mesh, start, cost_scale=cost_scale, exclude=exclude, filter=filter)
    if field.status != NAMES[CODES["ok"]]:
        return None
    reached = np.isfinite(field.cost)
    tets = np.flatnonzero(reached)
    if len(tets) == 0:
        return None
    nb = np.asarray(mesh.neighbors, np.int64)[tets]                # (R,4)
    border = (nb < 0) | ~reached[np.maximum(nb, 0)]
    rows, slots = np.nonzero(border)
    faces = np.asarray(mesh.face_vertices)[np.asarray(mesh.tet_faces)[tets[rows], slots]]
    tri = np.ascontiguousarray(np.asarray(mesh.vertices, np.float64)[faces])
    g = np.asarray(goal, np.float64)
    from ...geometry._closest_kernels import closest_points_on_triangles
    near = closest_points_on_triangles(np.ascontiguousarray(np.broadcast_to(g, (len(tri), 3))),
                                       tri)
    k = int(np.argmin(np.einsum("kd,kd->k", near - g, near - g)))
    t = int(tets[rows[k]])
    centre = np.asarray(mesh.tet_points, np.float64)[t].mean(axis=0)
    tries = near[k] + np.asarray(NUDGES)[:, None] * (centre - near[k])
    located = mesh.locate(tries)
    for point, tet in zip(tries, located):
        if tet >= 0 and reached[tet]:
            return point
    return None


def partial_path(mesh, start, goal, failed, *, smooth=True, cost_scale=None,
                 exclude=None, filter=None):
    """``failed`` (a Path whose status partial paths replace) turned into the
    partial path, or ``failed`` itself when the start cannot go anywhere."""
    from .path import find_path
    target = nearest_reachable(mesh, start, goal, cost_scale=cost_scale, exclude=exclude,
                               filter=filter)
    if target is None:
        return failed
    path = find_path(mesh, start, target, smooth=smooth, cost_scale=cost_scale,
                     exclude=exclude, filter=filter)
    if not path.found:                    # (the target was located in a reached tet)
        return failed
    path.status = NAMES[PARTIAL]
    return path
