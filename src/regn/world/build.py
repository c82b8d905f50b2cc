"""``regn.world.build``: a world of REGN tiles and its manifest.

    world = regn.world.build(((-25e4,) * 3, (25e4,) * 3), rocks, out="w/world.json",
                             tile_size=100e3, workers=2)

The box is cut into a grid of tiles — of ``tile_size`` metres (a number or
three), or, with ``tile_size="auto"`` (the default), the fewest whose
estimated sample fits one REGN at the detail asked. Each tile is built by
the tile builder (:mod:`regn.world.tiles`) from the obstacles meeting it,
with wall points shared with its neighbours (:mod:`regn.world.faces`), on
``workers`` processes or a dask cluster (``client``: a ``Client`` or a
scheduler address). The tiles are written beside the manifest as they
finish (atomically; an existing file only with ``force``); then the links
between neighbours and the portal nodes and their costs
(:mod:`regn.world.links`) go into the manifest, written last.
"""

from __future__ import annotations

import os
import time

import numpy as np

from .._atomic import atomic_write, check_destination
from ..builder.frame import check_float32_box
from ..builder.obstacles import check_seed
from ..builder.world import BASE_LATTICE
from ..errors import BuildError, RegnError
from ..format.reader import parse
from ..mesh import Mesh
from . import links as L
from .estimate import tile_samples
from .faces import WallSampler
from .grid import TileGrid
from .manifest import Link, Manifest, Tile, sha256_of
from .tiles import MARGIN_REL, TileJob, node_cost_job, obstacles_near, run_jobs

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


def _check_outputs(out, names, force):
    if not os.fspath(out).lower().endswith(".json"):
        raise RegnError(f"{out}: a world's manifest is a .json file")
    d = os.path.dirname(os.path.abspath(out))
    os.makedirs(d, exist_ok=True)
    for p in [out, *(os.path.join(d, n) for n in names.values())]:
        try:
            check_destination(p, overwrite=force)
        except OSError as e:
            raise RegnError(str(e)) from None
    return d


class _Tiles:
    """The written tiles, read back a few at a time (for linking)."""

    def __init__(self, directory, names, keep=8):
        self.directory, self.names, self.keep = directory, names, keep
        self.cache = {}

    def __getitem__(self, idx):
        if idx not in self.cache:
            if len(self.cache) >= self.keep:
                self.cache.pop(next(iter(self.cache)))
            with open(os.path.join(self.directory, self.names[idx]), "rb") as fh:
                self.cache[idx] = Mesh.from_parts(parse(fh.read()))
        return self.cache[idx]


def _link(grid, meshes, ids):
    """Every link and portal node: (links, node_link, node_faces, node_points,
    coverage: linked / wall faces)."""
    links, node_link, node_faces, node_points = [], [], [], []
    walls = linked = 0
    for idx in grid.indices():
        for axis in range(3):
            nxt = list(idx)
            nxt[axis] += 1
            nxt = tuple(nxt)
            if nxt[axis] >= grid.n[axis]:
                continue
            a, b = meshes[idx], meshes[nxt]
            plane = grid.planes[axis][nxt[axis]]
            pairs = L.link_faces(a, b, axis, plane)
            na, nb, nl = L.wall_coverage(a, b, axis, plane, pairs)
            walls, linked = walls + na + nb, linked + 2 * nl
            lo, hi = grid.box(idx)
            rows, pts = L.portal_nodes(a, pairs, axis, lo, hi)
            for row, p in zip(rows, pts):
                node_link.append(len(links))
                node_faces.append(pairs[row])
                node_points.append(p)
            links.append(Link(ids[idx], ids[nxt], axis, float(plane), pairs))
    return (links, np.array(node_link, np.int64),
            np.array(node_faces, np.int64).reshape(-1, 2),
            np.array(node_points).reshape(-1, 3), linked / max(walls, 1))


def _node_tables(manifest, directory, names, grid, workers, client, threads=None):
    """Each tile's nodes and their costs inside it, and its query structures
    (:mod:`regn.world.prepared`), one job a tile."""
    from .prepared import sidecar_path
    jobs = []
    for i, idx in enumerate(grid.indices()):
        t = manifest.tiles[i]
        nodes, faces = [], []
        for n, (li, f) in enumerate(zip(manifest.node_link, manifest.node_faces)):
            lk = manifest.links[li]
            if i in (lk.a, lk.b):
                nodes.append(n)
                faces.append(int(f[0] if lk.a == i else f[1]))
        t.nodes = np.array(nodes, np.int64)
        t.node_costs = np.zeros((0, 0))
        jobs.append((i, os.path.join(directory, names[idx]), faces))

    def with_bytes():
        for i, path, faces in jobs:
            with open(path, "rb") as fh:
                yield i, fh.read(), faces, manifest.tiles[i].sha256

    def done(res):
        manifest.tiles[res[0]].node_costs = res[1]
        # the tile's query structures beside it (regn.world.prepared)
        atomic_write(sidecar_path(manifest, res[0]), res[2], overwrite=True)

    run_jobs(with_bytes(), workers=workers, client=client, on_done=done, fn=node_cost_job,
             threads=threads)


def _summary(results, grid, seconds, link_cover):
    """The world's build report, from the tiles'."""
    reps = [results[idx]["report"] for idx in grid.indices()]
    vols = np.array([np.prod(np.subtract(*grid.box(idx)[::-1])) for idx in grid.indices()])
    free = np.array([r.get("free_fraction") or 0.0 for r in reps]) * vols
    cov = np.array([r.get("coverage") or 0.0 for r in reps])
    per_tile = [{"index": list(idx), "seconds": results[idx]["seconds"],
                 "peak_rss": results[idx]["peak_rss"], "vertices": r.get("vertices"),
                 "tets": r.get("tets"), "faces": r.get("faces"), "detail": r.get("detail"),
                 "lattice_detail": r.get("lattice_detail"),
                 "coverage": r.get("coverage"), "obstacles": r.get("obstacles")}
                for idx, r in zip(grid.indices(), reps)]
    return {"tiles": len(reps), "grid": list(grid.n),
            "coverage": float((cov * free).sum() / free.sum()) if free.sum() > 0 else None,
            "linked_wall_fraction": link_cover,
            "tets": int(sum(r.get("tets", 0) for r in reps)),
            "faces": int(sum(r.get("faces", 0) for r in reps)),
            "seconds": seconds, "per_tile": per_tile}


def _obstacle_plan(lo, hi, obstacles, tile_size, r, detail, options, builder):
    """``(grid, jobs, report)`` of a world of obstacles."""
    grid = choose_grid(lo, hi, tile_size, obstacles, r, detail)
    sampler = WallSampler(grid, obstacles, agent_radius=r,
                          detail=1.0 if detail is None else detail, seed=options["seed"],
                          lattice_detail=options["lattice_detail"])

    def jobs():
        for idx in grid.indices():
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
    ``cavities``, ``min_block``: as :func:`regn.levels.generate_level`'s).
    ``progress(stage, fraction)`` is called as tiles finish. ``threads``:
    each local worker's threads (default: the cores shared out among the
    workers, :func:`regn.world.tiles.worker_threads`; with ``workers=1``
    and no ``threads`` the tiles are built in this process, on every
    core)."""
    t0 = time.perf_counter()
    check_seed(seed)
    obstacles, r = list(obstacles or ()), float(agent_radius)
    _check_outputs(out, {}, force)
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
    directory = _check_outputs(out, names, force)
    n_jobs = int(np.prod(grid.n))
    t1 = time.perf_counter()
    results = {}

    def done(res):
        data = res.pop("data")
        atomic_write(os.path.join(directory, names[res["index"]]), data, overwrite=force)
        res["sha256"], res["bytes"] = sha256_of(data), len(data)
        results[res["index"]] = res
        if progress is not None:
            progress("tiles", len(results) / n_jobs)

    run_jobs(jobs, workers=workers, client=client, on_done=done, threads=threads)
    t2 = time.perf_counter()
    ids = {idx: i for i, idx in enumerate(grid.indices())}
    tiles = []
    for idx in grid.indices():
        rep = results[idx]["report"]
        tlo, thi = grid.box(idx)
        tiles.append(Tile("_".join(map(str, idx)), idx, tlo, thi, names[idx],
                          results[idx]["sha256"], results[idx]["bytes"],
                          int(rep.get("tets", 0)), int(rep.get("faces", 0))))
    meshes = _Tiles(directory, names)
    links, node_link, node_faces, node_points, cover = _link(grid, meshes, ids)
    manifest = Manifest(os.fspath(out), lo, hi, grid.n, grid.tile_extent, tiles, links,
                        node_link, node_faces, node_points, r, detail, int(seed))
    meshes.cache.clear()
    _node_tables(manifest, directory, names, grid, workers, client, threads)
    t3 = time.perf_counter()
    manifest.build = _summary(results, grid, {"sample_walls": t1 - t0, "tiles": t2 - t1,
                                              "links": t3 - t2, "total": t3 - t0}, cover)
    manifest.build.update(extra)
    atomic_write(out, manifest.dumps(), overwrite=force)
    if progress is not None:
        progress("done", 1.0)
    return manifest
