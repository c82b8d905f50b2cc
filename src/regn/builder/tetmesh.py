"""``regn.build``: everything the spec's builder rules say, from a tet mesh.

Given vertices and tetrahedra, compute faces (slot k opposite vertex k,
numbered by first appearance), orientation, adjacency, planes, centres and
radii, portal costs, and the grid (every tetrahedron that meets each closed
cell box; the box and dims from :mod:`.frame`). The same input always gives
the same bytes.

A mesh is built or refused: indices in range, every position finite in
float32, no degenerate tetrahedron, no face listed three times, no two
tetrahedra overlapping, every count within the format's u16 limits.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import BuildError, LimitError
from ..format import pof0
from ..format.layout import (BIG, F32_ONE_BITS, NO_SLOT, NO_TET, PORTAL_PAIRS,
                             U16_MAX, dtype_for)
from ..geometry.grid import cell_ijk
from ..geometry.manifold import pinches
from ..geometry.overlap import overlapping_tets
from ..geometry.tets import (FACE_SLOTS, degenerate_threshold, face_keys,
                             signed_volumes, sorted_face_vertices)
from ..mesh import Mesh
from .frame import F32_MAX, check_float32_box, fit_grid


def _over_limit(count, what, hint):
    """LimitError when ``count`` ``what`` exceed the format's u16 limit."""
    if count > U16_MAX:
        raise LimitError(f"the mesh needs {count} {what}, more than the format's "
                         f"u16 limit of {U16_MAX}: {hint}", what=what, count=int(count))


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
    dims : (nx, ny, nz), optional — grid cells per axis; default the finest
        grid from about 10 km cells (at most 10 per axis) down whose cell
        references fit the format (see :func:`.frame.fit_grid`).

    The box written is ``bbox`` exactly whenever float32 allows (else the
    change is in the report). ``mesh.build_report`` holds the grid chosen,
    any change of the box, and the boundary's pinch edges and vertices.

    Raises :class:`BuildError` for bad indices, positions that are not
    finite in float32, a degenerate tetrahedron, a face shared by more than
    two tetrahedra or overlapping tetrahedra, and :class:`LimitError` for a
    count past the format's u16 limit.
    """
    v32, tets = _checked_input(vertices, tets)
    v = v32.astype(np.float64)                  # every derived value uses stored positions
    tets = _oriented(v, tets)
    pts = v[tets]                               # (T,4,3)
    faces = _matched_faces(tets)
    box = _box(v, bbox)
    _check_no_overlap(pts, tets, *box)
    face_rec, centroid = _face_records(pts, faces, byte_order)
    tet_rec = _tet_records(pts, tets, faces, centroid, byte_order)
    frame, pairs = fit_grid(pts, *box, dims)
    grid = _grid_records(pairs, frame, byte_order)
    lo, hi, cell, _ = frame

    header = np.zeros(1, dtype=dtype_for("header", byte_order))[0]
    header["bbox_min"] = [*lo, 1.0]
    header["bbox_max"] = [*hi, 1.0]
    header["extent"] = hi - lo
    header["cell_size"] = cell
    header["dims"] = frame.dims
    vert_rec = np.zeros(len(v32), dtype=dtype_for("vertices", byte_order))
    vert_rec["xyz"] = v32
    sections = {"vertices": vert_rec, "tets": tet_rec, "faces": face_rec,
                "cells": grid.cells, "items": grid.items, "refs": grid.refs}
    mesh = Mesh(header=header, sections=sections, cell_item=grid.cell_item,
                item_ref_start=grid.ref_start, ref_tet=grid.ref_tets,
                byte_order=byte_order, pof0_dialect=pof0_dialect)
    found = pinches(tets)
    mesh.build_report = {"dims": list(frame.dims), "dims_chosen": dims is None,
                         "box_change": frame.change(*box),
                         "box_moved_m": frame.largest_move(*box),
                         "pinch_edges": len(found.edges), "pinch_vertices": len(found.vertices)}
    return mesh


def _checked_input(vertices, tets):
    """(float32 vertices (V,3), int64 tets (T,4)) after checking shapes,
    indices, positions (finite in float32), repeated vertices and the u16
    limits."""
    verts = np.asarray(vertices, dtype=np.float64)
    tets = np.asarray(tets)
    if verts.ndim != 2 or verts.shape[1] != 3:
        raise BuildError(f"vertices must be (V,3), got shape {verts.shape}")
    if tets.ndim != 2 or tets.shape[1] != 4:
        raise BuildError(f"tetrahedra must be (T,4), got shape {tets.shape}")
    _over_limit(len(verts), "vertices", "use a coarser mesh")
    _over_limit(len(tets), "tetrahedra", "use a coarser mesh")
    check_vertex_indices(tets, len(verts))
    tets = tets.astype(np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        v32 = verts.astype(np.float32)
    bad = ~np.isfinite(v32).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise BuildError(f"vertex {i} {verts[i].tolist()} is not finite in float32 (the "
                         f"format stores positions as float32, at most {F32_MAX:.4g} m)")
    if len(tets) and np.any(np.sort(tets, axis=1)[:, 1:] == np.sort(tets, axis=1)[:, :-1]):
        t = int(np.argmax(np.any(np.diff(np.sort(tets, axis=1), axis=1) == 0, axis=1)))
        raise BuildError(f"tetrahedron {t} repeats a vertex: {tets[t].tolist()}")
    return v32, tets


def check_vertex_indices(tets, n_vertices):
    """BuildError unless every entry of ``tets`` is an integer in
    0..n_vertices-1 (a negative index is refused, never wrapped)."""
    tets = np.asarray(tets)
    if not len(tets):
        return
    if not np.issubdtype(tets.dtype, np.integer):
        with np.errstate(invalid="ignore"):
            whole = np.isfinite(tets) & (np.mod(tets, 1) == 0)
        if not whole.all():
            t = int(np.argmax(~whole.all(axis=1)))
            raise BuildError(f"tetrahedron {t} lists {tets[t].tolist()}: vertex indices "
                             "must be integers")
    bad = (tets < 0) | (tets >= n_vertices)
    if bad.any():
        t = int(np.argmax(bad.any(axis=1)))
        k = int(np.argmax(bad[t]))
        raise BuildError(f"tetrahedron {t} lists vertex {tets[t, k].item()}: vertex indices "
                         f"must be in 0..{n_vertices - 1}")


def _box(v, bbox):
    """``(lo, hi)``: the given box (finite in float32, holding every
    vertex), or the vertices' bounds."""
    if bbox is None:
        if not len(v):
            return np.zeros(3), np.ones(3)
        return check_float32_box(v.min(axis=0), v.max(axis=0))
    lo, hi = check_float32_box(*(np.asarray(b, dtype=np.float64).reshape(3) for b in bbox))
    if len(v) and (np.any(v.min(axis=0) < lo) or np.any(v.max(axis=0) > hi)):
        raise BuildError("some vertices lie outside the given bbox")
    return lo, hi


def _check_no_overlap(pts, tets, lo, hi):
    """BuildError when the tetrahedra fill more than the box, or two of them
    overlap (see :func:`regn.geometry.overlap.overlapping_tets`)."""
    total = float(np.abs(signed_volumes(pts)).sum())
    box = float(np.prod(hi - lo))
    if total > box * (1 + 1e-6):
        raise BuildError(f"the tetrahedra's volumes add up to {100 * total / box:.4g} % of the "
                         "box's: some of them overlap")
    found = overlapping_tets(pts, tets)
    if not found.decided and not len(found.pairs):
        raise BuildError("whether the tetrahedra overlap could not be decided within the "
                         "overlap test's work budget (see regn.geometry.overlap)")
    if len(found.pairs):
        a, b = (int(x) for x in found.pairs[0])
        raise BuildError(f"{len(found.pairs)} pairs of tetrahedra overlap (by more than "
                         f"{found.tolerance:.3g} m), e.g. tetrahedra {a} and {b}")


def _oriented(v, tets):
    """``tets`` with every inverted tetrahedron's last two vertices swapped;
    BuildError for a degenerate one."""
    vol = signed_volumes(v[tets])
    tiny = np.abs(vol) <= degenerate_threshold(v[tets])
    if tiny.any():
        t = int(np.argmax(tiny))
        raise BuildError(f"tetrahedron {t} {tets[t].tolist()} is degenerate (volume "
                         f"{vol[t]:.3g} m^3)")
    flip = vol < 0
    tets = tets.copy()
    tets[flip, 2], tets[flip, 3] = tets[flip, 3].copy(), tets[flip, 2].copy()
    return tets


class _Faces(NamedTuple):
    """The faces of a tetrahedral mesh, numbered by first appearance."""
    tet_faces: np.ndarray   # (T,4) face index in each face slot
    tet_a: np.ndarray       # (F,) the first tetrahedron listing each face ...
    slot_a: np.ndarray      # (F,) ... and the face's slot in it
    has_b: np.ndarray       # (F,) a second tetrahedron lists it
    pos_b: np.ndarray       # (F,) 4 * tetrahedron + slot of that listing, or -1


def _matched_faces(tets) -> _Faces:
    """Faces (slot k opposite vertex k) numbered by first appearance in
    tetrahedron/slot order; each face's two listings, in order of
    appearance: A first, B second. BuildError for a face listed by three."""
    uniq, first, inverse, count = np.unique(face_keys(tets), return_index=True,
                                            return_inverse=True, return_counts=True)
    if np.any(count > 2):
        f = int(np.argmax(count > 2))
        tri = sorted_face_vertices(tets)[first[f]]
        raise BuildError(f"non-manifold face {tri.tolist()}: shared by "
                         f"{int(count[f])} tetrahedra (at most 2)")
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
    face_of = rank[inverse.ravel()]                          # (4T,) face index
    n_f = len(uniq)
    _over_limit(n_f, "faces", "use a coarser mesh")
    order = np.argsort(face_of, kind="stable")
    starts = np.searchsorted(face_of[order], np.arange(n_f))
    pos_a = order[starts]
    has_b = np.bincount(face_of, minlength=n_f) == 2
    pos_b = np.full(n_f, -1, dtype=np.int64)
    pos_b[has_b] = order[starts[has_b] + 1]
    return _Faces(face_of.reshape(len(tets), 4), pos_a // 4, pos_a % 4, has_b, pos_b)


def _face_records(pts, faces, byte_order):
    """The face records (planes: normal out of A, n.p + d = 0 at the
    centroid p) and the (F,3) centroids."""
    n_f = len(faces.tet_a)
    face_pts = pts[faces.tet_a][np.arange(n_f)[:, None], FACE_SLOTS[faces.slot_a]]  # (F,3,3)
    centroid = face_pts.mean(axis=1)
    normal = np.cross(face_pts[:, 1] - face_pts[:, 0], face_pts[:, 2] - face_pts[:, 0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    inward = pts[faces.tet_a, faces.slot_a] - centroid
    normal[np.einsum("ij,ij->i", normal, inward) > 0] *= -1
    rec = np.zeros(n_f, dtype=dtype_for("faces", byte_order))
    rec["normal"] = normal
    rec["d"] = -np.einsum("ij,ij->i", normal, centroid)
    rec["point"] = centroid
    rec["w"] = F32_ONE_BITS
    rec["own"] = np.arange(n_f)
    rec["tet_a"] = faces.tet_a
    rec["slot_a"] = faces.slot_a
    rec["tet_b"] = np.where(faces.has_b, faces.pos_b // 4, NO_TET)
    rec["slot_b"] = np.where(faces.has_b, faces.pos_b % 4, NO_SLOT)
    return rec, centroid


def _tet_records(pts, tets, faces, centroid, byte_order):
    """The tetrahedron records: centre, radius, vertices, faces and portal
    costs (the distance between two face centroids, stored as float32
    rounded *up*: every cost is then at least the centroid distance a
    reader computes, so the Euclidean search bound is admissible and a
    path's centroid polyline is never longer than its cost; aux is 0 where
    either face is on the boundary)."""
    centre = pts.mean(axis=1)
    radius = np.linalg.norm(pts - centre[:, None, :], axis=2).max(axis=1)
    fc = centroid[faces.tet_faces]                           # (T,4,3)
    boundary = ~faces.has_b[faces.tet_faces]                 # (T,4)
    pairs = np.array(PORTAL_PAIRS)
    cost = np.linalg.norm(fc[:, pairs[:, 0]] - fc[:, pairs[:, 1]], axis=2)   # (T,6)
    cost32 = cost.astype(np.float32)
    cost = np.where(cost32 < cost, np.nextafter(cost32, np.float32(np.inf)), cost32)
    cost = cost.astype(np.float64)
    either_boundary = boundary[:, pairs[:, 0]] | boundary[:, pairs[:, 1]]
    rec = np.zeros(len(tets), dtype=dtype_for("tets", byte_order))
    rec["centre"] = centre
    rec["radius"] = radius
    rec["verts"] = tets
    rec["faces"] = faces.tet_faces
    rec["portal"] = np.stack([cost, np.where(either_boundary, 0.0, cost)], axis=2)
    return rec


class _Grid(NamedTuple):
    cells: np.ndarray       # section 3 records
    items: np.ndarray       # section 4 records
    refs: np.ndarray        # section 5 records (pointers filled in by the writer)
    cell_item: np.ndarray   # (C,) item index of each cell, -1 for none
    ref_start: np.ndarray   # (I,) first reference of each item
    ref_tets: np.ndarray    # (R,) tetrahedron of each reference


def _grid_records(pairs, frame, byte_order) -> _Grid:
    """The grid records from the (cell, tetrahedron) ``pairs`` of every
    tetrahedron meeting each closed cell box of ``frame``."""
    lo, _, cell, dims = frame
    n_cells = frame.n_cells
    ref_cells, ref_tets = pairs
    occupied, ref_start, per_cell = np.unique(ref_cells, return_index=True,
                                              return_counts=True)
    cell_item = np.full(n_cells, -1, dtype=np.int64)
    cell_item[occupied] = np.arange(len(occupied))
    cells = np.zeros(n_cells, dtype=dtype_for("cells", byte_order))
    cells["count"] = cell_item >= 0
    items = np.zeros(len(occupied), dtype=dtype_for("items", byte_order))
    # the builder's reading of the unknown item words: cell centre, diagonal
    cell_centre = lo + (cell_ijk(occupied, dims) + 0.5) * cell
    unknown = np.concatenate([cell_centre, np.full((len(occupied), 1),
                                                   np.linalg.norm(cell))], axis=1)
    items["unknown"] = unknown.astype(np.float32).view(np.uint32)
    items["n"] = per_cell
    items["cell_index"] = occupied
    refs = np.zeros(len(ref_tets), dtype=dtype_for("refs", byte_order))
    return _Grid(cells, items, refs, cell_item, ref_start, ref_tets)
