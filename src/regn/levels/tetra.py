"""Tetrahedra of a level's free voxels, fine near walls and coarse in the open.

The free grid is pooled into a pyramid of blocks of 2, 4, 8 ... voxels; a
*leaf* is an all-free block whose parent is not all free (an octree of the
free region). The corners of the leaves of at least ``2 ** min_level``
voxels, jittered by a hair (so that the lattice's cospherical points give
no flat tetrahedra), are triangulated (Delaunay, scipy/qhull) on their
float32 positions; a tetrahedron is kept only when it shares no interior
point with a solid voxel shrunk by the jitter (an exact separating-axis
test, descending a pyramid of "any solid" blocks; only faces that border a
free voxel are pulled in, so no slit opens between solid neighbours). The
solid was grown by
that much beforehand, so no kept tetrahedron reaches into it. Then the
boundary is made a closed 2-manifold (:func:`regn.builder.unpinch.unpinch`)
and specks are dropped.
"""

from __future__ import annotations

import numpy as np

from ..builder.world import closed
from ..geometry.tets import degenerate_threshold, least_heights, signed_volumes, used_vertices

#: The jitter, as a fraction of a voxel, and at most this many metres ...
JITTER_REL = 1e-3
JITTER_MAX = 0.002
#: ... but at least this many float32 ulps of the largest coordinate.
JITTER_ULPS = 16
#: The top of the cull pyramid has at most this many blocks per axis.
TOP_BLOCKS = 8
#: A tetrahedron whose height over one of its faces is within this many
#: float32 steps of its coordinates' size is dropped as flat (:func:`_flat`).
FLAT_ULPS = 4


def jitter_size(grid, jitter=None):
    """(3,) the jitter per axis of a grid's points (``jitter``, when given:
    a world's tiles share their world's)."""
    if jitter is not None:
        return np.broadcast_to(np.asarray(jitter, np.float64), (3,)).copy()
    scale = float(np.abs(np.concatenate([grid.lo, grid.hi])).max())
    ulp = float(np.spacing(np.float32(max(scale, 1e-30))))
    return np.maximum(np.minimum(JITTER_REL * grid.h, JITTER_MAX), JITTER_ULPS * ulp)


def penetration(grid, jitter=None):
    """How deep (metres) a kept tetrahedron may reach into a solid voxel:
    the cull's shrink, on the diagonal."""
    return float(np.linalg.norm(1.5 * jitter_size(grid, jitter)))


def _pool(a, op, fill):
    """One pyramid step: 2x2x2 blocks reduced by ``op`` (np.all / np.any),
    odd sizes padded with ``fill``."""
    pad = [(0, s % 2) for s in a.shape]
    if any(p[1] for p in pad):
        a = np.pad(a, pad, constant_values=fill)
    nx, ny, nz = (s // 2 for s in a.shape)
    return op(a.reshape(nx, 2, ny, 2, nz, 2), axis=(1, 3, 5))


def free_pyramid(free):
    """[level 0 (free, bool), level 1, ...]: block ``b`` of level ``l`` is all free."""
    levels = [free.astype(bool)]
    while max(levels[-1].shape) > 1:
        levels.append(_pool(levels[-1], np.all, False))
    return levels


def solid_pyramid(free):
    """``(flat uint8, offsets, dims)`` of the "any solid" pyramid, from level 0
    (the solid voxels) up to blocks at most :data:`TOP_BLOCKS` per axis."""
    levels = [(free == 0).view(np.uint8) if free.dtype == np.uint8 else (~free.astype(bool))]
    levels[0] = levels[0].astype(np.uint8)
    while max(levels[-1].shape) > TOP_BLOCKS:
        levels.append(_pool(levels[-1].astype(bool), np.any, True).astype(np.uint8))
    dims = np.array([lv.shape for lv in levels], np.int64)
    offsets = np.concatenate([[0], np.cumsum([lv.size for lv in levels])]).astype(np.int64)
    return np.concatenate([lv.ravel() for lv in levels]), offsets, dims


def _leaves(levels, lev):
    """(N,3) int64 block indices of the leaves of level ``lev``."""
    a = levels[lev]
    if lev + 1 < len(levels):
        up = levels[lev + 1].repeat(2, 0).repeat(2, 1).repeat(2, 2)
        a = a & ~up[:a.shape[0], :a.shape[1], :a.shape[2]]
    return np.argwhere(a)


def _corners(ijk, lev, shape0):
    s = 1 << lev
    return [np.minimum((ijk + np.array([(c >> 2) & 1, (c >> 1) & 1, c & 1])) * s, shape0)
            for c in range(8)]


def _unique_points(pts, shape0):
    key = (pts[:, 0] * (shape0[1] + 1) + pts[:, 1]) * (shape0[2] + 1) + pts[:, 2]
    _, first = np.unique(key, return_index=True)
    return pts[np.sort(first)]


def _nearest_first(ijk, lev, coarse):
    """The leaves ``ijk`` of level ``lev`` ordered by how near their centres
    are to the coarser points: the finer blocks grow the coarse region
    toward the walls and stay joined to it (gaps filled first would be
    islands; measured on the rooms benchmark: 48 % coverage in 10 pieces,
    against 39 % in 32)."""
    from scipy.spatial import cKDTree
    if not len(coarse) or not len(ijk):
        return ijk
    centres = (ijk + 0.5) * (1 << lev)
    d = cKDTree(coarse).query(centres)[0]
    return ijk[np.argsort(d, kind="stable")]


def leaf_corners(levels, min_level, fraction=1.0):
    """(N,3) int64 unique corners (in voxels) of the leaves of level >=
    ``min_level``; of level ``min_level`` itself only the first ``fraction``
    of its leaves, those nearest the coarser points first."""
    shape0 = np.array(levels[0].shape)
    out = []
    for lev in range(len(levels) - 1, min_level - 1, -1):
        ijk = _leaves(levels, lev)
        if lev == min_level and fraction < 1:
            coarse = _unique_points(np.concatenate(out), shape0) if out else np.zeros((0, 3))
            ijk = _nearest_first(ijk, lev, coarse)[:int(np.ceil(fraction * len(ijk)))]
        if len(ijk):
            out += _corners(ijk, lev, shape0)
    if not out:
        return np.zeros((0, 3), np.int64)
    return _unique_points(np.concatenate(out), shape0)


def corner_count(levels, min_level):
    """The number of points :func:`leaf_corners` gives (without making them)."""
    return len(leaf_corners(levels, min_level))


def positions(ijk, grid, seed, jitter=None):
    """float32-exact float64 positions of voxel corners, jittered (not
    along an axis where the corner is on the box's face)."""
    shape = np.asarray(grid.shape)
    p = grid.lo + ijk * grid.h
    p = np.where(ijk == shape, grid.hi, p)
    rng = np.random.default_rng(seed)
    d = rng.uniform(-1, 1, size=p.shape) * jitter_size(grid, jitter)
    on_face = (ijk == 0) | (ijk == shape)
    p = np.where(on_face, p, p + d)
    lo32 = grid.lo.astype(np.float32).astype(np.float64)
    hi32 = grid.hi.astype(np.float32).astype(np.float64)
    p32 = p.astype(np.float32).astype(np.float64)
    return np.clip(p32, np.maximum(lo32, grid.lo), np.minimum(hi32, grid.hi))


def cull(pts, tets, pyramid, grid, jitter=None):
    """(T,) bool: which tetrahedra meet a solid voxel (shrunk by the jitter)."""
    from ._tetra_kernels import tets_meet_solid
    flat, offsets, dims = pyramid
    shrink = 1.5 * jitter_size(grid, jitter)
    return tets_meet_solid(np.ascontiguousarray(pts[tets]), flat, offsets, dims, grid.lo,
                           grid.h, shrink)


def _inner(ijk, shape0):
    """The corners not on the box's walls."""
    return ijk[np.all((ijk > 0) & (ijk < np.asarray(shape0)), axis=1)]


def _flat(tp, vol):
    """(T,) bool: tetrahedra (corners ``tp`` (T,4,3), volumes ``vol``) so
    flat that the float32 plane of a face, as the file stores it, cannot
    tell on which side the fourth corner lies: their smallest height is
    within :data:`FLAT_ULPS` float32 steps of their coordinates' size.
    Readers find which corner a face slot leaves out by that side (verify's
    face and portal checks, the corridor drawing), and would read such a
    tetrahedron's faces ambiguously; jittered lattice points give a few
    (4 in the demo hangar's 64 000 faces, at heights of a few micrometres)."""
    height = least_heights(tp, vol)
    step = np.spacing(np.abs(tp).max(axis=(1, 2)).astype(np.float32)).astype(np.float64)
    return ~(height > FLAT_ULPS * step)


def unusable(tp, vol):
    """(T,) bool: tetrahedra (corners ``tp``, signed volumes ``vol``) too
    thin to keep: degenerate (:func:`regn.geometry.tets.degenerate_threshold`,
    ten times over) or flat for float32 (:func:`_flat`)."""
    return (np.abs(vol) <= 10 * degenerate_threshold(tp)) | _flat(tp, vol)


def tetrahedralize(levels, pyramid, grid, min_level, seed=0, fraction=1.0, boundary=None,
                   jitter=None):
    """``(verts, tets, stats)`` of the free region at ``min_level`` (and
    ``fraction`` of its leaves: see :func:`leaf_corners`). ``boundary``
    (M,3) float32-exact points on the box's walls: the whole wall sample,
    in place of the leaves' corners there (a world's tiles share them with
    their neighbours); ``jitter``: the jitter's size, when not the grid's."""
    from scipy.spatial import Delaunay
    ijk = leaf_corners(levels, min_level, fraction)
    if boundary is not None:
        ijk = _inner(ijk, levels[0].shape)
    stats = {"min_level": int(min_level), "level_fraction": float(fraction),
             "sample_points": len(ijk) + (0 if boundary is None else len(boundary))}
    if stats["sample_points"] < 4:
        return np.zeros((0, 3)), np.zeros((0, 4), np.int64), stats
    pts = positions(ijk, grid, seed, jitter)
    if boundary is not None:
        pts = np.concatenate([np.asarray(boundary, np.float64).reshape(-1, 3), pts])
    simp = Delaunay(pts).simplices.astype(np.int64)
    tp = pts[simp]
    vol = signed_volumes(tp)
    degen = unusable(tp, vol)
    simp = simp[~degen]
    hit = cull(pts, simp, pyramid, grid, jitter)
    tets = simp[~hit]
    tets, n_pinch, n_specks = closed(pts, tets)
    verts, tets = used_vertices(pts, tets)
    stats.update({"delaunay_tets": int(len(simp) + degen.sum()),
                  "dropped_degenerate": int(degen.sum()), "dropped_solid": int(hit.sum()),
                  "dropped_pinching": int(n_pinch), "dropped_specks": int(n_specks)})
    return verts, tets, stats
