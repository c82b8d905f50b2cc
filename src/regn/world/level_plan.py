"""A level (:mod:`regn.levels`) as a world of tiles: the plan.

The level's solid is taken once, over the whole level, on one working voxel
grid (:func:`regn.levels.build.level_solid`: cavities, cracks and the
agent's growth are decided across tile walls, so a tile's part of the
solid is the same as in a single build of the whole level). The grid is
cut along voxel planes into tiles (``tile_size`` metres, or, by default,
the fewest whose tiles hold at most :data:`TILE_BUDGET` points — the
level's octree corners at the level ``min_block`` asks or else the
coarsest whose blocks hold :data:`PLAN_COVER` of the free voxels, and
their wall points —, grown one axis at a time and cut where the corners
share out evenly, :func:`balanced_cuts`); their wall points come from the whole level's voxels
(:class:`regn.world.faces.LevelWallSampler`), at the finest leaves that
keep a tile's walls within :data:`WALL_POINTS`. Each job carries the
tile's box, its block of free voxels, its wall points and the level's
triangles near it (:class:`regn.levels.tiles.LevelWalls`, for the snap to
the walls a single build does), and is built by
:func:`regn.world.tiles.level_tile_builder` on a worker.
"""

from __future__ import annotations

import numpy as np

from ..errors import BuildError
from .faces import LevelWallSampler
from .grid import TileGrid, f32, plane_step
from .tiles import TileJob, level_tile_builder

#: The most points (octree corners and wall points) any tile of an
#: automatic cut may have (a tile fits about 7 000 points, at about 9
#: faces a point); the wall points are checked this often.
TILE_BUDGET = 5500
FIT_ROUNDS = 8
#: A tile's wall points, at most, where a coarser wall level helps.
WALL_POINTS = 2500
#: Without a min_block, tiles are sized for the coarsest octree level
#: whose blocks hold this share of the free voxels (each tile then refines
#: as far as it fits).
PLAN_COVER = 0.9
#: Tile boundaries fall on multiples of this many voxels where they can
#: (the tiles' octree blocks then line up with the level's).
ALIGN = 8
#: The most tiles a level's world has.
MAX_TILES = 4096


def _leaf_masks(free):
    """[(level, bool mask of its leaf blocks)] of the free voxels' octree."""
    from ..levels.tetra import free_pyramid
    levels = free_pyramid(free)
    out = []
    for lev, a in enumerate(levels):
        if lev + 1 < len(levels):
            up = levels[lev + 1].repeat(2, 0).repeat(2, 1).repeat(2, 2)
            a = a & ~up[:a.shape[0], :a.shape[1], :a.shape[2]]
        out.append((lev, a))
    return out


def plan_level(leaves, n_free, cover=PLAN_COVER):
    """The coarsest octree level whose leaves (of that level and up) hold
    ``cover`` of the free voxels (what the tiles are sized for when no
    ``min_block`` is asked), and that share."""
    vol = np.array([int(a.sum()) * 8 ** lev for lev, a in leaves], np.float64)
    share = np.cumsum(vol[::-1])[::-1] / max(n_free, 1)
    ok = np.flatnonzero(share >= cover - 1e-12)
    lev = int(ok.max()) if len(ok) else 0
    return lev, float(share[lev])


def corner_lattice(leaves, shape0, min_level=0):
    """(shape0 + 1) bool: the lattice points that are a corner of a leaf
    block of ``min_level`` or coarser (the points the octree gives there)."""
    shape0 = np.asarray(shape0)
    lattice = np.zeros(tuple(shape0 + 1), bool)
    for lev, a in leaves:
        if lev < min_level:
            continue
        s = 1 << lev
        for d in np.ndindex(2, 2, 2):
            # corner (i + d) * s of leaf i, clipped to the grid's far side
            idx = [np.minimum((np.arange(a.shape[k]) + d[k]) * s, shape0[k]) for k in range(3)]
            lattice[np.ix_(*idx)] |= a
    return lattice


def _cuts(n_vox, n_tiles, size=None):
    """Voxel indices of the tile boundaries along one axis: every ``size``
    voxels (the nearest voxel plane), or ``n_tiles`` near-equal tiles, on
    multiples of :data:`ALIGN` when the tiles are big enough."""
    if size is not None:
        c = np.minimum(np.round(np.arange(n_tiles + 1) * size), n_vox)
        c[-1] = n_vox
        return np.unique(c.astype(np.int64))
    c = np.linspace(0, n_vox, n_tiles + 1)
    if n_vox >= ALIGN * n_tiles * 2:
        c = np.round(c / ALIGN) * ALIGN
    c = np.round(c).astype(np.int64)
    c[0], c[-1] = 0, n_vox
    return np.unique(c)


def balanced_cuts(weight, n_tiles):
    """Voxel indices of ``n_tiles`` tiles along one axis holding about the
    same share of ``weight`` (per voxel slab: the octree corners in it),
    each at least :data:`ALIGN` voxels wide where the axis allows, on
    multiples of :data:`ALIGN` where the tiles are big enough: an axis
    whose corners crowd in a few slabs gets thin tiles there and wide ones
    across the open."""
    n_vox = len(weight)
    w = np.asarray(weight, np.float64) + 1e-3 * max(float(np.mean(weight)), 1e-12)
    cum = np.concatenate([[0.0], np.cumsum(w)])
    c = np.searchsorted(cum, np.linspace(0, cum[-1], n_tiles + 1)[1:-1])
    align = ALIGN if n_vox >= ALIGN * n_tiles * 2 else 1
    c = np.round(c / align).astype(np.int64) * align
    c = np.unique(np.concatenate([[0], np.clip(c, 0, n_vox), [n_vox]]))
    # no tile thinner than one alignment step (merge into the neighbour)
    keep = [0]
    for x in c[1:]:
        if x - keep[-1] >= min(align, n_vox) or x == n_vox:
            keep.append(int(x))
    if len(keep) > 2 and keep[-1] - keep[-2] < min(align, n_vox):
        keep.pop(-2)
    return np.array(keep, np.int64)


def tile_counts(vgrid, tile_size, want=1.0):
    """(3,) tiles per axis: of ``tile_size`` metres (one or three), or, for
    ``"auto"``, about ``want`` near-cubic tiles."""
    ext = vgrid.h * np.asarray(vgrid.shape)
    if not (isinstance(tile_size, str) and tile_size == "auto"):
        size = np.broadcast_to(np.asarray(tile_size, np.float64), (3,))
        if not np.all(np.isfinite(size) & (size > 0)):
            raise BuildError(f"tile size must be > 0 m, got {tile_size}")
        n = np.maximum(1, np.ceil(ext / size - 1e-9)).astype(np.int64)
    else:
        s = (float(np.prod(ext)) / max(want, 1.0)) ** (1 / 3)
        n = np.maximum(1, np.round(ext / s)).astype(np.int64)
        if np.prod(n) > 2 * want:
            n = np.maximum(1, np.floor(ext / s)).astype(np.int64)
    n = np.minimum(n, np.asarray(vgrid.shape))
    if np.prod(n) > MAX_TILES:
        raise BuildError(f"{'x'.join(map(str, n))} tiles are more than {MAX_TILES}: give a "
                         "larger --tile-size or a coarser --voxel-size")
    return n


def _integral(lattice):
    """The 3-D prefix sums of ``lattice`` (zero-padded in front), for
    :func:`_inner`."""
    S = np.zeros(tuple(np.asarray(lattice.shape) + 1), np.int32)
    S[1:, 1:, 1:] = lattice.cumsum(0, dtype=np.int32).cumsum(1).cumsum(2)
    return S


def _inner(S, cuts):
    """(nx, ny, nz) the lattice points in each tile's box (walls counted on
    both sides), from the prefix sums ``S``."""
    a = [np.asarray(c[:-1]) for c in cuts]
    b = [np.asarray(c[1:]) + 1 for c in cuts]
    out = 0
    for d in np.ndindex(2, 2, 2):
        sign = (-1) ** (3 - sum(d))
        out = out + sign * S[np.ix_(*[(b if d[k] else a)[k] for k in range(3)])].astype(np.int64)
    return out


def _grow(S, marginals, n, shape, bound):
    """``n`` grown one tile along one axis at a time, the axis whose step
    gives the fewest tiles times the most corners in a tile, until no
    tile's corners pass ``bound`` (or :data:`MAX_TILES`)."""
    n = np.array(n, np.int64)
    while True:
        cuts = [balanced_cuts(marginals[k], int(n[k])) for k in range(3)]
        if _inner(S, cuts).max() <= bound:
            return n
        best = None
        for k in range(3):
            if n[k] >= shape[k]:
                continue
            m = n.copy()
            m[k] += 1
            c = [balanced_cuts(marginals[j], int(m[j])) for j in range(3)]
            score = np.prod([len(x) - 1 for x in c]) * int(_inner(S, c).max())
            if best is None or score < best[0]:
                best = (score, m)
        if best is None or np.prod(best[1]) > MAX_TILES:
            return n
        n = best[1]


def _auto_cuts(lattice, vgrid, lo, hi, free, jitter, seed):
    """``(cuts, grid, sampler, worst)`` of an automatic level world: tiles
    grown from the fewest the corners need (:func:`_grow`, balanced cuts)
    until no tile passes :data:`TILE_BUDGET` points, its wall points
    among them."""
    S = _integral(lattice)
    marginals = [lattice.sum(axis=tuple(j for j in range(3) if j != k))[:-1].astype(np.float64)
                 for k in range(3)]
    shape = np.asarray(vgrid.shape)
    n = tile_counts(vgrid, "auto", int(lattice.sum()) / TILE_BUDGET)
    bound = TILE_BUDGET - WALL_POINTS // 2
    for _ in range(FIT_ROUNDS):
        n = _grow(S, marginals, n, shape, bound)
        cuts = [balanced_cuts(marginals[k], int(n[k])) for k in range(3)]
        grid = tile_planes(vgrid, lo, hi, cuts)
        sampler, worst = wall_sampler(grid, cuts, free, jitter, seed)
        inner = _inner(S, cuts)
        most = max(int(inner[idx]) + len(sampler.tile(idx)) for idx in grid.indices())
        if most <= TILE_BUDGET or np.all(n >= shape):
            break
        bound -= max(most - TILE_BUDGET, TILE_BUDGET // 50)
    return cuts, grid, sampler, worst


def snapped_box(lo, hi):
    """``(lo, hi)`` moved out to the nearest :func:`plane_step` multiples
    (at most one step: micrometres for a room, centimetres for 500 km)."""
    q = plane_step(lo, hi)
    return f32(np.floor(np.asarray(lo) / q) * q), f32(np.ceil(np.asarray(hi) / q) * q)


def tile_planes(vgrid, lo, hi, cuts):
    """The tile boundaries of ``cuts`` (voxel indices), on
    :func:`plane_step` multiples (``lo``, ``hi``: the world's box, on them)."""
    planes = []
    q = plane_step(lo, hi)
    for k in range(3):
        p = f32(np.round((vgrid.lo[k] + cuts[k] * vgrid.h[k]) / q[k]) * q[k])
        p[0], p[-1] = lo[k], hi[k]
        if np.any(np.diff(p) <= 0):
            raise BuildError(f"tiles along axis {k} are too thin for float32 coordinates")
        planes.append(p)
    return TileGrid.from_planes(lo, hi, planes)


def wall_sampler(grid, cuts, free, jitter, seed):
    """The :class:`LevelWallSampler` at the finest wall level whose
    largest tile stays within :data:`WALL_POINTS` (or the coarsest)."""
    for lev in range(16):
        sampler = LevelWallSampler(grid, cuts, free, level=lev, jitter=jitter, seed=seed)
        worst = max(len(sampler.tile(idx)) for idx in grid.indices())
        if worst <= WALL_POINTS or all((2 << lev) >= np.diff(c).max() for c in cuts):
            return sampler, worst
    return sampler, worst


def _level_walls(level, spheres, r, level_options, vgrid, plan, lo, hi):
    """The :class:`LevelWalls` the tiles snap to (None with ``snap`` False):
    a single build's search distance (the reach and two blocks and a
    voxel) with blocks :data:`regn.levels.tiles.BLOCKS_OUT` times the
    planned ones."""
    from ..levels.tiles import BLOCKS_OUT, LevelWalls
    if not level_options.get("snap", True):
        return None
    reach = float(r) + 0.5 * float(level_options.get("crack") or 0.0)
    block = BLOCKS_OUT * (1 << plan) * float(vgrid.h.max())
    return LevelWalls(level, spheres, reach, reach + 2.0 * (block + float(vgrid.h.max())),
                      lo, hi)


def level_plan(bbox, obstacles, level, tile_size, r, options, level_options, progress=None):
    """``(lo, hi, grid, jobs, report)`` of a level's world (module docstring)."""
    from ..levels.build import level_solid, no_free_space, nothing_fits
    from ..levels.route import merged
    from ..levels.solid import DEFAULT_CAVITIES, MAX_VOXELS
    from ..levels.tetra import jitter_size
    known = {"crack", "voxel_size", "max_voxels", "cavities", "min_block", "snap"}
    if set(level_options) - known:
        raise BuildError(f"unknown level options: {', '.join(sorted(set(level_options) - known))}")
    level, spheres = merged(level, obstacles)
    free, vgrid, stats = level_solid(
        bbox, level, spheres=spheres, agent_radius=r, crack=level_options.get("crack") or 0.0,
        voxel_size=level_options.get("voxel_size"),
        max_voxels=level_options.get("max_voxels") or MAX_VOXELS,
        cavities=level_options.get("cavities") or DEFAULT_CAVITIES, progress=progress)
    if not free.any():
        raise no_free_space(stats)
    lo, hi = snapped_box(*(np.asarray(b, np.float64) for b in stats["bbox"]))
    from ..levels.build import min_level_for
    leaves = _leaf_masks(free)
    if not any(mask.any() for lev, mask in leaves if lev >= 1):
        # no 2x2x2 block free anywhere: a sheet (levels.build._refine says why)
        raise nothing_fits(stats)
    if level_options.get("min_block") is not None:
        plan = min_level_for(level_options["min_block"], vgrid)
        share = None
    else:
        plan, share = plan_level(leaves, stats["free_voxels"])
    jitter = jitter_size(vgrid)
    auto = tile_size is None or (isinstance(tile_size, str) and tile_size == "auto")
    lattice = corner_lattice(leaves, vgrid.shape, plan) if auto else None
    del leaves
    points = int(lattice.sum()) if auto else 0
    if auto:
        cuts, grid, sampler, worst = _auto_cuts(lattice, vgrid, lo, hi, free, jitter,
                                                options["seed"])
    else:
        n = tile_counts(vgrid, tile_size)
        size = np.broadcast_to(np.asarray(tile_size, np.float64), (3,))
        cuts = [_cuts(vgrid.shape[k], int(n[k]), size[k] / vgrid.h[k]) for k in range(3)]
        grid = tile_planes(vgrid, lo, hi, cuts)
        sampler, worst = wall_sampler(grid, cuts, free, jitter, options["seed"])
    del lattice
    tile_options = dict(options, jitter=jitter, source=level.name,
                        min_block=level_options.get("min_block"))
    tile_options.pop("detail", None)
    walls = _level_walls(level, spheres, r, level_options, vgrid, plan, lo, hi)

    def jobs():
        for idx in grid.indices():
            tlo, thi = grid.box(idx)
            block = free[cuts[0][idx[0]]:cuts[0][idx[0] + 1], cuts[1][idx[1]]:cuts[1][idx[1] + 1],
                         cuts[2][idx[2]]:cuts[2][idx[2] + 1]]
            near = None if walls is None else walls.tile(tlo, thi)
            yield TileJob(idx, tlo, thi, [], dict(tile_options, free=np.array(block),
                                                  boundary=sampler.tile(idx), walls=near),
                          level_tile_builder)
    seconds = stats.pop("seconds")
    stats.update({"planned_block": float((1 << plan) * vgrid.h.max()),
                  "planned_block_share": share, "planned_points": points,
                  "wall_level": sampler.level, "wall_points_max": int(worst),
                  "tile_voxels": [int(np.diff(c).max()) for c in cuts],
                  "solid_seconds": seconds["solid"]})
    return lo, hi, grid, jobs(), {"level": stats}
