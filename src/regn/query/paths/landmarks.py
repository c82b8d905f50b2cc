"""Landmark bounds for the path search (A*, landmarks and the triangle
inequality: "ALT").

The Euclidean bound of :mod:`regn.query.paths.path` undershoots a route's cost by
the zig-zag of the portal-centroid graph (a median route costs 1.27 times
the straight line on the demo map), and the search settles every face whose
bound leaves room for that. A landmark L gives another lower bound: the face
graph is undirected, so for any faces v and f, d(v, f) >= |d(v, L) - d(f, L)|,
and graph costs already include the zig-zag.

Table. A mesh of at least :data:`MIN_FACES` faces gets :data:`LANDMARKS`
landmarks: portal faces of the largest connected component, each the one
farthest (by graph cost) from those chosen before. Every face's cost to
each is kept as a uint16 count of whole quanta q, q a power of two with
room for the largest cost (4 m on the demo map): the costs come from a
Dijkstra on the costs rounded *down* to whole quanta, floor(w / q), so they
are exact integers phi with q |phi(u) - phi(v)| <= w on every edge (u, v):
the bounds they give are consistent by construction, with no rounding to
allow for. 64 landmarks take 128 bytes a face, one Dijkstra each (once:
0.1 s on the demo map's 19 540 faces, 0.3 s on 61 060;
``fuzz/landmark_paths.py`` prints it).

Query. The search computes, per landmark and per end, two constants from
the end's tetrahedron's portal faces and their straight links
(:func:`regn.query.paths._path_kernels._landmark_bounds`, about 1 us), then each
face's bound is the largest of the Euclidean one and the 2 x 64 landmark
bounds, computed with int32 vector arithmetic. A maximum of consistent
bounds is consistent, so the search stays the exact bidirectional search of
:mod:`regn.query.paths.path`, the same optimum, settling fewer faces (median 337
-> 58 on the demo map). Options keep the bounds valid: excluded
tetrahedra, blockers and a radius only remove edges; with ``cost_scale``
the landmark bounds are multiplied by min(1, min(cost_scale)) like the
Euclidean one (the straight links from the ends are not scaled).

When. The table is built once a mesh has answered :data:`BUILD_AFTER`
searches (a process asking a few paths does not pay for it; the searches
before cost at most a few milliseconds more), by
:func:`regn.query.paths.batch.find_paths` before a batch that takes the count
there, and by ``mesh.prepare()`` (which ``regn serve`` calls at start): a
stream of queries that must not pause calls it first. Routes of exactly equal cost may
then be told apart differently; the cost is the optimum either way.
"""

from __future__ import annotations

import numpy as np

#: landmarks in a table (a face's row: 128 bytes)
LANDMARKS = 64
#: smaller face graphs get no table (their searches are short already)
MIN_FACES = 2000
#: searches on a mesh before its table is built
BUILD_AFTER = 32
#: the largest whole-quantum cost a table holds
MAX_QUANTA = np.iinfo(np.uint16).max


def landmark_table(graph, heap_len, count=LANDMARKS):
    """(table, quantum): the uint16 (F+1, k) table of whole-quantum costs to
    k <= ``count`` landmarks (internal face numbers; row F, the dummy face,
    and faces that cannot reach a landmark hold 0) of
    :class:`regn.query.paths.path.SearchGraph` ``graph``, and the quantum in
    metres; None when the mesh is too small (module docstring).
    ``heap_len``: the search heaps' length."""
    from ._landmark_kernels import costs_from, farthest_landmarks
    from ._path_kernels import CX, CZ, ET0
    F = len(graph.face_order)
    if F < MIN_FACES:
        return None
    face_tet = graph.edge_int[:F, ET0]
    big = np.bincount(graph.component).argmax()
    usable = graph.is_portal & (graph.component[face_tet] == big)
    if not usable.any():
        return None
    centre = graph.node[:F, CX:CZ + 1]
    idx = np.flatnonzero(usable)
    mid = 0.5 * (centre[idx].min(axis=0) + centre[idx].max(axis=0))
    first = int(idx[np.argmin(((centre[idx] - mid) ** 2).sum(axis=1))])
    key, heap = np.empty(heap_len), np.empty(heap_len, np.int32)
    # any two faces of first's component are at most twice its farthest apart
    dist = np.empty(F + 1)
    costs_from(graph.edge, graph.edge_int, graph.node, first, dist, key, heap)
    reach = float(dist[np.isfinite(dist)].max())
    if not reach > 0:
        return None
    quantum = 2.0 ** np.ceil(np.log2(2.0 * reach / MAX_QUANTA))
    edge = graph.edge.copy()
    cost = edge[:, 0:12:2]
    edge[:, 0:12:2] = np.where(cost >= 0, np.floor(cost.astype(np.float64) / quantum), -1.0)
    table = np.zeros((F + 1, count), np.uint16)
    k = farthest_landmarks(edge, graph.edge_int, graph.node, first, usable, table, key, heap)
    if k <= 0:
        return None
    return table[:, :k], float(quantum)
