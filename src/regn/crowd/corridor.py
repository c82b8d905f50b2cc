"""Each agent's path corridor: planned with the mesh's sphere paths
(:func:`regn.query.radius.portals.find_paths_radius`), kept as its corner
waypoints, and packed into the flat arrays the step kernels read.

Agents are planned in batches by *radius class*: a radius is rounded up to
the next of 4 steps per doubling (at most 19 % more), and a batch's paths
are those of a sphere of the class radius, so they keep the agent's own
radius too; an agent whose class path fails (a start or goal near a wall,
a passage only its own size fits) is planned again alone with its own
radius. Paths come from the current position to the goal; a corridor is the
path's turning points (``Path.points``) and the tetrahedra it crosses (to
tell when a blocker closes it).
"""

from __future__ import annotations

import math

import numpy as np

#: radius classes per doubling
CLASSES_PER_DOUBLING = 4


def radius_class(r: float) -> float:
    """The class radius of an agent of radius ``r`` > 0 (>= r, < 1.19 r)."""
    k = math.ceil(CLASSES_PER_DOUBLING * math.log2(r) - 1e-9)
    return max(2.0 ** (k / CLASSES_PER_DOUBLING), r)


def plan(mesh, starts, goals, radii, filter=None, workers=None):
    """Corridors for agents at ``starts`` (K,3) flying to ``goals`` (K,3)
    with ``radii`` (K,): a list of K entries, each (points (P,3), tets)
    or None when no path was found for the agent's own radius."""
    out = [None] * len(starts)
    classes = np.array([radius_class(float(r)) for r in radii])
    retry = []
    for c in np.unique(classes):
        rows = np.flatnonzero(classes == c)
        paths = mesh.find_paths(starts[rows], goals[rows], radius=float(c), filter=filter,
                                workers=workers)
        found = paths.found
        for j, row in enumerate(rows):
            if found[j] and paths.status[j] == "ok":
                p = paths[j]
                out[row] = (np.array(p.points, dtype=np.float64), np.array(p.tets))
            else:
                retry.append(row)
    for row in retry:
        p = mesh.find_path(starts[row], goals[row], radius=float(radii[row]), filter=filter)
        if p.found and p.status == "ok":
            out[row] = (np.array(p.points, dtype=np.float64), np.array(p.tets))
    return out


def plan_field(field, starts):
    """Corridors for agents at ``starts`` (K,3) flying down the cost field
    ``field`` to its goal: each path read off the field (no search; the
    field's paths are for a point, whatever the agent's radius), as
    :func:`plan` returns them."""
    out = []
    for p0 in starts:
        p = field.path_from(p0)
        ok = p.found and p.status == "ok"
        out.append((np.array(p.points, dtype=np.float64), np.array(p.tets)) if ok else None)
    return out


def pack(corridors):
    """Flat arrays of a list of corridors (entries (points, tets) or None):
    (cpts (M,3), cstart (N+1,), ctail (M,): the path length left from each
    corner to the goal); agent i's corners are cpts[cstart[i]:cstart[i+1]]."""
    n = len(corridors)
    counts = np.array([0 if c is None else len(c[0]) for c in corridors], dtype=np.int64)
    cstart = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=cstart[1:])
    m = int(cstart[-1])
    if m == 0:
        return np.zeros((0, 3)), cstart, np.zeros(0)
    cpts = np.concatenate([c[0] for c in corridors if c is not None and len(c[0])])
    # ctail[k]: the length from corner k to its agent's last corner
    step = np.zeros(m)
    step[1:] = np.linalg.norm(np.diff(cpts, axis=0), axis=1)
    step[cstart[:-1][counts > 0]] = 0.0             # no step across two agents
    run = np.cumsum(step)
    last = np.repeat(cstart[1:] - 1, counts)
    ctail = run[last] - run
    return cpts, cstart, ctail
