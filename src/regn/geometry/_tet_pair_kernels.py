"""Compiled kernels of :mod:`regn.geometry.overlap` (imported only on first use).

The exact test: two closed tetrahedra have overlapping interiors exactly
when no axis separates them; the axes to try are the 4 + 4 face normals and
the 36 crosses of an edge of one with an edge of the other (the
separating-axis theorem for convex polyhedra). Along an axis ``a`` the two
are separated when their intervals overlap by at most ``tol * |a|`` (``tol``
in metres): tetrahedra that share a face, an edge or a vertex, or touch, are
separated. A zero axis (parallel edges) separates nothing. Normals are
computed when needed, unnormalised (twice the face's area), and compared
squared: no root, and no per-tetrahedron tables (on this machine writing
fresh memory costs more than the arithmetic).

:func:`tet_boxes` measures each tetrahedron (its box and face normals) for the
broad phases of :mod:`regn.geometry._face_listing_kernels` and
:mod:`regn.geometry._face_proximity_kernels`.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel
from ..tolerances import OVERLAP_REL

TET_FACES = np.array([[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]], np.int64)


_EDGES = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]], np.int64)


@kernel(borrows=True)
def face_normal(pts, t, k):
    """Face k of tetrahedron t: its outward normal (unnormalised: twice its
    area), and the normal's value on the face and at the opposite vertex."""
    o, p, q = TET_FACES[k, 0], TET_FACES[k, 1], TET_FACES[k, 2]
    u0, u1, u2 = pts[t, p, 0] - pts[t, o, 0], pts[t, p, 1] - pts[t, o, 1], pts[t, p, 2] - pts[t, o, 2]
    w0, w1, w2 = pts[t, q, 0] - pts[t, o, 0], pts[t, q, 1] - pts[t, o, 1], pts[t, q, 2] - pts[t, o, 2]
    a0, a1, a2 = u1 * w2 - u2 * w1, u2 * w0 - u0 * w2, u0 * w1 - u1 * w0
    on = a0 * pts[t, o, 0] + a1 * pts[t, o, 1] + a2 * pts[t, o, 2]
    apex = a0 * pts[t, k, 0] + a1 * pts[t, k, 1] + a2 * pts[t, k, 2]
    if apex > on:                         # point it away from the opposite vertex
        return -a0, -a1, -a2, -on, -apex
    return a0, a1, a2, on, apex


@kernel(borrows=True)
def interval_along(pts, t, a0, a1, a2):
    """min, max of tetrahedron ``t``'s vertices along the axis ``a``."""
    mn = math.inf
    mx = -math.inf
    for v in range(4):
        p = a0 * pts[t, v, 0] + a1 * pts[t, v, 1] + a2 * pts[t, v, 2]
        mn = min(mn, p)
        mx = max(mx, p)
    return mn, mx


@kernel(borrows=True)
def _apart(mn_i, mx_i, mn_j, mx_j, tol2, nn):
    """Are two intervals along an axis of squared length ``nn`` apart, or
    overlapping by at most ``tol`` times its length?"""
    ov = min(mx_i, mx_j) - max(mn_i, mn_j)
    return ov <= 0.0 or ov * ov <= tol2 * nn


@kernel(borrows=True)
def _normals_separate(pts, i, j, tol2):
    """Does a face normal of ``i`` separate ``j`` from it?"""
    for k in range(4):
        a0, a1, a2, on, apex = face_normal(pts, i, k)
        mn, mx = interval_along(pts, j, a0, a1, a2)
        if _apart(apex, on, mn, mx, tol2, a0 * a0 + a1 * a1 + a2 * a2):
            return True
    return False


@kernel(borrows=True)
def _cross_separates(pts, i, ai, bi, j, aj, bj, tol2):
    """Does the cross of edge ``ai``->``bi`` of ``i`` with edge ``aj``->``bj``
    of ``j`` separate them? (A zero axis, of parallel edges, does not.)"""
    u0 = pts[i, bi, 0] - pts[i, ai, 0]
    u1 = pts[i, bi, 1] - pts[i, ai, 1]
    u2 = pts[i, bi, 2] - pts[i, ai, 2]
    w0 = pts[j, bj, 0] - pts[j, aj, 0]
    w1 = pts[j, bj, 1] - pts[j, aj, 1]
    w2 = pts[j, bj, 2] - pts[j, aj, 2]
    a0 = u1 * w2 - u2 * w1
    a1 = u2 * w0 - u0 * w2
    a2 = u0 * w1 - u1 * w0
    nn = a0 * a0 + a1 * a1 + a2 * a2
    if not nn > 0.0:
        return False
    mn_i, mx_i = interval_along(pts, i, a0, a1, a2)
    mn_j, mx_j = interval_along(pts, j, a0, a1, a2)
    return _apart(mn_i, mx_i, mn_j, mx_j, tol2, nn)


@kernel(borrows=True)
def _edge_axis_separates(pts, i, j, tol2):
    """Does the cross of an edge of ``i`` with an edge of ``j`` separate them?"""
    for ei in range(6):
        for ej in range(6):
            if _cross_separates(pts, i, _EDGES[ei, 0], _EDGES[ei, 1], j, _EDGES[ej, 0],
                                _EDGES[ej, 1], tol2):
                return True
    return False


@kernel(borrows=True)
def _corner_crosses_separate(pts, i, a, j, c, tol2):
    """For tetrahedra sharing one vertex (slot ``a`` of ``i``, ``c`` of
    ``j``): does the cross of an edge of one from that vertex with an edge
    of the other from it separate them? (With the face normals these are
    the axes of a plane through the shared vertex, the likely separator.)"""
    for bi in range(4):
        for bj in range(4):
            if bi != a and bj != c and _cross_separates(pts, i, a, bi, j, c, bj, tol2):
                return True
    return False


@kernel(borrows=True)
def shared_corner(tets, i, j):
    """``(n, a, c)``: how many vertices tetrahedra i and j share (by index),
    and, when one, its slot in each."""
    n = 0
    a = c = -1
    for si in range(4):
        for sj in range(4):
            if tets[i, si] == tets[j, sj]:
                n += 1
                a, c = si, sj
    return n, a, c


@kernel(borrows=True)
def pair_overlaps(pts, tets, i, j, tol2):
    """Do the interiors of tetrahedra ``i`` and ``j`` overlap by more than
    ``tol`` (``tol2`` = its square) along every candidate axis? (The axes
    of a plane through a shared vertex first.)"""
    if _normals_separate(pts, i, j, tol2) or _normals_separate(pts, j, i, tol2):
        return False
    n, a, c = shared_corner(tets, i, j)
    if n == 1 and _corner_crosses_separate(pts, i, a, j, c, tol2):
        return False
    return not _edge_axis_separates(pts, i, j, tol2)


@kernel(borrows=True)
def _box(pts, t, lo, hi):
    """Box of tetrahedron t into lo[t], hi[t]; are its coordinates finite?"""
    finite = True
    for e in range(3):
        mn = math.inf
        mx = -math.inf
        for v in range(4):
            x = pts[t, v, e]
            finite &= math.isfinite(x)
            mn = min(mn, x)
            mx = max(mx, x)
        lo[t, e] = mn
        hi[t, e] = mx
    return finite


@kernel(borrows=True)
def _normals(pts, t, tol2, normal):
    """Tetrahedron t's outward face normals into ``normal[t]`` (float32);
    is it more than ``tol`` thick along each?"""
    thick = True
    for k in range(4):
        a0, a1, a2, on, apex = face_normal(pts, t, k)
        normal[t, k, 0], normal[t, k, 1], normal[t, k, 2] = a0, a1, a2
        h = on - apex
        thick &= h * h > tol2 * (a0 * a0 + a1 * a1 + a2 * a2)
    return thick


@kernel(borrows=True)
def _volume6(pts, t):
    """Six times tetrahedron t's signed volume, ((v1 - v0) x (v2 - v0)) . (v3 - v0)."""
    u0, u1, u2 = pts[t, 1, 0] - pts[t, 0, 0], pts[t, 1, 1] - pts[t, 0, 1], pts[t, 1, 2] - pts[t, 0, 2]
    w0, w1, w2 = pts[t, 2, 0] - pts[t, 0, 0], pts[t, 2, 1] - pts[t, 0, 1], pts[t, 2, 2] - pts[t, 0, 2]
    d0, d1, d2 = pts[t, 3, 0] - pts[t, 0, 0], pts[t, 3, 1] - pts[t, 0, 1], pts[t, 3, 2] - pts[t, 0, 2]
    return (u1 * w2 - u2 * w1) * d0 + (u2 * w0 - u0 * w2) * d1 + (u0 * w1 - u1 * w0) * d2


@kernel
def tet_boxes(pts, tol):
    """``(lo, hi, solid, normal, positive, tol)``: each tetrahedron's box;
    whether it is solid (finite, and more than ``tol`` thick along each
    face normal: a thinner one overlaps nothing by more than ``tol``); its
    outward face normals (T,4,3) float32 (the vertex certificates' sign
    tests); whether its signed volume is positive; and ``tol`` (< 0 on
    entry: :data:`~regn.tolerances.OVERLAP_REL` times the finite ones'
    extent)."""
    n = pts.shape[0]
    lo = np.empty((n, 3))
    hi = np.empty((n, 3))
    solid = np.zeros(n, np.bool_)
    normal = np.empty((n, 4, 3), np.float32)
    positive = np.zeros(n, np.bool_)
    g_lo = np.full(3, math.inf)
    g_hi = np.full(3, -math.inf)
    for t in range(n):
        solid[t] = _box(pts, t, lo, hi)
        if solid[t]:
            for e in range(3):
                g_lo[e] = min(g_lo[e], lo[t, e])
                g_hi[e] = max(g_hi[e], hi[t, e])
    if tol < 0.0:
        tol = 0.0
        for e in range(3):
            if g_hi[e] >= g_lo[e]:
                tol = max(tol, OVERLAP_REL * (g_hi[e] - g_lo[e]))
    for t in range(n):
        solid[t] = _normals(pts, t, tol * tol, normal) and solid[t]
        positive[t] = _volume6(pts, t) > 0.0
    return lo, hi, solid, normal, positive, tol

