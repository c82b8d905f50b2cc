"""Connected components of tetrahedra joined through shared faces."""

from __future__ import annotations

import numpy as np

from .tets import face_keys


def components_of_pairs(n, a, b):
    """``(count, labels)`` of the graph of ``n`` nodes with edges ``a[i]-b[i]``:
    labels (n,) int64, numbered in order of each component's smallest node
    (a compiled union-find, :func:`regn.geometry._graph_kernels.component_labels`)."""
    from ._graph_kernels import component_labels
    a = np.ascontiguousarray(a, np.int64)
    b = np.ascontiguousarray(b, np.int64)
    if len(a) != len(b) or (len(a) and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n)):
        raise ValueError(f"edges must join nodes 0 .. {n - 1}")
    count, labels = component_labels(int(n), a, b)
    return int(count), labels


def components(neighbors):
    """``(count, labels)`` of the tetrahedra given their ``neighbors`` (T,4)
    (the tetrahedron across each face slot, -1 for none, as
    :attr:`regn.Mesh.neighbors`)."""
    nb = np.asarray(neighbors, np.int64)
    t, k = np.nonzero(nb >= 0)
    return components_of_pairs(len(nb), t, nb[t, k])


def tet_components(tets):
    """``(count, labels)`` of a bare tetrahedral mesh ``tets`` (T,4) vertex
    indices: tetrahedra listing the same face (the same three vertices) are
    joined."""
    t = np.asarray(tets, np.int64)
    if not len(t):
        return 0, np.zeros(0, dtype=np.int64)
    _, inv = np.unique(face_keys(t), return_inverse=True)
    inv = inv.ravel()
    order = np.argsort(inv, kind="stable")
    same = np.flatnonzero(inv[order][1:] == inv[order][:-1])
    return components_of_pairs(len(t), order[same] // 4, order[same + 1] // 4)
