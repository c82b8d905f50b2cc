"""Compiled kernels of swept spheres and segment clearances
(:mod:`regn.query.sight.sweep`, :mod:`regn.query.radius.portals`): descents of the wall
BVH (``bvh``, a :class:`regn.query.walls.nearest.WallBVH`, read once per call)
with the exact segment-triangle and sphere-sweep kernels of
:mod:`regn.geometry` at the leaves.

A node is skipped when the segment misses its box grown by the distance
that still matters (the best clearance so far, or the sphere's radius), by
the slab test :func:`segment_box_entry`: a box grown by d holds every point
within d of the box, so nothing in a skipped node can matter.
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import kernel
from ...geometry._segment_kernels import closest_points_segment_triangle, sphere_sweep_triangle
from ..walls._nearest_kernels import box_d2


@kernel
def segment_box_entry(box, k, ax, ay, az, dx, dy, dz, t_end, pad):
    """The first fraction in [0, t_end] at which a + t d lies in box k
    grown by ``pad`` on every side, inf when it never does (the slab test;
    a zero direction component tests that coordinate once)."""
    lo = 0.0
    hi = t_end
    for axis in range(3):
        if axis == 0:
            p, d, b0, b1 = ax, dx, box[k, 0] - pad, box[k, 3] + pad
        elif axis == 1:
            p, d, b0, b1 = ay, dy, box[k, 1] - pad, box[k, 4] + pad
        else:
            p, d, b0, b1 = az, dz, box[k, 2] - pad, box[k, 5] + pad
        if d != 0.0:
            t0 = (b0 - p) / d
            t1 = (b1 - p) / d
            lo = max(lo, min(t0, t1))
            hi = min(hi, max(t0, t1))
        elif not (p >= b0 and p <= b1):
            hi = -1.0
    return lo if lo <= hi else math.inf


@kernel
def _may_come_within(box, k, point, ax, ay, az, dx, dy, dz, best, best2):
    """Can segment a -> a + d come closer than best to box k? For a point,
    its exact distance to the box; for a segment, the slab test of the box
    grown by best."""
    if point:
        return box_d2(box, k, ax, ay, az) < best2
    return segment_box_entry(box, k, ax, ay, az, dx, dy, dz, 1.0, best) <= 1.0


@kernel
def segment_clearance(box, node, tri, tbox, flat, stack, ax, ay, az, bx, by, bz, cap,
                      any_below):
    """(clearance, triangle, closest point on the segment, on the triangle)
    of segment ab (a point when b = a): its exact distance to the nearest
    BVH triangle when that is below ``cap`` (else (cap, -1, NaN...)). With
    ``any_below`` it stops at the first triangle found below ``cap``, whose
    distance is then only an upper bound of the clearance (a cheap "is
    anything closer than cap?"). ``stack``: (2 depth + 4,) int64 scratch."""
    dx, dy, dz = bx - ax, by - ay, bz - az
    mx, my, mz = ax + 0.5 * dx, ay + 0.5 * dy, az + 0.5 * dz
    point = dx == 0.0 and dy == 0.0 and dz == 0.0
    best2 = cap * cap
    best = cap
    bk = -1
    px = py = pz = qx = qy = qz = math.nan
    n = 0
    if _may_come_within(box, 0, point, ax, ay, az, dx, dy, dz, best, best2):
        stack[0] = 0
        n = 1
    while n > 0:
        n -= 1
        k = stack[n]
        if not _may_come_within(box, k, point, ax, ay, az, dx, dy, dz, best, best2):
            continue
        first = node[k, 0]
        if node[k, 1] > 0:
            for t in range(first, first + node[k, 1]):
                if not _may_come_within(tbox, t, point, ax, ay, az, dx, dy, dz, best, best2):
                    continue
                d2, sx, sy, sz, wx, wy, wz = closest_points_segment_triangle(
                    ax, ay, az, bx, by, bz, tri[t, 0], tri[t, 1], tri[t, 2], tri[t, 3],
                    tri[t, 4], tri[t, 5], tri[t, 6], tri[t, 7], tri[t, 8], flat[t])
                if d2 < best2:
                    best2, bk = d2, t
                    best = math.sqrt(d2)
                    px, py, pz, qx, qy, qz = sx, sy, sz, wx, wy, wz
            if any_below and bk >= 0:
                n = 0
            continue
        # nearer child (to the segment's middle) popped first
        if box_d2(box, first, mx, my, mz) <= box_d2(box, first + 1, mx, my, mz):
            stack[n] = first + 1
            stack[n + 1] = first
        else:
            stack[n] = first
            stack[n + 1] = first + 1
        n += 2
    return best, bk, px, py, pz, qx, qy, qz


@kernel
def segments_clearance(bvh, a, b, cap, out_d, out_k):
    """:func:`segment_clearance` of every segment a[i] -> b[i] (capped at
    ``cap``): distances into out_d, triangles (BVH order, -1 none) into out_k."""
    box, node, tri, tbox, flat = bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat
    stack = np.empty(2 * bvh.depth + 4, dtype=np.int64)
    for i in range(a.shape[0]):
        d, k, _, _, _, _, _, _ = segment_clearance(
            box, node, tri, tbox, flat, stack, a[i, 0], a[i, 1], a[i, 2],
            b[i, 0], b[i, 1], b[i, 2], cap, False)
        out_d[i] = d
        out_k[i] = k


@kernel
def sphere_sweep(box, node, tri, tbox, flat, stack, ax, ay, az, bx, by, bz, r, first_only):
    """(fraction, triangle) of the first contact of a sphere of radius r
    whose centre moves from a to b with the BVH's triangles (touching
    counts: its centre within r), (inf, -1) when there is none; fraction
    0 when it touches at a. Nodes are visited in the order the segment
    enters their grown boxes, and skipped once the best contact comes
    before that. ``first_only`` False: stop at any contact (a yes/no
    answer; each triangle's test is the same, so the yes/no is too)."""
    dx, dy, dz = bx - ax, by - ay, bz - az
    best = math.inf
    bk = -1
    n = 0
    if segment_box_entry(box, 0, ax, ay, az, dx, dy, dz, 1.0, r) <= 1.0:
        stack[0] = 0
        n = 1
    while n > 0:
        n -= 1
        k = stack[n]
        t_end = min(best, 1.0)
        if not segment_box_entry(box, k, ax, ay, az, dx, dy, dz, t_end, r) <= t_end:
            continue
        first = node[k, 0]
        if node[k, 1] > 0:
            for t in range(first, first + node[k, 1]):
                t_end = min(best, 1.0)
                if not segment_box_entry(tbox, t, ax, ay, az, dx, dy, dz, t_end, r) <= t_end:
                    continue
                s = sphere_sweep_triangle(ax, ay, az, dx, dy, dz, r, tri[t, 0], tri[t, 1],
                                          tri[t, 2], tri[t, 3], tri[t, 4], tri[t, 5],
                                          tri[t, 6], tri[t, 7], tri[t, 8], flat[t])
                if s < best:
                    best, bk = s, t
            if best < math.inf and not first_only:
                n = 0
            continue
        e0 = segment_box_entry(box, first, ax, ay, az, dx, dy, dz, 1.0, r)
        e1 = segment_box_entry(box, first + 1, ax, ay, az, dx, dy, dz, 1.0, r)
        if e0 <= e1:
            stack[n] = first + 1
            stack[n + 1] = first
        else:
            stack[n] = first
            stack[n + 1] = first + 1
        n += 2
    return best, bk


@kernel
def sphere_sweeps(bvh, a, b, r, first_only, out_t, out_k):
    """:func:`sphere_sweep` of every segment a[i] -> b[i] whose out_t[i] is
    NaN on entry (others are left alone: already answered): the contact's
    fraction (inf: none) and triangle (BVH order, -1 none); the first
    contact, or with ``first_only`` False any one (a cheaper yes/no)."""
    box, node, tri, tbox, flat = bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat
    stack = np.empty(2 * bvh.depth + 4, dtype=np.int64)
    for i in range(a.shape[0]):
        if out_t[i] == out_t[i]:
            continue
        out_t[i], out_k[i] = sphere_sweep(box, node, tri, tbox, flat, stack, a[i, 0],
                                          a[i, 1], a[i, 2], b[i, 0], b[i, 1], b[i, 2], r,
                                          first_only)
