"""Making a point's path taut: dropping the turning points it can see past.

The smoother (:mod:`regn.query.paths.smooth`, polished by
:mod:`regn.query.paths.waypoints`) gives the shortest polyline through the
search's corridor. On meshes of many thin tetrahedra (a level's Delaunay
tetrahedra of octree corners) that corridor zig-zags through free space,
and its shortest polyline bends on portal edges that no wall is near: a
path across an open level map came out with 91 points, 9 segments under a
millimetre and 55 bends under a degree.

:func:`taut_points` walks the polyline from its start: from each kept
point it goes on to the *farthest* later point it sees (the segment walk of
:mod:`regn.query.sight`, every later point tried in one compiled call), or
to the next point when it sees none further. Each shortcut replaces a part
of the polyline by a straight segment between two of its points, so the
result is never longer; every new segment is one the walk found clear, and
every kept old segment is the smoother's, so the path stays in free space.
Where the walk cannot see past a point (a wall's edge it bends round) the
point stays.
"""

from __future__ import annotations

import numpy as np

from ..common import scratch


def taut_points(points, sees_from):
    """``points`` (n,3) less the points the path sees past (module
    docstring). ``sees_from(a, later)``: (m,) bool, which of the points
    ``later`` (m,3) the point ``a`` (3,) sees."""
    pts = np.asarray(points, np.float64)
    n = len(pts)
    if n <= 2:
        return pts
    keep, i = [0], 0
    while i < n - 1:
        j = i + 1
        if i + 2 < n:
            # the end first: on an open map most paths are one segment
            if sees_from(pts[i], pts[n - 1:])[0]:
                j = n - 1
            elif i + 3 < n:
                seen = np.flatnonzero(sees_from(pts[i], pts[i + 2:n - 1]))
                if len(seen):
                    j = i + 2 + int(seen[-1])
        keep.append(j)
        i = j
    return pts if len(keep) == n else pts[keep]


def mesh_sight(mesh):
    """``sees_from`` for :func:`taut_points` on one mesh: the compiled segment
    test behind ``line_of_sight`` (its filter, then the walk), called
    through its entry point on one thread (a path has few points, and
    numba's type dispatch on the records of arrays would cost more than
    most tests); made once per mesh."""
    s = scratch(mesh)
    if "taut_sight" not in s:
        from ..._jit import entry_point
        from ..locating.locate import locate_tables
        from ..sight import _segment_filter_kernels as K
        from ..sight.segment_filter import sight_grid
        tables, sight = locate_tables(mesh), sight_grid(mesh)
        none = np.zeros((0, 3))
        clear = entry_point(K.segments_clear, (tables, sight, none, none, 0, 0,
                                               np.zeros(0, bool)))

        def sees_from(a, later):
            m = len(later)
            b = np.ascontiguousarray(later, np.float64)
            rep = np.empty((m, 3))
            rep[:] = a
            out = np.zeros(m, bool)
            clear(tables, sight, rep, b, 0, m, out)
            return out
        s["taut_sight"] = sees_from
    return s["taut_sight"]


def sphere_sight(mesh, radius):
    """``sees_from`` for :func:`taut_points` of a sphere's path: the sphere
    of ``radius`` swept along each segment touches no wall
    (:func:`regn.query.sight.sweep.line_of_sight_radius`, one thread)."""
    from ..sight.sweep import line_of_sight_radius

    def sees_from(a, later):
        rep = np.empty((len(later), 3))
        rep[:] = a
        return line_of_sight_radius(mesh, rep, np.ascontiguousarray(later, np.float64),
                                    radius, workers=1)
    return sees_from


def taut_mesh_path(mesh, points):
    """:func:`taut_points` with the mesh's own line of sight."""
    if len(points) <= 2 or not mesh.n_tets:
        return np.asarray(points, np.float64)
    return taut_points(points, mesh_sight(mesh))


def polyline_length(points) -> float:
    d = np.diff(np.asarray(points, np.float64), axis=0)
    return float(np.sqrt(np.einsum("ij,ij->i", d, d)).sum())
