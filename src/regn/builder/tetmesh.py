"""``regn.build``: everything the spec's builder rules say, from a tet mesh.

Given vertices and tetrahedra, compute faces (slot k opposite vertex k,
numbered by first appearance), orientation, adjacency, planes, centres and
radii, portal costs, and the grid (every tetrahedron that meets each closed
cell box). The same input always gives the same bytes.
"""

from __future__ import annotations

import numpy as np

from ..errors import BuildError, LimitError
from ..format import pof0
from ..format.layout import (BIG, NO_SLOT, NO_TET, PORTAL_PAIRS, U16_MAX,
                             dtype_for)
from ..geometry import (degenerate_threshold, face_slot_vertices, grid_membership,
                        signed_volumes)
from ..mesh import Mesh

#: Grid defaults, the disc's conventions: cells of about 10 km, at most 10 per axis.
DEFAULT_CELL = 10_000.0
MAX_DIMS = 10
_F32_ONE_BITS = 0x3F800000


def _limit(count, what, hint):
    if count > U16_MAX:
        raise LimitError(f"the mesh needs {count} {what}, more than the format's "
                         f"u16 limit of {U16_MAX}: {hint}")


def default_dims(extent) -> tuple:
    """About 10 km cells, 1..10 per axis."""
    return tuple(int(np.clip(np.ceil(e / DEFAULT_CELL - 1e-9), 1, MAX_DIMS))
                 for e in extent)


def grid_frame(lo, hi, dims):
    """A header box and cell size with ``extent == max - min == cell * dims``
    exactly in float32, containing [lo, hi].

    Kept as given when the arithmetic is already exact (the disc's boxes,
    e.g. +-50 000 with 10 cells); otherwise min is rounded down and the cell
    size up to a power-of-two quantum, which keeps every number an exact
    float32 multiple of it.
    """
    lo = np.asarray(lo, np.float64)
    hi = np.asarray(hi, np.float64)
    d = np.asarray(dims, np.float64)
    lo32 = lo.astype(np.float32).astype(np.float64)
    hi32 = hi.astype(np.float32).astype(np.float64)
    cell32 = ((hi32 - lo32) / d).astype(np.float32).astype(np.float64)
    ext32 = (hi32 - lo32).astype(np.float32).astype(np.float64)
    if (np.all(lo32 <= lo) and np.all(hi32 >= hi) and np.all(hi32 - lo32 == ext32)
            and np.all(cell32 * d == ext32) and np.all(cell32 > 0)):
        return lo32, hi32, cell32
    span = np.maximum(hi - lo, 1e-3)
    mag = np.maximum(np.maximum(np.abs(lo), np.abs(hi)), span)
    q = 2.0 ** np.ceil(np.log2(mag / 2.0 ** 20))
    new_lo = np.floor(lo / q) * q
    cell = np.ceil((hi - new_lo) / d / q) * q
    cell = np.maximum(cell, q)
    new_hi = new_lo + cell * d
    return new_lo, new_hi, cell


def build(vertices, tets, bbox=None, dims=None, *, byte_order=BIG,
          pof0_dialect=pof0.DIALECT_3) -> Mesh:
    """A REGN mesh from a tetrahedral mesh.

    Parameters
    ----------
    vertices : (V,3) float — positions in metres (stored as float32).
    tets : (T,4) int — vertex indices; any orientation (inverted ones are
        flipped by swapping their last two vertices).
    bbox : ((3,), (3,)), optional — the play volume's box; default the
        vertices' bounds. It must contain every vertex.
    dims : (nx, ny, nz), optional — grid cells per axis; default about 10 km
        cells, at most 10 per axis.

    Raises :class:`BuildError` for a degenerate tetrahedron, a face shared by
    more than two tetrahedra, bad indices or non-finite positions, and
    :class:`LimitError` for a count past the format's u16 limit.
    """
    verts = np.asarray(vertices, dtype=np.float64)
    tets = np.asarray(tets)
    if verts.ndim != 2 or verts.shape[1] != 3:
        raise BuildError(f"vertices must be (V,3), got shape {verts.shape}")
    if tets.ndim != 2 or tets.shape[1] != 4:
        raise BuildError(f"tetrahedra must be (T,4), got shape {tets.shape}")
    if not np.issubdtype(tets.dtype, np.integer):
        if len(tets) and not np.all(np.equal(np.mod(tets, 1), 0)):
            raise BuildError("tetrahedron vertex indices must be integers")
    tets = tets.astype(np.int64)
    if not np.isfinite(verts).all():
        raise BuildError("vertices contain NaN or infinite coordinates")
    _limit(len(verts), "vertices", "use fewer sample points")
    _limit(len(tets), "tetrahedra", "use a coarser mesh")
    if len(tets) and (tets.min() < 0 or tets.max() >= len(verts)):
        raise BuildError(f"tetrahedron vertex indices must be in 0..{len(verts) - 1}")
    if len(tets) and np.any(np.sort(tets, axis=1)[:, 1:] == np.sort(tets, axis=1)[:, :-1]):
        t = int(np.argmax(np.any(np.diff(np.sort(tets, axis=1), axis=1) == 0, axis=1)))
        raise BuildError(f"tetrahedron {t} repeats a vertex: {tets[t].tolist()}")

    v32 = verts.astype(np.float32)
    v = v32.astype(np.float64)                  # every derived value uses stored positions

    # --- orientation -----------------------------------------------------------
    vol = signed_volumes(v[tets])
    tiny = np.abs(vol) <= degenerate_threshold(v[tets])
    if tiny.any():
        t = int(np.argmax(tiny))
        raise BuildError(f"tetrahedron {t} {tets[t].tolist()} is degenerate (volume "
                         f"{vol[t]:.3g} m^3)")
    flip = vol < 0
    tets = tets.copy()
    tets[flip, 2], tets[flip, 3] = tets[flip, 3].copy(), tets[flip, 2].copy()
    n_t = len(tets)
    pts = v[tets]                                # (T,4,3)

    # --- faces: slot k opposite vertex k, numbered by first appearance ---------
    fs = face_slot_vertices()
    tri = np.sort(tets[:, fs], axis=2).reshape(-1, 3)       # (4T,3) in tet/slot order
    key = (tri[:, 0] * (1 << 16) + tri[:, 1]) * (1 << 16) + tri[:, 2]
    uniq, first, inverse, count = np.unique(key, return_index=True, return_inverse=True,
                                            return_counts=True)
    if np.any(count > 2):
        f = int(np.argmax(count > 2))
        raise BuildError(f"non-manifold face {tri[first[f]].tolist()}: shared by "
                         f"{int(count[f])} tetrahedra (at most 2)")
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
    face_of = rank[inverse.ravel()]                          # (4T,) face index
    n_f = len(uniq)
    _limit(n_f, "faces", "use a coarser mesh")
    tet_faces = face_of.reshape(n_t, 4)

    # The two listings of each face, in order of appearance: A first, B second.
    order = np.argsort(face_of, kind="stable")
    pos_sorted = order
    f_sorted = face_of[order]
    starts = np.searchsorted(f_sorted, np.arange(n_f))
    pos_a = pos_sorted[starts]
    has_b = np.bincount(face_of, minlength=n_f) == 2
    pos_b = np.full(n_f, -1, dtype=np.int64)
    pos_b[has_b] = pos_sorted[starts[has_b] + 1]
    tet_a, slot_a = pos_a // 4, pos_a % 4

    # --- planes: normal out of A, d with n.p + d = 0, p = centroid ---------------
    face_pts = pts[tet_a][np.arange(n_f)[:, None], fs[slot_a]]       # (F,3,3)
    centroid = face_pts.mean(axis=1)
    normal = np.cross(face_pts[:, 1] - face_pts[:, 0], face_pts[:, 2] - face_pts[:, 0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    inward = pts[tet_a, slot_a] - centroid
    normal[np.einsum("ij,ij->i", normal, inward) > 0] *= -1
    d = -np.einsum("ij,ij->i", normal, centroid)

    faces = np.zeros(n_f, dtype=dtype_for("faces", byte_order))
    faces["normal"] = normal
    faces["d"] = d
    faces["point"] = centroid
    faces["w"] = _F32_ONE_BITS
    faces["own"] = np.arange(n_f)
    faces["tet_a"] = tet_a
    faces["slot_a"] = slot_a
    faces["tet_b"] = np.where(has_b, pos_b // 4, NO_TET)
    faces["slot_b"] = np.where(has_b, pos_b % 4, NO_SLOT)

    # --- tetrahedra: centre, radius, portal costs ------------------------------
    centre = pts.mean(axis=1)
    radius = np.linalg.norm(pts - centre[:, None, :], axis=2).max(axis=1)
    fc = centroid[tet_faces]                                 # (T,4,3)
    boundary = ~has_b[tet_faces]                             # (T,4)
    pairs = np.array(PORTAL_PAIRS)
    cost = np.linalg.norm(fc[:, pairs[:, 0]] - fc[:, pairs[:, 1]], axis=2)   # (T,6)
    # stored as float32 rounded *up*: every cost is then at least the centroid
    # distance a reader computes, so the Euclidean search bound is admissible
    # and a path's centroid polyline is never longer than its cost
    cost32 = cost.astype(np.float32)
    cost = np.where(cost32 < cost, np.nextafter(cost32, np.float32(np.inf)), cost32)
    cost = cost.astype(np.float64)
    either_boundary = boundary[:, pairs[:, 0]] | boundary[:, pairs[:, 1]]
    tet_rec = np.zeros(n_t, dtype=dtype_for("tets", byte_order))
    tet_rec["centre"] = centre
    tet_rec["radius"] = radius
    tet_rec["verts"] = tets
    tet_rec["faces"] = tet_faces
    tet_rec["portal"] = np.stack([cost, np.where(either_boundary, 0.0, cost)], axis=2)

    # --- grid --------------------------------------------------------------------
    if bbox is None:
        lo, hi = (v.min(axis=0), v.max(axis=0)) if len(v) else (np.zeros(3), np.ones(3))
    else:
        lo, hi = (np.asarray(b, dtype=np.float64).reshape(3) for b in bbox)
        if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or np.any(hi <= lo):
            raise BuildError(f"bbox must be finite with max > min, got {lo} .. {hi}")
        if len(v) and (np.any(v.min(axis=0) < lo) or np.any(v.max(axis=0) > hi)):
            raise BuildError("some vertices lie outside the given bbox")
    if dims is None:
        dims = default_dims(hi - lo)
    dims = tuple(int(x) for x in dims)
    if len(dims) != 3 or min(dims) < 1:
        raise BuildError(f"grid dims must be three positive integers, got {dims}")
    n_cells = dims[0] * dims[1] * dims[2]
    _limit(n_cells, "grid cells", "use fewer cells per axis (--dims)")
    lo, hi, cell = grid_frame(lo, hi, dims)
    ref_cells, ref_tets = grid_membership(pts, lo, cell, dims)
    _limit(len(ref_tets), "cell references",
           "use a coarser mesh or fewer cells (--dims / --detail)")
    occupied, ref_start, per_cell = np.unique(ref_cells, return_index=True,
                                              return_counts=True)
    cell_item = np.full(n_cells, -1, dtype=np.int64)
    cell_item[occupied] = np.arange(len(occupied))
    cells = np.zeros(n_cells, dtype=dtype_for("cells", byte_order))
    cells["count"] = cell_item >= 0
    items = np.zeros(len(occupied), dtype=dtype_for("items", byte_order))
    nx, ny, _ = dims
    ijk = np.stack([occupied % nx, (occupied // nx) % ny, occupied // (nx * ny)], axis=1)
    cell_centre = lo + (ijk + 0.5) * cell
    unknown = np.concatenate([cell_centre, np.full((len(occupied), 1),
                                                   np.linalg.norm(cell))], axis=1)
    items["unknown"] = unknown.astype(np.float32).view(np.uint32)
    items["n"] = per_cell
    items["cell_index"] = occupied
    refs = np.zeros(len(ref_tets), dtype=dtype_for("refs", byte_order))

    header = np.zeros(1, dtype=dtype_for("header", byte_order))[0]
    header["bbox_min"] = [*lo, 1.0]
    header["bbox_max"] = [*hi, 1.0]
    header["extent"] = hi - lo
    header["cell_size"] = cell
    header["dims"] = dims
    vert_rec = np.zeros(len(v32), dtype=dtype_for("vertices", byte_order))
    vert_rec["xyz"] = v32
    sections = {"vertices": vert_rec, "tets": tet_rec, "faces": faces,
                "cells": cells, "items": items, "refs": refs}
    return Mesh(header=header, sections=sections, cell_item=cell_item,
                item_ref_start=ref_start, ref_tet=ref_tets, byte_order=byte_order,
                pof0_dialect=pof0_dialect)
