"""``mesh.prepare()``: pay every one-time cost of the queries now.

A loaded mesh builds its query structures on first use, and a process loads
(or, the first time on a machine, compiles) each kernel on its first call,
so without a warm-up the first call of each query is slower than the rest,
and a stream of ``find_path`` calls pays, at its 32nd search, for the
landmark table (:mod:`regn.query.paths.landmarks`). :func:`prepare` does all
of it at a moment the caller chooses:

* the kernels of every query are loaded from numba's cache; the ones not in
  it yet are compiled on every core at once (:mod:`regn.compiling`);
* the structures are built: the fine location grid, the connected
  components, the search graph and its landmark table, the wall hierarchy
  and wall grid, the raycast exit faces, and the worker threads;
* with ``radius=True`` also the portal clearances a sphere's queries use
  (seconds on a large map; without it they are computed on the first
  query with a radius).

After it, each query's first call costs about what its later calls cost,
and the structures are only read (``regn serve`` calls it before serving).
"""

from __future__ import annotations

import time

import numpy as np


def _structures(mesh, workers):
    """Build the per-mesh structures the queries read."""
    from .._jit import _pool, worker_count
    from .locating.locate import locate_tables
    from .locating.sample import components
    from .paths.path import _graph, ensure_landmarks
    from .sight.raycast import _exits, _raycast_entry
    from .walls.nearest import _wall_grid
    locate_tables(mesh)
    components(mesh)
    ensure_landmarks(_graph(mesh))
    _wall_grid(mesh, workers)
    mesh.distance_to_wall(mesh.random_points(2, seed=0))   # (the grid's kernel, now used)
    _raycast_entry(mesh)
    _exits(mesh)
    threads = worker_count(workers)
    if threads > 1:                        # start the batch queries' threads
        for f in [_pool().submit(time.sleep, 0.01) for _ in range(threads)]:
            f.result()


def _first_calls(mesh, ahead, radius):
    """One small call of each query: its kernels loaded (or compiled)."""
    p = mesh.random_points(2, seed=0)
    ahead.wait("locate")
    mesh.locate(p)
    mesh.locate(p[0])
    mesh.distance_to_wall(p)
    mesh.nearest_wall(p)
    mesh.nearest(p + 1e9)
    ahead.wait("paths")
    mesh.find_path(p[0], p[1])
    mesh.find_path(p[0], p[1], smooth=False)
    ahead.wait("sight")
    mesh.raycast(p[0], p[1])
    mesh.raycast_many(p, p[::-1])
    mesh.line_of_sight(p, p[::-1])
    ahead.wait("batch")
    mesh.find_paths(p, p[::-1], workers=1)
    mesh.cost_field(p[0]).next_waypoint(p)
    if radius:
        from .radius.portals import portal_clearance
        ahead.wait("radius")
        portal_clearance(mesh)
        r = float(np.min(mesh.cell_size)) * 1e-3
        mesh.find_path(p[0], p[1], radius=r)
        mesh.raycast(p[0], p[1], radius=r)


def prepare(mesh, *, radius=False, workers=None) -> dict:
    """Build ``mesh``'s query structures and load every query kernel now
    (module docstring); ``workers``: the threads the batch queries will use
    (None: every core). Returns the seconds spent, by step. Calling it again
    costs next to nothing."""
    from ..compiling.plan import QUERY_JOBS
    from ..compiling.pool import compile_ahead
    t0 = time.perf_counter()
    if mesh.n_tets == 0:
        return {"total": 0.0}
    ahead = compile_ahead(QUERY_JOBS + (("radius",) if radius else ()))
    _first_calls(mesh, ahead, radius)
    t2 = time.perf_counter()
    _structures(mesh, workers)
    ahead.close()
    t3 = time.perf_counter()
    return {"kernels": t2 - t0, "structures": t3 - t2, "total": t3 - t0}
