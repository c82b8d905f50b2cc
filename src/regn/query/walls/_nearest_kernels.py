"""Compiled kernels of the wall search (:mod:`regn.query.walls.nearest`).

:func:`nearest_walls` descends the wall triangles' bounding-volume
hierarchy (``bvh``, a :class:`regn.query.walls.nearest.WallBVH` record, read once
per call), with the exact closest point of :mod:`regn.geometry` at the
leaves. :func:`nearest_walls_grid` first scans the point's cell of the wall
grid (``grid``, a :class:`regn.query.walls.nearest.WallGrid`, an index over the
same triangle arrays) and descends only when that scan cannot prove its
answer; :func:`grid_lists` builds the grid's lists. Every search returns the
same triangle: the nearest, and on an exact tie the one of smallest
boundary-face row.
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import kernel, prefetch
from ...geometry._closest_kernels import closest_point_on_prepared_triangle, triangle_is_flat

# WallGrid.frame row 1
SIZE, REACH, SLACK = 0, 1, 2
#: points whose memory loads nearest_walls_grid overlaps
PREFETCH_BLOCK = 16


@kernel
def flat_flags(tri):
    """(K,9) triangles (a, b, c) -> (K,) uint8: 1 where
    :func:`regn.geometry._closest_kernels.triangle_is_flat` (solved on its edges)."""
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


@kernel(borrows=True)
def _solve(tri, flat, t, px, py, pz):
    """Triangle t's closest point to p and its squared distance."""
    qx, qy, qz = closest_point_on_prepared_triangle(
        tri[t, 0], tri[t, 1], tri[t, 2], tri[t, 3], tri[t, 4], tri[t, 5],
        tri[t, 6], tri[t, 7], tri[t, 8], px, py, pz, flat[t] != 0)
    dx, dy, dz = qx - px, qy - py, qz - pz
    return dx * dx + dy * dy + dz * dz, qx, qy, qz


@kernel(borrows=True)
def _better(d, t, best, bk, row):
    """Does triangle t at squared distance d beat the best so far (nearer,
    or as near with a smaller row; a NaN distance never does)?"""
    return d < best or (d == best and bk >= 0 and row[t] < row[bk])


@kernel(borrows=True)
def descend(box, node, tri, tbox, flat, row, stack, stack_d, px, py, pz,
            best, bk, bx, by, bz):
    """The nearest triangle to p, starting from the best found so far
    (squared distance ``best``, triangle ``bk``, closest point b; inf, -1,
    NaN for none): depth-first, nearer child first; a box farther than the
    best is skipped, so the answer is exact, and one as far is not, so that
    ties go to the smallest row. ``stack``, ``stack_d``: depth + 2 entries.
    Returns (best, bk, bx, by, bz)."""
    n = 0
    d = box_d2(box, 0, px, py, pz)
    if d <= best:
        stack[0] = 0
        stack_d[0] = d
        n = 1
    while n > 0:
        n -= 1
        if not stack_d[n] <= best:
            continue
        k = stack[n]
        first = node[k, 0]
        if node[k, 1] > 0:
            for t in range(first, first + node[k, 1]):
                if not box_d2(tbox, t, px, py, pz) <= best:
                    continue         # the triangle's own box: a cheap test first
                d, qx, qy, qz = _solve(tri, flat, t, px, py, pz)
                if _better(d, t, best, bk, row):
                    best, bk, bx, by, bz = d, t, qx, qy, qz
            continue
        dl = box_d2(box, first, px, py, pz)
        dr = box_d2(box, first + 1, px, py, pz)
        near, far, dn, df = first, first + 1, dl, dr
        if dr < dl:
            near, far, dn, df = first + 1, first, dr, dl
        if df <= best:                     # pushed first, popped last
            stack[n] = far
            stack_d[n] = df
            n += 1
        if dn <= best:
            stack[n] = near
            stack_d[n] = dn
            n += 1
    return best, bk, bx, by, bz


@kernel(borrows=True)
def _write(row, i, best, bk, bx, by, bz, out_x, out_d, out_i):
    out_x[i, 0] = bx
    out_x[i, 1] = by
    out_x[i, 2] = bz
    if bk >= 0:
        out_d[i] = math.sqrt(best)
        out_i[i] = row[bk]
    else:
        out_d[i] = math.inf
        out_i[i] = -1


@kernel
def nearest_walls(bvh, pts, out_x, out_d, out_i):
    """For each point: the closest point on the BVH's triangles, its distance
    and the triangle's boundary-face row (NaN, inf, -1 when every squared
    distance overflows, or NaN geometry), by :func:`descend`."""
    stack = np.empty(bvh.depth + 2, dtype=np.int64)
    stack_d = np.empty(bvh.depth + 2, dtype=np.float64)
    for i in range(pts.shape[0]):
        best, bk, bx, by, bz = descend(
            bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat, bvh.row, stack, stack_d,
            pts[i, 0], pts[i, 1], pts[i, 2], math.inf, -1, math.nan, math.nan, math.nan)
        _write(bvh.row, i, best, bk, bx, by, bz, out_x, out_d, out_i)


@kernel(borrows=True)
def _cell(frame, dims, px, py, pz):
    """The grid cell of p, clamped to the grid, and p's distance from its
    centre (inf when that overflows)."""
    size = frame[1, SIZE]
    f = (min(max(np.floor((px - frame[0, 0]) / size), 0.0), dims[0] - 1.0),
         min(max(np.floor((py - frame[0, 1]) / size), 0.0), dims[1] - 1.0),
         min(max(np.floor((pz - frame[0, 2]) / size), 0.0), dims[2] - 1.0))
    ox = frame[0, 0] + (f[0] + 0.5) * size
    oy = frame[0, 1] + (f[1] + 0.5) * size
    oz = frame[0, 2] + (f[2] + 0.5) * size
    r = math.sqrt((px - ox) ** 2 + (py - oy) ** 2 + (pz - oz) ** 2)
    return (int(f[2]) * dims[1] + int(f[1])) * dims[0] + int(f[0]), r


@kernel(borrows=True)
def scan_cell(frame, start, tris, lb, cut, tri, tbox, flat, row, c, r, px, py, pz):
    """The nearest of the triangles p's grid cell lists, and whether it is
    proven the nearest of all. A cell lists the triangles nearest its centre
    o, with their distances from o: none of them at distance d from o can be
    nearer p than d - |p - o|, so the scan stops at the first that cannot
    beat the best; the triangles left off the list are all at least ``cut``
    from o. Proven when p lies within REACH of o (whence the list holds every
    triangle that can be nearest) and the best beats the cut. Returns
    (best, bk, bx, by, bz, proven)."""
    best, bk, bx, by, bz = math.inf, -1, math.nan, math.nan, math.nan
    if not r <= frame[1, REACH]:
        return best, bk, bx, by, bz, False
    slack = frame[1, SLACK]
    reach = math.inf                   # sqrt(best) + r + slack: farther entries lose
    for j in range(start[c], start[c + 1]):
        if lb[j] > reach:
            return best, bk, bx, by, bz, True
        t = tris[j]
        if not box_d2(tbox, t, px, py, pz) <= best:
            continue
        d, qx, qy, qz = _solve(tri, flat, t, px, py, pz)
        if _better(d, t, best, bk, row):
            best, bk, bx, by, bz = d, t, qx, qy, qz
            reach = math.sqrt(best) + r + slack
    return best, bk, bx, by, bz, cut[c] > reach


@kernel
def nearest_walls_grid(bvh, grid, pts, out_x, out_d, out_i):
    """:func:`nearest_walls`, each point's own grid cell scanned first
    (:func:`scan_cell`); a point whose scan proves nothing is finished by
    :func:`descend`, from the scan's best. The points go PREFETCH_BLOCK at a
    time: their cells first, each cell's list asked for (prefetch) ahead of
    its scan, so that the block's loads from memory overlap."""
    stack = np.empty(bvh.depth + 2, dtype=np.int64)
    stack_d = np.empty(bvh.depth + 2, dtype=np.float64)
    frame, dims, start, tris, lb, cut = (grid.frame, grid.dims, grid.start, grid.tris,
                                         grid.lb, grid.cut)
    tri, tbox, flat, row = bvh.tri, bvh.tbox, bvh.flat, bvh.row
    cell = np.empty(PREFETCH_BLOCK, np.int64)
    dist = np.empty(PREFETCH_BLOCK)
    n = pts.shape[0]
    for s in range(0, n, PREFETCH_BLOCK):
        e = min(n, s + PREFETCH_BLOCK)
        for i in range(s, e):
            c, r = _cell(frame, dims, pts[i, 0], pts[i, 1], pts[i, 2])
            cell[i - s] = c
            dist[i - s] = r
            prefetch(start, c)
            prefetch(cut, c)
        for i in range(s, e):
            first = start[cell[i - s]]
            prefetch(tris, first)
            prefetch(lb, first)
        for i in range(s, e):
            px, py, pz = pts[i, 0], pts[i, 1], pts[i, 2]
            best, bk, bx, by, bz, proven = scan_cell(frame, start, tris, lb, cut, tri, tbox,
                                                     flat, row, cell[i - s], dist[i - s],
                                                     px, py, pz)
            if not proven:
                best, bk, bx, by, bz = descend(bvh.box, bvh.node, tri, tbox, flat, row, stack,
                                               stack_d, px, py, pz, best, bk, bx, by, bz)
            _write(row, i, best, bk, bx, by, bz, out_x, out_d, out_i)


@kernel(borrows=True)
def _gather(box, node, tri, tbox, flat, stack, px, py, pz, reach2, found, found_d):
    """Every triangle within squared distance ``reach2`` of p, into found[:n]
    with its distance in found_d; returns n."""
    n = 0
    if not box_d2(box, 0, px, py, pz) <= reach2:
        return 0
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        k = stack[top]
        first = node[k, 0]
        if node[k, 1] > 0:
            for t in range(first, first + node[k, 1]):
                if box_d2(tbox, t, px, py, pz) <= reach2:
                    d, _, _, _ = _solve(tri, flat, t, px, py, pz)
                    if d <= reach2:
                        found[n] = t
                        found_d[n] = math.sqrt(d)
                        n += 1
            continue
        for child in (first, first + 1):
            if box_d2(box, child, px, py, pz) <= reach2:
                stack[top] = child
                top += 1
    return n


@kernel(borrows=True)
def _down32(x):
    """A float32 no greater than x >= 0 (finite values up to 3e38)."""
    return np.float32(min(x, 3e38) * (1.0 - 1e-6))


@kernel
def grid_lists(bvh, frame, dims, c0, c1, most):
    """The lists of wall-grid cells c0 .. c1-1: for a cell of centre o whose
    nearest triangle is D away, every triangle within D + 2 REACH + SLACK of
    o (a point p within REACH of o has a triangle within D + |p - o|, and so
    its nearest within D + 2 |p - o| of o), nearest o first, at most
    ``most`` of them, with their distances from o rounded down to float32.
    Returns (counts (n,), tris, lb, cut (n,) float32: the distance of the
    nearest triangle left off, rounded down; inf when none is, -inf for a
    cell whose distances overflow, which lists none)."""
    n = c1 - c0
    nx, ny = dims[0], dims[1]
    size, reach, slack = frame[1, SIZE], frame[1, REACH], frame[1, SLACK]
    counts = np.zeros(n, np.int64)
    cut = np.full(n, -np.inf, np.float32)
    out_t = np.empty(n * most, np.int32)
    out_lb = np.empty(n * most, np.float32)
    found = np.empty(bvh.tri.shape[0], np.int64)
    found_d = np.empty(bvh.tri.shape[0])
    stack = np.empty(bvh.depth + 2, dtype=np.int64)
    stack_d = np.empty(bvh.depth + 2, dtype=np.float64)
    m = 0
    for c in range(c0, c1):
        ox = frame[0, 0] + (c % nx + 0.5) * size
        oy = frame[0, 1] + ((c // nx) % ny + 0.5) * size
        oz = frame[0, 2] + (c // (nx * ny) + 0.5) * size
        best, bk, _, _, _ = descend(bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat, bvh.row,
                                    stack, stack_d, ox, oy, oz, math.inf, -1, 0.0, 0.0, 0.0)
        far = math.sqrt(best) + 2.0 * reach + slack
        if bk < 0 or not far * far < math.inf:
            continue
        k = _gather(bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat, stack, ox, oy, oz,
                    far * far, found, found_d)
        order = np.argsort(found_d[:k], kind="mergesort")
        keep = min(k, most)
        for j in range(keep):
            out_t[m + j] = found[order[j]]
            out_lb[m + j] = _down32(found_d[order[j]])
        cut[c - c0] = _down32(found_d[order[most]]) if k > most else np.inf
        counts[c - c0] = keep
        m += keep
    return counts, out_t[:m].copy(), out_lb[:m].copy(), cut
