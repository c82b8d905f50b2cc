"""Compiled kernels of the path search (:mod:`regn.query.paths.path`).

One call of :func:`find_path` answers a whole query: it locates both ends,
checks their components, runs the bidirectional search and writes the
corridor. ``graph`` is a :class:`regn.query.paths.path.SearchGraph` record (per
mesh), ``work`` a :class:`regn.query.paths.path.SearchWork` (heaps and output
buffers), ``tables`` the :class:`regn.query.locating.locate.LocateTables`; a search
slot holds the three as one :class:`SearchState`. Records
are read once per query; the search loop calls only helpers taking plain
arrays (a record handed to a helper inside a loop costs reference-count
updates on every call).

Memory layout (measured wins, see docs/performance.md): each
face's search state is one 64-byte row of ``graph.node`` (float64): g
forward, g backward, the two bounds on the cost to g and from s (potential =
half their difference), the centroid, and in the last slot four uint16 (via
``graph.node_u16``): stamp forward, stamp backward, parent forward, parent
backward. Each face's edges are one 64-byte block of ``graph.edge`` (int32
view ``graph.edge_int``): six (float32 cost, int32 destination) records,
then the face's two tetrahedra and a bit mask of which of them may be
skipped after entry. ``graph.landmarks`` holds each face's costs to the
landmarks in whole quanta (uint16, :mod:`regn.query.paths.landmarks`), 128 bytes a
face, read with int32 vector arithmetic.

Heaps are 8-ary with +inf sentinels after the last entry (:func:`heap_reset`
starts one), so a pop compares all eight children without a bounds test and
picks the smallest by branch-free selects; every small helper of the hot
loop is compiled without reference counting (``borrows=True``) or inlined.
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.experimental import structref

from ..._jit import copy_rows, kernel, prefetch
from ...status import EXCLUDED, GOAL_OUTSIDE, OK, START_OUTSIDE, UNREACHABLE
from ..locating._locate_kernels import locate_points

# node row columns (float64), and the uint16 columns of node_u16
G0, G1, DG, DS, CX, CY, CZ = 0, 1, 2, 3, 4, 5, 6
ST0, ST1, PA0, PA1 = 28, 29, 30, 31
NODE_COLUMNS = 8
# edge block: (cost, destination) k at columns 2k, 2k+1 (k < 3 cross the
# face's first tetrahedron, k >= 3 its second), then:
ET0, ET1, EPRUNE = 12, 13, 14
EDGE_COLUMNS = 16
NO_PARENT = 0xFFFF
#: the straight links from the ends enter the landmark bounds times this
#: (< 1: they stay below the links the search charges, whatever the rounding)
LINK_SLACK = 1.0 - 1e-6
#: the largest whole-quantum bound a landmark term may take (int32 room)
MARK_CLAMP = 2.0 ** 30
#: find_path's status for a broken parent chain (impossible on a sound graph)
BROKEN_CHAIN = -1


@structref.register
class SearchStateType(types.StructRef):
    """numba's type of :class:`SearchState`."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


class SearchState(structref.StructRefProxy):
    """One search slot's records (``graph``, ``tables``, ``work``) held as
    one compiled object, made by :func:`new_search_state`: a call passing it
    hands over one pointer, where passing the three records unboxes their
    twenty-two arrays (~0.7 us of a single query)."""


structref.define_proxy(SearchState, SearchStateType, ["graph", "tables", "work"])


@kernel
def new_search_state(graph, tables, work):
    """The :class:`SearchState` of three records (a cached kernel: the
    proxy's own constructor would be compiled in every process)."""
    return SearchState(graph, tables, work)


@kernel(borrows=True)
def heap_reset(key):
    """Start an empty 8-ary heap: the sentinels of :func:`heap_push`."""
    key[0:8] = np.inf


@kernel
def heap_push(key, node, size, k, v):
    """8-ary min-heap on parallel arrays; returns the new size. Keeps
    key[size .. size + 7] at +inf (sentinels, so a pop reads all eight
    children without a bounds test): the arrays hold 8 more than the most
    entries, and :func:`heap_reset` starts a heap."""
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


@kernel(borrows=True)
def heap_pop(key, node, size):
    """Drop the root; returns the new size. The smallest of eight children
    by a three-level tournament of branch-free selects (a branch per child
    is mispredicted half the time); the vacated last slot becomes a
    sentinel."""
    size -= 1
    k = key[size]
    v = node[size]
    key[size] = np.inf
    if size == 0:
        return 0
    i = 0
    while True:
        c = 8 * i + 1
        if c >= size:
            break
        k0, k1, k2, k3 = key[c], key[c + 1], key[c + 2], key[c + 3]
        k4, k5, k6, k7 = key[c + 4], key[c + 5], key[c + 6], key[c + 7]
        a = c + np.int64(k1 < k0)
        ka = min(k0, k1)
        b = c + 2 + np.int64(k3 < k2)
        kb = min(k2, k3)
        d = c + 4 + np.int64(k5 < k4)
        kd = min(k4, k5)
        e = c + 6 + np.int64(k7 < k6)
        ke = min(k6, k7)
        ab = a + (b - a) * np.int64(kb < ka)
        kab = min(ka, kb)
        de = d + (e - d) * np.int64(ke < kd)
        kde = min(kd, ke)
        m = ab + (de - ab) * np.int64(kde < kab)
        km = min(kab, kde)
        if km >= k:
            break
        key[i] = km
        node[i] = node[m]
        i = m
    key[i] = k
    node[i] = v
    return size


@kernel(inline=True)
def _set_bounds(node, f, hw, gx, gy, gz, sx, sy, sz, marks, bounds, quantum):
    """Face f's lower bounds on its cost to g (DG) and from s (DS): the
    larger of the Euclidean bound hw * distance and the landmark bound
    ``quantum`` * max over landmarks l of (A_l - phi_l(f), phi_l(f) - B_l)
    (``marks``: phi in whole quanta; ``bounds``: rows A, B toward g, then
    toward s, see :func:`_landmark_bounds`)."""
    cx, cy, cz = node[f, CX], node[f, CY], node[f, CZ]
    eg = hw * np.sqrt((cx - gx) ** 2 + (cy - gy) ** 2 + (cz - gz) ** 2)
    es = hw * np.sqrt((cx - sx) ** 2 + (cy - sy) ** 2 + (cz - sz) ** 2)
    mg = np.int32(0)
    ms = np.int32(0)
    for m in range(marks.shape[1]):      # int32 lanes: the loop vectorises
        d = np.int32(marks[f, m])
        mg = max(mg, np.int32(bounds[0, m] - d), np.int32(d - bounds[1, m]))
        ms = max(ms, np.int32(bounds[2, m] - d), np.int32(d - bounds[3, m]))
    node[f, DG] = max(eg, quantum * mg)
    node[f, DS] = max(es, quantum * ms)


@kernel(borrows=True)
def _link(node, f, is_portal, px, py, pz):
    """LINK_SLACK times the straight link from (px, py, pz) to face f's
    centroid; inf when f is a wall."""
    if not is_portal[f]:
        return np.inf
    return LINK_SLACK * np.sqrt((node[f, CX] - px) ** 2 + (node[f, CY] - py) ** 2
                                + (node[f, CZ] - pz) ** 2)


@kernel(borrows=True)
def _landmark_bounds(graph, ends, S, G, marks, bounds, quantum):
    """This query's landmark constants, in whole quanta q = ``quantum``: per
    landmark l with phi_l = marks[:, l], toward g (rows 0, 1; tetrahedron G,
    its portal faces x at straight links e_x):
    A_l = floor(min_x (q phi_l(x) + e_x) / q) - 1 and
    B_l = ceil(max_x (q phi_l(x) - e_x) / q) + 1; rows 2, 3 the same toward
    s. Every route from a face v to g ends through some x and its link, and
    q |phi(u) - phi(v)| <= (that route's cost between u and v), so its cost
    is at least q (A_l - phi_l(v)) and q (phi_l(v) - B_l). The margins of one
    quantum absorb the rounding of the divisions; A and B are clamped to
    +-MARK_CLAMP (only weakening the bound) so int32 differences cannot
    overflow."""
    node, tet_faces, is_portal = graph.node, graph.tet_faces, graph.is_portal
    for r in range(2):
        T = G if r == 0 else S
        px, py, pz = ends[1 - r, 0], ends[1 - r, 1], ends[1 - r, 2]
        x0, x1, x2, x3 = tet_faces[T, 0], tet_faces[T, 1], tet_faces[T, 2], tet_faces[T, 3]
        e0 = _link(node, x0, is_portal, px, py, pz)
        e1 = _link(node, x1, is_portal, px, py, pz)
        e2 = _link(node, x2, is_portal, px, py, pz)
        e3 = _link(node, x3, is_portal, px, py, pz)
        for m in range(marks.shape[1]):
            d0, d1 = quantum * marks[x0, m], quantum * marks[x1, m]
            d2, d3 = quantum * marks[x2, m], quantum * marks[x3, m]
            lo = min(min(d0 + e0, d1 + e1), min(d2 + e2, d3 + e3))
            hi = max(max(d0 - e0, d1 - e1), max(d2 - e2, d3 - e3))
            if quantum > 0.0 and lo < np.inf:
                bounds[2 * r, m] = np.int32(min(np.floor(lo / quantum) - 1, MARK_CLAMP))
            else:
                bounds[2 * r, m] = np.int32(0)
            if quantum > 0.0 and hi > -np.inf:
                bounds[2 * r + 1, m] = np.int32(max(np.ceil(hi / quantum) + 1, -MARK_CLAMP))
            else:
                bounds[2 * r + 1, m] = np.int32(MARK_CLAMP)


@kernel(borrows=True)
def _seed(graph, work, ends, T, side, labelled, hw, seed_open, marks, bounds, quantum):
    """Open side's search at the portal faces of its end's tetrahedron T,
    each at its straight distance from the end point; returns the open
    set's size. (S and G may share a face: then both sides label it.)
    ``seed_open``: (2,4) bools, False where the link from the end to T's
    face slot k is closed (a path with a radius, regn.query.radius.portals;
    all True for a point), or None."""
    node, node_u16, tet_faces, is_portal = (graph.node, graph.node_u16, graph.tet_faces,
                                            graph.is_portal)
    heap_key = work.heap_key0 if side == 0 else work.heap_key1
    heap_node = work.heap_node0 if side == 0 else work.heap_node1
    px, py, pz = ends[side, 0], ends[side, 1], ends[side, 2]
    sign = 1.0 if side == 0 else -1.0
    size = 0
    heap_reset(heap_key)
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
            _set_bounds(node, f, hw, ends[1, 0], ends[1, 1], ends[1, 2],
                        ends[0, 0], ends[0, 1], ends[0, 2], marks, bounds, quantum)
        node_u16[f, ST0 + side] = labelled
        node_u16[f, PA0 + side] = NO_PARENT
        node[f, side] = d
        size = heap_push(heap_key, heap_node, size,
                         d + sign * (0.5 * (node[f, DG] - node[f, DS])), f)
    return size


@kernel(borrows=True)
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


@kernel(borrows=True)
def _fetch_rows(node, marks, edge_int, f, lo, hi):
    """Prefetch the search rows and landmark rows of f's neighbours k in
    [lo, hi)."""
    M = marks.shape[1]
    for k in range(lo, hi):
        u = edge_int[f, 2 * k + 1]
        prefetch(node, NODE_COLUMNS * u)
        if M:
            prefetch(marks, M * u)
            prefetch(marks, M * u + M - 1)


@kernel(borrows=True)
def _search(graph, work, ends, S, G, scale, excl, plain, hw, lw, qid, seed_open):
    """The bidirectional search from S's faces (side 0, forward from s) and
    G's (side 1, backward from g), on costs reduced by the average potential
    p(v) = (dg - ds) / 2, dg and ds the bounds of :func:`_set_bounds`
    (forward keys g + p, backward keys g - p); the side with the smaller
    open set grows next. Both bounds are consistent (hw and ``lw`` times
    the quantum are at most the factor every cost is scaled by), so neither
    reduced graph has a negative edge, each side is a Dijkstra search, and
    it may stop once the two smallest keys sum to at least the best meeting
    cost found: every s-g path meets both searches on some edge, and the
    potentials cancel along it. A stamp is 2*qid once a face is labelled by
    a side in this query and 2*qid+1 once settled, so nothing is cleared
    between queries; a face's bounds are valid once either side has
    labelled it. ``plain``: no cost_scale and no exclude (skips two loads an
    edge). Returns (best cost, forward meeting face, backward meeting face),
    cost inf when none. ``seed_open``: see :func:`_seed`."""
    node, node_u16, edge, edge_int = graph.node, graph.node_u16, graph.edge, graph.edge_int
    key0, heap0, key1, heap1 = work.heap_key0, work.heap_node0, work.heap_key1, work.heap_node1
    marks, bounds = graph.landmarks, work.mark_bounds
    quantum = graph.quantum * lw
    labelled = 2 * qid
    settled = labelled + 1
    _landmark_bounds(graph, ends, S, G, marks, bounds, quantum)
    size0 = _seed(graph, work, ends, S, 0, labelled, hw, seed_open, marks, bounds, quantum)
    size1 = _seed(graph, work, ends, G, 1, labelled, hw, seed_open, marks, bounds, quantum)
    best, meet_u, meet_v = _shared_face(graph, G, labelled)
    sx, sy, sz = ends[0, 0], ends[0, 1], ends[0, 2]
    gx, gy, gz = ends[1, 0], ends[1, 1], ends[1, 2]
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
        prefetch(edge_int, EDGE_COLUMNS * heap0[0])      # the next tops' edges
        prefetch(edge_int, EDGE_COLUMNS * heap1[0])
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
        _fetch_rows(node, marks, edge_int, f, lo, hi)
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
            so = node_u16[v, ST0 + other]
            if sv == settled:
                continue
            ng = gf + w
            if so >= labelled:
                c = ng + node[v, other]
                if c < best:
                    best = c
                    meet_u, meet_v = (f, v) if side == 0 else (v, f)
            if sv < labelled and so < labelled:
                _set_bounds(node, v, hw, gx, gy, gz, sx, sy, sz, marks, bounds, quantum)
            dg = node[v, DG]
            ds = node[v, DS]
            kv = ng + sign * (0.5 * (dg - ds))
            # one combined test (three branches would each be mispredicted)
            if not (((sv < labelled) | (ng < node[v, side]))
                    & (ng + (dg if side == 0 else ds) < best) & (kv + top_other < best)):
                continue
            node_u16[v, ST0 + side] = labelled
            node_u16[v, PA0 + side] = f
            node[v, side] = ng
            if side == 0:
                size0 = heap_push(key0, heap0, size0, kv, v)
            else:
                size1 = heap_push(key1, heap1, size1, kv, v)
        # the face most likely expanded next: fetch its neighbours' rows now
        _fetch_rows(node, marks, edge_int, heap0[0] if size0 <= size1 else heap1[0], 0, 6)
    return best, meet_u, meet_v


@kernel(borrows=True)
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


@kernel(borrows=True)
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


@kernel(borrows=True)
def _route_cost(graph, portals, corridor, ends, scale, plain, n):
    """The cost of the route through ``portals[:n]`` (internal numbers;
    ``corridor`` its tetrahedra) summed in order from s to g: the search's
    own sum depends on where its two halves met, which the bounds move, so
    the answer is summed again where only the route counts."""
    node, edge, edge_int = graph.node, graph.edge, graph.edge_int
    f = portals[0]
    cost = np.sqrt((node[f, CX] - ends[0, 0]) ** 2 + (node[f, CY] - ends[0, 1]) ** 2
                   + (node[f, CZ] - ends[0, 2]) ** 2)
    for i in range(1, n):
        a, b, t = portals[i - 1], portals[i], corridor[i]
        w = np.inf
        for k in range(6):
            if edge_int[a, 2 * k + 1] == b and edge_int[a, ET0 + k // 3] == t:
                w = min(w, np.float64(edge[a, 2 * k]))
        cost += w if plain else w * scale[t]
    f = portals[n - 1]
    return cost + np.sqrt((node[f, CX] - ends[1, 0]) ** 2 + (node[f, CY] - ends[1, 1]) ** 2
                          + (node[f, CZ] - ends[1, 2]) ** 2)


@kernel(borrows=True)
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
def find_path(state, x0, y0, z0, x1, y1, z1, scale, excl, plain, hw, lw, qid):
    """One whole query from start (x0, y0, z0) to goal (x1, y1, z1) (kept in
    ``work.ends``; six floats cross from Python faster than an array).
    Returns (status, cost, n, length), status a :mod:`regn.status` code or
    BROKEN_CHAIN. When OK, ``work.portals[:n]`` are the portal faces crossed
    (file numbering), ``work.corridor[:n + 1]`` the tetrahedra
    (``corridor[k]`` lies between portals k-1 and k), and
    ``work.points[:n + 2]`` the polyline s, portal centroids, g of length
    ``length``. ``state``: the slot's :class:`SearchState`."""
    graph, tables, work = state.graph, state.tables, state.work
    corridor, points, ends = work.corridor, work.points, work.ends
    ends[0, 0], ends[0, 1], ends[0, 2] = x0, y0, z0
    ends[1, 0], ends[1, 1], ends[1, 2] = x1, y1, z1
    nothing = 0.0
    code = locate_ends(tables, ends, corridor, excl)
    if code != OK:
        return code, nothing, 0, nothing
    S = corridor[0]
    G = corridor[1]
    if S == G:
        copy_rows(points, 0, ends, 0, 2)
        d = np.sqrt((ends[1, 0] - ends[0, 0]) ** 2 + (ends[1, 1] - ends[0, 1]) ** 2
                    + (ends[1, 2] - ends[0, 2]) ** 2)
        return OK, d, 0, d
    if graph.component[S] != graph.component[G]:
        return UNREACHABLE, nothing, 0, nothing
    # every link from the ends open: the (2,4) bools a radius search passes
    # (the same type, so _search and _seed compile once for both)
    best, meet_u, meet_v = _search(graph, work, ends, S, G, scale, excl, plain, hw, lw, qid,
                                   np.ones((2, 4), dtype=np.bool_))
    if not best < np.inf:
        return UNREACHABLE, nothing, 0, nothing
    n = _trace_route(graph, work.portals, meet_u, meet_v)
    if n < 0 or not _write_corridor(graph, work.portals, corridor, S, G, n):
        return BROKEN_CHAIN, best, 0, nothing
    best = _route_cost(graph, work.portals, corridor, ends, scale, plain, n)
    return OK, best, n, _centroid_polyline(graph, work.portals, points, ends, n)
