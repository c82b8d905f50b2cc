"""Obstacles of a stage, for the builder: the shapes (:class:`Sphere`,
:class:`TriangleMesh` and their batch tests, defined in
:mod:`regn.geometry.obstacles` and re-exported here) and a random asteroid
field."""

from __future__ import annotations

import numpy as np

from ..errors import BuildError
from ..geometry.obstacles import (Sphere, TriangleMesh, obstacles_contain,
                                  tets_intersect_obstacles)

__all__ = ["Sphere", "TriangleMesh", "obstacles_contain", "tets_intersect_obstacles",
           "check_seed", "checked_obstacles", "random_asteroid_field"]


def checked_obstacles(obstacles):
    """``obstacles`` as the builders take them (``regn.generate`` and
    ``regn.world.build`` ask): :class:`Sphere` and :class:`TriangleMesh`
    objects as they are; an (N,4) array, or a list of rows, of x, y, z,
    radius as spheres. Anything else is a BuildError naming the first item
    that is neither."""
    if obstacles is None:
        return ()
    items = list(obstacles) if not isinstance(obstacles, np.ndarray) else None
    if items is None or (items and all(isinstance(o, (tuple, list, np.ndarray)) for o in items)):
        try:
            rows = np.asarray(obstacles if items is None else items, np.float64)
        except (TypeError, ValueError):
            rows = None
        if rows is None or rows.ndim != 2 or rows.shape[1] != 4:
            got = "rows of different lengths" if rows is None else f"shape {rows.shape}"
            raise BuildError("obstacles given as numbers are rows of x, y, z, radius (an "
                             f"(N,4) array); got {got}")
        return [Sphere(row[:3], row[3]) for row in rows]
    for i, o in enumerate(items):
        if not isinstance(o, (Sphere, TriangleMesh)):
            raise BuildError(f"obstacle {i} is a {type(o).__name__}: give Sphere or "
                             "TriangleMesh objects (regn.builder.obstacles), or rows of "
                             "x, y, z, radius")
    return items


def check_seed(seed):
    """BuildError unless ``seed`` is an integer >= 0 (what numpy's
    generators take)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise BuildError(f"seed must be an integer >= 0, got {seed!r}")


def random_asteroid_field(n=40, seed=0, half_extent=50_000.0, *, centre=(0.0, 0.0, 0.0)):
    """A deterministic asteroid field: ``n`` spheres in the box
    ``centre +- half_extent``; ``half_extent`` is one number (a cube) or one
    per axis.

    Radii run from 2 % to 16 % of the smallest half extent (1-8 km in a
    100 km cube),
    more small ones than large. About a third of the asteroids are scattered
    alone; the rest gather in clusters, each placed against an earlier member
    of its cluster — some overlapping it, some touching it exactly, some a
    little apart. Centres stay inside the box, so some asteroids poke out.
    """
    n = int(n)
    if n < 0:
        raise BuildError(f"asteroid count must be >= 0, got {n}")
    check_seed(seed)
    try:
        hv = np.broadcast_to(np.asarray(half_extent, np.float64), (3,)).copy()
    except ValueError:
        raise BuildError(f"half extent must be one number or three, got {half_extent!r}") from None
    if not (np.isfinite(hv).all() and (hv > 0).all()):
        raise BuildError(f"half extent must be > 0, got {half_extent}")
    h = float(hv.min())
    c0 = np.asarray(centre, np.float64).reshape(3)
    rng = np.random.default_rng(seed)
    rmin, rmax = 0.02 * h, 0.16 * h
    radii = rmin + (rmax - rmin) * rng.random(n) ** 1.6
    n_clusters = max(1, int(round(n / 9)))
    cluster_centres = rng.uniform(-0.7 * hv, 0.7 * hv, (n_clusters, 3))
    members = [[] for _ in range(n_clusters)]
    out = []
    for i in range(n):
        r = float(radii[i])
        if rng.random() < 0.35 or i == 0:
            c = rng.uniform(-hv, hv, 3)
        else:
            k = int(rng.integers(n_clusters))
            if not members[k]:
                c = cluster_centres[k] + rng.normal(0.0, 0.04 * h, 3)
            else:
                other = out[members[k][int(rng.integers(len(members[k])))]]
                u = rng.normal(size=3)
                u /= np.linalg.norm(u)
                mode = rng.random()
                if mode < 0.25:
                    f = 1.0                               # touching
                elif mode < 0.55:
                    f = rng.uniform(0.55, 0.95)           # overlapping
                else:
                    f = rng.uniform(1.05, 1.9)            # a gap
                c = (other.centre - c0) + u * (other.radius + r) * f
            members[k].append(i)
        c = np.clip(c, -hv, hv)
        out.append(Sphere(c0 + c, r))
    return out
