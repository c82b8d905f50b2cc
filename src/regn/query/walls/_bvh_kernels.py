"""Compiled step of the wall hierarchy's build (:func:`regn.query.walls.nearest._build_bvh`):
each node of a level split at its middle, in place, by selection rather
than a sort of the level (a level's sort was most of the build: 1.5 s of
numpy for a level of 512 000 triangles)."""

from __future__ import annotations

import math

import numpy as np

from ..._jit import kernel

#: selection rounds on one node before the rest of it is sorted instead
#: (keeps the worst case n log n, whatever order the input's triangles come in)
SELECT_ROUNDS = 64


@kernel
def split_nodes(order, cen, ss, ee):
    """Each node ``order[ss[i]:ee[i]]`` (positions into the centroids
    ``cen`` (K,3)) put in order so that its first half holds the smaller
    coordinates along the longest axis of its centroids' extent (the first
    such axis; an extent that overflows counts as none)."""
    for i in range(ss.shape[0]):
        s, e = ss[i], ee[i]
        lo = np.full(3, np.inf)
        hi = np.full(3, -np.inf)
        for j in range(s, e):
            for ax in range(3):
                v = cen[order[j], ax]
                lo[ax] = min(lo[ax], v)
                hi[ax] = max(hi[ax], v)
        axis, widest = 0, -1.0
        for ax in range(3):
            w = hi[ax] - lo[ax]
            w = 0.0 if math.isnan(w) else w
            if w > widest:
                axis, widest = ax, w
        _select(order, cen, axis, s, e - 1, (s + e) // 2)


@kernel
def _select(order, cen, axis, lo, hi, k):
    """``order[lo:hi + 1]`` rearranged so that no entry before ``k`` has a
    larger key (``cen[., axis]``) than one from ``k`` on: Hoare's selection,
    the median of three as pivot; after SELECT_ROUNDS rounds the range left
    is sorted."""
    rounds = 0
    while hi > lo:
        rounds += 1
        if rounds > SELECT_ROUNDS:
            part = order[lo:hi + 1].copy()
            keys = np.empty(part.shape[0])
            for j in range(part.shape[0]):
                keys[j] = cen[part[j], axis]
            order[lo:hi + 1] = part[np.argsort(keys, kind="mergesort")]
            return
        a, b, c = cen[order[lo], axis], cen[order[(lo + hi) // 2], axis], cen[order[hi], axis]
        pivot = max(min(a, b), min(max(a, b), c))
        i, j = lo, hi
        while i <= j:
            while cen[order[i], axis] < pivot:
                i += 1
            while cen[order[j], axis] > pivot:
                j -= 1
            if i <= j:
                order[i], order[j] = order[j], order[i]
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return
