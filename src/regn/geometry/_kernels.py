"""Compiled kernels of :mod:`regn.geometry` (imported only on first use).

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
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel
from ..tolerances import FLAT_SIN2, PARALLEL_SIN2, SWEEP_START_REL

#: Coordinates below this magnitude cannot overflow in a product of two.
NO_OVERFLOW = 1e75


@kernel
def _dot(a0, a1, a2, x0, x1, x2):
    # numpy's einsum adds a 3-term dot product in this order
    return (a0 * x0 + a2 * x2) + a1 * x1


@kernel
def _cross(u0, u1, u2, w0, w1, w2):
    return u1 * w2 - u2 * w1, u2 * w0 - u0 * w2, u0 * w1 - u1 * w0


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
    return _separated_by(_dot(a0, a1, a2, x0, y0, z0), _dot(a0, a1, a2, x1, y1, z1),
                         _dot(a0, a1, a2, x2, y2, z2), _dot(a0, a1, a2, x3, y3, z3),
                         _dot(abs(a0), abs(a1), abs(a2), h0, h1, h2),
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
    a00, a01, a02 = _cross(x2 - x1, y2 - y1, z2 - z1, x3 - x1, y3 - y1, z3 - z1)
    a10, a11, a12 = _cross(x2 - x0, y2 - y0, z2 - z0, x3 - x0, y3 - y0, z3 - z0)
    a20, a21, a22 = _cross(x1 - x0, y1 - y0, z1 - z0, x3 - x0, y3 - y0, z3 - z0)
    a30, a31, a32 = _cross(x1 - x0, y1 - y0, z1 - z0, x2 - x0, y2 - y0, z2 - z0)
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
    on0 = _dot(a00, a01, a02, x1, y1, z1)
    op0 = _dot(a00, a01, a02, x0, y0, z0) - on0
    on1 = _dot(a10, a11, a12, x0, y0, z0)
    op1 = _dot(a10, a11, a12, x1, y1, z1) - on1
    on2 = _dot(a20, a21, a22, x0, y0, z0)
    op2 = _dot(a20, a21, a22, x2, y2, z2) - on2
    on3 = _dot(a30, a31, a32, x0, y0, z0)
    op3 = _dot(a30, a31, a32, x3, y3, z3) - on3
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
            a0, a1, a2 = _cross(e0, e1, e2, b0, b1, b2)
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
    grown_c[:n] = out_c[:n]
    grown_t[:n] = out_t[:n]
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


# ===========================================================================
# Closest point on a triangle (from regn.query.nearest: the wall search of
# nearest / distance_to_wall descends a BVH and solves its leaves with these;
# the builder and the checks may use them too). Scalar kernels on coordinates,
# so callers keep their triangles in whatever layout suits them, plus one
# batch kernel over (K,3) points and (K,3,3) triangles.
# ===========================================================================


@kernel
def closest_point_on_segment(ax, ay, az, bx, by, bz, px, py, pz):
    """Closest point to p on segment ab (a when it has length 0)."""
    ex, ey, ez = bx - ax, by - ay, bz - az
    ee = ex * ex + ey * ey + ez * ez
    t = 0.0
    if ee > 0.0:
        t = ((px - ax) * ex + (py - ay) * ey + (pz - az) * ez) / ee
        if t < 0.0:
            t = 0.0
        elif t > 1.0:
            t = 1.0
        elif t != t:                     # NaN
            t = 0.0
    return ax + t * ex, ay + t * ey, az + t * ez


@kernel
def closest_point_on_triangle_edges(ax, ay, az, bx, by, bz, cx, cy, cz, px, py, pz):
    """Closest point to p on the three edges of triangle abc (the first edge
    of ab, bc, ca on ties)."""
    qx, qy, qz = closest_point_on_segment(ax, ay, az, bx, by, bz, px, py, pz)
    best = (qx - px) ** 2 + (qy - py) ** 2 + (qz - pz) ** 2
    rx, ry, rz = closest_point_on_segment(bx, by, bz, cx, cy, cz, px, py, pz)
    d = (rx - px) ** 2 + (ry - py) ** 2 + (rz - pz) ** 2
    if d < best:
        qx, qy, qz, best = rx, ry, rz, d
    rx, ry, rz = closest_point_on_segment(cx, cy, cz, ax, ay, az, px, py, pz)
    d = (rx - px) ** 2 + (ry - py) ** 2 + (rz - pz) ** 2
    if d < best:
        qx, qy, qz = rx, ry, rz
    return qx, qy, qz


@kernel
def triangle_is_flat(ax, ay, az, bx, by, bz, cx, cy, cz):
    """Is triangle abc too thin for the face formula: the squared sine of its
    angle at a below :data:`regn.tolerances.FLAT_SIN2` (zero area included),
    or its squared edges overflowing?"""
    e0, e1, e2 = bx - ax, by - ay, bz - az
    f0, f1, f2 = cx - ax, cy - ay, cz - az
    d00 = e0 * e0 + e1 * e1 + e2 * e2
    d11 = f0 * f0 + f1 * f1 + f2 * f2
    d01 = e0 * f0 + e1 * f1 + e2 * f2
    return not (d00 * d11 - d01 * d01 > FLAT_SIN2 * (d00 * d11))


@kernel
def closest_point_on_prepared_triangle(ax, ay, az, bx, by, bz, cx, cy, cz,
                                       px, py, pz, flat):
    """:func:`closest_point_on_triangle` with the triangle's
    :func:`triangle_is_flat` already known (a caller testing one triangle
    against many points computes it once).

    The region test of Ericson, Real-Time Collision Detection 5.1.5. A flat
    triangle, or one where a region's denominator rounds to 0 (a point very
    far from a tiny triangle), is solved as its three edges instead: never a
    division by zero."""
    if flat:
        return closest_point_on_triangle_edges(ax, ay, az, bx, by, bz, cx, cy, cz,
                                               px, py, pz)
    abx, aby, abz = bx - ax, by - ay, bz - az
    acx, acy, acz = cx - ax, cy - ay, cz - az
    apx, apy, apz = px - ax, py - ay, pz - az
    d1 = abx * apx + aby * apy + abz * apz
    d2 = acx * apx + acy * apy + acz * apz
    if d1 <= 0.0 and d2 <= 0.0:
        return ax, ay, az                                  # vertex a
    bpx, bpy, bpz = px - bx, py - by, pz - bz
    d3 = abx * bpx + aby * bpy + abz * bpz
    d4 = acx * bpx + acy * bpy + acz * bpz
    if d3 >= 0.0 and d4 <= d3:
        return bx, by, bz                                  # vertex b
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        if not d1 - d3 > 0.0:
            return closest_point_on_triangle_edges(ax, ay, az, bx, by, bz, cx, cy, cz,
                                                   px, py, pz)
        v = d1 / (d1 - d3)                                 # edge ab
        return ax + v * abx, ay + v * aby, az + v * abz
    cpx, cpy, cpz = px - cx, py - cy, pz - cz
    d5 = abx * cpx + aby * cpy + abz * cpz
    d6 = acx * cpx + acy * cpy + acz * cpz
    if d6 >= 0.0 and d5 <= d6:
        return cx, cy, cz                                  # vertex c
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        if not d2 - d6 > 0.0:
            return closest_point_on_triangle_edges(ax, ay, az, bx, by, bz, cx, cy, cz,
                                                   px, py, pz)
        w = d2 / (d2 - d6)                                 # edge ac
        return ax + w * acx, ay + w * acy, az + w * acz
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        if not (d4 - d3) + (d5 - d6) > 0.0:
            return closest_point_on_triangle_edges(ax, ay, az, bx, by, bz, cx, cy, cz,
                                                   px, py, pz)
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))            # edge bc
        return bx + w * (cx - bx), by + w * (cy - by), bz + w * (cz - bz)
    s = va + vb + vc
    if not s > 0.0:                                        # (> 0 unless rounded away)
        return closest_point_on_triangle_edges(ax, ay, az, bx, by, bz, cx, cy, cz,
                                               px, py, pz)
    den = 1.0 / s                                          # inside the face
    v = vb * den
    w = vc * den
    return ax + abx * v + acx * w, ay + aby * v + acy * w, az + abz * v + acz * w


@kernel
def closest_point_on_triangle(ax, ay, az, bx, by, bz, cx, cy, cz, px, py, pz):
    """Closest point (x, y, z) to p on the closed triangle abc, exact up to
    rounding; a zero-area triangle (a segment or a point) is handled too."""
    flat = triangle_is_flat(ax, ay, az, bx, by, bz, cx, cy, cz)
    return closest_point_on_prepared_triangle(ax, ay, az, bx, by, bz, cx, cy, cz,
                                              px, py, pz, flat)


@kernel
def closest_points_on_triangles(P, T):
    """(K,3) points, (K,3,3) triangles -> (K,3): point k's closest point on
    triangle k (:func:`closest_point_on_triangle`)."""
    out = np.empty((P.shape[0], 3))
    for k in range(P.shape[0]):
        out[k, 0], out[k, 1], out[k, 2] = closest_point_on_triangle(
            T[k, 0, 0], T[k, 0, 1], T[k, 0, 2], T[k, 1, 0], T[k, 1, 1], T[k, 1, 2],
            T[k, 2, 0], T[k, 2, 1], T[k, 2, 2], P[k, 0], P[k, 1], P[k, 2])
    return out


@kernel
def point_triangle_distances(P, T):
    """(K,3) points, (K,3,3) triangles -> (K,) distance from point k to
    triangle k."""
    out = np.empty(P.shape[0])
    for k in range(P.shape[0]):
        x, y, z = closest_point_on_triangle(
            T[k, 0, 0], T[k, 0, 1], T[k, 0, 2], T[k, 1, 0], T[k, 1, 1], T[k, 1, 2],
            T[k, 2, 0], T[k, 2, 1], T[k, 2, 2], P[k, 0], P[k, 1], P[k, 2])
        out[k] = np.sqrt((x - P[k, 0]) ** 2 + (y - P[k, 1]) ** 2 + (z - P[k, 2]) ** 2)
    return out


@kernel
def nearest_triangle_distances(P, T):
    """(N,3) points, (F,3,3) triangles -> (N,) distance from each point to
    the nearest triangle (inf when there are none)."""
    out = np.full(P.shape[0], np.inf)
    for i in range(P.shape[0]):
        best = np.inf
        for k in range(T.shape[0]):
            x, y, z = closest_point_on_triangle(
                T[k, 0, 0], T[k, 0, 1], T[k, 0, 2], T[k, 1, 0], T[k, 1, 1], T[k, 1, 2],
                T[k, 2, 0], T[k, 2, 1], T[k, 2, 2], P[i, 0], P[i, 1], P[i, 2])
            d2 = (x - P[i, 0]) ** 2 + (y - P[i, 1]) ** 2 + (z - P[i, 2]) ** 2
            if d2 < best:
                best = d2
        out[i] = np.sqrt(best)
    return out


# ===========================================================================
# A tetrahedron against a ball or a box (the temporary blockers of
# regn.query.filters): exact up to rounding, closed sets (touching counts),
# False when a number involved is NaN.
# ===========================================================================


@kernel
def _orient(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz):
    """6 x the signed volume of (a, b, c, d)."""
    ux, uy, uz = bx - ax, by - ay, bz - az
    vx, vy, vz = cx - ax, cy - ay, cz - az
    wx, wy, wz = _cross(ux, uy, uz, vx, vy, vz)
    return wx * (dx - ax) + wy * (dy - ay) + wz * (dz - az)


@kernel
def point_in_tet(pts, t, px, py, pz):
    """Is p in the closed tetrahedron ``pts[t]`` ((T,4,3) points): on the
    side of each face plane where the opposite vertex lies, or on it? A
    flat tetrahedron holds nothing (its faces do the work)."""
    x0, y0, z0 = pts[t, 0, 0], pts[t, 0, 1], pts[t, 0, 2]
    x1, y1, z1 = pts[t, 1, 0], pts[t, 1, 1], pts[t, 1, 2]
    x2, y2, z2 = pts[t, 2, 0], pts[t, 2, 1], pts[t, 2, 2]
    x3, y3, z3 = pts[t, 3, 0], pts[t, 3, 1], pts[t, 3, 2]
    total = _orient(x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3)
    if not (total > 0.0 or total < 0.0):
        return False
    s = 1.0 if total > 0.0 else -1.0
    return (_orient(px, py, pz, x1, y1, z1, x2, y2, z2, x3, y3, z3) * s >= 0.0
            and _orient(x0, y0, z0, px, py, pz, x2, y2, z2, x3, y3, z3) * s >= 0.0
            and _orient(x0, y0, z0, x1, y1, z1, px, py, pz, x3, y3, z3) * s >= 0.0
            and _orient(x0, y0, z0, x1, y1, z1, x2, y2, z2, px, py, pz) * s >= 0.0)


@kernel
def tet_meets_ball(pts, t, cx, cy, cz, r):
    """Does the closed tetrahedron ``pts[t]`` meet the closed ball of centre
    c and radius r: c inside it, or the closest point of one of its faces
    (:func:`closest_point_on_triangle`) within r of c?"""
    if point_in_tet(pts, t, cx, cy, cz):
        return True
    rr = r * r
    met = False
    for k in range(4):
        a = 1 if k == 0 else 0           # the face opposite vertex k
        b = 2 if k <= 1 else 1
        c = 3 if k <= 2 else 2
        qx, qy, qz = closest_point_on_triangle(
            pts[t, a, 0], pts[t, a, 1], pts[t, a, 2], pts[t, b, 0], pts[t, b, 1],
            pts[t, b, 2], pts[t, c, 0], pts[t, c, 1], pts[t, c, 2], cx, cy, cz)
        met |= (qx - cx) ** 2 + (qy - cy) ** 2 + (qz - cz) ** 2 <= rr
    return met


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


# ===========================================================================
# Triangles against grid cells
# ===========================================================================


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


# ===========================================================================
# Segments and swept spheres against triangles (issue 16: agents of every
# size). Scalar kernels on coordinates, like the closest-point section above:
# the exact closest points of two segments and of a segment and a triangle,
# and the first time a sphere moving along a segment touches a triangle.
# ===========================================================================


@kernel
def _clamp01(x):
    if x < 0.0:
        return 0.0
    if x > 1.0:
        return 1.0
    return x if x == x else 0.0


@kernel
def closest_params_segment_segment(px, py, pz, ex, ey, ez, qx, qy, qz, fx, fy, fz):
    """Parameters (s, t) in [0, 1] of the closest points p + s e and q + t f
    of two segments (Ericson, Real-Time Collision Detection 5.1.9). Nearly
    parallel segments (squared sine of their angle below
    :data:`regn.tolerances.PARALLEL_SIN2`) and zero-length ones are solved
    from an end point, so there is never a division by zero."""
    rx, ry, rz = px - qx, py - qy, pz - qz
    a = ex * ex + ey * ey + ez * ez
    e = fx * fx + fy * fy + fz * fz
    f = fx * rx + fy * ry + fz * rz
    s = 0.0
    t = 0.0
    if a > 0.0 and e > 0.0:
        c = ex * rx + ey * ry + ez * rz
        b = ex * fx + ey * fy + ez * fz
        denom = a * e - b * b
        if denom > PARALLEL_SIN2 * (a * e):
            s = _clamp01((b * f - c * e) / denom)
        t = (b * s + f) / e
        if t < 0.0:
            t = 0.0
            s = _clamp01(-c / a)
        elif t > 1.0:
            t = 1.0
            s = _clamp01((b - c) / a)
        elif t != t:
            t = 0.0
    elif a > 0.0:
        s = _clamp01(-(ex * rx + ey * ry + ez * rz) / a)
    elif e > 0.0:
        t = _clamp01(f / e)
    return s, t


@kernel(inline=True)
def triangle_edge(k, t0x, t0y, t0z, t1x, t1y, t1z, t2x, t2y, t2z):
    """Edge k (0: t0 t1, 1: t1 t2, 2: t2 t0) of a triangle given by its
    corners' coordinates, as its two ends' six coordinates."""
    if k == 0:
        return t0x, t0y, t0z, t1x, t1y, t1z
    if k == 1:
        return t1x, t1y, t1z, t2x, t2y, t2z
    return t2x, t2y, t2z, t0x, t0y, t0z


@kernel
def _segment_crosses_triangle(ax, ay, az, bx, by, bz, t0x, t0y, t0z, t1x, t1y, t1z,
                              t2x, t2y, t2z):
    """(crosses, fraction) of segment ab through the closed triangle t0 t1 t2
    (not flat): the end points on opposite sides of (or on) its plane and
    the crossing point inside all three edges."""
    e1x, e1y, e1z = t1x - t0x, t1y - t0y, t1z - t0z
    e2x, e2y, e2z = t2x - t0x, t2y - t0y, t2z - t0z
    nx = e1y * e2z - e1z * e2y
    ny = e1z * e2x - e1x * e2z
    nz = e1x * e2y - e1y * e2x
    sa = nx * (ax - t0x) + ny * (ay - t0y) + nz * (az - t0z)
    sb = nx * (bx - t0x) + ny * (by - t0y) + nz * (bz - t0z)
    crosses = (sa <= 0.0 <= sb or sb <= 0.0 <= sa) and sa != sb
    u = sa / (sa - sb) if crosses else 0.0
    px, py, pz = ax + u * (bx - ax), ay + u * (by - ay), az + u * (bz - az)
    inside = True
    for k in range(3):                   # each edge: p on the inner side
        ux, uy, uz, vx, vy, vz = triangle_edge(k, t0x, t0y, t0z, t1x, t1y, t1z, t2x, t2y, t2z)
        dx, dy, dz = vx - ux, vy - uy, vz - uz
        wx, wy, wz = px - ux, py - uy, pz - uz
        cx = dy * wz - dz * wy
        cy = dz * wx - dx * wz
        cz = dx * wy - dy * wx
        inside = inside and nx * cx + ny * cy + nz * cz >= 0.0
    return crosses and inside, u


@kernel
def closest_points_segment_triangle(ax, ay, az, bx, by, bz, t0x, t0y, t0z, t1x, t1y,
                                    t1z, t2x, t2y, t2z, flat):
    """(squared distance, closest point on segment ab, closest point on the
    closed triangle t0 t1 t2), exact up to rounding: 0 where the segment
    crosses the triangle; otherwise the closest pair of the two disjoint
    convex sets has an end point of the segment or lies on an edge of the
    triangle, so it is the nearest of the two end points' closest points
    (:func:`closest_point_on_prepared_triangle`) and the three
    segment-edge pairs. ``flat``: :func:`triangle_is_flat` (then only the
    edges count)."""
    qx, qy, qz = closest_point_on_prepared_triangle(t0x, t0y, t0z, t1x, t1y, t1z,
                                                    t2x, t2y, t2z, ax, ay, az, flat)
    best = (qx - ax) ** 2 + (qy - ay) ** 2 + (qz - az) ** 2
    px, py, pz = ax, ay, az
    if ax == bx and ay == by and az == bz:
        return best, px, py, pz, qx, qy, qz          # a point
    rx, ry, rz = closest_point_on_prepared_triangle(t0x, t0y, t0z, t1x, t1y, t1z,
                                                    t2x, t2y, t2z, bx, by, bz, flat)
    d = (rx - bx) ** 2 + (ry - by) ** 2 + (rz - bz) ** 2
    if d < best:
        best, px, py, pz, qx, qy, qz = d, bx, by, bz, rx, ry, rz
    ex, ey, ez = bx - ax, by - ay, bz - az
    for k in range(3):
        ux, uy, uz, vx, vy, vz = triangle_edge(k, t0x, t0y, t0z, t1x, t1y, t1z, t2x, t2y, t2z)
        fx, fy, fz = vx - ux, vy - uy, vz - uz
        s, t = closest_params_segment_segment(ax, ay, az, ex, ey, ez, ux, uy, uz,
                                              fx, fy, fz)
        sx, sy, sz = ax + s * ex, ay + s * ey, az + s * ez
        wx, wy, wz = ux + t * fx, uy + t * fy, uz + t * fz
        d = (sx - wx) ** 2 + (sy - wy) ** 2 + (sz - wz) ** 2
        if d < best:
            best, px, py, pz, qx, qy, qz = d, sx, sy, sz, wx, wy, wz
    if not flat and best > 0.0:
        crosses, u = _segment_crosses_triangle(ax, ay, az, bx, by, bz, t0x, t0y, t0z,
                                               t1x, t1y, t1z, t2x, t2y, t2z)
        if crosses:
            px, py, pz = ax + u * ex, ay + u * ey, az + u * ez
            best, qx, qy, qz = 0.0, px, py, pz
    return best, px, py, pz, qx, qy, qz


@kernel
def _first_root(a, b, c):
    """The smaller root of a t^2 + 2 b t + c = 0 (a > 0), NaN when none."""
    disc = b * b - a * c
    if not disc >= 0.0:
        return math.nan
    return (-b - math.sqrt(disc)) / a


@kernel
def _sweep_edge(ax, ay, az, dx, dy, dz, r, ux, uy, uz, vx, vy, vz):
    """First fraction at which the moving centre a + t d comes within r of
    the edge u v's side (the cylinder around it, between its ends), NaN when
    it does not (its ends are the vertices' spheres)."""
    fx, fy, fz = vx - ux, vy - uy, vz - uz
    ff = fx * fx + fy * fy + fz * fz
    mx, my, mz = ax - ux, ay - uy, az - uz
    if not ff > 0.0:
        return math.nan
    md = (mx * fx + my * fy + mz * fz) / ff
    dd_ = (dx * fx + dy * fy + dz * fz) / ff
    # components across the edge's line
    px, py, pz = mx - md * fx, my - md * fy, mz - md * fz
    qx, qy, qz = dx - dd_ * fx, dy - dd_ * fy, dz - dd_ * fz
    qa = qx * qx + qy * qy + qz * qz
    if not qa > 0.0:
        return math.nan                  # moving along the line: the ends decide
    t = _first_root(qa, px * qx + py * qy + pz * qz, px * px + py * py + pz * pz - r * r)
    along = md + t * dd_
    return t if along >= 0.0 and along <= 1.0 else math.nan


@kernel
def _sweep_vertex(ax, ay, az, dx, dy, dz, r, vx, vy, vz):
    """First fraction at which a + t d comes within r of vertex v, NaN when never."""
    dd = dx * dx + dy * dy + dz * dz
    if not dd > 0.0:
        return math.nan
    mx, my, mz = ax - vx, ay - vy, az - vz
    return _first_root(dd, mx * dx + my * dy + mz * dz, mx * mx + my * my + mz * mz - r * r)


@kernel
def _sweep_face(ax, ay, az, dx, dy, dz, r, t0x, t0y, t0z, t1x, t1y, t1z, t2x, t2y, t2z):
    """First fraction at which a + t d comes within r of the triangle's
    plane from the side it starts on, with the contact point inside the
    triangle (the flat top and bottom of the swept set); NaN otherwise."""
    e1x, e1y, e1z = t1x - t0x, t1y - t0y, t1z - t0z
    e2x, e2y, e2z = t2x - t0x, t2y - t0y, t2z - t0z
    nx = e1y * e2z - e1z * e2y
    ny = e1z * e2x - e1x * e2z
    nz = e1x * e2y - e1y * e2x
    nn = math.sqrt(nx * nx + ny * ny + nz * nz)
    nx, ny, nz = nx / nn, ny / nn, nz / nn
    s0 = nx * (ax - t0x) + ny * (ay - t0y) + nz * (az - t0z)
    rate = nx * dx + ny * dy + nz * dz
    side = 1.0 if s0 >= 0.0 else -1.0
    if not side * rate < 0.0:
        return math.nan                  # not approaching the plane
    t = (side * r - s0) / rate
    # the contact: the centre's foot on the plane, inside the triangle?
    px = ax + t * dx - side * r * nx
    py = ay + t * dy - side * r * ny
    pz = az + t * dz - side * r * nz
    inside = True
    for k in range(3):
        ux, uy, uz, vx, vy, vz = triangle_edge(k, t0x, t0y, t0z, t1x, t1y, t1z, t2x, t2y, t2z)
        fx, fy, fz = vx - ux, vy - uy, vz - uz
        wx, wy, wz = px - ux, py - uy, pz - uz
        inside = inside and (nx * (fy * wz - fz * wy) + ny * (fz * wx - fx * wz)
                             + nz * (fx * wy - fy * wx)) >= 0.0
    return t if inside else math.nan


@kernel
def sphere_sweep_triangle(ax, ay, az, dx, dy, dz, r, t0x, t0y, t0z, t1x, t1y, t1z,
                          t2x, t2y, t2z, flat):
    """The first fraction t in [0, 1] at which a sphere of radius r whose
    centre moves along a + t d touches the closed triangle (its centre within
    r of it), inf when it never does; 0 when it touches at the start.

    The centres within r of a triangle are the union of a slab over the
    triangle (its top and bottom faces), three cylinders around the edges
    and three balls at the vertices, so the first contact is the earliest
    entry into one of them (each contact point checked to lie on its
    piece). ``flat`` (:func:`triangle_is_flat`): no slab, edges and
    vertices only."""
    q0, q1, q2 = closest_point_on_prepared_triangle(t0x, t0y, t0z, t1x, t1y, t1z,
                                                    t2x, t2y, t2z, ax, ay, az, flat)
    if (q0 - ax) ** 2 + (q1 - ay) ** 2 + (q2 - az) ** 2 <= r * r:
        return 0.0
    # an entry that rounding puts just before the start: touching at the start
    # (the start's clearance computed as r plus a few ulps)
    span = math.sqrt(dx * dx + dy * dy + dz * dz)
    back = -SWEEP_START_REL * r / span if span > 0.0 else 0.0
    best = math.inf
    if not flat:
        t = _sweep_face(ax, ay, az, dx, dy, dz, r, t0x, t0y, t0z, t1x, t1y, t1z,
                        t2x, t2y, t2z)
        if t >= back and t < best:
            best = max(t, 0.0)
    for k in range(3):
        ux, uy, uz, vx, vy, vz = triangle_edge(k, t0x, t0y, t0z, t1x, t1y, t1z, t2x, t2y, t2z)
        t = _sweep_edge(ax, ay, az, dx, dy, dz, r, ux, uy, uz, vx, vy, vz)
        if t >= back and t < best:
            best = max(t, 0.0)
        t = _sweep_vertex(ax, ay, az, dx, dy, dz, r, ux, uy, uz)
        if t >= back and t < best:
            best = max(t, 0.0)
    return best if best <= 1.0 else math.inf
