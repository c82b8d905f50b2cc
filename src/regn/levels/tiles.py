"""A level as a world of tiles: the part of a level's free voxels in one tile.

A world (:func:`regn.world.build` with ``level=``) takes the level's solid
once, over the whole level (:func:`~regn.levels.build.level_solid`: which
free space is enclosed is a property of the whole level, not of a tile),
cuts it along voxel planes, and hands each tile its block of free voxels
and its wall points (:class:`regn.world.faces.LevelWallSampler`, the same
points for both tiles of a wall). :func:`build_tile` is what a worker runs:
the tile's tetrahedra at the finest octree level that fits (as
:func:`~regn.levels.build.build_level`), with the given wall points in
place of its own, their boundary moved out to the clearance surface as a
single build's (:mod:`.snap`) against the level's triangles near the tile
(:class:`LevelWalls`), the vertices on the walls it shares with a
neighbour pinned, and the REGN of them with its report.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .build import COVERAGE_SAMPLES, DEPTH_TOL, finish, fit_free
from .solid import Grid

#: A tile's triangles reach this many of its planned blocks (and the reach
#: and twice a voxel) beyond its box (:class:`LevelWalls`' ``margin``): a
#: tile may take blocks one level coarser than planned and still search as
#: far as a single build would.
BLOCKS_OUT = 2.0


@dataclass
class TileWalls:
    """What a tile's snap needs (picklable): the level's triangles ``tris``
    (K,3,3) and balls (``centres``, ``radii``) within ``margin`` of the
    tile's box, the agent's ``reach``, and ``shared`` (2,3) bool: which of
    the tile's faces (low, high per axis) a neighbour shares."""
    tris: np.ndarray
    centres: np.ndarray
    radii: np.ndarray
    reach: float
    margin: float
    shared: np.ndarray


class LevelWalls:
    """A level's walls (a soup's triangles, a voxel input's faces, balls),
    handed out a tile at a time: those whose bounds come within ``margin``
    of the tile's box (a tile's job does not carry the whole level)."""

    def __init__(self, level, spheres, reach, margin, lo, hi):
        from .snap import balls, level_triangles
        self.verts, self.tris = level_triangles(level)
        # corner by corner: a (T,3,3) array of a big soup is its largest
        a, b, c = (self.verts[self.tris[:, k]] for k in range(3))
        self.tri_lo = np.minimum(np.minimum(a, b), c)
        self.tri_hi = np.maximum(np.maximum(a, b), c)
        del a, b, c
        self.centres, self.radii = balls(spheres)
        self.reach, self.margin = float(reach), float(margin)
        self.lo, self.hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)

    def tile(self, lo, hi):
        """The :class:`TileWalls` of the tile ``lo``..``hi``."""
        glo, ghi = np.asarray(lo) - self.margin, np.asarray(hi) + self.margin
        near = np.all((self.tri_hi >= glo) & (self.tri_lo <= ghi), axis=1)
        ball = np.all((self.centres + self.radii[:, None] >= glo)
                      & (self.centres - self.radii[:, None] <= ghi), axis=1)
        shared = np.array([np.asarray(lo) > self.lo, np.asarray(hi) < self.hi])
        return TileWalls(self.verts[self.tris[near]], self.centres[ball], self.radii[ball],
                         self.reach, self.margin, shared)


def tile_grid(lo, hi, shape):
    """The working :class:`~regn.levels.solid.Grid` of a tile: its box cut
    into ``shape`` voxels."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    return Grid(lo, (hi - lo) / np.asarray(shape), tuple(int(s) for s in shape))


def build_tile(lo, hi, free, boundary, *, jitter, seed=0, min_block=None, dims=None,
               coverage_samples=COVERAGE_SAMPLES, source=None, walls=None):
    """A :class:`regn.Mesh` of the free voxels ``free`` (uint8 block) of the
    tile ``lo``..``hi``, its wall sample ``boundary`` (M,3), with its
    ``build_report`` (as :func:`~regn.levels.build.generate_level`'s, for
    the tile). ``walls``: its :class:`TileWalls`, to snap to (None: the
    voxel corners stay). A tile with no free voxel, or none a tetrahedron
    fits, is a REGN without tetrahedra."""
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
    moves = None
    if walls is not None and tets is not None and len(tets):
        verts, tets, moves = snapped_tile(verts, tets, report, (lo, hi), grid, walls)
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
                  coverage_samples=coverage_samples, walls=moves)
    mesh.build_report["seconds"]["total"] = time.perf_counter() - t0
    return mesh


def snapped_tile(verts, tets, report, box, grid, walls):
    """``(verts, tets, (walls, reach, moved before, after))``: a tile's
    tetrahedra (in ``box``, on ``grid``) with the boundary moved out to the clearance surface
    (:func:`regn.levels.snap.snap`, as :func:`~regn.levels.build._snapped`
    moves a single build's), the vertices on its shared faces pinned: a
    neighbour has the same points there, and the world's links pair the
    faces by their exact positions."""
    from .snap import Walls, snap
    t0 = time.perf_counter()
    reach = walls.reach
    # as a single build's search, no farther than the triangles were handed out
    search = min(reach + 2.0 * (report["min_block"] + float(grid.h.max())), walls.margin)
    lo, hi = (np.asarray(b, np.float64) for b in box)
    w = Walls(walls.tris, walls.centres, walls.radii)
    pinned = np.zeros(len(verts), bool)
    for k in range(3):
        if walls.shared[0, k]:
            pinned |= verts[:, k] <= lo[k]
        if walls.shared[1, k]:
            pinned |= verts[:, k] >= hi[k]
    v, t, sstats, moves = snap(verts, tets, w, reach, (lo, hi), DEPTH_TOL, search,
                               pinned=pinned)
    report.update(sstats)
    report.update(snap_pinned_vertices=int(pinned.sum()), snap_triangles=len(walls.tris))
    # the slivers by a pinned vertex are not peeled, so the shared faces
    # stay; were one dropped all the same (a pinch cut off), the tile keeps
    # its corners rather than lose a link
    report["snap_kept_corners"] = shared_faces(v, t, box, walls.shared) != \
        shared_faces(verts, tets, box, walls.shared)
    if report["snap_kept_corners"]:
        report["snapped_vertices"] = 0
        v, t, moves = verts, tets, (verts[:0], verts[:0])
    report["seconds"]["snap"] = time.perf_counter() - t0
    return v, t, (w, reach, *moves)


def shared_faces(verts, tets, box, shared):
    """The set of boundary faces (their corners' float32 bytes, sorted) on
    the ``shared`` faces of ``box``."""
    from ..geometry.tets import FACE_SLOTS, boundary_face_slots
    corners = verts[tets[:, FACE_SLOTS][boundary_face_slots(tets)]]         # (F,3,3)
    on = np.zeros(len(corners), bool)
    for side in range(2):
        for k in np.flatnonzero(shared[side]):
            on |= np.all(corners[:, :, k] == box[side][k], axis=1)
    keys = np.sort(np.ascontiguousarray(corners[on], np.float32).view("V12")[:, :, 0], axis=1)
    return {row.tobytes() for row in keys}
