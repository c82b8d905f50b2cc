"""Compiled kernels of a path across tiles in one walk (:mod:`regn.world.walk`).

The tiles taking part sit in *slots*; each per-tile array is one entry of a
numba typed List indexed by slot (see :class:`regn.world.walk.TileSlots`
for what each list holds). A search node is a face of a tile, coded
``slot << 32 | face`` (the face in the tile's internal, Z-order numbering of
:mod:`regn.query.paths.path`); a face link (face ``fa`` of tile a is face
``fb`` of tile b) is an edge of cost 0 between the two nodes.

* :func:`world_astar`: A* over the union of the slots' face graphs (the
  tiles' own edge blocks, plus edges through a tetrahedron into its linked
  wall faces at their centroid distance, the builder's cost rule), from a
  point in one tile to a point in another; the bound is the straight
  distance to the goal.
* :func:`corridor`: the route's portal triangles (one of each linked
  pair), its tetrahedra and faces in world numbering.
* :func:`world_walk`: the segment walk of
  :func:`regn.query.sight._raycast_kernels.walk_segment`, going on into
  the next tile through a linked face.
* :func:`taut_path`: the single mesh's smoother
  (:mod:`regn.query.paths._smooth_kernels`) on the whole corridor, then
  :func:`straighten`, dropping the points the path sees past (segments
  checked by :func:`world_walk`).
"""

from __future__ import annotations

import math

import numpy as np
from numba.core import types
from numba.experimental import structref
from numba.typed import List

from .._jit import kernel, prefetch
from ..query.paths._path_kernels import (
    EDGE_COLUMNS,
    EPRUNE,
    ET0,
    ET1,
    heap_pop,
    heap_reset,
)
from ..query.paths._smooth_kernels import solve
from ..query.sight._raycast_kernels import RING, walk_segment
from ..status import CLEAR, HIT, OK, UNREACHABLE

SHIFT = 32
#: the slots' lists, in the order of regn.world.walk.FIELDS (WalkLists' fields)
LIST_NAMES = ("EF", "EI", "TFI", "ACR", "RANK", "FO", "NODE", "NODEI", "W", "NBV", "FBV",
              "ACRF", "FT0", "FV", "VX", "TLM", "CEN")
MASK = (1 << 32) - 1
#: world_astar's status when it gave up (max_expand)
GAVE_UP = -2
#: tiles a segment walk may pass through
MAX_HOPS = 4096
#: a walk going on into the next tile starts this far (of the rest of the
#: segment) past the linked face
HOP_NUDGE = 1e-9
#: straighten: give up looking further ahead after this many points in a
#: row out of sight (as regn.world.route.LOOKAHEAD)
LOOKAHEAD = 3
#: columns of a face's search row (NODE: float64; PAR, VIA, STAMP read as int64)
DIST, CX, CY, CZ, PAR, VIA, STAMP, GEN = 0, 1, 2, 3, 4, 5, 6, 7
NODE_COLUMNS = 8
#: world_astar's heap starts this long (and doubles when full)
HEAP0 = 1 << 14


@kernel(inline=True)
def _d3(node, f, p):
    """Straight distance from face f's centroid (its node row) to point p."""
    return math.sqrt((node[f, CX] - p[0]) ** 2 + (node[f, CY] - p[1]) ** 2
                     + (node[f, CZ] - p[2]) ** 2)


@kernel(inline=True)
def _dff(cen, fa, fb):
    return math.sqrt((cen[fa, 0] - cen[fb, 0]) ** 2 + (cen[fa, 1] - cen[fb, 1]) ** 2
                     + (cen[fa, 2] - cen[fb, 2]) ** 2)


@kernel(inline=True)
def _dcp(cen, f, p):
    return math.sqrt((cen[f, 0] - p[0]) ** 2 + (cen[f, 1] - p[1]) ** 2 + (cen[f, 2] - p[2]) ** 2)


@kernel(inline=True)
def _relax(node, nodei, cen, gen, hkey, hnode, size, qid, b, v, nd, parent, t, anchor, hw):
    """Reach face v of slot b at cost nd (from node ``parent`` through
    tetrahedron t) if it is not expanded yet and that is cheaper than
    before in this query (stamp 2 qid: reached, 2 qid + 1: expanded);
    returns the heap's new size. A row whose GEN is not the slot's ``gen``
    gets its centroid from ``cen`` first (rows are filled as the searches
    reach them, not when the tile is placed)."""
    st = nodei[v, STAMP]
    if st == 2 * qid + 1:
        return size
    if st != 2 * qid or nd < node[v, DIST]:
        nodei[v, STAMP] = 2 * qid
        node[v, DIST] = nd
        nodei[v, PAR] = parent
        nodei[v, VIA] = t
        if nodei[v, GEN] != gen:
            node[v, CX] = cen[v, 0]
            node[v, CY] = cen[v, 1]
            node[v, CZ] = cen[v, 2]
            nodei[v, GEN] = gen
        h = hw * math.sqrt((node[v, CX] - anchor[b, 0]) ** 2 + (node[v, CY] - anchor[b, 1]) ** 2
                           + (node[v, CZ] - anchor[b, 2]) ** 2) + anchor[b, 3]
        return _push(hkey, hnode, size, nd + h, (b << SHIFT) | v)
    return size


@kernel(borrows=True)
def _push(key, node, size, k, v):
    """:func:`regn.query.paths._path_kernels.heap_push` (8-ary heap with
    sentinels), compiled without reference counting."""
    key[size + 7] = np.inf
    i = size
    while i > 0:
        p = (i - 1) >> 3
        if key[p] <= k:
            break
        key[i] = key[p]
        node[i] = node[p]
        i = p
    key[i] = k
    node[i] = v
    return size + 1


@kernel
def _grown(a, n, fill):
    out = np.full(n, fill, a.dtype)
    out[:len(a)] = a
    return out


@kernel(inline=True)
def _expand(ef, ei, acr, tfi, tlm, node, nodei, cen, gen, hkey, hnode, size, qid, a, u, d, code,
            anchor, hw, NODE, NODEI, CEN, slot_gen, RANK, slot_of, allowed):
    """Relax the edges of face u of slot a (reached at cost d): its own
    edge block (less those :func:`world_astar` prunes), the linked faces of
    its tetrahedra, and across its link; returns the heap's new size."""
    linked = acr[u] >= 0
    # entered by the tile's own edge through tetrahedron VIA: prune
    lo, hi = 0, 6
    p = nodei[u, PAR]
    if p >= 0 and (p >> SHIFT) == a and not linked and acr[p & MASK] < 0:
        t = nodei[u, VIA]
        if t == ei[u, ET0] and ei[u, EPRUNE] & 1:
            lo = 3
        elif t == ei[u, ET1] and ei[u, EPRUNE] & 2:
            hi = 3
    for k in range(lo, hi):                   # their rows on the way
        prefetch(nodei, NODE_COLUMNS * np.int64(ei[u, 2 * k + 1]))
    for k in range(lo, hi):
        c = ef[u, 2 * k]
        if not c >= 0.0:
            continue
        size = _relax(node, nodei, cen, gen, hkey, hnode, size, qid, a,
                      np.int64(ei[u, 2 * k + 1]), d + c, code,
                      np.int64(ei[u, ET0 if k < 3 else ET1]), anchor, hw)
    for side in range(2):
        t = ei[u, ET0 + side]
        if t < 0 or not (linked or tlm[t]):
            continue
        for q in range(4):
            v = np.int64(tfi[t, q])
            if v == u:
                continue
            if acr[v] >= 0 or (linked and ei[v, ET1] >= 0):
                size = _relax(node, nodei, cen, gen, hkey, hnode, size, qid, a, v,
                              d + _dff(cen, u, v), code, np.int64(t), anchor, hw)
    if linked:
        x = acr[u]
        b = slot_of[x >> SHIFT]
        if b >= 0 and allowed[b]:
            size = _relax(NODE[b], NODEI[b], CEN[b], slot_gen[b], hkey, hnode, size, qid, b,
                          np.int64(RANK[b][x & MASK]), d, code, np.int64(-1), anchor, hw)
    return size


@kernel
def _trace(NODEI, end):
    """The route's nodes from the first to ``end`` and the tetrahedron each
    was reached through."""
    n = 0
    c = end
    while c >= 0:
        n += 1
        c = NODEI[c >> SHIFT][c & MASK, PAR]
    codes = np.empty(n, np.int64)
    vias = np.empty(n, np.int64)
    c = end
    for i in range(n - 1, -1, -1):
        codes[i] = c
        row = NODEI[c >> SHIFT]
        vias[i] = row[c & MASK, VIA]
        c = row[c & MASK, PAR]
    return codes, vias


@kernel
def world_astar(WL, slot_gen, slot_of, allowed, qid, s_slot, s_tet, s, g_slot, g_tet, g, anchor,
                hw, max_expand, counts):
    """:func:`_astar` on the slots' lists ``WL`` (a :class:`WalkLists`)."""
    return _astar(WL.EF, WL.EI, WL.TFI, WL.ACR, WL.RANK, WL.TLM, WL.NODE, WL.NODEI, WL.CEN,
                  slot_gen, slot_of, allowed, qid, s_slot, s_tet, s, g_slot, g_tet, g, anchor, hw,
                  max_expand, counts)


@kernel
def _astar(EF, EI, TFI, ACR, RANK, TLM, NODE, NODEI, CEN, slot_gen, slot_of, allowed, qid, s_slot,
           s_tet, s, g_slot, g_tet, g, anchor, hw, max_expand, counts):
    """``(status, cost, codes, vias)``: the cheapest route from point ``s``
    (tetrahedron ``s_tet`` of slot ``s_slot``) to ``g``, over the slots
    ``allowed``: its nodes in order and the tetrahedron each was reached
    through (-1 across a link); ``slot_of[tile]`` is a tile's slot (-1:
    none). Each face's search state is one 64-byte row of its slot's
    ``NODE`` (float64; ``NODEI`` the same rows as int64): cost, centroid,
    parent, via, stamp (:data:`DIST` ...). ``qid`` stamps this query's
    state (a face is expanded once: the guess below need not be
    consistent). The search is led by a guess of each face's cost to the
    goal: ``hw`` times its straight distance to its slot's anchor
    ``anchor[slot, :3]`` plus ``anchor[slot, 3]`` (the goal and 0 for an
    admissible A* with hw <= 1). After ``max_expand`` faces expanded it
    gives up (status :data:`GAVE_UP`). ``counts`` adds the heap pops and
    the faces expanded.

    The open set is an 8-ary heap on arrays (as the single mesh's search,
    :func:`regn.query.paths._path_kernels.heap_pop`), grown when full. A
    face entered through a tetrahedron by one of the tile's own edges skips
    that tetrahedron's edges when its costs obey the triangle inequality
    (``EPRUNE``, as the single mesh's search: its other faces are no
    cheaper via this face than straight from the parent). ``TLM[t]``: bit
    q set when face q of tetrahedron t is linked (edges into linked wall
    faces are looked for only there)."""
    empty = np.zeros(0, np.int64)
    best = math.inf
    if s_slot == g_slot and s_tet == g_tet:
        best = math.sqrt((s[0] - g[0]) ** 2 + (s[1] - g[1]) ** 2 + (s[2] - g[2]) ** 2)
    hkey = np.empty(HEAP0 + 8)
    hnode = np.empty(HEAP0 + 8, np.int64)
    heap_reset(hkey)
    size = 0
    node, nodei, cen, gen = NODE[s_slot], NODEI[s_slot], CEN[s_slot], slot_gen[s_slot]
    for k in range(4):
        f = np.int64(TFI[s_slot][s_tet, k])
        size = _relax(node, nodei, cen, gen, hkey, hnode, size, qid, s_slot, f, _dcp(cen, f, s),
                      np.int64(-1), np.int64(s_tet), anchor, hw)
    gf = TFI[g_slot][g_tet]
    end = np.int64(-1)
    expanded = 0
    last = np.int64(-1)
    ef, ei, acr, tfi, tlm = EF[s_slot], EI[s_slot], ACR[s_slot], TFI[s_slot], TLM[s_slot]
    while size > 0:
        key = hkey[0]
        code = hnode[0]
        size = heap_pop(hkey, hnode, size)
        counts[0] += 1
        nxt = hnode[0]                  # the next top's edges on the way
        if size > 0 and (nxt >> SHIFT) == last:
            prefetch(ei, EDGE_COLUMNS * (nxt & MASK))
        if key >= best:
            break
        a = code >> SHIFT
        u = code & MASK
        if a != last:
            node, nodei, cen, gen = NODE[a], NODEI[a], CEN[a], slot_gen[a]
            ef, ei, acr, tfi, tlm = EF[a], EI[a], ACR[a], TFI[a], TLM[a]
            last = a
        if nodei[u, STAMP] != 2 * qid:
            continue                                  # expanded already
        d = node[u, DIST]
        h = hw * _d3(node, u, anchor[a]) + anchor[a, 3]
        if key > (d + h) * (1.0 + 1e-12) + 1e-9:
            continue                                  # a stale entry
        nodei[u, STAMP] = 2 * qid + 1
        counts[1] += 1
        expanded += 1
        if expanded > max_expand:
            return GAVE_UP, best, empty, empty
        if a == g_slot and (u == gf[0] or u == gf[1] or u == gf[2] or u == gf[3]):
            c = d + _d3(node, u, g)
            if c < best:
                best, end = c, code
        if size + 24 > len(hkey):
            hkey = _grown(hkey, 2 * len(hkey), math.inf)
            hnode = _grown(hnode, 2 * len(hnode), np.int64(0))
        size = _expand(ef, ei, acr, tfi, tlm, node, nodei, cen, gen, hkey, hnode, size, qid, a,
                       u, d, code, anchor, hw, NODE, NODEI, CEN, slot_gen, RANK, slot_of,
                       allowed)
    if not best < math.inf:
        return UNREACHABLE, best, empty, empty
    codes, vias = _trace(NODEI, end)
    return OK, best, codes, vias


@kernel
def corridor(WL, codes, vias, tile_of_slot, face_off, tet_off, s_slot, s_tet, g_slot, g_tet):
    """:func:`_corridor` on the slots' lists ``WL``."""
    return _corridor(codes, vias, WL.FO, WL.FV, WL.VX, tile_of_slot, face_off, tet_off, s_slot,
                     s_tet, g_slot, g_tet)


@kernel
def _corridor(codes, vias, FO, FV, VX, tile_of_slot, face_off, tet_off, s_slot, s_tet,
             g_slot, g_tet):
    """``(tri (k,3,3), tets, portals, tiles)`` of a route from
    :func:`world_astar`: the portal triangles in order (the first face of
    each linked pair: the second is the same triangle), the tetrahedra and
    portals in world numbering, the tiles in order."""
    n = len(codes)
    tri = np.empty((n, 3, 3))
    portals = np.empty(n, np.int64)
    tets = np.empty(n + 2, np.int64)
    tiles = np.empty(n + 1, np.int64)
    tiles[0] = tile_of_slot[s_slot]
    nt = 1
    k = 0
    tets[0] = tet_off[tiles[0]] + s_tet
    m = 1
    for i in range(n):
        a = codes[i] >> SHIFT
        f = FO[a][codes[i] & MASK]
        tile = tile_of_slot[a]
        if vias[i] >= 0 and i > 0:
            t = tet_off[tile] + vias[i]
            if tets[m - 1] != t:
                tets[m] = t
                m += 1
        if i > 0 and (codes[i - 1] >> SHIFT) != a:
            tiles[nt] = tile
            nt += 1
            continue
        vx = VX[a]
        for r in range(3):
            v = FV[a][f, r]
            for c in range(3):
                tri[k, r, c] = vx[v, c]
        portals[k] = face_off[tile] + f
        k += 1
    t = tet_off[tile_of_slot[g_slot]] + g_tet
    if tets[m - 1] != t:
        tets[m] = t
        m += 1
    return tri[:k], tets[:m], portals[:k], tiles[:nt]


@kernel
def world_walk(W, NBV, FBV, ACRF, FT0, slot_of, allowed, ax, ay, az, bx, by, bz, slot, tet,
               seen):
    """Walk segment a -> b from tetrahedron ``tet`` of slot ``slot`` (a in
    it), through linked faces into the next tiles (slots of ``slot_of``
    ``allowed``: a tile outside them is a wall, whether it sits in a slot
    or not, so the answer does not depend on what else is loaded):
    ``(clear, slot, tet)``, the tetrahedron holding b when clear."""
    crossed = np.empty(0, np.int64)
    px, py, pz = ax, ay, az
    for _ in range(MAX_HOPS):
        W_ = W[slot]
        out, t, j, sf, _n = walk_segment(W_, NBV[slot], px, py, pz, bx, by, bz, tet,
                                         W_.shape[0] + 8, crossed, seen)
        if out == CLEAR:
            return True, slot, t
        if out != HIT:
            return False, slot, t
        x = ACRF[slot][FBV[slot][t, j]]
        if x < 0:
            return False, slot, t
        nb = slot_of[x >> SHIFT]
        if nb < 0 or not allowed[nb]:
            return False, slot, t
        f = min(sf + HOP_NUDGE, 1.0)
        px, py, pz = px + f * (bx - px), py + f * (by - py), pz + f * (bz - pz)
        slot = nb
        tet = FT0[nb][x & MASK]
    return False, slot, tet


@kernel
def taut_path(WL, slot_of, allowed, slot, tet, s, g, tri, rtol, max_iter, X):
    """:func:`_taut_path` on the slots' lists ``WL``."""
    return _taut_path(WL.W, WL.NBV, WL.FBV, WL.ACRF, WL.FT0, slot_of, allowed, slot, tet, s, g,
                      tri, rtol, max_iter, X)


@kernel
def _taut_path(W, NBV, FBV, ACRF, FT0, slot_of, allowed, slot, tet, s, g, tri, rtol, max_iter,
               X):
    """The path through the corridor ``tri`` from s (in tetrahedron ``tet``
    of ``slot``) to g, made taut: the single mesh's smoother
    (:func:`regn.query.paths._smooth_kernels.solve`, one point in each
    portal, within ``rtol`` of the shortest) into X, then the points it
    sees past dropped (:func:`straighten`, twice: the second pass on the
    points kept by the first). Returns the points kept."""
    solve(s, g, tri, rtol, max_iter, X)
    keep = straighten(W, NBV, FBV, ACRF, FT0, slot_of, allowed, slot, tet, X, X.shape[0])
    P = np.empty((len(keep), 3))
    for i in range(len(keep)):
        for c in range(3):
            P[i, c] = X[keep[i], c]
    keep = straighten(W, NBV, FBV, ACRF, FT0, slot_of, allowed, slot, tet, P, P.shape[0])
    out = np.empty((len(keep), 3))
    for i in range(len(keep)):
        for c in range(3):
            out[i, c] = P[keep[i], c]
    return out


@kernel
def straighten(W, NBV, FBV, ACRF, FT0, slot_of, allowed, slot, tet, pts, n):
    """The indices of ``pts[:n]`` kept when the turning points the path can
    see past are dropped: from each kept point the next is the farthest
    later one in sight (:func:`world_walk`), found by galloping (the points
    1, 2, 4 ... ahead while in sight), then halving the gap to the first out
    of sight, then looking past that one at up to :data:`LOOKAHEAD` - 1
    more (galloping on from one in sight). So a straight run of m points
    costs about 2 log2(m) walks, not m. ``tet`` of ``slot`` holds pts[0]. A
    point that sees not even the next keeps all the rest."""
    seen = np.empty((RING, 2), np.int64)
    keep = np.empty(n, np.int64)
    keep[0] = 0
    m = 1
    i = 0
    while i < n - 1:
        best, bs, bt = -1, slot, tet
        lo = i
        step = 1
        while True:
            hi = n
            while lo < n - 1:                 # gallop
                k = min(lo + step, n - 1)
                ok, ks, kt = _sees(W, NBV, FBV, ACRF, FT0, slot_of, allowed, pts, i, k, slot, tet,
                                   seen)
                if ok:
                    lo, best, bs, bt = k, k, ks, kt
                    step *= 2
                else:
                    hi = k
                    break
            if hi == n:
                break
            while hi - lo > 1:                # halve the gap
                mid = (lo + hi) // 2
                ok, ks, kt = _sees(W, NBV, FBV, ACRF, FT0, slot_of, allowed, pts, i, mid, slot, tet,
                                   seen)
                if ok:
                    lo, best, bs, bt = mid, mid, ks, kt
                else:
                    hi = mid
            again = False
            for k in range(hi + 1, min(hi + LOOKAHEAD, n)):   # look past it
                ok, ks, kt = _sees(W, NBV, FBV, ACRF, FT0, slot_of, allowed, pts, i, k, slot, tet,
                                   seen)
                if ok:
                    lo, best, bs, bt = k, k, ks, kt
                    step = 1
                    again = True
                    break
            if not again:
                break
        if best < 0:
            for r in range(i + 1, n):
                keep[m] = r
                m += 1
            break
        keep[m] = best
        m += 1
        i, slot, tet = best, bs, bt
    return keep[:m]


@kernel(inline=True)
def _sees(W, NBV, FBV, ACRF, FT0, slot_of, allowed, pts, i, k, slot, tet, seen):
    return world_walk(W, NBV, FBV, ACRF, FT0, slot_of, allowed, pts[i, 0], pts[i, 1], pts[i, 2],
                      pts[k, 0], pts[k, 1], pts[k, 2], slot, tet, seen)


@kernel
def place_links(acrf, acr, tlm, old_faces, old_ranks, old_tets, own, codes, rank, ft0, tfi):
    """Put a tile's links into a slot's buffers (``acrf``, ``acr``: each
    face's other side ``tile << 32 | face`` or -1, by file face and by
    search order; ``tlm``: each tetrahedron's mask of linked faces), first
    undoing the slot's last tile's (``old_faces`` its linked file faces,
    ``old_ranks`` and ``old_tets`` their search order and tetrahedra): the
    work is the links', not the
    tile's. ``own[i]`` (a file face) is linked to ``codes[i]``; ``rank``,
    ``ft0``, ``tfi``: the tile's search order of a file face, first
    tetrahedron of a file face, faces of a tetrahedron in search order.
    Returns ``(ranks, tets)`` of ``own``, for the next undoing."""
    for i in range(len(old_faces)):
        acrf[old_faces[i]] = -1
        acr[old_ranks[i]] = -1
        tlm[old_tets[i]] = 0
    ranks = np.empty(len(own), np.int64)
    tets = np.empty(len(own), np.int64)
    for i in range(len(own)):
        f = own[i]
        r = rank[f]
        acrf[f] = codes[i]
        acr[r] = codes[i]
        t = ft0[f]
        ranks[i] = r
        tets[i] = t
        for q in range(4):
            if tfi[t, q] == r:
                tlm[t] |= np.int8(1 << q)
    return ranks, tets


@structref.register
class WalkListsType(types.StructRef):
    """numba's type of :class:`WalkLists`."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


class WalkLists(structref.StructRefProxy):
    """The slots' typed lists (one per name of :data:`regn.world.walk.FIELDS`)
    as one compiled object, made by :func:`new_walk_lists`: a kernel call
    handing over a typed List costs ~15 us to unbox, this one pointer."""


structref.define_proxy(WalkLists, WalkListsType, list(LIST_NAMES))


@kernel
def new_walk_lists(EF, EI, TFI, ACR, RANK, FO, NODE, NODEI, W, NBV, FBV, ACRF, FT0, FV, VX, TLM,
                   CEN):
    """The :class:`WalkLists` of the 17 lists (a cached kernel)."""
    return WalkLists(EF, EI, TFI, ACR, RANK, FO, NODE, NODEI, W, NBV, FBV, ACRF, FT0, FV, VX, TLM,
                     CEN)


@kernel
def new_list(blank, n):
    """A typed List of ``n`` times ``blank`` (made here, in a cached kernel:
    a typed List built from Python compiles its methods in every process)."""
    out = List()
    for _ in range(n):
        out.append(blank)
    return out


@kernel
def put_slot(WL, s, A):
    """Place a slot's 17 arrays ``A`` (in the order of :data:`LIST_NAMES`)."""
    WL.EF[s] = A[0]
    WL.EI[s] = A[1]
    WL.TFI[s] = A[2]
    WL.ACR[s] = A[3]
    WL.RANK[s] = A[4]
    WL.FO[s] = A[5]
    WL.NODE[s] = A[6]
    WL.NODEI[s] = A[7]
    WL.W[s] = A[8]
    WL.NBV[s] = A[9]
    WL.FBV[s] = A[10]
    WL.ACRF[s] = A[11]
    WL.FT0[s] = A[12]
    WL.FV[s] = A[13]
    WL.VX[s] = A[14]
    WL.TLM[s] = A[15]
    WL.CEN[s] = A[16]


@kernel
def put(lst, i, a):
    """``lst[i] = a`` (see :func:`new_list`)."""
    lst[i] = a
