"""Paths across tiles: a search over portal nodes, refined in the tiles crossed.

1. *Coarse*: A* over the portal nodes (:mod:`regn.world.links`): the start
   joins the nodes of its tile at the costs of one cost field from the start
   (inside its tile), the goal likewise, and two nodes of one tile are
   joined at the tile's stored node cost. Only the start's and the goal's
   tiles are read; the costs of the others are in the manifest.
2. *Legs*: the route is cut at each crossing (a node where it passes from
   one tile to the next); each leg is the tile's own ``find_path``
   (smoothing, radius) between its ends, moved a hair into the tile.
3. *Crossings*: each crossing moves to where the straight line between the
   turning points on either side of it crosses the shared wall (when both
   tiles have room there), and the legs are searched again, while that
   shortens the whole path (at most :data:`MAX_ROUNDS` rounds). This is a
   string pull across the walls: the path ends up within a fraction of a
   percent of the shortest one through the same tiles.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..query.paths.path import Path
from ..status import NAMES, OK, UNREACHABLE

#: Rounds of moving the crossings, at most; and the gain below which they stop.
MAX_ROUNDS = 8
MIN_GAIN = 1e-5
#: A crossing's leg ends sit this far (of the tile's extent) inside its tile.
NUDGE_REL = 1e-6


def _coarse(world, s_tile, start, g_tile, goal):
    """The cheapest node route: ``[(node, tile the route reaches it in), ...]``
    or None when no route joins start and goal."""
    m = world.manifest
    field_s = world.tile(s_tile).cost_field(start)
    field_g = world.tile(g_tile).cost_field(goal)
    if field_s.status != NAMES[OK] or field_g.status != NAMES[OK]:
        return None
    ts, tg = m.tiles[s_tile], m.tiles[g_tile]
    cs = field_s.cost_at(world.node_inside(ts.nodes, s_tile)) if len(ts.nodes) else []
    cg = field_g.cost_at(world.node_inside(tg.nodes, g_tile)) if len(tg.nodes) else []
    to_goal = {int(n): float(c) for n, c in zip(tg.nodes, cg) if np.isfinite(c)}
    pts = m.node_points
    h = np.linalg.norm(pts - np.asarray(goal), axis=1) * (1 - 1e-6)
    best, dist, parent = np.inf, {}, {}
    heap = []
    for n, c in zip(ts.nodes, cs):
        n = int(n)
        if np.isfinite(c) and c < dist.get(n, np.inf):
            dist[n], parent[n] = float(c), (None, s_tile)
            heapq.heappush(heap, (c + h[n], n))
    end = None
    while heap:
        key, n = heapq.heappop(heap)
        if key >= best:
            break
        d = dist[n]
        if key > d + h[n] + 1e-9:
            continue
        if n in to_goal and d + to_goal[n] < best:
            best, end = d + to_goal[n], n
        for t in world.node_tiles[n]:
            tile = m.tiles[t]
            row = tile.node_costs[world.node_slot[t][n]]
            for m_, c in zip(tile.nodes.tolist(), row.tolist()):
                nd = d + c
                if nd < dist.get(m_, np.inf):
                    dist[m_], parent[m_] = nd, (n, t)
                    heapq.heappush(heap, (nd + h[m_], m_))
    if end is None:
        return None
    route = []
    n = end
    while n is not None:
        prev, t = parent[n]
        route.append((n, t))
        n = prev
    return route[::-1]


def _crossings(world, route, g_tile):
    """The route's crossings: ``[(node, tile before, tile after)]``, dropping
    nodes the route touches without changing tile."""
    out = []
    for i, (n, t_in) in enumerate(route):
        t_out = route[i + 1][1] if i + 1 < len(route) else g_tile
        if t_in != t_out:
            out.append((n, t_in, t_out))
    return out


class _Crossing:
    """A point where the path passes from tile ``a`` to tile ``b``."""

    def __init__(self, world, node, a, b):
        m = world.manifest
        lk = m.links[m.node_link[node]]
        self.node, self.a, self.b = node, a, b
        self.axis, self.plane = lk.axis, lk.plane
        self.lo = np.maximum(m.tiles[lk.a].lo, m.tiles[lk.b].lo)
        self.hi = np.minimum(m.tiles[lk.a].hi, m.tiles[lk.b].hi)
        self.node_point = m.node_points[node]
        self.point = self.node_point.copy()
        self.delta = NUDGE_REL * float(np.max(m.tiles[a].hi - m.tiles[a].lo))
        self.upper = {lk.a: False, lk.b: True}
        self.inside = {t: world.node_inside([node], t)[0] for t in (a, b)}

    def end_in(self, t, point=None):
        """The crossing (or ``point`` on its wall) a hair into tile ``t``."""
        p = self.point if point is None else point
        if np.array_equal(p, self.node_point):
            return self.inside[t]
        p = p.copy()
        p[self.axis] = self.plane + (self.delta if self.upper[t] else -self.delta)
        return p


def _legs(world, start, goal, tiles, crossings, options, points=None):
    """Each leg's Path (tile-local), or the first that failed."""
    ends = [start] + [c.point if points is None else points[i]
                      for i, c in enumerate(crossings)] + [goal]
    legs = []
    for i, t in enumerate(tiles):
        a = ends[i] if i == 0 else crossings[i - 1].end_in(t, None if points is None
                                                            else points[i - 1])
        b = ends[i + 1] if i == len(tiles) - 1 else \
            crossings[i].end_in(t, None if points is None else points[i])
        p = world.tile(t).find_path(a, b, **options)
        if not p.found:
            return legs, p
        legs.append(p)
    return legs, None


def _total(legs, crossings, start, goal):
    return float(sum(np.linalg.norm(np.diff(_joined(leg, i, legs, crossings, start, goal),
                                            axis=0), axis=1).sum()
                     for i, leg in enumerate(legs)))


def _joined(leg, i, legs, crossings, start, goal):
    """A leg's points with its ends put back exactly on the crossings."""
    pts = np.array(leg.points, np.float64)
    pts[0] = start if i == 0 else crossings[i - 1].point
    pts[-1] = goal if i == len(legs) - 1 else crossings[i].point
    return pts


def _pulled(legs, crossings):
    """Where each crossing would go: the straight line between the turning
    points either side of it meets its wall (None: it stays)."""
    out = []
    for i, c in enumerate(crossings):
        a, b = legs[i].points[-2], legs[i + 1].points[1]
        da, db = a[c.axis] - c.plane, b[c.axis] - c.plane
        if da * db >= 0 or da == db:
            out.append(None)
            continue
        q = a + (b - a) * (da / (da - db))
        q = np.clip(q, c.lo, c.hi)
        q[c.axis] = c.plane
        out.append(q)
    return out


def _refine(world, start, goal, tiles, crossings, legs, options):
    """Move the crossings while that shortens the path (module docstring)."""
    length = _total(legs, crossings, start, goal)
    for _ in range(MAX_ROUNDS):
        moved = _pulled(legs, crossings)
        if all(q is None for q in moved):
            break
        old = [c.point.copy() for c in crossings]
        for c, q in zip(crossings, moved):
            if q is not None:
                c.point = q
        new_legs, failed = _legs(world, start, goal, tiles, crossings, options)
        new_length = _total(new_legs, crossings, start, goal) if failed is None else np.inf
        if not new_length < length * (1 - MIN_GAIN):
            for c, p in zip(crossings, old):
                c.point = p
            if failed is not None and any(q is not None for q in moved):
                continue_single = _refine_each(world, start, goal, tiles, crossings, legs,
                                               options, moved, length)
                if continue_single is not None:
                    legs, length = continue_single
                    continue
            break
        legs, length = new_legs, new_length
    return legs


def _refine_each(world, start, goal, tiles, crossings, legs, options, moved, length):
    """One crossing moved at a time (when moving them all failed): the new
    ``(legs, length)`` if any move shortened the path, else None."""
    improved = None
    for c, q in zip(crossings, moved):
        if q is None:
            continue
        old = c.point
        c.point = q
        new_legs, failed = _legs(world, start, goal, tiles, crossings, options)
        if failed is None and _total(new_legs, crossings, start, goal) < length:
            legs, length = new_legs, _total(new_legs, crossings, start, goal)
            improved = (legs, length)
        else:
            c.point = old
    return improved


def world_path(world, start, goal, s_tile, g_tile, options) -> Path:
    """The path from ``start`` (in tile ``s_tile``) to ``goal`` (``g_tile``)
    across tiles (module docstring); tets and portals in world numbering."""
    route = _coarse(world, s_tile, start, g_tile, goal)
    if route is None:
        return Path(False, NAMES[UNREACHABLE])
    crossings = [_Crossing(world, n, a, b)
                 for n, a, b in _crossings(world, route, g_tile)]
    tiles = [s_tile] + [c.b for c in crossings]
    legs, failed = _legs(world, start, goal, tiles, crossings, options)
    if failed is not None:
        return Path(False, failed.status)
    if options.get("smooth", True):
        legs = _refine(world, start, goal, tiles, crossings, legs, options)
    pts = [_joined(leg, i, legs, crossings, start, goal) for i, leg in enumerate(legs)]
    points = np.vstack([pts[0]] + [p[1:] for p in pts[1:]])
    tets = np.concatenate([world.tet_offset[t] + leg.tets for t, leg in zip(tiles, legs)])
    portals = np.concatenate([world.face_offset[t] + leg.portals
                              for t, leg in zip(tiles, legs)])
    length = float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum())
    cost = float(sum(leg.cost for leg in legs))
    path = Path(True, NAMES[OK], cost, tets, portals, points, length)
    path.tiles = tiles
    return path
