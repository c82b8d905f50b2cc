"""A world's cost field toward one goal, answered point by point.

A tile's :class:`regn.query.paths.field.CostField` holds every
tetrahedron's cost to the goal from one search of the tile. Across a world
that would be one search over every tile (millions of tetrahedra, every
tile read), so a :class:`WorldField` answers the points it is asked about
instead: each one's cost and next waypoint come from the world's own path
from the point to the goal (:meth:`regn.world.World.find_path`, smoothed),
kept per point. The per-tetrahedron arrays (``cost``, ``next_portal``) are
not available for a world (QueryError).
"""

from __future__ import annotations

import numpy as np

from ..errors import QueryError
from ..query.common import as_point, as_points
from ..status import GOAL_OUTSIDE, NAMES, OK


class WorldField:
    """Costs to ``goal`` across a world (see the module docstring)."""

    def __init__(self, world, goal, smooth=True):
        self._world = world
        self.goal = as_point(goal, "goal")
        self.goal_tet = int(world.locate(self.goal[None])[0])
        self.status = NAMES[OK] if self.goal_tet >= 0 else NAMES[GOAL_OUTSIDE]
        self._smooth = smooth
        self._paths = {}

    def path_from(self, start, smooth=True):
        """The world's path from ``start`` to the goal (a Path)."""
        return self._world.find_path(as_point(start, "start"), self.goal, smooth=smooth)

    def _path(self, p):
        key = tuple(p.tolist())
        if key not in self._paths:
            self._paths[key] = self.path_from(p, self._smooth)
        return self._paths[key]

    def cost_at(self, points) -> np.ndarray:
        """(N,) each point's path cost to the goal; inf where no path leads
        (outside the world, cut off, or the goal outside)."""
        pts = as_points(points)
        if self.status != NAMES[OK]:
            return np.full(len(pts), np.inf)
        return np.array([p.cost if p.found else np.inf for p in map(self._path, pts)])

    def next_waypoint(self, points) -> np.ndarray:
        """(N,3) where each point should fly next: the first turning point of
        its path to the goal (the goal itself when in sight); NaN where no
        path leads."""
        pts = as_points(points)
        out = np.full(pts.shape, np.nan)
        if self.status != NAMES[OK]:
            return out
        for r, p in enumerate(map(self._path, pts)):
            if p.found:
                out[r] = p.points[1] if len(p.points) > 1 else self.goal
        return out

    def _every_tet(self, name):
        raise QueryError(f"a world's cost field has no per-tetrahedron {name}: it answers "
                         "points (cost_at, next_waypoint; `regn field WORLD.json X Y Z "
                         "--points FILE`)")

    cost = property(lambda self: self._every_tet("cost"))
    next_portal = property(lambda self: self._every_tet("next_portal"))
