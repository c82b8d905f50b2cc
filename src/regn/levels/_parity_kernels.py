"""Compiled kernels of the nesting rule (``cavities="nested"``): the
triangles of a soup an axis-parallel segment crosses (how many, mod 2, and
the change of the winding number), through a uniform grid of cells listing
the triangles whose bounding box meets them."""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel, prange


@kernel(parallel=True)
def cell_ranges(verts, tris, lo, h, dims):
    """``(cell_lo, cell_hi)`` (T, 3) int64: the cells (``lo``, size ``h``,
    ``dims``; clipped to the grid) each triangle's bounding box meets."""
    cell_lo = np.empty((tris.shape[0], 3), np.int64)
    cell_hi = np.empty((tris.shape[0], 3), np.int64)
    for t in prange(tris.shape[0]):
        for d in range(3):
            a, b, c = verts[tris[t, 0], d], verts[tris[t, 1], d], verts[tris[t, 2], d]
            cell_lo[t, d] = _cell(min(a, min(b, c)), lo[d], h[d], dims[d])
            cell_hi[t, d] = _cell(max(a, max(b, c)), lo[d], h[d], dims[d])
    return cell_lo, cell_hi


@kernel
def fill_cells(cell_lo, cell_hi, dims):
    """``(starts, items)``: the triangles of each cell (cell ``c``'s are
    ``items[starts[c]:starts[c + 1]]``), triangle ``t`` listed in the cells
    ``cell_lo[t] .. cell_hi[t]`` (inclusive, per axis)."""
    starts = np.zeros(dims[0] * dims[1] * dims[2] + 1, np.int64)
    for t in range(cell_lo.shape[0]):
        for i in range(cell_lo[t, 0], cell_hi[t, 0] + 1):
            for j in range(cell_lo[t, 1], cell_hi[t, 1] + 1):
                for k in range(cell_lo[t, 2], cell_hi[t, 2] + 1):
                    starts[(i * dims[1] + j) * dims[2] + k + 1] += 1
    for c in range(1, starts.shape[0]):
        starts[c] += starts[c - 1]
    fill = starts[:-1].copy()
    items = np.empty(starts[-1], np.int64)
    for t in range(cell_lo.shape[0]):
        for i in range(cell_lo[t, 0], cell_hi[t, 0] + 1):
            for j in range(cell_lo[t, 1], cell_hi[t, 1] + 1):
                for k in range(cell_lo[t, 2], cell_hi[t, 2] + 1):
                    c = (i * dims[1] + j) * dims[2] + k
                    items[fill[c]] = t
                    fill[c] += 1
    return starts, items


@kernel(inline=True)
def _crossing(pu, pv, au, av, bu, bv, cu, cv):
    """``(hit, wa, wb, wc, front)``: whether the point ``(pu, pv)`` lies
    inside the triangle ``abc`` projected on the plane of the two other
    axes, with its barycentric weights and the sign (+1 or -1) of the
    projected area (a triangle seen edge-on is never hit)."""
    det = (bu - au) * (cv - av) - (cu - au) * (bv - av)
    if det == 0.0:
        return False, 0.0, 0.0, 0.0, 0
    wb = ((pu - au) * (cv - av) - (cu - au) * (pv - av)) / det
    wc = ((bu - au) * (pv - av) - (pu - au) * (bv - av)) / det
    wa = 1.0 - wb - wc
    return wa >= 0.0 and wb >= 0.0 and wc >= 0.0, wa, wb, wc, 1 if det > 0.0 else -1


@kernel(inline=True)
def _cell(x, lo, h, n):
    return min(max(int(math.floor((x - lo) / h)), 0), n - 1)


@kernel(parallel=True)
def segment_crossings(verts, tris, seg_starts, axes, ends, lo, h, dims, starts, items):
    """``(S,)`` int64: for each segment from ``seg_starts[s]`` along axis
    ``axes[s]`` to the coordinate ``ends[s]`` on that axis, the sum over the
    triangles it crosses of +1 where it passes from a triangle's front
    (the side its corners run counter-clockwise seen from) to its back, -1
    the other way: the change of the winding number from start to end. Its
    parity is the number of triangles crossed, mod 2, whichever way they
    face. The cells (``lo``, size ``h``, ``dims``; a coordinate outside is
    in the nearest cell) list the triangles; a triangle listed in several
    cells along the segment counts only in the cell its crossing lies in."""
    out = np.zeros(seg_starts.shape[0], np.int64)
    for s in prange(seg_starts.shape[0]):
        ax = axes[s]
        u, v = (ax + 1) % 3, (ax + 2) % 3
        pu, pv = seg_starts[s, u], seg_starts[s, v]
        a0, a1 = min(seg_starts[s, ax], ends[s]), max(seg_starts[s, ax], ends[s])
        forward = 1 if ends[s] > seg_starts[s, ax] else -1
        cu = _cell(pu, lo[u], h[u], dims[u])
        cv = _cell(pv, lo[v], h[v], dims[v])
        total = 0
        for ca in range(_cell(a0, lo[ax], h[ax], dims[ax]), _cell(a1, lo[ax], h[ax], dims[ax]) + 1):
            ci = ca if ax == 0 else (cv if ax == 1 else cu)
            cj = cu if ax == 0 else (ca if ax == 1 else cv)
            ck = cv if ax == 0 else (cu if ax == 1 else ca)
            c = (ci * dims[1] + cj) * dims[2] + ck
            for m in range(starts[c], starts[c + 1]):
                t = items[m]
                a, b, cc = tris[t, 0], tris[t, 1], tris[t, 2]
                hit, wa, wb, wc, front = _crossing(pu, pv, verts[a, u], verts[a, v],
                                                   verts[b, u], verts[b, v], verts[cc, u],
                                                   verts[cc, v])
                if not hit:
                    continue
                at = wa * verts[a, ax] + wb * verts[b, ax] + wc * verts[cc, ax]
                if a0 < at < a1 and _cell(at, lo[ax], h[ax], dims[ax]) == ca:
                    # the normal's component along the axis is the projected
                    # signed area: moving with it runs from back to front
                    total += -forward * front
        out[s] = total
    return out
