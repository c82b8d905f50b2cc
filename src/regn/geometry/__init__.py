"""Small vectorised geometry shared by the builder, the checks and the queries.

Tolerances live here, in one place. All functions take float64 arrays in
metres and work on whole batches.
"""

from __future__ import annotations

import numpy as np

#: Use the compiled (numba) kernels when numba imports; False runs the numpy
#: implementations (same results; for tests and comparisons).
USE_NUMBA = True
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
    # (p.max(axis=1) - p.min(axis=1)).max(axis=1), without numpy's slow
    # reductions over short axes; the same values, NaN propagating alike
    ext = (np.maximum(np.maximum(p[:, 0], p[:, 1]), np.maximum(p[:, 2], p[:, 3]))
           - np.minimum(np.minimum(p[:, 0], p[:, 1]), np.minimum(p[:, 2], p[:, 3])))
    size = np.maximum(np.maximum(ext[:, 0], ext[:, 1]), ext[:, 2])
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


def expand_cell_ranges(lo, hi):
    """Every cell of each object's inclusive cell-coordinate box.

    ``lo``/``hi`` (T,3) int; an object with ``hi < lo`` on an axis has no
    cells. Returns ``(owner (N,), ijk (N,3))``: for each candidate, the
    object it belongs to and its cell coordinates, x fastest. The output is
    proportional to the candidates, never objects x cells.
    """
    lo = np.asarray(lo, dtype=np.int64)
    span = np.maximum(np.asarray(hi, dtype=np.int64) - lo + 1, 0)
    per = span.prod(axis=1)
    owner = np.repeat(np.arange(len(lo)), per)
    local = np.arange(len(owner)) - np.repeat(np.cumsum(per) - per, per)
    sx, sy = span[owner, 0], span[owner, 1]
    ijk = np.stack([lo[owner, 0] + local % sx, lo[owner, 1] + (local // sx) % sy,
                    lo[owner, 2] + local // (sx * sy)], axis=1)
    return owner, ijk


def grid_membership(tet_points, bbox_min, cell_size, dims, *, use_numba=None):
    """Every (cell, tet) pair whose closed cell box the tetrahedron meets.

    Returns ``(cells, tets)`` int64 arrays sorted by cell then tetrahedron.
    Candidates come from each tetrahedron's bounding box (so the work is
    proportional to candidate pairs); a candidate with a vertex in the box,
    or a box corner in the tetrahedron, is a sure hit, one its face planes
    separate a sure miss, and only the rest go through the full
    separating-axis test (:func:`tets_intersect_boxes`, same eps).

    The work runs in a compiled kernel (numba, imported on first use) that
    makes the same decisions with the same arithmetic, pair by pair, without
    allocating per pair; without numba (or with ``use_numba=False``) the
    numpy implementation runs instead. Both give the same pairs.
    """
    pts = np.asarray(tet_points, dtype=np.float64)
    n_t = len(pts)
    if n_t == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    dims_a = np.asarray(dims, dtype=np.int64)
    bbox_min = np.asarray(bbox_min, np.float64)
    cell_size = np.asarray(cell_size, np.float64)
    eps = TOUCH_REL * float(np.max(cell_size * dims_a))
    if use_numba is None:
        use_numba = USE_NUMBA
    kernel = _membership_kernel() if use_numba else None
    if kernel is None:
        # (pts.min(axis=1), but numpy reduces a short middle axis slowly; both
        # propagate NaN)
        pmin = np.minimum(np.minimum(pts[:, 0], pts[:, 1]), np.minimum(pts[:, 2], pts[:, 3]))
        pmax = np.maximum(np.maximum(pts[:, 0], pts[:, 1]), np.maximum(pts[:, 2], pts[:, 3]))
        lo = cell_coords(pmin - eps, bbox_min, cell_size, dims_a)
        hi = cell_coords(pmax + eps, bbox_min, cell_size, dims_a)
        return _grid_membership_numpy(pts, lo, hi, bbox_min, cell_size, dims_a, eps)
    return kernel(*_kernel_args(pts, bbox_min, cell_size, dims_a, eps))


def _kernel_args(pts, bbox_min, cell_size, dims_a, eps):
    """The compiled membership kernel's arguments (pts, bbox_min, cell_size,
    dims, n_cells, eps, box_ok). The kernel computes the same cell ranges per
    tetrahedron; it may drop numpy's zero products (exact) where no number
    can overflow or be NaN (``box_ok``)."""
    top = bbox_min + cell_size * dims_a
    box_ok = bool(np.all(np.abs(bbox_min) < 1e75) and np.all(np.abs(top) < 1e75)
                  and np.all(cell_size < 1e75) and np.isfinite(eps))
    return (np.ascontiguousarray(pts.reshape(len(pts), 4, 3)),
            np.ascontiguousarray(bbox_min.reshape(3)),
            np.ascontiguousarray(cell_size.reshape(3)), dims_a.reshape(3),
            int(np.prod(dims_a)), eps, box_ok)


def grid_membership_split(tet_points, bbox_min, cell_size, dims, parts=2):
    """:func:`grid_membership` by the compiled kernel in ``parts`` pieces that
    can run at once (each piece's kernel releases the GIL): returns
    ``(pieces, finish)``, ``pieces`` a list of zero-argument callables and
    ``finish(results)`` the (cells, tets) of :func:`grid_membership` from
    their results, in order. None when the kernel is not available or there
    are no tetrahedra."""
    pts = np.asarray(tet_points, dtype=np.float64)
    n_t = len(pts)
    if n_t == 0 or not USE_NUMBA or _membership_kernel() is None:
        return None
    from ._kernels import membership_pairs, sort_by_cell
    dims_a = np.asarray(dims, dtype=np.int64)
    bbox_min = np.asarray(bbox_min, np.float64)
    cell_size = np.asarray(cell_size, np.float64)
    eps = TOUCH_REL * float(np.max(cell_size * dims_a))
    p, lo, size, d, n_cells, eps, box_ok = _kernel_args(pts, bbox_min, cell_size,
                                                        dims_a, eps)
    cuts = [n_t * k // parts for k in range(parts + 1)]
    pieces = [lambda a=a, b=b: membership_pairs(p, a, b, lo, size, d, eps, box_ok)
              for a, b in zip(cuts[:-1], cuts[1:])]

    def finish(results):
        cells = np.concatenate([r[0] for r in results])
        tets = np.concatenate([r[1] for r in results])
        return sort_by_cell(cells, tets, n_cells)
    return pieces, finish


def _grid_membership_numpy(pts, lo, hi, bbox_min, cell_size, dims_a, eps):
    """:func:`grid_membership` in numpy (the reference; used without numba)."""
    tid, ijk = expand_cell_ranges(lo, hi)
    cand = linear_cell(ijk, dims_a)
    # a vertex inside the closed cell box: a sure hit
    sure = np.zeros(len(tid), dtype=bool)
    blo = bbox_min + ijk * cell_size
    bhi = blo + cell_size
    for k in range(4):
        p = pts[tid, k]
        sure |= np.all((p >= blo) & (p <= bhi), axis=1)
    rest = np.flatnonzero(~sure)
    keep = sure
    for s in range(0, len(rest), 50_000):
        r = rest[s:s + 50_000]
        # the four face-normal axes first (the same arithmetic as the full
        # separating-axis test): a pair they separate is a sure miss
        lo_r, hi_r = blo[r], bhi[r]
        centre = (lo_r + hi_r) / 2
        half = (hi_r - lo_r) / 2
        q = pts[tid[r]] - centre[:, None, :]
        fs = face_slot_vertices()
        axes = np.cross(q[:, fs[:, 1]] - q[:, fs[:, 0]], q[:, fs[:, 2]] - q[:, fs[:, 0]])
        proj = np.einsum("pad,pvd->pav", axes, q)
        rad = np.einsum("pad,pd->pa", np.abs(axes), half)
        sc = np.linalg.norm(axes, axis=2) * eps
        miss = ((proj.min(axis=2) > rad + sc) | (proj.max(axis=2) < -rad - sc)).any(axis=1)
        # a box corner inside the closed tetrahedron: a sure hit
        on_face = proj[:, np.arange(4), fs[:, 0]]                    # (P,4)
        opposite = proj[:, np.arange(4), np.arange(4)] - on_face     # (P,4)
        corner = np.einsum("pad,cd,pd->pac", axes, _CORNERS, half)   # (P,4,8)
        inside = ((corner - on_face[:, :, None]) * opposite[:, :, None] >= 0).all(axis=1)
        hit = inside.any(axis=1) & ~miss
        keep[r[hit]] = True
        todo = r[~miss & ~hit]
        keep[todo] = tets_intersect_boxes(pts[tid[todo]], blo[todo], bhi[todo], eps)
    cells, tets = cand[keep], tid[keep]
    order = np.lexsort((tets, cells))
    return cells[order], tets[order]


_NB = {}


def _membership_kernel():
    """The compiled grid-membership kernel (None when numba cannot be imported).

    Pair by pair it takes the numpy implementation's decisions with its
    arithmetic: the same products and sums in the same order (numpy's
    ``einsum`` adds a 3-term dot product as ``(x0*y0 + x2*y2) + x1*y1`` and
    ``norm`` as ``(x0^2 + x1^2) + x2^2``), so every comparison sees the same
    numbers. A NaN anywhere in a pair's arithmetic makes it behave as numpy's
    NaN-propagating ``min``/``max`` do (a NaN extreme separates nothing and
    meets no box). Loops run over the clipped cell ranges only, so the work is
    bounded by the candidate count and memory by the hits.
    """
    if "membership" in _NB:
        return _NB["membership"]
    try:
        from ._kernels import membership
    except Exception:          # numba missing or broken: numpy does the work
        membership = None
    _NB["membership"] = membership
    return membership


_CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
                    dtype=np.float64)
