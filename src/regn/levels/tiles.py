"""A level as a world of tiles: the part of a level's free voxels in one tile.

A world (:func:`regn.world.build` with ``level=``) takes the level's solid
once, over the whole level (:func:`~regn.levels.build.level_solid`: which
free space is enclosed is a property of the whole level, not of a tile),
cuts it along voxel planes, and hands each tile its block of free voxels
and its wall points (:class:`regn.world.faces.LevelWallSampler`, the same
points for both tiles of a wall). :func:`build_tile` is what a worker runs:
the tile's tetrahedra at the finest octree level that fits (as
:func:`~regn.levels.build.build_level`), with the given wall points in
place of its own, and the REGN of them with its report.
"""

from __future__ import annotations

import time

import numpy as np

from .build import COVERAGE_SAMPLES, finish, fit_free
from .solid import Grid


def tile_grid(lo, hi, shape):
    """The working :class:`~regn.levels.solid.Grid` of a tile: its box cut
    into ``shape`` voxels."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    return Grid(lo, (hi - lo) / np.asarray(shape), tuple(int(s) for s in shape))


def build_tile(lo, hi, free, boundary, *, jitter, seed=0, min_block=None, dims=None,
               coverage_samples=COVERAGE_SAMPLES, source=None):
    """A :class:`regn.Mesh` of the free voxels ``free`` (uint8 block) of the
    tile ``lo``..``hi``, its wall sample ``boundary`` (M,3), with its
    ``build_report`` (as :func:`~regn.levels.build.generate_level`'s, for
    the tile). A tile with no free voxel, or none a tetrahedron fits, is
    a REGN without tetrahedra."""
    from ..builder.tetmesh import build
    t0 = time.perf_counter()
    free = np.ascontiguousarray(free, np.uint8)
    grid = tile_grid(lo, hi, free.shape)
    report = {"source": source, "free_voxels": int(free.sum()),
              "seconds": {}, "kind": "level_tile"}
    verts = tets = None
    given = dims
    if dims is None:        # the finest grid whose frame is the tile's box exactly
        from ..builder.frame import dims_candidates
        dims = dims_candidates(lo, hi)[0]
    if free.any():
        verts, tets, report = fit_free(free, grid, report, min_block=min_block, seed=seed,
                                       boundary=boundary, jitter=jitter)
    if tets is None or not len(tets):
        mesh = build(np.zeros((0, 3)), np.zeros((0, 4), np.int64), bbox=(lo, hi), dims=dims)
        report.update({"coverage": 0.0 if free.any() else None,
                       "free_fraction": float(free.mean()), "vertices": 0, "tets": 0,
                       "faces": 0, "clearance_violations": 0, "clearance_ok": True})
        mesh.build_report = report
        return mesh
    # dims not given: the finest of the same grids whose cell references fit
    # (the finest alone may not: a tile of many small tetrahedra)
    mesh = finish(verts, tets, report, free, grid, dims=given, jitter=jitter, bbox=(lo, hi),
                  coverage_samples=coverage_samples)
    mesh.build_report["seconds"]["total"] = time.perf_counter() - t0
    return mesh
