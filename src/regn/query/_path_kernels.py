"""Compiled kernels of the path search (:mod:`regn.query.path`).

One call of :func:`find_path` answers a whole query: it locates both ends,
checks their components, runs the bidirectional search and writes the
corridor. ``graph`` is a :class:`regn.query.path.SearchGraph` record (per
mesh), ``work`` a :class:`regn.query.path.SearchWork` (heaps and output
buffers), ``tables`` the :class:`regn.query.locate.LocateTables`. Records
are read once per query; the search loop calls only helpers taking plain
arrays (a record handed to a helper inside a loop costs reference-count
updates on every call).

Memory layout (measured wins, see the README's Performance section): each
face's search state is one 64-byte row of ``graph.node`` (float64): g
forward, g backward, the two Euclidean bounds hw*|v - g| and hw*|v - s|
(potential = half their difference), the centroid, and in the last slot four
uint16 (via ``graph.node_u16``): stamp forward, stamp backward, parent
forward, parent backward. Each face's edges are one 64-byte block of
``graph.edge`` (int32 view ``graph.edge_int``): six (float32 cost, int32
destination) records, then the face's two tetrahedra and a bit mask of which
of them may be skipped after entry.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel, prefetch
from ..status import EXCLUDED, GOAL_OUTSIDE, OK, START_OUTSIDE, UNREACHABLE
from ._locate_kernels import locate_points

# node row columns (float64), and the uint16 columns of node_u16
G0, G1, DG, DS, CX, CY, CZ = 0, 1, 2, 3, 4, 5, 6
ST0, ST1, PA0, PA1 = 28, 29, 30, 31
NODE_COLUMNS = 8
# edge block: (cost, destination) k at columns 2k, 2k+1 (k < 3 cross the
# face's first tetrahedron, k >= 3 its second), then:
ET0, ET1, EPRUNE = 12, 13, 14
EDGE_COLUMNS = 16
NO_PARENT = 0xFFFF
#: find_path's status for a broken parent chain (impossible on a sound graph)
BROKEN_CHAIN = -1


@kernel
def heap_push(key, node, size, k, v):
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


@kernel
def heap_pop(key, node, size):
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


@kernel
def _set_bounds(node, f, hw, ends):
    """Face f's Euclidean bounds to the goal (DG) and the start (DS)."""
    cx, cy, cz = node[f, CX], node[f, CY], node[f, CZ]
    node[f, DG] = hw * np.sqrt((cx - ends[1, 0]) ** 2 + (cy - ends[1, 1]) ** 2
                               + (cz - ends[1, 2]) ** 2)
    node[f, DS] = hw * np.sqrt((cx - ends[0, 0]) ** 2 + (cy - ends[0, 1]) ** 2
                               + (cz - ends[0, 2]) ** 2)


@kernel
def _seed(graph, work, ends, T, side, labelled, hw, seed_open):
    """Open side's search at the portal faces of its end's tetrahedron T,
    each at its straight distance from the end point; returns the open
    set's size. (S and G may share a face: then both sides label it.)
    ``seed_open``: None, or (2,4) bools, False where the link from the end
    to T's face slot k is closed (a path with a radius, regn.query.clearance)."""
    node, node_u16, tet_faces, is_portal = (graph.node, graph.node_u16, graph.tet_faces,
                                            graph.is_portal)
    heap_key = work.heap_key0 if side == 0 else work.heap_key1
    heap_node = work.heap_node0 if side == 0 else work.heap_node1
    px, py, pz = ends[side, 0], ends[side, 1], ends[side, 2]
    sign = 1.0 if side == 0 else -1.0
    size = 0
    for k in range(4):
        f = tet_faces[T, k]
        if not is_portal[f]:
            continue
        if seed_open is not None and not seed_open[side, k]:
            continue
        cx, cy, cz = node[f, CX], node[f, CY], node[f, CZ]
        d = np.sqrt((cx - px) ** 2 + (cy - py) ** 2 + (cz - pz) ** 2)
        if node_u16[f, ST0 + side] == labelled and d >= node[f, side]:
            continue
        if node_u16[f, ST0] < labelled and node_u16[f, ST1] < labelled:
            _set_bounds(node, f, hw, ends)
        node_u16[f, ST0 + side] = labelled
        node_u16[f, PA0 + side] = NO_PARENT
        node[f, side] = d
        size = heap_push(heap_key, heap_node, size,
                         d + sign * (0.5 * (node[f, DG] - node[f, DS])), f)
    return size


@kernel
def _shared_face(graph, G, labelled):
    """(cost, face, face) of the cheapest face of G both sides' seeds
    labelled (S and G share it), or (inf, -1, -1)."""
    node, node_u16 = graph.node, graph.node_u16
    best, meet = np.inf, -1
    for k in range(4):
        f = graph.tet_faces[G, k]
        if node_u16[f, ST0] == labelled and node_u16[f, ST1] == labelled:
            c = node[f, G0] + node[f, G1]
            if c < best:
                best, meet = c, f
    return best, meet, meet


@kernel
def _search(graph, work, ends, S, G, scale, excl, plain, hw, qid, seed_open):
    """The bidirectional search from S's faces (side 0, forward from s) and
    G's (side 1, backward from g), on costs reduced by the average potential
    p(v) = (dg - ds) / 2 with dg = hw * |v - g| and ds = hw * |v - s|
    (forward keys g + p, backward keys g - p); the side with the smaller
    open set grows next. With every cost at least ``hw`` times the centroid
    distance neither reduced graph has a negative edge, so each side is a
    Dijkstra search and it may stop once the two smallest keys sum to at
    least the best meeting cost found: every s-g path meets both searches on
    some edge, and the potentials cancel along it. A stamp is 2*qid once a
    face is labelled by a side in this query and 2*qid+1 once settled, so
    nothing is cleared between queries; a face's bounds are valid once
    either side has labelled it. ``plain``: no cost_scale and no exclude
    (skips two loads an edge). Returns (best cost, forward meeting face,
    backward meeting face), cost inf when none. One function, so that the
    hot loop calls nothing but the heap and two loop-free helpers (a helper
    with branches costs reference-count updates on every call). ``seed_open``:
    see :func:`_seed`."""
    node, node_u16, edge, edge_int = graph.node, graph.node_u16, graph.edge, graph.edge_int
    key0, heap0, key1, heap1 = work.heap_key0, work.heap_node0, work.heap_key1, work.heap_node1
    labelled = 2 * qid
    settled = labelled + 1
    size0 = _seed(graph, work, ends, S, 0, labelled, hw, seed_open)
    size1 = _seed(graph, work, ends, G, 1, labelled, hw, seed_open)
    best, meet_u, meet_v = _shared_face(graph, G, labelled)
    while size0 > 0 and size1 > 0:
        top0 = key0[0]
        top1 = key1[0]
        if top0 + top1 >= best:
            break
        if size0 <= size1:
            side, other, key, top_other, sign = 0, 1, top0, top1, 1.0
            f = heap0[0]
            size0 = heap_pop(key0, heap0, size0)
        else:
            side, other, key, top_other, sign = 1, 0, top1, top0, -1.0
            f = heap1[0]
            size1 = heap_pop(key1, heap1, size1)
        gf = node[f, side]
        if node_u16[f, ST0 + side] == settled or \
                key != gf + sign * (0.5 * (node[f, DG] - node[f, DS])):
            continue                     # a stale heap entry
        node_u16[f, ST0 + side] = settled
        # entered from parent p through one of f's tetrahedra: when that
        # tetrahedron's costs obey the triangle inequality its other faces
        # are no cheaper via f than straight from p (path._triangle_tets)
        lo, hi = 0, 6
        p = node_u16[f, PA0 + side]
        if p != NO_PARENT:
            t0 = edge_int[f, ET0]
            if t0 == edge_int[p, ET0] or t0 == edge_int[p, ET1]:
                if edge_int[f, EPRUNE] & 1:
                    lo = 3
            elif edge_int[f, EPRUNE] & 2:
                hi = 3
        for k in range(lo, hi):
            prefetch(node, NODE_COLUMNS * edge_int[f, 2 * k + 1])
        for k in range(lo, hi):          # relax f's edges
            w = np.float64(edge[f, 2 * k])
            if w < 0:
                continue
            if not plain:
                t = edge_int[f, ET0 + k // 3]
                if excl[t]:
                    continue
                w = w * scale[t]
            v = edge_int[f, 2 * k + 1]
            sv = node_u16[v, ST0 + side]
            if sv == settled:
                continue
            ng = gf + w
            so = node_u16[v, ST0 + other]
            if so >= labelled:
                c = ng + node[v, other]
                if c < best:
                    best = c
                    meet_u, meet_v = (f, v) if side == 0 else (v, f)
            if sv == labelled and ng >= node[v, side]:
                continue
            if sv < labelled and so < labelled:
                _set_bounds(node, v, hw, ends)
            dg = node[v, DG]
            ds = node[v, DS]
            if ng + (dg if side == 0 else ds) >= best:
                continue
            kv = ng + sign * (0.5 * (dg - ds))
            if kv + top_other >= best:
                continue
            node_u16[v, ST0 + side] = labelled
            node_u16[v, PA0 + side] = f
            node[v, side] = ng
            if side == 0:
                size0 = heap_push(key0, heap0, size0, kv, v)
            else:
                size1 = heap_push(key1, heap1, size1, kv, v)
    return best, meet_u, meet_v


@kernel
def _trace_route(graph, portals, meet_u, meet_v):
    """The route in internal face numbers into ``portals``: the forward half
    from meet_u back to a face of S, reversed in place, then the backward
    half from meet_v on to a face of G. Returns its length, BROKEN_CHAIN
    for a parent chain that does not end."""
    node_u16 = graph.node_u16
    F = graph.node.shape[0] - 1
    n = 0
    v = meet_u
    while v != NO_PARENT and n <= F:
        portals[n] = v
        n += 1
        v = node_u16[v, PA0]
    if v != NO_PARENT:
        return BROKEN_CHAIN
    for i in range(n // 2):
        portals[i], portals[n - 1 - i] = portals[n - 1 - i], portals[i]
    v = meet_v
    if meet_v != meet_u:
        portals[n] = v
        n += 1
    limit = 2 * F + 2
    while n < limit:
        nxt = node_u16[v, PA1]
        if nxt == NO_PARENT:
            break
        portals[n] = nxt
        n += 1
        v = nxt
    if n >= limit:
        return BROKEN_CHAIN
    return n


@kernel
def _write_corridor(graph, portals, corridor, S, G, n):
    """corridor[k], the tetrahedron between portals k-1 and k: the one they
    share (two tetrahedra share at most one face, so it is unique); False
    when two consecutive portals share none."""
    edge_int = graph.edge_int
    corridor[0] = S
    for i in range(1, n):
        a, b = portals[i - 1], portals[i]
        ta0, ta1 = edge_int[a, ET0], edge_int[a, ET1]
        if ta0 == edge_int[b, ET0] or ta0 == edge_int[b, ET1]:
            corridor[i] = ta0
        elif ta1 == edge_int[b, ET0] or ta1 == edge_int[b, ET1]:
            corridor[i] = ta1
        else:
            return False
    corridor[n] = G
    return True


@kernel
def _centroid_polyline(graph, portals, points, ends, n):
    """points[:n+2] = s, the portals' centroids, g; returns its length and
    turns ``portals`` into file face numbers."""
    node = graph.node
    px, py, pz = ends[0, 0], ends[0, 1], ends[0, 2]
    points[0, 0], points[0, 1], points[0, 2] = px, py, pz
    length = 0.0
    for i in range(n):
        f = portals[i]
        cx, cy, cz = node[f, CX], node[f, CY], node[f, CZ]
        points[i + 1, 0], points[i + 1, 1], points[i + 1, 2] = cx, cy, cz
        length += np.sqrt((cx - px) ** 2 + (cy - py) ** 2 + (cz - pz) ** 2)
        px, py, pz = cx, cy, cz
        portals[i] = graph.face_order[f]
    gx, gy, gz = ends[1, 0], ends[1, 1], ends[1, 2]
    points[n + 1, 0], points[n + 1, 1], points[n + 1, 2] = gx, gy, gz
    length += np.sqrt((gx - px) ** 2 + (gy - py) ** 2 + (gz - pz) ** 2)
    return length


@kernel(inline=True)
def locate_ends(tables, ends, corridor, excl):
    """Locate start and goal (ends (2,3)) into corridor[0] and corridor[1];
    OK, or the status that ends the query there: START_OUTSIDE,
    GOAL_OUTSIDE, or EXCLUDED (an end in an excluded tetrahedron)."""
    locate_points(tables, ends, corridor)
    if corridor[0] < 0:
        return START_OUTSIDE
    if corridor[1] < 0:
        return GOAL_OUTSIDE
    if excl[corridor[0]] or excl[corridor[1]]:
        return EXCLUDED
    return OK


@kernel
def find_path(graph, tables, work, ends, scale, excl, plain, hw, qid):
    """One whole query from the two points ``ends`` (start, goal). Returns
    (status, cost, n, length), status a :mod:`regn.status` code or
    BROKEN_CHAIN. When OK, ``work.portals[:n]`` are the portal faces crossed
    (file numbering), ``work.corridor[:n + 1]`` the tetrahedra
    (``corridor[k]`` lies between portals k-1 and k), and
    ``work.points[:n + 2]`` the polyline s, portal centroids, g of length
    ``length``."""
    corridor, points = work.corridor, work.points
    nothing = 0.0
    code = locate_ends(tables, ends, corridor, excl)
    if code != OK:
        return code, nothing, 0, nothing
    S = corridor[0]
    G = corridor[1]
    if S == G:
        points[0, :] = ends[0]
        points[1, :] = ends[1]
        d = np.sqrt((ends[1, 0] - ends[0, 0]) ** 2 + (ends[1, 1] - ends[0, 1]) ** 2
                    + (ends[1, 2] - ends[0, 2]) ** 2)
        return OK, d, 0, d
    if graph.component[S] != graph.component[G]:
        return UNREACHABLE, nothing, 0, nothing
    best, meet_u, meet_v = _search(graph, work, ends, S, G, scale, excl, plain, hw, qid,
                                   None)
    if not best < np.inf:
        return UNREACHABLE, nothing, 0, nothing
    n = _trace_route(graph, work.portals, meet_u, meet_v)
    if n < 0 or not _write_corridor(graph, work.portals, corridor, S, G, n):
        return BROKEN_CHAIN, best, 0, nothing
    return OK, best, n, _centroid_polyline(graph, work.portals, points, ends, n)
