"""Compiled kernels of the cost field (:mod:`regn.query.paths.field`).

:func:`search_from_goal` is a one-sided Dijkstra over the path search's face
graph (:class:`regn.query.paths.path.SearchGraph`, internal face numbers), grown
from the goal: the goal's tetrahedron's portal faces are seeded at their
straight distance from the goal, and each edge costs what
:mod:`regn.query.paths._path_kernels` charges for it. It writes each face's cost to
the goal, the next face toward it and the tetrahedron crossed to get there,
in file numbering. :func:`follow` answers positions from those arrays (the
record :class:`regn.query.paths.field.FieldArrays`, read once per call).
"""

from __future__ import annotations

import numpy as np

from ..._jit import copy_rows, kernel, set_row
from ...status import EXCLUDED, GOAL_OUTSIDE, OK
from ...tolerances import BARY_TOL
from ..locating._locate_kernels import barycentric, locate_points
from ._path_kernels import CX, CY, CZ, ET0, heap_pop, heap_push, heap_reset

#: face_next of a face whose next stop is the goal itself
TO_GOAL = -1


@kernel
def _relax_all(edge, edge_int, node, scale, excl, plain, dist, nxt, via, key, heap, size):
    """Dijkstra until the open set is empty (``key``/``heap``: a heap of
    ``size`` entries, :func:`regn.query.paths._path_kernels.heap_push`)."""
    while size > 0:
        f = heap[0]
        kf = key[0]
        size = heap_pop(key, heap, size)
        if kf > dist[f]:
            continue                     # a stale entry
        for k in range(6):
            w = np.float64(edge[f, 2 * k])
            if w < 0:
                continue
            t = edge_int[f, ET0 + k // 3]
            if not plain:
                if excl[t]:
                    continue
                w = w * scale[t]
            v = edge_int[f, 2 * k + 1]
            d = kf + w
            if d < dist[v]:
                dist[v] = d
                nxt[v] = f
                via[v] = t
                size = heap_push(key, heap, size, d, v)
    return size


@kernel
def search_from_goal(graph, tables, goal, scale, excl, plain, key, heap, face_cost,
                     face_next, face_via):
    """Every face's cost to ``goal`` ((1,3)) into ``face_cost`` (inf when
    unreachable), the next face toward it into ``face_next`` (TO_GOAL when
    it is the goal) and the tetrahedron between them into ``face_via``, all
    indexed by file face number. Returns (status, goal tetrahedron)."""
    edge, edge_int, node = graph.edge, graph.edge_int, graph.node
    tet_faces, is_portal, face_order = graph.tet_faces, graph.is_portal, graph.face_order
    F = len(face_order)
    found = np.empty(1, np.int64)
    locate_points(tables, goal, found)
    G = found[0]
    face_cost[:] = np.inf
    face_next[:] = TO_GOAL
    face_via[:] = -1
    if G < 0:
        return GOAL_OUTSIDE, G
    if excl[G]:
        return EXCLUDED, G
    dist = np.full(F + 1, np.inf)        # row F: the graph's dummy face
    nxt = np.full(F + 1, -1, np.int64)
    via = np.full(F + 1, -1, np.int64)
    gx, gy, gz = goal[0, 0], goal[0, 1], goal[0, 2]
    size = 0
    heap_reset(key)
    for k in range(4):
        f = tet_faces[G, k]
        if not is_portal[f]:
            continue
        d = np.sqrt((node[f, CX] - gx) ** 2 + (node[f, CY] - gy) ** 2
                    + (node[f, CZ] - gz) ** 2)
        if d < dist[f]:
            dist[f] = d
            via[f] = G
            size = heap_push(key, heap, size, d, f)
    _relax_all(edge, edge_int, node, scale, excl, plain, dist, nxt, via, key, heap, size)
    for v in range(F):                   # internal -> file numbering
        f = face_order[v]
        face_cost[f] = dist[v]
        face_via[f] = via[v]
        if nxt[v] >= 0:
            face_next[f] = face_order[nxt[v]]
    return OK, G


@kernel
def _exit_face(tet_faces, neighbors, centroids, face_cost, t, x, y, z):
    """(cost, face slot) of the cheapest way out of tetrahedron t from
    (x, y, z): straight to a portal face's centroid, then that face's cost;
    (inf, -1) when none leads to the goal."""
    best, slot = np.inf, -1
    for k in range(4):
        if neighbors[t, k] < 0:
            continue
        f = tet_faces[t, k]
        c = np.sqrt((centroids[f, 0] - x) ** 2 + (centroids[f, 1] - y) ** 2
                    + (centroids[f, 2] - z) ** 2) + face_cost[f]
        if c < best:
            best, slot = c, k
    return best, slot


@kernel
def _coordinate(W, t, v, x, y, z):
    """The barycentric coordinate of (x, y, z) for vertex slot v of t."""
    l0, l1, l2, l3 = barycentric(W, t, x, y, z)
    return l0 if v == 0 else (l1 if v == 1 else (l2 if v == 2 else l3))


@kernel
def follow(arrays, tets, pts, cost, exit_face, waypoint):
    """Each point's cost to the goal and its next waypoint, given its
    tetrahedron (``tets``, -1 outside): in the goal's tetrahedron the
    straight distance and the goal; elsewhere the cheapest exit
    (:func:`_exit_face`: ``exit_face``, -1 in the goal's tetrahedron) and
    that face's centroid, or, for a point already on that face (its
    barycentric coordinate opposite it at most BARY_TOL), the stop after it.
    Outside, excluded or cut off: inf, -1 and NaN."""
    tet_faces, neighbors, centroids = arrays.tet_faces, arrays.neighbors, arrays.centroids
    W, opposite = arrays.W, arrays.opposite
    face_cost, face_next = arrays.face_cost, arrays.face_next
    goal, G, excl = arrays.goal, arrays.goal_tet, arrays.excl
    for i in range(len(tets)):
        t = tets[i]
        x, y, z = pts[i, 0], pts[i, 1], pts[i, 2]
        cost[i] = np.inf
        exit_face[i] = -1
        waypoint[i, :] = np.nan
        if t < 0 or G < 0 or excl[t]:
            continue
        if t == G:
            cost[i] = np.sqrt((goal[0] - x) ** 2 + (goal[1] - y) ** 2 + (goal[2] - z) ** 2)
            set_row(waypoint, i, goal)
            continue
        c, k = _exit_face(tet_faces, neighbors, centroids, face_cost, t, x, y, z)
        if k < 0:
            continue
        cost[i] = c
        f = exit_face[i] = tet_faces[t, k]
        if _coordinate(W, t, opposite[t, k], x, y, z) <= BARY_TOL:
            f = face_next[f]             # on the exit face: the stop after it
        if f < 0:
            set_row(waypoint, i, goal)
        else:
            copy_rows(waypoint, i, centroids, f, 1)


@kernel
def trace(arrays, t, x, y, z, portals, corridor):
    """The route from (x, y, z) in tetrahedron t (not the goal's, cost
    finite) into ``portals``/``corridor`` (the tetrahedra, one more than the
    portals); returns the number of portals."""
    tet_faces, neighbors, centroids = arrays.tet_faces, arrays.neighbors, arrays.centroids
    face_cost, face_next, face_via = arrays.face_cost, arrays.face_next, arrays.face_via
    _, k = _exit_face(tet_faces, neighbors, centroids, face_cost, t, x, y, z)
    f = tet_faces[t, k]
    corridor[0] = t
    n = 0
    while f >= 0 and n < len(portals):
        portals[n] = f
        corridor[n + 1] = face_via[f]
        n += 1
        f = face_next[f]
    return n
