"""Compiled kernel of :mod:`regn.geometry.graph`: connected components by
union-find (its own module: a query that needs only this does not pay for
defining the other geometry kernels)."""

from __future__ import annotations

import numpy as np

from .._jit import kernel


@kernel
def _root(parent, i):
    """The root of i's tree, halving the path on the way."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@kernel
def component_labels(n, a, b):
    """(count, labels (n,) int64) of the graph of n nodes with edges
    a[k]-b[k] (union-find), components numbered in order of their smallest
    node."""
    parent = np.arange(n)
    for k in range(a.shape[0]):
        ra, rb = _root(parent, a[k]), _root(parent, b[k])
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)      # the smaller node stays the root
    labels = np.empty(n, np.int64)
    count = 0
    for i in range(n):
        r = _root(parent, i)
        if r == i:
            labels[i] = count
            count += 1
        else:
            labels[i] = labels[r]                  # r < i: labelled already
    return count, labels
