"""Cost fields: one search from a goal that any number of agents can follow.

:func:`cost_field` runs a Dijkstra search from the goal over the face graph
of :mod:`regn.query.paths.path`, with the same cost model, options and filters as
``find_path``: the goal's tetrahedron's portal faces start at their
straight distance from the goal, and crossing tetrahedron T between two of
its portal faces costs the stored portal cost times ``cost_scale[T]``. It
gives each portal face its cost to the goal and the next face on the
cheapest way there.

A position p in tetrahedron S is then priced the way ``find_path`` prices
its start: in the goal's tetrahedron, the straight distance |p - goal|;
elsewhere the cheapest of |p - centroid(f)| + cost(f) over the portal faces
f of S (which is the face it leaves by). So ``field.cost_at(p)`` equals
``find_path(p, goal).cost`` up to rounding (the two searches add the same
costs in different orders), and ``field.path_from(p)`` is a cheapest path
as ``find_path`` defines it (on a tie, possibly another one of the same
cost). ``field.cost[t]`` is the price of tetrahedron t's centroid (the mean
of its four vertices).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...status import EXCLUDED, GOAL_OUTSIDE, NAMES, OK, START_OUTSIDE, UNREACHABLE
from ..common import as_point, as_points
from .path import Path, Route, _graph, cost_options, route_to_path, search_options

#: What the position kernels read (:mod:`regn.query.paths._field_kernels`).
FieldArrays = namedtuple("FieldArrays", [
    "tet_faces",   # (T,4) int64: each tetrahedron's faces (file numbering)
    "neighbors",   # (T,4) int64: -1 where the face is a wall
    "opposite",    # (T,4) int64: the vertex slot opposite each face slot
    "centroids",   # (F,3) float64: face centroids
    "W",           # (T,12) float64: barycentric rows (LocateTables.W)
    "face_cost",   # (F,) float64: each face's cost to the goal, inf if cut off
    "face_next",   # (F,) int64: the next face toward the goal, -1: the goal
    "face_via",    # (F,) int64: the tetrahedron crossed to reach it
    "goal",        # (3,) float64
    "goal_tet",    # int: the goal's tetrahedron, -1 outside
    "excl",        # (T,) bool: tetrahedra no path enters
])


def _kernels():
    from . import _field_kernels
    return _field_kernels


class CostField:
    """Result of :func:`cost_field`.

    * ``status``: ``"ok"``, ``"goal_outside"`` or ``"excluded"`` (the goal's
      tetrahedron is excluded or blocked); ``goal``, ``goal_tet``.
    * ``cost`` (T,): each tetrahedron's centroid's cost to the goal, inf
      where no path leads there (another component, blocked, excluded).
    * ``next_portal`` (T,): the face that cheapest path leaves it by; -1 in
      the goal's tetrahedron and where the cost is inf.
    * ``face_cost`` (F,) and ``face_next`` (F,): each face's cost to the
      goal and the next face toward it (-1: the goal itself).
    """

    def __init__(self, mesh, arrays: FieldArrays, status: int):
        self._mesh = mesh
        self._arrays = arrays
        self.status = NAMES[status]
        self.goal = arrays.goal
        self.goal_tet = int(arrays.goal_tet)
        self.face_cost = arrays.face_cost
        self.face_next = arrays.face_next
        T = int(mesh.n_tets)
        centres = np.asarray(mesh.tet_points, np.float64).mean(axis=1) if T else \
            np.zeros((0, 3))
        self.cost, self.next_portal, _ = self._follow(np.arange(T), centres)

    def _follow(self, tets, pts):
        n = len(tets)
        cost, face, waypoint = np.empty(n), np.empty(n, np.int64), np.empty((n, 3))
        if n:
            _kernels().follow(self._arrays, tets, pts, cost, face, waypoint)
        return cost, face, waypoint

    def _located(self, points):
        pts = np.ascontiguousarray(as_points(points))
        return self._mesh.locate(pts), pts

    def cost_at(self, points) -> np.ndarray:
        """(N,) each point's cost to the goal (``find_path``'s cost from
        it); inf outside the volume, in an excluded tetrahedron or where no
        path leads."""
        return self._follow(*self._located(points))[0]

    def next_waypoint(self, points) -> np.ndarray:
        """(N,3) where each point should fly next: in the goal's tetrahedron
        the goal; elsewhere the centroid of the portal its cheapest path
        leaves by, or, for a point already on that portal (such as the
        previous waypoint), the stop after it, so ``w = next_waypoint(w)``
        walks the route. NaN where the cost is inf."""
        return self._follow(*self._located(points))[2]

    def path_from(self, start, smooth=True) -> Path:
        """The cheapest path from ``start`` to the goal, read off the field
        (no search): a :class:`~regn.query.paths.path.Path` as ``find_path``
        returns, with its statuses."""
        a = self._arrays
        ends = np.stack([as_point(start, "start"), a.goal])
        S = int(self._mesh.locate(ends[:1])[0]) if len(a.excl) else -1
        if S < 0:
            return Path(False, NAMES[START_OUTSIDE])
        if self.status != NAMES[OK]:
            return Path(False, self.status)
        if a.excl[S]:
            return Path(False, NAMES[EXCLUDED])
        cost, _, _ = self._follow(np.array([S]), ends[:1])
        if not np.isfinite(cost[0]):
            return Path(False, NAMES[UNREACHABLE])
        portals = np.empty(len(a.face_cost), np.int64)
        corridor = np.empty(len(a.face_cost) + 1, np.int64)
        n = _kernels().trace(a, S, ends[0, 0], ends[0, 1], ends[0, 2], portals, corridor) \
            if S != a.goal_tet else 0
        portals, corridor = portals[:n].copy(), corridor[:n + 1].copy()
        polyline = np.concatenate([ends[:1], a.centroids[portals], ends[1:]])
        length = float(np.linalg.norm(np.diff(polyline, axis=0), axis=1).sum())
        return route_to_path(self._mesh, ends, Route(OK, float(cost[0]), corridor, portals,
                                                     polyline, length), smooth)


def cost_field(mesh, goal, *, cost_scale=None, exclude=None, filter=None) -> CostField:
    """Every tetrahedron's cost to ``goal`` and its next portal toward it,
    from one search (see the module docstring); the options are
    ``find_path``'s."""
    goal = as_point(goal, "goal")
    scale, excl = cost_options(mesh, cost_scale, exclude, filter)
    T, F = int(mesh.n_tets), int(mesh.n_faces)
    face_cost, face_next = np.full(F, np.inf), np.full(F, -1, np.int64)
    face_via = np.full(F, -1, np.int64)
    status, G = GOAL_OUTSIDE, -1
    W = np.zeros((0, 12))
    if T:
        g = _graph(mesh)
        options = search_options(g, scale, excl)
        excl = options.excl
        W = g["tables"].W
        key, heap = np.empty(g["heap_len"]), np.empty(g["heap_len"], np.int32)
        status, G = _kernels().search_from_goal(
            g["graph"], g["tables"], goal[None], options.scale, options.excl, options.plain,
            key, heap, face_cost, face_next, face_via)
    elif excl is None:
        excl = np.zeros(0, np.bool_)
    arrays = FieldArrays(np.asarray(mesh.tet_faces, np.int64),
                         np.asarray(mesh.neighbors, np.int64),
                         np.asarray(mesh.opposite_slot, np.int64),
                         np.asarray(mesh.face_centroids, np.float64), W, face_cost,
                         face_next, face_via, goal, int(G), excl)
    return CostField(mesh, arrays, int(status))
