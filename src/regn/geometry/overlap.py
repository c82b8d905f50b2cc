"""Tetrahedra whose interiors overlap.

Tetrahedra of a mesh may share faces, edges and vertices, and may touch;
their interiors must not overlap. :func:`overlapping_tets` decides it
exactly (separating axes, with a tolerance for float32 rounding) in the
compiled kernels of :mod:`regn.geometry._overlap_kernels`.

Given the mesh's vertex indices, far fewer pairs need testing. Count how
many tetrahedra hold each point, ``w(x)``. Along a path, ``w`` changes only
where the path crosses a face: across a face that two tetrahedra list, lying
on opposite sides of it, ``w`` is unchanged (out of one, into the other);
across a face that one tetrahedron lists (a boundary face) it changes by
one. So where ``w >= 2`` (an overlap), the region's edge is made of boundary
faces, and just inside such a face its tetrahedron overlaps another one near
that face. Testing each tetrahedron against the tetrahedra near its boundary
faces, and each pair that shares a face, therefore finds every overlap —
when every tetrahedron has the same orientation and no face is listed three
times. Otherwise every pair with overlapping bounding boxes is tested.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..tolerances import DEGENERATE_REL, OVERLAP_REL
from .tets import FACE_SLOTS

#: Buckets per axis of the broad phase, at most, and bucket entries per
#: tetrahedron, on average at most.
MAX_BUCKETS = 128
MAX_ENTRIES_PER_TET = 64


class Overlaps(NamedTuple):
    tested: int            # pairs tested exactly
    pairs: np.ndarray      # (K,2) the pairs (first < second) whose interiors overlap
    tolerance: float       # metres: overlaps up to this depth count as touching (default
    #                        OVERLAP_REL times the largest extent of the tetrahedra)


def _bucket_grid(lo_t, hi_t, n):
    """(origin, bucket size (3,), dims (3,)) of the broad phase over the
    finite boxes ``lo_t``..``hi_t`` (T,3) of ``n`` tetrahedra: buckets about
    the size of a typical tetrahedron, at most :data:`MAX_BUCKETS` per axis,
    coarser while the tetrahedra would make more than
    :data:`MAX_ENTRIES_PER_TET` entries each (a few huge ones among many
    small ones)."""
    if not len(lo_t):
        return np.zeros(3), np.ones(3), np.ones(3, np.int64)
    lo, hi = lo_t.min(axis=0), hi_t.max(axis=0)
    ext = np.maximum(hi - lo, 1e-300)
    typical = float(np.median((hi_t - lo_t).max(axis=1)))
    edge = max(typical, float(np.prod(ext) / n) ** (1 / 3), float(ext.max()) * 1e-300)
    dims = np.clip(np.ceil(ext / edge), 1, MAX_BUCKETS).astype(np.int64)
    while dims.max() > 1:
        size = ext / dims
        with np.errstate(invalid="ignore", over="ignore"):
            span = (np.minimum(np.floor((hi_t - lo) / size), dims - 1)
                    - np.floor((lo_t - lo) / size) + 1)
        if span.prod(axis=1).sum() <= MAX_ENTRIES_PER_TET * n:
            break
        dims = np.maximum(dims // 2, 1)
    return lo, ext / dims, dims


def _boundary_faces(pts, sh, tets):
    """``(face_lo, face_hi, face_slot, adjacent, tets)`` for the boundary
    test, or None when it does not apply (mixed or degenerate orientation, a
    face listed three times)."""
    from ._overlap_kernels import face_listings
    tets = np.require(np.asarray(tets, np.int64).reshape(-1, 4), requirements=["C", "W"])
    if len(tets) != len(pts) or not len(tets) or tets.min() < 0:
        return None
    size = (sh.hi - sh.lo).max(axis=1)
    flat = ~(np.abs(sh.volume) > DEGENERATE_REL * size ** 3)
    if flat.any() or not (np.all(sh.volume > 0) or np.all(sh.volume < 0)):
        return None
    t, k, adjacent, ok = face_listings(tets)
    if not ok:
        return None
    tri = pts[t[:, None], FACE_SLOTS[k]]                  # (B,3,3)
    face_lo = np.minimum(np.minimum(tri[:, 0], tri[:, 1]), tri[:, 2])
    face_hi = np.maximum(np.maximum(tri[:, 0], tri[:, 1]), tri[:, 2])
    return face_lo, face_hi, 4 * t + k, adjacent, tets


def overlapping_tets(tet_points, tets=None, tol=None, threads=1) -> Overlaps:
    """The pairs of tetrahedra (T,4,3) whose interiors overlap by more than
    ``tol`` metres (default :data:`~regn.tolerances.OVERLAP_REL` times their
    largest extent). With the vertex indices ``tets`` (T,4), only what can
    overlap is tested (see the module docstring). Tetrahedra with a
    non-finite coordinate are left out. ``threads`` > 1 shares the tests
    among that many threads (the kernels release the GIL)."""
    # writable and contiguous: the kernels are compiled for that one array type
    pts = np.require(np.asarray(tet_points, np.float64).reshape(-1, 4, 3),
                     requirements=["C", "W"])
    if len(pts) < 2:
        return Overlaps(0, np.zeros((0, 2), np.int64), 0.0 if tol is None else float(tol))
    from ._overlap_kernels import folded_pairs, items, pairs_in_range, shapes
    sh = shapes(pts)
    lo_t, hi_t = sh.lo[sh.finite], sh.hi[sh.finite]
    if tol is None:
        tol = OVERLAP_REL * float(np.max(hi_t.max(axis=0) - lo_t.min(axis=0))) \
            if len(lo_t) else 0.0
    tol = float(tol)
    grid = _bucket_grid(lo_t, hi_t, len(pts))
    faces = None if tets is None or not sh.finite.all() else _boundary_faces(pts, sh, tets)
    if faces is None:                     # every tetrahedron against every other
        it = items(sh, sh.lo, sh.hi, -1 - np.arange(len(pts)), *grid)
        idx, folded = np.zeros((0, 4), np.int64), np.zeros((0, 4), np.int64)
        adjacent = folded
    else:
        face_lo, face_hi, face_slot, adjacent, idx = faces
        it = items(sh, face_lo, face_hi, face_slot, *grid)
        folded = folded_pairs(pts, sh, adjacent, tol)
    cuts = np.linspace(0, len(pts), max(int(threads), 1) + 1).astype(np.int64)
    work = [lambda a=a, b=b: pairs_in_range(pts, sh, idx, it, tol, *grid, a, b)
            for a, b in zip(cuts[:-1], cuts[1:])]
    results = _run_all(work)
    tested = sum(int(r[0]) for r in results) + len(adjacent)
    first = np.concatenate([r[1] for r in results] + [np.minimum(folded[:, 0], folded[:, 2])])
    second = np.concatenate([r[2] for r in results] + [np.maximum(folded[:, 0], folded[:, 2])])
    pairs = np.unique(np.stack([first, second], axis=1), axis=0) if len(first) else \
        np.zeros((0, 2), np.int64)
    return Overlaps(tested, pairs, tol)


def _run_all(work):
    """The results of the zero-argument callables ``work``, all but the first
    on threads of their own."""
    if len(work) == 1:
        return [work[0]()]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(len(work) - 1) as pool:
        others = [pool.submit(w) for w in work[1:]]
        mine = work[0]()
        return [mine] + [f.result() for f in others]
