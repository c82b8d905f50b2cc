"""Compiled kernels of :mod:`regn.geometry.grid`: tetrahedra and triangles against
the cells of a uniform grid (imported only on first use).

:func:`membership` is :func:`regn.geometry.grid_membership`'s work: for each
tetrahedron, each cell of its (slightly widened) bounding box, a decision in
scalar code, nothing allocated per pair:

* a vertex inside the closed cell box: a sure hit;
* one of the four face-normal axes separates the two: a sure miss;
* a box corner inside the closed tetrahedron: a sure hit;
* otherwise the rest of the separating-axis test (the 3 box axes and the 18
  crosses of tetrahedron edges with box axes).

Every interval is widened by ``|axis| * eps`` (touching counts). The
arithmetic is a full separating-axis test's in numpy (the reference in the
tests): the same products and sums in the same order (``einsum`` adds a
3-term dot product as ``(x0*y0 + x2*y2) + x1*y1``), so a pair exactly
touching a cell gets the same answer. A NaN in a pair's arithmetic behaves
as numpy's NaN-propagating ``min``/``max``: it separates nothing and meets
no box.

A tetrahedron's vertices enter as a 12-tuple ``q`` (x0, y0, z0, ... z3),
relative to the cell box's centre; face normals as a 12-tuple ``n``
(face k's normal at n[3k:3k+3]).

:func:`tet_meets_box` (a blocker's box against a tetrahedron) and
:func:`triangle_cells` (the cells a triangle meets) use the same tests.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import copy_items, kernel
from ._closest_kernels import cross3, dot3, triangle_is_flat

#: Coordinates below this magnitude cannot overflow in a product of two.
NO_OVERFLOW = 1e75


@kernel
def _separated_by(p0, p1, p2, p3, r, nn, eps):
    """Projections ``p`` of the 4 vertices on an axis of squared length ``nn``
    and box radius ``r`` on it: separated, intervals widened by |axis|*eps?"""
    if p0 != p0 or p1 != p1 or p2 != p2 or p3 != p3:
        return False           # numpy's min/max give NaN, which separates nothing
    mn = min(min(p0, p1), min(p2, p3))
    mx = max(max(p0, p1), max(p2, p3))
    # r + s >= r for s >= 0: an axis that does not separate without the
    # widening does not separate with it (skips the square root, same answer)
    if eps >= 0.0 and not (mn > r or mx < -r):
        return False
    s = np.sqrt(nn) * eps
    return mn > r + s or mx < -r - s


@kernel
def _separates(a0, a1, a2, q, h0, h1, h2, eps):
    """Does axis ``a`` separate the tetrahedron ``q`` from the box of half
    sizes ``h``, intervals widened by |a|*eps?"""
    x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3 = q
    return _separated_by(dot3(a0, a1, a2, x0, y0, z0), dot3(a0, a1, a2, x1, y1, z1),
                         dot3(a0, a1, a2, x2, y2, z2), dot3(a0, a1, a2, x3, y3, z3),
                         dot3(abs(a0), abs(a1), abs(a2), h0, h1, h2),
                         (a0 * a0 + a1 * a1) + a2 * a2, eps)


@kernel
def _centred(pts, t, c0, c1, c2):
    """Tetrahedron ``t``'s vertices relative to the point ``c``, as ``q``."""
    return (pts[t, 0, 0] - c0, pts[t, 0, 1] - c1, pts[t, 0, 2] - c2,
            pts[t, 1, 0] - c0, pts[t, 1, 1] - c1, pts[t, 1, 2] - c2,
            pts[t, 2, 0] - c0, pts[t, 2, 1] - c1, pts[t, 2, 2] - c2,
            pts[t, 3, 0] - c0, pts[t, 3, 1] - c1, pts[t, 3, 2] - c2)


@kernel
def _face_normals(q):
    """The face normals ``n``: face k (opposite vertex k) has normal
    cross(q[i1]-q[i0], q[i2]-q[i0]) with (i0, i1, i2) its face slots
    (1,2,3), (0,2,3), (0,1,3), (0,1,2)."""
    x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3 = q
    a00, a01, a02 = cross3(x2 - x1, y2 - y1, z2 - z1, x3 - x1, y3 - y1, z3 - z1)
    a10, a11, a12 = cross3(x2 - x0, y2 - y0, z2 - z0, x3 - x0, y3 - y0, z3 - z0)
    a20, a21, a22 = cross3(x1 - x0, y1 - y0, z1 - z0, x3 - x0, y3 - y0, z3 - z0)
    a30, a31, a32 = cross3(x1 - x0, y1 - y0, z1 - z0, x2 - x0, y2 - y0, z2 - z0)
    return (a00, a01, a02, a10, a11, a12, a20, a21, a22, a30, a31, a32)


@kernel
def _face_axis_separates(n, q, h0, h1, h2, eps):
    """Does one of the four face-normal axes separate tetrahedron and box?"""
    for k in range(4):
        if _separates(n[3 * k], n[3 * k + 1], n[3 * k + 2], q, h0, h1, h2, eps):
            return True
    return False


@kernel
def _corner_in(A0, A1, A2, on, opp, s0, s1, s2):
    """Box corner ``s * h`` on the tetrahedron's side of one face plane
    (``A = n * h``: numpy's ``(n * s) * h`` is ``s * (n * h)`` exactly)."""
    cr = (s0 * A0 + s1 * A1) + s2 * A2
    return (cr - on) * opp >= 0


@kernel
def _box_corner_inside(n, q, h0, h1, h2):
    """Is a corner of the box (half sizes ``h``) inside the closed tetrahedron?"""
    x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3 = q
    a00, a01, a02, a10, a11, a12, a20, a21, a22, a30, a31, a32 = n
    # face k's plane value at its first vertex i0, and from there to vertex k
    on0 = dot3(a00, a01, a02, x1, y1, z1)
    op0 = dot3(a00, a01, a02, x0, y0, z0) - on0
    on1 = dot3(a10, a11, a12, x0, y0, z0)
    op1 = dot3(a10, a11, a12, x1, y1, z1) - on1
    on2 = dot3(a20, a21, a22, x0, y0, z0)
    op2 = dot3(a20, a21, a22, x2, y2, z2) - on2
    on3 = dot3(a30, a31, a32, x0, y0, z0)
    op3 = dot3(a30, a31, a32, x3, y3, z3) - on3
    for k in range(8):
        s0 = 1.0 if k & 4 else -1.0
        s1 = 1.0 if k & 2 else -1.0
        s2 = 1.0 if k & 1 else -1.0
        if (_corner_in(a00 * h0, a01 * h1, a02 * h2, on0, op0, s0, s1, s2)
                and _corner_in(a10 * h0, a11 * h1, a12 * h2, on1, op1, s0, s1, s2)
                and _corner_in(a20 * h0, a21 * h1, a22 * h2, on2, op2, s0, s1, s2)
                and _corner_in(a30 * h0, a31 * h1, a32 * h2, on3, op3, s0, s1, s2)):
            return True
    return False


@kernel
def _box_axis_overlaps(v0, v1, v2, v3, h, eps):
    if v0 != v0 or v1 != v1 or v2 != v2 or v3 != v3:
        return False           # numpy's min/max give NaN: no overlap
    mn = min(min(v0, v1), min(v2, v3))
    mx = max(max(v0, v1), max(v2, v3))
    return mn <= h + eps and mx >= -h - eps


@kernel
def _box_axes_overlap(q, h0, h1, h2, eps):
    """Do the tetrahedron's extents overlap the box on all three box axes?"""
    x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3 = q
    return (_box_axis_overlaps(x0, x1, x2, x3, h0, eps)
            and _box_axis_overlaps(y0, y1, y2, y3, h1, eps)
            and _box_axis_overlaps(z0, z1, z2, z3, h2, eps))


@kernel
def _edge(q, e):
    """Edge ``e`` of the tetrahedron (vertex slots (0,1) (0,2) (0,3) (1,2)
    (1,3) (2,3)) as the difference of its end points."""
    x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3 = q
    if e == 0:
        return x1 - x0, y1 - y0, z1 - z0
    if e == 1:
        return x2 - x0, y2 - y0, z2 - z0
    if e == 2:
        return x3 - x0, y3 - y0, z3 - z0
    if e == 3:
        return x2 - x1, y2 - y1, z2 - z1
    if e == 4:
        return x3 - x1, y3 - y1, z3 - z1
    return x3 - x2, y3 - y2, z3 - z2


@kernel
def _edge_axis_separates_fast(e0, e1, e2, q, h0, h1, h2, eps):
    """:func:`_edge_axis_separates` for one edge when every number is finite
    and far from overflow: numpy's zero products (0*x = +-0) drop out of
    each sum exactly, leaving one addition each (the same value whichever
    order); cross(e, x) = (0, e2, -e1), cross(e, y) = (-e2, 0, e0),
    cross(e, z) = (e1, -e0, 0)."""
    x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3 = q
    return (_separated_by(e2 * y0 - e1 * z0, e2 * y1 - e1 * z1, e2 * y2 - e1 * z2,
                          e2 * y3 - e1 * z3, abs(e1) * h2 + abs(e2) * h1,
                          e2 * e2 + e1 * e1, eps)
            or _separated_by(e0 * z0 - e2 * x0, e0 * z1 - e2 * x1, e0 * z2 - e2 * x2,
                             e0 * z3 - e2 * x3, abs(e2) * h0 + abs(e0) * h2,
                             e2 * e2 + e0 * e0, eps)
            or _separated_by(e1 * x0 - e0 * y0, e1 * x1 - e0 * y1, e1 * x2 - e0 * y2,
                             e1 * x3 - e0 * y3, abs(e1) * h0 + abs(e0) * h1,
                             e1 * e1 + e0 * e0, eps))


@kernel
def _edge_axis_separates(q, h0, h1, h2, eps, fast):
    """Does one of the 18 crosses of a tetrahedron edge with a box axis
    separate tetrahedron and box? ``fast``: see :func:`membership`."""
    for e in range(6):
        e0, e1, e2 = _edge(q, e)
        if fast:
            if _edge_axis_separates_fast(e0, e1, e2, q, h0, h1, h2, eps):
                return True
            continue
        # cross(e, unit_k) as numpy computes it, zero products included
        for k in range(3):
            b0 = 1.0 if k == 0 else 0.0
            b1 = 1.0 if k == 1 else 0.0
            b2 = 1.0 if k == 2 else 0.0
            a0, a1, a2 = cross3(e0, e1, e2, b0, b1, b2)
            if _separates(a0, a1, a2, q, h0, h1, h2, eps):
                return True
    return False


@kernel
def _pair_meets(pts, t, lo0, lo1, lo2, hi0, hi1, hi2, eps, fast):
    """The decision for one (cell box, tetrahedron) pair whose vertices all
    lie outside the closed box (see the module docstring)."""
    h0 = (hi0 - lo0) / 2
    h1 = (hi1 - lo1) / 2
    h2 = (hi2 - lo2) / 2
    q = _centred(pts, t, (lo0 + hi0) / 2, (lo1 + hi1) / 2, (lo2 + hi2) / 2)
    n = _face_normals(q)
    if _face_axis_separates(n, q, h0, h1, h2, eps):
        return False
    if _box_corner_inside(n, q, h0, h1, h2):
        return True
    if not _box_axes_overlap(q, h0, h1, h2, eps):
        return False
    return not _edge_axis_separates(q, h0, h1, h2, eps, fast)


@kernel
def cell_coord(x, origin, size, n):
    """geometry.cell_coords for one coordinate: floor((x - origin) / size),
    NaN and +-inf to 0, clipped to 0..n-1."""
    v = np.floor((x - origin) / size)
    if v != v or v == np.inf or v == -np.inf:
        v = 0.0
    return int(min(max(v, 0.0), float(n - 1)))


@kernel
def _nmin(a, b):
    if a != a:
        return a
    if b != b:
        return b
    return a if a <= b else b


@kernel
def _nmax(a, b):
    if a != a:
        return a
    if b != b:
        return b
    return a if a >= b else b


@kernel
def _box_ok(bbox_min, cell_size, dims, eps):
    """Every cell box coordinate finite and below :data:`NO_OVERFLOW` in
    magnitude (and ``eps`` finite)."""
    for e in range(3):
        top = bbox_min[e] + cell_size[e] * float(dims[e])
        if not (abs(bbox_min[e]) < NO_OVERFLOW and abs(top) < NO_OVERFLOW
                and cell_size[e] < NO_OVERFLOW):
            return False
    return math.isfinite(eps)


@kernel
def membership(pts, bbox_min, cell_size, dims, n_cells, eps):
    """(T,4,3) points -> (cells, tets) of every meeting pair, sorted by cell
    then tetrahedron. Each tetrahedron's candidates are the cells of its
    bounding box widened by eps (as geometry.cell_coords gives them, clipped
    to the grid). A tetrahedron whose coordinates, and the grid's, are
    finite and below :data:`NO_OVERFLOW` takes the shortcut of dropping
    numpy's exact zero products (no product can overflow, none is NaN)."""
    out_c, out_t = membership_pairs(pts, 0, pts.shape[0], bbox_min, cell_size, dims, eps)
    return sort_by_cell(out_c, out_t, n_cells)


@kernel
def _vertex_in_box(pts, t, lo0, lo1, lo2, hi0, hi1, hi2):
    """A vertex of tetrahedron ``t`` inside the closed box (all four tested
    without branches: cheaper than stopping early)."""
    inside = False
    for v in range(4):
        x = pts[t, v, 0]
        y = pts[t, v, 1]
        z = pts[t, v, 2]
        inside |= ((x >= lo0) & (x <= hi0) & (y >= lo1) & (y <= hi1)
                   & (z >= lo2) & (z <= hi2))
    return inside


@kernel
def membership_pairs(pts, t0, t1, bbox_min, cell_size, dims, eps):
    """The meeting pairs (cells, tets) of tetrahedra t0..t1-1, in tetrahedron
    order (then z, y, x of the cell); see :func:`membership`."""
    box_ok = _box_ok(bbox_min, cell_size, dims, eps)
    nx, ny = dims[0], dims[1]
    cap = 16 + 8 * (t1 - t0)
    out_c = np.empty(cap, np.int64)
    out_t = np.empty(cap, np.int64)
    n = 0
    lo = np.empty(3, np.int64)
    hi = np.empty(3, np.int64)
    for t in range(t0, t1):
        fast = box_ok
        for e in range(3):
            mn = _nmin(_nmin(pts[t, 0, e], pts[t, 1, e]), _nmin(pts[t, 2, e], pts[t, 3, e]))
            mx = _nmax(_nmax(pts[t, 0, e], pts[t, 1, e]), _nmax(pts[t, 2, e], pts[t, 3, e]))
            if not (mn > -NO_OVERFLOW and mx < NO_OVERFLOW):
                fast = False
            lo[e] = cell_coord(mn - eps, bbox_min[e], cell_size[e], dims[e])
            hi[e] = cell_coord(mx + eps, bbox_min[e], cell_size[e], dims[e])
        for iz in range(lo[2], hi[2] + 1):
            lo2 = bbox_min[2] + float(iz) * cell_size[2]
            hi2 = lo2 + cell_size[2]
            for iy in range(lo[1], hi[1] + 1):
                lo1 = bbox_min[1] + float(iy) * cell_size[1]
                hi1 = lo1 + cell_size[1]
                for ix in range(lo[0], hi[0] + 1):
                    lo0 = bbox_min[0] + float(ix) * cell_size[0]
                    hi0 = lo0 + cell_size[0]
                    if not (_vertex_in_box(pts, t, lo0, lo1, lo2, hi0, hi1, hi2)
                            or _pair_meets(pts, t, lo0, lo1, lo2, hi0, hi1, hi2, eps,
                                           fast)):
                        continue
                    if n == cap:
                        out_c, out_t, cap = _grown(out_c, out_t, n)
                    out_c[n] = (iz * ny + iy) * nx + ix
                    out_t[n] = t
                    n += 1
    return out_c[:n], out_t[:n]


@kernel
def _grown(out_c, out_t, n):
    """The two output buffers (``n`` entries used) at twice the size."""
    cap = 2 * len(out_c)
    grown_c = np.empty(cap, np.int64)
    grown_t = np.empty(cap, np.int64)
    copy_items(grown_c, 0, out_c, 0, n)
    copy_items(grown_t, 0, out_t, 0, n)
    return grown_c, grown_t, cap


@kernel
def sort_by_cell(out_c, out_t, n_cells):
    """A stable counting sort of the pairs by cell (pairs made in tetrahedron
    order come out sorted by cell, then tetrahedron)."""
    n = len(out_c)
    start = np.zeros(n_cells + 1, np.int64)
    for i in range(n):
        start[out_c[i] + 1] += 1
    for c in range(n_cells):
        start[c + 1] += start[c]
    cells = np.empty(n, np.int64)
    tets = np.empty(n, np.int64)
    for i in range(n):
        c = out_c[i]
        j = start[c]
        start[c] = j + 1
        cells[j] = c
        tets[j] = out_t[i]
    return cells, tets


@kernel
def tet_meets_box(pts, t, lo0, lo1, lo2, hi0, hi1, hi2):
    """Does the closed tetrahedron ``pts[t]`` meet the closed box lo..hi: a
    vertex inside it, else the separating-axis decision of
    :func:`membership` (no widening)?"""
    if _vertex_in_box(pts, t, lo0, lo1, lo2, hi0, hi1, hi2):
        return True
    fast = (abs(lo0) < NO_OVERFLOW and abs(lo1) < NO_OVERFLOW and abs(lo2) < NO_OVERFLOW
            and abs(hi0) < NO_OVERFLOW and abs(hi1) < NO_OVERFLOW and abs(hi2) < NO_OVERFLOW)
    for v in range(4):
        for e in range(3):
            fast &= abs(pts[t, v, e]) < NO_OVERFLOW
    return _pair_meets(pts, t, lo0, lo1, lo2, hi0, hi1, hi2, 0.0, fast)


@kernel
def _axis_separates(p0, p1, p2, r):
    """The projections p0, p1, p2 of a triangle miss the box's [-r, r]."""
    return min(min(p0, p1), p2) > r or max(max(p0, p1), p2) < -r


@kernel
def triangle_meets_box(x0, y0, z0, x1, y1, z1, x2, y2, z2, hx, hy, hz):
    """Does the closed triangle (vertices relative to the box's centre) meet
    the closed box of half-extents (hx, hy, hz)? The 13-axis separating-axis
    test (the box's 3 axes, the triangle's normal, the 9 crosses of its edges
    with the box's axes); a flat triangle (:func:`triangle_is_flat`, whose
    normal is rounding noise) is tested as the segments it is, without its
    normal. NaN vertices separate nothing (a caller skips them)."""
    sep = (_axis_separates(x0, x1, x2, hx) or _axis_separates(y0, y1, y2, hy)
           or _axis_separates(z0, z1, z2, hz))
    e = ((x1 - x0, y1 - y0, z1 - z0), (x2 - x1, y2 - y1, z2 - z1), (x0 - x2, y0 - y2, z0 - z2))
    if not sep and not triangle_is_flat(x0, y0, z0, x1, y1, z1, x2, y2, z2):
        nx = e[0][1] * e[1][2] - e[0][2] * e[1][1]
        ny = e[0][2] * e[1][0] - e[0][0] * e[1][2]
        nz = e[0][0] * e[1][1] - e[0][1] * e[1][0]
        d = nx * x0 + ny * y0 + nz * z0
        sep = abs(d) > abs(nx) * hx + abs(ny) * hy + abs(nz) * hz
    for k in range(3):
        ex, ey, ez = e[k]
        if not sep:       # axis x cross edge = (0, -ez, ey)
            sep = _axis_separates(-ez * y0 + ey * z0, -ez * y1 + ey * z1, -ez * y2 + ey * z2,
                                  abs(ez) * hy + abs(ey) * hz)
        if not sep:       # axis y cross edge = (ez, 0, -ex)
            sep = _axis_separates(ez * x0 - ex * z0, ez * x1 - ex * z1, ez * x2 - ex * z2,
                                  abs(ez) * hx + abs(ex) * hz)
        if not sep:       # axis z cross edge = (-ey, ex, 0)
            sep = _axis_separates(-ey * x0 + ex * y0, -ey * x1 + ex * y1, -ey * x2 + ex * y2,
                                  abs(ey) * hx + abs(ex) * hy)
    return not sep


@kernel
def _triangle_cell_range(tri, k, origin, size, dims, pad):
    """The inclusive cell range (lo xyz, hi xyz) of triangle k's bounding box
    grown by ``pad``, clamped to the grid."""
    lo = np.empty(3, np.int64)
    hi = np.empty(3, np.int64)
    for d in range(3):
        a = min(min(tri[k, 0, d], tri[k, 1, d]), tri[k, 2, d]) - pad
        b = max(max(tri[k, 0, d], tri[k, 1, d]), tri[k, 2, d]) + pad
        lo[d] = min(max(np.int64(math.floor((a - origin[d]) / size)), 0), dims[d] - 1)
        hi[d] = min(max(np.int64(math.floor((b - origin[d]) / size)), 0), dims[d] - 1)
    return lo, hi


@kernel
def triangle_cells(tri, origin, size, dims, pad):
    """Every (cell, triangle) pair of the grid of cubic cells (corner
    ``origin``, edge ``size``, ``dims`` cells; cell (i, j, k) is number
    (k ny + j) nx + i) where triangle k of ``tri`` (K,3,3), all finite, comes
    within ``pad`` of the cell: it meets the cell box grown by ``pad`` on
    every side (which holds every point within ``pad`` of the cell), widened
    by a further 1e-9 of a cell against rounding. Returns (cells, triangles)
    int64, triangle by triangle."""
    half = 0.5 * size + pad + 1e-9 * size
    count = 0
    cells = np.empty(0, np.int64)
    tris = np.empty(0, np.int64)
    for rep in range(2):
        if rep == 1:
            cells = np.empty(count, np.int64)
            tris = np.empty(count, np.int64)
            count = 0
        for k in range(tri.shape[0]):
            lo, hi = _triangle_cell_range(tri, k, origin, size, dims, pad)
            for iz in range(lo[2], hi[2] + 1):
                cz = origin[2] + (iz + 0.5) * size
                for iy in range(lo[1], hi[1] + 1):
                    cy = origin[1] + (iy + 0.5) * size
                    for ix in range(lo[0], hi[0] + 1):
                        cx = origin[0] + (ix + 0.5) * size
                        if triangle_meets_box(
                                tri[k, 0, 0] - cx, tri[k, 0, 1] - cy, tri[k, 0, 2] - cz,
                                tri[k, 1, 0] - cx, tri[k, 1, 1] - cy, tri[k, 1, 2] - cz,
                                tri[k, 2, 0] - cx, tri[k, 2, 1] - cy, tri[k, 2, 2] - cz,
                                half, half, half):
                            if rep == 1:
                                cells[count] = (iz * dims[1] + iy) * dims[0] + ix
                                tris[count] = k
                            count += 1
    return cells, tris

