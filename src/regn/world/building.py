"""``regn.world.build`` (this module is ``building``: a package attribute
named as its function would be replaced by the module once imported): a
world of REGN tiles and its manifest.

    world = regn.world.build(((-25e4,) * 3, (25e4,) * 3), rocks, out="w/world.json",
                             tile_size=100e3, workers=2)

The box is cut into a grid of tiles — of ``tile_size`` metres (a number or
three), or, with ``tile_size="auto"`` (the default), the fewest whose
estimated sample fits one REGN at the detail asked. Each tile is built by
the tile builder (:mod:`regn.world.tiles`) from the obstacles meeting it,
with wall points shared with its neighbours (:mod:`regn.world.faces`), on
``workers`` processes or a dask cluster (``client``: a ``Client`` or a
scheduler address), one pool for the whole build
(:mod:`regn.world.schedule`: the tiles largest first, each tile's node
table as soon as its neighbours are built). The tiles are written beside
the manifest as they finish (atomically; an existing file only with
``force``; the manifest's folder is made if its parent exists); the
links between neighbours and the portal nodes and their costs
(:mod:`regn.world.links`) go into the manifest, written last.
Rebuilding over a world with ``force``, the files of the old manifest's
tiles (and their ``.query`` files) that the new world does not use are
removed once the new manifest is written (no other file of the folder;
a failed build removes none).
"""

from __future__ import annotations

import os
import time

import numpy as np

from .._atomic import IsAnInput, atomic_write, check_destination
from ..builder.frame import check_float32_box
from ..builder.obstacles import check_seed, checked_obstacles
from ..builder.world import BASE_LATTICE
from ..errors import BuildError, RegnError
from .estimate import tile_samples
from .faces import WallSampler
from .grid import TileGrid
from .manifest import Manifest, Tile
from .schedule import PoolStop, WorldJobs, run_world_jobs, start_pool
from .tiles import MARGIN_REL, TileJob, obstacles_near

#: A tile's estimated sample (vertices, :mod:`regn.world.estimate`) an
#: automatic grid keeps this share of its tiles under (a tile over it
#: lowers its own detail).
TILE_VERTEX_BUDGET = 7500
TILE_QUANTILE = 0.95
#: The most tiles an automatic grid tries per axis.
MAX_TILES_PER_AXIS = 64
#: The interior and wall lattice of a tile built at a given detail is at
#: most this detail's (about 13 cells a tile axis): what is left of a REGN's
#: budget goes to the obstacles' shells, which set the coverage.
WORLD_LATTICE_DETAIL = 2.0


def lattice_detail(detail):
    """The tiles' lattice detail at a world's ``detail`` (None: the detail's)."""
    return None if detail is None else min(float(detail), WORLD_LATTICE_DETAIL)


def choose_grid(lo, hi, tile_size, obstacles, r, detail):
    """The :class:`TileGrid` of ``tile_size`` (metres, one or three), or the
    coarsest of near-cubic tiles whose estimated sample fits."""
    ext = hi - lo
    if tile_size is not None and tile_size != "auto":
        size = np.broadcast_to(np.asarray(tile_size, np.float64), (3,))
        if not np.all(np.isfinite(size) & (size > 0)):
            raise BuildError(f"tile size must be > 0 m, got {tile_size}")
        n = np.maximum(1, np.ceil(ext / size - 1e-9)).astype(np.int64)
        if np.prod(n) > MAX_TILES_PER_AXIS ** 3:
            raise BuildError(f"a tile size of {tile_size} m makes {int(np.prod(n))} tiles, "
                             f"more than {MAX_TILES_PER_AXIS ** 3}")
        return TileGrid(lo, hi, n)
    d = 1.0 if detail is None else float(detail)
    lattice = d if detail is None else lattice_detail(detail)

    def fits(m):
        n = np.maximum(1, np.round(ext / (ext.max() / m))).astype(np.int64)
        grid = TileGrid(lo, hi, n)
        h = float(grid.tile_extent.max()) / (BASE_LATTICE * d ** (1 / 3))
        counts = tile_samples(grid, h, obstacles, r, d, lattice)
        return grid, float(np.quantile(counts, TILE_QUANTILE)) <= TILE_VERTEX_BUDGET

    # the first guess from one tile's count; then up (or down) one at a time
    m = min(MAX_TILES_PER_AXIS, max(1, int(np.ceil(
        (tile_samples(TileGrid(lo, hi, (1, 1, 1)), float(ext.max()) / (BASE_LATTICE * d ** (1 / 3)),
                      obstacles, r, d, lattice).sum() / TILE_VERTEX_BUDGET) ** (1 / 3)))))
    grid, ok = fits(m)
    while not ok and m < MAX_TILES_PER_AXIS:
        m += 1
        grid, ok = fits(m)
    if not ok:
        raise BuildError(f"no grid of up to {MAX_TILES_PER_AXIS} tiles an axis fits the "
                         "obstacles at this detail: give --tile-size, or a lower --detail")
    while m > 1:
        smaller, ok = fits(m - 1)
        if not ok:
            break
        grid, m = smaller, m - 1
    return grid


def _names(out, grid):
    """Tile file names beside the manifest ``out``: ``STEM_i_j_k.rgn``."""
    stem = os.path.splitext(os.path.basename(out))[0]
    return {idx: f"{stem}_{idx[0]}_{idx[1]}_{idx[2]}.rgn" for idx in grid.indices()}


class OutputExists(RegnError):
    """A file the build would write exists (and ``force`` is not given):
    ``path`` names it."""

    def __init__(self, path):
        super().__init__(f"{path} exists (refusing to overwrite it; force=True does)")
        self.path = os.fspath(path)


def _check_outputs(out, names, force, make_folder=False):
    """The manifest's folder; RegnError if the manifest or a tile of
    ``names`` may not be written (:class:`OutputExists` for an existing
    one without ``force``). The folder itself may be missing (a world is a
    folder of files: the build makes it, ``make_folder``), its parent not."""
    if not os.fspath(out).lower().endswith(".json"):
        raise RegnError(f"{out}: a world's manifest is a .json file")
    d = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(d):
        shown = os.path.dirname(os.fspath(out))
        if os.path.exists(d):
            raise RegnError(f"{out}: cannot write: {shown} is not a directory")
        if not os.path.isdir(os.path.dirname(d)):
            raise RegnError(f"{out}: cannot write: directory {os.path.dirname(shown)} "
                            "does not exist")
        if not make_folder:
            return d
        os.mkdir(d)
    for p in [out, *(os.path.join(d, n) for n in names.values())]:
        try:
            check_destination(p, overwrite=force)
        except IsAnInput as e:
            raise RegnError(str(e)) from None
        except FileExistsError:
            raise OutputExists(p) from None
        except OSError as e:
            raise RegnError(str(e)) from None
    return d


def _old_tiles(out):
    """The files of the world the manifest ``out`` describes now (its tiles
    and their ``.query`` files), as absolute paths: those beside it only
    (a tile named with a folder is never the build's own). Empty when there
    is no such manifest, or it cannot be read as one."""
    import json
    try:
        with open(out, "rb") as fh:
            doc = json.loads(fh.read(64 << 20))
        files = [t["file"] for t in doc["tiles"]] if doc.get("format") == "regn-world" else []
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return set()
    names = [f for f in files if isinstance(f, str) and f == os.path.basename(f)
             and f not in ("", ".", "..")]
    return _tile_files(os.path.dirname(os.path.abspath(out)), names)


def _tile_files(d, names):
    """The tiles ``names`` in folder ``d`` and their ``.query`` files (absolute)."""
    from .prepared import SUFFIX
    return {os.path.join(d, n) for f in names for n in (f, os.path.splitext(f)[0] + SUFFIX)}


def _remove_unused(old, manifest):
    """Remove the files of ``old`` (:func:`_old_tiles`) the new world
    ``manifest`` does not use: a rebuild with other tiles leaves none of
    the last one's. Called once the new world is written whole."""
    used = _tile_files(os.path.dirname(os.path.abspath(manifest.path)),
                       [t.file for t in manifest.tiles])
    removed = []
    for p in sorted(old - used):
        try:
            os.unlink(p)
        except FileNotFoundError:
            continue
        removed.append(os.path.basename(p))
    return removed


def _summary(results, grid, seconds, link_cover, link_area_cover=None):
    """The world's build report, from the tiles'."""
    reps = [results[idx]["report"] for idx in grid.indices()]
    vols = np.array([np.prod(np.subtract(*grid.box(idx)[::-1])) for idx in grid.indices()])
    free = np.array([r.get("free_fraction") or 0.0 for r in reps]) * vols
    cov = np.array([r.get("coverage") or 0.0 for r in reps])
    per_tile = [{"index": list(idx), "seconds": results[idx]["seconds"],
                 "peak_rss": results[idx]["peak_rss"], "vertices": r.get("vertices"),
                 "tets": r.get("tets"), "faces": r.get("faces"), "detail": r.get("detail"),
                 "lattice_detail": r.get("lattice_detail"),
                 "coverage": r.get("coverage"), "obstacles": r.get("obstacles"),
                 "snapped_vertices": r.get("snapped_vertices"),
                 "snap_seconds": (r.get("seconds") or {}).get("snap")}
                for idx, r in zip(grid.indices(), reps)]
    return {"tiles": len(reps), "grid": list(grid.n),
            "coverage": float((cov * free).sum() / free.sum()) if free.sum() > 0 else None,
            "linked_wall_fraction": link_cover,
            "linked_wall_area_fraction": link_area_cover,
            "tets": int(sum(r.get("tets", 0) for r in reps)),
            "faces": int(sum(r.get("faces", 0) for r in reps)),
            "seconds": seconds, "per_tile": per_tile}


def _obstacle_plan(lo, hi, obstacles, tile_size, r, detail, options, builder):
    """``(grid, jobs, report)`` of a world of obstacles."""
    grid = choose_grid(lo, hi, tile_size, obstacles, r, detail)
    sampler = WallSampler(grid, obstacles, agent_radius=r,
                          detail=1.0 if detail is None else detail, seed=options["seed"],
                          lattice_detail=options["lattice_detail"])

    # the largest tiles first (their estimated samples): the last to
    # finish are short, and no worker waits long for the others
    d = 1.0 if detail is None else float(detail)
    lattice = d if detail is None else lattice_detail(detail)
    h = float(grid.tile_extent.max()) / (BASE_LATTICE * d ** (1 / 3))
    weight = tile_samples(grid, h, obstacles, r, d, lattice)
    order = sorted(grid.indices(), key=lambda idx: -float(weight[idx]))

    def jobs():
        for idx in order:
            tlo, thi = grid.box(idx)
            near = obstacles_near(obstacles, tlo, thi, r, MARGIN_REL * float((thi - tlo).max()))
            yield TileJob(idx, tlo, thi, near, dict(options, boundary=sampler.tile(idx)),
                          builder)
    return grid, jobs(), {}


def build(bbox, obstacles=(), *, out, tile_size="auto", agent_radius=0.0, detail=None,
          dims=None, seed=0, workers=None, client=None, builder=None,
          coverage_samples=200_000, force=False, progress=None, level=None,
          level_options=None, threads=None):
    """Build a world of tiles into the manifest ``out`` (``DIR/NAME.json``)
    and its tiles ``DIR/NAME_i_j_k.rgn``; returns the :class:`Manifest`
    written (open it with :func:`regn.load`). See the module docstring;
    the other options are :func:`regn.generate`'s, for every tile.
    ``level``: a level (a :class:`regn.levels.Soup`, :class:`regn.levels.Voxels`
    or a soup file's path; ``bbox`` None: its bounds), built tile by tile by
    the level builder (:mod:`regn.world.level_plan`), with
    ``level_options`` (``crack``, ``voxel_size``, ``max_voxels``,
    ``cavities``, ``min_block``, ``snap``: as :func:`regn.levels.generate_level`'s;
    a tile's vertices on the walls it shares do not move).
    ``progress(stage, fraction)`` is called as tiles finish. ``threads``:
    each local worker's threads (default: the cores shared out among the
    workers, :func:`regn.world.tiles.worker_threads`; with ``workers=1``
    and no ``threads`` the tiles are built in this process, on every
    core)."""
    t0 = time.perf_counter()
    check_seed(seed)
    obstacles, r = list(checked_obstacles(obstacles)), float(agent_radius)
    _check_outputs(out, {}, force)
    old = _old_tiles(out) if force else set()
    # the pool first: its processes start while the plan is made
    ex, owned, local, window = start_pool(workers, client, threads)
    stop = PoolStop(ex, owned)
    try:
        manifest = _build(t0, ex, stop, local, window, bbox, obstacles, out, tile_size, r,
                          detail, dims, seed, builder, coverage_samples, force, progress, level,
                          level_options)
    finally:
        stop.join()
    # (after the manifest: reported by the build, not kept in the file)
    manifest.build["removed"] = _remove_unused(old, manifest)
    return manifest


def _build(t0, ex, stop, local, window, bbox, obstacles, out, tile_size, r, detail, dims, seed,
           builder, coverage_samples, force, progress, level, level_options):
    options = {"agent_radius": r, "detail": detail, "dims": dims, "seed": seed,
               "coverage_samples": coverage_samples}
    if level is None:
        options["lattice_detail"] = lattice_detail(detail)
    if level is not None:
        from .level_plan import level_plan
        if detail is not None:
            raise BuildError("detail does not apply to a level (see min_block)")
        lo, hi, grid, jobs, extra = level_plan(bbox, obstacles, level, tile_size, r, options,
                                               level_options or {}, progress)
    else:
        lo, hi = check_float32_box(*(np.asarray(b, np.float64).reshape(3) for b in bbox))
        grid, jobs, extra = _obstacle_plan(lo, hi, obstacles, tile_size, r, detail, options,
                                           builder)
    names = _names(out, grid)
    directory = _check_outputs(out, names, force, make_folder=True)
    t1 = time.perf_counter()
    wj = WorldJobs(grid, directory, names, force=force, local=local)
    t_tiles = run_world_jobs(jobs, wj, ex, window, progress)
    t2 = time.perf_counter()
    stop.start()           # the workers exit while the manifest is written
    results = wj.results
    ids = {idx: i for i, idx in enumerate(grid.indices())}
    links, node_link, node_faces, node_points, cover, nodes = wj.manifest_parts(ids)
    tiles = []
    for idx in grid.indices():
        rep = results[idx]["report"]
        tlo, thi = grid.box(idx)
        tiles.append(Tile("_".join(map(str, idx)), idx, tlo, thi, names[idx],
                          results[idx]["sha256"], results[idx]["bytes"],
                          int(rep.get("tets", 0)), int(rep.get("faces", 0)),
                          nodes[idx], wj.costs[idx]))
    manifest = Manifest(os.fspath(out), lo, hi, grid.n, grid.tile_extent, tiles, links,
                        node_link, node_faces, node_points, r, detail, int(seed))
    # the tiles and the node tables run on one pool, overlapping: "tiles"
    # ends with the last tile, "links" (the node tables left) with the last job
    manifest.build = _summary(results, grid, {"sample_walls": t1 - t0, "tiles": t_tiles,
                                              "links": t2 - t1 - t_tiles,
                                              "total": t2 - t0}, cover,
                              wj.linked_area_fraction())
    manifest.build.update(extra)
    atomic_write(out, manifest.dumps(), overwrite=force)
    if progress is not None:
        progress("done", 1.0)
    return manifest
