"""``build_level``: the tetrahedra of one box of a level (a triangle soup or
voxels), and ``generate_level``: the REGN of it, with its report.

    verts, tets, report = build_level(bbox, soup_or_voxels, agent_radius=0.5)
    mesh = generate_level(bbox, soup_or_voxels, agent_radius=0.5)
    mesh.build_report

Phases: the working voxel grid over the box; the solid (:mod:`.solid`);
the pyramids; the tetrahedra at the finest octree level whose counts fit the
format (:mod:`.tetra`); the REGN (:func:`regn.build`), its grid fitted by
:mod:`regn.builder.frame`; a Monte Carlo coverage of the free voxels.
``build_level`` is what a world of tiles calls per tile box.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import BuildError, LimitError
from ..format.layout import U16_MAX
from ..geometry.tets import face_keys
from .readers import Soup, Voxels
from .solid import DEFAULT_CAVITIES, MAX_VOXELS, free_grid, working_grid
from .tetra import (
    free_pyramid,
    leaf_corners,
    penetration,
    solid_pyramid,
    tetrahedralize,
)

#: Tolerance of the safety promise: no point of a kept tetrahedron deeper
#: than this (metres) inside the input's solid grown by the agent's radius.
DEPTH_TOL = 0.01
#: Points a first try may have (about 9 faces each come out of Delaunay).
POINT_BUDGET = 7_000
#: A partial level's first try aims its faces at this share of the limit
#: (from the coarser level's faces a point), the next ones at AIM (along the
#: line through the counts measured), in at most FIT_ROUNDS tries.
FILL = 0.94
AIM = 0.97
FIT_ROUNDS = 4
#: Where a level too big for one REGN is pointed.
TILES_HINT = "regn.world.build(..., level=...); docs/worlds.md"
#: Below this coverage a single build's report suggests a world of tiles.
WORLD_HINT_COVERAGE = 0.9
#: Coverage samples, unless told, and per chunk.
COVERAGE_SAMPLES = 200_000


def _box(bbox, level):
    """``(lo, hi)`` float64: the box given, or the level's bounds."""
    if bbox is None:
        if isinstance(level, Voxels):
            lo, hi = level.bounds
        else:
            lo, hi = level.verts.min(axis=0), level.verts.max(axis=0)
            pad = 0.01 * float(np.linalg.norm(hi - lo)) + 1e-3
            lo, hi = lo - pad, hi + pad
    else:
        lo, hi = (np.asarray(b, np.float64).reshape(3) for b in bbox)
    from ..builder.frame import check_float32_box
    from ..builder.world import _f32_inward
    lo, hi = check_float32_box(lo, hi)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo)):
        raise BuildError(f"box must be finite with max > min, got {lo} .. {hi}")
    return _f32_inward(lo, hi)


def _checked(level, agent_radius, crack):
    if not isinstance(level, (Soup, Voxels)):
        raise BuildError("a level is a Soup or Voxels (see regn.levels.read_soup, "
                         f"read_voxels), got {type(level).__name__}")
    for name, x in (("agent_radius (--agent-radius)", agent_radius), ("crack (--crack)", crack)):
        if not (np.isfinite(float(x)) and float(x) >= 0):
            raise BuildError(f"{name} must be >= 0, got {x}")
    if isinstance(level, Soup):
        t = np.asarray(level.tris)
        if t.ndim != 2 or t.shape[1] != 3 or (len(t) and (t.min() < 0 or
                                                          t.max() >= len(level.verts))):
            raise BuildError(f"{level.name}: triangle indices out of range")
        if not np.isfinite(level.verts).all():
            raise BuildError(f"{level.name}: a vertex is not finite")


def _counts(tets, n_verts):
    n_faces = len(np.unique(face_keys(tets))) if len(tets) else 0
    return {"vertices": int(n_verts), "tetrahedra": len(tets), "faces": n_faces}


def _over(counts):
    what, n = max(counts.items(), key=lambda kv: kv[1])
    return (what, n) if n > U16_MAX else (None, n)


def _start_level(levels):
    """The finest octree level whose leaf corners are within the budget,
    looked for from the coarsest down (the corners grow finer down: the
    finest level's, all of them, made 8 rows a leaf, were the build's peak
    memory, 684 MB of the demo hangar's)."""
    for lev in range(len(levels) - 1, -1, -1):
        if len(leaf_corners(levels, lev)) > POINT_BUDGET:
            return min(lev + 1, len(levels) - 1)
    return 0


def _too_big(lev, grid, what, n, fits):
    block = (1 << lev) * grid.h.max()
    hint = f"--min-block {fits:.4g} fits" if fits else "nothing coarser fits either"
    return LimitError(
        f"the level does not fit one REGN with free blocks down to {block:.4g} m "
        f"(--min-block): it needs {n} {what}, more than the format's u16 limit of "
        f"{U16_MAX}. Give a larger --min-block ({hint}), a smaller --box, or build it as a "
        f"world of tiles at this --min-block: -o DIR/world.json ({TILES_HINT})",
        what=what, count=n)


def _try(levels, pyramid, grid, lev, seed, fraction=1.0, boundary=None, jitter=None):
    verts, tets, stats = tetrahedralize(levels, pyramid, grid, lev, seed, fraction, boundary,
                                        jitter)
    counts = _counts(tets, len(verts))
    return verts, tets, stats, counts, _over(counts)


def _refine(levels, pyramid, grid, lev, seed, best, tick, boundary=None, jitter=None):
    """The best fit with part of level ``lev - 1`` added: the share of its
    leaves aimed so the faces come to :data:`FILL` of the limit."""
    verts, tets, stats, counts = best
    n_here = stats["sample_points"]
    n_finer = len(leaf_corners(levels, lev - 1))
    if counts["faces"]:
        per_point = counts["faces"] / max(n_here, 1)
        fraction = (FILL * U16_MAX / per_point - n_here) / max(n_finer - n_here, 1)
    elif lev - 1 == 0:
        # no 2x2x2 block of free voxels anywhere: free space under three voxels
        # thick, a sheet the voxels' corners would only fill with slivers
        return verts, tets, stats
    else:       # free space thinner than this level's blocks: as many points as
        # the format holds vertices; the counts then say more
        fraction = (FILL * U16_MAX - n_here) / max(n_finer - n_here, 1)
    for _ in range(FIT_ROUNDS):
        fraction = min(fraction, 1.0)
        if fraction <= 0.02:
            break
        tick("tetrahedralize", 0.6)
        v, t, st, _c, (what, n) = _try(levels, pyramid, grid, lev - 1, seed, fraction,
                                       boundary, jitter)
        if what is None:
            return v, t, st
        # the counts grow close to in proportion with the share taken: the
        # next share is read off the line from this level's own count (a
        # step down by the ratio alone took three or four more tries)
        base = counts[what]
        fraction *= (AIM * U16_MAX - base) / max(n - base, 1)
    return verts, tets, stats


def _fit(levels, pyramid, grid, min_level, seed, tick, boundary=None, jitter=None):
    """``(verts, tets, stats)`` at the finest level from ``min_level`` (or the
    budget's start) up whose counts fit, then part of the next finer level
    (when not asked for a level); LimitError naming the numbers."""
    asked = min_level is not None
    lev = int(min_level) if asked else _start_level(levels)
    while lev < len(levels):
        tick("tetrahedralize", 0.4 + 0.04 * lev)
        verts, tets, stats, counts, (what, n) = _try(levels, pyramid, grid, lev, seed, 1.0,
                                                     boundary, jitter)
        if what is None:
            stats["level_chosen"] = not asked
            if asked or lev == 0:
                return verts, tets, stats
            verts, tets, stats = _refine(levels, pyramid, grid, lev, seed,
                                         (verts, tets, stats, counts), tick, boundary, jitter)
            stats["level_chosen"] = True
            return verts, tets, stats
        if asked:
            try:
                st = _fit(levels, pyramid, grid, None, seed, tick, boundary, jitter)[2]
                # a fit with part of a finer level holds only the coarser one whole
                whole = st["min_level"] + (1 if st["level_fraction"] < 1.0 else 0)
                fits = (1 << whole) * grid.h.max()
            except LimitError:
                fits = None
            raise _too_big(lev, grid, what, n, fits)
        lev += 1
    raise LimitError("the level does not fit one REGN even at its coarsest blocks: build it "
                     f"as a world of tiles: -o DIR/world.json ({TILES_HINT})")


def min_level_for(block, grid):
    """The octree level whose blocks are at least ``block`` metres."""
    if block is None:
        return None
    ratio = float(block) / float(grid.h.max())
    return max(0, int(np.ceil(np.log2(ratio) - 1e-9))) if ratio > 1 else 0


def level_solid(bbox, level, *, spheres=(), agent_radius=0.0, crack=0.0, voxel_size=None,
                max_voxels=MAX_VOXELS, cavities=DEFAULT_CAVITIES, progress=None):
    """``(free uint8 grid, grid, stats)``: the free voxels of ``bbox`` in
    ``level`` (the first phase of :func:`build_level`; a world of tiles
    takes it once, over the whole level, and hands each tile its part)."""
    t0 = time.perf_counter()
    _checked(level, agent_radius, crack)
    lo, hi = _box(bbox, level)
    if voxel_size is None and isinstance(level, Voxels):
        voxel_size = level.size
    grid = working_grid(lo, hi, voxel_size, max_voxels)
    if progress is not None:
        progress("solid", 0.0)
    slack = max(0.0, penetration(grid) - DEPTH_TOL)
    # the level's own box, where the nesting rule finds its main space: the
    # box given, else the soup's bounds (not the padding _box adds)
    extent = (lo, hi) if bbox is not None or isinstance(level, Voxels) else \
        (level.verts.min(axis=0), level.verts.max(axis=0))
    free, stats = free_grid(grid, soup=level if isinstance(level, Soup) else None,
                            voxels=level if isinstance(level, Voxels) else None,
                            spheres=spheres, cavities=cavities, extent=extent,
                            agent_radius=agent_radius, crack=crack, slack=slack)
    stats.update({"kind": "voxels" if isinstance(level, Voxels) else "soup",
                  "source": level.name, "agent_radius": float(agent_radius),
                  "crack": float(crack), "bbox": [lo.tolist(), hi.tolist()],
                  "free_voxels": int(free.sum()), "max_depth": penetration(grid),
                  "seconds": {"solid": time.perf_counter() - t0}})
    if isinstance(level, Soup):
        stats.update({"triangles_in": len(level.tris), "objects": int(level.objects)})
    else:
        stats["voxels_in"] = len(level.ijk)
    return free, grid, stats


def fit_free(free, grid, stats, *, min_block=None, seed=0, boundary=None, jitter=None,
             progress=None):
    """``(verts, tets, stats)``: the tetrahedra of the free voxels ``free``
    on ``grid`` (the second phase of :func:`build_level`; a tile's, with
    ``boundary`` its wall points and ``jitter`` its world's)."""
    def tick(phase, frac):
        if progress is not None:
            progress(phase, frac)

    seconds = stats["seconds"]
    t1 = time.perf_counter()
    tick("pyramids", 0.3)
    levels = free_pyramid(free)
    pyramid = solid_pyramid(free)
    seconds["pyramids"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    verts, tets, tstats = _fit(levels, pyramid, grid, min_level_for(min_block, grid), seed, tick,
                               boundary, jitter)
    seconds["tetrahedralize"] = time.perf_counter() - t2
    stats.update(tstats)
    stats.update({"min_block": float((1 << tstats["min_level"]) * grid.h.max()),
                  "min_block_share": tstats["level_fraction"]})
    return verts, tets, stats


def build_level(bbox, level, *, spheres=(), agent_radius=0.0, crack=0.0, voxel_size=None,
                min_block=None, max_voxels=MAX_VOXELS, cavities=DEFAULT_CAVITIES, seed=0,
                snap=True, progress=None):
    """``(verts (V,3) float32-exact float64, tets (T,4) int64, report)``: the
    free space of ``bbox`` (``(min, max)``, default the level's bounds) in
    ``level`` (a :class:`~regn.levels.readers.Soup` or
    :class:`~regn.levels.readers.Voxels`) for an agent of ``agent_radius``.

    ``spheres``: balls (:class:`~regn.builder.obstacles.Sphere`) that are
    solid too. ``crack``: gaps up to this wide close (besides those narrower than the
    agent). ``voxel_size``: the working voxels (default: as fine as
    ``max_voxels`` allows; a voxel input's own size when it fits).
    ``cavities``: what a free region walled in on every side is: decided by
    how many closed shells enclose it against the level's main space
    (``"nested"``, the default: a sealed room's inside is air, a crate's in
    it solid, a closed rock's in open space solid), ``"solid"``, ``"air"``,
    or by the soup's ``"winding"`` number (see :mod:`.solid`); a voxel
    input's are air. ``min_block``: the smallest free block (metres) the
    tetrahedra keep (default: the finest that fits the format; a given one
    is kept, or refused with the numbers). ``snap``: move the boundary's
    vertices out to the clearance surface (:mod:`.snap`; else they stay on
    the corners of the free blocks). Raises :class:`LimitError` when nothing fits.
    """
    free, grid, stats = level_solid(bbox, level, spheres=spheres, agent_radius=agent_radius,
                                    crack=crack, voxel_size=voxel_size,
                                    max_voxels=max_voxels, cavities=cavities,
                                    progress=progress)
    if not free.any():
        raise no_free_space(stats)
    verts, tets, stats = fit_free(free, grid, stats, min_block=min_block, seed=seed,
                                  progress=progress)
    if not len(tets):
        raise nothing_fits(stats)
    stats["_free"] = (free, grid)
    if snap:
        verts, tets = _snapped(verts, tets, stats, level, spheres, grid,
                               float(agent_radius) + 0.5 * float(crack), progress)
    return verts, tets, stats


def _snapped(verts, tets, stats, level, spheres, grid, reach, progress=None):
    """``(verts, tets)`` with the boundary moved out to the clearance
    surface (:mod:`.snap`); the walls kept in ``stats["_walls"]`` for the
    check."""
    from .snap import level_walls, snap
    t0 = time.perf_counter()
    if progress is not None:
        progress("snap", 0.7)
    # a boundary vertex is at most about a block and a voxel's diagonal
    # short of the clearance surface
    search = reach + 2.0 * (stats["min_block"] + float(grid.h.max()))
    walls = level_walls(level, spheres)
    verts, tets, sstats, moves = snap(verts, tets, walls, reach, (grid.lo, grid.hi),
                                      DEPTH_TOL, search)
    stats.update(sstats)
    stats["_walls"] = (walls, reach, *moves)
    stats["seconds"]["snap"] = time.perf_counter() - t0
    return verts, tets


def no_free_space(stats) -> BuildError:
    """The refusal of a level (or level world) whose voxels are all solid."""
    return BuildError("no free space left: every voxel of the box is solid (grown by the "
                      "agent's radius): " + _walled_in_hint(stats)
                      + "give a larger --box or a smaller --agent-radius")


def nothing_fits(stats) -> BuildError:
    """The refusal of a level whose free space holds no tetrahedron."""
    return BuildError("no tetrahedron fits the free space: " + _walled_in_hint(stats)
                      + "give a finer voxel size")


def _walled_in_hint(stats) -> str:
    """What to say when regions walled in on every side were made solid (a
    sealed room's inside read as a solid block is one)."""
    n = stats.get("cavities", 0) - stats.get("cavities_free", 0)
    rule = stats.get("cavities_rule")
    if rule not in ("nested", "solid", "winding") or n <= 0:
        return ""
    other = "--cavities air keeps them all" if rule == "nested" else \
        "--cavities nested reads a sealed room's inside as air whichever way its faces point"
    default = ", the default" if rule == DEFAULT_CAVITIES else ""
    return (f"{n} region{'s' if n > 1 else ''} walled in on every side "
            f"{'were' if n > 1 else 'was'} made solid (--cavities {rule}{default}); {other}; "
            "else ")


def coverage(mesh, free, grid, samples=COVERAGE_SAMPLES, seed=0):
    """Monte Carlo over the box: ``coverage`` (free-voxel samples inside a
    tetrahedron / free-voxel samples), ``free_fraction`` and ``in_solid``
    (samples in a tetrahedron yet in a solid voxel: up to the jitter's hair
    from the cull; after the snap (:mod:`.snap`) also the space between the
    voxels' rounded-up solid and the true clearance surface)."""
    from ._tetra_kernels import points_in_grid
    rng = np.random.default_rng(seed)
    n_free = n_cov = n_solid = 0
    for start in range(0, int(samples), 1_000_000):
        p = rng.uniform(grid.lo, grid.hi, size=(min(1_000_000, samples - start), 3))
        is_free = points_in_grid(p, free, grid.lo, grid.h).astype(bool)
        inside = mesh.locate(p) >= 0
        n_free += int(is_free.sum())
        n_cov += int((inside & is_free).sum())
        n_solid += int((inside & ~is_free).sum())
    return {"coverage": n_cov / max(n_free, 1), "free_fraction": n_free / max(samples, 1),
            "coverage_samples": int(samples), "in_solid_samples": n_solid}


def _passages(mesh, free, grid):
    """Free components of the voxels (over a speck) and how many of them the
    mesh reaches, beside the mesh's own components."""
    from scipy import ndimage

    from ..geometry.graph import components
    from .solid import component_sizes
    labels, n = ndimage.label(free)
    sizes = component_sizes(labels, n)[1:]
    big = np.flatnonzero(sizes >= max(8, 1e-4 * sizes.max(initial=0))) + 1
    c = mesh.tet_points.mean(axis=1)
    lab = _labels_at(c, labels, grid)
    reached = np.intersect1d(np.unique(lab[lab > 0]), big)
    return {"free_regions": len(big), "free_regions_kept": len(reached),
            "mesh_components": int(components(mesh.neighbors)[0])}


def _labels_at(points, labels, grid):
    ijk = np.floor((points - grid.lo) / grid.h).astype(np.int64)
    ijk = np.clip(ijk, 0, np.asarray(labels.shape) - 1)
    return labels[ijk[:, 0], ijk[:, 1], ijk[:, 2]]


def generate_level(bbox, level, *, spheres=(), agent_radius=0.0, crack=0.0, voxel_size=None,
                   min_block=None, dims=None, max_voxels=MAX_VOXELS, cavities=DEFAULT_CAVITIES,
                   seed=0, snap=True, progress=None,
                   coverage_samples=COVERAGE_SAMPLES):
    """A :class:`regn.Mesh` of a level's free space (see :func:`build_level`),
    with ``mesh.build_report``: counts, the solid's figures (voxel size,
    dilation, cavities), the repairs found in a soup, the octree level
    kept, coverage of the free voxels, free regions kept, the clearance
    check (0 = no tetrahedron meets a solid voxel), seconds per phase."""
    from .repairs import soup_repairs
    t0 = time.perf_counter()
    verts, tets, report = build_level(bbox, level, spheres=spheres, agent_radius=agent_radius,
                                      crack=crack,
                                      voxel_size=voxel_size, min_block=min_block,
                                      max_voxels=max_voxels, cavities=cavities, seed=seed,
                                      snap=snap, progress=progress)
    free, grid = report.pop("_free")
    mesh = finish(verts, tets, report, free, grid, dims=dims,
                  coverage_samples=coverage_samples, walls=report.pop("_walls", None),
                  progress=progress)
    report = mesh.build_report
    if isinstance(level, Soup):
        t3 = time.perf_counter()
        report["repairs"] = soup_repairs(level)
        report["seconds"]["repairs"] = time.perf_counter() - t3
    report["seconds"]["total"] = time.perf_counter() - t0
    if progress:
        progress("done", 1.0)
    return mesh


def finish(verts, tets, report, free, grid, *, dims=None, coverage_samples=COVERAGE_SAMPLES,
           jitter=None, bbox=None, walls=None, progress=None):
    """The :class:`regn.Mesh` of ``verts``, ``tets`` in the box of ``grid``,
    its ``build_report`` the ``report`` with the coverage of ``free``, the
    free regions kept, the clearance check and the counts. ``bbox``: the
    REGN's box exactly (a tile's), when not the grid's. ``walls``: the
    snap's ``(walls, reach, moved vertices before, after)`` (:func:`_clearance`)."""
    from ..builder.tetmesh import build
    seconds = report["seconds"]
    if progress:
        progress("build", 0.8)
    t1 = time.perf_counter()
    mesh = build(verts, tets, bbox=(grid.lo, grid.hi) if bbox is None else bbox, dims=dims)
    seconds["regn_build"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    if progress:
        progress("coverage", 0.9)
    report.update(coverage(mesh, free, grid, coverage_samples) if coverage_samples else {})
    report.update(_passages(mesh, free, grid))
    report.update(_clearance(mesh, free, grid, jitter, walls))
    report["clearance_ok"] = report["clearance_violations"] == 0
    seconds["check"] = time.perf_counter() - t2
    report.update(mesh.build_report)
    report.update({"vertices": int(mesh.n_vertices), "tets": int(mesh.n_tets),
                   "faces": int(mesh.n_faces), "cells": int(mesh.n_cells),
                   "refs": int(mesh.n_refs)})
    mesh.build_report = report
    return mesh


def _clearance(mesh, free, grid, jitter=None, walls=None):
    """``clearance_violations``: tetrahedra meeting a solid voxel (the cull's
    promise); after a snap, those nearer the input than the reach less
    :data:`DEPTH_TOL` (solid to solid, exact), and those meeting a solid
    voxel that hold no snapped vertex or whose vertices' moves came nearer
    (the moved tetrahedra are on the free side only through them)."""
    from .tetra import cull
    pts = mesh.vertices.astype(np.float64)
    if not mesh.n_tets:
        return {"clearance_violations": 0}
    in_solid = cull(pts, mesh.tets, solid_pyramid(free), grid, jitter)
    if walls is None:
        return {"clearance_violations": int(in_solid.sum())}
    from .snap import clearance_check, move_check
    walls, reach, before, after = walls
    near, least = clearance_check(pts, mesh.tets, walls, reach, DEPTH_TOL)
    snapped, bad_moves = move_check(pts, before, after, walls, reach, DEPTH_TOL)
    holds = snapped[mesh.tets].any(axis=1)
    return {"clearance_violations": int(near + (in_solid & ~holds).sum() + bad_moves),
            "clearance_least": least}
