"""A path across tiles as one compiled walk (the default for a point's path).

:mod:`regn.world.route`'s coarse step picks the tiles the path goes
through (A* over the manifest's portal nodes, reading only the start's and
the goal's tiles). Then, instead of a search per tile and a Python sweep
over the crossings:

1. one A* runs over the union of those tiles' face graphs
   (:func:`regn.world._walk_kernels.world_astar`): a node is a face of a
   tile, a linked face pair one zero-cost edge; the tiles' own edge blocks
   (:func:`regn.query.paths.path.graph_arrays`, kept beside each tile) are
   searched where they lie;
2. its corridor, across the tile walls, is smoothed as one by the single
   mesh's smoother (:func:`regn.query.paths._smooth_kernels.solve`);
3. the points the path can see past are dropped (the taut pass of
   :func:`regn.world.route.straighten`, compiled: the segment walk of
   :mod:`regn.query.sight` going on through linked faces), within the
   route's tiles, then once more over the whole path through the tiles its
   shortcuts pass (:func:`taut_across`).

The search is led by the coarse route: a face's guess of its cost to the
goal is :data:`BOUND_WEIGHT` times its straight distance to where the
route leaves its tile plus the route's polyline from there on (not a
bound: the search finds a good corridor, not always the cheapest; each
face is expanded once). (A second search with weight 1 on a small budget
was tried after it: on 300 paths of the 125-tile world it never found a
cheaper corridor, for 40 % of the time.)

The tiles taking part sit in :class:`TileSlots`: each tile's arrays in
numba typed lists indexed by slot, handed to the kernels as one
:class:`regn.world._walk_kernels.WalkLists`. A tile's arrays come from
its ``.query`` file alone (``walk_*``, :data:`regn.world.prepared.STATIC`:
the tile is not parsed; only the start's and the goal's tiles are read,
to locate the ends), or else from the loaded tile. There are
``max(max_tiles, 2)`` slots, least recently used given up first (and a
slot made from a loaded tile with it); a route through more tiles than
that is cut at its crossings into windows that each fit, each window
searched and made taut on its own and joined at the crossing's portal
node. The taut pass sees only through the window's tiles, so an answer
does not depend on which other tiles are in slots.

A sphere's path (``radius`` > 0) is this walk masked for the radius
(:mod:`regn.world.radius`); ``partial`` is :mod:`regn.world.partial`.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from ..query.paths.path import Path
from ..query.paths.taut import polyline_length
from ..status import NAMES, OK, UNREACHABLE

#: the search's guess of a face's cost to the goal: this times the straight
#: distance to where the route leaves the face's tile plus the route's
#: polyline from there on (regn.world._walk_kernels.world_astar)
BOUND_WEIGHT = 1.7

#: the smoother's certified gap (the single mesh's is 1e-4): the taut pass
#: after it takes the points the path sees past anyway (1e-2 against 1e-3:
#: the same lengths after it on 300 paths of the 125-tile world, 15 % less
#: time a path)
SMOOTH_RTOL = 1e-2

#: taut_across: when the tiles under every chord of the path do not fit in
#: the slots, the chords between points at most this far apart (as the
#: walk's own pass looks past up to LOOKAHEAD points)
TAUT_REACH = 3
#: taut_across: chord-box tests at most, for the tiles under every chord
TAUT_BOX_TESTS = 1 << 20

#: the arrays of a slot: (name, dtype, ndim, read-only)
FIELDS = (("EF", np.float32, 2, True), ("EI", np.int32, 2, True),
          ("TFI", np.int32, 2, True), ("ACR", np.int64, 1, True), ("RANK", np.int32, 1, True),
          ("FO", np.int32, 1, True), ("NODE", np.float64, 2, False),
          ("NODEI", np.int64, 2, False), ("W", np.float64, 2, True),
          ("NBV", np.int32, 2, True), ("FBV", np.int32, 2, True), ("ACRF", np.int64, 1, True),
          ("FT0", np.int32, 1, True), ("FV", np.int32, 2, True), ("VX", np.float64, 2, True),
          ("TLM", np.int8, 1, True), ("CEN", np.float64, 2, True))
def _ro(a, dtype):
    v = np.ascontiguousarray(a, dtype).view()
    v.flags.writeable = False
    return v


def _tile_links(world):
    """Per tile: ``(faces, codes)``, its linked faces and each one's other
    side (``tile << 32 | face``), from the manifest's links (made once)."""
    out = getattr(world, "_tile_links", None)
    if out is None:
        parts = [[] for _ in range(world.n_tiles)]
        for lk in world.manifest.links:
            fa, fb = lk.faces[:, 0].astype(np.int64), lk.faces[:, 1].astype(np.int64)
            parts[lk.a].append((fa, (np.int64(lk.b) << 32) | fb))
            parts[lk.b].append((fb, (np.int64(lk.a) << 32) | fa))
        out = [(np.concatenate([f for f, _ in p]), np.concatenate([c for _, c in p]))
               if p else (np.zeros(0, np.int64), np.zeros(0, np.int64)) for p in parts]
        world._tile_links = out
    return out


def tile_arrays(world, t, buf) -> dict:
    """Tile ``t``'s arrays for the walk (:data:`FIELDS`): those kept in its
    ``.query`` file, used where they lie (the tile itself is not read), or
    made from the tile (:func:`regn.world.prepared.static_arrays`). ``buf``:
    the slot's own buffers (a dict, filled here and kept for the next tile
    in the slot): the search rows, and the link arrays, into which the
    tile's links (from the manifest) are put in place of the last tile's
    (:func:`regn.world._walk_kernels.place_links`). Nothing here passes
    over the whole tile: a search reads the pages it reaches."""
    from ._walk_kernels import place_links
    from .prepared import STATIC, static_arrays
    kept = world.query_arrays(t)
    from_mesh = not (kept is not None and all("walk_" + k in kept for k in STATIC))
    if not from_mesh:
        st = {k: kept["walk_" + k] for k in STATIC}
        edge_int, W = kept["path_edge_int"], kept["loc_W"]
        world.walk_reads += 1
    else:
        from ..query.locating.locate import locate_tables
        from .prepared import search_arrays
        mesh = world.tile(t)
        st = static_arrays(mesh)
        edge_int, W = search_arrays(mesh)["edge_int"], locate_tables(mesh).W
    F, T = len(st["FO"]), len(st["TFI"])
    if buf.get("F", -1) < F or buf.get("T", -1) < T:
        from .memory import own_array
        none = np.zeros(0, np.int64)
        buf.update(F=F, T=T, rows=_node_rows(F), acrf=own_array(F, np.int64, -1),
                   acr=own_array(F, np.int64, -1), tlm=own_array(T, np.int8),
                   old=(none,) * 3)
    own, codes = _tile_links(world)[t]
    ranks, tets = place_links(buf["acrf"], buf["acr"], buf["tlm"], *buf["old"], own, codes,
                              st["RANK"], st["FT0"], st["TFI"])
    buf["old"] = (own, ranks, tets)
    out = dict(st, EF=np.asarray(edge_int).view(np.float32), EI=edge_int, W=W,
               ACRF=buf["acrf"][:F], ACR=buf["acr"][:F], TLM=buf["tlm"][:T])
    for name, dtype, _, ro in FIELDS:
        if ro:
            out[name] = _ro(out[name], dtype)
    out["from_mesh"] = from_mesh
    out["NODE"] = node = buf["rows"][:F]
    out["NODEI"] = node.view(np.int64)
    return out


def _node_rows(F):
    """(F, 8) float64 zeros whose rows start on 64-byte lines (a face's
    search row: :data:`regn.world._walk_kernels.DIST` ...), in an anonymous
    map of their own (page aligned), so that a slot's rows go back to the
    system whole when the slot goes or grows, not into the allocator's heap.
    They are kept for the next tile in the slot (stale stamps need no
    clearing): giving their pages back at each tile placed was tried, and
    faulting them in again cost 200 page faults and ~10 % a path."""
    from ._walk_kernels import NODE_COLUMNS
    from .memory import anonymous_map
    n = F * NODE_COLUMNS
    return np.frombuffer(anonymous_map(max(8 * n, 8)), np.float64, n).reshape(F, NODE_COLUMNS)


class TileSlots:
    """The tiles a walk may use, each in a slot of the typed lists (see the
    module docstring); ``capacity`` slots, least recently used given up
    first. A slot's arrays are views of its tile's ``.query`` file (or of
    the loaded tile's structures) and its search rows, a buffer the slot
    keeps for the next tile placed in it (stale stamps are of earlier
    queries: nothing is cleared)."""

    def __init__(self, world, capacity):
        from ._walk_kernels import LIST_NAMES, new_list, new_walk_lists
        self.world = world
        self.capacity = int(capacity)
        self.slot_of = np.full(world.n_tiles, -1, np.int64)
        self.tile_of_slot = np.full(self.capacity, -1, np.int64)
        self.bufs = {}                        # slot -> its own buffers (tile_arrays)
        self.gen = np.zeros(self.capacity, np.int64)   # each slot's tile's generation
        self.next_gen = 0
        self.from_mesh = set()                # tiles whose arrays are the loaded tile's
        self.used = OrderedDict()             # tile -> slot, least recently used first
        self.free = list(range(self.capacity - 1, -1, -1))
        self.qid = 0
        self.counts = np.zeros(4, np.int64)   # the searches' pops, expansions (for benchmarks)
        self.arrays = {}                      # slot -> its arrays (as in the lists)
        self.lists = {}
        for name, dtype, ndim, ro in FIELDS:
            blank = np.zeros((0,) * ndim, dtype)
            self.lists[name] = new_list(_ro(blank, dtype) if ro else blank, self.capacity)
        self.blank = {name: self.lists_blank(dtype, ndim, ro) for name, dtype, ndim, ro in FIELDS}
        assert tuple(name for name, *_ in FIELDS) == LIST_NAMES
        self.wl = new_walk_lists(*(self.lists[name] for name in LIST_NAMES))

    @staticmethod
    def lists_blank(dtype, ndim, ro):
        blank = np.zeros((0,) * ndim, dtype)
        return _ro(blank, dtype) if ro else blank

    def take(self, tiles):
        """Slots for ``tiles`` (at most ``capacity`` of them), loading and
        placing those not in one; the (n_slots,) flags of those slots."""
        from ._walk_kernels import put_slot
        keep = {int(t) for t in tiles}
        for t in tiles:
            t = int(t)
            if t in self.used:
                self.used.move_to_end(t)
                continue
            bufs = {}
            if not self.free:
                for old in self.used:
                    if old not in keep:
                        break
                bufs = self.release(old)          # (its buffers serve the next tile)
            s = self.free.pop()
            arrays = tile_arrays(self.world, t, self.bufs.setdefault(s, bufs))
            self.next_gen += 1
            self.gen[s] = self.next_gen           # (its rows' centroids are stale)
            if arrays["from_mesh"]:
                self.from_mesh.add(t)
            put_slot(self.wl, s, tuple(arrays[name] for name, *_ in FIELDS))
            self.arrays[s] = arrays
            self.slot_of[t] = s
            self.tile_of_slot[s] = t
            self.used[t] = s
        allowed = np.zeros(self.capacity, bool)
        allowed[self.slot_of[list(keep)]] = True
        return allowed

    def release(self, t) -> dict:
        """Give up tile ``t``'s slot: its arrays, its buffers and the radius
        search's tables in it (:mod:`regn.world.radius`) dropped, and the map
        of the tile's ``.query`` file let go of when the tile is not loaded;
        the slot's buffers returned (for the next tile in it, or to go)."""
        from ._walk_kernels import put_slot
        t = int(t)
        s = self.used.pop(t)
        self.from_mesh.discard(t)
        put_slot(self.wl, s, tuple(self.blank[name] for name, *_ in FIELDS))
        self.slot_of[t] = -1
        self.tile_of_slot[s] = -1
        self.arrays.pop(s, None)
        bufs = self.bufs.pop(s, {})
        radius = getattr(self, "radius_lists", None)
        if radius is not None:
            radius.blank_slot(s)
        self.world._let_go_sidecar(t)
        self.free.append(s)
        return bufs

    def clear(self):
        for t in list(self.used):
            self.release(t)
        self.bufs.clear()

    def held(self, t) -> list:
        """What tile ``t``'s slot holds (its arrays, its buffers, the radius
        search's state), for :func:`regn.world.memory.footprint`; [] when it
        is in none."""
        s = int(self.slot_of[int(t)])
        if s < 0:
            return []
        out = [self.arrays.get(s, {}), self.bufs.get(s, {})]
        radius = getattr(self, "radius_lists", None)
        if radius is not None:
            out.append(radius.state[s])
        return out


def tile_slots(world) -> TileSlots:
    s = getattr(world, "_tile_slots", None)
    if s is None:
        s = world._tile_slots = TileSlots(world, max(world.max_tiles, 2))
    return s


def _windows(tiles, capacity):
    """Cut the route's tiles into runs of at most ``capacity`` tiles:
    ``[(first, last)]`` indices into ``tiles`` (window i ends where window
    i + 1 starts, at crossing ``last``)."""
    out, i, n = [], 0, len(tiles)
    while True:
        j = min(i + capacity - 1, n - 1)
        out.append((i, j))
        if j == n - 1:
            return out
        i = j + 1


def walk_path(world, start, goal, s_tile, g_tile, smooth=True, s_tet=None, g_tet=None) -> Path:
    """The path from ``start`` (in tile ``s_tile``, its tetrahedron
    ``s_tet`` there when known) to ``goal`` (``g_tile``, ``g_tet``) as one
    compiled walk (module docstring); None when the coarse route's tiles
    hold no way (the caller then asks :mod:`regn.world.route`)."""
    from .route import _coarse, _crossings
    slots = tile_slots(world)
    s_tet = _tet_of(world, s_tile, start) if s_tet is None else s_tet
    g_tet = _tet_of(world, g_tile, goal) if g_tet is None else g_tet
    if s_tile == g_tile:                  # inside the tile, if it has a way
        got = _window(world, slots, slots.take([s_tile]), start, s_tile, goal, g_tile,
                      [(s_tile, goal)], smooth, s_tet, g_tet)
        if got is not None:
            path = _path(got[0], [got[1]], [got[2]], [got[3]], [int(t) for t in got[4]])
            return taut_across(world, path, s_tile, s_tet) if smooth else path
    coarse = _coarse(world, s_tile, start, g_tile, goal, s_tet=s_tet, g_tet=g_tet)
    if coarse is None:
        return Path(False, NAMES[UNREACHABLE])
    crossings = _crossings(coarse[0], g_tile)
    tiles = [s_tile] + [b for _, _, b in crossings]
    pts, tets, portals, crossed, cost = [], [], [], [], 0.0
    for first, last in _windows(tiles, slots.capacity):
        a = start if first == 0 else world.node_inside([crossings[first - 1][0]], tiles[first])[0]
        b = goal if last == len(tiles) - 1 else \
            world.node_inside([crossings[last][0]], tiles[last])[0]
        # (every tile read for the window's ends before its slots are taken)
        a_tet = s_tet if first == 0 else _tet_of(world, tiles[first], a)
        b_tet = g_tet if last == len(tiles) - 1 else _tet_of(world, tiles[last], b)
        allowed = slots.take(tiles[first:last + 1])
        # each tile's guide: where the route leaves it
        exits = [(tiles[i], world.manifest.node_points[crossings[i][0]])
                 for i in range(first, last)] + [(tiles[last], b)]
        got = _window(world, slots, allowed, a, tiles[first], b, tiles[last], exits, smooth,
                      a_tet, b_tet)
        if got is None:
            return None
        c, p, te, po, ti = got
        if first:                  # the linked face between this window and the last
            n = crossings[first - 1][0]
            portals.append(world.face_offset[tiles[first - 1]]
                           + world.node_faces_in([n], tiles[first - 1]))
            p[0] = world.manifest.node_points[n]
            pts[-1] = pts[-1][:-1]
        cost += c
        pts.append(p)
        tets.append(te)
        portals.append(po)
        crossed += [int(t) for t in ti]
    path = _path(cost, pts, tets, portals, crossed)
    return taut_across(world, path, s_tile, s_tet) if smooth else path


def taut_across(world, path, s_tile, s_tet) -> Path:
    """``path`` (found, smoothed) made taut once more, seeing through every
    tile its straight shortcuts pass, not only the route's: the walk's own
    taut pass sees only through the route's tiles, so a route led round a
    rock through one set of tiles kept a bend that a straight line through
    a neighbouring tile does without (the README's world: 49 169 m for a
    point against 48 849 m, the straight line, for a sphere of 500 m whose
    search took other tiles). The tiles whose boxes a segment between two of
    the path's points meets (:func:`_tiles_under`) take slots (their
    ``.query`` arrays: no tile is parsed) and the compiled :func:`straighten
    <regn.world._walk_kernels.straighten>` runs with them as its sight;
    which tiles those are depends on the points alone, so the answer does
    not depend on what else is loaded. When they do not fit in the slots,
    the chords between points at most :data:`TAUT_REACH` apart are tried,
    then the path is kept as it is. ``s_tet``: the start's tetrahedron in
    ``s_tile``."""
    from . import _walk_kernels as K
    pts = np.ascontiguousarray(path.points, np.float64)
    if len(pts) <= 2:
        return path
    slots = tile_slots(world)
    n = len(pts)
    # (every chord against every tile box at once: a long path takes the
    # short chords only, so the test's arrays stay small)
    reaches = [TAUT_REACH] if n * (n - 1) // 2 * world.n_tiles > TAUT_BOX_TESTS else []
    for reach in reaches or [n, TAUT_REACH]:
        tiles = _tiles_under(world, pts, reach, s_tile)
        if len(tiles) <= slots.capacity:
            break
    else:
        return path
    allowed = slots.take(tiles)
    L = slots.lists
    keep = K.straighten(L["W"], L["NBV"], L["FBV"], L["ACRF"], L["FT0"], slots.slot_of, allowed,
                        int(slots.slot_of[s_tile]), int(s_tet), pts, len(pts))
    if len(keep) < len(pts):
        path.points = pts[np.asarray(keep)]
        path.length = polyline_length(path.points)
    return path


def _tiles_under(world, pts, reach, first):
    """The tiles (``first`` first) whose boxes, grown by a hair, a segment
    pts[i] pts[j] (i < j <= i + reach) meets (slab test)."""
    i, j = np.triu_indices(len(pts), 1)
    near = j - i <= reach
    a, d = pts[i[near]], pts[j[near]] - pts[i[near]]
    boxes = world.manifest.tiles
    lo = np.array([t.lo for t in boxes], np.float64)
    hi = np.array([t.hi for t in boxes], np.float64)
    pad = 1e-9 * float(np.max(hi - lo))
    lo, hi = lo - pad, hi + pad
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / d[:, None, :]                               # (S,1,3)
        t0 = (lo[None] - a[:, None, :]) * inv                   # (S,T,3)
        t1 = (hi[None] - a[:, None, :]) * inv
    flat = d[:, None, :] == 0.0                                 # along a plane: inside or not
    inside = (a[:, None, :] >= lo[None]) & (a[:, None, :] <= hi[None])
    t_in = np.where(flat, np.where(inside, -np.inf, np.inf), np.minimum(t0, t1)).max(axis=2)
    t_out = np.where(flat, np.where(inside, np.inf, -np.inf), np.maximum(t0, t1)).min(axis=2)
    meets = (t_in <= np.minimum(t_out, 1.0)) & (t_out >= 0.0)
    hit = np.flatnonzero(meets.any(axis=0))
    return [int(first)] + [int(t) for t in hit if t != first]


def _anchors(slots, exits, hw):
    """(n_slots, 4): each tile's anchor point and the rest of the route's
    polyline from there to its end times ``hw`` (a tile the route passes
    twice: its later exit)."""
    out = np.zeros((slots.capacity, 4))
    done = set()
    rest, after = 0.0, None
    for t, p in reversed(exits):
        x, y, z = (float(v) for v in p)
        if after is not None:
            rest += math.sqrt((x - after[0]) ** 2 + (y - after[1]) ** 2 + (z - after[2]) ** 2)
        after = (x, y, z)
        if t not in done:
            done.add(t)
            out[slots.slot_of[t]] = (x, y, z, hw * rest)
    return out


def _path(cost, pts, tets, portals, crossed) -> Path:
    points = pts[0] if len(pts) == 1 else np.vstack(pts)
    d = points[1:] - points[:-1]
    length = float(np.sqrt((d * d).sum(axis=1)).sum())
    path = Path(True, NAMES[OK], cost, tets[0] if len(tets) == 1 else np.concatenate(tets),
                portals[0] if len(portals) == 1 else np.concatenate(portals), points, length)
    path.tiles = [t for i, t in enumerate(crossed) if i == 0 or t != crossed[i - 1]]
    return path


def _tet_of(world, t, p):
    return int(world.tile(t).locate(np.asarray(p, np.float64)[None])[0])


def _window(world, slots, allowed, a, a_tile, b, b_tile, exits, smooth, a_tet, b_tet):
    """One A* over the slots ``allowed`` from ``a`` to ``b`` and its
    corridor smoothed: ``(cost, points, tets, portals, tiles)`` or None
    (``a_tet``, ``b_tet``: the ends' tetrahedra in their tiles; no tile is
    read here: a tile read could drop a slot the window uses).
    ``exits``: ``[(tile, point)]``, the route's way on from each tile (the
    last: ``b``), which leads the search (:func:`_anchors`)."""
    from . import _walk_kernels as K
    if a_tet < 0 or b_tet < 0:
        return None
    s_slot, g_slot = int(slots.slot_of[a_tile]), int(slots.slot_of[b_tile])
    s = np.asarray(a, np.float64)
    g = np.asarray(b, np.float64)
    slots.qid += 1
    got = K.world_astar(slots.wl, slots.gen, slots.slot_of, allowed, slots.qid, s_slot, a_tet, s, g_slot,
                        b_tet, g, _anchors(slots, exits, BOUND_WEIGHT), BOUND_WEIGHT, 1 << 62,
                        slots.counts)
    if got[0] != OK:
        return None
    _, cost, codes, vias = got
    tri, tets, portals, tiles = K.corridor(slots.wl, codes, vias, slots.tile_of_slot,
                                           world.face_offset, world.tet_offset, s_slot, a_tet,
                                           g_slot, b_tet)
    if not smooth or len(tri) == 0:
        pts = np.vstack([s, tri.mean(axis=1), g]) if not smooth else np.vstack([s, g])
    else:
        from ..query.paths.smooth import MAX_SWEEPS
        X = np.empty((len(tri) + 2, 3))
        pts = K.taut_path(slots.wl, slots.slot_of, allowed, s_slot, a_tet, s, g, tri,
                          SMOOTH_RTOL, MAX_SWEEPS, X)
    return float(cost), pts, tets, portals, tiles
