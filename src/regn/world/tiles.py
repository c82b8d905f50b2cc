"""Building the tiles: one job a tile, on local processes or a dask cluster.

A tile is built by a *tile builder*: a function ``builder(lo, hi, obstacles,
options) -> Mesh`` taking the tile's box, the obstacles that meet it (plus a
margin) and the options (``agent_radius``, ``detail``, ``dims``, ``seed``,
``coverage_samples`` and ``boundary``, the tile's wall points of
:mod:`regn.world.faces`, which the builder must use as its whole wall
sample). :func:`sphere_tile_builder` is regn's obstacle builder
(:func:`regn.generate`); another one (a level builder for triangle soups)
plugs in the same way, as a picklable module-level function:
:func:`level_tile_builder` builds a level's tile (:mod:`regn.levels.tiles`)
from its block of the level's free voxels.

The jobs run on ``concurrent.futures`` executors: a process pool on this
machine, or a dask.distributed cluster through ``Client.get_executor()`` —
the same code, so a cluster build gives the same tiles. Each job returns the
tile's build report and its faces on the walls it shares; a local worker
writes the tile itself, a cluster's returns its bytes for the caller to
write. A worker holds one tile at a time. :func:`run_jobs` runs one kind
of job on its own pool; a world's build runs its jobs through
:mod:`regn.world.schedule`.
"""

from __future__ import annotations

import itertools
import os
import time
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass

import numpy as np

from ..builder.obstacles import Sphere
from ..errors import BuildError, LimitError, RegnError

#: Jobs submitted ahead of the workers, at most.
WINDOW = 32
#: Obstacles whose inflated bounds come this close to a tile (of its extent)
#: go to its builder.
MARGIN_REL = 0.02


@dataclass
class TileJob:
    """Everything one tile's build needs (picklable)."""
    index: tuple
    lo: np.ndarray
    hi: np.ndarray
    obstacles: list
    options: dict
    builder: object = None
    #: ``[(axis, plane), ...]``: the walls shared with a neighbour, whose
    #: faces the result carries (``"walls"``, :func:`regn.world.links.wall_record`).
    sides: tuple = ()
    #: Where the worker writes the tile itself (a local worker: the result
    #: then carries no bytes); None: the bytes go back in the result.
    path: str | None = None
    overwrite: bool = False


def sphere_tile_builder(lo, hi, obstacles, options):
    """regn's own tile builder: :func:`regn.generate` with the given walls.
    A given detail is the tile's highest: where the tile does not fit at it,
    the detail is lowered as :func:`regn.generate` lowers its own (the walls
    stay as sampled at the world's detail), and the report says which it
    took. ``options["lattice_detail"]``, if given, is the interior
    lattice's (:data:`regn.world.building.WORLD_LATTICE_DETAIL`), so the
    samples go to the obstacles' shells."""
    from ..builder.generate import generate
    from ..builder.world import NO_FREE_SPACE
    detail = options.get("detail")
    try:
        return generate((lo, hi), obstacles, agent_radius=options.get("agent_radius", 0.0),
                        dims=options.get("dims"), detail=detail, seed=options.get("seed", 0),
                        coverage_samples=options.get("coverage_samples", 200_000),
                        boundary=options["boundary"],
                        lattice_detail=options.get("lattice_detail"),
                        lower_detail=detail is not None)
    except BuildError as e:
        if str(e) != NO_FREE_SPACE:
            raise
    return _rock_tile(lo, hi, obstacles, options)


def _rock_tile(lo, hi, obstacles, options):
    """A tile where no tetrahedron stays clear of the obstacles: a REGN
    without tetrahedra (it verifies; queries find nothing there)."""
    from ..builder.obstacles import obstacles_contain
    from ..builder.tetmesh import build
    mesh = build(np.zeros((0, 3)), np.zeros((0, 4), np.int64), bbox=(lo, hi))
    n = min(int(options.get("coverage_samples", 200_000)), 100_000)
    p = np.random.default_rng(0).uniform(lo, hi, (n, 3))
    free = float((~obstacles_contain(obstacles, p, options.get("agent_radius", 0.0))).mean()) \
        if n else 0.0
    mesh.build_report = {"coverage": 0.0 if free else None, "free_fraction": free,
                         "vertices": 0, "tets": 0, "faces": 0, "detail": options.get("detail"),
                         "lattice_detail": options.get("lattice_detail"),
                         "obstacles": len(obstacles), "clearance_violations": 0,
                         "clearance_ok": True}
    return mesh


def level_tile_builder(lo, hi, obstacles, options):
    """The tile builder of a level (:mod:`regn.levels`): the tile's tetrahedra
    from its block of the level's free voxels (``options["free"]``) with its
    wall points (``options["boundary"]``), snapped to the level's triangles
    near it (``options["walls"]``, a :class:`regn.levels.tiles.TileWalls`), by
    :func:`regn.levels.tiles.build_tile`. ``obstacles`` is empty: the
    level's solid (obstacles included) is in the voxels."""
    from ..levels.tiles import build_tile
    return build_tile(lo, hi, options["free"], options["boundary"], jitter=options["jitter"],
                      seed=options.get("seed", 0), min_block=options.get("min_block"),
                      dims=options.get("dims"),
                      coverage_samples=options.get("coverage_samples", 200_000),
                      source=options.get("source"), walls=options.get("walls"))


def run_job(job: TileJob) -> dict:
    """Build one tile: ``{"index", "data" (bytes), "sha256", "bytes",
    "walls" (a :func:`regn.world.links.wall_record` of each of
    ``job.sides``), "report", "seconds", "peak_rss"}``; ``"data"`` None
    when the worker wrote the tile to ``job.path``. LimitError names the
    tile."""
    import resource
    t0 = time.perf_counter()
    builder = job.builder or sphere_tile_builder
    try:
        mesh = builder(job.lo, job.hi, job.obstacles, job.options)
    except LimitError as e:
        raise LimitError(f"tile {'_'.join(map(str, job.index))} (box {job.lo.tolist()} .. "
                         f"{job.hi.tolist()}): {e}; use smaller tiles (--tile-size)",
                         what=e.what, count=e.count) from None
    data = mesh.dumps()
    report = dict(getattr(mesh, "build_report", {}) or {})
    out = {"index": tuple(job.index), "data": data, "report": report}
    out.update(_written(job, data))
    out.update(seconds=time.perf_counter() - t0,
               peak_rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
               pid=os.getpid())
    return out


def _written(job, data):
    """The tile's sha256, size and walls (read back from its bytes, as a
    reader of the file sees it), the tile written to ``job.path`` if given."""
    from ..format.reader import parse
    from ..mesh import Mesh
    from .links import wall_record
    from .manifest import sha256_of
    out = {"sha256": sha256_of(data), "bytes": len(data), "walls": []}
    if job.sides:
        mesh = Mesh.from_parts(parse(data))
        out["walls"] = [wall_record(mesh, axis, plane) for axis, plane in job.sides]
    if job.path is not None:
        from .._atomic import atomic_write
        atomic_write(job.path, data, overwrite=job.overwrite)
        out["data"] = None
    return out


def obstacles_near(obstacles, lo, hi, agent_radius, margin):
    """The obstacles whose inflated bounds meet the box ``lo``..``hi``
    grown by ``margin``."""
    out = []
    glo, ghi = lo - margin, hi + margin
    for ob in obstacles:
        if isinstance(ob, Sphere):
            c, r = np.asarray(ob.centre), ob.radius + agent_radius
            if np.all(c + r >= glo) and np.all(c - r <= ghi):
                out.append(ob)
            continue
        blo, bhi = ob.bounds()
        if np.all(np.asarray(bhi) + agent_radius >= glo) and \
                np.all(np.asarray(blo) - agent_radius <= ghi):
            out.append(ob)
    return out


def worker_threads(workers=None, threads=None):
    """The threads each of ``workers`` local build processes uses: ``threads``
    if given, else the cores shared out (one each when there are as many
    workers as cores: a tile's build is mostly single-threaded, and a
    second thread only competes with the other worker)."""
    if threads is not None:
        return max(1, int(threads))
    cores = os.cpu_count() or 1
    return max(1, cores // max(1, int(workers or cores)))


def _init_worker(threads):
    """A build process's start: at most ``threads`` threads for numba, regn's
    batches and BLAS."""
    import sys
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[k] = str(threads)
    if "numba" not in sys.modules:
        os.environ["NUMBA_NUM_THREADS"] = str(threads)
    from .._jit import limit_threads
    limit_threads(threads)


def warm_up() -> int:
    """A local worker's first task, sent as the pool starts: the modules a
    tile's build reads, imported while the caller still plans the world.
    Returns the process id."""
    from ..builder import generate  # noqa: F401
    from ..format import reader  # noqa: F401
    from . import links, prepared  # noqa: F401
    return os.getpid()


def executor(workers=None, client=None, threads=None):
    """``(executor, owned)``: a dask executor when ``client`` (a
    ``distributed.Client`` or a scheduler address) is given, else a process
    pool of ``workers`` (default: every core), each process using
    :func:`worker_threads` threads. ``owned``: the caller shuts it down."""
    if client is not None:
        try:
            import distributed
        except ImportError:
            raise RegnError("a cluster build needs dask.distributed "
                            "(pip install distributed)") from None
        if isinstance(client, str):
            try:
                client = distributed.Client(client, timeout=30)
            except (OSError, TimeoutError) as e:
                raise RegnError(f"cannot reach the dask scheduler {client}: {e}") from None
            return _ClientExecutor(client), True
        return client.get_executor(), False
    from concurrent.futures import ProcessPoolExecutor
    n = workers or os.cpu_count() or 1
    each = worker_threads(n, threads)
    return ProcessPoolExecutor(max_workers=int(n), mp_context=pool_context(each),
                               initializer=_init_worker, initargs=(each,)), True


#: What the server the local workers are forked from imports (:func:`pool_context`).
PRELOAD = "regn.world._pool_preload"


def pool_context(threads=1):
    """The multiprocessing context of a local build pool whose workers run
    ``threads`` threads each.

    One thread each (the default: a worker per core) and where the system
    has it: ``forkserver``. Its server process, started with the first such
    pool, imports numba (for one thread) and the build's modules once
    (:mod:`regn.world._pool_preload`) and forks each worker from there, so
    a worker starts in milliseconds instead of importing everything again;
    the server has started no thread, so forking it is safe beside numba's
    threads (forking this process, which may have, is not). It lives as
    long as this process and serves its later pools; its workers see the
    environment of the moment it started.

    Otherwise ``spawn``: fresh interpreters, each importing numba for its
    own thread count (numba starts all the threads it was imported for at
    once). A main program a new process cannot run again (read from stdin)
    leaves only ``fork``."""
    import multiprocessing
    import sys
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    if main is not None and not os.path.isfile(main):
        return multiprocessing.get_context("fork")
    if threads != 1 or "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    # the server is this process's one; ours is added to what it preloads
    # ('__main__' by default), which counts only before the server starts
    from multiprocessing import forkserver
    preload = list(getattr(forkserver._forkserver, "_preload_modules", ["__main__"]))
    if PRELOAD not in preload:
        ctx.set_forkserver_preload(preload + [PRELOAD])
    _start_server(forkserver)
    return ctx


def _start_server(forkserver):
    """Start this process's forkserver unless it runs, with numba's thread
    count at one (the server's environment; this process's is as it was)."""
    old = os.environ.get("NUMBA_NUM_THREADS")
    os.environ["NUMBA_NUM_THREADS"] = "1"
    try:
        forkserver.ensure_running()
    finally:
        if old is None:
            del os.environ["NUMBA_NUM_THREADS"]
        else:
            os.environ["NUMBA_NUM_THREADS"] = old


class _ClientExecutor:
    """A client we connected ourselves: its executor, and the client closed
    with it."""

    def __init__(self, client):
        self.client = client
        self._ex = client.get_executor()

    def submit(self, fn, *args):
        return self._ex.submit(fn, *args)

    def shutdown(self, wait=True, cancel_futures=False):
        self._ex.shutdown(wait=wait)
        self.client.close()


def node_cost_job(job) -> tuple:
    """``(key, costs, structures)``: the node costs inside one tile
    (``job``: key, the tile's bytes or its file's path, the nodes' faces,
    its sha256 and, optionally, the path to write the structures to), for
    :func:`regn.world.links.node_costs` on a worker, and the bytes of the
    tile's query structures (:func:`regn.world.prepared.sidecar_bytes`),
    which those searches built (None: written to the path given)."""
    from ..format.reader import parse
    from ..mesh import Mesh
    from .links import node_costs
    from .prepared import sidecar_bytes
    key, data, faces, sha, *out = job
    if isinstance(data, str):
        with open(data, "rb") as fh:
            data = fh.read()
    mesh = Mesh.from_parts(parse(data))
    costs = node_costs(mesh, faces) if len(faces) else np.zeros((0, 0))
    side = sidecar_bytes(mesh, sha)
    if out and out[0] is not None:
        from .._atomic import atomic_write
        atomic_write(out[0], side, overwrite=True)
        side = None
    return key, costs, side


def run_jobs(jobs, *, workers=None, client=None, on_done=None, fn=run_job, threads=None):
    """Run ``fn`` on every job; ``on_done(result)`` as each finishes (in the
    order they finish). A failed job cancels the rest and its error
    propagates. ``workers`` 1 (and no ``threads``): in this process, on
    every core's threads; else on a pool (:func:`executor`)."""
    if workers == 1 and client is None and threads is None:
        for job in jobs:
            on_done(fn(job))
        return
    ex, owned = executor(workers, client, threads)
    jobs = iter(jobs)
    pending = set()
    try:
        # a bounded window of jobs in flight, so a job's input (a tile's
        # bytes) is made only shortly before a worker takes it
        for job in itertools.islice(jobs, WINDOW):
            pending.add(ex.submit(fn, job))
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                on_done(f.result())
            for job in itertools.islice(jobs, len(done)):
                pending.add(ex.submit(fn, job))
    except BaseException:
        for f in pending:
            f.cancel()
        raise
    finally:
        if owned:
            ex.shutdown(wait=True, cancel_futures=True)
