"""Compiled kernel of :mod:`regn.geometry.graph`: connected components by
union-find (its own module: a query that needs only this does not pay for
defining the other geometry kernels)."""

from __future__ import annotations

import numpy as np

from .._jit import kernel


@kernel(borrows=True)
def find_root(parent, i):
    """The root of i's tree in the union-find forest ``parent``, halving the
    path on the way."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@kernel(borrows=True)
def join(parent, a, b):
    """Join a's and b's trees; the smaller root stays the root (so each
    root is its tree's smallest node)."""
    ra, rb = find_root(parent, a), find_root(parent, b)
    if ra != rb:
        parent[max(ra, rb)] = min(ra, rb)


@kernel
def component_labels(n, a, b):
    """(count, labels (n,) int64) of the graph of n nodes with edges
    a[k]-b[k] (union-find), components numbered in order of their smallest
    node."""
    parent = np.arange(n)
    for k in range(a.shape[0]):
        join(parent, a[k], b[k])
    labels = np.empty(n, np.int64)
    count = 0
    for i in range(n):
        r = find_root(parent, i)
        if r == i:
            labels[i] = count
            count += 1
        else:
            labels[i] = labels[r]                  # r < i: labelled already
    return count, labels
