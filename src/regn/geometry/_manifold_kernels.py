"""Compiled kernel of :mod:`regn.geometry.manifold` (imported only on first use)."""

from __future__ import annotations

import numpy as np

from .._jit import kernel

#: The corner slots at the two ends of each edge of a triangle.
_EDGE_ENDS = np.array([[0, 1], [1, 2], [0, 2]], np.int64)


@kernel
def _root(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@kernel
def _join(parent, a, b):
    ra = _root(parent, a)
    rb = _root(parent, b)
    if ra != rb:
        parent[max(ra, rb)] = min(ra, rb)


@kernel
def boundary_pinches(tris):
    """``(edges (E,2), vertices (P,), n_edges, n_vertices)`` of the boundary
    triangles ``tris`` (B,3), each row sorted: the edges not in exactly two
    triangles, the vertices whose triangles form two or more fans (triangles
    joined across every edge they share), and how many distinct edges and
    vertices the triangles have. Nodes of the fans are (triangle, corner)
    pairs."""
    n_t = tris.shape[0]
    n_v = 0
    for t in range(n_t):
        n_v = max(n_v, tris[t, 2] + 1)
    keys = np.empty(3 * n_t, np.int64)
    for t in range(n_t):
        for e in range(3):
            keys[3 * t + e] = tris[t, _EDGE_ENDS[e, 0]] * n_v + tris[t, _EDGE_ENDS[e, 1]]
    order = np.argsort(keys, kind="mergesort")
    parent = np.arange(3 * n_t)
    edge_list = [np.int64(0) for _ in range(0)]
    n_edges = 0
    run = 0
    while run < 3 * n_t:
        end = run + 1
        n_edges += 1
        while end < 3 * n_t and keys[order[end]] == keys[order[run]]:
            end += 1
        if end - run != 2:
            edge_list.append(keys[order[run]])
        for k in range(run + 1, end):
            a = order[k - 1]
            b = order[k]
            for side in range(2):
                _join(parent, 3 * (a // 3) + _EDGE_ENDS[a % 3, side],
                      3 * (b // 3) + _EDGE_ENDS[b % 3, side])
        run = end
    edges = np.empty((len(edge_list), 2), np.int64)
    for k in range(len(edge_list)):
        edges[k, 0] = edge_list[k] // n_v
        edges[k, 1] = edge_list[k] % n_v
    # fans: the distinct roots of each vertex's nodes
    fan_key = np.empty(3 * n_t, np.int64)
    for node in range(3 * n_t):
        fan_key[node] = tris[node // 3, node % 3] * (3 * n_t) + _root(parent, node)
    fan_key.sort()
    fans = np.zeros(n_v, np.int64)
    for k in range(3 * n_t):
        if k == 0 or fan_key[k] != fan_key[k - 1]:
            fans[fan_key[k] // (3 * n_t)] += 1
    return edges, np.flatnonzero(fans > 1), n_edges, np.count_nonzero(fans)
