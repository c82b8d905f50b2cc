"""Compiled kernels of :mod:`regn.geometry.overlap` (imported only on first use).

Two closed tetrahedra have overlapping interiors exactly when no axis
separates them; the axes to try are the 4 + 4 face normals and the 36
crosses of an edge of one with an edge of the other (the separating-axis
theorem for convex polyhedra). Along an axis ``a`` the two are separated
when their intervals overlap by at most ``tol * |a|`` (``tol`` in metres):
tetrahedra that share a face, an edge or a vertex, or touch, are separated.
A zero axis (parallel edges) separates nothing.

The broad phase buckets each tetrahedron's bounding box on a uniform grid;
a pair is tested once, in the bucket that holds the low corner of the
intersection of their boxes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit import kernel, prange

_FACES = np.array([[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]], np.int64)
_EDGES = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]], np.int64)


@kernel(inline=True)
def _edge(q, e):
    """Edge ``e`` (vertex slots :data:`_EDGES` [e]) of the tetrahedron ``q``."""
    a = 3 * _EDGES[e, 0]
    b = 3 * _EDGES[e, 1]
    return q[b] - q[a], q[b + 1] - q[a + 1], q[b + 2] - q[a + 2]


@kernel
def _face_normal(pts, t, k):
    o = _FACES[k, 0]
    u0, u1, u2 = (pts[t, _FACES[k, 1], 0] - pts[t, o, 0], pts[t, _FACES[k, 1], 1] - pts[t, o, 1],
                  pts[t, _FACES[k, 1], 2] - pts[t, o, 2])
    w0, w1, w2 = (pts[t, _FACES[k, 2], 0] - pts[t, o, 0], pts[t, _FACES[k, 2], 1] - pts[t, o, 1],
                  pts[t, _FACES[k, 2], 2] - pts[t, o, 2])
    return u1 * w2 - u2 * w1, u2 * w0 - u0 * w2, u0 * w1 - u1 * w0


class _Shapes(NamedTuple):
    """Per tetrahedron: bounding box, unit face normals and the
    tetrahedron's own interval along each of them (metres)."""
    lo: np.ndarray          # (T,3)
    hi: np.ndarray          # (T,3)
    normal: np.ndarray      # (T,4,3) face k's unit normal (NaN for a degenerate face)
    span: np.ndarray        # (T,4,2) min, max of the vertices along normal k
    finite: np.ndarray      # (T,) every coordinate finite


@kernel
def _shapes(pts):
    n = pts.shape[0]
    lo = np.empty((n, 3))
    hi = np.empty((n, 3))
    normal = np.empty((n, 4, 3))
    span = np.empty((n, 4, 2))
    finite = np.ones(n, np.bool_)
    for t in range(n):
        for e in range(3):
            mn = math.inf
            mx = -math.inf
            for v in range(4):
                x = pts[t, v, e]
                finite[t] &= math.isfinite(x)
                mn = min(mn, x)
                mx = max(mx, x)
            lo[t, e] = mn
            hi[t, e] = mx
        q = _vertices(pts, t)
        for k in range(4):
            a0, a1, a2 = _face_normal(pts, t, k)
            length = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
            if not length > 0.0:
                length = math.nan         # a degenerate face separates nothing
            normal[t, k, 0] = a0 / length
            normal[t, k, 1] = a1 / length
            normal[t, k, 2] = a2 / length
            span[t, k, 0], span[t, k, 1] = _interval(q, a0 / length, a1 / length, a2 / length)
    return _Shapes(lo, hi, normal, span, finite)


@kernel(inline=True)
def _vertices(pts, t):
    """Tetrahedron ``t``'s vertices as a 12-tuple (x0, y0, z0, ... z3)."""
    return (pts[t, 0, 0], pts[t, 0, 1], pts[t, 0, 2], pts[t, 1, 0], pts[t, 1, 1], pts[t, 1, 2],
            pts[t, 2, 0], pts[t, 2, 1], pts[t, 2, 2], pts[t, 3, 0], pts[t, 3, 1], pts[t, 3, 2])


@kernel(inline=True)
def _interval(q, a0, a1, a2):
    """min, max of the vertices ``q`` (a 12-tuple) along the axis ``a``."""
    x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3 = q
    p0 = a0 * x0 + a1 * y0 + a2 * z0
    p1 = a0 * x1 + a1 * y1 + a2 * z1
    p2 = a0 * x2 + a1 * y2 + a2 * z2
    p3 = a0 * x3 + a1 * y3 + a2 * z3
    return min(min(p0, p1), min(p2, p3)), max(max(p0, p1), max(p2, p3))


@kernel(inline=True)
def _faces_of(sh, i):
    """Tetrahedron ``i``'s unit face normals and its span along each, as a
    20-tuple (n0x, n0y, n0z, lo0, hi0, n1x, ...)."""
    n = sh.normal
    s = sh.span
    return (n[i, 0, 0], n[i, 0, 1], n[i, 0, 2], s[i, 0, 0], s[i, 0, 1],
            n[i, 1, 0], n[i, 1, 1], n[i, 1, 2], s[i, 1, 0], s[i, 1, 1],
            n[i, 2, 0], n[i, 2, 1], n[i, 2, 2], s[i, 2, 0], s[i, 2, 1],
            n[i, 3, 0], n[i, 3, 1], n[i, 3, 2], s[i, 3, 0], s[i, 3, 1])


@kernel(inline=True)
def _face_separates(faces, q, tol):
    """Does one of the face normals ``faces`` (see :func:`_faces_of`)
    separate the tetrahedron ``q`` from the one they belong to?"""
    for k in range(4):
        mn, mx = _interval(q, faces[5 * k], faces[5 * k + 1], faces[5 * k + 2])
        if min(faces[5 * k + 4], mx) - max(faces[5 * k + 3], mn) <= tol:
            return True
    return False


@kernel
def _edge_axis_separates(q_i, q_j, tol):
    """Does the cross of an edge of one with an edge of the other separate
    the tetrahedra ``q_i`` and ``q_j``?"""
    for ei in range(6):
        u0, u1, u2 = _edge(q_i, ei)
        for ej in range(6):
            w0, w1, w2 = _edge(q_j, ej)
            a0 = u1 * w2 - u2 * w1
            a1 = u2 * w0 - u0 * w2
            a2 = u0 * w1 - u1 * w0
            nn = a0 * a0 + a1 * a1 + a2 * a2
            if not nn > 0.0:
                continue                  # parallel edges: no axis
            mn_i, mx_i = _interval(q_i, a0, a1, a2)
            mn_j, mx_j = _interval(q_j, a0, a1, a2)
            if min(mx_i, mx_j) - max(mn_i, mn_j) <= tol * math.sqrt(nn):
                return True
    return False


@kernel
def tets_overlap(pts, sh, i, j, tol):
    """Do the interiors of tetrahedra ``i`` and ``j`` of ``pts`` (T,4,3)
    overlap by more than ``tol`` metres along every candidate axis?"""
    return _overlap(_vertices(pts, i), _faces_of(sh, i), pts, sh, j, tol)


@kernel(inline=True)
def _overlap(q_i, faces_i, pts, sh, j, tol):
    """:func:`tets_overlap` with tetrahedron i's vertices and faces loaded."""
    q_j = _vertices(pts, j)
    return not (_face_separates(faces_i, q_j, tol)
                or _face_separates(_faces_of(sh, j), q_i, tol)
                or _edge_axis_separates(q_i, q_j, tol))


class _Buckets(NamedTuple):
    """The broad phase's buckets, as CSR: bucket b's entries are
    ``start[b]:start[b + 1]``; per entry, its tetrahedron, its box, and
    which axes the box starts on in this bucket (bits 1, 2, 4 for x, y, z)."""
    start: np.ndarray       # (B+1,)
    tet: np.ndarray         # (M,)
    lo: np.ndarray          # (M,3)
    hi: np.ndarray          # (M,3)
    starts_here: np.ndarray  # (M,)


@kernel
def _bucket(x, origin, size, n):
    return int(min(max(math.floor((x - origin) / size), 0.0), float(n - 1)))


@kernel
def _buckets(sh, origin, size, dims):
    """Every tetrahedron (with finite coordinates) entered in each bucket
    its box meets."""
    n = sh.lo.shape[0]
    blo = np.zeros((n, 3), np.int64)
    bhi = np.full((n, 3), -1, np.int64)
    n_buckets = dims[0] * dims[1] * dims[2]
    start = np.zeros(n_buckets + 1, np.int64)
    for t in range(n):
        if not sh.finite[t]:
            continue
        for e in range(3):
            blo[t, e] = _bucket(sh.lo[t, e], origin[e], size[e], dims[e])
            bhi[t, e] = _bucket(sh.hi[t, e], origin[e], size[e], dims[e])
        for z in range(blo[t, 2], bhi[t, 2] + 1):
            for y in range(blo[t, 1], bhi[t, 1] + 1):
                for x in range(blo[t, 0], bhi[t, 0] + 1):
                    start[(z * dims[1] + y) * dims[0] + x + 1] += 1
    for b in range(n_buckets):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    m = start[n_buckets]
    entry_tet = np.empty(m, np.int64)
    entry_mask = np.empty(m, np.int64)
    for t in range(n):
        for z in range(blo[t, 2], bhi[t, 2] + 1):
            for y in range(blo[t, 1], bhi[t, 1] + 1):
                for x in range(blo[t, 0], bhi[t, 0] + 1):
                    k = fill[(z * dims[1] + y) * dims[0] + x]
                    fill[(z * dims[1] + y) * dims[0] + x] = k + 1
                    entry_tet[k] = t
                    entry_mask[k] = ((x == blo[t, 0]) | ((y == blo[t, 1]) << 1)
                                     | ((z == blo[t, 2]) << 2))
    # within each bucket, entries in order of their mask (a counting sort)
    tet = np.empty(m, np.int64)
    lo = np.empty((m, 3))
    hi = np.empty((m, 3))
    starts_here = np.empty(m, np.int64)
    for b in range(n_buckets):
        k = start[b]
        for mask in range(8):
            for e in range(start[b], start[b + 1]):
                if entry_mask[e] == mask:
                    t = entry_tet[e]
                    tet[k] = t
                    lo[k] = sh.lo[t]
                    hi[k] = sh.hi[t]
                    starts_here[k] = mask
                    k += 1
    return _Buckets(start, tet, lo, hi, starts_here)


@kernel
def _mask_groups(bk, b):
    """(9,) where each mask's entries of bucket ``b`` begin (and the end)."""
    g = np.empty(9, np.int64)
    k = bk.start[b]
    for mask in range(8):
        g[mask] = k
        while k < bk.start[b + 1] and bk.starts_here[k] == mask:
            k += 1
    g[8] = k
    return g


@kernel(inline=True)
def _boxes_overlap(bk, p, q, tol):
    for e in range(3):
        if min(bk.hi[p, e], bk.hi[q, e]) - max(bk.lo[p, e], bk.lo[q, e]) <= tol:
            return False
    return True


@kernel
def _bucket_pairs(pts, sh, bk, b, tol, first, second):
    """Test the pairs whose home is bucket ``b``: on each axis one of the two
    boxes starts in it (so the bucket holds the low corner of their
    overlap), and the boxes overlap by more than ``tol``. Returns (tested,
    overlapping); the overlapping pairs go to ``first``/``second`` when
    they have room."""
    g = _mask_groups(bk, b)
    tested = 0
    found = 0
    for p in range(bk.start[b], bk.start[b + 1]):
        need = 7 & ~bk.starts_here[p]
        q_i = _vertices(pts, bk.tet[p])
        faces_i = _faces_of(sh, bk.tet[p])
        for mask in range(8):
            if mask & need != need:
                continue
            for q in range(max(g[mask], p + 1), g[mask + 1]):
                if not _boxes_overlap(bk, p, q, tol):
                    continue
                tested += 1
                if _overlap(q_i, faces_i, pts, sh, bk.tet[q], tol):
                    if found < first.shape[0]:
                        first[found] = min(bk.tet[p], bk.tet[q])
                        second[found] = max(bk.tet[p], bk.tet[q])
                    found += 1
    return tested, found


@kernel(parallel=True)
def _count_per_bucket(pts, sh, bk, tol):
    n_b = bk.start.shape[0] - 1
    tested = np.zeros(n_b, np.int64)
    found = np.zeros(n_b, np.int64)
    none = np.empty(0, np.int64)
    for b in prange(n_b):
        tested[b], found[b] = _bucket_pairs(pts, sh, bk, b, tol, none, none)
    return tested, found


@kernel
def overlapping_pairs(pts, tol, origin, size, dims):
    """``(tested, first, second)``: how many pairs of tetrahedra of ``pts``
    (T,4,3) with overlapping boxes were tested, and the pairs (first <
    second) whose interiors overlap. Tetrahedra with a non-finite
    coordinate are left out."""
    sh = _shapes(pts)
    bk = _buckets(sh, origin, size, dims)
    tested, found = _count_per_bucket(pts, sh, bk, tol)
    first = np.empty(found.sum(), np.int64)
    second = np.empty(found.sum(), np.int64)
    n = 0
    for b in np.flatnonzero(found):
        _bucket_pairs(pts, sh, bk, b, tol, first[n:], second[n:])
        n += found[b]
    return tested.sum(), first, second
