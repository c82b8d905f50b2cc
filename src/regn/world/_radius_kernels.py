"""Compiled kernels of a world's radius paths (:mod:`regn.world.radius`).

A tile's walls here are its *real* walls and its neighbours' within a
margin (:mod:`regn.world.clearance`), held in one
:class:`regn.query.walls.nearest.WallBVH` a tile. The search is the walk
of :func:`regn.world._walk_kernels.world_astar` over the same slots, less
what a sphere of radius r cannot pass:

* a tile's own edges whose witness segment comes within r_eff of a wall
  (their cost is -1 in the slot's masked edge table, as
  :func:`regn.query.radius.portals.radius_graph` masks a mesh's);
* a linked face whose witness has less clearance (its ``ACR`` is -1: a
  wall for this radius), and the edges through a tetrahedron into a
  linked face or out of one whose witness segment does not keep r_eff
  (:func:`link_edges`: ``XOP[u, 4 side + q]``);
* the start's (goal's) links to its tetrahedron's faces that do not keep
  r_eff (``seed``).
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from .._jit import kernel, prange
from ..query.paths._path_kernels import ET0, ET1
from ..query.radius._portal_kernels import _link_keeps
from ..query.sight._sweep_kernels import segment_clearance
from ..status import OK, UNREACHABLE
from ._walk_kernels import MASK, SHIFT


@kernel
def _d3(cen, f, p):
    return math.sqrt((cen[f, 0] - p[0]) ** 2 + (cen[f, 1] - p[1]) ** 2
                     + (cen[f, 2] - p[2]) ** 2)


@kernel
def _dff(ca, fa, cb, fb):
    return math.sqrt((ca[fa, 0] - cb[fb, 0]) ** 2 + (ca[fa, 1] - cb[fb, 1]) ** 2
                     + (ca[fa, 2] - cb[fb, 2]) ** 2)


@kernel(parallel=True)
def link_edges(bvh, EI, TFI, ACR, witness, clear, r_eff, out):
    """out[u, 4 side + q] (F,8) uint8: 1 when the edge from face u through
    its tetrahedron ``EI[u, ET0 + side]`` to that tetrahedron's face q,
    one of the two being a linked face (``ACR`` >= 0), has a witness
    segment keeping r_eff (both witnesses' clearances in ``clear``)."""
    box, node, tri, tbox, flat, depth = (bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat,
                                         bvh.depth)
    F = out.shape[0]
    for u in prange(F):
        stack = np.empty(2 * depth + 4, dtype=np.int64)
        for j in range(8):
            out[u, j] = 0
        if not clear[u] >= r_eff:
            continue
        for side in range(2):
            t = EI[u, ET0 + side]
            if t < 0:
                continue
            for q in range(4):
                v = TFI[t, q]
                if v == u or not (ACR[v] >= 0 or (ACR[u] >= 0 and EI[v, ET1] >= 0)):
                    continue
                if _link_keeps(box, node, tri, tbox, flat, stack, witness[u], clear[u],
                               witness[v], clear[v], r_eff):
                    out[u, 4 * side + q] = 1


@kernel
def points_clearance(bvh, pts, cap, out):
    """out[i]: pts[i]'s exact distance to the nearest BVH triangle, ``cap``
    when none is nearer (NaN points: NaN)."""
    box, node, tri, tbox, flat, depth = (bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat,
                                         bvh.depth)
    stack = np.empty(2 * depth + 4, dtype=np.int64)
    for i in range(pts.shape[0]):
        x, y, z = pts[i, 0], pts[i, 1], pts[i, 2]
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            out[i] = math.nan
            continue
        out[i] = segment_clearance(box, node, tri, tbox, flat, stack, x, y, z, x, y, z, cap,
                                   False)[0]


@kernel
def nearest_row(bvh, x):
    """The BVH row of the triangle nearest point x (-1: none)."""
    stack = np.empty(2 * bvh.depth + 4, dtype=np.int64)
    return segment_clearance(bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat, stack, x[0],
                             x[1], x[2], x[0], x[1], x[2], math.inf, False)[1]


@kernel
def segments_clear(bvh, a, b, r, out):
    """out[i] = no BVH triangle comes within ``r`` of segment a[i] b[i]
    (touching counts as coming within)."""
    box, node, tri, tbox, flat, depth = (bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat,
                                         bvh.depth)
    stack = np.empty(2 * depth + 4, dtype=np.int64)
    for i in range(a.shape[0]):
        _, k, _, _, _, _, _, _ = segment_clearance(
            box, node, tri, tbox, flat, stack, a[i, 0], a[i, 1], a[i, 2], b[i, 0], b[i, 1],
            b[i, 2], r * (1.0 + 1e-12) + 1e-300, True)
        out[i] = k < 0


@kernel(inline=True)
def _relax(dist, stamp, par, via, cen, heap, qid, b, v, nd, parent, t, anchor, hw):
    """(as regn.world._walk_kernels._relax)"""
    st = stamp[v]
    if st == 2 * qid + 1:
        return
    if st != 2 * qid or nd < dist[v]:
        stamp[v] = 2 * qid
        dist[v] = nd
        par[v] = parent
        via[v] = t
        heapq.heappush(heap, (nd + hw * _d3(cen, v, anchor[b]) + anchor[b, 3],
                              (b << SHIFT) | v))


@kernel
def radius_astar(EF, EI, CEN, TFI, ACR, XOP, RANK, DIST, PAR, VIA, STAMP, slot_of, allowed,
                 qid, s_slot, s_tet, s, g_slot, g_tet, g, seed, direct, anchor, hw,
                 max_expand, counts):
    """:func:`regn.world._walk_kernels.world_astar` for a radius (module
    docstring): ``EF`` and ``ACR`` are the slots' tables masked for it,
    ``XOP`` their link-edge flags, ``seed`` (2,4) the open links from the
    start to its tetrahedron's faces and from the goal's; ``direct`` the
    cost of the straight segment s g when it keeps the radius (inf when
    not, or when s and g are in different tetrahedra). Returns
    ``(status, cost, codes, vias)``; ``status`` -2 when it gave up."""
    empty = np.zeros(0, np.int64)
    best = direct
    heap = [(0.0, np.int64(0))]
    heap.pop()
    tf = TFI[s_slot]
    for k in range(4):
        if not seed[0, k]:
            continue
        f = tf[s_tet, k]
        _relax(DIST[s_slot], STAMP[s_slot], PAR[s_slot], VIA[s_slot], CEN[s_slot], heap, qid,
               s_slot, f, _d3(CEN[s_slot], f, s), np.int64(-1), s_tet, anchor, hw)
    gf = TFI[g_slot][g_tet]
    end = np.int64(-1)
    expanded = 0
    while len(heap):
        key, code = heapq.heappop(heap)
        counts[0] += 1
        if key >= best:
            break
        a = code >> SHIFT
        u = code & MASK
        cen, dist, stamp, par, via = CEN[a], DIST[a], STAMP[a], PAR[a], VIA[a]
        d = dist[u]
        if stamp[u] != 2 * qid:
            continue
        h = hw * _d3(cen, u, anchor[a]) + anchor[a, 3]
        if key > (d + h) * (1.0 + 1e-12) + 1e-9:
            continue
        stamp[u] = 2 * qid + 1
        counts[1] += 1
        expanded += 1
        if expanded > max_expand:
            return -2, best, empty, empty
        if a == g_slot:
            for k in range(4):
                if u == gf[k] and seed[1, k]:
                    c = d + _d3(cen, u, g)
                    if c < best:
                        best, end = c, code
        ef, ei, acr, tfi, xop = EF[a], EI[a], ACR[a], TFI[a], XOP[a]
        for k in range(6):
            c = ef[u, 2 * k]
            if not c >= 0.0:
                continue
            _relax(dist, stamp, par, via, cen, heap, qid, a, np.int64(ei[u, 2 * k + 1]),
                   d + c, code, np.int64(ei[u, ET0 if k < 3 else ET1]), anchor, hw)
        linked = acr[u] >= 0
        for side in range(2):
            t = ei[u, ET0 + side]
            if t < 0:
                continue
            for q in range(4):
                v = tfi[t, q]
                if v == u or not xop[u, 4 * side + q]:
                    continue
                _relax(dist, stamp, par, via, cen, heap, qid, a, v,
                       d + _dff(cen, u, cen, v), code, np.int64(t), anchor, hw)
        if linked:
            x = acr[u]
            b = slot_of[x >> SHIFT]
            if b >= 0 and allowed[b]:
                v = RANK[b][x & MASK]
                if ACR[b][v] >= 0:
                    _relax(DIST[b], STAMP[b], PAR[b], VIA[b], CEN[b], heap, qid, b, v, d,
                           code, np.int64(-1), anchor, hw)
    if not best < math.inf:
        return UNREACHABLE, best, empty, empty
    n = 0
    c = end
    while c >= 0:
        n += 1
        c = PAR[c >> SHIFT][c & MASK]
    codes = np.empty(n, np.int64)
    vias = np.empty(n, np.int64)
    c = end
    for i in range(n - 1, -1, -1):
        codes[i] = c
        vias[i] = VIA[c >> SHIFT][c & MASK]
        c = PAR[c >> SHIFT][c & MASK]
    return OK, best, codes, vias


@kernel
def segment_pieces(px, py, pz, table, a, b):
    """``(t (m+1,), tile (m,))``: segment a b cut where it crosses the
    inner tile planes ``px``, ``py``, ``pz`` (each axis's planes, first and
    last the world's box), piece i from t[i] to t[i + 1] in tile
    ``table[i, j, k]`` of the grid cell holding its middle (-1 outside the
    world)."""
    cuts = np.empty(px.shape[0] + py.shape[0] + pz.shape[0] + 2)
    cuts[0] = 0.0
    cuts[1] = 1.0
    n = 2
    for k in range(3):
        planes = px if k == 0 else (py if k == 1 else pz)
        d = b[k] - a[k]
        if d == 0.0:
            continue
        for j in range(1, planes.shape[0] - 1):
            x = (planes[j] - a[k]) / d
            if 0.0 < x < 1.0:
                cuts[n] = x
                n += 1
    cuts = np.unique(cuts[:n])
    m = cuts.shape[0] - 1
    tile = np.full(m, -1, np.int64)
    for i in range(m):
        f = 0.5 * (cuts[i] + cuts[i + 1])
        ijk = np.empty(3, np.int64)
        inside = True
        for k in range(3):
            planes = px if k == 0 else (py if k == 1 else pz)
            x = a[k] + f * (b[k] - a[k])
            j = np.searchsorted(planes, x, side="right") - 1
            if j < 0 or j >= planes.shape[0] - 1:
                inside = False
            ijk[k] = j
        if inside:
            tile[i] = table[ijk[0], ijk[1], ijk[2]]
    return cuts, tile
