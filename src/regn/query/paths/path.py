"""Shortest flights: bidirectional A* over the face graph, then string pulling.

Graph. The nodes are the *portal* faces (faces shared by two tetrahedra;
boundary faces are walls and never crossed). Crossing tetrahedron T from its
face slot i to slot j costs ``portal_costs[T, pair(i, j), 0]`` (times
``cost_scale[T]`` when given); an edge whose cost is NaN or negative is
impassable, and an excluded tetrahedron (``exclude[T]``) is never entered.
The start point s in tetrahedron S links to each portal face of S at
``|s - centroid(face)|``; each portal face of the goal tetrahedron G links to g
at ``|centroid - g|``; S == G costs ``|s - g|``.

Search. Bidirectional A*: one search grows from s, one from g, each on
costs reduced by the average potential p(v) = (|v - g| - |v - s|) / 2 of
face centroids. Both Euclidean bounds are admissible and consistent when
every stored cost is at least the distance between the two face centroids
(the builder writes that distance rounded up to float32); this is checked
once per mesh with a relative slack of ``ADMISSIBLE_SLACK`` = 1e-6
(:mod:`regn.tolerances`; the bounds are shrunk by as much), and when it
fails both potentials are 0 and the search is a bidirectional Dijkstra.
With ``cost_scale`` the bounds are multiplied by ``min(1, min(cost_scale))``:
every edge then costs at least that factor times its stored cost, and the
straight links from s and g, which are never scaled, at least that factor
times their length, so they stay admissible and consistent (a factor above
1 overshot the links, and returned routes up to 2.6 % too dear). The search
stops when the two frontiers' smallest keys add up to the cheapest meeting
found, so the cost returned is always the graph optimum. Against one-sided A* it settles about half the faces
(median 554 against 1 172 on the 15 000-tet benchmark map). Once a mesh has
answered a few dozen searches, each bound is raised to the largest of 64
landmark bounds (:mod:`regn.query.paths.landmarks`): the median demo query then
settles 58 faces instead of 337.
Start and goal in different connected components are answered
``'unreachable'`` from precomputed component labels without searching.

No turning back. A face f reached from face p through tetrahedron A is not
expanded back into A's other faces when A's stored costs obey the triangle
inequality (checked once per tetrahedron, exactly; :func:`_triangle_tets`):
for such a face q, going p -> q directly costs no more than p -> f -> q, and
p was expanded before f. ``cost_scale`` multiplies all of A's costs by one
factor, so the inequality survives it. This halves the edges a search
relaxes, and the optimum is unchanged (the tests compare every cost with an
independent Dijkstra, on maps where the inequality holds and where it does
not).

One compiled call (:func:`regn.query.paths._path_kernels.find_path`) locates both
ends (the fine-grid scan of :mod:`regn.query.locating.locate`), checks their
components, searches and writes the corridor, so a query crosses from Python
to compiled code once. Each side keeps its open set in an 8-ary heap on
preallocated arrays, and the side with the smaller open set grows next. Every face's search state (both sides'
costs and bounds, stamps and parents) and its centroid share one 64-byte
row, and its six edges one 64-byte block, so relaxing an edge touches one
cache line; faces are renumbered along a Z-order curve (faces near in space
are near in memory); both tables sit in one huge-page arena, and the kernel
prefetches a face's neighbours before relaxing them. Per-query state is
stamped with a query id, so nothing is cleared between queries. The rows a
search writes, its heaps and buffers form a *slot* (:func:`search_slot`):
a search takes a free one, and threads searching one mesh at once each get
their own (made on first need as a copy of the face rows, then kept), so
they run side by side; the edge blocks are shared read-only.

A route may touch a face of a tetrahedron and turn back into it when that
is cheaper (a start link is unscaled while ``cost_scale`` can make crossing
a tetrahedron cheap, and stored costs need not obey the triangle
inequality); the corridor then lists that tetrahedron twice.

``length <= cost`` holds whenever every stored cost is at least the distance
between its two face centroids (the builder's rule, rounded up, checked by
``regn verify`` as ``portal_cost_rule``) and no ``cost_scale`` is below 1;
with smaller costs the path is still the cheapest by those costs, and its
length may exceed them. Rounded to nearest instead (as another tool may
write them), costs can fall a float32 rounding (~1e-8 relative) short, and
so can an unsmoothed path's cost.

Smoothing (:mod:`regn.query.paths.smooth`): the shortest polyline from s to g
that crosses the corridor's portal triangles in order; each segment joins
two faces of one tetrahedron (or s/g and a face of S/G), so the polyline
stays inside the corridor. ``points`` keeps only its turning points
(:mod:`regn.query.paths.waypoints`), and the taut pass of
:mod:`regn.query.paths.taut` then drops the points the path sees past (it
may leave the corridor there; ``tets``, ``portals`` and ``cost`` stay the
corridor's). ``smooth=False`` gives the portal-centroid polyline. For a sphere of some radius: :mod:`regn.query.radius.portals`.
"""

from __future__ import annotations

import math
import threading
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np

from ...errors import QueryError
from ...status import NAMES, OK, START_OUTSIDE
from ...tolerances import ADMISSIBLE_SLACK
from ..common import point_xyz, scratch
from ..locating.locate import locate_tables
from ..locating.sample import components
from .landmarks import BUILD_AFTER, LANDMARKS
from .taut import polyline_length, taut_mesh_path
from .waypoints import smoothed_turning_points

#: stamps are 2*qid and 2*qid+1 in a uint16: start over before they wrap
MAX_QID = 0x7FFF

#: The face graph as the search kernel reads it (built once per mesh by
#: :func:`_graph`; faces in internal, Z-order numbering; see
#: :mod:`regn.query.paths._path_kernels` for the row layouts).
SearchGraph = namedtuple("SearchGraph", [
    "edge",        # (F+1,16) float32: each face's edge block (row F: a dummy)
    "edge_int",    # the same memory as int32
    "node",        # (F+1,8) float64: each face's search row
    "node_u16",    # the same memory as uint16 (stamps and parents)
    "tet_faces",   # (T,4) int64: each tetrahedron's faces
    "is_portal",   # (F,) bool: shared by two tetrahedra
    "face_order",  # (F,) int64: internal -> file face number
    "component",   # (T,) int64: connected-component labels
    "landmarks",   # (F+1,K) uint16: costs to landmarks in quanta (regn.query.paths.landmarks)
    "quantum",     # float: its quantum in metres (0: no table, K = 0)
])

#: A search's scratch: the two open sets (8-ary heaps on parallel arrays)
#: and the output buffers (one set per slot: see :func:`search_slot`).
SearchWork = namedtuple("SearchWork", [
    "heap_key0", "heap_node0",     # forward open set: keys, faces
    "heap_key1", "heap_node1",     # backward open set
    "portals",                     # (2F+4,) the route's faces
    "corridor",                    # (2F+5,) its tetrahedra
    "points",                      # (2F+6,3) its centroid polyline
    "ends",                        # (2,3) the query's start and goal
    "mark_bounds",                 # (4, LANDMARKS) int32: its landmark constants
])


@dataclass
class Path:
    """Result of :func:`find_path`."""
    found: bool
    status: str
    cost: float = float("inf")
    tets: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    portals: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    length: float = float("inf")

    def __bool__(self):
        return self.found

    def __repr__(self):
        # one line (the dataclass's own printed every array in full)
        if not self.found:
            return f"<regn Path: {self.status}>"
        return (f"<regn Path: {self.status}, {len(self.points)} points, length "
                f"{self.length:.6g} m, cost {self.cost:.6g}, {len(self.tets)} tetrahedra>")

    def to_dict(self) -> dict:
        return {"found": self.found, "status": self.status,
                "cost": self.cost if self.found else None,
                "length": self.length if self.found else None,
                "points": self.points.tolist(), "tets": self.tets.tolist(),
                "portals": self.portals.tolist()}


_KERNELS = []


def _kernels():
    """The compiled kernels, imported (with numba) on first use and kept (an
    import statement on every query would cost ~1 us)."""
    if not _KERNELS:
        from . import _path_kernels
        _KERNELS.append(_path_kernels)
    return _KERNELS[0]


def _portal_edges(mesh):
    """The undirected edges of the face graph (file numbering): (tet, face i,
    face j, stored cost; -1 impassable), and whether the Euclidean bound is
    admissible (every passable cost at least its centroid distance, within
    ADMISSIBLE_SLACK)."""
    from ...format.layout import PORTAL_PAIRS
    tf = np.asarray(mesh.tet_faces, dtype=np.int64)
    nb = np.asarray(mesh.neighbors)
    pc = np.asarray(mesh.portal_costs)[:, :, 0]
    cen = np.asarray(mesh.face_centroids, dtype=np.float64)
    pairs = np.asarray(PORTAL_PAIRS, dtype=np.int64)
    tt = np.repeat(np.arange(len(tf)), len(pairs))
    si, sj = np.tile(pairs[:, 0], len(tf)), np.tile(pairs[:, 1], len(tf))
    fi, fj = tf[tt, si], tf[tt, sj]
    base = pc.reshape(-1).astype(np.float64)
    keep = (nb[tt, si] >= 0) & (nb[tt, sj] >= 0) & (fi != fj)
    tt, fi, fj, base = tt[keep], fi[keep], fj[keep], base[keep]
    dist = np.linalg.norm(cen[fi] - cen[fj], axis=1)
    good = np.isfinite(base) & (base >= 0)
    admissible = bool(np.all(~good | (base >= dist * (1 - ADMISSIBLE_SLACK))))
    return tt, fi, fj, np.where(good, base, -1.0), admissible


def _directed_edges(tt, fi, fj, base, rank, face_tets):
    """Each undirected edge both ways, in internal numbering, the cheapest of
    repeats (an invalid tet listing one face in two slots repeats edges) kept:
    (source, destination, cost, block slot 0-5). Slots 0-2 cross the
    source's first tetrahedron, 3-5 its second."""
    src = rank[np.concatenate([fi, fj])]
    dst = rank[np.concatenate([fj, fi])]
    etet = np.concatenate([tt, tt])
    ew = np.concatenate([base, base])
    dearest_last = np.where(ew < 0, np.inf, ew)
    pick = np.lexsort((dearest_last, etet, dst, src))
    first_of_run = np.ones(len(pick), dtype=bool)
    first_of_run[1:] = ((src[pick][1:] != src[pick][:-1]) | (dst[pick][1:] != dst[pick][:-1])
                        | (etet[pick][1:] != etet[pick][:-1]))
    pick = pick[first_of_run]
    src, dst, etet, ew = src[pick], dst[pick], etet[pick], ew[pick]
    grp = (etet != face_tets[src, 0]).astype(np.int64)
    key = src * 2 + grp
    order = np.argsort(key, kind="stable")
    key_sorted = key[order]
    first = np.searchsorted(key_sorted, key_sorted, side="left")
    pos = np.arange(len(order)) - first
    if len(pos) and pos.max() >= 3:
        raise QueryError("a face has more than three neighbouring faces through one "
                         "tetrahedron (invalid adjacency; `regn verify` names it)")
    return src[order], dst[order], ew[order], 3 * grp[order] + pos


def graph_arrays(mesh) -> dict:
    """What :func:`_graph` computes from the mesh (plain arrays: a world
    keeps them beside its tiles, :mod:`regn.world.prepared`): the edge
    blocks, face centroids and portal flags in internal order, the internal
    -> file face order, each tetrahedron's internal faces, the heap length
    and whether the Euclidean bound is admissible."""
    from ...format.layout import PORTAL_PAIRS
    K = _kernels()
    tf = np.asarray(mesh.tet_faces, dtype=np.int64)
    nb = np.asarray(mesh.neighbors)
    cen = np.asarray(mesh.face_centroids, dtype=np.float64)
    T, F = len(tf), int(mesh.n_faces)
    tt, fi, fj, base, admissible = _portal_edges(mesh)
    face_order = _morton_order(cen)       # faces near in space near in memory
    rank = np.empty(F, dtype=np.int64)
    rank[face_order] = np.arange(F)
    is_portal = np.ones(F, dtype=bool)
    is_portal[np.asarray(mesh.boundary_faces)] = False
    # the two tetrahedra of each face (internal numbering; -1 on walls)
    face_tets = np.full((F, 2), -1, dtype=np.int64)
    face_tets[rank[tf].reshape(-1)] = np.stack(
        [np.repeat(np.arange(T), 4), np.asarray(nb).reshape(-1)], axis=1)
    prunable = _triangle_tets(tf, nb, np.asarray(mesh.portal_costs)[:, :, 0], PORTAL_PAIRS)
    src, dst, ew, slot = _directed_edges(tt, fi, fj, base, rank, face_tets)
    edge_int = np.zeros((F + 1, K.EDGE_COLUMNS), np.int32)
    edge = edge_int.view(np.float32)
    edge[:, 0:12:2] = -1.0                             # missing: impassable
    edge_int[:, 1:12:2] = F                            # ... to the dummy row
    edge[src, 2 * slot] = ew
    edge_int[src, 2 * slot + 1] = dst
    edge_int[:F, K.ET0] = face_tets[:, 0]
    edge_int[:F, K.ET1] = face_tets[:, 1]
    ft = face_tets.clip(0)
    edge_int[:F, K.EPRUNE] = (prunable[ft[:, 0]] & (face_tets[:, 0] >= 0)) \
        | ((prunable[ft[:, 1]] & (face_tets[:, 1] >= 0)) << 1)
    # a side pushes at most once per edge plus its <= 4 seeds
    return {"edge_int": edge_int, "centroids": cen[face_order],
            "tet_faces": np.ascontiguousarray(rank[tf]), "is_portal": is_portal[face_order],
            "face_order": face_order.astype(np.int64), "heap_len": len(src) + 16,
            "admissible": admissible}


def _graph(mesh) -> dict:
    """The mesh's search state (cached): the :class:`SearchGraph`,
    :class:`SearchWork` and :class:`regn.query.locating.locate.LocateTables` records
    (``graph``, ``work`` and ``qid`` are those of the first slot; the free
    slots and their lock), whether the Euclidean bound is admissible, and
    the default cost_scale and exclude arrays. Made from
    :func:`graph_arrays`, or from the same arrays kept beside a world's
    tile (the scratch entry ``"path_arrays"``)."""
    s = scratch(mesh)
    if "path" in s:
        return s["path"]
    K = _kernels()
    kept = s.pop("path_arrays", None)
    a = kept or graph_arrays(mesh)
    T, F = len(a["tet_faces"]), len(a["face_order"])
    if kept:        # the kept edge blocks are only read: used where they are
        arena = _Arena([("node", (F + 1, K.NODE_COLUMNS), np.float64)])
        edge_int = a["edge_int"]
    else:
        arena = _Arena([("edge", (F + 1, K.EDGE_COLUMNS), np.int32),
                        ("node", (F + 1, K.NODE_COLUMNS), np.float64)])
        edge_int = arena["edge"]
        edge_int[:] = a["edge_int"]
    node = arena["node"]
    node[:F, K.CX:K.CZ + 1] = a["centroids"]
    graph = SearchGraph(edge_int.view(np.float32), edge_int, node, node.view(np.uint16),
                        np.asarray(a["tet_faces"], np.int64), np.asarray(a["is_portal"], bool),
                        np.asarray(a["face_order"], np.int64), np.asarray(components(mesh)),
                        _NO_LANDMARKS, 0.0)
    heap_len = int(a["heap_len"])
    tables = locate_tables(mesh)
    first = _Slot(graph, tables, _new_work(heap_len, F), arena)
    g = dict(admissible=bool(a["admissible"]), graph=graph, work=first.work, qid=first.qid,
             heap_len=heap_len, free_slots=[first],
             tables=tables, ones=np.ones(T), no_excl=np.zeros(T, dtype=np.bool_),
             searches=0, marks_done=bool(getattr(mesh, "skip_landmarks", False)),
             marks_lock=threading.Lock())
    # (a mesh marked skip_landmarks, such as a world's tile that may soon be
    # dropped, never builds the landmark table)
    s["path"] = g
    return g


#: a graph's landmark table before one is built (or when it gets none)
_NO_LANDMARKS = np.zeros((1, 0), np.uint16)


def ensure_landmarks(g):
    """Build the mesh's landmark table (:mod:`regn.query.paths.landmarks`) once;
    thread-safe (searches running meanwhile go on without it)."""
    if g["marks_done"]:
        return
    with g["marks_lock"]:
        if g["marks_done"]:
            return
        from .landmarks import landmark_table
        made = landmark_table(g["graph"], g["heap_len"])
        if made is not None:
            table, quantum = made
            arena = _Arena([("marks", table.shape, np.uint16)])
            arena["marks"][:] = table
            g["marks_arena"] = arena
            g["graph"] = g["graph"]._replace(landmarks=arena["marks"], quantum=quantum)
        g["marks_done"] = True


def slot_state(g, slot):
    """``slot.state`` with the mesh's current landmark table (a slot made
    before the table was built takes it on its next search)."""
    graph = g["graph"]
    if slot.graph.landmarks is not graph.landmarks:
        slot.graph = slot.graph._replace(landmarks=graph.landmarks, quantum=graph.quantum)
        slot.state = _kernels().new_search_state(slot.graph, g["tables"], slot.work)
    return slot.state


def count_search(g, n=1):
    """Count ``n`` searches on the mesh; once they reach BUILD_AFTER the
    landmark table is built (:mod:`regn.query.paths.landmarks`)."""
    if not g["marks_done"]:
        g["searches"] += n
        if g["searches"] >= BUILD_AFTER:
            ensure_landmarks(g)


def _new_work(heap_len, F) -> SearchWork:
    """Empty heaps and output buffers (a route lists each face at most once
    per side, plus the meeting)."""
    out_len = 2 * F + 4
    return SearchWork(np.zeros(heap_len), np.zeros(heap_len, np.int32), np.zeros(heap_len),
                      np.zeros(heap_len, np.int32), np.zeros(out_len, np.int64),
                      np.zeros(out_len + 1, np.int64), np.zeros((out_len + 2, 3)),
                      np.zeros((2, 3)), np.zeros((4, LANDMARKS), np.int32))


class _Slot:
    """One search's private state: the face rows it writes (``graph.node``:
    costs, bounds, stamps and parents beside the read-only centroids), its
    heaps and output buffers, and its query id; ``state`` holds the graph,
    the locate tables and the buffers for the kernel. The edge blocks and
    every other array of the graph are shared, read-only."""

    __slots__ = ("graph", "work", "qid", "arena", "state")

    def __init__(self, graph, tables, work, arena):
        self.graph, self.work, self.arena, self.qid = graph, work, arena, [0]
        self.state = _kernels().new_search_state(graph, tables, work)


def _another_slot(g) -> _Slot:
    """A new slot: a copy of the face rows with every stamp cleared (so
    nothing of another slot's searches is read) and fresh buffers."""
    K = _kernels()
    graph = g["graph"]
    arena = _Arena([("node", graph.node.shape, np.float64)])
    node = arena["node"]
    node[:] = graph.node
    node_u16 = node.view(np.uint16)
    node_u16[:, K.ST0:K.PA1 + 1] = 0
    return _Slot(graph._replace(node=node, node_u16=node_u16), g["tables"],
                 _new_work(g["heap_len"], node.shape[0] - 1), arena)


def search_slot(g):
    """``with search_slot(g) as slot:`` a slot no other search is using
    (made when all are busy, kept for later): threads searching one mesh at
    once each get their own."""
    return _SlotLease(g)


class _SlotLease:
    """:func:`search_slot`'s context manager (a class: a generator-based one
    costs a single query ~1 us more)."""

    __slots__ = ("g", "slot")

    def __init__(self, g):
        self.g = g

    def __enter__(self):
        # list.pop and list.append are atomic under the GIL: no lock needed
        try:
            self.slot = self.g["free_slots"].pop()
        except IndexError:                   # every slot busy
            self.slot = _another_slot(self.g)
        return self.slot

    def __exit__(self, *exc):
        self.g["free_slots"].append(self.slot)


def _triangle_tets(tf, nb, pc, portal_pairs):
    """Per tetrahedron: its passable stored costs obey the triangle
    inequality (for portal faces p, f, q with p-f and f-q passable, p-q is
    passable and costs at most their sum, exactly in float64). Then a route
    entering face f from p never needs to turn back into that tetrahedron:
    going p -> q directly is no dearer, so the search may skip those edges."""
    cost = np.where(np.isfinite(pc) & (pc >= 0), pc.astype(np.float64), -1.0)
    pair = np.zeros((4, 4), dtype=np.int64)
    for p, (i, j) in enumerate(portal_pairs):
        pair[i, j] = pair[j, i] = p
    portal = nb >= 0
    ok = np.ones(len(tf), dtype=bool)
    for a in range(4):                   # a face appearing in two slots: no
        for b in range(a + 1, 4):
            ok &= tf[:, a] != tf[:, b]
    for f in range(4):                   # the middle face
        for p in range(4):
            for q in range(4):
                if len({f, p, q}) < 3:
                    continue
                pf, fq, pq = cost[:, pair[p, f]], cost[:, pair[f, q]], cost[:, pair[p, q]]
                used = portal[:, p] & portal[:, f] & portal[:, q] & (pf >= 0) & (fq >= 0)
                ok &= ~used | ((pq >= 0) & (pq <= pf + fq))
    return ok


def _morton_order(points):
    """Permutation sorting points along a Z-order curve (10 bits per axis)."""
    p = np.nan_to_num(np.asarray(points, dtype=np.float64), posinf=0.0, neginf=0.0)
    if len(p) == 0:
        return np.zeros(0, dtype=np.int64)
    lo, hi = p.min(axis=0), p.max(axis=0)
    q = ((p - lo) / np.where(hi > lo, hi - lo, 1.0) * 1023).astype(np.int64)
    code = np.zeros(len(p), dtype=np.int64)
    for bit in range(10):
        for axis in range(3):
            code |= ((q[:, axis] >> bit) & 1) << (3 * bit + axis)
    return np.argsort(code, kind="stable")


class _Arena:
    """Named arrays carved from one anonymous memory map, private to the
    process, each on a 64-byte boundary, the map asked for transparent huge
    pages where the OS offers them (Linux ``MADV_HUGEPAGE``). A search
    touches a few hundred scattered faces of ~4 MB of arrays, and on 4 KB
    pages most of those touches also miss the TLB. Zero-filled; elsewhere it
    is plain memory."""

    ALIGN = 64
    HUGE = 2 << 20

    def __init__(self, fields):
        import mmap
        offsets, end = {}, 0
        for name, shape, dtype in fields:
            end += -end % self.ALIGN
            offsets[name] = (end, shape, np.dtype(dtype))
            end += int(np.prod(shape)) * np.dtype(dtype).itemsize
        # private: Python's default anonymous map is shared, and a forked
        # process (a multiprocessing pool's worker) would then run its
        # searches in the same memory as its parent and siblings
        private = {"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS} \
            if hasattr(mmap, "MAP_PRIVATE") else {}
        self._map = mmap.mmap(-1, end + self.HUGE, **private)
        if hasattr(mmap, "MADV_HUGEPAGE"):
            try:
                self._map.madvise(mmap.MADV_HUGEPAGE)
            except OSError:
                pass
        raw = np.frombuffer(self._map, dtype=np.uint8)
        # touch every page now (an anonymous map is allocated on first write),
        # so the first queries do not pay the page faults
        raw[::4096] = 0
        base = -raw.ctypes.data % self.HUGE          # start on a huge-page boundary
        self._arrays = {}
        for name, (off, shape, dtype) in offsets.items():
            n = int(np.prod(shape)) * dtype.itemsize
            self._arrays[name] = raw[base + off:base + off + n].view(dtype).reshape(shape)

    def __getitem__(self, name):
        return self._arrays[name]


#: What a search reads besides the graph: per-tetrahedron cost factors and
#: exclusion flags (shared all-ones / all-false arrays when ``plain``) and the
#: weight of the Euclidean bound.
SearchOptions = namedtuple("SearchOptions", ["scale", "excl", "plain", "hw", "lw"])

#: One search's answer before it becomes a :class:`Path`: a :mod:`regn.status`
#: code, the cost, the corridor's tetrahedra and portal faces, and the
#: centroid polyline s, portal centroids, g with its length (None when the
#: caller smooths it anyway).
Route = namedtuple("Route", ["status", "cost", "tets", "portals", "polyline", "length"],
                   defaults=[math.inf, None, None, None, math.inf])


_new_tuple = tuple.__new__
_FOUND = NAMES[OK]


def find_path(mesh, start, goal, smooth=True, cost_scale=None, exclude=None,
              filter=None) -> Path:
    """Cheapest flight from ``start`` to ``goal`` (see the module docstring);
    ``filter``, a :class:`regn.query.paths.filters.QueryFilter`, adds its
    blockers to ``cost_scale`` and ``exclude``."""
    # (the single query's route is kept lean: it is timed against its kernel)
    s, t = point_xyz(start, "start"), point_xyz(goal, "goal")
    scale, excl = cost_options(mesh, cost_scale, exclude, filter)
    if mesh.n_tets == 0:
        return Path(False, NAMES[START_OUTSIDE])
    g = _graph(mesh)
    options = search_options(g, scale, excl)
    slots = g["free_slots"]
    try:                                 # search_slot's lease, inline
        slot = slots.pop()
    except IndexError:
        slot = _another_slot(g)
    try:
        route = search(g, slot, options, s, t, smooth)
    finally:
        slots.append(slot)
    return route_to_path(mesh, (s, t), route, smooth)


def path_ends(start, goal) -> np.ndarray:
    """(2,3) float64: the start and goal points, validated."""
    ends = np.empty((2, 3))
    ends[0] = point_xyz(start, "start")
    ends[1] = point_xyz(goal, "goal")
    return ends


def cost_options(mesh, cost_scale=None, exclude=None, filter=None):
    """Validated (scale, exclude) arrays, either None when it changes
    nothing; a filter's blockers multiply into the one and add to the
    other."""
    scale = excl = None
    if cost_scale is not None or exclude is not None:
        scale, excl = _cost_options(int(mesh.n_tets), cost_scale, exclude)
    if filter is not None:
        scale, excl = filter.applied_to(mesh, scale, excl)
    return scale, excl


def search_options(g, scale, excl) -> SearchOptions:
    """The :class:`SearchOptions` of validated ``scale`` / ``excl`` arrays."""
    plain = scale is None and excl is None
    if plain and "plain" in g:
        return g["plain"]
    # every cost is at least min_scale times its base cost, so the bounds
    # scaled by min_scale (at most 1: see below) stay admissible and consistent
    min_scale = 1.0
    if scale is None:
        scale = g["ones"]
    else:
        scale = np.ascontiguousarray(scale, np.float64)   # (the kernel entry point's types)
        if len(scale):
            min_scale = float(scale.min())
            if not math.isfinite(min_scale):
                min_scale = 1.0          # every tet impassable: nothing to bound
    excl = g["no_excl"] if excl is None else np.ascontiguousarray(excl, np.bool_)
    # the stored-cost check allows a relative slack of ADMISSIBLE_SLACK;
    # shrinking the bound by as much keeps every reduced cost non-negative
    # the links from s and g are not scaled: a bound times more than 1
    # would overshoot them
    weight = min(min_scale, 1.0)
    hw = weight * (1.0 - ADMISSIBLE_SLACK) if g["admissible"] else 0.0
    # (the landmark bounds hold on any costs)
    options = SearchOptions(scale, excl, plain, hw, weight)
    if plain:
        g["plain"] = options
    return options


def search(g, slot, options, start, goal, smooth=True, count=True) -> Route:
    """One search from ``start`` to ``goal`` (three floats each) in ``slot``
    (:func:`search_slot`): its :class:`Route`, the arrays copied out of the
    slot's buffers. ``count``: count it towards the landmark table (a batch
    counts its searches before it starts)."""
    if count:
        count_search(g)
    work = slot.work
    x0, y0, z0 = start
    x1, y1, z1 = goal
    args = (slot_state(g, slot), float(x0), float(y0), float(z0), float(x1), float(y1),
            float(z1), options.scale, options.excl, options.plain, options.hw, options.lw,
            next_query_id(slot))
    if "search" not in g:                # (numba's type dispatch would cost ~3 us a call)
        from ..._jit import entry_point
        g["search"] = entry_point(_kernels().find_path, args)
    status, cost, n, length = g["search"](*args)
    if status != OK:
        if status == _kernels().BROKEN_CHAIN:
            raise QueryError("internal error: broken path chain")
        return Route(status)
    polyline = None if smooth and n else work.points[:n + 2].copy()
    # (tuple.__new__: a namedtuple's own constructor costs 0.1 us more)
    return _new_tuple(Route, (status, cost, work.corridor[:n + 1].copy(),
                              work.portals[:n].copy(), polyline, length))


def next_query_id(slot) -> int:
    """The slot's next query id (the uint16 stamps start over before they
    wrap)."""
    qid = slot.qid[0] = slot.qid[0] + 1
    if qid > MAX_QID:
        K = _kernels()
        slot.graph.node_u16[:, K.ST0:K.ST1 + 1] = 0
        qid = slot.qid[0] = 1
    return qid


def route_to_path(mesh, ends, route, smooth=True) -> Path:
    """The :class:`Path` of a :class:`Route`: smoothed through its portals,
    or its centroid polyline."""
    status, cost, tets, portals, pts, length = route
    if status != OK:
        return Path(False, NAMES[status])
    if smooth and len(portals):
        pts = smoothed_turning_points(mesh, np.asarray(ends[0], np.float64),
                                      np.asarray(ends[1], np.float64), portals)[0]
        pts = taut_mesh_path(mesh, pts)
        length = polyline_length(pts)
    return Path(True, _FOUND, cost, tets, portals, pts, length)


def _cost_options(T, cost_scale, exclude):
    """Validated (scale, exclude) arrays; an unusable scale is impassable."""
    scale = excl = None
    if cost_scale is not None:
        scale = np.asarray(cost_scale, dtype=np.float64).reshape(-1)
        if scale.shape != (T,):
            raise QueryError(f"cost_scale must have one value per tetrahedron ({T}), "
                             f"got shape {np.shape(cost_scale)}")
        scale = np.where(np.isfinite(scale) & (scale >= 0), scale, np.inf)
    if exclude is not None:
        excl = np.asarray(exclude)
        if excl.size != T:               # any shape holding one flag per tet, as cost_scale
            raise QueryError(f"exclude must be a bool mask of {T} tetrahedra, "
                             f"got shape {excl.shape}")
        excl = excl.astype(np.bool_).reshape(-1)
    return scale, excl
