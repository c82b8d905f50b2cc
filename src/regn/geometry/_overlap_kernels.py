"""Compiled kernels of :mod:`regn.geometry.overlap` (imported only on first use).

Two closed tetrahedra have overlapping interiors exactly when no axis
separates them; the axes to try are the 4 + 4 face normals and the 36
crosses of an edge of one with an edge of the other (the separating-axis
theorem for convex polyhedra). Along an axis ``a`` the two are separated
when their intervals overlap by at most ``tol * |a|`` (``tol`` in metres):
tetrahedra that share a face, an edge or a vertex, or touch, are separated.
A zero axis (parallel edges) separates nothing.

The broad phase buckets boxes on a uniform grid (:func:`items`); a pair of
boxes is tested once, in the bucket that holds the low corner of their
intersection, by :func:`pairs_in_range` for a range of tetrahedra (so that
threads can share the work). The boxes are either every tetrahedron
(every pair with overlapping boxes is tested) or, in a mesh whose
tetrahedra have one orientation and whose faces are listed once or twice,
its boundary faces, with :func:`folded_pairs` for the tetrahedra sharing a
face (see :mod:`regn.geometry.overlap` for why that is enough).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit import kernel

_FACES = np.array([[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]], np.int64)
_EDGES = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]], np.int64)


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
        for k in range(4):
            a0, a1, a2 = _face_normal(pts, t, k)
            length = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
            if not length > 0.0:
                length = math.nan         # a degenerate face separates nothing
            normal[t, k, 0] = a0 / length
            normal[t, k, 1] = a1 / length
            normal[t, k, 2] = a2 / length
            span[t, k, 0], span[t, k, 1] = _interval(pts, t, a0 / length, a1 / length,
                                                     a2 / length)
        a0, a1, a2 = _face_normal(pts, t, 3)           # (v1 - v0) x (v2 - v0)
        volume[t] = (a0 * (pts[t, 3, 0] - pts[t, 0, 0]) + a1 * (pts[t, 3, 1] - pts[t, 0, 1])
                     + a2 * (pts[t, 3, 2] - pts[t, 0, 2])) / 6.0
    return _Shapes(lo, hi, normal, span, finite, volume)


@kernel
def _interval(pts, t, a0, a1, a2):
    """min, max of tetrahedron ``t``'s vertices along the axis ``a``."""
    mn = math.inf
    mx = -math.inf
    for v in range(4):
        p = a0 * pts[t, v, 0] + a1 * pts[t, v, 1] + a2 * pts[t, v, 2]
        mn = min(mn, p)
        mx = max(mx, p)
    return mn, mx


@kernel
def _face_separates(pts, sh, i, j, tol):
    """Does a face normal of ``i`` separate ``j`` from it?"""
    for k in range(4):
        mn, mx = _interval(pts, j, sh.normal[i, k, 0], sh.normal[i, k, 1], sh.normal[i, k, 2])
        if min(sh.span[i, k, 1], mx) - max(sh.span[i, k, 0], mn) <= tol:
            return True
    return False


@kernel
def _cross_separates(pts, i, ai, bi, j, aj, bj, tol):
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
    mn_i, mx_i = _interval(pts, i, a0, a1, a2)
    mn_j, mx_j = _interval(pts, j, a0, a1, a2)
    return min(mx_i, mx_j) - max(mn_i, mn_j) <= tol * math.sqrt(nn)


@kernel
def _edge_axis_separates(pts, i, j, tol):
    """Does the cross of an edge of ``i`` with an edge of ``j`` separate them?"""
    for ei in range(6):
        for ej in range(6):
            if _cross_separates(pts, i, _EDGES[ei, 0], _EDGES[ei, 1], j, _EDGES[ej, 0],
                                _EDGES[ej, 1], tol):
                return True
    return False


@kernel
def _corner_crosses_separate(pts, i, a, j, c, tol):
    """For tetrahedra sharing one vertex (slot ``a`` of ``i``, ``c`` of
    ``j``): does the cross of an edge of one from that vertex with an edge
    of the other from it separate them? (With the face normals these are
    the axes of a plane through the shared vertex, the likely separator.)"""
    for bi in range(4):
        for bj in range(4):
            if bi != a and bj != c and _cross_separates(pts, i, a, bi, j, c, bj, tol):
                return True
    return False


@kernel
def tets_overlap(pts, sh, i, j, tol):
    """Do the interiors of tetrahedra ``i`` and ``j`` of ``pts`` (T,4,3)
    overlap by more than ``tol`` metres along every candidate axis?"""
    return not (_face_separates(pts, sh, i, j, tol) or _face_separates(pts, sh, j, i, tol)
                or _edge_axis_separates(pts, i, j, tol))


@kernel
def _shared_corner(tets, i, j):
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


@kernel
def _pair_overlaps(pts, sh, tets, i, j, tol):
    """:func:`tets_overlap` for a mesh's tetrahedra (vertex indices
    ``tets``), trying first the axes of a plane through a shared vertex; a
    pair sharing a face is left to the adjacency test (False here)."""
    n, a, c = _shared_corner(tets, i, j)
    if n >= 3:
        return False
    if _face_separates(pts, sh, i, j, tol) or _face_separates(pts, sh, j, i, tol):
        return False
    if n == 1 and _corner_crosses_separate(pts, i, a, j, c, tol):
        return False
    return not _edge_axis_separates(pts, i, j, tol)


@kernel
def _bucket(x, origin, size, n):
    return int(min(max(math.floor((x - origin) / size), 0.0), float(n - 1)))


@kernel
def _bucket_range(lo, hi, i, origin, size, dims):
    """Box ``i``'s first and last bucket on each axis (six ints)."""
    return (_bucket(lo[i, 0], origin[0], size[0], dims[0]),
            _bucket(lo[i, 1], origin[1], size[1], dims[1]),
            _bucket(lo[i, 2], origin[2], size[2], dims[2]),
            _bucket(hi[i, 0], origin[0], size[0], dims[0]),
            _bucket(hi[i, 1], origin[1], size[1], dims[1]),
            _bucket(hi[i, 2], origin[2], size[2], dims[2]))


@kernel
def _buckets(lo, hi, use, origin, size, dims):
    """``(start, entry, starts_here)``: every box ``lo``..``hi`` (N,3) with
    ``use`` entered in each bucket it meets, as CSR (bucket b's entries are
    ``entry[start[b]:start[b + 1]]``), with the axes the box starts on in
    that bucket (bits 1, 2, 4 for x, y, z)."""
    n_buckets = dims[0] * dims[1] * dims[2]
    start = np.zeros(n_buckets + 1, np.int64)
    for i in range(lo.shape[0]):
        if use[i]:
            x0, y0, z0, x1, y1, z1 = _bucket_range(lo, hi, i, origin, size, dims)
            for z in range(z0, z1 + 1):
                for y in range(y0, y1 + 1):
                    for x in range(x0, x1 + 1):
                        start[(z * dims[1] + y) * dims[0] + x + 1] += 1
    for b in range(n_buckets):
        start[b + 1] += start[b]
    entry = np.empty(start[n_buckets], np.int64)
    starts_here = np.empty(start[n_buckets], np.int64)
    fill = start[:-1].copy()
    for i in range(lo.shape[0]):
        if use[i]:
            x0, y0, z0, x1, y1, z1 = _bucket_range(lo, hi, i, origin, size, dims)
            for z in range(z0, z1 + 1):
                for y in range(y0, y1 + 1):
                    for x in range(x0, x1 + 1):
                        b = (z * dims[1] + y) * dims[0] + x
                        entry[fill[b]] = i
                        starts_here[fill[b]] = (x == x0) | ((y == y0) << 1) | ((z == z0) << 2)
                        fill[b] += 1
    return start, entry, starts_here


class _Items(NamedTuple):
    """The boxes tested against the tetrahedra, entered in the broad phase's
    buckets (CSR: bucket b's entries are ``start[b]:start[b + 1]``), each
    entry with the axes its box starts on in the bucket (bits 1, 2, 4 for x,
    y, z), its box and its slot: face k of tetrahedron i as ``4 i + k``, the
    whole tetrahedron i as ``-1 - i``."""
    start: np.ndarray       # (B+1,)
    starts_here: np.ndarray  # (M,)
    lo: np.ndarray          # (M,3)
    hi: np.ndarray          # (M,3)
    slot: np.ndarray        # (M,)


@kernel
def items(sh, item_lo, item_hi, item_slot, origin, size, dims):
    """The :class:`_Items` of the boxes ``item_lo``..``item_hi`` (N,3) with
    slots ``item_slot`` (N,) (those of tetrahedra with a non-finite
    coordinate left out)."""
    use = np.ones(item_slot.shape[0], np.bool_)
    for f in range(item_slot.shape[0]):
        use[f] = sh.finite[item_slot[f] >> 2 if item_slot[f] >= 0 else -1 - item_slot[f]]
    start, entry, starts_here = _buckets(item_lo, item_hi, use, origin, size, dims)
    # in bucket order: the pair loop reads them in turn
    return _Items(start, starts_here, item_lo[entry], item_hi[entry], item_slot[entry])


@kernel
def _tested_pairs(pts, sh, tets, it, tol, origin, size, dims, j0, j1, first, second):
    """Test each tetrahedron j in ``j0..j1-1`` against the tetrahedron i of
    every item of ``it`` whose box meets j's box, once per pair of boxes: in
    the bucket holding the low corner of their overlap (one of them starts
    there on each axis). Against face k of i, j must reach the face's plane
    from i's side (:func:`_reaches_face`); against a whole tetrahedron,
    only a higher j is tested (each pair once). With vertex indices ``tets``
    (the boundary test), :func:`_pair_overlaps` decides. Returns (tested,
    overlapping); the overlapping pairs go to ``first``/``second`` while
    they have room. (One loop over the tetrahedra: a call per tetrahedron
    costs more than its tests.)"""
    tested = 0
    found = 0
    for j in range(j0, j1):
        if not sh.finite[j]:
            continue
        # j's box shrunk by tol: boxes overlapping by at most tol are apart
        lo0, lo1, lo2 = sh.lo[j, 0] + tol, sh.lo[j, 1] + tol, sh.lo[j, 2] + tol
        hi0, hi1, hi2 = sh.hi[j, 0] - tol, sh.hi[j, 1] - tol, sh.hi[j, 2] - tol
        x0, y0, z0, x1, y1, z1 = _bucket_range(sh.lo, sh.hi, j, origin, size, dims)
        for z in range(z0, z1 + 1):
            for y in range(y0, y1 + 1):
                for x in range(x0, x1 + 1):
                    here = (x == x0) | ((y == y0) << 1) | ((z == z0) << 2)
                    b = (z * dims[1] + y) * dims[0] + x
                    for p in range(it.start[b], it.start[b + 1]):
                        if ((it.starts_here[p] | here) != 7 or it.hi[p, 0] <= lo0
                                or it.lo[p, 0] >= hi0 or it.hi[p, 1] <= lo1
                                or it.lo[p, 1] >= hi1 or it.hi[p, 2] <= lo2
                                or it.lo[p, 2] >= hi2):
                            continue
                        slot = it.slot[p]
                        i = slot >> 2 if slot >= 0 else -1 - slot
                        if i == j or (slot < 0 and i > j):
                            continue
                        if slot >= 0 and not _reaches_face(pts, sh, i, slot & 3, j, tol):
                            continue
                        tested += 1
                        if (_pair_overlaps(pts, sh, tets, i, j, tol) if tets.shape[0] else
                                tets_overlap(pts, sh, i, j, tol)):
                            # written here, not in a helper: a call in this
                            # loop makes it several times slower
                            if found < first.shape[0]:
                                first[found] = min(i, j)
                                second[found] = max(i, j)
                            found += 1
    return tested, found


@kernel
def _reaches_face(pts, sh, i, k, j, tol):
    """Does tetrahedron ``j`` reach into tetrahedron i's side of its
    face k by more than ``tol`` and come within ``tol`` of the face's plane?
    (Only such a tetrahedron can overlap i just inside that face.)"""
    n0, n1, n2 = sh.normal[i, k, 0], sh.normal[i, k, 1], sh.normal[i, k, 2]
    on = _dot(n0, n1, n2, pts, i, _FACES[k, 0])
    inward = 1.0 if _dot(n0, n1, n2, pts, i, k) > on else -1.0
    mn, mx = _interval(pts, j, inward * n0, inward * n1, inward * n2)
    return mx - inward * on > tol and mn - inward * on <= tol


@kernel
def pairs_in_range(pts, sh, tets, it, tol, origin, size, dims, j0, j1):
    """``(tested, first, second)``: :func:`_tested_pairs` for the
    tetrahedra ``j0..j1-1``, counted, then (when some overlap) collected.
    ``tets`` is (0,4) for the exhaustive test (the items being every
    tetrahedron), the mesh's vertex indices for the boundary test (the
    items its boundary faces)."""
    none = np.empty(0, np.int64)
    tested, found = _tested_pairs(pts, sh, tets, it, tol, origin, size, dims, j0, j1,
                                  none, none)
    first = np.empty(found, np.int64)
    second = np.empty(found, np.int64)
    if found:
        _tested_pairs(pts, sh, tets, it, tol, origin, size, dims, j0, j1, first, second)
    return tested, first, second


@kernel
def shapes(pts):
    """The :class:`_Shapes` of the tetrahedra ``pts`` (T,4,3)."""
    return _shapes(pts)


@kernel
def folded_pairs(pts, sh, adjacent, tol):
    """The rows of ``adjacent`` (K,4: t1, k1, t2, k2, two tetrahedra listing
    one face) whose tetrahedra overlap: both on one side of the face, and
    overlapping by more than ``tol``."""
    folded = np.zeros(adjacent.shape[0], np.bool_)
    for k in range(adjacent.shape[0]):
        folded[k] = _same_side(pts, sh, adjacent[k]) and tets_overlap(
            pts, sh, adjacent[k, 0], adjacent[k, 2], tol)
    return adjacent[folded]


@kernel
def _same_side(pts, sh, pair):
    """Two tetrahedra listing one face (``pair`` = t1, k1, t2, k2): are
    their opposite vertices not strictly on opposite sides of it? (If they
    are, the face's plane separates them.)"""
    t1, k1, t2, k2 = pair[0], pair[1], pair[2], pair[3]
    n0, n1, n2 = sh.normal[t1, k1, 0], sh.normal[t1, k1, 1], sh.normal[t1, k1, 2]
    on = _dot(n0, n1, n2, pts, t1, _FACES[k1, 0])
    return (_dot(n0, n1, n2, pts, t1, k1) - on) * (_dot(n0, n1, n2, pts, t2, k2) - on) >= 0.0


@kernel
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
