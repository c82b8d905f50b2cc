"""Compiled kernel of the landmark table (:mod:`regn.query.paths.landmarks`)."""

from __future__ import annotations

import numpy as np

from ..._jit import kernel
from ._field_kernels import _relax_all
from ._path_kernels import heap_push, heap_reset


@kernel
def costs_from(edge, edge_int, node, source, dist, key, heap):
    """dist[:] = every face's cost from face ``source`` over the costs of
    the edge blocks ``edge`` (inf where unreachable), by the cost field's
    Dijkstra (:func:`regn.query.paths._field_kernels._relax_all`)."""
    faces = edge.shape[0]
    nxt = np.empty(faces, np.int64)
    via = np.empty(faces, np.int64)
    dist[:] = np.inf
    dist[source] = 0.0
    heap_reset(key)
    size = heap_push(key, heap, 0, 0.0, source)
    _relax_all(edge, edge_int, node, np.ones(1), np.zeros(1, np.bool_), True, dist, nxt, via,
               key, heap, size)


@kernel
def farthest_landmarks(edge, edge_int, node, first, usable, table, key, heap):
    """Choose up to ``table.shape[1]`` landmarks among the ``usable`` faces
    and write every face's cost to landmark k into ``table[:, k]`` (uint16,
    0 where unreachable): the first landmark is the usable face farthest
    from face ``first``, each next one the usable face farthest from all
    those before (the lowest number on ties). ``edge`` holds whole-quantum
    costs, so the costs are exact integers. Returns the number chosen
    (fewer when every usable face is taken), -1 when a cost does not fit."""
    most = np.iinfo(table.dtype).max
    faces = edge.shape[0]                # F + 1: the last row is the dummy face
    K = table.shape[1]
    dist = np.empty(faces)
    nearest = np.full(faces, np.inf)     # cost to the nearest face searched from
    source = first
    for k in range(-1, K):
        costs_from(edge, edge_int, node, source, dist, key, heap)
        if k >= 0:
            for v in range(faces):
                if dist[v] < np.inf:
                    if dist[v] > most:
                        return -1
                    table[v, k] = dist[v]
                else:
                    table[v, k] = 0
        far, pick = -1.0, -1
        for v in range(faces - 1):
            d = min(nearest[v], dist[v])
            nearest[v] = d
            if usable[v] and d < np.inf and d > far:
                far, pick = d, v
        if k + 1 == K:
            break
        if pick < 0 or far <= 0.0:
            return k + 1
        source = pick
    return K
