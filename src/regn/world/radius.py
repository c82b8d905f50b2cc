"""Paths for a sphere of radius r across a world's tiles.

The compiled walk of :mod:`regn.world.walk`, for a radius:

1. *Ends*: each end's distance to the world's walls (its tile's wall set,
   :mod:`regn.world.clearance`: linked faces are no walls, the walls just
   over a shared plane are) must be at least r_eff (the radius and its
   margin), else ``start_too_close`` / ``goal_too_close``.
2. *Tiles*: the coarse route of :mod:`regn.world.route` (a point's) picks
   the tiles; the search may use them and, when they leave room in the
   walk's slots, their neighbours (a sphere may have to go round where a
   point passes); a second try takes the neighbours when the first did not.
3. *Search*: :func:`regn.world._radius_kernels.radius_astar`, the walk's A*
   without the edges a sphere cannot pass (each tile's witnesses and edge
   clearances against its wall set, as one REGN's radius search masks its
   graph), so the witness polyline (start, each portal's witness, goal)
   keeps r_eff. No route: ``too_narrow`` when a point's path exists, else
   ``unreachable`` (as one REGN answers).
4. *Smoothing*: the corridor across the tiles is smoothed as one by the
   single mesh's radius smoother
   (:func:`regn.query.radius._keep_clear_kernels.smooth_keeping`), given
   the walls that may come within r_eff of each corridor tetrahedron (from
   that tetrahedron's tile's wall set, gathered into one small BVH); then
   the points the path sees past are dropped (:func:`keeps`: each piece of
   a segment, cut at the tile planes, against its tile's wall set).

Every tile the search may use must be in a slot at once: a route needing
more tiles than the walk's slots (``max(max_tiles, 2)``) is refused with a
:class:`regn.QueryError` asking for a larger ``max_tiles``.
"""

from __future__ import annotations

import numpy as np

from ..errors import QueryError
from ..query.paths.path import Path
from ..status import GOAL_TOO_CLOSE, NAMES, OK, START_TOO_CLOSE, TOO_NARROW, UNREACHABLE

#: searches again after closing a linked face whose two tiles' witnesses
#: differ and leave a corner of the witness polyline short of r_eff
MAX_REPAIRS = 4
#: the search's guess of a face's cost to go: this times its distance to the
#: goal; then a plain A* (weight 1) on a budget of RETRY_WORK times the
#: first's faces expanded (at least RETRY_MIN), the cheaper kept (as
#: regn.world.walk does)
BOUND_WEIGHT = 1.5
RETRY_WORK = 2
RETRY_MIN = 4000


#: the radius search's own per-face state (the walk keeps its own in rows)
_STATE = {"DIST": np.float64, "PAR": np.int64, "VIA": np.int64, "STAMP": np.int64}


class _Lists:
    """Per-slot typed lists of the radius tables (EF, ACR, XOP) and of the
    radius search's state (DIST, PAR, VIA, STAMP), beside the walk's
    :class:`regn.world.walk.TileSlots`."""

    def __init__(self, slots):
        from ._walk_kernels import new_list
        self.cap = slots.capacity
        self.key = [None] * self.cap
        self.blank = {"EF": np.zeros((0, 0), np.float32), "ACR": np.zeros(0, np.int64),
                      "XOP": np.zeros((0, 0), np.uint8)}
        for v in self.blank.values():             # (the tables are read only)
            v.flags.writeable = False
        self.blank.update({k: np.zeros(0, dt) for k, dt in _STATE.items()})
        self.lists = {k: new_list(v, self.cap) for k, v in self.blank.items()}
        #: each slot's search state (the arrays in the lists: counted by
        #: regn.world.memory through TileSlots.held)
        self.state = [{} for _ in range(self.cap)]

    def blank_slot(self, s):
        """Slot ``s`` given up: its tables and search state dropped."""
        from ._walk_kernels import put
        if self.key[s] is not None or self.state[s]:
            for name, v in self.blank.items():
                put(self.lists[name], s, v)
        self.key[s] = None
        self.state[s] = {}

    def fill(self, world, slots, slot_ids, r_eff):
        from ._walk_kernels import put
        from .clearance import tile_radius
        from .memory import own_array
        for s in range(self.cap):                # slots given up: their tables too
            if self.key[s] is not None and slots.tile_of_slot[s] < 0:
                self.blank_slot(s)
        report = getattr(world, "progress", None)
        for i, s in enumerate(slot_ids):
            s = int(s)
            t = int(slots.tile_of_slot[s])
            arrays = slots.arrays[s]
            rc = tile_radius(world, t, arrays, r_eff)
            if report is not None:
                report("tile clearances", (i + 1) / len(slot_ids))
            masks = rc["masks"][r_eff]
            key = self.key[s]
            if key is None or key[0] != t or key[1] is not arrays or key[2] is not masks:
                if key is None or key[0] != t:   # a new tile in the slot: its search state
                    F = len(arrays["FO"])
                    self.state[s] = {name: own_array(F, dt) for name, dt in _STATE.items()}
                    for name, v in self.state[s].items():
                        put(self.lists[name], s, v)
                key = (t, arrays, masks)         # (objects, not ids: an id may be reused)
                self.state[s]["masks"] = masks
                for name, v in zip(("EF", "ACR", "XOP"), masks):
                    put(self.lists[name], s, v)
                self.key[s] = key


def _lists(world, slots):
    got = getattr(slots, "radius_lists", None)
    if got is None:
        got = slots.radius_lists = _Lists(slots)
    return got


def _neighbours(world, tiles):
    """``tiles`` and the tiles next to them (by box, edges and corners too)."""
    m = world.manifest
    out = list(dict.fromkeys(int(t) for t in tiles))
    for t in list(out):
        lo, hi = m.tiles[t].lo, m.tiles[t].hi
        for u, tile in enumerate(m.tiles):
            if u not in out and not (np.any(tile.lo > hi) or np.any(tile.hi < lo)):
                out.append(u)
    return out


def radius_path(world, start, goal, s_tile, g_tile, radius, smooth=True) -> Path:
    """The path of a sphere of ``radius`` from ``start`` (in tile
    ``s_tile``) to ``goal`` (``g_tile``) across the tiles (module
    docstring); tets and portals in world numbering."""
    from .clearance import tile_distance, world_r_eff
    from .route import _coarse, _crossings
    from .walk import tile_slots
    r_eff = world_r_eff(world, radius)
    if not tile_distance(world, s_tile, start)[0] >= r_eff:
        return Path(False, NAMES[START_TOO_CLOSE])
    if not tile_distance(world, g_tile, goal)[0] >= r_eff:
        return Path(False, NAMES[GOAL_TOO_CLOSE])
    slots = tile_slots(world)
    if s_tile == g_tile:
        route = [s_tile]
    else:
        coarse = _coarse(world, s_tile, start, g_tile, goal)
        if coarse is None:
            return Path(False, NAMES[UNREACHABLE])
        route = [s_tile] + [b for _, _, b in _crossings(coarse[0], g_tile)]
        route = list(dict.fromkeys(route))
    if len(route) > slots.capacity:
        raise QueryError(f"a radius path here crosses {len(route)} tiles, more than the "
                         f"{slots.capacity} the world holds at once: open it with max_tiles="
                         f"{len(route)} or more (regn.load(..., max_tiles=N); on the command "
                         f"line --max-tiles {len(route)})")
    wide = _neighbours(world, route)
    tries = [wide] if len(wide) <= slots.capacity else [route]
    if len(route) < len(tries[0]) <= slots.capacity and s_tile == g_tile:
        tries = [route, wide]
    for tiles in tries:
        got = _search(world, slots, tiles, start, s_tile, goal, g_tile, r_eff)
        if got is not None:
            break
    else:
        point = world.find_path(start, goal, smooth=False)
        return Path(False, NAMES[TOO_NARROW if point.found else UNREACHABLE])
    return _finish(world, slots, got, start, goal, radius, r_eff, smooth)


def _search(world, slots, tiles, start, s_tile, goal, g_tile, r_eff):
    """The radius A* over ``tiles`` (in slots), repaired where a linked
    face's two witnesses differ: ``(cost, codes, vias, ends, corridor)``
    or None."""
    from . import _radius_kernels as K
    from .clearance import tile_radius
    allowed = slots.take(tiles)
    lists = _lists(world, slots)
    lists.fill(world, slots, np.flatnonzero(allowed), r_eff)
    s_slot, g_slot = int(slots.slot_of[s_tile]), int(slots.slot_of[g_tile])
    a_tet = int(world.tile(s_tile).locate(np.asarray(start)[None])[0])
    b_tet = int(world.tile(g_tile).locate(np.asarray(goal)[None])[0])
    if a_tet < 0 or b_tet < 0:
        return None
    s, g = np.asarray(start, np.float64), np.asarray(goal, np.float64)
    rs = tile_radius(world, s_tile, slots.arrays[s_slot], r_eff)
    rg = tile_radius(world, g_tile, slots.arrays[g_slot], r_eff)
    seed = np.zeros((2, 4), np.bool_)
    for side, (p, slot, tet, rc) in enumerate(((s, s_slot, a_tet, rs), (g, g_slot, b_tet, rg))):
        faces = slots.arrays[slot]["TFI"][tet]
        ok = rc["clear"][faces] >= r_eff
        if rc["bvh"] is not None and ok.any():
            w = np.ascontiguousarray(rc["witness"][faces])
            seed[side] = ok & _clear(rc["bvh"], np.repeat(p[None], 4, 0), w, r_eff)
        else:
            seed[side] = ok
    direct = np.inf
    if s_slot == g_slot and a_tet == b_tet and \
            (rs["bvh"] is None or _clear(rs["bvh"], s[None], g[None], r_eff)[0]):
        direct = float(np.linalg.norm(g - s))
    L, R = slots.lists, lists.lists
    anchor = np.zeros((slots.capacity, 4))
    anchor[:, :3] = g
    for _ in range(MAX_REPAIRS + 1):
        got, cap = None, 1 << 62
        for hw in (BOUND_WEIGHT, 1.0):
            slots.qid += 1
            before = int(slots.counts[1])
            head = (R["EF"], L["EI"], L["CEN"], L["TFI"], R["ACR"], R["XOP"], L["RANK"],
                    R["DIST"], R["PAR"], R["VIA"], R["STAMP"], slots.slot_of, allowed,
                    slots.qid, s_slot, a_tet, s, g_slot, b_tet, g, seed, direct)
            this = K.radius_astar(*head, anchor, hw, cap, slots.counts)
            if this[0] == OK and (got is None or this[1] < got[1]):
                got = this
            if got is None:
                return None                 # (weight 1.5 finds a route when there is one)
            cap = max(RETRY_WORK * (int(slots.counts[1]) - before), RETRY_MIN)
        corridor = _corridor(world, slots, got[2], got[3], s_slot, a_tet, g_slot, b_tet,
                             r_eff)
        bad = _check(corridor, s, g, r_eff)
        if bad is None:
            return float(got[1]), (s_slot, a_tet, g_slot, b_tet), corridor
        _close(world, slots, lists, corridor, bad, r_eff)
    return None


def _clear(bvh, a, b, r):
    from ._radius_kernels import segments_clear
    out = np.zeros(len(a), np.bool_)
    segments_clear(bvh, np.ascontiguousarray(a, np.float64), np.ascontiguousarray(b, np.float64),
                   float(r), out)
    return out


class _Corridor:
    """A route's corridor across tiles: its portals (one of each linked
    pair) with their triangles, vertex ids (by position), witnesses and
    slots, the tetrahedra between them, and the walls near those (one
    small BVH)."""


def _corridor(world, slots, codes, vias, s_slot, s_tet, g_slot, g_tet, r_eff):
    from ..query.radius._keep_clear_kernels import walls_near_tets
    from ..query.walls.nearest import _build_bvh
    from ._walk_kernels import MASK, SHIFT
    from .clearance import tile_radius
    c = _Corridor()
    codes = np.asarray(codes, np.int64)
    slot = codes >> SHIFT
    face = codes & MASK
    jump = np.zeros(len(codes), bool)
    jump[1:] = slot[1:] != slot[:-1]
    keep = ~jump
    c.slot, c.face = slot[keep], face[keep]
    c.linked = np.zeros(len(c.slot), bool)      # the portal is a linked face pair
    c.linked[np.searchsorted(np.flatnonzero(keep), np.flatnonzero(jump) - 1)] = True
    tet_slot = np.concatenate([[s_slot], slot[1:][~jump[1:]], [g_slot]])
    tet_id = np.concatenate([[s_tet], np.asarray(vias)[1:][~jump[1:]], [g_tet]])
    c.tet_slot, c.tet_id = tet_slot, tet_id
    P = len(c.slot)
    c.tri = np.empty((P, 3, 3))
    c.witness = np.empty((P, 3))
    c.file_face = np.empty(P, np.int64)
    c.tile = slots.tile_of_slot[c.slot]
    for s in np.unique(c.slot):
        rows = np.flatnonzero(c.slot == s)
        a = slots.arrays[int(s)]
        f = a["FO"][c.face[rows]]
        c.file_face[rows] = f
        c.tri[rows] = a["VX"][a["FV"][f]]
        rc = tile_radius(world, int(slots.tile_of_slot[s]), a, r_eff)
        c.witness[rows] = rc["witness"][c.face[rows]]
    _, c.vid = np.unique(c.tri.reshape(-1, 3), axis=0, return_inverse=True)
    c.vid = c.vid.reshape(P, 3).astype(np.int64)
    # the walls near each tetrahedron of the corridor, from its tile's wall set
    parts, near_lists = [], [None] * len(tet_id)
    base = 0
    for s in np.unique(tet_slot):
        rows = np.flatnonzero(tet_slot == s)
        t = int(slots.tile_of_slot[s])
        bvh = tile_radius(world, t, slots.arrays[int(s)], r_eff)["bvh"]
        if bvh is None:
            for r in rows:
                near_lists[r] = np.zeros(0, np.int64)
            continue
        pts = np.ascontiguousarray(np.asarray(world.tile(t).tet_points,
                                              np.float64)[tet_id[rows]])
        start, got = walls_near_tets(bvh, pts, r_eff)
        used, inv = np.unique(got, return_inverse=True)
        parts.append(bvh.tri[used])
        for i, r in enumerate(rows):
            near_lists[r] = base + inv[start[i]:start[i + 1]]
        base += len(used)
    tri = np.concatenate(parts).reshape(-1, 3, 3) if parts else np.zeros((0, 3, 3))
    c.bvh = _build_bvh(tri) if len(tri) else None
    pos = np.empty(len(tri), np.int64)
    if c.bvh is not None:
        pos[c.bvh.row] = np.arange(len(c.bvh.row))
    counts = np.array([len(x) for x in near_lists], np.int64)
    c.near_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    c.near = pos[np.concatenate(near_lists)] if counts.sum() else np.zeros(0, np.int64)
    return c


def _check(c, s, g, r_eff):
    """None when the witness polyline keeps r_eff, else the index of a
    segment that does not."""
    if c.bvh is None:
        return None
    pts = np.vstack([s, c.witness, g])
    ok = _clear(c.bvh, pts[:-1], pts[1:], r_eff)
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if len(bad) else None


def _close(world, slots, lists, c, bad, r_eff):
    """Close for r_eff the linked faces next to segment ``bad`` (rebuilt
    masks for their tiles), or fail when there is none (not expected)."""
    from ._walk_kernels import put
    from .clearance import tile_radius
    near = [i for i in (bad - 1, bad) if 0 <= i < len(c.slot) and c.linked[i]]
    if not near:
        raise QueryError("internal error: a radius corridor's witness polyline comes "
                         "within the radius of a wall")
    for i in near:
        s = int(c.slot[i])
        t = int(slots.tile_of_slot[s])
        rc = tile_radius(world, t, slots.arrays[s], r_eff)
        ef, acr, xop = rc["masks"][r_eff]
        acr = np.array(acr)
        acr[c.face[i]] = -1
        acr.flags.writeable = False
        rc["masks"][r_eff] = (ef, acr, xop)
        put(lists.lists["ACR"], s, acr)
        lists.key[s] = (t, slots.arrays[s], rc["masks"][r_eff])


def _finish(world, slots, got, start, goal, radius, r_eff, smooth) -> Path:
    cost, _, c = got
    s, g = np.asarray(start, np.float64), np.asarray(goal, np.float64)
    pts = np.vstack([s, c.witness, g])
    if smooth and len(c.slot) and c.bvh is not None:
        pts = _smooth(c, s, g, pts, radius, r_eff)
    if smooth:
        allowed = {int(t) for t in slots.tile_of_slot[slots.tile_of_slot >= 0]}
        pts = _taut(world, pts, radius, allowed)
    tets = world.tet_offset[slots.tile_of_slot[c.tet_slot]] + c.tet_id
    tets = tets[np.concatenate([[True], tets[1:] != tets[:-1]])]
    portals = world.face_offset[c.tile] + c.file_face
    length = float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())
    path = Path(True, NAMES[OK], cost, tets, portals, pts, length)
    tiles = [int(t) for t in slots.tile_of_slot[c.tet_slot]]
    path.tiles = [t for i, t in enumerate(tiles) if i == 0 or t != tiles[i - 1]]
    return path


def _smooth(c, s, g, pts, radius, r_eff):
    from ..query.radius import _keep_clear_kernels as KC
    from ..query.radius.keep_clear import MAX_ROUNDS, MAX_SWEEPS
    from ..tolerances import RADIUS_SMOOTH_RTOL, WAYPOINT_GAP_REL
    out = np.array(pts, np.float64)
    r_check = 0.5 * (radius + r_eff)
    n = KC.smooth_keeping(c.bvh, s, g, np.ascontiguousarray(c.tri), c.vid,
                          np.arange(len(c.tet_id), dtype=np.int64), c.near_start, c.near,
                          float(r_eff), float(r_check), float(RADIUS_SMOOTH_RTOL), MAX_ROUNDS,
                          MAX_SWEEPS, float(WAYPOINT_GAP_REL), out)
    return out[:n].copy()


def keeps(world, a, b, r, allowed=None) -> bool:
    """Does segment a b keep ``r`` from every wall of the world (touching
    counts as not)? Cut at the tile planes, each piece is tested against
    its tile's wall set (:mod:`regn.world.clearance`, margin at least r);
    a piece outside the world, or (``allowed``) in a tile not in it, does
    not keep it. ``a`` is taken to lie in the free volume."""
    from .clearance import tile_bvh
    from .sight import pieces
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    d = b - a
    for t0, t1, t in pieces(world, a, b):
        if t < 0 or (allowed is not None and t not in allowed):
            return False
        _, bvh = tile_bvh(world, t, r)
        if bvh is not None and not _clear(bvh, (a + t0 * d)[None], (a + t1 * d)[None], r)[0]:
            return False
    return True


def _taut(world, pts, radius, allowed):
    """``pts`` with the turning points the path sees past (keeping
    ``radius``) dropped, as :func:`regn.world.route.straighten`."""
    from .route import drop_seen_past
    return drop_seen_past(pts, lambda a, b: keeps(world, a, b, radius, allowed))
