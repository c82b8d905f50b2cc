"""The mesh's boundary moved out to the clearance surface.

The tetrahedra of :mod:`.tetra` stop where the voxel solid (grown by the
agent's radius rounded up to whole voxels) begins, and only at the corners
of the coarsest blocks the format's counts allow: the navigable space ended
a block or more short of where the agent could really go (a floor 3 m up in
a 100 m room whose agent has a 1 m radius). Here:

1. the slivers that Delaunay makes of a flat boundary's jittered corners
   (a jitter thick, with a face on the boundary) are peeled, layer after
   layer: they hold no volume, and would turn over when their corners move;
2. each boundary vertex moves along its outward normal (the boundary
   faces' around it, weighted by area and by how thick their tetrahedron
   is) by sphere tracing: each step the distance to the nearest wall (a
   triangle of the input, a face of a voxel input's solid, or a ball) less
   the aim, so it stops :data:`MARGIN` beyond the reach (the radius plus
   half the crack) and never passes it; a box-face coordinate stays, and
   a pinned vertex (a world tile's on the walls it shares) stays whole;
3. a move is kept only when every tetrahedron around the vertex keeps its
   orientation, is not degenerate nor flat for float32
   (:func:`.tetra.unusable`), stays at least the reach less ``depth_tol`` from
   every wall measured solid to solid (:func:`._wall_tree_kernels.tet_wall_distances`:
   an edge or a face cutting a convex wall corner counts, not only the
   corners), the vertex's straight way from where the cull left it stays as
   far, and no two tetrahedra overlap; a tetrahedron that fails halves the
   step of its moving corners, round after round, down to no move at all.
   A sliver whose corners all lie on the boundary and that the move
   flattens is dropped instead (then whatever that pinches).

Why the moved tetrahedra stay on the free side: a vertex's way stays off
every wall, so it crosses none; a tetrahedron that meets no wall lies on
one side of each, the side of its moved corner. The build report's check
(:func:`regn.levels.build.finish`) measures all of it again on the stored
float32 mesh.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..geometry.tets import (FACE_SLOTS, boundary_face_slots, edge_lengths, least_heights,
                             signed_volumes, tets_by_vertex, used_vertices)
from .tetra import unusable

#: A snapped vertex ends this far (metres) beyond the reach from its wall,
#: plus a few float32 steps of the coordinates (the rounding of its place).
MARGIN = 0.002
MARGIN_ULPS = 4
#: Halvings of a vertex's step before it stays where the cull left it.
HALVINGS = 6
#: Sphere-tracing steps of a vertex's way out, and the gap (a share of the
#: reach) where it stops.
TRACE_STEPS = 24
TRACE_TOL = 1e-3
#: Passes over the boundary (a vertex held back by a neighbour that moved
#: later tries again).
PASSES = 2
#: A boundary face whose tetrahedron's height over it is under this share
#: of its longest edge counts less in its corners' way out.
SLIVER = 0.2
#: Tetrahedra thinner than this (:func:`_thickness`) with every corner on
#: the boundary are peeled before the move, at most PEEL_ROUNDS layers.
SLIVER_PEEL = 0.02
PEEL_ROUNDS = 8
#: The weight, in a vertex's way out, of a boundary face by a pinned vertex.
PINNED_SAY = 1e-3


class Walls:
    """A level's triangles (F,3,3) in the wall hierarchy of the wall queries
    (:func:`regn.query.walls.nearest._build_bvh`) and balls (centres,
    radii), for the nearest-wall and tetrahedron-distance kernels
    (:mod:`._wall_tree_kernels`)."""

    def __init__(self, tris, centres, radii):
        from ..query.walls.nearest import _build_bvh
        self.bvh = _build_bvh(np.asarray(tris, np.float64).reshape(-1, 3, 3))
        if self.bvh is None:    # balls only: one triangle beyond every box, no second form
            self.bvh = _build_bvh(np.full((1, 3, 3), 1e300))
        self.centres = np.ascontiguousarray(centres, np.float64).reshape(-1, 3)
        self.radii = np.ascontiguousarray(radii, np.float64).reshape(-1)

    def nearest(self, points, search):
        """(N,) each point's distance to the nearest wall nearer than
        ``search`` (inf when none is)."""
        from ._wall_tree_kernels import nearest_wall_distances
        p = np.ascontiguousarray(points, np.float64).reshape(-1, 3)
        return nearest_wall_distances(self.bvh, p, self.centres, self.radii, float(search))

    def tet_distances(self, tp, limit):
        """(K,) distance from each tetrahedron (K,4,3) to the walls, exact
        below ``limit`` (``limit`` when none is nearer)."""
        from ._wall_tree_kernels import tet_wall_distances
        if not len(tp):
            return np.zeros(0)
        return tet_wall_distances(self.bvh, np.ascontiguousarray(tp, np.float64),
                                  self.centres, self.radii, float(limit))


def voxel_faces(vox):
    """(F,3,3) the triangles of the faces of a voxel input's solid voxels
    that no other solid voxel covers (two a face)."""
    ijk = np.asarray(vox.ijk, np.int64)
    if not len(ijk):
        return np.zeros((0, 3, 3))
    base = ijk.min(axis=0) - 1
    n = ijk.max(axis=0) - base + 2
    occ = np.zeros(tuple(int(x) for x in n), bool)
    occ[tuple((ijk - base).T)] = True
    tris = []
    for axis in range(3):
        u, w = [(1, 2), (2, 0), (0, 1)][axis]
        for side in (0, 1):
            step = np.zeros(3, np.int64)
            step[axis] = 1 if side else -1
            nb = ijk - base + step
            open_ = ~occ[tuple(nb.T)]
            c = ijk[open_].astype(np.float64)
            c[:, axis] += side
            eu, ew = np.zeros(3), np.zeros(3)
            eu[u], ew[w] = 1.0, 1.0
            q = np.stack([c, c + eu, c + eu + ew, c + ew], axis=1)
            tris += [q[:, [0, 1, 2]], q[:, [0, 2, 3]]]
    return np.asarray(vox.origin, np.float64) + vox.size * np.concatenate(tris)


def level_triangles(level):
    """``(verts (V,3), tris (F,3))``: a soup's own, or a voxel input's
    faces (:func:`voxel_faces`, three corners each)."""
    from .readers import Voxels
    if isinstance(level, Voxels):
        verts = voxel_faces(level).reshape(-1, 3)
        return verts, np.arange(len(verts)).reshape(-1, 3)
    return np.asarray(level.verts, np.float64), np.asarray(level.tris)


def balls(spheres):
    """``(centres (B,3), radii (B,))`` of sphere obstacles."""
    spheres = list(spheres)
    return (np.array([s.centre for s in spheres], np.float64).reshape(-1, 3),
            np.array([s.radius for s in spheres], np.float64))


def level_walls(level, spheres):
    """The :class:`Walls` of a soup or voxel input and balls."""
    verts, tris = level_triangles(level)
    return Walls(verts[tris], *balls(spheres))


def boundary_vertices(tets):
    """(M,) the vertices on faces that only one tetrahedron has."""
    return np.unique(tets[:, FACE_SLOTS][boundary_face_slots(tets)])


def _around(starts, around, v):
    """The tetrahedra around any of the vertices ``v``."""
    n = starts[v + 1] - starts[v]
    first = np.repeat(starts[v] - np.concatenate([[0], np.cumsum(n)[:-1]]), n)
    return np.unique(around[first + np.arange(n.sum())])


def _worn(tp, sign):
    """(K,) bool: tetrahedra ``tp`` (K,4,3) turned over from ``sign``,
    degenerate or flat for float32."""
    vol = signed_volumes(tp)
    return (np.sign(vol) != sign) | unusable(tp, vol)


def _held_back(pts, tets, sign, rim, walls, floor):
    """(K,) bool: which of ``tets`` at ``pts`` hold their corners' moves
    back: nearer the walls than ``floor``, or worn (:func:`_worn`) without
    every corner on the boundary (``rim``). A worn one with every corner
    on the boundary is a sliver of the boundary's jittered plane, flattened
    when its corners reach the wall's clearance plane together: it is
    dropped (:func:`_collapsed`), no reason to hold the move back."""
    tp = pts[tets]
    near = walls.tet_distances(tp, floor) < floor
    return near | (_worn(tp, sign) & ~rim[tets].all(axis=1))


class _Judge(NamedTuple):
    """What the moves are judged by: each tetrahedron's orientation at the
    snap's start (``sign``), the boundary's vertices that may collapse a
    sliver (``rim``), which tetrahedra were worn at the start (``settled``:
    none after the cull, kept to be exact) and the start's places
    (``origin``)."""
    sign: np.ndarray
    rim: np.ndarray
    settled: np.ndarray
    origin: np.ndarray


def _collapsed(pts, tets, judge, walls, floor):
    """(T,) bool: the slivers :func:`_held_back` lets go, worn with every
    corner on the boundary and no nearer the walls than ``floor`` (only
    the tetrahedra with a moved corner are judged again, and only those
    worn measured against the walls)."""
    moved = np.flatnonzero(np.any(pts != judge.origin, axis=1)[tets].any(axis=1))
    worn = judge.settled.copy()
    worn[moved] = _worn(pts[tets[moved]], judge.sign[moved])
    out = np.zeros(len(tets), bool)
    cand = np.flatnonzero(worn & judge.rim[tets].all(axis=1))
    out[cand] = walls.tet_distances(pts[tets[cand]], floor) >= floor
    return out


def snap(verts, tets, walls, reach, box, depth_tol, search, pinned=None):
    """``(verts, tets, stats, (before, after))``: ``verts`` with the
    boundary's moved toward the walls (see the module's docstring), ``tets``
    without the slivers that flattens, the moved vertices' places. ``box``
    ``(lo, hi)``: they stay in it (a coordinate on one of its faces stays
    there); ``search``: how far from the walls a vertex may start;
    ``pinned`` (V,) bool: vertices that stay where they are (a world
    tile's on the walls it shares: a coordinate on the face alone would
    let them slide in its plane, each tile its own way)."""
    lo, hi = (np.asarray(b, np.float64) for b in box)
    lo32 = np.maximum(lo.astype(np.float32).astype(np.float64), lo)
    hi32 = np.minimum(hi.astype(np.float32).astype(np.float64), hi)
    scale = float(np.abs(np.concatenate([lo, hi])).max())
    margin = MARGIN + MARGIN_ULPS * float(np.spacing(np.float32(max(scale, 1e-30))))
    stats = {"snapped_vertices": 0, "snap_rounds": 0, "snap_mean_move": 0.0}
    floor = max(reach - depth_tol, 0.5 * margin)
    tets, stats["snap_peeled_slivers"] = _peeled(verts, tets, pinned)
    sign = np.sign(signed_volumes(verts[tets]))
    around, starts = tets_by_vertex(tets, len(verts))
    b = boundary_vertices(tets)
    rim = np.zeros(len(verts), bool)
    rim[b] = True
    if pinned is not None:          # a sliver by a pinned vertex stays (held back, not dropped)
        rim &= ~pinned
    judge = _Judge(sign, rim, _worn(verts[tets], sign), verts)
    pts = verts
    for _ in range(PASSES):
        b, normal = _normals(pts, tets, pinned)
        if pinned is not None:
            b, normal = b[~pinned[b]], normal[~pinned[b]]
        delta = _traces(pts[b], normal, walls, reach + margin, search - reach, lo32, hi32)
        go = np.any(delta != 0.0, axis=1)
        if not go.any():
            break
        pts = _settle(pts, tets, b[go], delta[go], judge, (starts, around),
                      walls, floor, (lo32, hi32), stats)
    move = np.linalg.norm(pts[b] - verts[b], axis=1)
    stats.update({"snapped_vertices": int((move > 0).sum()),
                  "snap_mean_move": float(move[move > 0].mean()) if (move > 0).any() else 0.0})
    moved = np.flatnonzero(np.any(pts != verts, axis=1))
    return (*_without_collapsed(pts, tets, judge, walls, floor, stats),
            (verts[moved], pts[moved]))


def _without_collapsed(pts, tets, judge, walls, floor, stats):
    """``(pts, tets)`` without the collapsed slivers (and what dropping
    them pinches or cuts off), the points unused dropped."""
    from ..builder.world import closed
    collapsed = _collapsed(pts, tets, judge, walls, floor)
    tets, n_pinch, n_specks = closed(pts, tets[~collapsed])
    stats.update({"snap_dropped_slivers": int(collapsed.sum()),
                  "snap_dropped_pinching": int(n_pinch), "snap_dropped_specks": int(n_specks)})
    return (*used_vertices(pts, tets), stats)


def _thickness(tp):
    """(T,) each tetrahedron's least height over its longest edge (about
    0.4 for a cube's sixth, 0 for a flat one)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(least_heights(tp, signed_volumes(tp)) / edge_lengths(tp).max(axis=1))


def _peeled(pts, tets, pinned=None):
    """``(tets, dropped)``: without the slivers with a face on the
    boundary (but those with a ``pinned`` corner), layer after layer.
    Delaunay over the jittered corners of a flat boundary (a floor's) joins
    them into tetrahedra a jitter thick, in layers, some with a face on the
    boundary, others over a boundary vertex: moving that vertex out to the
    wall would turn them over. They hold no volume."""
    from ..builder.world import closed
    thin = _thickness(pts[tets]) < SLIVER_PEEL
    if pinned is not None:          # near a pinned wall, whose faces a neighbour has, all stay
        thin &= ~pinned[tets].any(axis=1)
    dropped = 0
    for _ in range(PEEL_ROUNDS):
        drop = thin & boundary_face_slots(tets).any(axis=1)
        if not drop.any():
            break
        tets, thin = tets[~drop], thin[~drop]
        dropped += int(drop.sum())
    tets, n_pinch, n_specks = closed(pts, tets)
    return tets, dropped + n_pinch + n_specks


def _normals(pts, tets, pinned=None):
    """``(vertices (M,), unit normals (M,3))``: the boundary's vertices and
    the area-weighted mean of the outward normals of the boundary faces
    around each (those by a ``pinned`` vertex almost without a say: they
    slope to where it stays, and would turn the way out sideways)."""
    outer = boundary_face_slots(tets)
    f, apex = tets[:, FACE_SLOTS][outer], tets[outer]
    a, b_, c = pts[f[:, 0]], pts[f[:, 1]], pts[f[:, 2]]
    n = np.cross(b_ - a, c - a)
    lift = np.einsum("ij,ij->i", n, pts[apex] - a)
    # weighted by how far the tetrahedron's fourth corner stands off the
    # face, over the face's longest edge: the slivers of the boundary's
    # jittered plane (all four corners on it, faces of any size) have no
    # say in the way out
    edge = np.max([np.linalg.norm(x, axis=1) for x in (b_ - a, c - a, c - b_)], axis=0)
    area2 = np.linalg.norm(n, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        thick = np.nan_to_num(np.abs(lift) / (area2 * edge))
    n *= (-np.sign(lift) * np.minimum(thick / SLIVER, 1.0))[:, None]
    if pinned is not None:
        n[pinned[f].any(axis=1)] *= PINNED_SAY
    acc = np.zeros_like(pts)
    for k in range(3):
        np.add.at(acc, f[:, k], n)
    verts = np.unique(f)
    nv = acc[verts]
    length = np.linalg.norm(nv, axis=1)
    return verts, np.divide(nv, length[:, None], out=np.zeros_like(nv),
                            where=length[:, None] > 0)


def _traces(p, n, walls, aim, travel, lo32, hi32):
    """(N,3) the moves of points ``p`` along the directions ``n`` up to
    ``aim`` from the walls: sphere tracing (each step the distance to the
    nearest wall less ``aim``, so no step passes the surface), at most
    ``travel``; a coordinate on the box's face stays, and a point with no
    wall within reach of its way stays."""
    n = np.where((p <= lo32) | (p >= hi32), 0.0, n)
    t = np.zeros(len(p))
    seen = np.zeros(len(p), bool)
    live = np.linalg.norm(n, axis=1) > 0.5
    for _ in range(TRACE_STEPS):
        if not live.any():
            break
        i = np.flatnonzero(live)
        d = walls.nearest(np.clip(p[i] + t[i, None] * n[i], lo32, hi32), aim + travel)
        seen[i] |= np.isfinite(d)
        gap = np.where(np.isfinite(d), d - aim, travel)
        t[i] = np.minimum(t[i] + np.maximum(gap, 0.0), travel)
        live[i] = (gap > TRACE_TOL * aim) & (t[i] < travel)
    t[~seen] = 0.0
    return np.clip(p + t[:, None] * n, lo32, hi32) - p


def _settle(verts, tets, b, delta, judge, vertex_tets, walls, floor, box, stats):
    """``verts`` with ``b`` moved by as much of ``delta`` as every
    tetrahedron around them allows, and the straight way from their place
    at the snap's start (``judge.origin``; the step of a failing one's
    moving corners halved, round after round)."""
    sign, rim, origin = judge.sign, judge.rim, judge.origin
    starts, around = vertex_tets
    step = np.ones(len(b))
    changed = np.ones(len(b), bool)
    pts = verts
    while changed.any():
        pts = _placed(verts, b, delta, step, *box)
        stats["snap_rounds"] += 1
        cand = _around(starts, around, b[changed])
        bad = cand[_held_back(pts, tets[cand], sign[cand], rim, walls, floor)]
        idx = np.flatnonzero(changed)
        segs = np.stack([origin[b[idx]], pts[b[idx]], pts[b[idx]], pts[b[idx]]], axis=1)
        stray = idx[walls.tet_distances(segs, floor) < floor]
        if not len(bad) and not len(stray):
            collapsed = _collapsed(pts, tets, judge, walls, floor)
            bad = _overlapping(pts, tets, ~collapsed)
            if len(bad):                 # a move into another part of the mesh: none at all
                hit = np.isin(b, tets[bad].ravel()) & (step > 0)
                step[hit] = 0.0
                changed = hit
                continue
        hit = np.isin(b, tets[bad].ravel()) & (step > 0)
        hit[stray] = True
        step[hit] *= 0.5
        step[step < 0.5 ** HALVINGS] = 0.0
        changed = hit
    return pts


def _placed(verts, b, delta, step, lo32, hi32):
    """``verts`` with vertices ``b`` moved by ``step`` of ``delta``, in the
    box, at float32 positions."""
    pts = verts.copy()
    moved = np.clip(verts[b] + step[:, None] * delta, lo32, hi32)
    pts[b] = moved.astype(np.float32).astype(np.float64)
    return pts


def _overlapping(pts, tets, keep):
    """The tetrahedra (of those ``keep``) in a pair that overlap (what the
    REGN build refuses)."""
    from ..geometry.overlap import overlapping_tets
    idx = np.flatnonzero(keep)
    found = overlapping_tets(pts[tets[idx]], tets[idx])
    return idx[np.unique(np.asarray(found.pairs, np.int64).ravel())]


def clearance_check(pts, tets, walls, reach, depth_tol):
    """``(violations, least distance)``: tetrahedra nearer the walls than
    ``reach - depth_tol`` (solid to solid), and the least distance (capped
    at ``reach``). (With no radius the cull's tetrahedra may touch a wall,
    so touching is no violation, and this cannot tell a tetrahedron through
    an open sheet from one touching it: the snap keeps its moved ones
    :data:`MARGIN` / 2 off, and the voxel check holds for the others.)"""
    d = np.minimum(walls.tet_distances(pts[tets], max(reach, MARGIN)), reach)
    return int((d < reach - depth_tol).sum()), float(d.min(initial=reach))


def move_check(pts, before, after, walls, reach, depth_tol):
    """``(snapped (V,) bool, bad moves)``: which of the vertices ``pts`` are
    at a moved place ``after`` (M,3), and how many of the moves from
    ``before`` came nearer the walls than the reach less ``depth_tol``
    on their way (a move that crossed a wall would have)."""
    key = np.ascontiguousarray(pts, np.float32).view("V12").ravel()
    moved = np.ascontiguousarray(after, np.float32).view("V12").ravel()
    segs = np.stack([before, after, after, after], axis=1)
    d = walls.tet_distances(segs, max(reach, MARGIN))
    return np.isin(key, moved), int((d < reach - depth_tol).sum())
