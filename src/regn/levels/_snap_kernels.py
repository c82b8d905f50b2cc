"""Compiled kernels of the wall snap (:mod:`.snap`): a level's triangles in
a uniform grid of cells, the nearest wall point of mesh vertices, and the
exact distance from a tetrahedron to the triangles (and balls) near it."""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel, prange
from ..geometry._closest_kernels import _orient, closest_point_on_triangle


@kernel(inline=True)
def _cells_of(a, b, lo, cell, n):
    """The cell range [i0, i1] of the interval [a, b] on one axis, clipped."""
    i0 = int(math.floor((a - lo) / cell))
    i1 = int(math.floor((b - lo) / cell))
    return max(0, min(n - 1, i0)), max(0, min(n - 1, i1))


@kernel
def bin_triangles(T, lo, cell, dims):
    """``(starts, items)``: the triangles ``T`` (F,3,3) of each cell of the
    grid (``lo``, cube ``cell``, ``dims``), by their bounding boxes; cell
    ``(i, j, k)`` holds ``items[starts[c]:starts[c + 1]]``, ``c = (i * dims[1]
    + j) * dims[2] + k``."""
    nc = dims[0] * dims[1] * dims[2]
    box = np.empty((T.shape[0], 3, 2), np.int64)
    counts = np.zeros(nc + 1, np.int64)
    for f in range(T.shape[0]):
        for ax in range(3):
            a = min(T[f, 0, ax], min(T[f, 1, ax], T[f, 2, ax]))
            b = max(T[f, 0, ax], max(T[f, 1, ax], T[f, 2, ax]))
            box[f, ax, 0], box[f, ax, 1] = _cells_of(a, b, lo[ax], cell, dims[ax])
        for i in range(box[f, 0, 0], box[f, 0, 1] + 1):
            for j in range(box[f, 1, 0], box[f, 1, 1] + 1):
                for k in range(box[f, 2, 0], box[f, 2, 1] + 1):
                    counts[(i * dims[1] + j) * dims[2] + k + 1] += 1
    for c in range(nc):
        counts[c + 1] += counts[c]
    fill = counts[:-1].copy()
    items = np.empty(counts[nc], np.int64)
    for f in range(T.shape[0]):
        for i in range(box[f, 0, 0], box[f, 0, 1] + 1):
            for j in range(box[f, 1, 0], box[f, 1, 1] + 1):
                for k in range(box[f, 2, 0], box[f, 2, 1] + 1):
                    c = (i * dims[1] + j) * dims[2] + k
                    items[fill[c]] = f
                    fill[c] += 1
    return counts, items


@kernel(parallel=True)
def nearest_wall_points(P, T, starts, items, lo, cell, dims, C, R, search):
    """``(d (N,), q (N,3))``: each point's distance to the nearest triangle
    or ball surface within ``search`` of it and that nearest point (inf and
    the point itself when none is)."""
    n = P.shape[0]
    d = np.full(n, np.inf)
    q = P.copy()
    for p in prange(n):
        px, py, pz = P[p, 0], P[p, 1], P[p, 2]
        best = search * search
        i0, i1 = _cells_of(px - search, px + search, lo[0], cell, dims[0])
        j0, j1 = _cells_of(py - search, py + search, lo[1], cell, dims[1])
        k0, k1 = _cells_of(pz - search, pz + search, lo[2], cell, dims[2])
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                for k in range(k0, k1 + 1):
                    c = (i * dims[1] + j) * dims[2] + k
                    for s in range(starts[c], starts[c + 1]):
                        f = items[s]
                        gap = 0.0
                        for ax in range(3):
                            flo = min(T[f, 0, ax], min(T[f, 1, ax], T[f, 2, ax]))
                            fhi = max(T[f, 0, ax], max(T[f, 1, ax], T[f, 2, ax]))
                            g = max(flo - P[p, ax], P[p, ax] - fhi, 0.0)
                            gap += g * g
                        if gap >= best:          # its box is no nearer than the best
                            continue
                        x, y, z = closest_point_on_triangle(
                            T[f, 0, 0], T[f, 0, 1], T[f, 0, 2], T[f, 1, 0], T[f, 1, 1],
                            T[f, 1, 2], T[f, 2, 0], T[f, 2, 1], T[f, 2, 2], px, py, pz)
                        e = (x - px) ** 2 + (y - py) ** 2 + (z - pz) ** 2
                        if e < best:
                            best = e
                            q[p, 0], q[p, 1], q[p, 2] = x, y, z
                            d[p] = math.sqrt(e)
        for b in range(C.shape[0]):
            ux, uy, uz = px - C[b, 0], py - C[b, 1], pz - C[b, 2]
            un = math.sqrt(ux * ux + uy * uy + uz * uz)
            e = un - R[b]
            if un > 0.0 and e >= 0.0 and e * e < best:
                best = e * e
                d[p] = e
                s_ = R[b] / un
                q[p, 0], q[p, 1], q[p, 2] = C[b, 0] + ux * s_, C[b, 1] + uy * s_, C[b, 2] + uz * s_
    return d, q


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
            a = 1 if k == 0 else 0
            b = 2 if k <= 1 else 1
            c = 3 if k <= 2 else 2
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
            a = 1 if k == 0 else 0
            b = 2 if k <= 1 else 1
            c = 3 if k <= 2 else 2
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
        a = 1 if k == 0 else 0
        b = 2 if k <= 1 else 1
        c = 3 if k <= 2 else 2
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
        a = 1 if k == 0 else 0
        b = 2 if k <= 1 else 1
        c = 3 if k <= 2 else 2
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


@kernel(parallel=True)
def tet_wall_distances(tp, T, starts, items, lo, cell, dims, C, R, limit):
    """(K,) the distance from each tetrahedron ``tp`` (K,4,3) to the nearest
    triangle of ``T`` and ball (``C``, ``R``; a ball's inside counts as
    solid): exact up to rounding below ``limit``, ``limit`` when nothing is
    that near."""
    out = np.full(tp.shape[0], limit)
    for t in prange(tp.shape[0]):
        x = tp[t]
        best = limit * limit
        planes = _face_planes(x)
        rng = np.empty((3, 2), np.int64)
        box = np.empty((3, 2))
        for ax in range(3):
            box[ax, 0] = min(min(x[0, ax], x[1, ax]), min(x[2, ax], x[3, ax]))
            box[ax, 1] = max(max(x[0, ax], x[1, ax]), max(x[2, ax], x[3, ax]))
            rng[ax, 0], rng[ax, 1] = _cells_of(box[ax, 0] - limit, box[ax, 1] + limit, lo[ax],
                                               cell, dims[ax])
        for i in range(rng[0, 0], rng[0, 1] + 1):
            for j in range(rng[1, 0], rng[1, 1] + 1):
                for k in range(rng[2, 0], rng[2, 1] + 1):
                    c = (i * dims[1] + j) * dims[2] + k
                    for s in range(starts[c], starts[c + 1]):
                        if best <= 0.0:
                            break
                        f = items[s]
                        # boxes apart by the current best or more: no nearer
                        gap = 0.0
                        for ax in range(3):
                            flo = min(T[f, 0, ax], min(T[f, 1, ax], T[f, 2, ax]))
                            fhi = max(T[f, 0, ax], max(T[f, 1, ax], T[f, 2, ax]))
                            g = max(flo - box[ax, 1], box[ax, 0] - fhi, 0.0)
                            gap += g * g
                        if gap >= best:
                            continue
                        # a face plane with the whole triangle that far beyond it
                        sep = -np.inf
                        for k in range(4):
                            lo_k = np.inf
                            for m in range(3):
                                lo_k = min(lo_k, planes[k, 0] * T[f, m, 0] + planes[k, 1]
                                           * T[f, m, 1] + planes[k, 2] * T[f, m, 2]
                                           - planes[k, 3])
                            sep = max(sep, lo_k)
                        if sep > 0.0 and sep * sep >= best:
                            continue
                        e = tet_triangle_distance2(tp, t, T[f])
                        if e < best:
                            best = e
        dist = math.sqrt(best)
        for b in range(C.shape[0]):
            e = math.sqrt(_point_tet2(x, C[b, 0], C[b, 1], C[b, 2])) - R[b]
            if e < dist:
                dist = max(e, 0.0)
        out[t] = dist
    return out
