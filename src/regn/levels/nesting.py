"""The nesting rule (``cavities="nested"``): which walled-in free regions of
a soup are air, whichever way its faces point.

Crossing one closed shell turns air into solid and solid into air; crossing
two (a thick wall, a crate standing on the floor) changes nothing. So the
free components of the voxel grid are linked to their neighbours across the
solid: from points of each walled-in component, a segment runs along each
axis (both ways) to the first free voxel of another component, and the
parity of the input triangles it crosses is that link's (a majority of the
segments between the same two components; a tie leaves them unlinked). Only
triangles between two neighbours count, so an open sheet elsewhere (a
room's missing wall, terrain) does not disturb the count, and a face's
direction is never read.

The level's main space (its largest free component inside its extent) is
air; air-ness spreads along the links from it (an odd link flips it), then
from every other component reaching the box's boundary (air too). A
walled-in component no link reaches is solid.

Two closed solids that overlap nest like a hollow in one: their overlap lies
inside two shells. The same segments tell them apart by the faces'
direction, read only here and only between neighbours: the winding number
changes by +1 or -1 at each crossing, so on the way from air into a hollow
it goes up and back down (0 in all), into an overlap up twice (2). A
component the parity calls air is solid when its winding number differs by
2 or more from the air it was reached from (a hollow whose faces point out
of it reads 2 too and is solid: the safe side).
"""

from __future__ import annotations

from collections import deque

import numpy as np

#: Where in its voxel a segment starts and ends (fractions of the voxel off
#: its centre): off the lattice, so an axis segment misses the edges and
#: diagonals of axis-aligned walls and of fanned quads.
OFFSET = np.array([0.137, -0.219, 0.071])


def deduplicated(soup):
    """``(verts, tris)`` of the soup welded, without degenerate triangles and
    with one copy of each triangle (a copy would cancel its crossing)."""
    from .repairs import _unique_rows, _welded
    verts = np.asarray(soup.verts, np.float64)
    tris, _ = _welded(verts, np.asarray(soup.tris, np.int64))
    srt = np.sort(tris, axis=1)
    tris = tris[(srt[:, 0] != srt[:, 1]) & (srt[:, 1] != srt[:, 2])]
    if len(tris):
        first, _ = _unique_rows(np.sort(tris, axis=1))
        tris = tris[np.sort(first)]
    return np.ascontiguousarray(verts), np.ascontiguousarray(tris, np.int64)


#: Cells per axis of the grid listing the triangles (at most), and the most
#: (cell, triangle) entries it may hold before it coarsens.
CELLS = 128
MAX_ENTRIES = 30_000_000


def triangle_cells(verts, tris, grid):
    """``(lo, h, dims, starts, items)``: a uniform grid of cells over the
    voxel grid's box listing the triangles whose bounding box meets each
    (a triangle outside the box in the nearest cells)."""
    from ._parity_kernels import cell_ranges, fill_cells
    dims = np.minimum(np.asarray(grid.shape), CELLS).astype(np.int64)
    while True:
        h = (grid.hi - grid.lo) / dims
        cell_lo, cell_hi = cell_ranges(verts, tris, grid.lo.astype(np.float64), h, dims)
        entries = np.prod(cell_hi - cell_lo + 1, axis=1).sum()
        if entries <= MAX_ENTRIES or dims.max() == 1:
            break
        dims = np.maximum(dims // 2, 1)
    starts, items = fill_cells(cell_lo, cell_hi, dims)
    return grid.lo.astype(np.float64), h, dims, starts, items


def _segments(labels, samples, comps):
    """``(comp, other, start ijk, axis, end index)`` of the segments from each
    sample voxel of ``comps`` along the six axis directions to the first free
    voxel of another component (none when the line leaves the grid first)."""
    rows = []
    for c, ijk in zip(comps, samples):
        for p in ijk:
            for ax in range(3):
                line = labels[tuple(p[d] if d != ax else slice(None) for d in range(3))]
                other = np.flatnonzero((line != 0) & (line != c))
                for sign in (1, -1):
                    ahead = other[other > p[ax]] if sign > 0 else other[other < p[ax]]
                    if len(ahead):
                        end = int(ahead[0] if sign > 0 else ahead[-1])
                        rows.append((c, int(line[end]), p, ax, end))
    return rows


def _links(labels, samples, comps, soup, grid):
    """``{(a, b): (odd, step)}`` with ``a < b``: the majority parity of the
    crossings between neighbouring components (ties left out), and the
    most common change of the winding number from ``a`` to ``b`` among the
    segments of that parity."""
    from ._parity_kernels import segment_crossings
    rows = _segments(labels, samples, comps)
    if not rows:
        return {}
    starts = grid.lo + (np.array([r[2] for r in rows], np.float64) + 0.5 + OFFSET) * grid.h
    axes = np.array([r[3] for r in rows], np.int64)
    ends = grid.lo[axes] + (np.array([r[4] for r in rows], np.float64) + 0.5
                            + OFFSET[axes]) * grid.h[axes]
    verts, tris = deduplicated(soup)
    cells = triangle_cells(verts, tris, grid)
    steps = segment_crossings(verts, tris, np.ascontiguousarray(starts), axes, ends, *cells)
    seen = {}
    for (a, b, *_), step in zip(rows, steps.tolist()):
        seen.setdefault((min(a, b), max(a, b)), []).append(step if a < b else -step)
    links = {}
    for key, got in seen.items():
        n_odd = sum(x % 2 for x in got)
        if 2 * n_odd == len(got):
            continue
        odd = 2 * n_odd > len(got)
        same = [x for x in got if x % 2 == odd]
        links[key] = (odd, max(set(same), key=same.count))
    return links


def nested_air(labels, samples, comps, main, edge, soup, grid, stats):
    """(len(comps),) bool: the walled-in components ``comps`` (``samples``:
    their sample voxels, (len(comps), k, 3)) that are air by the module's
    rule; ``main`` the main space's label, ``edge`` (n + 1,) bool the
    components reaching the box's boundary."""
    links = _links(labels, samples, comps, soup, grid)
    nbrs = {}
    for (a, b), (odd, step) in links.items():
        nbrs.setdefault(a, []).append((b, odd, step))
        nbrs.setdefault(b, []).append((a, odd, -step))
    # per component: air or not, winding (relative to its root), and the
    # winding of the nearest air component on the way from the root
    air, wind, anchor = {}, {}, {}
    overlaps = 0
    for root in [main] + np.flatnonzero(edge).tolist():
        if root in air:
            continue
        air[root], wind[root], anchor[root] = True, 0, 0
        queue = deque([root])
        while queue:
            a = queue.popleft()
            for b, odd, step in nbrs.get(a, ()):
                if b in air:
                    continue
                air[b], wind[b] = air[a] != odd, wind[a] + step
                if air[b] and abs(wind[b] - anchor[a]) >= 2:
                    # inside two more shells facing the same way than the air
                    # it was reached from: two solids overlapping, not a hollow
                    air[b] = False
                    overlaps += 1
                anchor[b] = wind[b] if air[b] else anchor[a]
                queue.append(b)
    stats["cavities_linked"] = sum(1 for c in comps if c in air)
    stats["cavities_overlaps"] = overlaps
    return np.array([air.get(int(c), False) for c in comps], bool)
