"""Wall distances in a world: a tile's linked faces are not walls.

A point's distance to the nearest wall is the smallest exact distance to
the real walls (boundary faces not linked to a neighbour) of its own tile
and of every tile whose box is nearer than the best found so far.
"""

from __future__ import annotations

import numpy as np

from ..geometry.distance import points_triangles_distance


def real_walls(world, t):
    """(W,3,3) the triangles of tile ``t``'s boundary faces that are walls."""
    key = "walls"
    cache = world.extra(t)
    if key not in cache:
        mesh = world.tile(t)
        bf = np.asarray(mesh.boundary_faces)
        bf = bf[~world.linked[t][bf]]
        cache[key] = np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[bf]]
    return cache[key]


def _box_distance(p, lo, hi):
    return np.linalg.norm(np.maximum(0, np.maximum(lo - p, p - hi)), axis=1)


def distance_to_wall(world, pts):
    """(N,) distances (see the module docstring); NaN outside the world."""
    out = np.full(len(pts), np.nan)
    tile = world.tile_at(pts)
    tiles = world.manifest.tiles
    for t in np.unique(tile[tile >= 0]):
        rows = np.flatnonzero(tile == t)
        best = points_triangles_distance(pts[rows], real_walls(world, t), None, None)
        for u in range(len(tiles)):
            if u == t:
                continue
            near = _box_distance(pts[rows], tiles[u].lo, tiles[u].hi) < best
            if near.any():
                d = points_triangles_distance(pts[rows[near]], real_walls(world, u), None, None)
                best[near] = np.minimum(best[near], d)
        out[rows] = best
    return out
