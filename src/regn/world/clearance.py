"""Clearances of a world's tiles that see through linked faces.

A tile's own wall structures (``Mesh.distance_to_wall``, its radius
search) count every boundary face as a wall, the faces it shares with a
neighbour too. For a sphere's paths across tiles each tile instead gets
its **wall set**: its real walls (boundary faces not linked,
:func:`regn.world.walls.real_walls`) and its neighbours' real walls
within a margin M of its box, in one
:class:`regn.query.walls.nearest.WallBVH` (:func:`tile_bvh`). The
distance to that set is the exact distance to the world's walls for every
point of the tile whose distance is at most M (its nearest wall point
lies within M of the box, so in the set), and more than M otherwise; it
is 1-Lipschitz like the true one. So every test "is this point, segment,
or witness at least r_eff from a wall?" with r_eff <= M is answered
exactly, which is all a radius search asks (:mod:`regn.world.radius`).

Why at query time, from the neighbours, and not stored at prepare time:
M must be at least the radius asked, which is not known when a world is
built, and a tile's linked faces come from the manifest, written after
the tiles. The set is made the first time a radius query needs the tile
(reading its neighbours' walls: the tiles around it are read once) and
kept in the world (the last :func:`keep_tiles` tiles' sets, counted in
:meth:`regn.World.memory` and held to its ``max_bytes``; the neighbours
are read without entering the tile LRU, so that making a set drops no
tile a search holds). M is
:data:`MARGIN_REL` of the tile's smallest side, or 4 r_eff when that
is more (a larger radius makes the set again).

On top of it, per tile (:func:`tile_radius`): each portal's and each
linked face's *witness* and clearance (the single mesh's rule,
:mod:`regn.query.radius.portals`, against the wall set), the bounds of its
search edges' clearances, and per radius the masked edge table, the linked
faces closed for it and the flags of the edges into and out of linked
faces (:func:`regn.world._radius_kernels.link_edges`).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

#: radii whose masks are kept a tile (the wall sets and witnesses of
#: :func:`keep_tiles` tiles are kept)
KEEP_MASKS = 4
#: a tile's wall set holds its neighbours' walls within this fraction of its
#: smallest side (or 4 r_eff when more: room for larger radii to come)
MARGIN_REL = 0.1


def keep_tiles(world) -> int:
    """Tiles whose wall sets, and tiles whose witnesses, a world keeps
    (least recently used dropped first): as many as the walk has slots,
    ``max(max_tiles, 2)`` (a radius search holds that many tiles at once).
    Witnesses take about 200 bytes a face with one radius's masks; they
    are counted in :meth:`regn.World.memory` and held to ``max_bytes``."""
    return max(world.max_tiles, 2)


def world_r_eff(world, radius) -> float:
    """The clearance a path for ``radius`` keeps: the radius plus the
    margin of :data:`regn.tolerances.CLEARANCE_MARGIN_REL` of the world's
    scale (as :func:`regn.query.radius.portals.margin_radius` for one REGN
    of the world's box)."""
    from ..tolerances import CLEARANCE_MARGIN_REL
    m = world.manifest
    scale = float(max(np.abs(m.lo).max(), np.abs(m.hi).max()))
    return radius + CLEARANCE_MARGIN_REL * max(radius, scale)


def _margin(world, t, need):
    tile = world.manifest.tiles[t]
    return max(MARGIN_REL * float(np.min(tile.hi - tile.lo)), 4.0 * need)


def _walls_of(world, u, normals=False):
    """``(tri (W,3,3), faces (W,))``: tile ``u``'s real walls and their
    world face numbers, read without entering the tile LRU when it is not
    loaded (reading neighbours must not drop the tiles a search holds);
    with ``normals``, their (W,3) unit normals into the volume instead."""
    mesh = world._cache.get(u)
    if mesh is None:
        from ..format.reader import parse
        from .prepared import KeptMesh
        mesh = KeptMesh.from_parts(parse(world._read(u), path=world.manifest.tile_path(u)))
        world._install(u, mesh, keep=False)
    bf = np.asarray(mesh.boundary_faces, np.int64)
    real = ~world.linked[u][bf]
    if normals:
        from ..query.walls.nearest import _wall_normals
        return -_wall_normals(mesh)[real]
    bf = bf[real]
    return (np.asarray(mesh.vertices, np.float64)[np.asarray(mesh.face_vertices)[bf]],
            world.face_offset[u] + bf)


def neighbour_walls(world, t, margin):
    """``(tri (K,3,3), faces (K,))``: the real walls of the other tiles
    whose boxes come within ``margin`` of tile ``t``'s box (a superset: by
    the triangles' boxes), and their world face numbers."""
    tiles = world.manifest.tiles
    lo, hi = tiles[t].lo - margin, tiles[t].hi + margin
    tri, faces = [np.zeros((0, 3, 3))], [np.zeros(0, np.int64)]
    for u in range(len(tiles)):
        if u == t or np.any(tiles[u].lo > hi) or np.any(tiles[u].hi < lo):
            continue
        w, f = _walls_of(world, u)
        near = np.all(w.min(axis=1) <= hi, axis=1) & np.all(w.max(axis=1) >= lo, axis=1)
        tri.append(w[near])
        faces.append(f[near])
    return np.concatenate(tri), np.concatenate(faces)


def tile_bvh(world, t, need=0.0):
    """``(margin, bvh)``: tile ``t``'s wall set (module docstring) for a
    margin of at least ``need``, kept in the world; bvh None when there
    is no wall at all (:func:`wall_faces`: the world face of each of its
    triangles)."""
    from collections import OrderedDict

    from ..query.walls.nearest import _build_bvh
    t = int(t)
    sets = world.__dict__.setdefault("_wall_sets", OrderedDict())
    got = sets.get(t)
    if got is not None and got[0] >= need:
        sets.move_to_end(t)
        return got[:2]
    margin = _margin(world, t, need)
    own, own_faces = _walls_of(world, t)
    near, near_faces = neighbour_walls(world, t, margin)
    tri = np.concatenate([own, near])
    got = sets[t] = (margin, _build_bvh(tri) if len(tri) else None,
                     np.concatenate([own_faces, near_faces]))
    while len(sets) > keep_tiles(world):
        gone, _ = sets.popitem(last=False)
        # (its witnesses were made against this set: they go with it)
        world.__dict__.get("_radius_sets", {}).pop(gone, None)
    return got[:2]


def wall_normals(world, t) -> np.ndarray:
    """(K,3) the unit normal into the volume of each triangle of tile
    ``t``'s wall set, in its BVH's order (made when first asked)."""
    _, bvh = tile_bvh(world, t)
    got = world._wall_sets[int(t)]
    if len(got) == 3:
        faces = got[2]
        tiles = np.searchsorted(world.face_offset, faces, side="right") - 1
        out = np.zeros((len(faces), 3))
        for u in np.unique(tiles):
            rows = np.flatnonzero(tiles == u)
            _, f = _walls_of(world, int(u))
            n = _walls_of(world, int(u), normals=True)
            order = np.argsort(f)
            out[rows] = n[order[np.searchsorted(f[order], faces[rows])]]
        got = world._wall_sets[int(t)] = (*got, out)
    return got[3][bvh.row] if bvh is not None else got[3][:0]


def nearest_free(world, pts, radius):
    """``(points, tile)``: :meth:`regn.World.nearest` for a sphere of
    ``radius`` > 0, as :func:`regn.query.radius.free_space.nearest_free`
    answers for one REGN, against each point's tile's wall set: a point
    with the room stays, others are pushed from their nearest wall point
    (``push_clear``), and where pushes do not settle the answer comes from
    the tile's portal witness with the room nearest the point, moved
    towards it (``approach_clear``). Every answer is checked against the
    wall set of the tile it ends in; NaN and -1 where none is found."""
    from ..query.radius import _portal_kernels as PK
    from ..query.radius.free_space import APPROACH_STEPS, MAX_PUSHES
    r_eff = world_r_eff(world, radius)
    out = np.full(pts.shape, np.nan)
    tile = world.tile_at(pts)
    inside = world.locate(pts) >= 0
    for t in np.unique(tile[tile >= 0]):
        rows = np.flatnonzero((tile == t) & np.isfinite(pts).all(axis=1))
        _, bvh = tile_bvh(world, t, r_eff)
        if bvh is None:
            out[rows] = np.where(inside[rows, None], pts[rows], np.nan)
            continue
        moved = np.empty((len(rows), 3))
        PK.push_clear(bvh, np.ascontiguousarray(wall_normals(world, t)),
                      np.ascontiguousarray(pts[rows]), inside[rows], r_eff, MAX_PUSHES, moved)
        bad = ~_keeps_room(world, moved, r_eff)
        if bad.any():
            from .walk import tile_slots
            slots = tile_slots(world)
            slots.take([int(t)])
            rc = tile_radius(world, int(t), slots.arrays[int(slots.slot_of[t])], r_eff)
            roomy = np.flatnonzero(rc["clear"] >= r_eff)
            if len(roomy):
                from scipy.spatial import cKDTree
                _, i = cKDTree(rc["witness"][roomy]).query(pts[rows[bad]])
                part = np.full((int(bad.sum()), 3), np.nan)
                PK.approach_clear(bvh, np.ascontiguousarray(rc["witness"][roomy[i]]),
                                  np.ascontiguousarray(pts[rows[bad]]), r_eff,
                                  APPROACH_STEPS, part)
                moved[bad] = part
        out[rows] = moved
    ok = np.isfinite(out).all(axis=1)
    ok[ok] = _keeps_room(world, out[ok], r_eff * (1 - 1e-12))
    out[~ok] = np.nan
    return out


def _keeps_room(world, pts, r_eff):
    """(N,) each point is in the world's volume and at least r_eff from its
    walls (its tile's wall set)."""
    good = np.isfinite(pts).all(axis=1)
    good[good] = world.locate(pts[good]) >= 0
    tile = world.tile_at(np.where(good[:, None], pts, 0.0))
    for t in np.unique(tile[good]):
        rows = np.flatnonzero(good & (tile == t))
        good[rows] = tile_distance(world, t, pts[rows], r_eff) >= r_eff
    return good


def wall_faces(world, t) -> np.ndarray:
    """(K,) the world face number of each triangle of tile ``t``'s wall set
    in its BVH's order (``bvh.tri[k]`` is face ``wall_faces[k]``)."""
    _, bvh = tile_bvh(world, t)
    faces = world._wall_sets[int(t)][2]
    return faces[bvh.row] if bvh is not None else faces[:0]


def tile_distance(world, t, pts, need=0.0) -> np.ndarray:
    """(N,) the distance from each point of tile ``t`` to the world's walls
    when it is at most the tile's margin (at least ``need``; else more than
    it: the distance to its wall set); inf without walls."""
    from ._radius_kernels import points_clearance
    _, bvh = tile_bvh(world, t, need)
    pts = np.ascontiguousarray(pts, np.float64).reshape(-1, 3)
    out = np.full(len(pts), np.inf)
    if bvh is not None and len(pts):
        points_clearance(bvh, pts, np.inf, out)
    return out


def tile_radius(world, t, arrays, r_eff) -> dict:
    """Tile ``t``'s clearance structures (module docstring) for ``r_eff``,
    kept in the world, not with the tile (a tile dropped and read again
    finds them: they cost about twenty tile reads to make), for the last
    :func:`keep_tiles` tiles, the last
    :data:`KEEP_MASKS` radii each: ``{"bvh", "witness", "clear", "lo",
    "hi", "masks": {r_eff: (EF, ACR, XOP)}}`` in the search graph's internal
    face numbering; ``arrays``: the tile's walk arrays
    (:func:`regn.world.walk.tile_arrays`)."""
    from collections import OrderedDict
    t = int(t)
    _, bvh = tile_bvh(world, t, r_eff)
    kept = world.__dict__.setdefault("_radius_sets", OrderedDict())
    rc = kept.get(t)
    if rc is None or rc["bvh"] is not bvh:
        rc = kept[t] = _witnesses(world, t, arrays, bvh)
        while len(kept) > keep_tiles(world):
            kept.popitem(last=False)
    kept.move_to_end(t)
    masks = rc["masks"]
    if r_eff not in masks:
        masks[r_eff] = _masks(rc, arrays, r_eff)
        while len(masks) > KEEP_MASKS:
            masks.pop(next(iter(masks)))
    return rc


def _witnesses(world, t, arrays, bvh) -> dict:
    from ..query.paths._path_kernels import ET1
    from ..query.radius import _portal_kernels as PK
    from ..query.radius.portals import (
        _ASCENT_STEPS,
        _WITNESS_MIN_BARY,
        _by_position,
        _edge_bounds,
    )
    from .memory import own_array
    ei, fo, acr = arrays["EI"], arrays["FO"], arrays["ACR"]
    F = len(fo)
    witness = own_array((F + 1, 3), np.float64, np.nan)
    clear = own_array(F + 1, np.float64, -1.0)
    faces = np.flatnonzero((ei[:F, ET1] >= 0) | (acr >= 0))      # portals and linked faces
    if bvh is not None and len(faces):
        mesh = world.tile(t)
        tri = np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[fo[faces]]]
        tri = np.ascontiguousarray(_by_position(tri).reshape(-1, 9), np.float64)
        w, d = np.empty((len(faces), 3)), np.empty(len(faces))
        PK.portal_witnesses(bvh, tri, _ASCENT_STEPS, _WITNESS_MIN_BARY, w, d)
        witness[faces], clear[faces] = w, d
    elif bvh is None:
        clear[faces] = np.inf
        witness[faces] = arrays["CEN"][faces]
    graph = SimpleNamespace(face_order=fo, edge_int=ei, edge=ei.view(np.float32))
    lo, hi = _edge_bounds(graph, witness, clear)
    return {"bvh": bvh, "witness": witness, "clear": clear, "lo": lo, "hi": hi, "masks": {}}


def _masks(rc, arrays, r_eff):
    """(EF, ACR, XOP) of the tile for ``r_eff`` (module docstring)."""
    from ..query.radius import _portal_kernels as PK
    from ._radius_kernels import link_edges
    ei = arrays["EI"]
    F = len(arrays["FO"])
    lo, hi = rc["lo"], rc["hi"]
    if rc["bvh"] is not None:
        PK.refine_edges(rc["bvh"], ei.view(np.float32), ei, rc["witness"], lo, hi, r_eff)
    from .memory import own_array, own_copy
    masked = own_copy(ei, np.int32)
    ef = masked.view(np.float32)
    cost = ef[:, 0:12:2]
    cost[(cost >= 0) & ~(lo >= r_eff)] = -1.0
    acr = own_copy(arrays["ACR"], np.int64)
    acr[~(rc["clear"][:F] >= r_eff)] = -1
    xop = own_array((F, 8), np.uint8)
    if rc["bvh"] is not None:
        link_edges(rc["bvh"], ei, arrays["TFI"], acr, rc["witness"], rc["clear"], r_eff, xop)
    else:
        xop[:] = 1
    for v in (ef, acr, xop):
        v.flags.writeable = False
    return ef, acr, xop
