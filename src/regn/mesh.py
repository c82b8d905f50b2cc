"""The mesh model: a REGN object's records plus the arrays users work with.

A :class:`Mesh` holds the records exactly as read (or as built), so writing it
back gives the same bytes, and exposes plain native-endian numpy arrays —
``vertices``, ``tets``, ``tet_faces``, ``neighbors``, ``portal_costs`` … —
computed on first use and cached (read-only, so a cache cannot be corrupted
by accident). The queries hang off the mesh as methods; each one lives in
:mod:`regn.query` and keeps its scratch structures off the mesh.
"""

from __future__ import annotations

import importlib
from functools import cached_property

import numpy as np

from .format import pof0
from .format.layout import BIG, NO_SLOT, NO_TET, SECTION_NAMES


def _frozen(a):
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _float64(a):
    """float32 file values as float64, quietly: a signalling NaN in a file
    is data for ``verify`` to report, not a warning for the caller."""
    with np.errstate(invalid="ignore"):
        return a.astype(np.float64)


#: The query functions by name, each imported on its first use (``import regn``
#: stays light) and kept here after: an import statement run on every call
#: would cost more than a single locate's whole kernel.
_QUERIES = {}


#: The default radius of the queries (a point agent); a call passing it skips
#: the radius check.
_NO_RADIUS = 0.0


def _radius(radius) -> float:
    """A query's ``radius`` argument checked (:func:`regn.query.common.as_radius`)."""
    return _query("regn.query.common", "as_radius")(radius)


def _partial(partial, radius) -> bool:
    """A query's ``partial`` argument checked: a bool, and only for a point."""
    from .errors import QueryError
    if not isinstance(partial, (bool, np.bool_)):
        raise QueryError(f"partial must be True or False, not {partial!r}")
    if partial and radius is not _NO_RADIUS and _radius(radius) > 0.0:
        raise QueryError("partial paths are a point's (radius 0): the region a sphere "
                         "can reach would need a sphere's search from the start")
    return bool(partial)


def _finite(answer, failed, **points):
    """``answer``, unless it ``failed`` and one of ``points`` (name=point)
    has a NaN or infinite coordinate: then QueryError naming it
    (:func:`regn.query.common.check_finite_point`). Asked after the query,
    and only when it failed (such a point is always "outside"), so that a
    single query, timed in microseconds, pays nothing for the check."""
    if failed:
        check = _query("regn.query.common", "check_finite_point")
        for name, point in points.items():
            check(point, name)
    return answer


def _query(module, name):
    """The function ``name`` of module ``module`` (imported on first use)."""
    fn = _QUERIES.get(name)
    if fn is None:
        fn = _QUERIES[name] = getattr(importlib.import_module(module), name)
    return fn


class Mesh:
    """A REGN navigation mesh.

    Build one with :func:`regn.build` or read one with :func:`regn.load` /
    :func:`regn.loads`. Arrays are in metres; indices are int64 with -1 for
    "none".
    """

    def __init__(self, *, header, sections, cell_item, item_ref_start, ref_tet,
                 byte_order=BIG, pof0_dialect=pof0.DIALECT_3, chunk_header=None,
                 pof0_header=None, trailer=b"", parts=None, path=None):
        self.header = header
        self._sections = sections
        self.cell_item = _frozen(np.asarray(cell_item, dtype=np.int64))
        self.item_ref_start = _frozen(np.asarray(item_ref_start, dtype=np.int64))
        self._ref_tet = None if ref_tet is None else \
            _frozen(np.asarray(ref_tet, dtype=np.int64))
        self.byte_order = byte_order
        self._dialect = pof0_dialect
        self.chunk_header = chunk_header
        self.pof0_header = pof0_header
        self.trailer = trailer
        self.parts = parts          # the RegnParts it was read from, if any
        self.path = path

    # --- construction from bytes / to bytes ---------------------------------
    @classmethod
    def from_parts(cls, parts) -> "Mesh":
        return cls(header=parts.header, sections=parts.sections,
                   cell_item=parts.cell_item, item_ref_start=parts.item_ref_start,
                   ref_tet=parts.ref_tet, byte_order=parts.byte_order,
                   pof0_dialect=None, chunk_header=parts.frame.chunk_header,
                   pof0_header=parts.frame.pof0_header, trailer=parts.trailer,
                   parts=parts, path=parts.path)

    @property
    def sections(self) -> dict:
        """Structured record arrays of the six sections (file byte order).
        Reading them the first time runs the per-record checks loading defers
        (indices in range, vertices finite) and raises FormatError on failure."""
        if self._ref_tet is None:
            self.check_records()
        return self._sections

    def check_records(self) -> None:
        """Validate every record's indices and pointers (once)."""
        if self._ref_tet is None:
            from .format.reader import check_records
            check_records(self.parts)
            self._ref_tet = _frozen(self.parts.ref_tet)

    @property
    def ref_tet(self) -> np.ndarray:
        """(R,) tetrahedron index of each section-5 reference."""
        self.check_records()
        return self._ref_tet

    @property
    def pof0_dialect(self) -> int:
        """3 (the seed's 3-byte long entries) or 4 (the public tools' form)."""
        if self._dialect is None:
            from .format.reader import read_pof0
            self._dialect = read_pof0(self.parts, self.expected_pointer_words()).dialect
        return self._dialect

    def expected_pointer_words(self) -> np.ndarray:
        """Word indices a POF0 table of this object as stored must list."""
        from .format.reader import expected_pointer_words
        return expected_pointer_words(self.parts.section_offsets if self.parts else
                                      self._canonical_offsets(),
                                      self.cell_item >= 0, self.n_items, self.n_refs)

    def _canonical_offsets(self):
        from .format.writer import canonical_offsets
        return canonical_offsets(self.counts)[0]

    def dumps(self, *, byte_order=None, pof0_dialect=None) -> bytes:
        """The object's bytes, canonical layout; byte order and POF0 dialect
        are the ones read unless given."""
        return self._serialize(byte_order=byte_order, pof0_dialect=pof0_dialect)

    def _serialize(self, *, byte_order=None, pof0_dialect=None, **writer_options):
        """:meth:`dumps` with the writer's extra options (``regn.verify``
        asks for the buffer, uncopied)."""
        from .format.writer import serialize
        return serialize(header=self.header, sections=self.sections,
                         cell_item=self.cell_item, item_ref_start=self.item_ref_start,
                         ref_tet=self.ref_tet,
                         byte_order=byte_order or self.byte_order,
                         dialect=pof0_dialect or self.pof0_dialect,
                         chunk_header=self.chunk_header, pof0_header=self.pof0_header,
                         trailer=self.trailer, **writer_options)

    def object_bytes(self) -> bytes:
        """The object's bytes: for a loaded mesh exactly as read (its trailer
        included, so ``regn.loads`` of them gives the same mesh, defects and
        all); for a built one what :meth:`dumps` writes."""
        p = self.parts
        if p is None:
            return self.dumps()
        # the trailer, when there is one, follows the object in the buffer read
        buf = memoryview(p.data.obj).cast("B")
        return bytes(buf[p.frame.start:p.frame.end + len(p.trailer)])

    # --- pickling ---------------------------------------------------------------
    def __reduce__(self):
        # the object's bytes travel, with what they do not say (the path, and
        # the POF0 dialect when it is known); the cached arrays and the query
        # structures of regn.query.common.scratch do not: the receiver builds them
        # on first use, as after regn.load
        return _from_pickle, (self.object_bytes(), self.path, self._dialect)

    # --- counts ---------------------------------------------------------------
    @property
    def counts(self) -> tuple:
        """Record count of each of the six sections."""
        return tuple(len(self._sections[name]) for name in SECTION_NAMES)

    n_vertices = property(lambda self: len(self._sections["vertices"]))
    n_tets = property(lambda self: len(self._sections["tets"]))
    n_faces = property(lambda self: len(self._sections["faces"]))
    n_cells = property(lambda self: len(self._sections["cells"]))
    n_items = property(lambda self: len(self._sections["items"]))
    n_refs = property(lambda self: len(self._sections["refs"]))

    def __repr__(self):
        v, t, f, c, i, r = self.counts
        name = f" {self.path!r}" if self.path else ""
        return (f"<regn.Mesh{name}: {v} vertices, {t} tetrahedra, {f} faces, "
                f"{'x'.join(map(str, self.dims))} cells ({i} occupied), {r} refs>")

    # --- header / grid ----------------------------------------------------------
    def _h(self, name, n=3):
        return _frozen(np.asarray(self.header[name], dtype=np.float64)[:n])

    @cached_property
    def bbox_min(self) -> np.ndarray:
        """(3,) lower corner of the play volume's box."""
        return self._h("bbox_min")

    @cached_property
    def bbox_max(self) -> np.ndarray:
        """(3,) upper corner of the play volume's box."""
        return self._h("bbox_max")

    @cached_property
    def extent(self) -> np.ndarray:
        return self._h("extent")

    @cached_property
    def cell_size(self) -> np.ndarray:
        """(3,) edge lengths of one grid cell."""
        return self._h("cell_size")

    @cached_property
    def dims(self) -> tuple:
        """(nx, ny, nz) grid cells per axis."""
        return tuple(int(d) for d in np.asarray(self.header["dims"])[:3])

    # --- section 0/1: vertices and tetrahedra -----------------------------------
    @cached_property
    def vertices(self) -> np.ndarray:
        """(V,3) float64 vertex positions."""
        return _frozen(_float64(self.sections["vertices"]["xyz"]))

    @cached_property
    def tets(self) -> np.ndarray:
        """(T,4) int64 vertex indices of each tetrahedron."""
        return _frozen(self.sections["tets"]["verts"].astype(np.int64))

    @cached_property
    def tet_faces(self) -> np.ndarray:
        """(T,4) int64 face index in each face slot [seed]."""
        return _frozen(self.sections["tets"]["faces"].astype(np.int64))

    @cached_property
    def tet_points(self) -> np.ndarray:
        """(T,4,3) the four corner positions of each tetrahedron."""
        return _frozen(np.take(self.vertices, self.tets, axis=0))

    @cached_property
    def tet_centres(self) -> np.ndarray:
        """(T,3) stored centre of each tetrahedron."""
        return _frozen(_float64(self.sections["tets"]["centre"]))

    @cached_property
    def tet_radii(self) -> np.ndarray:
        """(T,) stored radius (local scale) of each tetrahedron."""
        return _frozen(_float64(self.sections["tets"]["radius"]))

    @cached_property
    def portal_costs(self) -> np.ndarray:
        """(T,6,2) float64 (cost, aux) per face-slot pair, in the order of
        :data:`regn.format.layout.PORTAL_PAIRS` [inferred]."""
        return _frozen(_float64(self.sections["tets"]["portal"]))

    @cached_property
    def tet_volumes(self) -> np.ndarray:
        """(T,) unsigned volume of each tetrahedron, m^3."""
        from .geometry import signed_volumes
        return _frozen(np.abs(signed_volumes(self.tet_points)))

    @cached_property
    def neighbors(self) -> np.ndarray:
        """(T,4) int64: the tetrahedron across each face slot, -1 on the
        boundary — from the tetrahedra's own face indices [seed], like
        ``scipy.spatial.Delaunay.neighbors``. A face listed by more than two
        tetrahedra (invalid; verify reports it) links none of them."""
        flat = self.tet_faces.ravel()
        out = np.full(flat.shape, -1, dtype=np.int64)
        if len(flat):
            order = np.argsort(flat, kind="stable")
            s = flat[order]
            n_per_face = np.bincount(flat, minlength=self.n_faces)
            pair = (s[:-1] == s[1:]) & (n_per_face[s[:-1]] == 2)
            a, b = order[:-1][pair], order[1:][pair]
            out[a] = b // 4
            out[b] = a // 4
        return _frozen(out.reshape(-1, 4))

    @cached_property
    def neighbor_slots(self) -> np.ndarray:
        """(T,4) int64: the slot of the shared face in the neighbouring
        tetrahedron (-1 on the boundary)."""
        nb = self.neighbors
        t, k = np.nonzero(nb >= 0)
        out = np.full(nb.shape, -1, dtype=np.int64)
        faces_of_nb = self.tet_faces[nb[t, k]]                       # (P,4)
        out[t, k] = np.argmax(faces_of_nb == self.tet_faces[t, k][:, None], axis=1)
        return _frozen(out)

    # --- section 2: faces -------------------------------------------------------
    @cached_property
    def face_normals(self) -> np.ndarray:
        """(F,3) stored unit normals (the builder's point out of tetrahedron A)."""
        return _frozen(_float64(self.sections["faces"]["normal"]))

    @cached_property
    def face_d(self) -> np.ndarray:
        """(F,) plane offsets, n.p + d = 0."""
        return _frozen(_float64(self.sections["faces"]["d"]))

    @cached_property
    def face_points(self) -> np.ndarray:
        """(F,3) stored point on each face's plane (builder: the centroid)."""
        return _frozen(_float64(self.sections["faces"]["point"]))

    @cached_property
    def face_tets(self) -> np.ndarray:
        """(F,2) int64 the face's tetrahedra A and B (-1 for B on the boundary),
        as stored in the face records."""
        f = self.sections["faces"]
        b = f["tet_b"].astype(np.int64)
        return _frozen(np.stack([f["tet_a"].astype(np.int64),
                                 np.where(b == NO_TET, -1, b)], axis=1))

    @cached_property
    def face_slots(self) -> np.ndarray:
        """(F,2) int64 slot of the face in tetrahedron A and B (-1 on the boundary)."""
        f = self.sections["faces"]
        b = f["slot_b"].astype(np.int64)
        return _frozen(np.stack([f["slot_a"].astype(np.int64),
                                 np.where(b == NO_SLOT, -1, b)], axis=1))

    @cached_property
    def face_vertices(self) -> np.ndarray:
        """(F,3) int64 vertex indices of each face: the three vertices of the
        first tetrahedron listing it that lie on the face's plane (found
        geometrically, see :attr:`opposite_slot`)."""
        t, k = self.face_owner
        verts = self.tets[t]                                   # (F,4)
        opp = self.opposite_slot[t, k]
        keep = np.ones(verts.shape, dtype=bool)
        keep[np.arange(len(t)), opp] = False
        return _frozen(verts[keep].reshape(-1, 3))

    @cached_property
    def face_owner(self):
        """(tet, slot) of the first tetrahedron listing each face."""
        flat = self.tet_faces.ravel()
        first = np.full(self.n_faces, -1, dtype=np.int64)
        order = np.argsort(flat, kind="stable")[::-1]
        first[flat[order]] = order
        if np.any(first < 0):
            # a face no tetrahedron lists: fall back to the stored tet A / slot
            miss = first < 0
            first[miss] = 4 * self.face_tets[miss, 0] + self.face_slots[miss, 0]
        return first // 4, first % 4

    @cached_property
    def opposite_slot(self) -> np.ndarray:
        """(T,4) for each face slot, the vertex slot *not* on that face — found
        as the vertex farthest from the face's stored plane (a reader must not
        assume slot k is opposite vertex k [inferred])."""
        pts = self.tet_points                                   # (T,4,3)
        n = self.face_normals[self.tet_faces]                   # (T,4,3)
        d = self.face_d[self.tet_faces]                         # (T,4)
        dist = np.abs(np.einsum("tkd,tvd->tkv", n, pts) + d[:, :, None])
        return _frozen(np.argmax(dist, axis=2))

    @cached_property
    def boundary_faces(self) -> np.ndarray:
        """Indices of faces with one tetrahedron (asteroid surfaces and box walls)."""
        listed = np.bincount(self.tet_faces.ravel(), minlength=self.n_faces)
        return _frozen(np.flatnonzero(listed == 1))

    @cached_property
    def face_centroids(self) -> np.ndarray:
        """(F,3) centroid of each face's three vertices."""
        return _frozen(self.vertices[self.face_vertices].mean(axis=1))

    # --- sections 3-5: the grid ------------------------------------------------
    @cached_property
    def cell_ref_count(self) -> np.ndarray:
        """(C,) number of tetrahedra each cell lists (0 for an empty cell)."""
        n = self.sections["items"]["n"].astype(np.int64)
        out = np.zeros(self.n_cells, dtype=np.int64)
        occ = self.cell_item >= 0
        out[occ] = n[self.cell_item[occ]]
        return _frozen(out)

    @cached_property
    def grid_csr(self):
        """(indptr (C+1,), indices) of the tetrahedra each cell lists, in
        the style of ``scipy.sparse`` CSR: cell c lists
        ``indices[indptr[c]:indptr[c+1]]``."""
        counts = self.cell_ref_count
        indptr = np.concatenate([[0], np.cumsum(counts)])
        occ = np.flatnonzero(counts)
        starts = self.item_ref_start[self.cell_item[occ]]
        # gather each cell's run of references (runs may not be packed in order)
        rep = np.repeat(starts - indptr[occ], counts[occ])
        idx = np.arange(int(indptr[-1])) + rep
        return _frozen(indptr), _frozen(self.ref_tet[idx])

    def cell_tets(self, cell: int) -> np.ndarray:
        """The tetrahedra cell ``cell`` (linear index) lists."""
        indptr, indices = self.grid_csr
        return indices[indptr[cell]:indptr[cell + 1]]

    def cell_of(self, points) -> np.ndarray:
        """(N,3) points -> (N,) linear cell index (clamped to the grid)."""
        from .geometry import cell_coords, linear_cell
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        return linear_cell(cell_coords(pts, self.bbox_min, self.cell_size, self.dims),
                           self.dims)

    # --- queries (each lives in regn.query) ------------------------------------
    def locate(self, points, *, return_barycentric=False, method="auto", workers=None):
        """(N,3) -> (N,) tetrahedron holding each point, -1 outside, like
        ``scipy.spatial.Delaunay.find_simplex``. ``method="grid"`` follows the
        game's own chain through the stored cell lists; ``workers`` threads
        (None: every core); see :func:`regn.query.locating.locate.locate`."""
        locate = _query("regn.query.locating.locate", "locate")
        return locate(self, points, return_barycentric=return_barycentric, method=method,
                      workers=workers)

    def nearest(self, points, *, radius=_NO_RADIUS, workers=None):
        """Closest point of the navigable volume (where a sphere of ``radius``
        metres fits, when > 0), on ``workers`` threads (None: every core); see
        :func:`regn.query.walls.nearest.nearest`."""
        if radius is not _NO_RADIUS and _radius(radius) > 0.0:
            return _query("regn.query.radius.free_space", "nearest_free")(self, points, radius,
                                                                   workers=workers)
        return _query("regn.query.walls.nearest", "nearest")(self, points, workers=workers)

    def find_path(self, start, goal, *, smooth=True, cost_scale=None, exclude=None,
                  filter=None, radius=_NO_RADIUS, partial=False):
        """Shortest flight from ``start`` to ``goal``, avoiding a
        :class:`regn.QueryFilter`'s blockers (for a sphere of ``radius``
        metres when > 0); see :func:`regn.query.paths.path.find_path`. With
        ``partial=True``, a goal that cannot be reached gets the path to the
        reachable point nearest it (status ``"partial"``; see
        :mod:`regn.query.paths.partial`). A start or goal with a NaN or
        infinite coordinate is a QueryError naming it."""
        if partial is not False and _partial(partial, radius):
            path = self.find_path(start, goal, smooth=smooth, cost_scale=cost_scale,
                                  exclude=exclude, filter=filter)
            if path.status not in _query("regn.query.paths.partial", "REPLACES"):
                return path
            return _query("regn.query.paths.partial", "partial_path")(
                self, start, goal, path, smooth=smooth, cost_scale=cost_scale,
                exclude=exclude, filter=filter)
        if radius is not _NO_RADIUS and _radius(radius) > 0.0:
            find_path_radius = _query("regn.query.radius.portals", "find_path_radius")
            path = find_path_radius(self, start, goal, radius, smooth, cost_scale, exclude,
                                    filter)
        else:
            path = _query("regn.query.paths.path", "find_path")(
                self, start, goal, smooth=smooth, cost_scale=cost_scale, exclude=exclude,
                filter=filter)
        return _finite(path, not path.found, start=start, goal=goal)

    def find_paths(self, starts, goals, *, smooth=True, cost_scale=None, exclude=None,
                   filter=None, workers=None, radius=_NO_RADIUS, partial=False):
        """:meth:`find_path` for (N,3) starts and goals at once (for a sphere of
        ``radius`` metres when > 0), on ``workers`` threads (default: every
        core); see :func:`regn.query.paths.batch.find_paths` and, with a radius,
        :func:`regn.query.radius.portals.find_paths_radius`."""
        partial = partial is not False and _partial(partial, radius)
        if radius is not _NO_RADIUS and _radius(radius) > 0.0:
            find_paths_radius = _query("regn.query.radius.portals", "find_paths_radius")
            return find_paths_radius(self, starts, goals, radius, smooth=smooth,
                                     cost_scale=cost_scale, exclude=exclude, filter=filter,
                                     workers=workers)
        find_paths = _query("regn.query.paths.batch", "find_paths")
        return find_paths(self, starts, goals, smooth=smooth, cost_scale=cost_scale,
                          exclude=exclude, filter=filter, workers=workers, partial=partial)

    def cost_field(self, goal, *, cost_scale=None, exclude=None, filter=None):
        """Every tetrahedron's cost to ``goal`` and its next portal toward it,
        from one search; see :func:`regn.query.paths.field.cost_field`. A goal
        with a NaN or infinite coordinate is a QueryError naming it."""
        cost_field = _query("regn.query.paths.field", "cost_field")
        field = cost_field(self, goal, cost_scale=cost_scale, exclude=exclude, filter=filter)
        return _finite(field, field.status != "ok", goal=goal)

    def raycast(self, a, b, *, radius=_NO_RADIUS):
        """Walk segment a->b (sweep a sphere of ``radius`` metres when > 0);
        see :func:`regn.query.sight.raycast.raycast`. An end with a NaN or
        infinite coordinate is a QueryError naming it."""
        if radius is not _NO_RADIUS and _radius(radius) > 0.0:
            hit = _query("regn.query.sight.sweep", "raycast_radius")(self, a, b, radius)
        else:
            hit = _query("regn.query.sight.raycast", "raycast")(self, a, b)
        return _finite(hit, hit.status == "start_outside" or hit.status == "lost", a=a, b=b)

    def raycast_many(self, a, b, *, radius=_NO_RADIUS, workers=None):
        """:meth:`raycast` over (N,3) segment ends at once, on ``workers``
        threads: arrays of its fields (without the tetrahedra crossed); see
        :func:`regn.query.sight.raycast.raycast_many`."""
        if radius is not _NO_RADIUS and _radius(radius) > 0.0:
            raycast_many_radius = _query("regn.query.sight.sweep", "raycast_many_radius")
            return raycast_many_radius(self, a, b, radius, workers=workers)
        raycast_many = _query("regn.query.sight.raycast", "raycast_many")
        return raycast_many(self, a, b, workers=workers)

    def line_of_sight(self, a, b, *, radius=_NO_RADIUS, workers=None):
        """(N,3),(N,3) -> (N,) bool, clear or not (for a sphere of ``radius``
        when > 0), on ``workers`` threads; see
        :func:`regn.query.sight.raycast.line_of_sight`."""
        if radius is not _NO_RADIUS and _radius(radius) > 0.0:
            line_of_sight_radius = _query("regn.query.sight.sweep", "line_of_sight_radius")
            return line_of_sight_radius(self, a, b, radius, workers=workers)
        line_of_sight = _query("regn.query.sight.raycast", "line_of_sight")
        return line_of_sight(self, a, b, workers=workers)

    def distance_to_wall(self, points, *, workers=None):
        """(N,3) -> (N,) distance to the nearest boundary face; see
        :func:`regn.query.walls.nearest.distance_to_wall`."""
        distance_to_wall = _query("regn.query.walls.nearest", "distance_to_wall")
        return distance_to_wall(self, points, workers=workers)

    def nearest_wall(self, points, *, workers=None):
        """(N,3) -> each point's nearest wall: distances (N,), closest wall
        points (N,3), boundary face rows (N,), unit normals out of the
        volume (N,3); see :func:`regn.query.walls.nearest.nearest_wall`."""
        return _query("regn.query.walls.nearest", "nearest_wall")(self, points, workers=workers)

    def random_points(self, n, seed=None, *, radius=_NO_RADIUS):
        """(n,3) points uniform in the navigable volume (over the positions
        with clearance ``radius`` metres, when > 0); see
        :func:`regn.query.locating.sample.random_points`."""
        if radius is not _NO_RADIUS and _radius(radius) > 0.0:
            return _query("regn.query.radius.free_space", "random_free")(self, n, radius, seed)
        return _query("regn.query.locating.sample", "random_points")(self, n, seed)

    def prepare(self, *, radius=False, workers=None) -> dict:
        """Warm-up: build every query structure (location grid, search graph
        and landmark table, wall grid ...) and load every query kernel now,
        compiling on every core those not yet in numba's cache, so that each
        query's first call costs what its later calls cost; ``radius=True``
        also computes the portal clearances of a sphere's queries. Seconds
        spent by step; see :func:`regn.query.prepare.prepare`."""
        return _query("regn.query.prepare", "prepare")(self, radius=radius, workers=workers)

    def components(self) -> np.ndarray:
        """(T,) connected-component label of each tetrahedron (through shared faces)."""
        return _query("regn.query.locating.sample", "components")(self)

    # --- export ----------------------------------------------------------------
    def to_meshio(self):
        """The tetrahedra as a ``meshio.Mesh`` with per-tetrahedron cell data."""
        from .export.meshio_io import to_meshio
        return to_meshio(self)

    def boundary_surface(self):
        """(vertices (V,3), triangles (B,3)) of the boundary, outward-facing."""
        from .export.surface import boundary_surface
        return boundary_surface(self)


def _from_pickle(data, path, pof0_dialect):
    """The receiving end of :meth:`Mesh.__reduce__`."""
    from .format.reader import parse
    mesh = Mesh.from_parts(parse(data, path=path))
    mesh._dialect = pof0_dialect
    return mesh
