"""Compiled kernel of the world's coarse route (:mod:`regn.world.route`).

:func:`node_astar` is an A* over the portal-node graph (CSR: ``indptr``,
``indices``, ``weight``, the tile ``via`` which each edge runs in), from
seed nodes at given costs to the goal, which each node reaches at
``to_goal[n]`` (inf: not directly); the bound is the straight distance to
the goal, shrunk a hair.
"""

from __future__ import annotations

import heapq

import numpy as np

from .._jit import kernel


@kernel
def node_astar(indptr, indices, weight, via, points, goal, seeds, seed_costs, s_tile,
               to_goal):
    """``(best, end, parent, parent_tile)``: the cheapest cost, the node the
    route leaves for the goal from (-1: none), and each node's predecessor
    (-1: a seed) and the tile the route reached it in."""
    n = len(indptr) - 1
    dist = np.full(n, np.inf)
    parent = np.full(n, -1, np.int64)
    tile = np.full(n, -1, np.int64)
    h = np.empty(n)
    for i in range(n):
        d = 0.0
        for k in range(3):
            d += (points[i, k] - goal[k]) ** 2
        h[i] = np.sqrt(d) * (1.0 - 1e-6)
    heap = [(np.inf, np.int64(0))]
    heap.pop()
    for k in range(len(seeds)):
        s = seeds[k]
        if seed_costs[k] < dist[s]:
            dist[s] = seed_costs[k]
            tile[s] = s_tile
            heapq.heappush(heap, (seed_costs[k] + h[s], s))
    best = np.inf
    end = -1
    while len(heap):
        key, u = heapq.heappop(heap)
        if key >= best:
            break
        d = dist[u]
        if key > d + h[u] + 1e-9:
            continue
        if d + to_goal[u] < best:
            best = d + to_goal[u]
            end = u
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            nd = d + weight[e]
            if nd < dist[v]:
                dist[v] = nd
                parent[v] = u
                tile[v] = via[e]
                heapq.heappush(heap, (nd + h[v], v))
    return best, end, parent, tile
