"""Compiled kernels of :mod:`regn.geometry.overlap` (imported only on first use).

Two closed tetrahedra have overlapping interiors exactly when no axis
separates them; the axes to try are the 4 + 4 face normals and the 36
crosses of an edge of one with an edge of the other (the separating-axis
theorem for convex polyhedra). Along an axis ``a`` the two are separated
when their intervals overlap by at most ``tol * |a|`` (``tol`` in metres):
tetrahedra that share a face, an edge or a vertex, or touch, are separated.
A zero axis (parallel edges) separates nothing.

The broad phase buckets boxes on a uniform grid; a pair of boxes is tested
once, in the bucket that holds the low corner of their intersection. Either
every pair of tetrahedra with overlapping boxes is tested (:func:`all_pairs`)
or, in a mesh whose tetrahedra have one orientation and whose faces are
listed once or twice, only what can overlap there (:func:`boundary_pairs`;
see :mod:`regn.geometry.overlap` for why that is enough).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit import kernel

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
    volume: np.ndarray      # (T,) signed volume


@kernel
def _shapes(pts):
    n = pts.shape[0]
    lo = np.empty((n, 3))
    hi = np.empty((n, 3))
    normal = np.empty((n, 4, 3))
    span = np.empty((n, 4, 2))
    finite = np.ones(n, np.bool_)
    volume = np.empty(n)
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
        a0, a1, a2 = _face_normal(pts, t, 3)           # (v1 - v0) x (v2 - v0)
        volume[t] = (a0 * (pts[t, 3, 0] - pts[t, 0, 0]) + a1 * (pts[t, 3, 1] - pts[t, 0, 1])
                     + a2 * (pts[t, 3, 2] - pts[t, 0, 2])) / 6.0
    return _Shapes(lo, hi, normal, span, finite, volume)


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


@kernel
def _overlap(q_i, faces_i, pts, sh, j, tol):
    """:func:`tets_overlap` with tetrahedron i's vertices and faces loaded."""
    q_j = _vertices(pts, j)
    return not (_face_separates(faces_i, q_j, tol)
                or _face_separates(_faces_of(sh, j), q_i, tol)
                or _edge_axis_separates(q_i, q_j, tol))


class _Buckets(NamedTuple):
    """Boxes in the broad phase's buckets, as CSR: bucket b's entries are
    ``start[b]:start[b + 1]``; per entry, what it stands for (a tetrahedron,
    or a face slot ``4 t + k``), its box, and which axes the box starts on
    in this bucket (bits 1, 2, 4 for x, y, z), the entries of a bucket in
    order of that mask."""
    start: np.ndarray       # (B+1,)
    tet: np.ndarray         # (M,) tetrahedron, or face slot 4t+k
    lo: np.ndarray          # (M,3)
    hi: np.ndarray          # (M,3)
    starts_here: np.ndarray  # (M,)


@kernel
def _bucket(x, origin, size, n):
    return int(min(max(math.floor((x - origin) / size), 0.0), float(n - 1)))


@kernel
def _buckets(lo, hi, use, owner, origin, size, dims):
    """Every box ``lo``..``hi`` (N,3) with ``use`` entered in each bucket it
    meets, standing for the tetrahedron ``owner`` (N,)."""
    n = lo.shape[0]
    first = np.zeros((n, 3), np.int64)
    last = np.full((n, 3), -1, np.int64)          # unused boxes meet no bucket
    n_buckets = dims[0] * dims[1] * dims[2]
    start = np.zeros(n_buckets + 1, np.int64)
    for i in range(n):
        if not use[i]:
            continue
        for e in range(3):
            first[i, e] = _bucket(lo[i, e], origin[e], size[e], dims[e])
            last[i, e] = _bucket(hi[i, e], origin[e], size[e], dims[e])
        for z in range(first[i, 2], last[i, 2] + 1):
            for y in range(first[i, 1], last[i, 1] + 1):
                for x in range(first[i, 0], last[i, 0] + 1):
                    start[(z * dims[1] + y) * dims[0] + x + 1] += 1
    for b in range(n_buckets):
        start[b + 1] += start[b]
    m = start[n_buckets]
    entry = np.empty(m, np.int64)
    entry_mask = np.empty(m, np.int64)
    fill = start[:-1].copy()
    for i in range(n):
        for z in range(first[i, 2], last[i, 2] + 1):
            for y in range(first[i, 1], last[i, 1] + 1):
                for x in range(first[i, 0], last[i, 0] + 1):
                    b = (z * dims[1] + y) * dims[0] + x
                    entry[fill[b]] = i
                    entry_mask[fill[b]] = ((x == first[i, 0]) | ((y == first[i, 1]) << 1)
                                           | ((z == first[i, 2]) << 2))
                    fill[b] += 1
    # each bucket's entries in order of their mask (a counting sort)
    bk = _Buckets(start, np.empty(m, np.int64), np.empty((m, 3)), np.empty((m, 3)),
                  np.empty(m, np.int64))
    for b in range(n_buckets):
        k = start[b]
        for mask in range(8):
            for e in range(start[b], start[b + 1]):
                if entry_mask[e] == mask:
                    i = entry[e]
                    bk.tet[k] = owner[i]
                    bk.lo[k] = lo[i]
                    bk.hi[k] = hi[i]
                    bk.starts_here[k] = mask
                    k += 1
    return bk


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
def _boxes_overlap(a, p, b, q, tol):
    for e in range(3):
        if min(a.hi[p, e], b.hi[q, e]) - max(a.lo[p, e], b.lo[q, e]) <= tol:
            return False
    return True


@kernel
def _bucket_pairs(pts, sh, a, b_, bucket, same, tol, first, second):
    """Test the pairs (entry of ``a``, entry of ``b_``) whose home is
    ``bucket``: on each axis one of the two boxes starts in it (so it holds
    the low corner of their overlap), the boxes overlap by more than
    ``tol``, and they stand for two tetrahedra. ``same``: ``a`` is ``b_``
    (each pair once). Returns (tested, overlapping); the overlapping pairs
    go to ``first``/``second`` while they have room."""
    g = _mask_groups(b_, bucket)
    tested = 0
    found = 0
    for p in range(a.start[bucket], a.start[bucket + 1]):
        i = a.tet[p]
        need = 7 & ~a.starts_here[p]
        q_i = _vertices(pts, i)
        faces_i = _faces_of(sh, i)
        for mask in range(8):
            if mask & need != need:
                continue
            for q in range(max(g[mask], p + 1) if same else g[mask], g[mask + 1]):
                j = b_.tet[q]
                if j == i or not _boxes_overlap(a, p, b_, q, tol):
                    continue
                tested += 1
                if _overlap(q_i, faces_i, pts, sh, j, tol):
                    # written here, not in a helper: a call in this loop makes
                    # it several times slower
                    if found < first.shape[0]:
                        first[found] = min(i, j)
                        second[found] = max(i, j)
                    found += 1
    return tested, found


@kernel
def _pairs_by_bucket(pts, sh, a, b_, same, tol):
    """:func:`_bucket_pairs` over every bucket: (tested, overlapping pairs)."""
    n_b = a.start.shape[0] - 1
    found = np.zeros(n_b, np.int64)
    tested = 0
    none = np.empty(0, np.int64)
    for bucket in range(n_b):
        t, found[bucket] = _bucket_pairs(pts, sh, a, b_, bucket, same, tol, none, none)
        tested += t
    first = np.empty(found.sum(), np.int64)
    second = np.empty(found.sum(), np.int64)
    n = 0
    for bucket in np.flatnonzero(found):
        _bucket_pairs(pts, sh, a, b_, bucket, same, tol, first[n:], second[n:])
        n += found[bucket]
    return tested, first, second


@kernel
def shapes(pts):
    """The :class:`_Shapes` of the tetrahedra ``pts`` (T,4,3)."""
    return _shapes(pts)


@kernel
def all_pairs(pts, sh, tol, origin, size, dims):
    """``(tested, first, second)``: how many pairs of tetrahedra of ``pts``
    (T,4,3) (their :func:`shapes` ``sh``) with overlapping boxes were
    tested, and the pairs (first < second) whose interiors overlap.
    Tetrahedra with a non-finite coordinate are left out."""
    bk = _buckets(sh.lo, sh.hi, sh.finite, np.arange(sh.lo.shape[0]), origin, size, dims)
    return _pairs_by_bucket(pts, sh, bk, bk, True, tol)


@kernel
def _against_faces(pts, sh, faces, tol, origin, size, dims, first, second):
    """Test each tetrahedron j against the tetrahedron i of every boundary
    face (slot ``4 i + k`` in ``faces``) whose box meets j's box, in the
    pair's home bucket (one of the two boxes starts there on each axis),
    when j reaches the face's plane from i's side (:func:`_reaches_face`).
    Returns (tested, overlapping); the overlapping pairs go to
    ``first``/``second`` while they have room. (One loop over all
    tetrahedra: a call per tetrahedron costs more than its tests.)"""
    tested = 0
    found = 0
    for j in range(sh.lo.shape[0]):
        if not sh.finite[j]:
            continue
        q_j = _vertices(pts, j)
        faces_j = _faces_of(sh, j)
        x0 = _bucket(sh.lo[j, 0], origin[0], size[0], dims[0])
        y0 = _bucket(sh.lo[j, 1], origin[1], size[1], dims[1])
        z0 = _bucket(sh.lo[j, 2], origin[2], size[2], dims[2])
        for z in range(z0, _bucket(sh.hi[j, 2], origin[2], size[2], dims[2]) + 1):
            for y in range(y0, _bucket(sh.hi[j, 1], origin[1], size[1], dims[1]) + 1):
                for x in range(x0, _bucket(sh.hi[j, 0], origin[0], size[0], dims[0]) + 1):
                    here = (x == x0) | ((y == y0) << 1) | ((z == z0) << 2)
                    b = (z * dims[1] + y) * dims[0] + x
                    for p in range(faces.start[b], faces.start[b + 1]):
                        i = faces.tet[p] >> 2
                        if (faces.starts_here[p] | here) != 7 or i == j:
                            continue
                        if not (_box_meets_tet(faces, p, sh, j, tol)
                                and _reaches_face(pts, sh, i, faces.tet[p] & 3, q_j, tol)):
                            continue
                        tested += 1
                        if _overlap(q_j, faces_j, pts, sh, i, tol):
                            if found < first.shape[0]:
                                first[found] = min(i, j)
                                second[found] = max(i, j)
                            found += 1
    return tested, found


@kernel(inline=True)
def _reaches_face(pts, sh, i, k, q_j, tol):
    """Does the tetrahedron ``q_j`` reach into tetrahedron i's side of its
    face k by more than ``tol`` and come within ``tol`` of the face's plane?
    (Only such a tetrahedron can overlap i just inside that face.)"""
    n0, n1, n2 = sh.normal[i, k, 0], sh.normal[i, k, 1], sh.normal[i, k, 2]
    on = _dot(n0, n1, n2, pts, i, _FACES[k, 0])
    inward = 1.0 if _dot(n0, n1, n2, pts, i, k) > on else -1.0
    mn, mx = _interval(q_j, inward * n0, inward * n1, inward * n2)
    return mx - inward * on > tol and mn - inward * on <= tol


@kernel(inline=True)
def _box_meets_tet(faces, p, sh, j, tol):
    for e in range(3):
        if min(faces.hi[p, e], sh.hi[j, e]) - max(faces.lo[p, e], sh.lo[j, e]) <= tol:
            return False
    return True


@kernel
def boundary_pairs(pts, sh, tol, origin, size, dims, face_lo, face_hi, face_slot, adjacent):
    """``(tested, first, second)`` as :func:`all_pairs`, testing only the
    pairs that can overlap in a mesh whose tetrahedra all have one
    orientation and whose faces are each listed once or twice: each
    tetrahedron with a boundary face (``face_lo``..``face_hi``, of
    tetrahedron ``face_tet``) against every other whose box meets that
    face's box, and the tetrahedra sharing a face (``adjacent`` (K,2)).
    The overlapping pairs may repeat."""
    use = np.ones(face_slot.shape[0], np.bool_)
    for f in range(face_slot.shape[0]):
        use[f] = sh.finite[face_slot[f] >> 2]
    faces = _buckets(face_lo, face_hi, use, face_slot, origin, size, dims)
    none = np.empty(0, np.int64)
    tested, found = _against_faces(pts, sh, faces, tol, origin, size, dims, none, none)
    folded = np.zeros(adjacent.shape[0], np.bool_)
    for k in range(adjacent.shape[0]):
        folded[k] = (_same_side(pts, sh, adjacent[k]) and
                     tets_overlap(pts, sh, adjacent[k, 0], adjacent[k, 2], tol))
    first = np.empty(found + folded.sum(), np.int64)
    second = np.empty(found + folded.sum(), np.int64)
    if found:
        _against_faces(pts, sh, faces, tol, origin, size, dims, first, second)
    for n, k in enumerate(np.flatnonzero(folded)):
        first[found + n] = min(adjacent[k, 0], adjacent[k, 2])
        second[found + n] = max(adjacent[k, 0], adjacent[k, 2])
    return tested + adjacent.shape[0], first, second


@kernel
def _same_side(pts, sh, pair):
    """Two tetrahedra listing one face (``pair`` = t1, k1, t2, k2): are
    their opposite vertices not strictly on opposite sides of it? (If they
    are, the face's plane separates them.)"""
    t1, k1, t2, k2 = pair[0], pair[1], pair[2], pair[3]
    n0, n1, n2 = sh.normal[t1, k1, 0], sh.normal[t1, k1, 1], sh.normal[t1, k1, 2]
    on = _dot(n0, n1, n2, pts, t1, _FACES[k1, 0])
    return (_dot(n0, n1, n2, pts, t1, k1) - on) * (_dot(n0, n1, n2, pts, t2, k2) - on) >= 0.0


@kernel(inline=True)
def _dot(n0, n1, n2, pts, t, v):
    return n0 * pts[t, v, 0] + n1 * pts[t, v, 1] + n2 * pts[t, v, 2]


@kernel
def face_listings(tets):
    """``(boundary_tet, boundary_slot, adjacent (K,4), ok)`` of a tetrahedral
    mesh ``tets`` (T,4) vertex indices: the face slots whose face (its three
    vertices) no other slot lists; for each face two slots list, the two
    tetrahedra and their slots (t1, k1, t2, k2); and whether every face is
    listed at most twice. Faces are matched in a hash table of their sorted
    vertex triples."""
    n_t = tets.shape[0]
    size = 1
    while size < 8 * n_t:
        size *= 2
    table = np.full(size, -1, np.int64)          # slot 4t+k of the face's first listing
    mate = np.full(4 * n_t, -1, np.int64)        # the other listing, or -1
    ok = True
    for r in range(4 * n_t):
        t, k = r // 4, r % 4
        a = tets[t, _FACES[k, 0]]
        b = tets[t, _FACES[k, 1]]
        c = tets[t, _FACES[k, 2]]
        lo, hi = min(a, min(b, c)), max(a, max(b, c))
        mid = a + b + c - lo - hi
        h = ((lo * 73856093) ^ (mid * 19349663) ^ (hi * 83492791)) & (size - 1)
        while True:
            q = table[h]
            if q < 0:
                table[h] = r
                break
            qa = tets[q // 4, _FACES[q % 4, 0]]
            qb = tets[q // 4, _FACES[q % 4, 1]]
            qc = tets[q // 4, _FACES[q % 4, 2]]
            if (min(qa, min(qb, qc)) == lo and max(qa, max(qb, qc)) == hi
                    and qa + qb + qc == a + b + c):
                if mate[q] >= 0:
                    ok = False
                mate[q] = r
                mate[r] = q
                break
            h = (h + 1) & (size - 1)
    n_once = 0
    n_twice = 0
    for r in range(4 * n_t):
        if mate[r] < 0:
            n_once += 1
        elif mate[r] > r:
            n_twice += 1
    boundary_tet = np.empty(n_once, np.int64)
    boundary_slot = np.empty(n_once, np.int64)
    adjacent = np.empty((n_twice, 4), np.int64)
    i = j = 0
    for r in range(4 * n_t):
        if mate[r] < 0:
            boundary_tet[i] = r // 4
            boundary_slot[i] = r % 4
            i += 1
        elif mate[r] > r:
            adjacent[j, 0], adjacent[j, 1] = r // 4, r % 4
            adjacent[j, 2], adjacent[j, 3] = mate[r] // 4, mate[r] % 4
            j += 1
    return boundary_tet, boundary_slot, adjacent, ok
