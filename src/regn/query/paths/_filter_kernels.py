"""Compiled kernels of the temporary blockers (:mod:`regn.query.paths.filters`).

:func:`tets_touching` answers "which tetrahedra does this sphere or box
touch" without looking at the whole mesh: the fine location grid
(:class:`regn.query.locating.locate.LocateTables`) lists every tetrahedron in each
cell its bounding box reaches, so the tetrahedra listed in the cells of the
shape's bounding box are the only candidates, and each is decided once by
the exact tests of :mod:`regn.geometry._closest_kernels` and
:mod:`regn.geometry._cell_kernels`.
"""

from __future__ import annotations

import numpy as np

from ..._jit import kernel
from ...geometry._closest_kernels import tet_meets_ball
from ...geometry._cell_kernels import tet_meets_box
from ..locating._locate_kernels import GRID_CELL, GRID_LO

#: shape kinds
BALL, BOX = 0, 1


@kernel
def _cell_range(lo, hi, origin, size, n):
    """The fine cells [a, b] along one axis that the interval lo..hi reaches
    (clipped to the grid; b < a when it misses the grid)."""
    a = np.floor((lo - origin) / size)
    b = np.floor((hi - origin) / size)
    if b < 0.0 or a > float(n - 1):
        return 0, -1
    return int(max(a, 0.0)), int(min(b, float(n - 1)))


@kernel(inline=True)
def _box_reaches(pts, t, lo, hi):
    """Does tetrahedron t's bounding box meet the box lo..hi?"""
    for e in range(3):
        mn = min(min(pts[t, 0, e], pts[t, 1, e]), min(pts[t, 2, e], pts[t, 3, e]))
        mx = max(max(pts[t, 0, e], pts[t, 1, e]), max(pts[t, 2, e], pts[t, 3, e]))
        if mn > hi[e] or mx < lo[e]:
            return False
    return True


@kernel
def tets_touching(cell_start, cell_tets, frame, dims, pts, kind, shape, seen, found):
    """The tetrahedra a ball (``kind`` BALL, ``shape`` = centre, radius) or
    box (BOX, ``shape`` = low corner, high corner) touches, sorted into
    ``found[:n]`` ((T,) int64); returns n. ``seen``: (T,) bool scratch, all
    False on entry and on return. (Writing into the caller's buffer, rather
    than returning a new array, saves the ~6 us numba spends boxing one.)"""
    if kind == BALL:
        r = shape[3]
        lo = (shape[0] - r, shape[1] - r, shape[2] - r)
        hi = (shape[0] + r, shape[1] + r, shape[2] + r)
    else:
        lo = (shape[0], shape[1], shape[2])
        hi = (shape[3], shape[4], shape[5])
    ax, bx = _cell_range(lo[0], hi[0], frame[GRID_LO, 0], frame[GRID_CELL, 0], dims[0])
    ay, by = _cell_range(lo[1], hi[1], frame[GRID_LO, 1], frame[GRID_CELL, 1], dims[1])
    az, bz = _cell_range(lo[2], hi[2], frame[GRID_LO, 2], frame[GRID_CELL, 2], dims[2])
    if bx < ax or by < ay or bz < az:
        return 0
    n = 0                                # a row of x cells is consecutive: row + ax..bx
    for iz in range(az, bz + 1):
        for iy in range(ay, by + 1):
            row = (iz * dims[1] + iy) * dims[0]
            for k in range(cell_start[row + ax], cell_start[row + bx + 1]):
                t = cell_tets[k]
                if seen[t]:
                    continue
                seen[t] = True
                # the tetrahedron's bounding box misses the shape's: no test
                if not _box_reaches(pts, t, lo, hi):
                    continue
                if kind == BALL:
                    meets = tet_meets_ball(pts, t, shape[0], shape[1], shape[2], shape[3])
                else:
                    meets = tet_meets_box(pts, t, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2])
                if meets:
                    found[n] = t
                    n += 1
    for iz in range(az, bz + 1):         # leave the scratch as it was
        for iy in range(ay, by + 1):
            row = (iz * dims[1] + iy) * dims[0]
            for k in range(cell_start[row + ax], cell_start[row + bx + 1]):
                seen[cell_tets[k]] = False
    found[:n].sort()
    return n
