"""Partial paths across tiles: when the goal cannot be reached, the path to
the reachable point of the world nearest it (as
:mod:`regn.query.paths.partial` answers for one REGN).

1. *What is reachable*: the world's connected parts, once per world
   (:func:`world_parts`): each tile's parts (its tetrahedra joined through
   their shared faces, :func:`regn.query.locating.sample.components`) joined
   wherever a link pairs a face of one with a face of another. This reads
   every tile once.
2. *Nearest point*: tiles in order of their boxes' distance from the goal,
   until the next box is farther than the best point found: in each, the
   real walls (boundary faces not linked) of the tetrahedra in the start's
   part; the closest point of each to the goal, the nearest kept (a
   linked face leads on into the start's part, so the part's border is
   its real walls).
3. The point is moved into its tetrahedron (by the smallest of
   :data:`regn.query.paths.partial.NUDGES` of the way to its centroid
   that locates it there) and the path is the world's
   :meth:`regn.World.find_path` to it, status ``"partial"``.

A radius with ``partial`` is refused, as for one REGN.
"""

from __future__ import annotations

import numpy as np

from ..status import NAMES, PARTIAL


def world_parts(world):
    """Per tile, (its parts' labels -> world part): a list of arrays, made
    once (reads every tile)."""
    got = getattr(world, "_parts", None)
    if got is not None:
        return got
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from ..query.locating.sample import components
    from .prepared import first_tets
    labels, offset = [], [0]
    for t in range(world.n_tiles):
        lab = np.asarray(components(world.tile(t)), np.int64)
        labels.append(lab)
        offset.append(offset[-1] + (int(lab.max()) + 1 if len(lab) else 0))
    a, b = [], []
    for lk in world.manifest.links:
        if not len(lk.faces):
            continue
        ta = first_tets(world, lk.a)[lk.faces[:, 0]]
        tb = first_tets(world, lk.b)[lk.faces[:, 1]]
        a.append(offset[lk.a] + labels[lk.a][ta])
        b.append(offset[lk.b] + labels[lk.b][tb])
    n = offset[-1]
    a = np.concatenate(a) if a else np.zeros(0, np.int64)
    b = np.concatenate(b) if b else np.zeros(0, np.int64)
    _, part = connected_components(coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n)),
                                   directed=False)
    world._parts = [part[offset[t]:offset[t + 1]] for t in range(world.n_tiles)]
    return world._parts


def _box_distance(p, lo, hi):
    return float(np.linalg.norm(np.maximum(0.0, np.maximum(lo - p, p - hi))))


def nearest_reachable(world, start, goal):
    """The point nearest ``goal`` a point's path from ``start`` can reach,
    moved just inside its tetrahedron (module docstring); None when the
    start is outside."""
    from ..geometry._closest_kernels import closest_points_on_triangles
    from ..query.locating.sample import components
    from ..query.paths.partial import NUDGES
    tile, tet = world.locate_tiles(np.asarray(start, np.float64)[None])
    if tile[0] < 0:
        return None
    parts = world_parts(world)
    mine = parts[tile[0]][components(world.tile(tile[0]))[tet[0]]]
    g = np.asarray(goal, np.float64)
    tiles = world.manifest.tiles
    order = sorted(range(len(tiles)), key=lambda u: _box_distance(g, tiles[u].lo, tiles[u].hi))
    best, found = np.inf, None
    for u in order:
        if _box_distance(g, tiles[u].lo, tiles[u].hi) >= best:
            break
        mesh = world.tile(u)
        reached = parts[u][components(mesh)] == mine
        tets = np.flatnonzero(reached)
        if not len(tets):
            continue
        tf = np.asarray(mesh.tet_faces, np.int64)[tets]
        nb = np.asarray(mesh.neighbors, np.int64)[tets]
        wall = (nb < 0) & ~world.linked[u][tf]
        rows, slots = np.nonzero(wall)
        if not len(rows):
            continue
        tri = np.ascontiguousarray(np.asarray(mesh.vertices, np.float64)[
            np.asarray(mesh.face_vertices)[tf[rows, slots]]])
        near = closest_points_on_triangles(
            np.ascontiguousarray(np.broadcast_to(g, (len(tri), 3))), tri)
        d = np.einsum("kd,kd->k", near - g, near - g)
        k = int(np.argmin(d))
        if d[k] < best * best:
            best, found = float(np.sqrt(d[k])), (u, int(tets[rows[k]]), near[k])
    if found is None:
        return None
    u, t, point = found
    mesh = world.tile(u)
    centre = np.asarray(mesh.tet_points, np.float64)[t].mean(axis=0)
    tries = point + np.asarray(NUDGES)[:, None] * (centre - point)
    located = mesh.locate(tries)
    for p, k in zip(tries, located):
        if k == t:
            return p
    return centre


def partial_path(world, start, goal, failed, smooth=True):
    """``failed`` (a Path whose status partial paths replace) turned into
    the world's partial path, or ``failed`` itself when there is none."""
    target = nearest_reachable(world, start, goal)
    if target is None:
        return failed
    path = world.find_path(start, target, smooth=smooth)
    if not path.found:
        return failed
    path.status = NAMES[PARTIAL]
    return path
