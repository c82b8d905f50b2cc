"""Positions where a sphere of radius r fits: ``nearest(points, radius=r)``
and ``random_points(n, radius=r)``.

A position fits a sphere of radius r when it lies in the navigable volume
and is at least r from every wall (plus the margin of
:data:`regn.tolerances.CLEARANCE_MARGIN_REL`, so that rounding never finds
it closer). ``nearest`` pushes a point that lacks the room away from its
nearest wall point (:func:`regn.query.radius._portal_kernels.push_clear`): the
exact nearest position with the room when the point's nearest walls belong
to one convex rock or a box wall. Where walls meet in a gap too narrow for
the sphere, pushes from one side to the other do not settle; then the answer
starts from the portal witness with the room nearest the point
(:mod:`regn.query.radius.portals`) and moves straight towards the point for as
long as the swept sphere keeps the room
(:func:`regn.query.radius._portal_kernels.approach_clear`). ``random_points``
draws uniformly from the positions with the room, by rejection from the
tetrahedra that can hold one.
"""

from __future__ import annotations

import numpy as np

from ...errors import QueryError
from ..common import as_points, as_radius, scratch

#: pushes ``nearest`` tries before it falls back on a witness (a gap or
#: pocket too narrow for the sphere)
MAX_PUSHES = 32
#: points per chunk of ``nearest``'s pushes (a thread takes one chunk at a time)
PUSH_CHUNK = 4096
#: bisection steps of the approach from a witness
APPROACH_STEPS = 40
#: ``random_points`` draws at most this many candidates per point asked for
#: (and at least MIN_DRAWS) before it reports that the room is too rare
MAX_DRAWS_PER_POINT = 1000
MIN_DRAWS = 100_000


def _kernels():
    from . import _portal_kernels
    return _portal_kernels


def inward_normals(mesh):
    """(K,3) unit normal of each wall triangle of the BVH (its rows),
    pointing into the volume (cached)."""
    s = scratch(mesh)
    if "inward_normals" not in s:
        from ..walls.nearest import _wall_bvh, _wall_tris
        from ..sight.sweep import _outward_normals
        bvh, walls = _wall_bvh(mesh), _wall_tris(mesh)
        rows = bvh.row if bvh is not None else np.zeros(0, np.int64)
        s["inward_normals"] = -_outward_normals(mesh, walls["bf"][rows], walls["owner"][rows])
    return s["inward_normals"]


def nearest_free(mesh, points, radius, *, workers=None):
    """:func:`regn.query.walls.nearest.nearest` for a sphere of ``radius`` > 0: a
    :class:`regn.query.walls.nearest.NearestResult`. A point in the volume with
    clearance of at least the radius (and margin) stays; others are pushed
    (see the module docstring); NaN and -1 where no position is reached, or
    where the one reached is not in the volume. ``workers`` threads (None:
    every core) share the points."""
    from ..._jit import run_chunks
    from .portals import margin_radius
    from ..locating.locate import locate
    from ..walls.nearest import NearestResult, _wall_bvh
    pts = as_points(points)
    radius = as_radius(radius)
    out = np.full(pts.shape, np.nan)
    tets = locate(mesh, pts, workers=workers)
    bvh = _wall_bvh(mesh)
    if bvh is None:                      # no walls: every point inside has room
        inside = tets >= 0
        out[inside] = pts[inside]
        return NearestResult(out, tets)
    todo = np.flatnonzero(np.isfinite(pts).all(axis=1))
    moved = np.empty((len(todo), 3))
    push, normals, r_eff = _kernels().push_clear, inward_normals(mesh), \
        margin_radius(mesh, radius)
    start, inside = np.ascontiguousarray(pts[todo]), tets[todo] >= 0
    run_chunks(lambda i, j, _: push(bvh, normals, start[i:j], inside[i:j], r_eff, MAX_PUSHES,
                                    moved[i:j]), len(todo), workers, chunk=PUSH_CHUNK)
    out[todo] = moved
    tets = locate(mesh, out, workers=workers)
    stuck = np.flatnonzero(np.isfinite(pts).all(axis=1) & (tets < 0))
    if len(stuck):
        out[stuck] = _from_witnesses(mesh, bvh, pts[stuck], r_eff)
        tets[stuck] = locate(mesh, out[stuck], workers=workers)
    out[tets < 0] = np.nan
    return NearestResult(out, tets)


def _from_witnesses(mesh, bvh, pts, r_eff):
    """For each point, the approach towards it from the nearest portal
    witness whose clearance is at least r_eff (NaN when no witness has it)."""
    from scipy.spatial import cKDTree
    from .portals import portal_clearance
    pc = portal_clearance(mesh)
    roomy = np.flatnonzero(pc.clearance >= r_eff)
    out = np.full(pts.shape, np.nan)
    if len(roomy) == 0:
        return out
    _, i = cKDTree(pc.witness[roomy]).query(pts)
    # a point so far out that its squared distances overflow has no nearest
    # witness (cKDTree answers the count): NaN, as nearest() answers it
    found = i < len(roomy)
    part = np.full((int(found.sum()), 3), np.nan)
    _kernels().approach_clear(bvh, np.ascontiguousarray(pc.witness[roomy[i[found]]]),
                              np.ascontiguousarray(pts[found]), r_eff, APPROACH_STEPS, part)
    out[found] = part
    return out


def random_free(mesh, n, radius, seed=None):
    """(n,3) points uniform over the positions of the volume with clearance
    of at least ``radius`` (and margin; ``seed`` as for
    :func:`regn.query.locating.sample.random_points`, which answers radius 0): candidates uniform in the
    tetrahedra that can hold such a position (volume-weighted; a
    tetrahedron can when its centroid's clearance plus its farthest corner
    reaches the radius, the distance being 1-Lipschitz), kept where their
    clearance is enough; QueryError when there are none, or when fewer than
    one candidate in MAX_DRAWS_PER_POINT is kept."""
    from .portals import margin_radius
    from ..walls.nearest import distance_to_wall
    from ..locating.sample import random_points, whole_count
    n, radius = whole_count(n), as_radius(radius)
    if n == 0 or radius == 0.0:
        return random_points(mesh, n, seed)
    rng = np.random.default_rng(seed)
    r_eff = margin_radius(mesh, radius)
    vol, reach = _tet_room(mesh)
    vol = np.where(reach >= r_eff, vol, 0.0)
    if not vol.sum() > 0:
        raise QueryError(f"no position of the volume has clearance {radius:g} m")
    p = vol / vol.sum()
    pts = np.asarray(mesh.tet_points)
    kept, n_kept, drawn = [], 0, 0
    budget = max(MIN_DRAWS, MAX_DRAWS_PER_POINT * n)
    while n_kept < n and drawn < budget:
        batch = int(min(budget - drawn, max(1024, 2 * (n - n_kept))))
        t = rng.choice(len(vol), size=batch, p=p)
        w = rng.exponential(size=(batch, 4))
        w /= w.sum(axis=1, keepdims=True)
        x = np.einsum("nk,nkd->nd", w, pts[t])
        x = x[distance_to_wall(mesh, x) >= r_eff]
        kept.append(x)
        n_kept += len(x)
        drawn += batch
    if n_kept < n:
        raise QueryError(f"positions with clearance {radius:g} m are too rare: {n_kept} "
                         f"of {drawn} candidates")
    return np.concatenate(kept)[:n]


def _tet_room(mesh):
    """(T,) volumes (non-finite: 0) and the most clearance each tetrahedron
    can hold: its centroid's clearance plus its farthest corner (cached)."""
    s = scratch(mesh)
    if "tet_room" not in s:
        from ..walls.nearest import distance_to_wall
        pts = np.asarray(mesh.tet_points, dtype=np.float64)
        vol = np.asarray(mesh.tet_volumes, dtype=np.float64)
        vol = np.where(np.isfinite(vol), vol, 0.0)
        centre = pts.mean(axis=1)
        corner = np.linalg.norm(pts - centre[:, None], axis=2).max(axis=1)
        reach = np.nan_to_num(distance_to_wall(mesh, centre) + corner, nan=-1.0)
        s["tet_room"] = (vol, reach)
    return s["tet_room"]
