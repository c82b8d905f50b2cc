"""Compiled kernels of segments and swept spheres against triangles (agents of
every size; imported only on first use). Scalar kernels on coordinates, like
:mod:`regn.geometry._closest_kernels`: the exact closest points of two
segments and of a segment and a triangle, and the first time a sphere
moving along a segment touches a triangle.
"""

from __future__ import annotations

import math

from .._jit import kernel
from ..tolerances import PARALLEL_SIN2, SWEEP_START_REL
from ._closest_kernels import closest_point_on_prepared_triangle


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

