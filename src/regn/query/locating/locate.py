"""Point location: position -> grid cell -> the cell's listed tetrahedra ->
barycentric test, with an adjacency walk when the cell list misses.

Tolerance rule: a point belongs to tetrahedron t when every barycentric
coordinate is >= -BARY_TOL (dimensionless, so scale-free). A point strictly
inside (all >= +BARY_TOL) has exactly one such tetrahedron. A point on a
face, edge or vertex may be within tolerance of several; it is given the
*smallest tetrahedron index* among them (found by a flood over face
neighbours restricted to tetrahedra containing the point), so every caller
gets the same answer whichever tetrahedron was found first.

Both methods run compiled kernels (:mod:`regn.query.locating._locate_kernels`),
O(N) memory, never an N x T array; ``"grid"`` works ``chunk`` points at a
time. Two methods give the same answers:

* ``method="grid"`` follows the game's chain: ``mesh.cell_of`` -> the stored
  cell list (``mesh.grid_csr``) -> barycentric tests. When no listed
  tetrahedron contains the point (a hole, or an incomplete cell list) a
  visibility walk starts from the listed candidate the point is least
  outside of (largest smallest barycentric coordinate; the nearest
  tetrahedron centre when the cell lists none) and steps across the face of
  most negative coordinate, at most ``walk_steps`` times. A walk can be
  blocked by a hole between the candidate and the point, so a point the walk
  does not reach is decided by the fine grid's lists below: an incomplete
  stored list never turns a point of the volume into -1.
* ``method="auto"`` (default) uses only a finer private acceleration grid
  (about FINE_CELLS_PER_TET cells per tetrahedron, kept in the query scratch
  cache, built once per mesh from tetrahedron bounding boxes, less the
  tetrahedra that cannot hold a point of the cell, so every cell lists every
  tetrahedron that can hold one of its points; each lists first the
  tetrahedron holding its centre, then the rest by volume). A point it does
  not find is outside; the stored lists play no part. The stored REGN grid
  is coarse (the format's u16 reference limit
  forces ~100 tetrahedra per cell on a 15 000-tetrahedron map), which is why
  the fine grid exists: it makes locate several times faster than
  ``scipy.spatial.Delaunay.find_simplex``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...errors import QueryError
from ...tolerances import BOX_SLACK_REL, CELL_SLACK, SINGULAR_REL
from ..common import as_points, plain_xyz, scratch

#: What the location kernels read, built once per mesh (:func:`locate_tables`).
LocateTables = namedtuple("LocateTables", [
    "W",            # (T,12) float64: each tetrahedron's affine barycentric rows
                    # (NaN for a degenerate one: it never holds a point)
    "nbv",          # (T,4) int64: the neighbour across the face opposite vertex
                    # slot k, -1 at a wall
    "frame",        # (4,3) float64, rows: the header box's low and high corners,
                    # widened by BOX_SLACK_REL (points outside are outside the
                    # volume), the fine grid's origin and its cell size
    "dims",         # (3,) int64: the fine grid's cells per axis
    "cell_start",   # (C+1,) int32: fine cell c lists cell_tets[cell_start[c]:
    "cell_tets",    # cell_start[c+1]], the tetrahedron holding its centre first
])


def _kernels():
    from . import _locate_kernels
    return _locate_kernels


def _prep(mesh) -> dict:
    """Per-mesh set-up: affine rows and neighbours by vertex slot."""
    s = scratch(mesh)
    if "loc" in s:
        return s["loc"]
    P = np.asarray(mesh.tet_points, dtype=np.float64)          # (T,4,3)
    T = len(P)
    v0 = P[:, 0, :].copy()
    A = np.transpose(P[:, 1:, :] - v0[:, None, :], (0, 2, 1))  # columns = edges
    det = np.linalg.det(A) if T else np.zeros(0)
    scale = np.abs(P - v0[:, None, :]).max(axis=(1, 2)) if T else np.zeros(0)
    bad = ~(np.abs(det) > SINGULAR_REL * np.maximum(scale, 1e-300) ** 3)
    A_ok = A.copy()
    A_ok[bad] = np.eye(3)
    M = np.linalg.inv(A_ok) if T else np.zeros((0, 3, 3))
    M[bad] = np.nan                                             # never contains
    # vertex j -> neighbour across the face opposite it
    opp = np.asarray(mesh.opposite_slot)
    nbv = np.full((T, 4), -1, dtype=np.int64)
    rows = np.repeat(np.arange(T), 4)
    nbv[rows, opp.ravel()] = np.asarray(mesh.neighbors).ravel()
    W = np.concatenate([M, -np.einsum("tij,tj->ti", M, v0)[:, :, None]], axis=2)
    d = dict(W=np.ascontiguousarray(W.reshape(T, 12)), nbv=nbv, T=T)
    s["loc"] = d
    return d


def _stored_lists(mesh, d) -> dict:
    """``method="grid"``'s set-up: the stored cell lists, each sorted by
    volume (largest first: found sooner), and the tetrahedron centres."""
    if "indptr" not in d:
        T = d["T"]
        indptr, indices = mesh.grid_csr
        indptr = np.asarray(indptr, dtype=np.int64)
        indices = np.asarray(indices, dtype=np.int64)
        if len(indices):
            owner = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
            valid = (indices >= 0) & (indices < T)
            vol = np.zeros(len(indices))
            vol[valid] = np.asarray(mesh.tet_volumes)[indices[valid]]
            order = np.lexsort((-vol, owner))
            indices = np.where(valid, indices, -1)[order]
        P = np.asarray(mesh.tet_points, dtype=np.float64)
        d["centres"] = P.mean(axis=1) if T else np.zeros((0, 3))
        d["indices"] = indices
        d["indptr"] = indptr
    return d


#: fine grid cells per tetrahedron: finer cells list fewer candidates a point
#: must test (2.4 on the demo map at 8, 6.4 at 2), for more list entries
#: (48 per tetrahedron at 8; 4 to 32 measured, 8 and up alike in speed)
FINE_CELLS_PER_TET = 8
#: at most this many (cell, tetrahedron) pairs of bounding-box overlap per
#: tetrahedron, each tested once by the build (the grid is coarser if need be)
FINE_PAIRS_PER_TET = 192


def _fine(mesh, d) -> dict:
    """The private fine grid: AABB-overlap lists, less the tetrahedra that
    cannot hold a point of the cell, centre-holder first."""
    if "fine" in d:
        return d["fine"]
    T = d["T"]
    P = np.asarray(mesh.tet_points, np.float64)
    # The frame covers the header box and every tetrahedron (a corrupt header
    # box may be flat or miss them), with no axis thinner than 1e-3 of the widest.
    lo = np.asarray(mesh.bbox_min, np.float64)
    hi = np.asarray(mesh.bbox_max, np.float64)
    if T:
        finite = np.isfinite(P).all(axis=(1, 2))
        if finite.any():
            lo = np.minimum(lo, P[finite].min(axis=(0, 1)))
            hi = np.maximum(hi, P[finite].max(axis=(0, 1)))
    ext = hi - lo
    ext = np.maximum(ext, max(1e-3 * float(ext.max()), 1e-300))
    target = min(max(FINE_CELLS_PER_TET * T, 512), 4_000_000)
    k = (target / np.prod(ext)) ** (1 / 3)
    dims = np.clip(np.round(ext * k), 1, 1024).astype(np.int64)
    # Keep the build proportional to the mesh: coarsen while the tetrahedra's
    # bounding boxes would cover more than FINE_PAIRS_PER_TET cells each.
    for _ in range(40):
        cs = ext / dims
        with np.errstate(invalid="ignore"):
            a = np.floor((P.min(axis=1) - lo) / cs - CELL_SLACK)
            b = np.floor((P.max(axis=1) - lo) / cs + CELL_SLACK)
        ok = np.all(np.isfinite(a) & np.isfinite(b), axis=1)
        a = np.clip(np.nan_to_num(a), 0, dims - 1).astype(np.int64)
        b = np.clip(np.nan_to_num(b), 0, dims - 1).astype(np.int64)
        total = int(np.where(ok, (b - a + 1).prod(axis=1), 0).sum())
        if total <= FINE_PAIRS_PER_TET * max(T, 256) or dims.max() == 1:
            break
        dims = np.maximum(dims * 4 // 5, 1)
    # each cell is grown by a hair, and by the slack of the box test: a point
    # clamped into it from just outside the grid is still in the grown cell
    pad = CELL_SLACK * cs + (_box(mesh)[1] - np.asarray(mesh.bbox_max, np.float64))
    indptr, indices = _kernels().fine_lists(
        d["W"], np.asarray(mesh.tet_volumes, np.float64), a, np.where(ok[:, None], b, a - 1),
        lo, cs, dims, pad)
    # int32 lists: half the memory a scan reads (they hold < 2^31 entries)
    d["fine"] = f = dict(lo=lo, cs=cs, dims=dims, indptr=indptr.astype(np.int32),
                         indices=indices.astype(np.int32))
    return f


def _box(mesh):
    """The header box widened by a hair (points on its walls are inside)."""
    lo = np.asarray(mesh.bbox_min, np.float64)
    hi = np.asarray(mesh.bbox_max, np.float64)
    tol = BOX_SLACK_REL * (float(np.max(np.abs(np.concatenate([lo, hi])))) + 1.0)
    return lo - tol, hi + tol


def locate_tables(mesh) -> LocateTables:
    """The mesh's :class:`LocateTables` (built once, cached)."""
    d = _prep(mesh)
    if "tables" not in d:
        fine = _fine(mesh, d)
        lo, hi = _box(mesh)
        frame = np.stack([lo, hi, fine["lo"], fine["cs"]]).astype(np.float64)
        d["tables"] = LocateTables(d["W"], d["nbv"], frame, fine["dims"], fine["indptr"],
                                   fine["indices"])
    return d["tables"]


def locate_one(mesh, x, y, z) -> int:
    """locate's answer for one point (the fine-grid scan), called through the
    kernel's entry point (a single query costs little beyond its kernel)."""
    one = scratch(mesh).get("locate_one")
    if one is None:
        if mesh.n_tets == 0:
            return -1
        tables = locate_tables(mesh)
        from ..._jit import entry_point
        one = scratch(mesh)["locate_one"] = (
            entry_point(_kernels().locate_point, (tables, 0.0, 0.0, 0.0)), tables)
    return one[0](one[1], x, y, z)


def _centre_tree(mesh, d):
    if "tree" not in d:
        from scipy.spatial import cKDTree
        d["tree"] = cKDTree(d["centres"])
    return d["tree"]


def _locate_grid(mesh, tables, pts, out, chunk, walk_steps, workers):
    """``method="grid"`` into ``out``, ``chunk`` points at a time."""
    K = _kernels()
    d = _stored_lists(mesh, _prep(mesh))
    if walk_steps is None:
        walk_steps = int(8 * round(d["T"] ** (1 / 3))) + 64
    if d["T"]:
        _centre_tree(mesh, d)          # built once, before the threads share it

    def one_chunk(c0, c1, _):
        p = pts[c0:c1]
        k = len(p)
        cells = np.asarray(mesh.cell_of(p), dtype=np.int64)
        found = np.empty(k, np.int64)
        best = np.empty(k, np.int64)
        lo = np.empty(k)
        K.scan_stored_lists(tables, d["indptr"], d["indices"], cells, p, found, lo, best)
        # a point whose list offers no candidate starts its walk from the
        # tetrahedron whose centre is nearest
        none = np.flatnonzero((found < 0) & (best < 0) & ~np.isnan(lo))
        if len(none):
            best[none] = _centre_tree(mesh, d).query(p[none])[1]
        K.finish_stored_lists(tables, p, found, lo, best, walk_steps, out[c0:c1])

    from ..._jit import run_chunks
    run_chunks(one_chunk, len(pts), workers, chunk=chunk)


def locate(mesh, points, return_barycentric=False, *, method="auto",
           chunk=131072, walk_steps=None, workers=None):
    """(N,3) points -> (N,) int64 tetrahedron index, -1 outside the volume.

    With ``return_barycentric`` also (N,4) barycentric coordinates in the
    order of ``mesh.tets`` columns (NaN where -1). NaN/inf points -> -1.
    ``method`` is ``"auto"`` or ``"grid"`` (see the module docstring).
    ``workers`` threads share the points, ``chunk`` at a time (None: every
    core); the answers do not depend on it.
    """
    if method not in ("auto", "grid"):
        raise QueryError(f"locate method must be 'auto' or 'grid', not {method!r}")
    if method == "auto" and not return_barycentric:
        xyz = plain_xyz(points)
        if xyz is not None:                         # one point: skip the batch's set-up
            return np.array([locate_one(mesh, *xyz)])
    pts = np.ascontiguousarray(as_points(points))
    n = len(pts)
    out = np.full(n, -1, dtype=np.int64)
    if mesh.n_tets == 0 or n == 0:
        return (out, np.full((n, 4), np.nan)) if return_barycentric else out
    from ..._jit import run_chunks
    tables = locate_tables(mesh)
    K = _kernels()
    if method == "auto":
        run_chunks(lambda i, j, _: K.locate_points(tables, pts[i:j], out[i:j]), n, workers,
                   chunk=chunk)
    else:
        _locate_grid(mesh, tables, pts, out, chunk, walk_steps, workers)
    if not return_barycentric:
        return out
    bc = np.full((n, 4), np.nan)
    run_chunks(lambda i, j, _: K.barycentric_rows(tables.W, out[i:j], pts[i:j], bc[i:j]), n,
               workers, chunk=chunk)
    return out, bc
