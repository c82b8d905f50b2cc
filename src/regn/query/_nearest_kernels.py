"""Compiled kernels of the wall search (:mod:`regn.query.nearest`): a
depth-first descent of the wall triangles' bounding-volume hierarchy
(``bvh``, a :class:`regn.query.nearest.WallBVH` record, read once per
call), with the exact closest point of :mod:`regn.geometry` at the leaves."""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel
from ..geometry._kernels import closest_point_on_prepared_triangle, triangle_is_flat


@kernel
def flat_flags(tri):
    """(K,9) triangles (a, b, c) -> (K,) uint8: 1 where
    :func:`regn.geometry._kernels.triangle_is_flat` (solved on its edges)."""
    out = np.empty(tri.shape[0], np.uint8)
    for k in range(tri.shape[0]):
        out[k] = triangle_is_flat(tri[k, 0], tri[k, 1], tri[k, 2], tri[k, 3], tri[k, 4],
                                  tri[k, 5], tri[k, 6], tri[k, 7], tri[k, 8])
    return out


@kernel(borrows=True)
def box_d2(box, k, px, py, pz):
    """Squared distance from p to box k (lo xyz, hi xyz; 0 inside);
    branch-free (max, not if: which side p lies on is unpredictable)."""
    tx = max(box[k, 0] - px, px - box[k, 3], 0.0)
    ty = max(box[k, 1] - py, py - box[k, 4], 0.0)
    tz = max(box[k, 2] - pz, pz - box[k, 5], 0.0)
    return tx * tx + ty * ty + tz * tz


@kernel
def nearest_walls(bvh, pts, out_x, out_d, out_i):
    """For each point: the closest point on the BVH's triangles, its distance
    and the triangle's boundary-face row (NaN, inf, -1 when every squared
    distance overflows, or NaN geometry). Depth-first, nearer child first; a
    node whose box is no nearer than the best so far is skipped, so the
    answer is exact. Strict '<' at the leaves: the first triangle found wins
    exact ties, and a NaN distance never wins. (The leaf loop is written out
    here: a helper taking the arrays would cost reference-count updates on
    every leaf.)"""
    box, node, tri, tbox, flat = bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat
    # each popped inner node pushes its two children: at most depth + 1 entries
    stack = np.empty(bvh.depth + 2, dtype=np.int64)
    stack_d = np.empty(bvh.depth + 2, dtype=np.float64)
    for i in range(pts.shape[0]):
        px, py, pz = pts[i, 0], pts[i, 1], pts[i, 2]
        best = math.inf
        bk = -1
        bx = by = bz = math.nan
        n = 0
        d = box_d2(box, 0, px, py, pz)
        if d < best:
            stack[0] = 0
            stack_d[0] = d
            n = 1
        while n > 0:
            n -= 1
            if not stack_d[n] < best:
                continue
            k = stack[n]
            first = node[k, 0]
            if node[k, 1] > 0:
                for t in range(first, first + node[k, 1]):
                    if not box_d2(tbox, t, px, py, pz) < best:
                        continue         # the triangle's own box: a cheap test first
                    qx, qy, qz = closest_point_on_prepared_triangle(
                        tri[t, 0], tri[t, 1], tri[t, 2], tri[t, 3], tri[t, 4], tri[t, 5],
                        tri[t, 6], tri[t, 7], tri[t, 8], px, py, pz, flat[t])
                    dx, dy, dz = qx - px, qy - py, qz - pz
                    d = dx * dx + dy * dy + dz * dz
                    if d < best:
                        best, bk, bx, by, bz = d, t, qx, qy, qz
                continue
            dl = box_d2(box, first, px, py, pz)
            dr = box_d2(box, first + 1, px, py, pz)
            near, far, dn, df = first, first + 1, dl, dr
            if dr < dl:
                near, far, dn, df = first + 1, first, dr, dl
            if df < best:                      # pushed first, popped last
                stack[n] = far
                stack_d[n] = df
                n += 1
            if dn < best:
                stack[n] = near
                stack_d[n] = dn
                n += 1
        out_x[i, 0] = bx
        out_x[i, 1] = by
        out_x[i, 2] = bz
        if bk >= 0:
            out_d[i] = math.sqrt(best)
            out_i[i] = bvh.row[bk]
        else:
            out_d[i] = math.inf
            out_i[i] = -1
