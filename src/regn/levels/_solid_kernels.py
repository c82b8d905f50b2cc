"""Compiled kernels of the solid decision: triangles and boxes onto a voxel
grid, the grid's dilation, and winding numbers of a triangle soup."""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel, prange


@kernel(inline=True)
def _axis_separates(ax, ay, az, p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z, ex, ey, ez):
    """True when axis ``a`` separates the triangle ``p`` (relative to a box's
    centre) from the box of half-sizes ``e`` (touching is not separated)."""
    d0 = ax * p0x + ay * p0y + az * p0z
    d1 = ax * p1x + ay * p1y + az * p1z
    d2 = ax * p2x + ay * p2y + az * p2z
    r = ex * abs(ax) + ey * abs(ay) + ez * abs(az)
    return min(d0, min(d1, d2)) > r or max(d0, max(d1, d2)) < -r


@kernel(inline=True)
def triangle_meets_box(p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z, ex, ey, ez):
    """Separating-axis test of a triangle (relative to a box's centre) and a
    closed box of half-sizes ``e``: the 3 box axes, the normal, and the 9
    cross products of edges and axes."""
    if min(p0x, min(p1x, p2x)) > ex or max(p0x, max(p1x, p2x)) < -ex:
        return False
    if min(p0y, min(p1y, p2y)) > ey or max(p0y, max(p1y, p2y)) < -ey:
        return False
    if min(p0z, min(p1z, p2z)) > ez or max(p0z, max(p1z, p2z)) < -ez:
        return False
    u = (p1x - p0x, p1y - p0y, p1z - p0z)
    v = (p2x - p1x, p2y - p1y, p2z - p1z)
    w = (p0x - p2x, p0y - p2y, p0z - p2z)
    nx = u[1] * v[2] - u[2] * v[1]
    ny = u[2] * v[0] - u[0] * v[2]
    nz = u[0] * v[1] - u[1] * v[0]
    if _axis_separates(nx, ny, nz, p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z, ex, ey, ez):
        return False
    for e in (u, v, w):
        # e x (1,0,0), e x (0,1,0), e x (0,0,1)
        if _axis_separates(0.0, e[2], -e[1], p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z,
                           ex, ey, ez):
            return False
        if _axis_separates(-e[2], 0.0, e[0], p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z,
                           ex, ey, ez):
            return False
        if _axis_separates(e[1], -e[0], 0.0, p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z,
                           ex, ey, ez):
            return False
    return True


@kernel(inline=True)
def _cell_range(a, b, lo, h, n, pad):
    """The voxel index range [i0, i1] along one axis of the interval [a, b]
    widened by ``pad`` voxels, clipped to the grid."""
    i0 = int(math.floor((a - lo) / h - pad))
    i1 = int(math.floor((b - lo) / h + pad))
    return max(i0, 0), min(i1, n - 1)


@kernel(parallel=True)
def mark_triangles(verts, tris, lo, h, grid, grow):
    """Set ``grid[i, j, k] = 1`` for every voxel (box ``lo + (i, j, k) * h``
    of size ``h``, grown by ``grow`` on every side) that a triangle meets."""
    nx, ny, nz = grid.shape
    for t in prange(tris.shape[0]):
        a, b, c = tris[t, 0], tris[t, 1], tris[t, 2]
        x0, y0, z0 = verts[a, 0], verts[a, 1], verts[a, 2]
        x1, y1, z1 = verts[b, 0], verts[b, 1], verts[b, 2]
        x2, y2, z2 = verts[c, 0], verts[c, 1], verts[c, 2]
        i0, i1 = _cell_range(min(x0, min(x1, x2)), max(x0, max(x1, x2)), lo[0], h[0], nx, 0.01)
        j0, j1 = _cell_range(min(y0, min(y1, y2)), max(y0, max(y1, y2)), lo[1], h[1], ny, 0.01)
        k0, k1 = _cell_range(min(z0, min(z1, z2)), max(z0, max(z1, z2)), lo[2], h[2], nz, 0.01)
        ex, ey, ez = 0.5 * h[0] + grow[0], 0.5 * h[1] + grow[1], 0.5 * h[2] + grow[2]
        for i in range(i0, i1 + 1):
            cx = lo[0] + (i + 0.5) * h[0]
            for j in range(j0, j1 + 1):
                cy = lo[1] + (j + 0.5) * h[1]
                for k in range(k0, k1 + 1):
                    if grid[i, j, k]:
                        continue
                    cz = lo[2] + (k + 0.5) * h[2]
                    if triangle_meets_box(x0 - cx, y0 - cy, z0 - cz, x1 - cx, y1 - cy, z1 - cz,
                                          x2 - cx, y2 - cy, z2 - cz, ex, ey, ez):
                        grid[i, j, k] = 1


@kernel(parallel=True)
def mark_boxes(box_lo, box_hi, lo, h, grid, shrink):
    """Set ``grid[i, j, k] = 1`` for every voxel whose interior overlaps one
    of the boxes ``[box_lo, box_hi]`` by more than ``shrink`` on each axis
    (so a box that only touches a voxel's face does not mark it)."""
    nx, ny, nz = grid.shape
    for b in prange(box_lo.shape[0]):
        i0, i1 = _cell_range(box_lo[b, 0] + shrink[0], box_hi[b, 0] - shrink[0], lo[0], h[0],
                             nx, 0.0)
        j0, j1 = _cell_range(box_lo[b, 1] + shrink[1], box_hi[b, 1] - shrink[1], lo[1], h[1],
                             ny, 0.0)
        k0, k1 = _cell_range(box_lo[b, 2] + shrink[2], box_hi[b, 2] - shrink[2], lo[2], h[2],
                             nz, 0.0)
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                for k in range(k0, k1 + 1):
                    grid[i, j, k] = 1


@kernel(parallel=True)
def dilate_last_axis(src, dst, k):
    """``dst[..., x] = 1`` when some ``src[..., y]`` with ``|x - y| <= k`` is
    set (a line-by-line pass: the last set voxel before and after each)."""
    n0, n1, n = src.shape
    for line in prange(n0 * n1):
        a, b = line // n1, line % n1
        last = -k - 1
        for x in range(n):
            if src[a, b, x]:
                last = x
            dst[a, b, x] = 1 if x - last <= k else 0
        nxt = n + k + 1
        for x in range(n - 1, -1, -1):
            if src[a, b, x]:
                nxt = x
            if nxt - x <= k:
                dst[a, b, x] = 1


@kernel(inline=True)
def _solid_angle(ax, ay, az, bx, by, bz, cx, cy, cz):
    """The signed solid angle of triangle ``abc`` seen from the origin
    (Van Oosterom and Strackee)."""
    la = math.sqrt(ax * ax + ay * ay + az * az)
    lb = math.sqrt(bx * bx + by * by + bz * bz)
    lc = math.sqrt(cx * cx + cy * cy + cz * cz)
    det = (ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx))
    den = (la * lb * lc + (ax * bx + ay * by + az * bz) * lc
           + (bx * cx + by * cy + bz * cz) * la + (cx * ax + cy * ay + cz * az) * lb)
    return 2.0 * math.atan2(det, den)


@kernel(parallel=True)
def winding_numbers(verts, tris, points):
    """The generalized winding number of the soup at each point: the sum of
    its triangles' signed solid angles over 4 pi."""
    out = np.zeros(points.shape[0])
    for q in range(points.shape[0]):
        px, py, pz = points[q, 0], points[q, 1], points[q, 2]
        s = 0.0
        for t in prange(tris.shape[0]):
            a, b, c = tris[t, 0], tris[t, 1], tris[t, 2]
            s += _solid_angle(verts[a, 0] - px, verts[a, 1] - py, verts[a, 2] - pz,
                              verts[b, 0] - px, verts[b, 1] - py, verts[b, 2] - pz,
                              verts[c, 0] - px, verts[c, 1] - py, verts[c, 2] - pz)
        out[q] = s / (4.0 * math.pi)
    return out


@kernel(parallel=True)
def mark_spheres(centres, radii, lo, h, grid):
    """Set ``grid[i, j, k] = 1`` for every voxel (closed) a ball meets."""
    nx, ny, nz = grid.shape
    for s in prange(centres.shape[0]):
        cx, cy, cz, r = centres[s, 0], centres[s, 1], centres[s, 2], radii[s]
        i0, i1 = _cell_range(cx - r, cx + r, lo[0], h[0], nx, 0.01)
        j0, j1 = _cell_range(cy - r, cy + r, lo[1], h[1], ny, 0.01)
        k0, k1 = _cell_range(cz - r, cz + r, lo[2], h[2], nz, 0.01)
        for i in range(i0, i1 + 1):
            dx = max(lo[0] + i * h[0] - cx, max(0.0, cx - lo[0] - (i + 1) * h[0]))
            for j in range(j0, j1 + 1):
                dy = max(lo[1] + j * h[1] - cy, max(0.0, cy - lo[1] - (j + 1) * h[1]))
                for k in range(k0, k1 + 1):
                    dz = max(lo[2] + k * h[2] - cz, max(0.0, cz - lo[2] - (k + 1) * h[2]))
                    if dx * dx + dy * dy + dz * dz <= r * r * (1 + 1e-9):
                        grid[i, j, k] = 1
