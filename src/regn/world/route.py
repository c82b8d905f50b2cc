"""Paths across tiles: a search over portal nodes, refined in the tiles crossed.

1. *Coarse*: A* over the portal nodes (:mod:`regn.world.links`): the start
   joins the nodes of its tile at the costs of one cost field from the start
   (inside its tile), the goal likewise, and two nodes of one tile are
   joined at the tile's stored node cost. Only the start's and the goal's
   tiles are read; the costs of the others are in the manifest. This picks
   the tiles the path goes through.
2. *Corridor*: a Dijkstra search over the face graphs of just those tiles
   (each face joined to the other faces of its tetrahedra at their
   centroid distance, the cost rule of the tiles' own searches), joined at
   their linked faces: where it passes from tile to tile are the
   crossings.
3. *Legs*: the route is cut at each crossing; each leg is the tile's own
   ``find_path`` (smoothing, radius) between its ends, moved a hair into
   the tile.
4. *Crossings*: each crossing moves to where the straight line between the
   turning points on either side of it crosses the shared wall (when both
   tiles have room there), and the legs are searched again, while that
   shortens the whole path (at most :data:`MAX_ROUNDS` rounds): a string
   pull across the walls.
5. *Taut*: :func:`straighten` drops every turning point the path can see
   past (line of sight across the tiles, for the radius when one is
   given): a tile's own smoothing keeps to its search corridor, which on
   these meshes runs up to a few percent longer than a visible straight
   line.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..format.layout import PORTAL_PAIRS
from ..query.paths.path import Path
from ..status import NAMES, OK, UNREACHABLE
from .links import inside_point

#: Rounds of moving the crossings, at most; and the gain below which they stop.
MAX_ROUNDS = 8
MIN_GAIN = 1e-5
#: The corridor search looks no further than this times the node route's cost.
CORRIDOR_SLACK = 1.5
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
    return route[::-1], best


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
    """A point where the path passes from tile ``a`` to tile ``b``, through
    the linked face pair ``faces`` of link ``li``."""

    def __init__(self, world, li, faces, a, b):
        m = world.manifest
        lk = m.links[li]
        self.a, self.b = a, b
        self.axis, self.plane = lk.axis, lk.plane
        self.lo = np.maximum(m.tiles[lk.a].lo, m.tiles[lk.b].lo)
        self.hi = np.minimum(m.tiles[lk.a].hi, m.tiles[lk.b].hi)
        fa = faces[0] if lk.a == a else faces[1]
        self.node_point = np.asarray(world.tile(a).face_centroids)[fa]
        self.point = self.node_point.copy()
        self.delta = NUDGE_REL * float(np.max(m.tiles[a].hi - m.tiles[a].lo))
        self.upper = {lk.a: False, lk.b: True}
        self.inside = {lk.a: inside_point(world.tile(lk.a), faces[0]),
                       lk.b: inside_point(world.tile(lk.b), faces[1])}

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
    """Move the crossings while that shortens the path (module docstring):
    all at once, or else one at a time."""
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
        if failed is None:
            new_length = _total(new_legs, crossings, start, goal)
            if new_length < length * (1 - MIN_GAIN):
                legs, length = new_legs, new_length
                continue
        for c, p in zip(crossings, old):
            c.point = p
        one = _refine_each(world, start, goal, tiles, crossings, legs, options, moved, length)
        if one is None or not one[1] < length * (1 - MIN_GAIN):
            break
        legs, length = one
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


def face_graph(world, t):
    """Tile ``t``'s face graph (CSR, F x F): the faces of each tetrahedron
    joined at their centroid distance (kept with the tile)."""
    from scipy.sparse import coo_matrix
    extra = world.extra(t)
    if "graph" not in extra:
        mesh = world.tile(t)
        tf = np.asarray(mesh.tet_faces)
        cen = np.asarray(mesh.face_centroids)
        pairs = np.asarray(PORTAL_PAIRS)
        i = tf[:, pairs[:, 0]].ravel()
        j = tf[:, pairs[:, 1]].ravel()
        w = np.linalg.norm(cen[i] - cen[j], axis=1) + 1e-9
        F = mesh.n_faces
        extra["graph"] = coo_matrix((np.concatenate([w, w]), (np.concatenate([i, j]),
                                    np.concatenate([j, i]))), shape=(F, F)).tocsr()
    return extra["graph"]


def _ends(world, t, point):
    """(faces, distances) joining ``point`` to the faces of its tetrahedron in tile ``t``."""
    mesh = world.tile(t)
    tet = int(mesh.locate(np.asarray(point)[None])[0])
    faces = np.asarray(mesh.tet_faces)[tet]
    return faces, np.linalg.norm(np.asarray(mesh.face_centroids)[faces] - point, axis=1)


def _corridor(world, route_tiles, start, goal, s_tile, g_tile, limit=np.inf):
    """The crossings of the cheapest face-graph route from start to goal
    through the tiles ``route_tiles`` (module docstring, step 2); None
    when there is none."""
    from scipy.sparse import block_diag, coo_matrix
    from scipy.sparse.csgraph import dijkstra
    m = world.manifest
    tiles = list(dict.fromkeys(int(t) for t in route_tiles))
    off = {}
    n = 0
    for t in tiles:
        off[t] = n
        n += world.tile(t).n_faces
    S, G = n, n + 1
    rows, cols, w = [], [], []
    links = [li for li, lk in enumerate(m.links) if lk.a in off and lk.b in off]
    for li in links:
        lk = m.links[li]
        rows.append(off[lk.a] + lk.faces[:, 0])
        cols.append(off[lk.b] + lk.faces[:, 1])
        w.append(np.full(len(lk.faces), 1e-9))
    for node, t, p in ((S, s_tile, start), (G, g_tile, goal)):
        f, d = _ends(world, t, p)
        rows.append(np.full(len(f), node))
        cols.append(off[t] + f)
        w.append(d + 1e-9)
    r, c, ww = (np.concatenate(x) for x in (rows, cols, w))
    extra = coo_matrix((np.concatenate([ww, ww]), (np.concatenate([r, c]),
                        np.concatenate([c, r]))), shape=(n + 2, n + 2))
    graph = block_diag([face_graph(world, t) for t in tiles] + [coo_matrix((2, 2))],
                       format="csr") + extra.tocsr()
    dist, pred = dijkstra(graph, indices=S, return_predecessors=True, limit=limit)
    if not np.isfinite(dist[G]):
        return None
    chain = []
    v = G
    while v >= 0 and v != S:
        chain.append(v)
        v = pred[v]
    chain = chain[::-1][:-1]                   # faces, start to goal
    starts = np.array([off[t] for t in tiles])
    tile_of = np.array(tiles)[np.searchsorted(starts, chain, side="right") - 1]
    crossings = []
    for k in range(1, len(chain)):
        a, b = int(tile_of[k - 1]), int(tile_of[k])
        if a == b:
            continue
        fa, fb = chain[k - 1] - off[a], chain[k] - off[b]
        li = next(li for li in links if {m.links[li].a, m.links[li].b} == {a, b})
        lk = m.links[li]
        crossings.append(_Crossing(world, li, (fa, fb) if lk.a == a else (fb, fa), a, b))
    return crossings


def straighten(m, points, radius=0.0):
    """``points`` (n,3) with every turning point the path can see past
    dropped: from each kept point, the farthest later point in sight of it
    (``m``: a Mesh or a World; its ``line_of_sight``) comes next."""
    pts = np.asarray(points, np.float64)
    keep, i, n = [0], 0, len(pts)
    while i < n - 1:
        j = n - 1
        while j > i + 1:
            sight = m.line_of_sight(pts[i][None], pts[j][None], radius=radius) if radius \
                else m.line_of_sight(pts[i][None], pts[j][None])
            if sight[0]:
                break
            j -= 1
        keep.append(j)
        i = j
    return pts[keep]


def world_path(world, start, goal, s_tile, g_tile, options) -> Path:
    """The path from ``start`` (in tile ``s_tile``) to ``goal`` (``g_tile``)
    across tiles (module docstring); tets and portals in world numbering."""
    coarse = _coarse(world, s_tile, start, g_tile, goal)
    if coarse is None:
        return Path(False, NAMES[UNREACHABLE])
    route, cost = coarse
    m = world.manifest
    crossings = _corridor(world, [s_tile] + [t for _, t in route] + [g_tile], start, goal,
                          s_tile, g_tile, CORRIDOR_SLACK * cost)
    if crossings is None:            # (not expected) the node route's own crossings
        crossings = [_Crossing(world, int(m.node_link[n]), m.node_faces[n], a, b)
                     for n, a, b in _crossings(world, route, g_tile)]
    tiles = [s_tile] + [c.b for c in crossings]
    legs, failed = _legs(world, start, goal, tiles, crossings, options)
    if failed is not None:
        return Path(False, failed.status)
    if options.get("smooth", True):
        legs = _refine(world, start, goal, tiles, crossings, legs, options)
    pts = [_joined(leg, i, legs, crossings, start, goal) for i, leg in enumerate(legs)]
    points = np.vstack([pts[0]] + [p[1:] for p in pts[1:]])
    if options.get("smooth", True):
        points = straighten(world, points, options.get("radius", 0.0))
    tets = np.concatenate([world.tet_offset[t] + leg.tets for t, leg in zip(tiles, legs)])
    portals = np.concatenate([world.face_offset[t] + leg.portals
                              for t, leg in zip(tiles, legs)])
    length = float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum())
    cost = float(sum(leg.cost for leg in legs))
    path = Path(True, NAMES[OK], cost, tets, portals, points, length)
    path.tiles = tiles
    return path
