"""Compiled kernel of :mod:`regn.geometry.manifold` (imported only on first use)."""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ._graph_kernels import find_root, join

#: The corner slots at the two ends of each edge of a triangle.
_EDGE_ENDS = np.array([[0, 1], [1, 2], [0, 2]], np.int64)


@kernel(borrows=True)
def _edge(tris, r):
    """Edge r % 3 of triangle r // 3 as its (smaller, larger) vertices."""
    t, e = r // 3, r % 3
    return tris[t, _EDGE_ENDS[e, 0]], tris[t, _EDGE_ENDS[e, 1]]


@kernel
def boundary_pinches(tris):
    """``(edges (E,2), vertices (P,), n_edges, n_vertices)`` of the boundary
    triangles ``tris`` (B,3), each row sorted: the edges not in exactly two
    triangles (sorted), the vertices whose triangles form two or more fans
    (triangles joined across every edge they share), and how many distinct
    edges and vertices the triangles have. Nodes of the fans are (triangle,
    corner) pairs; edges are matched in a hash table, and each fan is one
    set of nodes, counted at its root."""
    n_t = tris.shape[0]
    n_v = 0
    for t in range(n_t):
        n_v = max(n_v, tris[t, 2] + 1)
    size = 2
    while size < 2 * 3 * n_t:
        size *= 2
    table = np.full(size, -1, np.int64)
    count = np.zeros(3 * n_t, np.int64)      # on an edge's first listing: how many list it
    parent = np.arange(3 * n_t)
    n_edges = 0
    for r in range(3 * n_t):
        a, b = _edge(tris, r)
        h = ((a * 73856093) ^ (b * 19349663)) & (size - 1)
        while True:
            q = table[h]
            if q < 0:
                table[h] = r
                count[r] = 1
                n_edges += 1
                break
            qa, qb = _edge(tris, q)
            if qa == a and qb == b:
                count[q] += 1
                t, e, u, f = r // 3, r % 3, q // 3, q % 3
                for side in range(2):
                    join(parent, 3 * t + _EDGE_ENDS[e, side], 3 * u + _EDGE_ENDS[f, side])
                break
            h = (h + 1) & (size - 1)
    n_bad = 0
    for r in range(3 * n_t):
        n_bad += count[r] != 0 and count[r] != 2
    keys = np.empty(n_bad, np.int64)
    n_bad = 0
    for r in range(3 * n_t):
        if count[r] != 0 and count[r] != 2:
            a, b = _edge(tris, r)
            keys[n_bad] = a * n_v + b
            n_bad += 1
    keys.sort()
    edges = np.empty((n_bad, 2), np.int64)
    for k in range(n_bad):
        edges[k, 0], edges[k, 1] = keys[k] // n_v, keys[k] % n_v
    # each set of joined nodes is one fan of one vertex: count the roots
    fans = np.zeros(n_v, np.int64)
    for node in range(3 * n_t):
        if find_root(parent, node) == node:
            fans[tris[node // 3, node % 3]] += 1
    return edges, np.flatnonzero(fans > 1), n_edges, np.count_nonzero(fans)
