"""Shortest flights: A* over the face graph, then string pulling.

Graph. The nodes are the *portal* faces (faces shared by two tetrahedra;
boundary faces are walls and never crossed). Crossing tetrahedron T from its
face slot i to slot j costs ``portal_costs[T, pair(i, j), 0]`` (times
``cost_scale[T]`` when given); an edge whose cost is NaN or negative is
impassable, and an excluded tetrahedron (``exclude[T]``) is never entered.
The start point s in tetrahedron S links to each portal face of S at
``|s - centroid(face)|``; each portal face of the goal tetrahedron G links to g
at ``|centroid - g|``; S == G costs ``|s - g|``.

Search. A* with the heuristic ``|centroid(face) - g|``. That heuristic is
admissible and consistent when every stored cost is at least the distance
between the two face centroids (the builder writes exactly that distance);
this is checked once per mesh with a relative slack of 1e-6, and when it
fails the search runs as Dijkstra (heuristic 0). With ``cost_scale`` the
heuristic is multiplied by ``min(cost_scale)``: every edge then costs at
least that factor times its stored cost, so the scaled bound stays
admissible and consistent. The cost returned is always the graph optimum.
Start and goal in different connected
components are answered ``'unreachable'`` from precomputed component labels
without searching.

The search kernel is compiled with numba when it is importable (lazy import,
``cache=True``); without numba the same code runs as plain Python (same
answers, ~100x slower). It keeps its open set in a 4-ary heap on preallocated
arrays, stops relaxing any face whose bound already exceeds the best goal link
found, and walks an int32 copy of the face graph renumbered along a Z-order
curve (faces near in space are near in memory). Per-query state is stamped
with a query id, so nothing is cleared between queries; one mesh's scratch is
not safe to search from two threads at once.

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

from dataclasses import dataclass, field

import numpy as np

from . import as_point, scratch
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
    indptr = np.zeros(F + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=F), out=indptr[1:])
    dst, etet, ew = dst[order], etet[order], ew[order]
    # int32 node/tet indices halve the memory the search walks (a u16 file
    # has < 65 536 faces and tets)
    g = dict(indptr=indptr.astype(np.int32), dst=dst.astype(np.int32), etet=etet.astype(np.int32),
             ew=ew.astype(np.float64), cen=np.ascontiguousarray(cen[face_order]),
             admissible=admissible, T=T, F=F, is_portal=is_portal[face_order],
             tet_faces=np.ascontiguousarray(rank[tf]), face_order=face_order,
             gscore=np.full(F + 1, np.inf), parent=np.full(F + 1, -1, np.int32),
             ptet=np.full(F + 1, -1, np.int32), state=np.zeros(F + 1, np.int64), qid=[0],
             heap_key=np.zeros(len(dst) + 16), heap_node=np.zeros(len(dst) + 16, np.int32),
             ones=np.ones(T), no_excl=np.zeros(T, dtype=np.bool_),
             chain=np.zeros(F + 2, np.int64))
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


def _search_py(indptr, dst, etet, ew, cen, scale, excl, plain, tet_faces, is_portal,
               S, G, start, goal, hw, gscore, parent, ptet, state, qid,
               heap_key, heap_node, chain):
    """A* from the start point (in tet S) to the goal point (in tet G) over
    the face graph; node F is the virtual goal. Returns (cost, n): cost is
    inf when unreachable, chain[:n] the portal faces in order, n = -1 for a
    cyclic parent chain (impossible on a sound graph). ``plain``: no
    cost_scale and no exclude (skips two loads per edge). ``state[v]`` is
    2*qid while v is open in this query and 2*qid+1 once closed, so nothing
    is cleared between queries."""
    F = indptr.shape[0] - 1
    gx, gy, gz = goal[0], goal[1], goal[2]
    opened = 2 * qid
    done = opened + 1
    g0, g1, g2, g3 = tet_faces[G, 0], tet_faces[G, 1], tet_faces[G, 2], tet_faces[G, 3]
    best = np.inf                        # cost of the best goal link so far
    size = 0
    for k in range(4):
        f = tet_faces[S, k]
        if not is_portal[f]:
            continue
        d = np.sqrt((cen[f, 0] - start[0]) ** 2 + (cen[f, 1] - start[1]) ** 2
                    + (cen[f, 2] - start[2]) ** 2)
        if state[f] != opened or d < gscore[f]:
            state[f] = opened
            gscore[f] = d
            parent[f] = -1
            ptet[f] = -1
            h = hw * np.sqrt((cen[f, 0] - gx) ** 2 + (cen[f, 1] - gy) ** 2
                             + (cen[f, 2] - gz) ** 2)
            size = _heap_push(heap_key, heap_node, size, d + h, f)
    while size > 0:
        f = heap_node[0]
        size = _heap_pop(heap_key, heap_node, size)
        if f == F:
            n = 0
            v = parent[F]
            while v >= 0 and n <= F:
                chain[n] = v
                n += 1
                v = parent[v]
            if v >= 0:
                return best, -1
            chain[:n] = chain[:n][::-1].copy()
            return best, n
        if state[f] == done:
            continue                     # a stale heap entry
        state[f] = done
        gf = gscore[f]
        if f == g0 or f == g1 or f == g2 or f == g3:
            dg = gf + np.sqrt((cen[f, 0] - gx) ** 2 + (cen[f, 1] - gy) ** 2
                              + (cen[f, 2] - gz) ** 2)
            if dg < best:
                best = dg
                parent[F] = f
                size = _heap_push(heap_key, heap_node, size, dg, F)
        for e in range(indptr[f], indptr[f + 1]):
            w = ew[e]
            if w < 0:
                continue                 # impassable stored cost
            t = etet[e]
            if not plain:
                if excl[t]:
                    continue
                w = w * scale[t]
            v = dst[e]
            sv = state[v]
            if sv == done:
                continue
            ng = gf + w
            if sv != opened or ng < gscore[v]:
                h = hw * np.sqrt((cen[v, 0] - gx) ** 2 + (cen[v, 1] - gy) ** 2
                                 + (cen[v, 2] - gz) ** 2)
                if ng + h >= best:
                    continue             # cannot beat the goal link found
                state[v] = opened
                gscore[v] = ng
                parent[v] = f
                ptet[v] = t
                size = _heap_push(heap_key, heap_node, size, ng + h, v)
    return np.inf, 0


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
            _KERNEL["search"] = jit(_search_py)
        except Exception:
            _KERNEL["search"] = _search_py
    return _KERNEL["search"]


def find_path(mesh, start, goal, smooth=True, cost_scale=None, exclude=None) -> Path:
    """Cheapest flight from ``start`` to ``goal`` (see the module docstring)."""
    from .locate import locate_few
    from .sample import components
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
    if not np.isfinite(min_scale):
        min_scale = 1.0                  # every tet impassable: nothing to bound
    hw = min_scale if g["admissible"] else 0.0
    g["qid"][0] += 1
    cost, n = _kernel()(g["indptr"], g["dst"], g["etet"], g["ew"], g["cen"], scale, excl,
                        plain, g["tet_faces"], g["is_portal"], S, G, s, gpt, hw,
                        g["gscore"], g["parent"], g["ptet"], g["state"], g["qid"][0],
                        g["heap_key"], g["heap_node"], g["chain"])
    if n < 0:
        raise QueryError("internal error: cyclic path chain")
    if not np.isfinite(cost):
        return Path(False, "unreachable")
    chain = g["chain"][:n]
    portals = g["face_order"][chain]
    corridor = np.empty(n + 1, dtype=np.int64)
    corridor[0] = S
    corridor[1:n] = g["ptet"][chain[1:]]
    corridor[n] = G
    if smooth:
        tri = np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[portals]]
        pts = smooth_polyline(s, gpt, tri)
    else:
        pts = np.empty((n + 2, 3))
        pts[0], pts[1:-1], pts[-1] = s, g["cen"][chain], gpt
    seg = pts[1:] - pts[:-1]
    length = float(np.sqrt((seg * seg).sum(axis=1)).sum())
    return Path(True, "ok", float(cost), corridor, portals, pts, length)
