"""Small vectorised geometry shared by the builder, the checks and the queries.

Tolerances live here, in one place. All functions take float64 arrays in
metres and work on whole batches.
"""

from __future__ import annotations

import numpy as np

#: Relative tolerance for "touching counts" tests (scaled by the map's size).
TOUCH_REL = 1e-9
#: A tetrahedron whose volume is below this fraction of its bounding cube
#: (edge length cubed) is treated as degenerate.
DEGENERATE_REL = 1e-12


def signed_volumes(tet_points: np.ndarray) -> np.ndarray:
    """(T,4,3) -> (T,) signed volume ((v1-v0) x (v2-v0)) . (v3-v0) / 6."""
    p = np.asarray(tet_points, dtype=np.float64)
    a = p[:, 1] - p[:, 0]
    b = p[:, 2] - p[:, 0]
    c = p[:, 3] - p[:, 0]
    return np.einsum("ij,ij->i", np.cross(a, b), c) / 6.0


def degenerate_threshold(tet_points: np.ndarray) -> np.ndarray:
    """(T,) volume below which each tetrahedron counts as degenerate."""
    p = np.asarray(tet_points, dtype=np.float64)
    size = (p.max(axis=1) - p.min(axis=1)).max(axis=1)
    return DEGENERATE_REL * size ** 3


def face_slot_vertices() -> np.ndarray:
    """(4,3): the vertex slots of face slot k, the face opposite vertex k."""
    return np.array([[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]])


# The 6 edges of a tetrahedron as vertex-slot pairs.
_TET_EDGES = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])


def tets_intersect_boxes(tet_points, box_lo, box_hi, eps=0.0) -> np.ndarray:
    """Exact closed tetrahedron/axis-aligned-box intersection, pair by pair.

    ``tet_points`` (P,4,3), ``box_lo``/``box_hi`` (P,3). Separating-axis test
    over the 3 box axes, the 4 face normals and the 18 edge x axis crosses;
    touching counts as intersecting, and ``eps`` widens every interval (so a
    pair within round-off of touching is kept, never dropped).
    """
    p = np.asarray(tet_points, dtype=np.float64)
    lo = np.asarray(box_lo, dtype=np.float64)
    hi = np.asarray(box_hi, dtype=np.float64)
    centre = (lo + hi) / 2
    half = (hi - lo) / 2
    q = p - centre[:, None, :]                     # box centred at the origin
    hit = np.all((q.min(axis=1) <= half + eps) & (q.max(axis=1) >= -half - eps), axis=1)
    edges = q[:, _TET_EDGES[:, 1]] - q[:, _TET_EDGES[:, 0]]          # (P,6,3)
    fs = face_slot_vertices()
    normals = np.cross(q[:, fs[:, 1]] - q[:, fs[:, 0]], q[:, fs[:, 2]] - q[:, fs[:, 0]])
    axes_list = [normals]
    for k in range(3):
        unit = np.zeros(3)
        unit[k] = 1.0
        axes_list.append(np.cross(edges, unit))
    axes = np.concatenate(axes_list, axis=1)                          # (P,22,3)
    proj = np.einsum("pad,pvd->pav", axes, q)                         # (P,22,4)
    radius = np.einsum("pad,pd->pa", np.abs(axes), half)              # (P,22)
    scale = np.linalg.norm(axes, axis=2) * eps
    separated = (proj.min(axis=2) > radius + scale) | (proj.max(axis=2) < -radius - scale)
    return hit & ~separated.any(axis=1)


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


def cell_bounds(cells, bbox_min, cell_size, dims):
    """Linear cell indices -> (lo, hi) corners of each closed cell box."""
    cells = np.asarray(cells, dtype=np.int64)
    nx, ny, _ = (int(d) for d in dims)
    ix = cells % nx
    iy = (cells // nx) % ny
    iz = cells // (nx * ny)
    ijk = np.stack([ix, iy, iz], axis=-1).astype(np.float64)
    lo = np.asarray(bbox_min, np.float64) + ijk * cell_size
    return lo, lo + cell_size


def grid_membership(tet_points, bbox_min, cell_size, dims, *, chunk=50_000):
    """Every (cell, tet) pair whose closed cell box the tetrahedron meets.

    Returns ``(cells, tets)`` int64 arrays sorted by cell then tetrahedron.
    Candidates come from each tetrahedron's bounding box (so the work is
    proportional to candidate pairs), then the exact separating-axis test
    decides.
    """
    p = np.asarray(tet_points, dtype=np.float64)
    dims = np.asarray(dims, dtype=np.int64)
    bbox_min = np.asarray(bbox_min, np.float64)
    cell_size = np.asarray(cell_size, np.float64)
    scale = float(np.max(cell_size * dims))
    eps = TOUCH_REL * scale
    lo = cell_coords(p.min(axis=1) - eps, bbox_min, cell_size, dims)
    hi = cell_coords(p.max(axis=1) + eps, bbox_min, cell_size, dims)
    span = hi - lo + 1
    per_tet = span.prod(axis=1)
    tet_ids = np.repeat(np.arange(len(p)), per_tet)
    # offsets of each candidate within its tet's box of cells
    start = np.repeat(np.cumsum(per_tet) - per_tet, per_tet)
    local = np.arange(len(tet_ids)) - start
    sx = span[tet_ids, 0]
    sy = span[tet_ids, 1]
    cx = lo[tet_ids, 0] + local % sx
    cy = lo[tet_ids, 1] + (local // sx) % sy
    cz = lo[tet_ids, 2] + local // (sx * sy)
    cand_cells = (cz * dims[1] + cy) * dims[0] + cx
    keep = np.zeros(len(tet_ids), dtype=bool)
    for s in range(0, len(tet_ids), chunk):
        sl = slice(s, s + chunk)
        blo, bhi = cell_bounds(cand_cells[sl], bbox_min, cell_size, dims)
        keep[sl] = tets_intersect_boxes(p[tet_ids[sl]], blo, bhi, eps)
    cells, tets = cand_cells[keep], tet_ids[keep]
    order = np.lexsort((tets, cells))
    return cells[order], tets[order]
