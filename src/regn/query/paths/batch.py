"""Many path queries in one call, on every core: :func:`find_paths`.

Each query is exactly :func:`regn.query.paths.path.find_path`'s (the same search
and smoothing, so the same answer bit for bit); the options are validated
and turned into the search's arrays once for the whole batch. Worker threads
(:func:`regn._jit.run_chunks`; the calling one among them) take queries
CHUNK at a time from a shared counter and search each chunk in a slot of
the mesh's search state of their own
(:func:`regn.query.paths.path.search_slot`); the compiled search and smoother
release the GIL, so the threads run side by side. :func:`run_routes` is
that machinery for any kind of query: a sphere's batch
(:func:`regn.query.radius.portals.find_paths_radius`) runs its own route in it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import QueryError
from ...status import NAMES, OK, PARTIAL, START_OUTSIDE
from ..common import as_points
from .path import (Path, _graph, cost_options, count_search, route_to_path, search,
                   search_options, search_slot)

#: queries a worker takes from the counter at a time
CHUNK = 8


@dataclass
class Paths:
    """Result of :func:`find_paths`: per query its status, cost and length
    (inf when not found), and the paths' points, tetrahedra and portals in
    compressed rows (query i's points are ``points[point_start[i]:
    point_start[i + 1]]``, and so on). ``paths[i]`` is query i's
    :class:`~regn.query.paths.path.Path`, equal to ``find_path``'s."""
    status: np.ndarray
    cost: np.ndarray
    length: np.ndarray
    point_start: np.ndarray
    points: np.ndarray
    tet_start: np.ndarray
    tets: np.ndarray
    portal_start: np.ndarray
    portals: np.ndarray

    @property
    def found(self) -> np.ndarray:
        """(N,) bool: a path was found (to the goal, or a partial one)."""
        return (self.status == NAMES[OK]) | (self.status == NAMES[PARTIAL])

    def status_counts(self) -> dict:
        """How many queries ended with each status, e.g. ``{"ok": 48,
        "too_narrow": 2}`` (plain ``str`` and ``int``, ready to print or
        dump as JSON)."""
        names, counts = np.unique(self.status, return_counts=True)
        return {str(n): int(c) for n, c in zip(names, counts)}

    def __len__(self):
        return len(self.status)

    def __repr__(self):
        counts = ", ".join(f"{n} {s}" for s, n in self.status_counts().items())
        return f"<regn Paths: {len(self)} queries{': ' + counts if counts else ''}>"

    def __getitem__(self, i) -> Path:
        i = range(len(self))[i]          # negative indices; IndexError past the end
        p, t, f = self.point_start, self.tet_start, self.portal_start
        return Path(bool(self.status[i] in (NAMES[OK], NAMES[PARTIAL])), str(self.status[i]),
                    float(self.cost[i]), self.tets[t[i]:t[i + 1]],
                    self.portals[f[i]:f[i + 1]], self.points[p[i]:p[i + 1]],
                    float(self.length[i]))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @classmethod
    def of(cls, paths) -> "Paths":
        """The :class:`Paths` holding a list of :class:`Path`."""
        def rows(arrays, empty):
            start = np.zeros(len(arrays) + 1, np.int64)
            np.cumsum([len(a) for a in arrays], out=start[1:])
            return start, np.concatenate(arrays) if arrays else empty
        point_start, points = rows([p.points for p in paths], np.zeros((0, 3)))
        tet_start, tets = rows([p.tets for p in paths], np.zeros(0, np.int64))
        portal_start, portals = rows([p.portals for p in paths], np.zeros(0, np.int64))
        return cls(np.array([p.status for p in paths], dtype=str),
                   np.array([p.cost for p in paths], dtype=np.float64),
                   np.array([p.length for p in paths], dtype=np.float64),
                   point_start, points.reshape(-1, 3), tet_start, tets.astype(np.int64),
                   portal_start, portals.astype(np.int64))


def pair_ends(starts, goals):
    """(N,2,3) start/goal pairs; a single start or goal goes with every
    goal or start."""
    S = as_points(starts, "starts")
    G = as_points(goals, "goals")
    if len(S) == 1 and len(G) != 1:
        S = np.repeat(S, len(G), axis=0)
    elif len(G) == 1 and len(S) != 1:
        G = np.repeat(G, len(S), axis=0)
    if len(S) != len(G):
        raise QueryError(f"starts and goals must pair up: {len(S)} starts, {len(G)} goals")
    return np.ascontiguousarray(np.stack([S, G], axis=1))


def find_paths(mesh, starts, goals, *, smooth=True, cost_scale=None, exclude=None,
               filter=None, workers=None, partial=False) -> Paths:
    """``find_path(starts[i], goals[i], ...)`` for every i, on ``workers``
    threads (default: one per core). ``starts`` and ``goals`` are (N,3) (a
    single point pairs with every point of the other); the options are
    find_path's, ``partial`` too (partial paths, :mod:`regn.query.paths.partial`,
    found after the batch, one search from each start that needs one).
    Returns :class:`Paths`. A sphere's paths in a batch are
    :func:`regn.query.radius.portals.find_paths_radius`."""
    ends = pair_ends(starts, goals)
    scale, excl = cost_options(mesh, cost_scale, exclude, filter)

    def plan(g):
        options = search_options(g, scale, excl)

        def route(slot, pair):
            found = search(g, slot, options, pair[0], pair[1], smooth, False)
            return route_to_path(mesh, pair, found, smooth)
        return route

    out = run_routes(mesh, ends, plan, workers)
    if partial:
        _make_partial(mesh, ends, out, smooth, cost_scale, exclude, filter)
    return Paths.of(out)


def run_routes(mesh, ends, plan, workers=None) -> list:
    """One :class:`Path` per row of ``ends`` (N,2,3), on ``workers`` threads.

    ``plan(g)`` is called once, before the threads start, with the mesh's
    search state (:func:`regn.query.paths.path._graph`), and returns
    ``route(slot, pair)``: one query's Path, searched in the thread's slot
    (:func:`regn.query.paths.path.search_slot`)."""
    from ..._jit import run_chunks, worker_count
    workers = worker_count(workers)
    n = len(ends)
    if mesh.n_tets == 0:
        return [Path(False, NAMES[START_OUTSIDE])] * n
    g = _graph(mesh)
    count_search(g, n)                   # (before the threads: one table for the batch)
    route = plan(g)
    out = [None] * n

    def solve(start, stop, _):
        with search_slot(g) as slot:
            for i in range(start, stop):
                out[i] = route(slot, ends[i])

    run_chunks(solve, n, workers, chunk=CHUNK, min_chunk=CHUNK)
    return out


def _make_partial(mesh, ends, out, smooth, cost_scale, exclude, filter):
    """Replace the paths a partial path replaces, in place (one search from
    each distinct start that needs one, shared by its queries)."""
    from .partial import REPLACES, nearest_reachable
    from .path import find_path
    targets = {}
    for i, path in enumerate(out):
        if path.status not in REPLACES:
            continue
        key = (ends[i, 0].tobytes(), ends[i, 1].tobytes())
        if key not in targets:
            targets[key] = nearest_reachable(mesh, ends[i, 0], ends[i, 1],
                                             cost_scale=cost_scale, exclude=exclude,
                                             filter=filter)
        if targets[key] is None:
            continue
        p = find_path(mesh, ends[i, 0], targets[key], smooth=smooth,
                      cost_scale=cost_scale, exclude=exclude, filter=filter)
        if p.found:
            p.status = NAMES[PARTIAL]
            out[i] = p
