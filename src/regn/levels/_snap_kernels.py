"""Compiled kernels of the wall snap (:mod:`.snap`): the exact distance
between a tetrahedron and a triangle, and the plane and point tests it is
made of (:mod:`._wall_tree_kernels` finds the triangles near a
tetrahedron)."""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel
from ..geometry._closest_kernels import _orient, closest_point_on_triangle


@kernel(inline=True)
def _segment_segment(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz):
    """Squared distance between segments ab and cd (Ericson 5.1.9)."""
    d1x, d1y, d1z = bx - ax, by - ay, bz - az
    d2x, d2y, d2z = dx - cx, dy - cy, dz - cz
    rx, ry, rz = ax - cx, ay - cy, az - cz
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    if a <= 0.0 and e <= 0.0:
        return rx * rx + ry * ry + rz * rz
    if a <= 0.0:
        s, t = 0.0, min(1.0, max(0.0, f / e))
    else:
        c = d1x * rx + d1y * ry + d1z * rz
        if e <= 0.0:
            s, t = min(1.0, max(0.0, -c / a)), 0.0
        else:
            b = d1x * d2x + d1y * d2y + d1z * d2z
            den = a * e - b * b
            s = min(1.0, max(0.0, (b * f - c * e) / den)) if den > 0.0 else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t, s = 0.0, min(1.0, max(0.0, -c / a))
            elif t > 1.0:
                t, s = 1.0, min(1.0, max(0.0, (b - c) / a))
    ux = ax + d1x * s - (cx + d2x * t)
    uy = ay + d1y * s - (cy + d2y * t)
    uz = az + d1z * s - (cz + d2z * t)
    return ux * ux + uy * uy + uz * uz


@kernel(inline=True)
def _segment_crosses(px, py, pz, qx, qy, qz, ax, ay, az, bx, by, bz, cx, cy, cz):
    """Does segment pq cross triangle abc (its ends strictly on either side
    of the plane, or one on it, and the line through the triangle's closed
    inside)? Coplanar cases are left to the distances."""
    sp = _orient(ax, ay, az, bx, by, bz, cx, cy, cz, px, py, pz)
    sq = _orient(ax, ay, az, bx, by, bz, cx, cy, cz, qx, qy, qz)
    if (sp > 0.0 and sq > 0.0) or (sp < 0.0 and sq < 0.0) or (sp == 0.0 and sq == 0.0):
        return False
    u = _orient(px, py, pz, qx, qy, qz, ax, ay, az, bx, by, bz)
    v = _orient(px, py, pz, qx, qy, qz, bx, by, bz, cx, cy, cz)
    w = _orient(px, py, pz, qx, qy, qz, cx, cy, cz, ax, ay, az)
    return (u >= 0.0 and v >= 0.0 and w >= 0.0) or (u <= 0.0 and v <= 0.0 and w <= 0.0)


@kernel(inline=True)
def _face_corners(k):
    """The corners of a tetrahedron's face ``k`` (the three but corner k), in order."""
    return (1 if k == 0 else 0), (2 if k <= 1 else 1), (3 if k <= 2 else 2)


@kernel(inline=True)
def _point_triangle2(px, py, pz, ax, ay, az, bx, by, bz, cx, cy, cz):
    x, y, z = closest_point_on_triangle(ax, ay, az, bx, by, bz, cx, cy, cz, px, py, pz)
    return (x - px) ** 2 + (y - py) ** 2 + (z - pz) ** 2


@kernel
def tet_triangle_distance2(tp, t, tri):
    """Squared distance between the closed tetrahedron ``tp[t]`` ((T,4,3)
    points) and the closed triangle ``tri`` (3,3): 0 when they meet (a
    triangle corner inside, a tetrahedron edge through the triangle or a
    triangle edge through a face), else the least over corner-to-face and
    edge-to-edge pairs, where the distance of two disjoint convex solids is
    attained."""
    ax, ay, az = tri[0, 0], tri[0, 1], tri[0, 2]
    bx, by, bz = tri[1, 0], tri[1, 1], tri[1, 2]
    cx, cy, cz = tri[2, 0], tri[2, 1], tri[2, 2]
    x = tp[t]
    best = np.inf
    for m in range(4):                                   # tetrahedron corners to the triangle
        best = min(best, _point_triangle2(x[m, 0], x[m, 1], x[m, 2], ax, ay, az, bx, by, bz,
                                          cx, cy, cz))
    for m in range(3):                                   # triangle corners to the faces
        px, py, pz = tri[m, 0], tri[m, 1], tri[m, 2]
        for k in range(4):
            a, b, c = _face_corners(k)
            best = min(best, _point_triangle2(px, py, pz, x[a, 0], x[a, 1], x[a, 2], x[b, 0],
                                              x[b, 1], x[b, 2], x[c, 0], x[c, 1], x[c, 2]))
    for e0 in range(3):                                  # edges to edges
        for e1 in range(e0 + 1, 4):
            for m in range(3):
                n_ = (m + 1) % 3
                best = min(best, _segment_segment(
                    x[e0, 0], x[e0, 1], x[e0, 2], x[e1, 0], x[e1, 1], x[e1, 2],
                    tri[m, 0], tri[m, 1], tri[m, 2], tri[n_, 0], tri[n_, 1], tri[n_, 2]))
    if best == 0.0:
        return 0.0
    for m in range(3):                                   # meeting: a corner inside ...
        if _inside(x, tri[m, 0], tri[m, 1], tri[m, 2]):
            return 0.0
    for e0 in range(3):                                  # ... an edge through the triangle
        for e1 in range(e0 + 1, 4):
            if _segment_crosses(x[e0, 0], x[e0, 1], x[e0, 2], x[e1, 0], x[e1, 1], x[e1, 2],
                                ax, ay, az, bx, by, bz, cx, cy, cz):
                return 0.0
    for m in range(3):                                   # ... a triangle edge through a face
        n_ = (m + 1) % 3
        for k in range(4):
            a, b, c = _face_corners(k)
            if _segment_crosses(tri[m, 0], tri[m, 1], tri[m, 2], tri[n_, 0], tri[n_, 1],
                                tri[n_, 2], x[a, 0], x[a, 1], x[a, 2], x[b, 0], x[b, 1],
                                x[b, 2], x[c, 0], x[c, 1], x[c, 2]):
                return 0.0
    return best


@kernel(inline=True)
def _inside(x, px, py, pz):
    """Is p in the closed tetrahedron of corners ``x`` (4,3), either orientation?"""
    o = [_orient(x[0, 0], x[0, 1], x[0, 2], x[1, 0], x[1, 1], x[1, 2], x[2, 0], x[2, 1],
                 x[2, 2], px, py, pz),
         _orient(x[0, 0], x[0, 1], x[0, 2], x[1, 0], x[1, 1], x[1, 2], px, py, pz, x[3, 0],
                 x[3, 1], x[3, 2]),
         _orient(x[0, 0], x[0, 1], x[0, 2], px, py, pz, x[2, 0], x[2, 1], x[2, 2], x[3, 0],
                 x[3, 1], x[3, 2]),
         _orient(px, py, pz, x[1, 0], x[1, 1], x[1, 2], x[2, 0], x[2, 1], x[2, 2], x[3, 0],
                 x[3, 1], x[3, 2])]
    total = _orient(x[0, 0], x[0, 1], x[0, 2], x[1, 0], x[1, 1], x[1, 2], x[2, 0], x[2, 1],
                    x[2, 2], x[3, 0], x[3, 1], x[3, 2])
    if total > 0.0:
        return o[0] >= 0.0 and o[1] >= 0.0 and o[2] >= 0.0 and o[3] >= 0.0
    if total < 0.0:
        return o[0] <= 0.0 and o[1] <= 0.0 and o[2] <= 0.0 and o[3] <= 0.0
    return False


@kernel(inline=True)
def _point_tet2(x, px, py, pz):
    """Squared distance from p to the closed tetrahedron of corners ``x``."""
    if _inside(x, px, py, pz):
        return 0.0
    best = np.inf
    for k in range(4):
        a, b, c = _face_corners(k)
        best = min(best, _point_triangle2(px, py, pz, x[a, 0], x[a, 1], x[a, 2], x[b, 0],
                                          x[b, 1], x[b, 2], x[c, 0], x[c, 1], x[c, 2]))
    return best


@kernel(inline=True)
def _face_planes(x):
    """(4,4) the unit outward normal and offset of each face of the
    tetrahedron of corners ``x`` (face k leaves out corner k; zeros for a
    flat one, which then separates nothing)."""
    planes = np.zeros((4, 4))
    for k in range(4):
        a, b, c = _face_corners(k)
        ux, uy, uz = x[b, 0] - x[a, 0], x[b, 1] - x[a, 1], x[b, 2] - x[a, 2]
        vx, vy, vz = x[c, 0] - x[a, 0], x[c, 1] - x[a, 1], x[c, 2] - x[a, 2]
        nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
        nn = math.sqrt(nx * nx + ny * ny + nz * nz)
        side = nx * (x[k, 0] - x[a, 0]) + ny * (x[k, 1] - x[a, 1]) + nz * (x[k, 2] - x[a, 2])
        if nn > 0.0 and side != 0.0:
            s_ = (-1.0 if side > 0.0 else 1.0) / nn
            planes[k, 0], planes[k, 1], planes[k, 2] = nx * s_, ny * s_, nz * s_
            planes[k, 3] = (nx * x[a, 0] + ny * x[a, 1] + nz * x[a, 2]) * s_
    return planes
