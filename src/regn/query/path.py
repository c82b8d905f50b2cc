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
(the builder writes exactly that distance); this is checked once per mesh
with a relative slack of 1e-6 (the bounds are shrunk by as much), and when
it fails both potentials are 0 and the search is a bidirectional Dijkstra.
With ``cost_scale`` the bounds are multiplied by ``min(cost_scale)``: every
edge then costs at least that factor times its stored cost, so they stay
admissible and consistent. The search stops when the two frontiers' smallest
keys add up to the cheapest meeting found, so the cost returned is always
the graph optimum. Against one-sided A* it settles about half the faces
(median 554 against 1 172 on the 15 000-tet benchmark map). Start and goal
in different connected components are answered ``'unreachable'`` from
precomputed component labels without searching.

The search kernel is compiled with numba when it is importable (lazy import,
``cache=True``); without numba the same code runs as plain Python (same
answers, ~100x slower). Each side keeps its open set in a 4-ary heap on
preallocated arrays, and the side with the smaller open set grows next.
Every face's search state (both sides' costs, stamps and parents, and its
potential) sits in one 32-byte row; the graph is an array of 8-byte edge
records over faces renumbered along a Z-order curve (faces near in space are
near in memory); these arrays share one huge-page arena, and the kernel
prefetches a face's neighbours before relaxing them. Per-query state is
stamped with a query id, so nothing is cleared between queries; one mesh's
scratch is not safe to search from two threads at once.

A route may touch a face of a tetrahedron and turn back into it when that
is cheaper (a start link is unscaled while ``cost_scale`` can make crossing
a tetrahedron cheap); the corridor then lists that tetrahedron twice.

``length <= cost`` holds whenever every stored cost is at least the distance
between its two face centroids (the builder's rule, checked by ``regn verify``
as ``portal_cost_rule``); with smaller stored costs the path is still the
cheapest by those costs, and its length may exceed them.

Smoothing (:mod:`regn.query.smooth`): ``points`` is the shortest polyline from
s to g that crosses the corridor's portal triangles in order; each segment
joins two faces of one tetrahedron (or s/g and a face of S/G), so the
polyline stays inside the corridor. ``smooth=False`` gives the
portal-centroid polyline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import as_point, scratch
from ._prefetch import numba_prefetch, prefetch
from .locate import locate_few
from .sample import components
from .smooth import smooth_polyline
from ..errors import QueryError

STATUSES = ("ok", "start_outside", "goal_outside", "unreachable", "excluded")


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

    def to_dict(self) -> dict:
        return {"found": self.found, "status": self.status,
                "cost": self.cost if self.found else None,
                "length": self.length if self.found else None,
                "points": self.points.tolist(), "tets": self.tets.tolist(),
                "portals": self.portals.tolist()}


def _graph(mesh) -> dict:
    s = scratch(mesh)
    if "path" in s:
        return s["path"]
    from ..format.layout import PORTAL_PAIRS
    tf = np.asarray(mesh.tet_faces, dtype=np.int64)
    nb = np.asarray(mesh.neighbors)
    pc = np.asarray(mesh.portal_costs)[:, :, 0]
    cen = np.asarray(mesh.face_centroids, dtype=np.float64)
    T, F = len(tf), int(mesh.n_faces)
    pairs = np.asarray(PORTAL_PAIRS, dtype=np.int64)
    tt = np.repeat(np.arange(T), len(pairs))
    si, sj = np.tile(pairs[:, 0], T), np.tile(pairs[:, 1], T)
    fi, fj = tf[tt, si], tf[tt, sj]
    base = pc.reshape(-1)
    keep = (nb[tt, si] >= 0) & (nb[tt, sj] >= 0) & (fi != fj)
    tt, fi, fj, base = tt[keep], fi[keep], fj[keep], base[keep]
    dist = np.linalg.norm(cen[fi] - cen[fj], axis=1)
    good = np.isfinite(base) & (base >= 0)
    admissible = bool(np.all(~good | (base >= dist * (1 - 1e-6))))
    base = np.where(good, base, -1.0)                # -1: impassable
    # the search numbers faces in Morton order of their centroids, so faces
    # near each other in space sit near each other in memory (fewer cache
    # misses per expansion); ``face_order[internal] = file face index``
    face_order = _morton_order(cen)
    rank = np.empty(F, dtype=np.int64)
    rank[face_order] = np.arange(F)
    is_portal = np.ones(F, dtype=bool)
    is_portal[np.asarray(mesh.boundary_faces)] = False
    # directed CSR (both directions)
    src = rank[np.concatenate([fi, fj])]
    dst = rank[np.concatenate([fj, fi])]
    etet = np.concatenate([tt, tt])
    ew = np.concatenate([base, base])
    order = np.argsort(src, kind="stable")
    # what every expansion reads lives in one arena (see _Arena): the CSR
    # offsets; one 8-byte record per directed edge, its cost (stored as
    # float32 in the file, so exact) and its destination as int32 (a u16
    # file has < 65 536 faces); the tet each edge crosses, read only with
    # cost_scale or exclude; the centroids; the per-face search rows
    arena = _Arena([("indptr", (F + 1,), np.int32), ("edge", (len(src), 2), np.float32),
                    ("etet", (len(src),), np.int32), ("cen", (F, 3), np.float64),
                    ("node", (F + 1, NODE_COLUMNS), np.float64)])
    indptr, edge, etet_sorted = arena["indptr"], arena["edge"], arena["etet"]
    np.cumsum(np.bincount(src, minlength=F), out=indptr[1:])
    edge_int = edge.view(np.int32)
    edge[:, 0] = ew[order]
    edge_int[:, 1] = dst[order]
    etet_sorted[:] = etet[order]
    arena["cen"][:] = cen[face_order]
    node = arena["node"]
    # the two tetrahedra of each face (the second -1 on walls), from the
    # mesh's adjacency: face tet_faces[t, k] joins t and neighbors[t, k]
    face_tets = np.full((F, 2), -1, dtype=np.int32)
    face_tets[rank[tf].reshape(-1)] = np.stack(
        [np.repeat(np.arange(T), 4), np.asarray(nb).reshape(-1)], axis=1)
    g = dict(arena=arena, cen=arena["cen"], admissible=admissible, face_order=face_order,
             node_u16=node.view(np.uint16), qid=[0],
             ones=np.ones(T), no_excl=np.zeros(T, dtype=np.bool_),
             chain=np.zeros(2 * F + 4, np.int64), chain_tet=np.zeros(2 * F + 5, np.int64))
    # a side pushes at most once per edge plus its <= 4 seeds
    heap_key = np.zeros((2, len(src) + 16))
    heap_node = np.zeros((2, len(src) + 16), np.int32)
    # the kernel's arguments in call order, grouped around the per-query ones
    g["head"] = (indptr, edge, edge_int, etet_sorted, g["cen"])
    g["mid"] = (np.ascontiguousarray(rank[tf]), face_tets, is_portal[face_order])
    g["state"] = (node, g["node_u16"])
    g["tail"] = (heap_key[0], heap_node[0], heap_key[1], heap_node[1],
                 g["chain"], g["chain_tet"])
    s["path"] = g
    return g


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


# Per-face search record: one 32-byte row of ``node`` (float64) per face,
# two to a cache line, so a relaxation touches one line instead of one per
# array (a query's rows are cold in cache). Columns: g forward, g backward,
# potential (forward sign); the last float64 slot holds four uint16 (via
# ``node_u16``): stamp forward, stamp backward, parent forward, parent
# backward (a u16 file has < 65 536 faces; NO_PARENT marks a seed).
_G0, _G1, _POT = 0, 1, 2
_ST0, _ST1, _PA0, _PA1 = 12, 13, 14, 15        # uint16 columns of node_u16
NODE_COLUMNS = 4
NO_PARENT = 0xFFFF
#: stamps are 2*qid and 2*qid+1 in a uint16: start over before they wrap
MAX_QID = 0x7FFF


class _Arena:
    """Named arrays carved from one anonymous memory map, each on a 64-byte
    boundary, the map asked for transparent huge pages where the OS offers
    them (Linux ``MADV_HUGEPAGE``). A search touches a few hundred scattered
    faces of ~4 MB of arrays, and on 4 KB pages most of those touches also
    miss the TLB. Zero-filled; elsewhere it is plain memory."""

    ALIGN = 64
    HUGE = 2 << 20

    def __init__(self, fields):
        import mmap
        offsets, end = {}, 0
        for name, shape, dtype in fields:
            end += -end % self.ALIGN
            offsets[name] = (end, shape, np.dtype(dtype))
            end += int(np.prod(shape)) * np.dtype(dtype).itemsize
        self._map = mmap.mmap(-1, end + self.HUGE)
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


def _search_py(indptr, edge, edge_int, etet, cen, scale, excl, plain, tet_faces, face_tets,
               is_portal, S, G, start, goal, hw, node, node_u16, qid,
               heap_key0, heap_node0, heap_key1, heap_node1, chain, chain_tet):
    """Bidirectional A* from the start point (in tet S) to the goal point (in
    tet G) over the face graph. Returns (cost, n, length): cost is inf when
    unreachable; chain[:n] are the portal faces in order and chain_tet[k]
    the tetrahedron crossed from chain[k-1] to chain[k] (k >= 1, with
    chain_tet[0] = S and chain_tet[n] = G); n = -1 for a broken parent chain
    (impossible on a sound graph); length is that of the unsmoothed
    polyline s, portal centroids, g.

    Side 0 searches forward from s, side 1 backward from g, both on costs
    reduced by the average potential p(v) = hw * (|v - g| - |v - s|) / 2
    (forward keys g + p, backward keys g - p). With every cost at least
    ``hw`` times the centroid distance, neither reduced graph has a negative
    edge, so each side is a Dijkstra search and the usual stopping rule
    holds: stop when the two smallest keys sum to at least the best meeting
    cost found. Every s-g path meets both searches on some edge, and the
    potentials cancel along it, so that cost is the true optimum.

    ``edge[e] = (cost as float32, dst as int32)`` (the stored costs are
    float32, so nothing is lost), ``etet[e]`` its tetrahedron; ``plain``: no
    cost_scale and no exclude (skips two loads per edge). A stamp is 2*qid
    once the face is labelled by that side in this query and 2*qid+1 once
    settled, so nothing is cleared between queries; the potential of a face
    is valid once either side has labelled it."""
    F = indptr.shape[0] - 1
    sx, sy, sz = start[0], start[1], start[2]
    gx, gy, gz = goal[0], goal[1], goal[2]
    labelled = 2 * qid
    settled = labelled + 1
    best = np.inf                        # cheapest s-g path seen so far
    meet_u = -1                          # it crosses from meet_u (forward
    meet_v = -1                          # label) to meet_v (backward label)
    size0 = 0
    size1 = 0
    for side in range(2):
        T = S if side == 0 else G
        px, py, pz = (sx, sy, sz) if side == 0 else (gx, gy, gz)
        for k in range(4):
            f = tet_faces[T, k]
            if not is_portal[f]:
                continue
            d = np.sqrt((cen[f, 0] - px) ** 2 + (cen[f, 1] - py) ** 2 + (cen[f, 2] - pz) ** 2)
            if node_u16[f, _ST0 + side] == labelled and d >= node[f, side]:
                continue
            if node_u16[f, _ST0] < labelled and node_u16[f, _ST1] < labelled:
                dg = hw * np.sqrt((cen[f, 0] - gx) ** 2 + (cen[f, 1] - gy) ** 2
                                  + (cen[f, 2] - gz) ** 2)
                ds = hw * np.sqrt((cen[f, 0] - sx) ** 2 + (cen[f, 1] - sy) ** 2
                                  + (cen[f, 2] - sz) ** 2)
                node[f, _POT] = 0.5 * (dg - ds)
            node_u16[f, _ST0 + side] = labelled
            node_u16[f, _PA0 + side] = NO_PARENT
            node[f, side] = d
            if side == 0:
                size0 = _heap_push(heap_key0, heap_node0, size0, d + node[f, _POT], f)
            else:
                size1 = _heap_push(heap_key1, heap_node1, size1, d - node[f, _POT], f)
    for k in range(4):                   # S and G share a face
        f = tet_faces[G, k]
        if node_u16[f, _ST0] == labelled and node_u16[f, _ST1] == labelled:
            c = node[f, _G0] + node[f, _G1]
            if c < best:
                best, meet_u, meet_v = c, f, f
    while size0 > 0 and size1 > 0:
        top0 = heap_key0[0]
        top1 = heap_key1[0]
        if top0 + top1 >= best:
            break
        # grow the smaller frontier (it settles fewer faces than growing
        # the side with the smaller key)
        if size0 <= size1:
            side, other, top_other, sign = 0, 1, top1, 1.0
            f = heap_node0[0]
            size0 = _heap_pop(heap_key0, heap_node0, size0)
        else:
            side, other, top_other, sign = 1, 0, top0, -1.0
            f = heap_node1[0]
            size1 = _heap_pop(heap_key1, heap_node1, size1)
        key = top0 if side == 0 else top1
        gf = node[f, side]
        if node_u16[f, _ST0 + side] == settled or key != gf + sign * node[f, _POT]:
            continue                     # a stale heap entry
        node_u16[f, _ST0 + side] = settled
        for e in range(indptr[f], indptr[f + 1]):
            # start every neighbour's row and centroid loading at once
            v = edge_int[e, 1]
            prefetch(node, NODE_COLUMNS * v)
            prefetch(cen, 3 * v)
        for e in range(indptr[f], indptr[f + 1]):
            w = np.float64(edge[e, 0])
            if w < 0:
                continue                 # impassable stored cost
            if not plain:
                t = etet[e]
                if excl[t]:
                    continue
                w = w * scale[t]
            v = edge_int[e, 1]
            sv = node_u16[v, _ST0 + side]
            if sv == settled:
                continue
            ng = gf + w
            so = node_u16[v, _ST0 + other]
            if so >= labelled:
                c = ng + node[v, other]
                if c < best:
                    best = c
                    meet_u, meet_v = (f, v) if side == 0 else (v, f)
            if sv == labelled and ng >= node[v, side]:
                continue
            cx, cy, cz = cen[v, 0], cen[v, 1], cen[v, 2]
            if sv < labelled and so < labelled:
                dg = hw * np.sqrt((cx - gx) ** 2 + (cy - gy) ** 2 + (cz - gz) ** 2)
                ds = hw * np.sqrt((cx - sx) ** 2 + (cy - sy) ** 2 + (cz - sz) ** 2)
                pot = 0.5 * (dg - ds)
                node[v, _POT] = pot
                rest = dg if side == 0 else ds
            else:
                pot = node[v, _POT]
                if side == 0:
                    rest = hw * np.sqrt((cx - gx) ** 2 + (cy - gy) ** 2 + (cz - gz) ** 2)
                else:
                    rest = hw * np.sqrt((cx - sx) ** 2 + (cy - sy) ** 2 + (cz - sz) ** 2)
            # any path through v costs at least ng plus a bound on the rest
            # (hw*|v - g| forward, hw*|v - s| backward), and at least its key
            # plus the other side's smallest key (keys only grow, and if the
            # other side has settled v the exact cost through v is the
            # meeting cost just recorded)
            if ng + rest >= best:
                continue
            kv = ng + sign * pot
            if kv + top_other >= best:
                continue
            node_u16[v, _ST0 + side] = labelled
            node_u16[v, _PA0 + side] = f
            node[v, side] = ng
            if side == 0:
                size0 = _heap_push(heap_key0, heap_node0, size0, kv, v)
            else:
                size1 = _heap_push(heap_key1, heap_node1, size1, kv, v)
    if not best < np.inf:
        return np.inf, 0, np.inf
    # forward half: meet_u back to a face of S, then reversed in place
    n = 0
    v = meet_u
    while v != NO_PARENT and n <= F:
        chain[n] = v
        n += 1
        v = node_u16[v, _PA0]
    if v != NO_PARENT:
        return best, -1, np.inf
    for i in range(n // 2):
        chain[i], chain[n - 1 - i] = chain[n - 1 - i], chain[i]
    # backward half: meet_v on to a face of G
    v = meet_v
    if meet_v != meet_u:
        chain[n] = v
        n += 1
    limit = 2 * F + 2
    while n < limit:
        nxt = node_u16[v, _PA1]
        if nxt == NO_PARENT:
            break
        chain[n] = nxt
        n += 1
        v = nxt
    if n >= limit:
        return best, -1, np.inf
    # the tetrahedron between two consecutive portals is the one they share
    # (two tetrahedra share at most one face, so it is unique)
    chain_tet[0] = S
    for i in range(1, n):
        a, b = chain[i - 1], chain[i]
        ta0, ta1 = face_tets[a, 0], face_tets[a, 1]
        if ta0 == face_tets[b, 0] or ta0 == face_tets[b, 1]:
            chain_tet[i] = ta0
        elif ta1 == face_tets[b, 0] or ta1 == face_tets[b, 1]:
            chain_tet[i] = ta1
        else:
            return best, -1, np.inf
    chain_tet[n] = G
    f = chain[0]
    length = np.sqrt((cen[f, 0] - sx) ** 2 + (cen[f, 1] - sy) ** 2 + (cen[f, 2] - sz) ** 2)
    for i in range(1, n):
        a, b = chain[i - 1], chain[i]
        length += np.sqrt((cen[a, 0] - cen[b, 0]) ** 2 + (cen[a, 1] - cen[b, 1]) ** 2
                          + (cen[a, 2] - cen[b, 2]) ** 2)
    f = chain[n - 1]
    length += np.sqrt((cen[f, 0] - gx) ** 2 + (cen[f, 1] - gy) ** 2 + (cen[f, 2] - gz) ** 2)
    return best, n, length


def _heap_push(key, node, size, k, v):
    """4-ary min-heap on parallel arrays (shallower than binary: fewer cache
    misses per pop); returns the new size."""
    i = size
    while i > 0:
        p = (i - 1) >> 2
        if key[p] <= k:
            break
        key[i] = key[p]
        node[i] = node[p]
        i = p
    key[i] = k
    node[i] = v
    return size + 1


def _heap_pop(key, node, size):
    """Drop the root; returns the new size."""
    size -= 1
    if size == 0:
        return 0
    k = key[size]
    v = node[size]
    i = 0
    while True:
        c = 4 * i + 1
        if c >= size:
            break
        m = c
        km = key[c]
        end = min(c + 4, size)
        for j in range(c + 1, end):
            if key[j] < km:
                km = key[j]
                m = j
        if km >= k:
            break
        key[i] = km
        node[i] = node[m]
        i = m
    key[i] = k
    node[i] = v
    return size


_KERNEL = {}


def _kernel():
    if "search" not in _KERNEL:
        try:
            import numba
            jit = numba.njit(cache=True, nogil=True)
            g = globals()
            # helpers are compiled first and rebound so the search calls
            # the compiled versions
            for name in ("_heap_push", "_heap_pop"):
                g[name] = jit(g[name])
            g["prefetch"] = numba_prefetch()
            _KERNEL["search"] = jit(_search_py)
        except Exception:
            _KERNEL["search"] = _search_py
    return _KERNEL["search"]


def find_path(mesh, start, goal, smooth=True, cost_scale=None, exclude=None) -> Path:
    """Cheapest flight from ``start`` to ``goal`` (see the module docstring)."""
    s = as_point(start, "start")
    gpt = as_point(goal, "goal")
    T = int(mesh.n_tets)
    if cost_scale is None:
        scale = None
    else:
        scale = np.asarray(cost_scale, dtype=np.float64).reshape(-1)
        if scale.shape != (T,):
            raise QueryError(f"cost_scale must have one value per tetrahedron ({T}), "
                             f"got shape {np.shape(cost_scale)}")
        scale = np.where(np.isfinite(scale) & (scale >= 0), scale, np.inf)
    if exclude is None:
        excl = None
    else:
        excl = np.asarray(exclude)
        if excl.shape != (T,):
            raise QueryError(f"exclude must be a bool mask of {T} tetrahedra, "
                             f"got shape {excl.shape}")
        excl = excl.astype(np.bool_)
    ends = np.empty((2, 3))
    ends[0], ends[1] = s, gpt
    S, G = (int(x) for x in locate_few(mesh, ends))
    if S < 0:
        return Path(False, "start_outside")
    if G < 0:
        return Path(False, "goal_outside")
    if excl is not None and (excl[S] or excl[G]):
        return Path(False, "excluded")
    if S == G:
        d = float(np.linalg.norm(gpt - s))
        return Path(True, "ok", d, np.array([S]), np.zeros(0, np.int64),
                    np.stack([s, gpt]), d)
    lab = components(mesh)
    if lab[S] != lab[G]:
        return Path(False, "unreachable")
    g = _graph(mesh)                     # built on the first query that searches
    plain = scale is None and excl is None
    scale = g["ones"] if scale is None else scale
    excl = g["no_excl"] if excl is None else excl
    # every cost is at least min_scale times its base cost, so the
    # Euclidean bound scaled by min_scale stays admissible and consistent
    min_scale = 1.0 if cost_scale is None else float(scale.min()) if T else 1.0
    if not math.isfinite(min_scale):
        min_scale = 1.0                  # every tet impassable: nothing to bound
    # the stored-cost check allows a relative slack of 1e-6; shrinking the
    # bound by as much keeps every reduced cost non-negative
    hw = min_scale * (1.0 - 1e-6) if g["admissible"] else 0.0
    qid = g["qid"][0] = g["qid"][0] + 1
    if qid > MAX_QID:                    # uint16 stamps: start over
        g["node_u16"][:, _ST0:_ST1 + 1] = 0
        qid = g["qid"][0] = 1
    cost, n, length = _kernel()(*g["head"], scale, excl, plain, *g["mid"], S, G, s, gpt, hw,
                                *g["state"], qid, *g["tail"])
    if n <= 0:
        if n < 0:
            raise QueryError("internal error: broken path chain")
        return Path(False, "unreachable")
    chain = g["chain"][:n]
    portals = g["face_order"][chain]
    corridor = g["chain_tet"][:n + 1].copy()
    if smooth:
        tri = np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[portals]]
        pts = smooth_polyline(s, gpt, tri)
        seg = pts[1:] - pts[:-1]
        length = float(np.sqrt(np.einsum("ij,ij->i", seg, seg)).sum())
    else:
        pts = np.empty((n + 2, 3))
        pts[0], pts[-1] = s, gpt
        pts[1:-1] = g["cen"][chain]
    return Path(True, "ok", float(cost), corridor, portals, pts, float(length))
