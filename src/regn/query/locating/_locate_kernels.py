"""Compiled kernels of point location (:mod:`regn.query.locating.locate`).

A tetrahedron's barycentric coordinates come from its affine rows ``W[t]``
(12 float64: rows r = 1, 2, 3 at ``W[t, 4(r-1):4r]``, so that
``l_r = ((w0 x + w1 y) + w2 z) + w3`` and ``l0 = 1 - ((l1 + l2) + l3)``);
the segment walk of :mod:`regn.query.sight.raycast` and the path search reuse
:func:`barycentric` and :func:`locate_points`.

The entry points take ``tables``, a :class:`regn.query.locating.locate.LocateTables`
record; the helpers they call per point take plain arrays (a record handed
to a helper inside a loop costs reference-count updates on every call).
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit import kernel, prefetch
from ...tolerances import BARY_TOL, ROUND_REL

#: the tie flood of the "grid" method stops growing after this many tetrahedra
FLOOD_CAP = 4096
#: rows of LocateTables.frame
BOX_LO, BOX_HI, GRID_LO, GRID_CELL = 0, 1, 2, 3
#: points whose memory loads locate_points overlaps (8-64 measured alike)
PREFETCH_BLOCK = 16


@kernel
def barycentric(W, t, x, y, z):
    """(l0, l1, l2, l3) of point (x, y, z) in tetrahedron t."""
    l1 = W[t, 0] * x + W[t, 1] * y + W[t, 2] * z + W[t, 3]
    l2 = W[t, 4] * x + W[t, 5] * y + W[t, 6] * z + W[t, 7]
    l3 = W[t, 8] * x + W[t, 9] * y + W[t, 10] * z + W[t, 11]
    return 1.0 - (l1 + l2 + l3), l1, l2, l3


@kernel
def smallest(l0, l1, l2, l3):
    """The smallest of four coordinates, NaN when any is NaN."""
    if l0 != l0 or l1 != l1 or l2 != l2 or l3 != l3:
        return math.nan
    return min(min(l0, l1), min(l2, l3))


@kernel
def holds(W, t, x, y, z):
    """Does tetrahedron t hold the point (every coordinate >= -BARY_TOL;
    False for NaN)?"""
    l0, l1, l2, l3 = barycentric(W, t, x, y, z)
    return l0 >= -BARY_TOL and l1 >= -BARY_TOL and l2 >= -BARY_TOL and l3 >= -BARY_TOL


@kernel
def fine_cell(frame, dims, x, y, z):
    """The point's cell of the fine grid; -1 outside the widened header box
    (and for NaN). ``frame``, ``dims``: LocateTables' fields."""
    if not (x >= frame[BOX_LO, 0] and x <= frame[BOX_HI, 0] and y >= frame[BOX_LO, 1]
            and y <= frame[BOX_HI, 1] and z >= frame[BOX_LO, 2] and z <= frame[BOX_HI, 2]):
        return -1
    nx, ny, nz = dims[0], dims[1], dims[2]
    ix = min(max(int(np.floor((x - frame[GRID_LO, 0]) / frame[GRID_CELL, 0])), 0), nx - 1)
    iy = min(max(int(np.floor((y - frame[GRID_LO, 1]) / frame[GRID_CELL, 1])), 0), ny - 1)
    iz = min(max(int(np.floor((z - frame[GRID_LO, 2]) / frame[GRID_CELL, 2])), 0), nz - 1)
    return (iz * ny + iy) * nx + ix


@kernel
def locate_in_cell(W, cell_start, cell_tets, c, x, y, z):
    """The smallest index among fine cell c's listed tetrahedra holding the
    point, or the first one holding it strictly inside (all coordinates >=
    +BARY_TOL: it is the only one); -1 when none does. The fine lists hold
    every tetrahedron near the point, so this is the tie rule's answer."""
    res = -1
    for r in range(cell_start[c], cell_start[c + 1]):
        t = cell_tets[r]
        l0, l1, l2, l3 = barycentric(W, t, x, y, z)
        m = smallest(l0, l1, l2, l3)
        if m >= -BARY_TOL:              # NaN fails this test
            if res < 0 or t < res:
                res = t
            if m >= BARY_TOL:
                return t
    return res


@kernel
def locate_points(tables, pts, out):
    """``method="auto"``: each point's tetrahedron (-1 outside) into ``out``.

    The points go PREFETCH_BLOCK at a time, in stages: their cells, then
    each cell's list start, then the first listed tetrahedron's rows, each
    stage asking for (:func:`regn._jit.prefetch`) what the next one reads,
    so that the block's loads from memory overlap instead of following one
    another; then :func:`locate_in_cell` for each point, in order."""
    W, frame, dims = tables.W, tables.frame, tables.dims
    cell_start, cell_tets = tables.cell_start, tables.cell_tets
    cell = np.empty(PREFETCH_BLOCK, np.int64)
    n = pts.shape[0]
    for s in range(0, n, PREFETCH_BLOCK):
        e = min(n, s + PREFETCH_BLOCK)
        for i in range(s, e):
            c = fine_cell(frame, dims, pts[i, 0], pts[i, 1], pts[i, 2])
            cell[i - s] = c
            if c >= 0:
                prefetch(cell_start, c)
        for i in range(s, e):
            c = cell[i - s]
            if c >= 0:
                prefetch(cell_tets, cell_start[c])
        for i in range(s, e):
            c = cell[i - s]
            if c >= 0 and cell_start[c + 1] > cell_start[c]:
                t = cell_tets[cell_start[c]]
                prefetch(W, 12 * t)              # a row is 96 bytes: two cache lines
                prefetch(W, 12 * t + 11)
        for i in range(s, e):
            c = cell[i - s]
            out[i] = -1 if c < 0 else locate_in_cell(W, cell_start, cell_tets, c, pts[i, 0],
                                                     pts[i, 1], pts[i, 2])
    return out


@kernel
def locate_point(tables, x, y, z):
    """locate_points for one point: its tetrahedron, -1 outside."""
    c = fine_cell(tables.frame, tables.dims, x, y, z)
    return -1 if c < 0 else locate_in_cell(tables.W, tables.cell_start, tables.cell_tets,
                                           c, x, y, z)


@kernel
def may_hold(W, t, cx, cy, cz, hx, hy, hz):
    """Can tetrahedron t hold (:func:`holds`) some point of the box of
    centre c and half-sizes h? False only when one barycentric coordinate
    stays below -BARY_TOL all over the box by more than the rounding of its
    computation (ROUND_REL of the magnitudes summed in it); True for a NaN
    row. The largest value of a coordinate over the box is its value at the
    centre plus the box's half-sizes weighted by its gradient."""
    s = 0.0
    s_mag = 0.0
    gx = gy = gz = 0.0
    for r in range(3):
        a, b, c, d = W[t, 4 * r], W[t, 4 * r + 1], W[t, 4 * r + 2], W[t, 4 * r + 3]
        v = a * cx + b * cy + c * cz + d
        e = abs(a) * hx + abs(b) * hy + abs(c) * hz
        mag = abs(a * cx) + abs(b * cy) + abs(c * cz) + abs(d) + e
        if v + e + ROUND_REL * mag < -BARY_TOL:
            return False
        s += v
        s_mag += mag
        gx += a
        gy += b
        gz += c
    e = abs(gx) * hx + abs(gy) * hy + abs(gz) * hz        # l0 = 1 - (l1 + l2 + l3)
    return not 1.0 - s + e + ROUND_REL * (1.0 + s_mag + e) < -BARY_TOL


@kernel
def fine_lists(W, vol, first, last, origin, size, dims, pad):
    """The fine grid's lists, as CSR (indptr (C+1,), indices): cell c lists
    every tetrahedron t whose inclusive cell range first[t]..last[t] (an
    empty range on an axis: none) holds it and that :func:`may_hold` a point
    of the cell grown by ``pad`` on every side; the ones holding the cell's
    centre first, then by volume, largest first (NaN last), then by index."""
    nx, ny = dims[0], dims[1]
    n_cells = dims[0] * dims[1] * dims[2]
    hx, hy, hz = 0.5 * size[0] + pad[0], 0.5 * size[1] + pad[1], 0.5 * size[2] + pad[2]
    indptr = np.zeros(n_cells + 1, np.int64)
    pairs = 0
    for t in range(W.shape[0]):
        pairs += (max(last[t, 0] - first[t, 0] + 1, 0) * max(last[t, 1] - first[t, 1] + 1, 0)
                  * max(last[t, 2] - first[t, 2] + 1, 0))
    keep = np.empty(pairs, np.bool_)         # each pair tested once, in the count
    indices = np.empty(0, np.int64)
    fill = indptr[:0]
    for rep in range(2):                     # count, then fill in tet order
        if rep == 1:
            for c in range(n_cells):
                indptr[c + 1] += indptr[c]
            indices = np.empty(indptr[n_cells], np.int64)
            fill = indptr[:n_cells].copy()
        k = 0
        for t in range(W.shape[0]):
            for iz in range(first[t, 2], last[t, 2] + 1):
                cz = origin[2] + (iz + 0.5) * size[2]
                for iy in range(first[t, 1], last[t, 1] + 1):
                    cy = origin[1] + (iy + 0.5) * size[1]
                    c0 = (iz * ny + iy) * nx
                    for ix in range(first[t, 0], last[t, 0] + 1):
                        if rep == 0:
                            cx = origin[0] + (ix + 0.5) * size[0]
                            keep[k] = may_hold(W, t, cx, cy, cz, hx, hy, hz)
                            indptr[c0 + ix + 1] += keep[k]
                        elif keep[k]:
                            indices[fill[c0 + ix]] = t
                            fill[c0 + ix] += 1
                        k += 1
    outside = np.empty(indices.shape[0], np.bool_)
    key = np.empty(indices.shape[0])
    for c in range(n_cells):
        ix, iy, iz = c % nx, (c // nx) % ny, c // (nx * ny)
        x = origin[0] + (ix + 0.5) * size[0]
        y = origin[1] + (iy + 0.5) * size[1]
        z = origin[2] + (iz + 0.5) * size[2]
        for r in range(indptr[c], indptr[c + 1]):
            t = indices[r]
            outside[r] = not holds(W, t, x, y, z)
            key[r] = -vol[t] if vol[t] == vol[t] else math.inf
        _sort_list(indices, outside, key, indptr[c], indptr[c + 1])
    return indptr, indices


@kernel
def _sort_list(items, first, then, start, stop):
    """Stable sort of items[start:stop] by (first, then) (insertion sort: the
    lists are short)."""
    for r in range(start + 1, stop):
        f, k, it = first[r], then[r], items[r]
        q = r - 1
        while q >= start and (first[q] > f or (first[q] == f and then[q] > k)):
            first[q + 1] = first[q]
            then[q + 1] = then[q]
            items[q + 1] = items[q]
            q -= 1
        first[q + 1] = f
        then[q + 1] = k
        items[q + 1] = it


@kernel
def barycentric_rows(W, tets, pts, out):
    """out[i] = the barycentric coordinates of pts[i] in tets[i], for the
    rows where tets[i] >= 0 (the others are left as they are)."""
    for i in range(tets.shape[0]):
        if tets[i] >= 0:
            out[i, 0], out[i, 1], out[i, 2], out[i, 3] = barycentric(
                W, tets[i], pts[i, 0], pts[i, 1], pts[i, 2])
    return out


# ----------------------------------------------------- method="grid" (stored lists)

@kernel
def scan_stored_lists(tables, cell_start, cell_tets, cells, pts, found, lo, best):
    """The game's chain, first half: each point's stored cell list
    (``cells[i]``, in list order). ``found[i]``: the first listed tetrahedron
    holding the point, with ``lo[i]`` its smallest coordinate; else -1 and
    ``best[i]``, the listed tetrahedron the point is least outside of
    (largest smallest coordinate; -1 when the list has no usable one).
    Points outside the widened box get found = best = -1 and lo = NaN."""
    W, frame, dims = tables.W, tables.frame, tables.dims
    T = W.shape[0]
    for i in range(pts.shape[0]):
        x, y, z = pts[i, 0], pts[i, 1], pts[i, 2]
        found[i] = -1
        best[i] = -1
        lo[i] = -math.inf
        if fine_cell(frame, dims, x, y, z) < 0:
            lo[i] = math.nan
            continue
        best_m = -math.inf
        c = cells[i]
        for r in range(cell_start[c], cell_start[c + 1]):
            t = cell_tets[r]
            m = -math.inf
            if t >= 0 and t < T:
                l0, l1, l2, l3 = barycentric(W, t, x, y, z)
                m = smallest(l0, l1, l2, l3)
                if m != m:
                    m = -math.inf
            if m >= -BARY_TOL:
                found[i] = t
                lo[i] = m
                break
            if m > best_m:
                best_m = m
                best[i] = t


@kernel
def walk_to(W, nbv, t, x, y, z, steps):
    """Visibility walk from tetrahedron t towards the point: each step
    crosses the face of the most negative coordinate (first slot on ties)
    that has a neighbour not just left. The tetrahedron reached holding the
    point, or -1 when no face is left or after ``steps`` steps."""
    prev = -1
    for _ in range(steps):
        l0, l1, l2, l3 = barycentric(W, t, x, y, z)
        if (l0 >= -BARY_TOL and l1 >= -BARY_TOL and l2 >= -BARY_TOL
                and l3 >= -BARY_TOL):
            return t
        j = -1
        key = math.inf
        for k in range(4):
            lk = l0 if k == 0 else l1 if k == 1 else l2 if k == 2 else l3
            u = nbv[t, k]
            if lk < -BARY_TOL and u >= 0 and u != prev and lk < key:
                key = lk
                j = k
        if j < 0:
            return -1
        prev = t
        t = nbv[t, j]
    return -1


@kernel
def smallest_holder(W, nbv, t, x, y, z, seen, stack):
    """The tie rule for a point near a face of tetrahedron t: the smallest
    index among the tetrahedra holding it that a flood over face neighbours
    (through holders only) reaches from t, at most about FLOOD_CAP of them.
    ``seen`` and ``stack`` are scratch of FLOOD_CAP + 4 entries."""
    seen[0] = t
    stack[0] = t
    n_seen = 1
    n_stack = 1
    while n_stack > 0 and n_seen < FLOOD_CAP:
        n_stack -= 1
        v = stack[n_stack]
        for k in range(4):
            u = nbv[v, k]
            if u < 0:
                continue
            known = False
            for s in range(n_seen):
                if seen[s] == u:
                    known = True
                    break
            if known or not holds(W, u, x, y, z):
                continue
            seen[n_seen] = u
            n_seen += 1
            stack[n_stack] = u
            n_stack += 1
    res = seen[0]
    for s in range(1, n_seen):
        res = min(res, seen[s])
    return res


@kernel
def finish_stored_lists(tables, pts, found, lo, start, steps, out):
    """The chain's second half: a point its list did not place walks from
    ``start[i]``; a walk that fails (a hole may block it) leaves the point to
    the fine grid's complete lists; then a point near a face gets the tie
    rule's smallest index. Points with NaN ``lo`` (outside the box) get -1."""
    W, nbv, frame, dims = tables.W, tables.nbv, tables.frame, tables.dims
    cell_start, cell_tets = tables.cell_start, tables.cell_tets
    seen = np.empty(FLOOD_CAP + 4, np.int64)
    stack = np.empty(FLOOD_CAP + 4, np.int64)
    for i in range(pts.shape[0]):
        x, y, z = pts[i, 0], pts[i, 1], pts[i, 2]
        t = found[i]
        m = lo[i]
        if m != m:
            out[i] = -1
            continue
        if t < 0:
            if start[i] >= 0:
                t = walk_to(W, nbv, start[i], x, y, z, steps)
            if t < 0:
                c = fine_cell(frame, dims, x, y, z)
                t = locate_in_cell(W, cell_start, cell_tets, c, x, y, z)
            if t >= 0:
                l0, l1, l2, l3 = barycentric(W, t, x, y, z)
                m = smallest(l0, l1, l2, l3)
        if t >= 0 and m < BARY_TOL:
            t = smallest_holder(W, nbv, t, x, y, z, seen, stack)
        out[i] = t
    return out
