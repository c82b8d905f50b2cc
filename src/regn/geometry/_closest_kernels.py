"""Compiled kernels of exact point geometry (imported only on first use).

The closest point on a segment or a triangle (the wall search of
:mod:`regn.query.walls.nearest` descends a BVH and solves its leaves with
these; the builder and the checks use them too): scalar kernels on
coordinates, so callers keep their triangles in whatever layout suits them,
plus batch kernels over (K,3) points and (K,3,3) triangles. A point in a
tetrahedron, and a tetrahedron against a ball (the temporary blockers of
:mod:`regn.query.paths.filters`): exact up to rounding, closed sets
(touching counts), False when a number involved is NaN.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..tolerances import FLAT_SIN2


@kernel
def dot3(a0, a1, a2, x0, x1, x2):
    # numpy's einsum adds a 3-term dot product in this order
    return (a0 * x0 + a2 * x2) + a1 * x1


@kernel
def cross3(u0, u1, u2, w0, w1, w2):
    return u1 * w2 - u2 * w1, u2 * w0 - u0 * w2, u0 * w1 - u1 * w0


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


@kernel
def _orient(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz):
    """6 x the signed volume of (a, b, c, d)."""
    ux, uy, uz = bx - ax, by - ay, bz - az
    vx, vy, vz = cx - ax, cy - ay, cz - az
    wx, wy, wz = cross3(ux, uy, uz, vx, vy, vz)
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

