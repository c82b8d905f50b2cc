"""The uniform grid: cell coordinates, cell boxes, and which cells each
tetrahedron meets.

Cell conventions (the spec's): cell (ix, iy, iz) has linear index
``(iz*ny + iy)*nx + ix``; a point's cell is ``floor((p - bbox_min) /
cell_size)``, clamped to the grid.
"""

from __future__ import annotations

import numpy as np

from ..tolerances import TOUCH_REL


def cell_coords(points, bbox_min, cell_size, dims) -> np.ndarray:
    """(N,3) points -> (N,3) integer cell coordinates, clamped to the grid
    (ix = floor((x - min.x) / cell.x), clamped to 0..nx-1) [seed]."""
    pts = np.asarray(points, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        raw = np.floor((pts - bbox_min) / cell_size)
    raw = np.nan_to_num(raw, nan=0.0, posinf=0.0, neginf=0.0)
    return np.clip(raw, 0, np.asarray(dims) - 1).astype(np.int64)


def linear_cell(coords, dims) -> np.ndarray:
    """Cell coordinates -> linear index (iz*ny + iy)*nx + ix [seed]."""
    c = np.asarray(coords, dtype=np.int64)
    nx, ny, _ = (int(d) for d in dims)
    return (c[..., 2] * ny + c[..., 1]) * nx + c[..., 0]


def cell_ijk(cells, dims) -> np.ndarray:
    """Linear cell indices -> (..., 3) int64 cell coordinates (ix, iy, iz)."""
    cells = np.asarray(cells, dtype=np.int64)
    nx, ny, _ = (int(d) for d in dims)
    return np.stack([cells % nx, (cells // nx) % ny, cells // (nx * ny)], axis=-1)


def cell_bounds(cells, bbox_min, cell_size, dims):
    """Linear cell indices -> (lo, hi) corners of each closed cell box."""
    lo = np.asarray(bbox_min, np.float64) + cell_ijk(cells, dims).astype(np.float64) * cell_size
    return lo, lo + cell_size


def expand_counts(counts):
    """For items with ``counts`` slots each: ``(item, offset)`` of every slot,
    item-major (item i's slots are offsets 0..counts[i]-1)."""
    counts = np.asarray(counts, np.int64)
    item = np.repeat(np.arange(len(counts)), counts)
    start = np.cumsum(counts) - counts
    return item, np.arange(len(item), dtype=np.int64) - start[item]


def expand_cell_ranges(lo, hi):
    """Every cell of each object's inclusive cell-coordinate box.

    ``lo``/``hi`` (T,3) int; an object with ``hi < lo`` on an axis has no
    cells. Returns ``(owner (N,), ijk (N,3))``: for each candidate, the
    object it belongs to and its cell coordinates, x fastest. The output is
    proportional to the candidates, never objects x cells.
    """
    lo = np.asarray(lo, dtype=np.int64)
    span = np.maximum(np.asarray(hi, dtype=np.int64) - lo + 1, 0)
    owner, local = expand_counts(span.prod(axis=1))
    sx, sy = span[owner, 0], span[owner, 1]
    ijk = np.stack([lo[owner, 0] + local % sx, lo[owner, 1] + (local // sx) % sy,
                    lo[owner, 2] + local // (sx * sy)], axis=1)
    return owner, ijk


def grid_membership(tet_points, bbox_min, cell_size, dims):
    """Every (cell, tet) pair whose closed cell box the tetrahedron meets.

    Returns ``(cells, tets)`` int64 arrays sorted by cell then tetrahedron.
    Touching counts: every interval of the separating-axis test is widened
    by ``TOUCH_REL * max(cell_size * dims)``, so a pair within round-off of
    touching is kept, never dropped. The work runs in the compiled kernel
    :func:`regn.geometry._cell_kernels.membership` (imported on first use), over
    each tetrahedron's candidate cells only.
    """
    pts = np.asarray(tet_points, dtype=np.float64)
    if len(pts) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    from ._cell_kernels import membership
    return membership(*_kernel_args(pts, bbox_min, cell_size, dims))


def grid_membership_split(tet_points, bbox_min, cell_size, dims, parts=2):
    """:func:`grid_membership` in ``parts`` pieces that can run at once (each
    piece's kernel releases the GIL): returns ``(pieces, finish)``,
    ``pieces`` a list of zero-argument callables and ``finish(results)`` the
    (cells, tets) of :func:`grid_membership` from their results, in order.
    None when there are no tetrahedra."""
    pts = np.asarray(tet_points, dtype=np.float64)
    n_t = len(pts)
    if n_t == 0:
        return None
    from ._cell_kernels import membership_pairs, sort_by_cell
    p, lo, size, d, n_cells, eps = _kernel_args(pts, bbox_min, cell_size, dims)
    cuts = [n_t * k // parts for k in range(parts + 1)]
    pieces = [lambda a=a, b=b: membership_pairs(p, a, b, lo, size, d, eps)
              for a, b in zip(cuts[:-1], cuts[1:])]

    def finish(results):
        cells = np.concatenate([r[0] for r in results])
        tets = np.concatenate([r[1] for r in results])
        return sort_by_cell(cells, tets, n_cells)
    return pieces, finish


def _kernel_args(pts, bbox_min, cell_size, dims):
    """The membership kernel's arguments (pts, bbox_min, cell_size, dims,
    n_cells, eps), each of the dtype and shape it compiles for."""
    dims_a = np.asarray(dims, dtype=np.int64)
    bbox_min = np.asarray(bbox_min, np.float64)
    cell_size = np.asarray(cell_size, np.float64)
    eps = TOUCH_REL * float(np.max(cell_size * dims_a))
    return (_readonly(pts.reshape(len(pts), 4, 3)), _readonly(bbox_min.reshape(3)),
            _readonly(cell_size.reshape(3)), dims_a.reshape(3), int(np.prod(dims_a)), eps)


def _readonly(a):
    """A read-only C-contiguous view of ``a`` (a copy only when not
    contiguous): the kernels then compile once, whether the caller's array
    was a mesh's read-only view or one of its own."""
    v = np.ascontiguousarray(a).view()
    v.flags.writeable = False
    return v
