"""Tetrahedra: slot tables, volumes, faces by their vertices, point tests.

Slot conventions (the spec's): face slot k of a tetrahedron is the face
opposite vertex slot k, made of the vertex slots :data:`FACE_SLOTS` [k].
Every function takes float64 arrays in metres and works on whole batches.
"""

from __future__ import annotations

import numpy as np

from ..tolerances import BARY_TOL, DEGENERATE_REL

#: (4,3) the vertex slots of face slot k, the face opposite vertex slot k.
FACE_SLOTS = np.array([[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]])
FACE_SLOTS.flags.writeable = False
#: (6,2) the six edges of a tetrahedron as vertex-slot pairs.
TET_EDGES = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])
TET_EDGES.flags.writeable = False


def face_slot_vertices() -> np.ndarray:
    """(4,3): the vertex slots of face slot k (a fresh copy of :data:`FACE_SLOTS`)."""
    return FACE_SLOTS.copy()


def signed_volumes(tet_points: np.ndarray) -> np.ndarray:
    """(T,4,3) -> (T,) signed volume ((v1-v0) x (v2-v0)) . (v3-v0) / 6."""
    p = np.asarray(tet_points, dtype=np.float64)
    a = p[:, 1] - p[:, 0]
    b = p[:, 2] - p[:, 0]
    c = p[:, 3] - p[:, 0]
    return np.einsum("ij,ij->i", np.cross(a, b), c) / 6.0


def degenerate_threshold(tet_points: np.ndarray) -> np.ndarray:
    """(T,) volume below which each tetrahedron counts as degenerate:
    :data:`~regn.tolerances.DEGENERATE_REL` times its largest extent cubed."""
    p = np.asarray(tet_points, dtype=np.float64)
    # (p.max(axis=1) - p.min(axis=1)).max(axis=1), without numpy's slow
    # reductions over short axes; the same values, NaN propagating alike
    ext = (np.maximum(np.maximum(p[:, 0], p[:, 1]), np.maximum(p[:, 2], p[:, 3]))
           - np.minimum(np.minimum(p[:, 0], p[:, 1]), np.minimum(p[:, 2], p[:, 3])))
    size = np.maximum(np.maximum(ext[:, 0], ext[:, 1]), ext[:, 2])
    return DEGENERATE_REL * size ** 3


def edge_lengths(tet_points) -> np.ndarray:
    """(T,4,3) -> (T,6) length of each edge, in :data:`TET_EDGES` order."""
    p = np.asarray(tet_points, dtype=np.float64)
    return np.linalg.norm(p[:, TET_EDGES[:, 0]] - p[:, TET_EDGES[:, 1]], axis=2)


def least_heights(tet_points, vol) -> np.ndarray:
    """(T,) each tetrahedron's least height (corners (T,4,3), signed
    volumes ``vol`` (T,)): six times its volume over its widest face's
    cross product; NaN or inf where every face is flat."""
    p = np.asarray(tet_points, dtype=np.float64)
    cross = [np.cross(p[:, b] - p[:, a], p[:, c] - p[:, a])
             for a, b, c in ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3))]
    widest = np.max([np.sqrt(np.einsum("ij,ij->i", x, x)) for x in cross], axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 6.0 * np.abs(vol) / widest


def tets_by_vertex(tets, n_vertices):
    """CSR incidence ``(order, start)``: the tetrahedra holding vertex v are
    ``order[start[v]:start[v + 1]]``."""
    tets = np.asarray(tets)
    order = np.argsort(tets.ravel(), kind="stable") // 4
    start = np.concatenate([[0], np.cumsum(np.bincount(tets.ravel(), minlength=n_vertices))])
    return order, start


def used_vertices(points, tets):
    """``(points, tets)`` with the points no tetrahedron uses left out and
    ``tets`` (T,4) renumbered to match (int64)."""
    used, inv = np.unique(np.asarray(tets).ravel(), return_inverse=True)
    return points[used], inv.reshape(-1, 4).astype(np.int64)


def tet_bounds(tet_points):
    """(T,4,3) -> (lo (T,3), hi (T,3)) bounding boxes."""
    p = np.asarray(tet_points, np.float64)
    return p.min(axis=1), p.max(axis=1)


def sorted_face_vertices(tets) -> np.ndarray:
    """(T,4) vertex indices -> (4T,3) each face's vertices, sorted, in
    tetrahedron then face-slot order: equal rows are the same face."""
    return np.sort(np.asarray(tets)[:, FACE_SLOTS], axis=2).reshape(-1, 3)


def face_keys(tets) -> np.ndarray:
    """(T,4) vertex indices -> (4T,) one int64 per face (its sorted vertex
    triple as one number), in tetrahedron then face-slot order. Keys sort
    as the triples do."""
    tets = np.asarray(tets, np.int64)
    f = sorted_face_vertices(tets)
    n = np.int64(max(int(tets.max()) + 1, 1)) if len(tets) else np.int64(1)
    return (f[:, 0] * n + f[:, 1]) * n + f[:, 2]


def boundary_face_slots(tets) -> np.ndarray:
    """(T,4) bool: face slot k of tetrahedron t is listed by no other
    tetrahedron (a face of the mesh's boundary)."""
    _, inv, counts = np.unique(face_keys(tets), return_inverse=True, return_counts=True)
    return (counts[inv.ravel()] == 1).reshape(-1, 4)


def _orient(a, b, c, d):
    """6 x signed volume of (a, b, c, d), pair by pair."""
    return np.einsum("...i,...i->...", np.cross(b - a, c - a), d - a)


def points_in_tets(p, tet):
    """Closed point-in-tetrahedron test, pair by pair: ``p`` (P,3), ``tet`` (P,4,3)."""
    v = tet
    total = _orient(v[:, 0], v[:, 1], v[:, 2], v[:, 3])
    sgn = np.sign(total)
    inside = sgn != 0
    for k in range(4):
        w = [v[:, i] for i in range(4)]
        w[k] = p
        inside &= _orient(*w) * sgn >= 0
    return inside


def locate_in_tets(vertices, tets, points, k=8, rounds=(48, 128)):
    """(N,) index of a tetrahedron (of a bare tetrahedral mesh) containing
    each point, -1 if none found.

    cKDTree on the tetrahedra's centroids, barycentric test (within
    :data:`~regn.tolerances.BARY_TOL`) of the ``k`` nearest, then of more
    (``rounds``) for the points not yet found.
    """
    from scipy.spatial import cKDTree
    v = np.asarray(vertices, np.float64)
    t = np.asarray(tets, np.int64)
    p = np.asarray(points, np.float64).reshape(-1, 3)
    out = np.full(len(p), -1, dtype=np.int64)
    if not len(t) or not len(p):
        return out
    tp = v[t]
    tree = cKDTree(tp.mean(axis=1))
    # barycentric coordinates through the inverse edge matrices
    m = np.transpose(tp[:, 1:] - tp[:, :1], (0, 2, 1))           # (T,3,3)
    with np.errstate(all="ignore"):
        minv = np.linalg.inv(m)
    todo = np.arange(len(p))
    for kk in (k,) + tuple(rounds):
        kk = min(kk, len(t))
        if not len(todo):
            break
        _, nb = tree.query(p[todo], k=kk, workers=-1)
        nb = nb.reshape(len(todo), kk)
        found = np.full(len(todo), -1, dtype=np.int64)
        step = max(1, 2_000_000 // kk)
        for s in range(0, len(todo), step):
            q = p[todo[s:s + step]]
            cand = nb[s:s + step]                                   # (n,k)
            b = np.einsum("nkij,nkj->nki", minv[cand], q[:, None, :] - tp[cand, 0])
            ok = np.all(b >= -BARY_TOL, axis=2) & (b.sum(axis=2) <= 1 + BARY_TOL)
            hit = ok.any(axis=1)
            first = np.argmax(ok, axis=1)
            found[s:s + step] = np.where(hit, cand[np.arange(len(cand)), first], -1)
        out[todo] = found
        todo = todo[found < 0]
    return out
