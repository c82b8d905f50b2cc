"""A world build's jobs on one pool: the tiles, then each tile's node table.

:func:`regn.world.building.build` used to run two pools one after the other
(the tiles; then, after linking every pair of neighbours in its own
process, the node costs and query structures of each tile). Each pool
paid for starting its processes (a fresh interpreter loading regn's
compiled kernels) and waited for its slowest job, and the linking ran on
one core. Here one pool (or cluster executor) runs both kinds of job:

* the tile jobs go first, the largest first (the plan's order), so the
  last ones to finish are short;
* a tile job returns, besides the tile, its faces on each wall it shares
  with a neighbour (:func:`regn.world.links.wall_record`: a few hundred
  faces); two neighbours' records give their link, its portal nodes and
  their points (:func:`regn.world.links.match_walls`,
  :func:`~regn.world.links.portal_points`), in this process, in
  milliseconds;
* as soon as every link of a tile is known its node-table job
  (:func:`regn.world.tiles.node_cost_job`: node costs and the ``.query``
  file) is ready; ready ones go, the largest first, whenever no tile job
  is waiting.

On local workers (a process pool, or this process) the jobs read and write
the tile files themselves and return small records; on a dask cluster,
whose workers may not see this disk, the bytes travel and this process
writes them. Every number is computed as before, by the same functions on
the same bytes, in any order: the tiles, the links, the nodes' order and
the ``.query`` files are the same whatever the workers.
"""

from __future__ import annotations

import heapq
import os
import threading
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from .._atomic import atomic_write
from ..errors import BuildError
from . import links as L
from .manifest import Link
from .tiles import WINDOW, executor, node_cost_job, run_job, warm_up


class InlineExecutor:
    """Runs each job in this process as it is submitted (``workers=1``)."""

    def submit(self, fn, *args):
        f = Future()
        try:
            f.set_result(fn(*args))
        except BaseException as e:   # noqa: BLE001  (handed over like a pool's)
            f.set_exception(e)
        return f

    def shutdown(self, wait=True, cancel_futures=False):
        pass


def start_pool(workers=None, client=None, threads=None):
    """``(executor, owned, local, window)``: in this process when
    ``workers`` is 1 (and no ``threads`` nor ``client``), else
    :func:`regn.world.tiles.executor`; ``local``: its jobs can read and
    write this machine's files; ``window``: the most jobs in flight."""
    if workers == 1 and client is None and threads is None:
        return InlineExecutor(), True, True, 1
    ex, owned = executor(workers, client, threads)
    if client is not None:
        return ex, owned, False, WINDOW
    n = int(workers or os.cpu_count() or 1)
    # the processes start now, while this one makes the plan: from a thread,
    # as the first start waits for the pool's server to import (tiles.pool_context)
    threading.Thread(target=_start_workers, args=(ex, n), daemon=True).start()
    # one job queued beyond the running ones: a worker finishing takes the
    # next at once, and the rest wait here, where the order is chosen
    return ex, owned, True, n + 1


def _start_workers(ex, n):
    """Have pool ``ex`` start ``n`` workers (a first task each). A pool
    shut down meanwhile takes no more: nothing to start then."""
    try:
        for _ in range(n):
            ex.submit(warm_up)
    except RuntimeError:
        pass


class _Pairs:
    """The neighbour pairs of a grid, in the manifest's order of links."""

    def __init__(self, grid):
        self.grid = grid
        self.pairs = []                          # (a, axis, b)
        self.of_tile = {idx: [] for idx in grid.indices()}
        for idx in grid.indices():
            for axis in range(3):
                nxt = list(idx)
                nxt[axis] += 1
                nxt = tuple(nxt)
                if nxt[axis] >= grid.n[axis]:
                    continue
                k = len(self.pairs)
                self.pairs.append((idx, axis, nxt))
                self.of_tile[idx].append(k)
                self.of_tile[nxt].append(k)

    def sides(self, idx):
        """``[(axis, plane)]`` of the walls ``idx`` shares, in the order of
        :meth:`wall_of`."""
        return [(axis, float(self.grid.planes[axis][idx[axis] + (a == idx)]))
                for a, axis, _ in (self.pairs[k] for k in self.of_tile[idx])]

    def wall_of(self, idx, k):
        """The place of pair ``k`` in ``idx``'s :meth:`sides`."""
        return self.of_tile[idx].index(k)


class WorldJobs:
    """The jobs of one world's build and what their results make."""

    def __init__(self, grid, directory, names, *, force, local):
        self.grid, self.directory, self.names = grid, directory, names
        self.force, self.local = force, local
        self.p = _Pairs(grid)
        self.results, self.walls, self.links, self.costs = {}, {}, {}, {}
        self.link_area = {}                      # link -> (wall area both sides, linked)
        self.ready = []                          # heap of (-weight, key, job)

    def tile_job(self, job):
        """The plan's job, told its walls and (locally) where to write."""
        job.sides = tuple(self.p.sides(tuple(job.index)))
        if self.local:
            job.path = os.path.join(self.directory, self.names[tuple(job.index)])
            job.overwrite = self.force
        return job

    def tile_done(self, res):
        """A tile's result: its file written (if the bytes came back), its
        links with the neighbours already built, and the node-table jobs
        this makes ready queued."""
        idx = tuple(res["index"])
        data = res.pop("data")
        if data is not None:
            atomic_write(os.path.join(self.directory, self.names[idx]), data,
                         overwrite=self.force)
        self.walls[idx] = res.pop("walls", [])
        self.results[idx] = res
        for k in self.p.of_tile[idx]:
            a, _, b = self.p.pairs[k]
            if a in self.walls and b in self.walls:
                self._link(k)
        near = {idx} | {t for k in self.p.of_tile[idx] for t in self.p.pairs[k][::2]}
        for t in sorted(near):
            if t in self.results and t not in self.costs and \
                    all(j in self.links for j in self.p.of_tile[t]):
                self._node_job(t)

    def _link(self, k):
        a, axis, b = self.p.pairs[k]
        fa, ka, ca = self.walls[a][self.p.wall_of(a, k)]
        fb, kb, _ = self.walls[b][self.p.wall_of(b, k)]
        pairs, rows = L.match_walls(fa, ka, fb, kb)
        lo, hi = self.grid.box(a)
        prow, pts = L.portal_points(ca[rows], axis, lo, hi)
        self.links[k] = (pairs, prow, pts, len(fa), len(fb))
        area_a, area_b = L.key_areas(ka), L.key_areas(kb)
        self.link_area[k] = (float(area_a.sum() + area_b.sum()), 2.0 * float(area_a[rows].sum()))

    def _node_job(self, t):
        faces = []
        for k in self.p.of_tile[t]:            # increasing: the nodes' order
            pairs, prow, _, _, _ = self.links[k]
            col = 0 if self.p.pairs[k][0] == t else 1
            faces += [int(pairs[r][col]) for r in prow]
        self.costs[t] = None                   # queued
        path = os.path.join(self.directory, self.names[t])
        res = self.results[t]
        weight = (len(faces) + 4) * int(res["report"].get("faces", 0) or 0)
        heapq.heappush(self.ready, (-weight, t, (t, path, faces, res["sha256"])))

    def next_node_job(self):
        """The largest ready node-table job (its input made now), or None."""
        if not self.ready:
            return None
        _, _, (key, path, faces, sha) = heapq.heappop(self.ready)
        if self.local:
            side = os.path.splitext(path)[0] + _query_suffix()
            return key, path, faces, sha, side
        with open(path, "rb") as fh:
            return key, fh.read(), faces, sha, None

    def node_done(self, res):
        key, costs, side = res
        self.costs[key] = costs
        if side is not None:
            atomic_write(os.path.splitext(os.path.join(self.directory, self.names[key]))[0]
                         + _query_suffix(), side, overwrite=True)

    def linked_area_fraction(self):
        """The share of the shared walls' area (both sides) that is linked:
        the face share counts the many slivers of thin free skins along
        the solid as much as the open's large triangles."""
        walls = sum(a for a, _ in self.link_area.values())
        return sum(b for _, b in self.link_area.values()) / walls if walls > 0 else 0.0

    def manifest_parts(self, ids):
        """``(links, node_link, node_faces, node_points, cover, nodes of
        each tile)`` in the manifest's order."""
        links, node_link, node_faces, node_points = [], [], [], []
        walls = linked = 0
        tile_nodes = {idx: [] for idx in self.grid.indices()}
        for k, (a, axis, b) in enumerate(self.p.pairs):
            pairs, prow, pts, na, nb = self.links[k]
            walls, linked = walls + na + nb, linked + 2 * len(pairs)
            for row, p in zip(prow, pts):
                tile_nodes[a].append(len(node_link))
                tile_nodes[b].append(len(node_link))
                node_link.append(len(links))
                node_faces.append(pairs[row])
                node_points.append(p)
            plane = self.grid.planes[axis][b[axis]]
            links.append(Link(ids[a], ids[b], axis, float(plane), pairs))
        return (links, np.array(node_link, np.int64),
                np.array(node_faces, np.int64).reshape(-1, 2),
                np.array(node_points).reshape(-1, 3), linked / max(walls, 1),
                {idx: np.array(sorted(v), np.int64) for idx, v in tile_nodes.items()})


def _query_suffix():
    from .prepared import SUFFIX
    return SUFFIX


class PoolStop:
    """Shuts an owned executor down: :meth:`start` when its last job is
    done (its processes exit in the background while the caller writes the
    manifest), :meth:`join` at the end (waits for them; shuts down at once
    if :meth:`start` was not called: an error, pending jobs cancelled)."""

    def __init__(self, ex, owned):
        self.ex, self.owned, self.thread = ex, owned, None

    def start(self):
        if self.owned and self.thread is None:
            self.thread = threading.Thread(target=self.ex.shutdown, kwargs={"wait": True},
                                           name="regn-pool-stop", daemon=True)
            self.thread.start()

    def join(self):
        if not self.owned:
            return
        if self.thread is None:
            self.ex.shutdown(wait=True, cancel_futures=True)
        else:
            self.thread.join()


def run_world_jobs(jobs, wj, ex, window, progress=None):
    """Every tile job of ``jobs`` (in their order) and every node-table job
    on ``ex`` (module docstring), at most ``window`` in flight. A failed job
    cancels the rest and its error propagates. Returns the seconds from the
    start to the last tile's result."""
    import time
    t0 = time.perf_counter()
    jobs = iter(jobs)
    n = len(wj.names)
    pending = {}
    tiles_left, done, t_tiles = n, 0, 0.0

    def submit():
        job = next(jobs, None)
        if job is not None:
            pending[ex.submit(run_job, wj.tile_job(job))] = "tile"
            return True
        job = wj.next_node_job()
        if job is not None:
            pending[ex.submit(node_cost_job, job)] = "nodes"
            return True
        return False

    try:
        while len(pending) < window and submit():
            pass
        while pending:
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for f in finished:
                kind = pending.pop(f)
                if kind == "tile":
                    wj.tile_done(f.result())
                    tiles_left -= 1
                    if not tiles_left:
                        t_tiles = time.perf_counter() - t0
                else:
                    wj.node_done(f.result())
                done += 1
                if progress is not None:
                    progress("tiles", done / (2 * n))
            while len(pending) < window and submit():
                pass
    except BaseException as e:
        for f in pending:
            f.cancel()
        if isinstance(e, BrokenProcessPool):
            raise BuildError(_BROKEN_POOL) from None
        raise
    return t_tiles


_BROKEN_POOL = (
    "a worker process of the build stopped abruptly: killed (out of memory?), or it "
    "could not start. A Python script that builds a world must do so under "
    "`if __name__ == \"__main__\":` (each worker runs the script's top level again); "
    "workers=1 builds in this process")
