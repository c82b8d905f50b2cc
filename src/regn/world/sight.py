"""A sphere swept across a world's tiles: ``raycast`` and ``line_of_sight``
with a radius r > 0.

A tile's own sweep (:mod:`regn.query.sight.sweep`) counts the faces it
shares with a neighbour as walls. Here the segment is cut at the tile
planes, and each piece is swept against its tile's wall set
(:mod:`regn.world.clearance`: its real walls and its neighbours' within a
margin of at least r), which holds every wall the sphere can touch while
its centre is in the tile. As for one REGN a centre that keeps r from
every wall cannot leave the volume, so only the start is located. The
contact is the first piece's first contact: its fraction along the whole
segment, the wall point, the normal into the wall, the face in world
numbering; ``tets`` are those the centre's segment crosses up to it.
"""

from __future__ import annotations

import numpy as np

from ..query.sight.raycast import RaycastHit
from ..status import CLEAR, HIT, NAMES, START_OUTSIDE


def _tile_table(world):
    """(nx, ny, nz) each grid cell's tile number (-1: none), made once."""
    got = getattr(world, "_tile_table", None)
    if got is None:
        got = np.full(world.grid.n, -1, np.int64)
        for ijk, t in world._by_index.items():
            got[ijk] = t
        world._tile_table = got
    return got


def pieces(world, a, b):
    """``[(t0, t1, tile)]``: segment a b cut at the tile planes (tile -1:
    outside the world; :func:`regn.world._radius_kernels.segment_pieces`)."""
    from ._radius_kernels import segment_pieces
    planes = world.grid.planes
    cuts, tile = segment_pieces(planes[0], planes[1], planes[2], _tile_table(world),
                                np.asarray(a, np.float64), np.asarray(b, np.float64))
    return list(zip(cuts[:-1].tolist(), cuts[1:].tolist(), tile.tolist()))


def sweep(world, a, b, r, first=True):
    """``(status, t, tile, row)``: the sphere of radius ``r`` swept from a
    (in the world's volume: not checked here) to b: CLEAR, or HIT with the
    fraction of the first contact (with ``first``; else of any contact)
    and the row of the wall touched in that tile's wall set's BVH."""
    from ..query.sight._sweep_kernels import sphere_sweeps
    from .clearance import tile_bvh
    d = b - a
    for t0, t1, tile in pieces(world, a, b):
        if tile < 0:                           # (not expected: the box is a wall)
            return HIT, t0, -1, -1
        _, bvh = tile_bvh(world, tile, r)
        if bvh is None:
            continue
        ft, fk = np.full(1, np.nan), np.full(1, -1, np.int64)
        sphere_sweeps(bvh, (a + t0 * d)[None], (a + t1 * d)[None], float(r), bool(first),
                      ft, fk)
        if fk[0] >= 0:
            return HIT, t0 + float(ft[0]) * (t1 - t0), tile, int(fk[0])
    return CLEAR, 1.0, -1, -1


def raycast(world, a, b, r) -> RaycastHit:
    """:meth:`regn.World.raycast` for a sphere of radius ``r`` > 0 (module
    docstring)."""
    from ..geometry._closest_kernels import closest_points_on_triangles
    from .clearance import tile_bvh, wall_faces
    tile, _ = world.locate_tiles(a[None])
    if tile[0] < 0:
        return RaycastHit(False, NAMES[START_OUTSIDE])
    status, t, wtile, row = sweep(world, a, b, r)
    if status == CLEAR:
        tets = world.raycast(a, b).tets
        return RaycastHit(True, NAMES[CLEAR], -1, b.copy(), 1.0, np.full(3, np.nan), tets)
    centre = a + t * (b - a)
    tets = world.raycast(a, centre).tets
    if wtile < 0:
        return RaycastHit(False, NAMES[HIT], -1, centre, t, np.full(3, np.nan), tets)
    bvh = tile_bvh(world, wtile, r)[1]
    if t == 0.0:                                # touching at the start: the nearest wall
        from ._radius_kernels import nearest_row
        row = int(nearest_row(bvh, centre))
    tri = np.ascontiguousarray(bvh.tri[row].reshape(1, 3, 3))
    point = closest_points_on_triangles(np.ascontiguousarray(centre[None]), tri)[0]
    normal = point - centre
    n = np.linalg.norm(normal)
    if n > 0:
        normal = normal / n
    else:                                       # the centre on the wall: along the segment
        normal = (b - a) / max(np.linalg.norm(b - a), 1e-300)
    face = int(wall_faces(world, wtile)[row])
    return RaycastHit(False, NAMES[HIT], face, point, t, normal, tets)


def line_of_sight(world, a, b, r) -> np.ndarray:
    """(N,) the sphere of radius ``r`` passes from a[i] to b[i] touching no
    wall (a start outside the world: False)."""
    tile, _ = world.locate_tiles(a)
    out = np.zeros(len(a), bool)
    for i in np.flatnonzero(tile >= 0):
        out[i] = sweep(world, a[i], b[i], r, first=False)[0] == CLEAR
    return out
