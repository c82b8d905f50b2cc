"""Paths across tiles: a search over portal nodes, refined in the tiles crossed.

1. *Coarse*: A* over the portal nodes (:mod:`regn.world.links`; the
   kernel in :mod:`regn.world._route_kernels`), on a graph built once from
   the manifest: two nodes of one tile are joined at the tile's stored node
   cost. The start joins the nodes of its tile it can reach (the same
   connected part of the tile) at their straight distance times the
   world's typical detour (the median ratio of stored node cost to straight
   distance); the goal likewise. No tile but the start's and the goal's is
   read. This picks the tiles the path goes through and where it crosses
   from one to the next (the nodes); when a leg then finds no way (not
   expected), the ends are joined at the exact costs of one cost field each
   instead.
2. *Legs*: the route is cut at each crossing; each leg is the tile's own
   ``find_path`` (smoothing, radius) between its ends, moved a hair into
   the tile.
3. *Crossings*: a sweep along the route moves each crossing to where the
   straight line between the turning points on either side of it meets the
   shared wall (when both tiles have room there), searching again just the
   two legs it joins, while that shortens them: a string pull across the
   walls. A sweep touches the tiles in route order, so a route longer than
   the world's tile budget reads each tile once a sweep.
4. *Taut*: :func:`straighten` drops the turning points the path can see
   past (line of sight across the tiles, for the radius when one is
   given): a tile's own smoothing keeps to its search corridor, which on
   these meshes runs up to a few percent longer than a visible straight
   line.
"""

from __future__ import annotations

import numpy as np

from ..query.paths.path import Path
from ..status import NAMES, OK, UNREACHABLE

#: Sweeps along the route moving the crossings (a second sweep left the
#: equal-answers test's figures as they were, for 15 % more time); moves of
#: one crossing in a sweep, at most; and the gain below which a move is not
#: taken.
SWEEPS = 1
STEPS = 4
MIN_GAIN = 1e-5
#: A crossing's leg ends sit this far (of the tile's extent) inside its tile.
NUDGE_REL = 1e-6
#: straighten: give up looking further ahead after this many points in a
#: row out of sight.
LOOKAHEAD = 3


# --- the node graph (once per world) -------------------------------------------------
class NodeGraph:
    """The portal-node graph of a manifest as CSR arrays (see the module
    docstring), and the world's typical detour factor."""

    def __init__(self, manifest):
        m = manifest
        src, dst, w, via = [], [], [], []
        for t, tile in enumerate(m.tiles):
            k = len(tile.nodes)
            if not k:
                continue
            i, j = np.nonzero(np.isfinite(tile.node_costs) & ~np.eye(k, dtype=bool))
            src.append(tile.nodes[i])
            dst.append(tile.nodes[j])
            w.append(tile.node_costs[i, j])
            via.append(np.full(len(i), t, np.int64))
        n = len(m.node_points)
        src, dst, w, via = (np.concatenate(x) if x else np.zeros(0, d)
                            for x, d in ((src, np.int64), (dst, np.int64), (w, float),
                                         (via, np.int64)))
        # the cheaper of two tiles' edges between the same two nodes
        order = np.lexsort((w, dst, src))
        src, dst, w, via = src[order], dst[order], w[order], via[order]
        first = np.ones(len(src), bool)
        first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
        src, dst, w, via = src[first], dst[first], w[first], via[first]
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))])
        self.indices, self.weight, self.via = dst, w.astype(np.float64), via
        straight = np.linalg.norm(m.node_points[src] - m.node_points[dst], axis=1)
        ok = straight > 0
        self.detour = float(np.median(w[ok] / straight[ok])) if ok.any() else 1.0
        self.detour = max(self.detour, 1.0)


def node_graph(world) -> NodeGraph:
    g = getattr(world, "_node_graph", None)
    if g is None:
        g = world._node_graph = NodeGraph(world.manifest)
    return g


def _reachable_nodes(world, t, point, tet=None):
    """(nodes, their inside points) of tile ``t`` in the same connected part
    of the tile as ``point`` (in tetrahedron ``tet`` of the tile, located
    when not given). Each tile's nodes, their inside points and the
    connected part each lies in are kept by the world once made (a few kB
    a tile, kept when the tile is dropped)."""
    from ..query.locating.sample import components
    reach = getattr(world, "_reach", None)
    if reach is None:
        reach = world._reach = {}
    nodes = world.manifest.tiles[t].nodes
    if not len(nodes):
        return nodes, np.zeros((0, 3))
    lab = np.asarray(components(world.tile(t)))
    got = reach.get(t)
    if got is None:
        from .prepared import first_tets
        tets = first_tets(world, t)[world.node_faces_in(nodes, t)]
        got = reach[t] = (world.node_inside(nodes, t), lab[tets])
    inside, part = got
    if tet is None:
        tet = int(world.tile(t).locate(np.asarray(point)[None])[0])
    keep = part == lab[max(tet, 0)] if tet >= 0 else np.zeros(len(nodes), bool)
    return nodes[keep], inside[keep]


def _coarse(world, s_tile, start, g_tile, goal, exact=False, s_tet=None, g_tet=None):
    """The node route: ``([(node, tile the route reaches it in), ...], cost)``
    or None when no route joins start and goal (``s_tet``, ``g_tet``: the
    ends' tetrahedra in their tiles, located when not given)."""
    from ._route_kernels import node_astar
    g = node_graph(world)
    if exact:
        ends = _exact_ends(world, s_tile, start, g_tile, goal)
        if ends is None:
            return None
        s_nodes, s_cost, g_nodes, g_cost = ends
    else:
        s_nodes, s_in = _reachable_nodes(world, s_tile, start, s_tet)
        g_nodes, g_in = _reachable_nodes(world, g_tile, goal, g_tet)
        s_cost = g.detour * np.sqrt(((s_in - start) ** 2).sum(axis=1))
        g_cost = g.detour * np.sqrt(((g_in - goal) ** 2).sum(axis=1))
    to_goal = np.full(len(g.indptr) - 1, np.inf)
    to_goal[g_nodes] = np.minimum(to_goal[g_nodes], g_cost)
    best, end, parent, tile = node_astar(
        g.indptr, g.indices, g.weight, g.via, world.manifest.node_points,
        np.asarray(goal, np.float64), np.asarray(s_nodes, np.int64),
        np.asarray(s_cost, np.float64), s_tile, to_goal)
    if end < 0:
        return None
    route = []
    n = int(end)
    while n >= 0:
        route.append((n, int(tile[n])))
        n = int(parent[n])
    return route[::-1], float(best)


def _exact_ends(world, s_tile, start, g_tile, goal):
    """The start's and the goal's node costs from one cost field each."""
    m = world.manifest
    out = []
    for t, p in ((s_tile, start), (g_tile, goal)):
        field = world.tile(t).cost_field(p)
        if field.status != NAMES[OK]:
            return None
        nodes = m.tiles[t].nodes
        c = field.cost_at(world.node_inside(nodes, t)) if len(nodes) else np.zeros(0)
        ok = np.isfinite(c)
        out += [nodes[ok], c[ok]]
    return out


def _crossings(route, g_tile):
    """The route's crossings: ``[(node, tile before, tile after)]``, dropping
    nodes the route touches without changing tile."""
    out = []
    for i, (n, t_in) in enumerate(route):
        t_out = route[i + 1][1] if i + 1 < len(route) else g_tile
        if t_in != t_out:
            out.append((n, t_in, t_out))
    return out


# --- legs and crossings ------------------------------------------------------------
class _Crossing:
    """Where the path passes from tile ``a`` to tile ``b``, through portal
    node ``node`` at first (a linked face pair of link ``li``)."""

    def __init__(self, world, node, a, b):
        m = world.manifest
        lk = m.links[int(m.node_link[node])]
        self.a, self.b = a, b
        self.axis, self.plane = lk.axis, lk.plane
        self.lo = np.maximum(m.tiles[lk.a].lo, m.tiles[lk.b].lo)
        self.hi = np.minimum(m.tiles[lk.a].hi, m.tiles[lk.b].hi)
        self.node_point = np.array(m.node_points[node], np.float64)
        self.point = self.node_point.copy()
        self.delta = NUDGE_REL * float(np.max(m.tiles[a].hi - m.tiles[a].lo))
        self.upper = {lk.a: False, lk.b: True}
        self.inside = {t: world.node_inside([node], t)[0] for t in (a, b)}

    def end_in(self, t):
        """The crossing a hair into tile ``t``."""
        if np.array_equal(self.point, self.node_point):
            return self.inside[t]
        p = self.point.copy()
        p[self.axis] = self.plane + (self.delta if self.upper[t] else -self.delta)
        return p


def _leg(world, i, tiles, crossings, start, goal, options):
    """Leg ``i``'s Path in its tile (tile-local numbering)."""
    t = tiles[i]
    a = start if i == 0 else crossings[i - 1].end_in(t)
    b = goal if i == len(tiles) - 1 else crossings[i].end_in(t)
    return world.tile(t).find_path(a, b, **options)


def _joined(leg, i, n_legs, crossings, start, goal):
    """A leg's points with its ends put back exactly on the crossings."""
    pts = np.array(leg.points, np.float64)
    pts[0] = start if i == 0 else crossings[i - 1].point
    pts[-1] = goal if i == n_legs - 1 else crossings[i].point
    return pts


def _length(pts):
    return float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())


def _pulled(leg_a, leg_b, c):
    """Where crossing ``c`` would go: the straight line between the turning
    points either side of it meets its wall (None: it stays)."""
    a, b = leg_a.points[-2], leg_b.points[1]
    da, db = a[c.axis] - c.plane, b[c.axis] - c.plane
    if da * db >= 0 or da == db:
        return None
    q = a + (b - a) * (da / (da - db))
    q = np.clip(q, c.lo, c.hi)
    q[c.axis] = c.plane
    return None if float(np.abs(q - c.point).max()) <= 1e-9 else q


def _refine(world, start, goal, tiles, crossings, legs, options):
    """Move the crossings while that shortens the path (module docstring,
    step 3); ``legs`` is updated in place."""
    n = len(legs)

    def pair_length(i, la, lb):
        return (_length(_joined(la, i, n, crossings, start, goal))
                + _length(_joined(lb, i + 1, n, crossings, start, goal)))

    for _ in range(SWEEPS):
        moved = False
        for i, c in enumerate(crossings):
            for _ in range(STEPS):
                q = _pulled(legs[i], legs[i + 1], c)
                if q is None:
                    break
                before = pair_length(i, legs[i], legs[i + 1])
                old, c.point = c.point, q
                la = _leg(world, i, tiles, crossings, start, goal, options)
                lb = _leg(world, i + 1, tiles, crossings, start, goal, options) \
                    if la.found else la
                if la.found and lb.found and \
                        pair_length(i, la, lb) < before * (1 - MIN_GAIN):
                    legs[i], legs[i + 1] = la, lb
                    moved = True
                else:
                    c.point = old
                    break
        if not moved:
            break
    return legs


def straighten(m, points, radius=0.0):
    """``points`` (n,3) with the turning points the path can see past
    dropped (:func:`drop_seen_past`; ``m``: a Mesh or a World, its
    ``line_of_sight``)."""
    pts = np.asarray(points, np.float64)

    def sees(a, b):
        if radius:
            return m.line_of_sight(a[None], b[None], radius=radius)[0]
        return m.line_of_sight(a[None], b[None])[0]
    return drop_seen_past(pts, sees)


def drop_seen_past(pts, sees):
    """``pts`` (n,3) less the turning points the path sees past: from each
    kept point the next is the farthest later one that ``sees(a, b)``,
    looking ahead until :data:`LOOKAHEAD` points in a row are out of sight."""
    keep, i, n = [0], 0, len(pts)
    while i < n - 1:
        j, k, misses = i + 1, i + 2, 0
        while k < n and misses < LOOKAHEAD:
            if sees(pts[i], pts[k]):
                j, misses = k, 0
            else:
                misses += 1
            k += 1
        keep.append(j)
        i = j
    return pts[keep]


def world_path(world, start, goal, s_tile, g_tile, options) -> Path:
    """The path from ``start`` (in tile ``s_tile``) to ``goal`` (``g_tile``)
    across tiles (module docstring); tets and portals in world numbering."""
    for exact in (False, True):
        coarse = _coarse(world, s_tile, start, g_tile, goal, exact=exact)
        if coarse is None:
            return Path(False, NAMES[UNREACHABLE])
        route, _ = coarse
        crossings = [_Crossing(world, n, a, b) for n, a, b in _crossings(route, g_tile)]
        tiles = [s_tile] + [c.b for c in crossings]
        legs = []
        for i in range(len(tiles)):
            leg = _leg(world, i, tiles, crossings, start, goal, options)
            if not leg.found:
                break
            legs.append(leg)
        if len(legs) == len(tiles):
            break
    else:
        return Path(False, leg.status)
    smooth = options.get("smooth", True)
    if smooth:
        legs = _refine(world, start, goal, tiles, crossings, legs, options)
    pts = [_joined(leg, i, len(legs), crossings, start, goal) for i, leg in enumerate(legs)]
    points = np.vstack([pts[0]] + [p[1:] for p in pts[1:]])
    if smooth:
        points = straighten(world, points, options.get("radius", 0.0))
    tets = np.concatenate([world.tet_offset[t] + leg.tets for t, leg in zip(tiles, legs)])
    portals = np.concatenate([world.face_offset[t] + leg.portals
                              for t, leg in zip(tiles, legs)])
    path = Path(True, NAMES[OK], float(sum(leg.cost for leg in legs)), tets, portals, points,
                _length(points))
    path.tiles = tiles
    return path
