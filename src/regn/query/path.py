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
             # per-side search state (0 forward, 1 backward); a side pushes
             # at most once per edge plus its <= 4 seeds
             gscore=np.full((2, F + 1), np.inf), potential=np.zeros((2, F + 1)),
             parent=np.full((2, F + 1), -1, np.int32), ptet=np.full((2, F + 1), -1, np.int32),
             state=np.zeros((2, F + 1), np.int64), qid=[0],
             heap_key=np.zeros((2, len(dst) + 16)), heap_node=np.zeros((2, len(dst) + 16), np.int32),
             ones=np.ones(T), no_excl=np.zeros(T, dtype=np.bool_),
             chain=np.zeros(2 * F + 4, np.int64),
             chain_tet=np.zeros(2 * F + 4, np.int64))
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
               S, G, start, goal, hw, gscore, potential, parent, ptet, state, qid,
               heap_key, heap_node, chain, chain_tet):
    """Bidirectional A* from the start point (in tet S) to the goal point (in
    tet G) over the face graph. Returns (cost, n): cost is inf when
    unreachable; chain[:n] are the portal faces in order and chain_tet[k]
    the tetrahedron crossed from chain[k-1] to chain[k] (k >= 1); n = -1
    for a broken parent chain (impossible on a sound graph).

    Side 0 searches forward from s, side 1 backward from g, both on costs
    reduced by the average potential p(v) = hw * (|v - g| - |v - s|) / 2
    (forward keys g + p, backward keys g - p). With every cost at least
    ``hw`` times the centroid distance, both reduced graphs have no negative
    edge, so each side is a Dijkstra search and the usual stopping rule
    holds: stop when the two smallest keys sum to at least the best meeting
    cost found. Every s-g path meets both searches on some edge, and the
    potentials cancel along it, so that cost is the true optimum.

    ``plain``: no cost_scale and no exclude (skips two loads per edge).
    ``state[side, v]`` is 2*qid once v is labelled in this query and 2*qid+1
    once it is settled, so nothing is cleared between queries."""
    F = indptr.shape[0] - 1
    sx, sy, sz = start[0], start[1], start[2]
    gx, gy, gz = goal[0], goal[1], goal[2]
    labelled = 2 * qid
    settled = labelled + 1
    half = 0.5 * hw
    best = np.inf                        # cheapest s-g path seen so far
    meet_u = -1                          # it crosses from meet_u (forward
    meet_v = -1                          # label) to meet_v (backward label)
    meet_t = -1                          # through this tet (-1: meet_u == meet_v)
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
            if state[side, f] == labelled and d >= gscore[side, f]:
                continue
            dg = np.sqrt((cen[f, 0] - gx) ** 2 + (cen[f, 1] - gy) ** 2 + (cen[f, 2] - gz) ** 2)
            ds = np.sqrt((cen[f, 0] - sx) ** 2 + (cen[f, 1] - sy) ** 2 + (cen[f, 2] - sz) ** 2)
            pot = half * (dg - ds) if side == 0 else half * (ds - dg)
            state[side, f] = labelled
            gscore[side, f] = d
            potential[side, f] = pot
            parent[side, f] = -1
            ptet[side, f] = -1
            if side == 0:
                size0 = _heap_push(heap_key[0], heap_node[0], size0, d + pot, f)
            else:
                size1 = _heap_push(heap_key[1], heap_node[1], size1, d + pot, f)
    for k in range(4):                   # S and G share a face
        f = tet_faces[G, k]
        if state[0, f] == labelled and state[1, f] == labelled:
            c = gscore[0, f] + gscore[1, f]
            if c < best:
                best, meet_u, meet_v, meet_t = c, f, f, -1
    while size0 > 0 and size1 > 0:
        top0 = heap_key[0, 0]
        top1 = heap_key[1, 0]
        if top0 + top1 >= best:
            break
        side = 0 if top0 <= top1 else 1
        other = 1 - side
        top_other = top1 if side == 0 else top0
        f = heap_node[side, 0]
        key = heap_key[side, 0]
        if side == 0:
            size0 = _heap_pop(heap_key[0], heap_node[0], size0)
        else:
            size1 = _heap_pop(heap_key[1], heap_node[1], size1)
        if state[side, f] == settled or key != gscore[side, f] + potential[side, f]:
            continue                     # a stale heap entry
        state[side, f] = settled
        gf = gscore[side, f]
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
            sv = state[side, v]
            if sv == settled:
                continue
            ng = gf + w
            if state[other, v] >= labelled:
                c = ng + gscore[other, v]
                if c < best:
                    best, meet_t = c, t
                    meet_u, meet_v = (f, v) if side == 0 else (v, f)
            if sv == labelled and ng >= gscore[side, v]:
                continue
            dg = np.sqrt((cen[v, 0] - gx) ** 2 + (cen[v, 1] - gy) ** 2 + (cen[v, 2] - gz) ** 2)
            ds = np.sqrt((cen[v, 0] - sx) ** 2 + (cen[v, 1] - sy) ** 2 + (cen[v, 2] - sz) ** 2)
            pot = half * (dg - ds) if side == 0 else half * (ds - dg)
            # any path through v costs at least ng + (bound on the rest), and
            # at least its key here plus the other side's smallest key when
            # the other side has not reached v yet
            if ng + hw * (dg if side == 0 else ds) >= best:
                continue
            if state[other, v] < labelled and ng + pot + top_other >= best:
                continue
            state[side, v] = labelled
            gscore[side, v] = ng
            potential[side, v] = pot
            parent[side, v] = f
            ptet[side, v] = t
            if side == 0:
                size0 = _heap_push(heap_key[0], heap_node[0], size0, ng + pot, v)
            else:
                size1 = _heap_push(heap_key[1], heap_node[1], size1, ng + pot, v)
    if not best < np.inf:
        return np.inf, 0
    # forward half: meet_u back to a face of S, then reversed in place
    n = 0
    v = meet_u
    while v >= 0 and n <= F:
        chain[n] = v
        chain_tet[n] = ptet[0, v]
        n += 1
        v = parent[0, v]
    if v >= 0:
        return best, -1
    for i in range(n // 2):
        chain[i], chain[n - 1 - i] = chain[n - 1 - i], chain[i]
    # chain_tet[k] is the tet crossed from chain[k]'s parent (chain[k-1]
    # after the reversal) into chain[k], so it is reversed with the chain
    for i in range(n // 2):
        chain_tet[i], chain_tet[n - 1 - i] = chain_tet[n - 1 - i], chain_tet[i]
    # backward half: meet_v on to a face of G
    v = meet_v
    if meet_v != meet_u:
        chain[n] = v
        chain_tet[n] = meet_t
        n += 1
    limit = 2 * F + 2
    while n < limit:
        nxt = parent[1, v]
        if nxt < 0:
            break
        chain[n] = nxt
        chain_tet[n] = ptet[1, v]
        n += 1
        v = nxt
    if n >= limit:
        return best, -1
    return best, n


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
    # the stored-cost check allows a relative slack of 1e-6; shrinking the
    # bound by as much keeps every reduced cost non-negative
    hw = min_scale * (1.0 - 1e-6) if g["admissible"] else 0.0
    g["qid"][0] += 1
    cost, n = _kernel()(g["indptr"], g["dst"], g["etet"], g["ew"], g["cen"], scale, excl,
                        plain, g["tet_faces"], g["is_portal"], S, G, s, gpt, hw,
                        g["gscore"], g["potential"], g["parent"], g["ptet"], g["state"],
                        g["qid"][0], g["heap_key"], g["heap_node"], g["chain"], g["chain_tet"])
    if n <= 0:
        if n < 0:
            raise QueryError("internal error: broken path chain")
        return Path(False, "unreachable")
    chain = g["chain"][:n]
    portals = g["face_order"][chain]
    corridor = np.empty(n + 1, dtype=np.int64)
    corridor[0] = S
    corridor[1:n] = g["chain_tet"][1:n]
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
