"""Tetrahedra whose interiors overlap.

Tetrahedra of a mesh may share faces, edges and vertices, and may touch;
their interiors must not overlap. :func:`overlapping_tets` tests every pair
whose bounding boxes overlap, exactly (separating axes), in the compiled
kernel :func:`regn.geometry._overlap_kernels.overlapping_pairs`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..tolerances import OVERLAP_REL

#: Buckets per axis of the broad phase, at most.
MAX_BUCKETS = 128


class Overlaps(NamedTuple):
    tested: int            # pairs with overlapping bounding boxes, all tested
    pairs: np.ndarray      # (K,2) the pairs (first < second) whose interiors overlap
    tolerance: float       # metres: overlaps up to this depth count as touching


def overlap_tolerance(tet_points) -> float:
    """Metres: :data:`~regn.tolerances.OVERLAP_REL` times the size (largest
    extent) of the tetrahedra's bounding box."""
    p = np.asarray(tet_points, np.float64).reshape(-1, 3)
    p = p[np.isfinite(p).all(axis=1)]
    if not len(p):
        return 0.0
    return OVERLAP_REL * float(np.max(p.max(axis=0) - p.min(axis=0)))


def _bucket_grid(pts):
    """(origin, bucket size (3,), dims (3,)) of the broad phase: buckets about
    the size of a typical tetrahedron, at most :data:`MAX_BUCKETS` per axis."""
    flat = pts.reshape(-1, 3)
    flat = flat[np.isfinite(flat).all(axis=1)]
    if not len(flat):
        return np.zeros(3), np.ones(3), np.ones(3, np.int64)
    lo, hi = flat.min(axis=0), flat.max(axis=0)
    ext = np.maximum(hi - lo, 1e-300)
    finite = np.isfinite(pts).all(axis=(1, 2))
    typical = float(np.median((pts[finite].max(axis=1) - pts[finite].min(axis=1)).max(axis=1)))
    edge = max(typical, float(np.prod(ext) / max(len(pts), 1)) ** (1 / 3))
    dims = np.clip(np.ceil(ext / max(edge, 1e-300)), 1, MAX_BUCKETS).astype(np.int64)
    return lo, ext / dims, dims


def overlapping_tets(tet_points, tol=None) -> Overlaps:
    """The pairs of tetrahedra (T,4,3) whose interiors overlap by more than
    ``tol`` metres (default :func:`overlap_tolerance`). Tetrahedra with a
    non-finite coordinate are left out."""
    pts = np.ascontiguousarray(np.asarray(tet_points, np.float64).reshape(-1, 4, 3))
    tol = overlap_tolerance(pts) if tol is None else float(tol)
    if len(pts) < 2:
        return Overlaps(0, np.zeros((0, 2), np.int64), tol)
    from ._overlap_kernels import overlapping_pairs
    origin, size, dims = _bucket_grid(pts)
    tested, first, second = overlapping_pairs(pts, tol, origin, size, dims)
    return Overlaps(int(tested), np.stack([first, second], axis=1), tol)
