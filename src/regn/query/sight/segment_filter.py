"""The segment filter of line_of_sight and raycast_many.

Most segments of a batch are far from every wall, or cross one well inside
it; walking them tetrahedron by tetrahedron (:mod:`regn.query.sight.raycast`) is
exact but slow (a random segment of the demo map crosses ~26 tetrahedra).
The filter decides such segments from the walls alone and leaves the rest
to the walk, so every answer is the walk's:

* a segment that crosses a wall triangle with both ends at least ``margin``
  on either side of its plane, at a point at least ``margin`` inside its
  edges, leaves the volume there (or starts outside it): never clear;
* a segment that comes nowhere within ``margin`` of a wall lies entirely
  inside the volume or entirely outside it: clear exactly when its start is
  inside;
* any other segment (one that grazes, touches or ends near a wall, or has
  an end outside the filter's box) is walked.

``margin`` is :data:`regn.tolerances.SIGHT_MARGIN_REL` times the map's
scale, a thousand times the distance the walk's own tolerance
(``BARY_TOL`` of a tetrahedron) can reach, so no rounding of either side can
turn one answer into the other. The argument needs a sound mesh: no
degenerate tetrahedron, and every neighbour link returned, across the same
three vertices, to a tetrahedron on the other side of that face. A mesh
failing this (a corrupt file) gets no filter: every segment is walked.

The walls (the faces without a neighbour, as the walk sees them) lying in a
plane of the header box are left out: a segment with both ends ``margin``
inside the box stays that far from them, and the filter takes no other.

To find the walls near a segment quickly, a grid of cubic cells over the
box lists for each cell the triangles within ``margin`` of it, and stores
the distance from its centre to the nearest wall, signed by whether the
centre is inside the volume (:class:`SightGrid`). The kernels
(:mod:`regn.query.sight._segment_filter_kernels`) jump across the wall-free balls these
distances give and test the listed triangles only where the balls are
small.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...geometry import FACE_SLOTS
from ...tolerances import SIGHT_MARGIN_REL
from ..common import scratch

#: The filter's tables, as its kernels read them (:func:`sight_grid`).
SightGrid = namedtuple("SightGrid", [
    "tri",         # (K,16) float64 per wall: unit normal, plane offset, then for
                   # each edge its in-plane inward unit normal and offset (NaN for
                   # a triangle too thin to trust its normal: never decided)
    "cell_start",  # (C+1,) int32: cell c lists cell_tris[cell_start[c]:cell_start[c+1]],
    "cell_tris",   # the walls within margin of it (an empty grid: no filter)
    "clear",       # (C,) float32, in cells: the distance from the cell's centre to
                   # the nearest wall, less margin, positive when the centre is
                   # inside the volume, negative outside, 0 when unknown
    "frame",       # (4,3) float64: grid corner; (cell size, 1 / cell size, margin);
                   # the box a segment's ends must lie in (header box less margin)
    "dims",        # (3,) int64 cells per axis
])

#: grid cells per wall triangle (the grid has between 4 096 and 2^21 cells);
#: 64 measured best of 16-256 on the demo map
CELLS_PER_WALL = 128


def _kernels():
    from . import _segment_filter_kernels
    return _segment_filter_kernels


def sight_grid(mesh) -> SightGrid:
    """The mesh's :class:`SightGrid` (built on first use, cached)."""
    s = scratch(mesh)
    if "sight" not in s:
        s["sight"] = _build(mesh)
    return s["sight"]


def _no_filter() -> SightGrid:
    return SightGrid(np.zeros((0, 16)), np.zeros(1, np.int32), np.zeros(0, np.int32),
                     np.zeros(0, np.float32), np.zeros((4, 3)), np.ones(3, np.int64))


def _build(mesh) -> SightGrid:
    from ..locating.locate import _prep
    d = _prep(mesh)
    P = np.asarray(mesh.tet_points, dtype=np.float64)
    lo = np.asarray(mesh.bbox_min, np.float64)
    hi = np.asarray(mesh.bbox_max, np.float64)
    scale = float(np.max(np.abs(np.concatenate([lo, hi]))) + np.max(hi - lo))
    if not (d["T"] and np.isfinite(scale) and _sound(mesh, d, P)):
        return _no_filter()
    margin = SIGHT_MARGIN_REL * scale
    box_lo, box_hi = lo + margin, hi - margin
    if not np.all(box_lo < box_hi):
        return _no_filter()
    walls = _walls(P, d["nbv"], lo, hi)
    size, dims = _cells(hi - lo, len(walls))
    K = _kernels()
    from ...geometry._cell_kernels import triangle_cells
    cells, tris = triangle_cells(walls, lo, size, dims, margin)
    order = np.argsort(cells, kind="stable")
    n_cells = int(np.prod(dims))
    cell_start = np.zeros(n_cells + 1, np.int64)
    np.cumsum(np.bincount(cells, minlength=n_cells), out=cell_start[1:])
    frame = np.array([lo, [size, 1.0 / size, margin], box_lo, box_hi], np.float64)
    clear = _clearance(mesh, walls, frame, dims)
    # int32 keeps the grid in a core's cache (the lists hold < 2^31 entries)
    return SightGrid(K.triangle_rows(walls), cell_start.astype(np.int32),
                     tris[order].astype(np.int32), clear, frame, dims)


def _sound(mesh, d, P) -> bool:
    """No degenerate tetrahedron, finite vertices, and every neighbour link
    (t, slot k) -> u in range, returned by u across the same three vertices,
    with u's opposite vertex on the far side of that face (its coordinate k
    in t negative)."""
    W, nbv = d["W"], d["nbv"]
    if not (np.all(np.isfinite(W)) and np.all(np.isfinite(P))):
        return False
    T = len(nbv)
    t, k = np.nonzero(nbv >= 0)
    u = nbv[t, k]
    if np.any((u >= T) | (u == t)):
        return False
    tets = np.asarray(mesh.tets, np.int64)
    keys = np.sort(tets[:, FACE_SLOTS], axis=2)            # (T,4,3) face k's vertices
    back = np.full(len(t), -1)
    for j in range(4):
        same = (nbv[u, j] == t) & np.all(keys[u, j] == keys[t, k], axis=1)
        back = np.where(same & (back < 0), j, back)
    if np.any(back < 0):
        return False
    apex = P[u, back]                                       # u's vertex off the face
    Wt = W[t].reshape(-1, 3, 4)
    bary = np.einsum("nij,nj->ni", Wt[:, :, :3], apex) + Wt[:, :, 3]
    lk = np.where(k == 0, 1.0 - bary.sum(axis=1), bary[np.arange(len(t)), np.maximum(k - 1, 0)])
    return bool(np.all(lk < 0))


def _walls(P, nbv, lo, hi) -> np.ndarray:
    """(K,3,3) the faces the walk treats as walls (no neighbour), less those
    lying in a plane of the header box."""
    t, k = np.nonzero(nbv < 0)
    tri = P[t[:, None], FACE_SLOTS[k]]                      # (K,3,3)
    on_box = np.zeros(len(tri), bool)
    for axis in range(3):
        c = tri[:, :, axis]
        on_box |= np.all(c == lo[axis], axis=1) | np.all(c == hi[axis], axis=1)
    return np.ascontiguousarray(tri[~on_box])


def _cells(ext, n_walls):
    """(cell size, dims) of the grid: cubic cells, about CELLS_PER_WALL per
    wall, between 4 096 and 2^21 of them, at most 1024 a side."""
    ext = np.maximum(ext, 1e-3 * float(ext.max()))
    target = min(max(CELLS_PER_WALL * n_walls, 4096), 1 << 21)
    size = max(float(np.prod(ext) / target) ** (1 / 3), float(ext.max()) / 1024)
    dims = np.clip(np.ceil(ext / size), 1, 1024).astype(np.int64)
    return size, dims


def _clearance(mesh, walls, frame, dims) -> np.ndarray:
    """SightGrid.clear: each cell centre's distance to the nearest wall (the
    wall search of :mod:`regn.query.walls.nearest`), less margin, in cells, signed
    by locate; 0 for a centre within margin of a wall or outside the box a
    segment's ends must lie in (the box's own walls are not in ``walls``)."""
    from ..locating.locate import locate
    from ..walls.nearest import _build_bvh, _kernels as nearest_kernels
    nx, ny, nz = (int(n) for n in dims)
    size, margin = frame[1, 0], frame[1, 2]
    axes = [frame[0, d] + (np.arange(n) + 0.5) * size for d, n in enumerate((nx, ny, nz))]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    centres = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    dist = np.full(len(centres), np.inf)
    bvh = _build_bvh(walls)
    if bvh is not None:
        from ..._jit import run_chunks
        near_x, near_i = np.empty((len(centres), 3)), np.empty(len(centres), np.int64)
        search = nearest_kernels().nearest_walls
        run_chunks(lambda i, j, _: search(bvh, centres[i:j], near_x[i:j], dist[i:j],
                                          near_i[i:j]), len(centres))
    inner = np.all((centres >= frame[2]) & (centres <= frame[3]), axis=1) & (dist > margin)
    side = np.zeros(len(centres))
    side[inner] = np.where(locate(mesh, centres[inner]) >= 0, 1.0, -1.0)
    clear = side * np.minimum(dist - margin, 1e30) / size
    return clear.astype(np.float32)
