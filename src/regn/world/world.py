"""A world of REGN tiles, queried as one map.

    world = regn.load("w/world.json", max_tiles=8)     # a World: the manifest only
    world.locate(points)                 # world tetrahedron numbers, -1 outside
    path = world.find_path(a, b)         # across tiles (regn.world.route)
    world.raycast(a, b); world.line_of_sight(a, b); world.distance_to_wall(points)

Tiles are read on first use and kept, at most ``max_tiles`` of them, the
least recently used dropped first; each is memory-mapped (the file's pages
are the operating system's to keep or drop) and checked against the
manifest's size and sha256 when read; ``max_bytes`` also bounds all the
world holds for its tiles (:meth:`World.memory`: loaded tiles' file maps,
query structures and search state, the compiled walk's slots, wall sets
and witnesses; :mod:`regn.world.memory`). A dropped tile keeps nothing in
memory but what its walk slot or clearance structures hold (each kind for
at most ``max(max_tiles, 2)`` tiles, and counted). A world's tetrahedra and faces are
numbered tile after tile in the manifest's order: tile i's tetrahedron t is
``tet_offset[i] + t`` (:meth:`World.split_tets` goes back).

A tile's walls on a shared plane are not walls of the world where they are
linked: a ray or a path goes on into the next tile there, and the wall
distance ignores them.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..errors import QueryError
from ..format.reader import parse
from ..mesh import Mesh
from ..query.common import as_points, as_radius, check_finite_point
from ..query.paths.batch import Paths
from ..query.paths.path import Path
from ..query.sight.raycast import RaycastHit, RaycastHits, segment_pairs
from ..status import CLEAR, GOAL_OUTSIDE, HIT, NAMES, START_OUTSIDE, UNREACHABLE
from .grid import TileGrid
from .manifest import read_manifest

#: Tiles a World keeps loaded unless told.
DEFAULT_MAX_TILES = 8
#: Tiles a ray may pass through before it is 'lost'.
MAX_RAY_TILES = 10_000


class World:
    """A world of tiles (see the module docstring)."""

    #: What the command line asks to tell a world from a Mesh.
    is_world = True
    #: A point's path across tiles as one compiled walk (regn.world.walk);
    #: False: the search per tile of regn.world.route (a point's paths; a
    #: sphere's are regn.world.radius either way).
    compiled_walk = True

    def __init__(self, manifest, *, max_tiles=DEFAULT_MAX_TILES, max_bytes=None, check=True,
                 trim=False):
        if not (isinstance(max_tiles, int) and max_tiles >= 1):
            raise QueryError(f"max_tiles must be a whole number >= 1, got {max_tiles!r}")
        if max_bytes is not None and not (isinstance(max_bytes, int) and max_bytes > 0):
            raise QueryError(f"max_bytes must be a whole number > 0, got {max_bytes!r}")
        self.manifest = m = manifest
        self.path = m.path
        self.max_tiles = max_tiles
        self.max_bytes = max_bytes
        self.check = check
        self.trim = trim
        #: None, or (set it to {} to record) tile -> the largest footprint it
        #: was seen holding (looked at as it is dropped: costs a walk of its arrays)
        self.peak_bytes = None
        #: None, or a callable ``progress(phase, fraction)`` that long work
        #: (a sphere's clearances over many tiles) reports to: the CLI's bar
        self.progress = None
        self.grid = _grid_of(m)
        self._by_index = {t.index: i for i, t in enumerate(m.tiles)}
        self._cache = OrderedDict()
        self.tiles_read = 0
        #: tiles whose walk arrays were read from their .query file alone
        #: (regn.world.walk: the tile itself not read)
        self.walk_reads = 0
        self.tet_offset = np.concatenate([[0], np.cumsum([t.tets for t in m.tiles])])
        self.face_offset = np.concatenate([[0], np.cumsum([t.faces for t in m.tiles])])
        self.linked = [np.zeros(t.faces, bool) for t in m.tiles]
        self.across = [dict() for _ in m.tiles]      # tile -> {face: (other tile, face)}
        for lk in m.links:
            self.linked[lk.a][lk.faces[:, 0]] = True
            self.linked[lk.b][lk.faces[:, 1]] = True
        self.node_tiles = [(m.links[li].a, m.links[li].b) for li in m.node_link]
        self.node_slot = [{int(n): j for j, n in enumerate(t.nodes)} for t in m.tiles]
        self._inside = {}
        self._extra = {}
        self._checked = {}          # tile -> (size, mtime, inode) when its sha256 matched
        self._checked_query = {}    # the same for its .query file
        self._sidecars = {}         # tile -> its .query arrays, while loaded or in a slot

    @classmethod
    def open(cls, path, **options) -> "World":
        return cls(read_manifest(path), **options)

    # --- tiles ----------------------------------------------------------------------
    @property
    def n_tiles(self) -> int:
        return len(self.manifest.tiles)

    @property
    def n_tets(self) -> int:
        """Tetrahedra of every tile."""
        return int(self.tet_offset[-1])

    @property
    def n_faces(self) -> int:
        return int(self.face_offset[-1])

    @property
    def loaded(self) -> list:
        """The tiles in memory, least recently used first."""
        return list(self._cache)

    def tile(self, i, *, prepared=True) -> Mesh:
        """Tile ``i``'s :class:`regn.Mesh` (read on first use; LRU), with the
        query structures kept beside it when there are
        (:mod:`regn.world.prepared`; not with ``prepared=False``)."""
        i = int(i)
        mesh = self._cache.get(i)
        if mesh is not None:
            self._cache.move_to_end(i)
            return mesh
        data = self._read(i)
        if prepared:
            from .prepared import KeptMesh
            mesh = KeptMesh.from_parts(parse(data, path=self.manifest.tile_path(i)))
        else:
            mesh = Mesh.from_parts(parse(data, path=self.manifest.tile_path(i)))
        if prepared:
            self._install(i, mesh)
        # a tile that may be dropped again soon does not build the path search's
        # landmark table (regn.query.paths.landmarks: up to a second a tile)
        mesh.skip_landmarks = self.max_tiles < self.n_tiles or self.max_bytes is not None
        self.tiles_read += 1
        self._cache[i] = mesh
        self._evict()
        return mesh

    def _install(self, i, mesh, keep=True):
        """Tile ``i``'s kept query structures onto ``mesh``
        (:mod:`regn.world.prepared`; the map of its ``.query`` file the
        walk's slot may already hold, :meth:`_sidecar`)."""
        from .prepared import install
        try:
            install(self.manifest, i, mesh, got=self._sidecar(i, keep))
        except Exception:
            self._sidecars.pop(int(i), None)
            raise

    def _sidecar(self, i, keep=True):
        """``(arrays, types)`` of tile ``i``'s ``.query`` file (views of one
        private map of it; :func:`regn.world.prepared.read_sidecar`), or
        None when it has none of this format. Its sha256 is checked the
        first time (again only when the file's size, time or inode change).
        One map a tile: while the tile is loaded or in a walk slot the map
        is kept here (``keep``) and shared by both, and let go of when it is
        neither (:meth:`_let_go_sidecar`)."""
        import os

        from .prepared import read_sidecar, sidecar_path
        i = int(i)
        got = self._sidecars.get(i)
        if got is not None:
            return got
        path = sidecar_path(self.manifest, i)
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        check = self.check and self._checked_query.get(i) != stamp
        got = read_sidecar(path, self.manifest, i, check=check)
        if got is None:
            return None
        if check:
            self._checked_query[i] = stamp
        if keep:
            self._sidecars[i] = got
        return got

    def _let_go_sidecar(self, i):
        """Tile ``i`` left the cache or its walk slot: forget its ``.query``
        map unless the tile is still loaded or in a slot (the map closes
        when the last view of it goes); when it is, give back the map's
        resident pages (those the other read are read again from the file
        as they are used: :func:`regn.world.memory.forget_pages`)."""
        slots = self.__dict__.get("_tile_slots")
        if i not in self._cache and (slots is None or i not in slots.used):
            self._sidecars.pop(i, None)
            return
        kept = self._sidecars.get(i)
        if kept is not None and kept[0]:
            from .memory import forget_pages
            forget_pages(next(iter(kept[0].values())))

    def query_arrays(self, i):
        """Tile ``i``'s ``.query`` arrays as stored (views of a map of the
        file, :meth:`_sidecar`), or None when it has none of this format."""
        got = self._sidecar(i)
        return None if got is None else got[0]

    def _evict(self, settle=False):
        """Drop the least recently used tiles while more than ``max_tiles``
        are loaded; with ``max_bytes``, while what the world holds for its
        tiles (:meth:`memory`) adds up to more: first the clearance
        structures of tiles not loaded, then (``settle``: between queries)
        the walk's slots of tiles not loaded, then loaded tiles, least
        recently used first, with all they hold (never the last one). Then
        give freed memory back (``trim``)."""
        dropped = False
        while len(self._cache) > self.max_tiles:
            self._drop(next(iter(self._cache)))
            dropped = True
        if self.max_bytes is not None:
            from .memory import hold_budget
            dropped |= hold_budget(self, settle)
        if dropped and self.trim:
            from .memory import trim
            trim()

    def _settle(self):
        """Between queries: hold the byte budget (:meth:`_evict`)."""
        if self.max_bytes is not None:
            self._evict(settle=True)

    def _drop_clearance(self, t):
        from .memory import CLEARANCE_ATTRIBUTES
        for name in CLEARANCE_ATTRIBUTES:
            self.__dict__.get(name, {}).pop(int(t), None)

    def _drop(self, t):
        if self.peak_bytes is not None:
            self.footprint(t)
        self._cache.pop(t)
        self._extra.pop(t, None)
        # (regn.world.walk: a slot whose arrays are this tile's own goes with
        # it; one read from the tile's .query file alone stays, and keeps
        # the file's map)
        slots = getattr(self, "_tile_slots", None)
        if slots is not None and slots.capacity <= self.max_tiles and t in slots.from_mesh:
            slots.release(t)
        self._let_go_sidecar(t)

    def _held(self) -> list:
        """The tiles the world holds anything of: loaded ones (least
        recently used first), then those in a walk slot, then those with
        clearance structures kept."""
        out = dict.fromkeys(self._cache)
        slots = self.__dict__.get("_tile_slots")
        if slots is not None:
            out.update(dict.fromkeys(slots.used))
        from .memory import CLEARANCE_ATTRIBUTES
        for name in CLEARANCE_ATTRIBUTES:
            out.update(dict.fromkeys(self.__dict__.get(name, ())))
        return list(out)

    def footprint(self, t, *, split=False):
        """Bytes the world holds for tile ``t``: the loaded tile (its file's
        map, its query structures, mapped and widened, its search state and
        what is kept with it), its slot of the compiled walk and its
        clearance structures (:func:`regn.world.memory.held`; ``split``: the
        dict ``{"own", "mapped", "parts"}``, own memory and file maps apart);
        0 when it holds nothing of it."""
        from .memory import held
        f = held(self, t)
        total = f["own"] + f["mapped"]
        if self.peak_bytes is not None and total:
            self.peak_bytes[int(t)] = max(self.peak_bytes.get(int(t), 0), total)
        return f if split else total

    def memory(self) -> dict:
        """What the world holds: ``{"tiles": {t: {"own", "mapped",
        "parts"}}, "own": bytes, "mapped": bytes, "parts": {part: {"own",
        "mapped"}}, "index": bytes, "total": bytes}``: every tile it holds
        anything of (loaded, in a walk slot, or with clearance structures;
        :meth:`footprint`), their sums (``own``: the process's own memory,
        ``mapped``: lengths of file maps, whose pages the system may drop;
        maps are counted whole, so this bounds what is resident), and
        ``index``, the arrays kept for the whole world
        (:func:`regn.world.memory.index_bytes`). ``max_bytes`` bounds
        ``own + mapped``."""
        from .memory import PARTS, index_bytes
        tiles = {t: self.footprint(t, split=True) for t in self._held()}
        parts = {p: {k: sum(f["parts"][p][k] for f in tiles.values()) for k in ("own", "mapped")}
                 for p in PARTS}
        own = sum(f["own"] for f in tiles.values())
        mapped = sum(f["mapped"] for f in tiles.values())
        index = index_bytes(self)
        return {"tiles": tiles, "own": own, "mapped": mapped, "parts": parts, "index": index,
                "total": own + mapped + index}

    def clear(self) -> None:
        """Drop every loaded tile and all the world holds of tiles (they are
        read again when next used)."""
        for t in list(self._cache):
            self._drop(t)
        if getattr(self, "_tile_slots", None) is not None:
            self._tile_slots.clear()
        from .memory import CLEARANCE_ATTRIBUTES
        for name in CLEARANCE_ATTRIBUTES:
            self.__dict__.pop(name, None)
        self._sidecars.clear()
        if self.trim:
            from .memory import trim
            trim()

    def _read(self, i):
        """Tile ``i``'s bytes: its sha256 is checked the first time, and again
        only when the file's size, time or inode have changed since."""
        import os
        m = self.manifest
        seen = self._checked.get(i)
        if seen is not None:
            try:
                st = os.stat(m.tile_path(i))
                if (st.st_size, st.st_mtime_ns, st.st_ino) == seen:
                    return m.tile_bytes(i, check=False)
            except OSError:
                pass                            # tile_bytes says what is wrong
        data = m.tile_bytes(i, check=self.check)
        if self.check:
            st = os.stat(m.tile_path(i))
            self._checked[i] = (st.st_size, st.st_mtime_ns, st.st_ino)
        return data

    def node_faces_in(self, nodes, t):
        """(k,) the faces of portal ``nodes`` in tile ``t`` (each on a link of ``t``)."""
        m = self.manifest
        nodes = np.asarray(nodes, np.int64)
        col = np.array([0 if m.links[li].a == t else 1 for li in m.node_link[nodes].tolist()],
                       np.int64)
        return m.node_faces[nodes, col]

    def extra(self, t) -> dict:
        """Structures kept with loaded tile ``t`` (dropped with it)."""
        return self._extra.setdefault(int(t), {})

    def tile_at(self, points) -> np.ndarray:
        """(N,) the tile number holding each point (on a shared wall: the
        upper one), -1 outside the world."""
        idx = self.grid.tile_of(as_points(points))
        out = np.full(len(idx), -1, np.int64)
        for r, ijk in enumerate(map(tuple, idx.tolist())):
            out[r] = self._by_index.get(ijk, -1)
        return out

    def node_inside(self, nodes, t):
        """(k,3) the points of portal ``nodes`` a hair inside tile ``t``."""
        from .links import inside_point
        out = []
        m = self.manifest
        for n in np.asarray(nodes, np.int64).tolist():
            key = (n, t)
            if key not in self._inside:
                col = 0 if m.links[m.node_link[n]].a == t else 1
                self._inside[key] = inside_point(self.tile(t), m.node_faces[n, col])
            out.append(self._inside[key])
        return np.array(out).reshape(-1, 3)

    def split_tets(self, tets):
        """World tetrahedron numbers -> ``(tile (N,), tet in tile (N,))``."""
        g = np.asarray(tets, np.int64)
        tile = np.searchsorted(self.tet_offset, g, side="right") - 1
        ok = (g >= 0) & (g < self.tet_offset[-1])
        return np.where(ok, tile, -1), np.where(ok, g - self.tet_offset[np.clip(tile, 0, None)],
                                                 -1)

    # --- locating ---------------------------------------------------------------------
    def locate_tiles(self, points):
        """``(tile (N,), tet in tile (N,))``, -1 where no tile holds a point;
        a point on a shared wall is tried in both tiles."""
        pts = as_points(points)
        tile = self.tile_at(pts)
        tet = np.full(len(pts), -1, np.int64)
        for t in np.unique(tile[tile >= 0]):
            rows = np.flatnonzero(tile == t)
            tet[rows] = self.tile(t).locate(pts[rows])
        miss = np.flatnonzero((tet < 0) & (tile >= 0))
        for r in miss:                      # on a wall between tiles: the lower one
            idx = list(self.manifest.tiles[tile[r]].index)
            for k in range(3):
                if pts[r, k] == self.grid.planes[k][idx[k]] and idx[k] > 0:
                    low = idx.copy()
                    low[k] -= 1
                    t2 = self._by_index.get(tuple(low), -1)
                    if t2 >= 0:
                        got = int(self.tile(t2).locate(pts[r:r + 1])[0])
                        if got >= 0:
                            tile[r], tet[r] = t2, got
                            break
        tile[tet < 0] = -1
        return tile, tet

    def locate(self, points, **_):
        """(N,3) -> (N,) world tetrahedron holding each point, -1 outside
        (tile i's tetrahedron t is ``tet_offset[i] + t``)."""
        tile, tet = self.locate_tiles(points)
        return np.where(tet >= 0, self.tet_offset[np.clip(tile, 0, None)] + tet, -1)

    # --- paths ------------------------------------------------------------------------
    def find_path(self, start, goal, *, smooth=True, radius=0.0, partial=False, **options):
        """Shortest flight from ``start`` to ``goal`` across tiles (see
        :meth:`_find_path`); the byte budget held after it (:meth:`_settle`).
        A NaN or infinite coordinate is a QueryError naming it."""
        check_finite_point(start, "start")
        check_finite_point(goal, "goal")
        try:
            return self._find_path(start, goal, smooth=smooth, radius=radius, partial=partial,
                                   **options)
        finally:
            self._settle()

    def _find_path(self, start, goal, *, smooth=True, radius=0.0, partial=False, **options):
        """Shortest flight from ``start`` to ``goal`` across tiles, a
        :class:`regn.query.paths.path.Path` (tets and portals in world
        numbering; ``path.tiles`` the tiles crossed): see
        :mod:`regn.world.walk`; for a sphere of ``radius`` > 0
        :mod:`regn.world.radius` (linked faces are no walls, the walls
        over a shared plane are); ``partial``: to the reachable point of the
        world nearest an unreachable goal (:mod:`regn.world.partial`). Cost
        scales, exclusions and
        blockers are per tile and not taken (QueryError)."""
        from .route import world_path
        if any(v is not None for v in options.values()):
            raise QueryError(f"a world's find_path does not take {sorted(options)} "
                             "(per-tile options): query the tile")
        if partial is not False and not radius:
            from ..mesh import _partial
            if _partial(partial, 0.0):
                from ..query.paths.partial import REPLACES
                p = self.find_path(start, goal, smooth=smooth)
                if p.status not in REPLACES:
                    return p
                from .partial import partial_path
                return partial_path(self, start, goal, p, smooth)
        ends = as_points(np.vstack([np.asarray(start, np.float64).reshape(-1, 3),
                                    np.asarray(goal, np.float64).reshape(-1, 3)]))
        if len(ends) != 2:
            raise QueryError("start and goal are one point each")
        tile, tet = self._locate_ends(ends)
        if tile[0] < 0:
            return Path(False, NAMES[START_OUTSIDE])
        if tile[1] < 0:
            return Path(False, NAMES[GOAL_OUTSIDE])
        opts = {"smooth": smooth}
        if radius:
            from ..mesh import _partial, _radius
            _partial(partial, radius)           # (a radius with partial: QueryError)
            if _radius(radius) > 0.0:
                from .radius import radius_path
                return radius_path(self, ends[0], ends[1], int(tile[0]), int(tile[1]),
                                   float(radius), smooth)
        walk = not radius and self.compiled_walk
        if tile[0] == tile[1] and not walk:
            p = self.tile(tile[0]).find_path(ends[0], ends[1], **opts)
            if p.found and smooth:
                from .route import straighten
                p.points = straighten(self, p.points, radius)
                p.length = float(np.linalg.norm(np.diff(p.points, axis=0), axis=1).sum())
            if p.found or p.status != NAMES[UNREACHABLE]:
                return self._in_world(p, int(tile[0]))
        if walk:
            from .walk import walk_path
            p = walk_path(self, ends[0], ends[1], int(tile[0]), int(tile[1]), smooth,
                          int(tet[0]), int(tet[1]))
            if p is not None:
                return p
        return world_path(self, ends[0], ends[1], int(tile[0]), int(tile[1]), opts)

    def _locate_ends(self, ends):
        """:meth:`locate_tiles` of a path's two ends, each by one point's
        fine-grid scan in the tile the grid gives (the batch's set-up costs
        more than the scan); a point that tile does not hold (on a shared
        wall, in rock) goes through locate_tiles."""
        from bisect import bisect_right

        from ..query.locating.locate import locate_one
        planes = getattr(self, "_plane_lists", None)
        if planes is None:
            planes = self._plane_lists = [p.tolist() for p in self.grid.planes]
        tile = np.full(2, -1, np.int64)
        tet = np.full(2, -1, np.int64)
        for r in range(2):
            x = [float(v) for v in ends[r]]
            idx = []
            for k in range(3):
                pl = planes[k]
                if not pl[0] <= x[k] <= pl[-1]:
                    break
                idx.append(min(bisect_right(pl, x[k]) - 1, len(pl) - 2))
            t = self._by_index.get(tuple(idx), -1) if len(idx) == 3 else -1
            k = locate_one(self.tile(t), *x) if t >= 0 else -1
            if k >= 0:
                tile[r], tet[r] = t, k
            elif t >= 0:
                got = self.locate_tiles(ends[r:r + 1])
                tile[r], tet[r] = got[0][0], got[1][0]
        return tile, tet

    def _in_world(self, p, t):
        if p.found:
            p.tets = self.tet_offset[t] + p.tets
            p.portals = self.face_offset[t] + p.portals
        p.tiles = [t]
        return p

    def find_paths(self, starts, goals, **options) -> Paths:
        """:meth:`find_path` for (N,3) starts and goals (one goal for all,
        too), one after another: a :class:`regn.query.paths.batch.Paths`."""
        options.pop("workers", None)
        s = as_points(starts, "starts")
        g = as_points(goals, "goals")
        if len(g) == 1 and len(s) != 1:
            g = np.repeat(g, len(s), axis=0)
        if len(g) != len(s):
            raise QueryError(f"{len(s)} starts and {len(g)} goals")
        return Paths.of([self.find_path(a, b, **options) for a, b in zip(s, g)])

    def cost_field(self, goal, *, cost_scale=None, exclude=None, filter=None, smooth=True):
        """Costs to ``goal`` across the tiles, answered point by point (a
        :class:`regn.world.field.WorldField`: ``cost_at``, ``next_waypoint``,
        ``path_from``). Cost scales, exclusions and blockers are per tile
        and not taken (QueryError)."""
        from .field import WorldField
        check_finite_point(goal, "goal")
        if cost_scale is not None or exclude is not None or filter is not None:
            raise QueryError("a world's cost_field does not take cost scales, exclusions "
                             "or blockers (per-tile options): query the tile")
        return WorldField(self, goal, smooth=smooth)

    # --- sight ------------------------------------------------------------------------
    def raycast(self, a, b, *, radius=0.0) -> RaycastHit:
        """Walk segment a -> b through the tiles: clear, or the first wall
        hit (a tile's linked faces are not walls); ``face`` is in world
        numbering, ``tets`` the world tetrahedra crossed. A sphere of
        ``radius`` > 0: :mod:`regn.world.sight`. A NaN or infinite
        coordinate is a QueryError naming it."""
        check_finite_point(a, "a")
        check_finite_point(b, "b")
        a = as_points(a, "a")[0]
        b = as_points(b, "b")[0]
        if radius and as_radius(radius) > 0.0:
            from .sight import raycast
            try:
                return raycast(self, a, b, float(radius))
            finally:
                self._settle()
        tile, _ = self.locate_tiles(a[None])
        if tile[0] < 0:
            return RaycastHit(False, NAMES[START_OUTSIDE])
        t, p = int(tile[0]), a.copy()
        seg = b - a
        crossed = []
        for _ in range(MAX_RAY_TILES):
            mesh = self.tile(t)
            hit = mesh.raycast(p, b)
            crossed.append(self.tet_offset[t] + hit.tets)
            if hit.status == NAMES[START_OUTSIDE] and len(crossed) > 1:
                break                       # went on into a tile with no room there
            if hit.status != NAMES[HIT]:
                hit.tets = np.concatenate(crossed)
                if hit.status == NAMES[CLEAR]:
                    hit.point = b.copy()
                return hit
            if not self.linked[t][hit.face]:
                hit.t = _param(a, seg, hit.point)
                hit.face = int(self.face_offset[t] + hit.face)
                hit.tets = np.concatenate(crossed)
                return hit
            t, p = self._step(t, hit.point, seg)
            if t < 0:
                break
        return RaycastHit(False, "lost", tets=np.concatenate(crossed))

    def _step(self, t, point, direction):
        """The tile a ray leaving tile ``t`` at ``point`` enters (through a
        wall, an edge or a corner), and the point a hair inside it."""
        lo, hi = self.manifest.tiles[t].lo, self.manifest.tiles[t].hi
        unit = direction / np.linalg.norm(direction)
        step = 1e-6 * float(np.max(hi - lo))
        for _ in range(4):
            p = point + unit * step
            nt = int(self.tile_at(p[None])[0])
            if nt != t:
                return nt, p
            step *= 10
        return -1, point

    def raycast_many(self, a, b, *, radius=0.0, workers=None) -> RaycastHits:
        """:meth:`raycast` over (N,3) segment ends, one after another: the
        fields as arrays (:class:`regn.query.sight.raycast.RaycastHits`,
        faces in world numbering)."""
        a, b = segment_pairs(a, b)
        hits = [self.raycast(x, y, radius=radius) for x, y in zip(a, b)]
        n = len(hits)
        return RaycastHits(np.array([h.clear for h in hits], bool),
                           np.array([h.status for h in hits], dtype=object).astype(str)
                           if n else np.zeros(0, str),
                           np.array([h.face for h in hits], np.int64),
                           np.array([h.point for h in hits]).reshape(n, 3),
                           np.array([h.t for h in hits], np.float64),
                           np.array([h.normal for h in hits]).reshape(n, 3))

    def line_of_sight(self, a, b, *, radius=0.0, workers=None):
        """(N,3),(N,3) -> (N,) bool: each segment clear of walls."""
        a, b = segment_pairs(a, b)            # (as a Mesh takes them)
        if radius and as_radius(radius) > 0.0:
            from .sight import line_of_sight
            try:
                return line_of_sight(self, a, b, float(radius))
            finally:
                self._settle()
        return np.array([self.raycast(x, y).clear for x, y in zip(a, b)], dtype=bool)

    # --- walls ------------------------------------------------------------------------
    def distance_to_wall(self, points, *, workers=None):
        """(N,) each point's distance to the nearest wall of the world (a
        linked face is no wall), looked for in the point's tile and those
        its distance reaches; NaN outside the world."""
        from .walls import distance_to_wall
        return distance_to_wall(self, as_points(points))

    def nearest_wall(self, points, *, workers=None):
        """Not available for a world (QueryError): a wall's face row and
        normal are a tile's; :meth:`distance_to_wall` gives the distance."""
        raise QueryError("the nearest wall's face and normal are not available for a world "
                         "(distance_to_wall is; or query the tile's .rgn)")

    def nearest(self, points, *, radius=0.0, workers=None):
        """Each point's closest navigable point, found in its own tile; for
        a sphere of ``radius`` > 0 the closest with room for it, against
        the world's walls (:func:`regn.world.clearance.nearest_free`)."""
        pts = as_points(points)
        if radius and as_radius(radius) > 0.0:
            from .clearance import nearest_free
            try:
                out = nearest_free(self, pts, float(radius))
                return _Nearest(out, self.locate(np.where(np.isfinite(out), out, np.inf)))
            finally:
                self._settle()
        tile = self.tile_at(pts)
        out = np.full(pts.shape, np.nan)
        tets = np.full(len(pts), -1, np.int64)
        for t in np.unique(tile[tile >= 0]):
            rows = np.flatnonzero(tile == t)
            r = self.tile(t).nearest(pts[rows], radius=radius) if radius else \
                self.tile(t).nearest(pts[rows])
            out[rows] = r.points
            tets[rows] = np.where(r.tets >= 0, self.tet_offset[t] + r.tets, -1)
        return _Nearest(out, tets)

    def random_points(self, n, seed=None):
        """(n,3) points spread over the tiles by their free volume, uniform
        in each (reads every tile once)."""
        rng = np.random.default_rng(seed)
        vol = np.array([self.tile(i).tet_volumes.sum() for i in range(self.n_tiles)])
        counts = rng.multinomial(int(n), vol / vol.sum())
        parts = [self.tile(i).random_points(int(c), seed=int(rng.integers(2 ** 31)))
                 for i, c in enumerate(counts) if c]
        return rng.permutation(np.vstack(parts)) if parts else np.zeros((0, 3))

    def __repr__(self):
        from .memory import in_memory
        m = self.manifest
        return (f"<regn.World {m.path!r}: {_count(self.n_tiles, 'tile')} "
                f"{'x'.join(map(str, m.grid))}, {self.n_tets} tetrahedra, "
                f"{_count(len(m.links), 'link')}; {in_memory(self)}>")


def _count(n, noun):
    return f"{n} {noun}{'' if n == 1 else 's'}"


class _Nearest:
    def __init__(self, points, tets):
        self.points, self.tets = points, tets


def _param(a, seg, point):
    n2 = float(seg @ seg)
    return float((point - a) @ seg / n2) if n2 > 0 else 0.0


def _grid_of(m):
    """The :class:`TileGrid` of the manifest's tile boundaries."""
    return TileGrid.from_planes(m.lo, m.hi, [
        np.unique(np.concatenate([[t.lo[k], t.hi[k]] for t in m.tiles])) for k in range(3)])


def load_world(path, *, max_tiles=DEFAULT_MAX_TILES, max_bytes=None, check=True) -> World:
    """Open the world whose manifest is ``path``."""
    return World.open(path, max_tiles=max_tiles, max_bytes=max_bytes, check=check)
