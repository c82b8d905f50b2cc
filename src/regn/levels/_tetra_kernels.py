"""Compiled kernels of a level's tetrahedra: which tetrahedra meet a solid
voxel (a descent through a pyramid of "any solid" blocks, each candidate
block tested exactly against the tetrahedron by separating axes)."""

from __future__ import annotations

import numpy as np

from .._jit import kernel, prange


@kernel(inline=True)
def _separates(ax, ay, az, p, ex, ey, ez):
    """True when axis ``a`` separates the tetrahedron ``p`` (4x3, relative to
    the box centre) from the open box of half-sizes ``e``. A (nearly) zero
    axis — the cross product of parallel directions — separates nothing."""
    n2 = ax * ax + ay * ay + az * az
    scale = ex + ey + ez
    if not n2 > 1e-24 * scale * scale * scale * scale:
        return False
    lo = 1e300
    hi = -1e300
    for m in range(4):
        d = ax * p[m, 0] + ay * p[m, 1] + az * p[m, 2]
        lo = min(lo, d)
        hi = max(hi, d)
    r = ex * abs(ax) + ey * abs(ay) + ez * abs(az)
    return lo >= r or hi <= -r


@kernel
def tet_meets_box(p, ex, ey, ez):
    """Whether the tetrahedron ``p`` (4x3, relative to a box's centre) and
    the open box of half-sizes ``e`` share an interior point."""
    for a in range(3):
        lo = min(min(p[0, a], p[1, a]), min(p[2, a], p[3, a]))
        hi = max(max(p[0, a], p[1, a]), max(p[2, a], p[3, a]))
        e = ex if a == 0 else (ey if a == 1 else ez)
        if lo >= e or hi <= -e:
            return False
    # face normals
    for f in range(4):
        i, j, k = (f + 1) % 4, (f + 2) % 4, (f + 3) % 4
        ux, uy, uz = p[j, 0] - p[i, 0], p[j, 1] - p[i, 1], p[j, 2] - p[i, 2]
        vx, vy, vz = p[k, 0] - p[i, 0], p[k, 1] - p[i, 1], p[k, 2] - p[i, 2]
        if _separates(uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx, p, ex, ey, ez):
            return False
    # edges x box axes
    for i in range(4):
        for j in range(i + 1, 4):
            dx, dy, dz = p[j, 0] - p[i, 0], p[j, 1] - p[i, 1], p[j, 2] - p[i, 2]
            if _separates(0.0, dz, -dy, p, ex, ey, ez):
                return False
            if _separates(-dz, 0.0, dx, p, ex, ey, ez):
                return False
            if _separates(dy, -dx, 0.0, p, ex, ey, ez):
                return False
    return True


@kernel
def _meets_eroded(tp, pyramid, dims, lo, h, shrink, i, j, k, p):
    """Whether ``tp`` meets solid voxel (i, j, k) with only its faces that
    border a free voxel pulled in by ``shrink`` (pulling in every face would
    open slits between solid neighbours)."""
    idx = (i, j, k)
    b0 = np.empty(3)
    b1 = np.empty(3)
    for a in range(3):
        b0[a] = lo[a] + idx[a] * h[a]
        b1[a] = b0[a] + h[a]
        for side in (-1, 1):
            n0, n1, n2 = i, j, k
            if a == 0:
                n0 += side
            elif a == 1:
                n1 += side
            else:
                n2 += side
            if 0 <= n0 < dims[0, 0] and 0 <= n1 < dims[0, 1] and 0 <= n2 < dims[0, 2]:
                if pyramid[(n0 * dims[0, 1] + n1) * dims[0, 2] + n2] == 0:
                    if side < 0:
                        b0[a] += shrink[a]
                    else:
                        b1[a] -= shrink[a]
    for m in range(4):
        for a in range(3):
            p[m, a] = tp[m, a] - 0.5 * (b0[a] + b1[a])
    return tet_meets_box(p, 0.5 * (b1[0] - b0[0]), 0.5 * (b1[1] - b0[1]), 0.5 * (b1[2] - b0[2]))


@kernel
def _tet_hits(tp, pyramid, offsets, dims, lo, h, shrink, stack):
    """Whether tetrahedron ``tp`` (4x3) meets a solid level-0 voxel shrunk
    by ``shrink``; ``stack`` is scratch of (level, i, j, k) rows."""
    top = dims.shape[0] - 1
    p = np.empty((4, 3))
    mn = np.empty(3)
    mx = np.empty(3)
    for a in range(3):
        mn[a] = min(min(tp[0, a], tp[1, a]), min(tp[2, a], tp[3, a]))
        mx[a] = max(max(tp[0, a], tp[1, a]), max(tp[2, a], tp[3, a]))
    n = 0
    s = 1 << top
    r0 = np.empty(3, np.int64)
    r1 = np.empty(3, np.int64)
    for a in range(3):
        r0[a] = max(int(np.floor((mn[a] - lo[a]) / (h[a] * s))), 0)
        r1[a] = min(int(np.floor((mx[a] - lo[a]) / (h[a] * s))), dims[top, a] - 1)
    for i in range(r0[0], r1[0] + 1):
        for j in range(r0[1], r1[1] + 1):
            for k in range(r0[2], r1[2] + 1):
                stack[n, 0], stack[n, 1], stack[n, 2], stack[n, 3] = top, i, j, k
                n += 1
    while n > 0:
        n -= 1
        lev, i, j, k = stack[n, 0], stack[n, 1], stack[n, 2], stack[n, 3]
        d1, d2 = dims[lev, 1], dims[lev, 2]
        if pyramid[offsets[lev] + (i * d1 + j) * d2 + k] == 0:
            continue
        s = 1 << lev
        ex, ey, ez = 0.5 * s * h[0], 0.5 * s * h[1], 0.5 * s * h[2]
        cx, cy, cz = lo[0] + (i + 0.5) * s * h[0], lo[1] + (j + 0.5) * s * h[1], \
            lo[2] + (k + 0.5) * s * h[2]
        for m in range(4):
            p[m, 0], p[m, 1], p[m, 2] = tp[m, 0] - cx, tp[m, 1] - cy, tp[m, 2] - cz
        if lev == 0:
            if _meets_eroded(tp, pyramid, dims, lo, h, shrink, i, j, k, p):
                return True
            continue
        if not tet_meets_box(p, ex, ey, ez):
            continue
        for c in range(8):
            ci, cj, ck = 2 * i + (c >> 2), 2 * j + ((c >> 1) & 1), 2 * k + (c & 1)
            if ci < dims[lev - 1, 0] and cj < dims[lev - 1, 1] and ck < dims[lev - 1, 2]:
                if n >= stack.shape[0]:
                    return True              # out of scratch: call it a hit (safe)
                stack[n, 0], stack[n, 1], stack[n, 2], stack[n, 3] = lev - 1, ci, cj, ck
                n += 1
    return False


@kernel(parallel=True)
def tets_meet_solid(tet_points, pyramid, offsets, dims, lo, h, shrink):
    """(T,) bool: which tetrahedra (T,4,3) share an interior point with a
    solid voxel of the pyramid's level 0 (each voxel shrunk by ``shrink``)."""
    out = np.zeros(tet_points.shape[0], np.bool_)
    for t in prange(tet_points.shape[0]):
        stack = np.empty((8 * dims.shape[0] + 1024, 4), np.int64)
        out[t] = _tet_hits(tet_points[t], pyramid, offsets, dims, lo, h, shrink, stack)
    return out


@kernel(parallel=True)
def points_in_grid(points, grid, lo, h):
    """(N,) the value of ``grid`` at each point's voxel (0 outside the grid)."""
    nx, ny, nz = grid.shape
    out = np.zeros(points.shape[0], np.uint8)
    for q in prange(points.shape[0]):
        i = int(np.floor((points[q, 0] - lo[0]) / h[0]))
        j = int(np.floor((points[q, 1] - lo[1]) / h[1]))
        k = int(np.floor((points[q, 2] - lo[2]) / h[2]))
        if 0 <= i < nx and 0 <= j < ny and 0 <= k < nz:
            out[q] = grid[i, j, k]
    return out
