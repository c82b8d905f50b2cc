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
(the builder writes that distance rounded up to float32); this is checked once per mesh
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

No turning back. A face f reached from face p through tetrahedron A is not
expanded back into A's other faces when A's stored costs obey the triangle
inequality (checked once per tetrahedron, exactly; :func:`_triangle_tets`):
for such a face q, going p -> q directly costs no more than p -> f -> q, and
p was expanded before f. ``cost_scale`` multiplies all of A's costs by one
factor, so the inequality survives it. This halves the edges a search
relaxes, and the optimum is unchanged (the tests compare every cost with an
independent Dijkstra, on maps where the inequality holds and where it does
not).

The kernel is compiled with numba when it is importable (lazy import,
``cache=True``); without numba the same code runs as plain Python (same
answers, ~100x slower). One call locates both ends (the fine-grid scan of
:mod:`regn.query.locate`), checks their components, searches and writes the
corridor, so a query crosses from Python to compiled code once. Each side
keeps its open set in a 4-ary heap on preallocated arrays, and the side with
the smaller open set grows next. Every face's search state (both sides'
costs and bounds, stamps and parents) and its centroid share one 64-byte
row, and its six edges one 64-byte block, so relaxing an edge touches one
cache line; faces are renumbered along a Z-order curve (faces near in space
are near in memory); both tables sit in one huge-page arena, and the kernel
prefetches a face's neighbours before relaxing them. Per-query state is
stamped with a query id, so nothing is cleared between queries; a lock per
mesh lets one search at a time use that state (threads calling find_path on
one mesh take turns; smoothing runs outside the lock).

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

Smoothing (:mod:`regn.query.smooth`): ``points`` is the shortest polyline from
s to g that crosses the corridor's portal triangles in order; each segment
joins two faces of one tetrahedron (or s/g and a face of S/G), so the
polyline stays inside the corridor. ``smooth=False`` gives the
portal-centroid polyline.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

import numpy as np

from . import as_point, scratch
from ._prefetch import numba_prefetch, prefetch
from .locate import _scan_fine, fine_scan_args
from .sample import components
from .smooth import smooth_polyline
from ..errors import QueryError

#: find_path statuses, indexed by the kernel's status code
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
    base = pc.reshape(-1).astype(np.float64)
    keep = (nb[tt, si] >= 0) & (nb[tt, sj] >= 0) & (fi != fj)
    tt, fi, fj, base = tt[keep], fi[keep], fj[keep], base[keep]
    dist = np.linalg.norm(cen[fi] - cen[fj], axis=1)
    good = np.isfinite(base) & (base >= 0)
    admissible = bool(np.all(~good | (base >= dist * (1 - 1e-6))))
    base = np.where(good, base, -1.0)                # -1: impassable
    face_order = _morton_order(cen)
    rank = np.empty(F, dtype=np.int64)
    rank[face_order] = np.arange(F)
    is_portal = np.ones(F, dtype=bool)
    is_portal[np.asarray(mesh.boundary_faces)] = False
    # the two tetrahedra of each face (internal numbering; -1 on walls)
    face_tets = np.full((F, 2), -1, dtype=np.int64)
    face_tets[rank[tf].reshape(-1)] = np.stack(
        [np.repeat(np.arange(T), 4), np.asarray(nb).reshape(-1)], axis=1)
    prunable = _triangle_tets(tf, nb, pc, PORTAL_PAIRS)
    # directed edges, each in the block of its source face: slots 0-2 cross
    # the source's first tetrahedron, 3-5 its second
    src = rank[np.concatenate([fi, fj])]
    dst = rank[np.concatenate([fj, fi])]
    etet = np.concatenate([tt, tt])
    ew = np.concatenate([base, base])
    # an invalid tet listing one face in two slots repeats edges: keep the
    # cheapest of each (source, destination, tet), as a search would
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
    slot = 3 * grp[order] + pos
    arena = _Arena([("edge", (F + 1, 16), np.int32),
                    ("node", (F + 1, NODE_COLUMNS), np.float64)])
    edge_int = arena["edge"]
    edge = edge_int.view(np.float32)
    edge[:, 0:12:2] = -1.0                             # missing: impassable
    edge_int[:, 1:12:2] = F                            # ... to the dummy row
    edge[src[order], 2 * slot] = ew[order]
    edge_int[src[order], 2 * slot + 1] = dst[order]
    edge_int[:F, _ET0] = face_tets[:, 0]
    edge_int[:F, _ET1] = face_tets[:, 1]
    ft = face_tets.clip(0)
    edge_int[:F, _EPRUNE] = (prunable[ft[:, 0]] & (face_tets[:, 0] >= 0)) \
        | ((prunable[ft[:, 1]] & (face_tets[:, 1] >= 0)) << 1)
    node = arena["node"]
    node[:F, _CX:_CZ + 1] = cen[face_order]
    # a route lists each face at most once per side, plus the meeting
    out_len = 2 * F + 4
    g = dict(lock=threading.Lock(), arena=arena, admissible=admissible,
             node_u16=node.view(np.uint16), qid=[0],
             ones=np.ones(T), no_excl=np.zeros(T, dtype=np.bool_),
             portals=np.zeros(out_len, np.int64), corridor=np.zeros(out_len + 1, np.int64),
             points=np.zeros((out_len + 2, 3)))
    # a side pushes at most once per edge plus its <= 4 seeds
    heap_key = np.zeros((2, len(src) + 16))
    heap_node = np.zeros((2, len(src) + 16), np.int32)
    locate_before, locate_after = fine_scan_args(mesh)
    # the kernel's arguments in call order, grouped around the per-query ones
    g["head"] = (edge, edge_int)
    g["mid"] = (np.ascontiguousarray(rank[tf]), is_portal[face_order],
                face_order.astype(np.int64), np.asarray(components(mesh)),
                *locate_before)
    g["tail"] = (*locate_after, node, g["node_u16"], heap_key[0], heap_node[0],
                 heap_key[1], heap_node[1], g["portals"], g["corridor"], g["points"])
    s["path"] = g
    return g


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


# Per-face search record: one 64-byte row of ``node`` (float64), one cache
# line, so relaxing an edge touches one line: g forward, g backward, the two
# Euclidean bounds hw*|v - g| and hw*|v - s| (potential = half their
# difference), the centroid, and in the last slot four uint16 (via
# ``node_u16``): stamp forward, stamp backward, parent forward, parent backward
_G0, _G1, _DG, _DS, _CX, _CY, _CZ = 0, 1, 2, 3, 4, 5, 6
_ST0, _ST1, _PA0, _PA1 = 28, 29, 30, 31        # uint16 columns of node_u16
NODE_COLUMNS = 8
# Per-face edge block: one 64-byte row of ``edge`` (int32 view) per face:
# six (float32 cost, int32 destination) records, then the face's two
# tetrahedra and a bit mask of which of them may be skipped after entry
_ET0, _ET1, _EPRUNE = 12, 13, 14
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


def _query_py(edge, edge_int, scale, excl, plain, hw, qid, tet_faces, is_portal, face_order,
              component, W, loc_indptr, loc_indices, ends, box_lo, box_hi, grid_lo, grid_cell,
              grid_dims, tol, node, node_u16, heap_key0, heap_node0, heap_key1, heap_node1,
              portals, corridor, points):
    """One whole query from the two points ``ends`` (start, goal). Returns
    (status, cost, n, length): status indexes STATUSES (-1: a broken parent
    chain, impossible on a sound graph); when it is 0, ``portals[:n]`` are
    the portal faces crossed (file numbering), ``corridor[:n + 1]`` the
    tetrahedra (``corridor[k]`` lies between portals k-1 and k), and
    ``points[:n + 2]`` the polyline s, portal centroids, g of length
    ``length``.

    The search: side 0 grows forward from s, side 1 backward from g, both
    on costs reduced by the average potential p(v) = (dg - ds) / 2 with
    dg = hw * |v - g| and ds = hw * |v - s| (forward keys g + p, backward
    keys g - p). With every cost at least ``hw`` times the centroid
    distance, neither reduced graph has a negative edge, so each side is a
    Dijkstra search and the usual stopping rule holds: stop when the two
    smallest keys sum to at least the best meeting cost found. Every s-g
    path meets both searches on some edge, and the potentials cancel along
    it, so that cost is the true optimum.

    A stamp is 2*qid once the face is labelled by that side in this query
    and 2*qid+1 once settled, so nothing is cleared between queries; a
    face's bounds are valid once either side has labelled it. ``plain``: no
    cost_scale and no exclude (skips two loads per edge)."""
    F = node.shape[0] - 1
    nothing = 0.0
    _scan_fine(W, loc_indptr, loc_indices, ends, box_lo, box_hi, grid_lo, grid_cell, grid_dims,
               tol, corridor)
    S = corridor[0]
    G = corridor[1]
    sx, sy, sz = ends[0, 0], ends[0, 1], ends[0, 2]
    gx, gy, gz = ends[1, 0], ends[1, 1], ends[1, 2]
    if S < 0:
        return 1, nothing, 0, nothing
    if G < 0:
        return 2, nothing, 0, nothing
    if excl[S] or excl[G]:
        return 4, nothing, 0, nothing
    points[0, 0], points[0, 1], points[0, 2] = sx, sy, sz
    if S == G:
        d = np.sqrt((gx - sx) ** 2 + (gy - sy) ** 2 + (gz - sz) ** 2)
        points[1, 0], points[1, 1], points[1, 2] = gx, gy, gz
        return 0, d, 0, d
    if component[S] != component[G]:
        return 3, nothing, 0, nothing
    labelled = 2 * qid
    settled = labelled + 1
    best = np.inf
    meet_u = -1
    meet_v = -1
    size0 = 0
    size1 = 0
    for side in range(2):
        T = S if side == 0 else G
        px, py, pz = (sx, sy, sz) if side == 0 else (gx, gy, gz)
        for k in range(4):
            f = tet_faces[T, k]
            if not is_portal[f]:
                continue
            cx, cy, cz = node[f, _CX], node[f, _CY], node[f, _CZ]
            d = np.sqrt((cx - px) ** 2 + (cy - py) ** 2 + (cz - pz) ** 2)
            if node_u16[f, _ST0 + side] == labelled and d >= node[f, side]:
                continue
            if node_u16[f, _ST0] < labelled and node_u16[f, _ST1] < labelled:
                node[f, _DG] = hw * np.sqrt((cx - gx) ** 2 + (cy - gy) ** 2 + (cz - gz) ** 2)
                node[f, _DS] = hw * np.sqrt((cx - sx) ** 2 + (cy - sy) ** 2 + (cz - sz) ** 2)
            pot = 0.5 * (node[f, _DG] - node[f, _DS])
            node_u16[f, _ST0 + side] = labelled
            node_u16[f, _PA0 + side] = NO_PARENT
            node[f, side] = d
            if side == 0:
                size0 = _heap_push(heap_key0, heap_node0, size0, d + pot, f)
            else:
                size1 = _heap_push(heap_key1, heap_node1, size1, d - pot, f)
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
        if node_u16[f, _ST0 + side] == settled or \
                key != gf + sign * (0.5 * (node[f, _DG] - node[f, _DS])):
            continue                     # a stale heap entry
        node_u16[f, _ST0 + side] = settled
        # entered from parent p through one of f's tetrahedra: when that
        # tetrahedron's costs obey the triangle inequality its other faces
        # are no cheaper via f than straight from p (see _triangle_tets)
        lo, hi = 0, 6
        p = node_u16[f, _PA0 + side]
        if p != NO_PARENT:
            t0 = edge_int[f, _ET0]
            if t0 == edge_int[p, _ET0] or t0 == edge_int[p, _ET1]:
                if edge_int[f, _EPRUNE] & 1:
                    lo = 3
            elif edge_int[f, _EPRUNE] & 2:
                hi = 3
        for k in range(lo, hi):
            prefetch(node, NODE_COLUMNS * edge_int[f, 2 * k + 1])
        for k in range(lo, hi):
            w = np.float64(edge[f, 2 * k])
            if w < 0:
                continue
            if not plain:
                t = edge_int[f, _ET0 + k // 3]
                if excl[t]:
                    continue
                w = w * scale[t]
            v = edge_int[f, 2 * k + 1]
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
            if sv < labelled and so < labelled:
                cx, cy, cz = node[v, _CX], node[v, _CY], node[v, _CZ]
                node[v, _DG] = hw * np.sqrt((cx - gx) ** 2 + (cy - gy) ** 2 + (cz - gz) ** 2)
                node[v, _DS] = hw * np.sqrt((cx - sx) ** 2 + (cy - sy) ** 2 + (cz - sz) ** 2)
            dg = node[v, _DG]
            ds = node[v, _DS]
            rest = dg if side == 0 else ds
            if ng + rest >= best:
                continue
            kv = ng + sign * (0.5 * (dg - ds))
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
        return 3, nothing, 0, nothing
    # the route in internal face numbers, built in ``portals``: the forward
    # half from meet_u back to a face of S, reversed in place, then the
    # backward half from meet_v on to a face of G
    n = 0
    v = meet_u
    while v != NO_PARENT and n <= F:
        portals[n] = v
        n += 1
        v = node_u16[v, _PA0]
    if v != NO_PARENT:
        return -1, best, 0, nothing
    for i in range(n // 2):
        portals[i], portals[n - 1 - i] = portals[n - 1 - i], portals[i]
    v = meet_v
    if meet_v != meet_u:
        portals[n] = v
        n += 1
    limit = 2 * F + 2
    while n < limit:
        nxt = node_u16[v, _PA1]
        if nxt == NO_PARENT:
            break
        portals[n] = nxt
        n += 1
        v = nxt
    if n >= limit:
        return -1, best, 0, nothing
    # the tetrahedron between two consecutive portals is the one they share
    # (two tetrahedra share at most one face, so it is unique)
    corridor[0] = S
    for i in range(1, n):
        a, b = portals[i - 1], portals[i]
        ta0, ta1 = edge_int[a, _ET0], edge_int[a, _ET1]
        if ta0 == edge_int[b, _ET0] or ta0 == edge_int[b, _ET1]:
            corridor[i] = ta0
        elif ta1 == edge_int[b, _ET0] or ta1 == edge_int[b, _ET1]:
            corridor[i] = ta1
        else:
            return -1, best, 0, nothing
    corridor[n] = G
    length = 0.0
    px, py, pz = sx, sy, sz
    for i in range(n):
        f = portals[i]
        cx, cy, cz = node[f, _CX], node[f, _CY], node[f, _CZ]
        points[i + 1, 0], points[i + 1, 1], points[i + 1, 2] = cx, cy, cz
        length += np.sqrt((cx - px) ** 2 + (cy - py) ** 2 + (cz - pz) ** 2)
        px, py, pz = cx, cy, cz
        portals[i] = face_order[f]
    points[n + 1, 0], points[n + 1, 1], points[n + 1, 2] = gx, gy, gz
    length += np.sqrt((gx - px) ** 2 + (gy - py) ** 2 + (gz - pz) ** 2)
    return 0, best, n, length


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
            from .locate import _numba_locate
            jit = numba.njit(cache=True, nogil=True)
            g = globals()
            # helpers are compiled first and rebound so the query calls the
            # compiled versions (numba's cache does not track them: after
            # editing one, clear __pycache__)
            for name in ("_heap_push", "_heap_pop"):
                g[name] = jit(g[name])
            g["prefetch"] = numba_prefetch()
            g["_scan_fine"] = _numba_locate()
            _KERNEL["search"] = jit(_query_py)
        except Exception:
            _KERNEL["search"] = _query_py
    return _KERNEL["search"]


def find_path(mesh, start, goal, smooth=True, cost_scale=None, exclude=None) -> Path:
    """Cheapest flight from ``start`` to ``goal`` (see the module docstring)."""
    ends = np.empty((2, 3))
    ends[0] = as_point(start, "start")
    ends[1] = as_point(goal, "goal")
    if cost_scale is None and exclude is None:
        scale = excl = None
    else:
        scale, excl = _cost_options(int(mesh.n_tets), cost_scale, exclude)
    if mesh.n_tets == 0:
        return Path(False, "start_outside")
    g = _graph(mesh)
    plain = scale is None and excl is None
    # every cost is at least min_scale times its base cost, so the
    # Euclidean bound scaled by min_scale stays admissible and consistent
    min_scale = 1.0
    if scale is None:
        scale = g["ones"]
    elif len(scale):
        min_scale = float(scale.min())
        if not math.isfinite(min_scale):
            min_scale = 1.0              # every tet impassable: nothing to bound
    if excl is None:
        excl = g["no_excl"]
    # the stored-cost check allows a relative slack of 1e-6; shrinking the
    # bound by as much keeps every reduced cost non-negative
    hw = min_scale * (1.0 - 1e-6) if g["admissible"] else 0.0
    # one search at a time per mesh: the search state and output buffers are
    # shared (threads wait here instead of corrupting each other's search)
    with g["lock"]:
        qid = g["qid"][0] = g["qid"][0] + 1
        if qid > MAX_QID:                    # uint16 stamps: start over
            g["node_u16"][:, _ST0:_ST1 + 1] = 0
            qid = g["qid"][0] = 1
        status, cost, n, length = _kernel()(*g["head"], scale, excl, plain, hw, qid, *g["mid"],
                                            ends, *g["tail"])
        if status == 0:
            portals = g["portals"][:n].copy()
            corridor = g["corridor"][:n + 1].copy()
            centroid_polyline = None if smooth and n else g["points"][:n + 2].copy()
    if status != 0:
        if status < 0:
            raise QueryError("internal error: broken path chain")
        return Path(False, STATUSES[status])
    if smooth and n:
        tri = np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[portals]]
        pts = smooth_polyline(ends[0], ends[1], tri)
        seg = pts[1:] - pts[:-1]
        length = float(np.sqrt(np.einsum("ij,ij->i", seg, seg)).sum())
    else:
        pts = centroid_polyline
    return Path(True, "ok", float(cost), corridor, portals, pts, float(length))


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
