"""Swept spheres: raycast, line_of_sight and raycast_many for a sphere of
radius r > 0 moving from a to b (the capsule a b of radius r).

The sphere touches a wall where its centre comes within r of a boundary
triangle (touching counts). The segment is clear when that never happens
on the way from a to b; otherwise the answer is the first contact: its
fraction t along the segment (0 when the sphere already touches a wall at
a), the wall point touched, and the unit normal at that point pointing from
the sphere's centre into the wall (out of the volume; on a face's interior,
the face's normal). For r > 0 there is no need to walk the tetrahedra: a
centre that stays r from every wall cannot leave the volume, which every
boundary triangle bounds. Only the start is located (a start outside the
volume is ``start_outside``), and ``raycast`` walks the centre's segment up
to the contact to list the tetrahedra crossed.

Each contact is exact up to rounding: the earliest entry of the centre into
the set of points within r of a wall triangle (a slab over the face, a
cylinder round each edge, a ball at each corner;
:func:`regn.geometry._segment_kernels.sphere_sweep_triangle`), found by a descent of
the wall BVH (:func:`regn.query.sight._sweep_kernels.sphere_sweeps`) that skips
every node whose box, grown by r, the segment enters only after the best
contact so far.
"""

from __future__ import annotations

import math

import numpy as np

from ...status import CLEAR, HIT, LOST, NAMES, START_OUTSIDE
from ..common import as_point, as_radius

_NAN3 = (math.nan,) * 3
#: segments per chunk of a batch (a thread takes one chunk at a time)
SWEEP_CHUNK = 8192


def _kernels():
    from . import _sweep_kernels
    return _sweep_kernels


def sweep_segments(mesh, a, b, radius, first, workers=None):
    """(status codes, fraction, wall row) of the sphere of ``radius`` swept
    along each validated segment a[i] -> b[i] (N,3): the contact's fraction
    (the first contact when ``first``, else any contact: a cheaper yes/no)
    and boundary-face row (:func:`regn.query.walls.nearest._wall_tris`), NaN/-1
    without one. Statuses by raycast's rules: a non-finite a
    START_OUTSIDE, else a non-finite b LOST, else a start outside the
    volume START_OUTSIDE, else CLEAR or HIT. ``workers`` threads (None:
    every core) share the segments, SWEEP_CHUNK at a time."""
    from ..locating.locate import locate
    from ..walls.nearest import _wall_bvh
    n = len(a)
    status = np.full(n, START_OUTSIDE, dtype=np.int64)
    frac = np.full(n, np.nan)
    row = np.full(n, -1, dtype=np.int64)
    fa = np.isfinite(a).all(axis=1)
    fb = np.isfinite(b).all(axis=1)
    status[fa & ~fb] = LOST
    todo = np.flatnonzero(fa & fb)
    if len(todo):
        inside = locate(mesh, a[todo], workers=workers) >= 0
        todo = todo[inside]
    status[todo] = CLEAR
    bvh = _wall_bvh(mesh)
    if len(todo) == 0 or bvh is None:
        return status, frac, row
    t = np.full(len(todo), np.nan)
    k = np.full(len(todo), -1, dtype=np.int64)
    at, bt = np.ascontiguousarray(a[todo]), np.ascontiguousarray(b[todo])
    sweeps, r, first = _kernels().sphere_sweeps, float(radius), bool(first)
    from ..._jit import run_chunks
    run_chunks(lambda i, j, _: sweeps(bvh, at[i:j], bt[i:j], r, first, t[i:j], k[i:j]),
               len(todo), workers, chunk=SWEEP_CHUNK)
    hit = k >= 0
    status[todo[hit]] = HIT
    frac[todo[hit]] = t[hit]
    row[todo[hit]] = bvh.row[k[hit]]
    return status, frac, row


def contacts(mesh, a, b, radius, frac, row):
    """(faces, wall points, normals) of the first contacts at fractions
    ``frac`` with boundary-face rows ``row`` (K each): the wall point is the
    triangle's point nearest the sphere's centre a + t (b - a); at t = 0
    the nearest wall of all (several may touch the sphere there)."""
    from ..walls.nearest import _nearest_wall, _wall_tris
    walls = _wall_tris(mesh)
    centre = a + frac[:, None] * (b - a)
    start = frac == 0
    row = row.copy()
    if start.any():
        row[start] = _nearest_wall(mesh, centre[start])[2]
    from ...geometry._closest_kernels import closest_points_on_triangles
    point = closest_points_on_triangles(np.ascontiguousarray(centre),
                                        np.ascontiguousarray(walls["tri"][row], np.float64))
    normal = point - centre
    length = np.linalg.norm(normal, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        normal = normal / length[:, None]
    flat = ~(length > 0)                 # the centre on the wall: the face's own normal
    if flat.any():
        normal[flat] = _outward_normals(mesh, walls["bf"][row[flat]], walls["owner"][row[flat]])
    return walls["bf"][row], point, normal


def _outward_normals(mesh, faces, owners):
    """Unit normals of boundary faces, pointing out of their tetrahedra."""
    n = np.asarray(mesh.face_normals, dtype=np.float64)[faces]
    out = (np.asarray(mesh.face_centroids, dtype=np.float64)[faces]
           - np.asarray(mesh.tet_points, dtype=np.float64)[owners].mean(axis=1))
    flip = np.einsum("kd,kd->k", n, out) < 0
    return np.where(flip[:, None], -n, n)


def raycast_radius(mesh, a, b, radius):
    """:func:`regn.query.sight.raycast.raycast` for a sphere of ``radius`` > 0."""
    from .raycast import RaycastHit, raycast
    a, b, radius = as_point(a, "a"), as_point(b, "b"), as_radius(radius)
    status, frac, row = sweep_segments(mesh, a[None], b[None], radius, True)
    code = int(status[0])
    if code == START_OUTSIDE or code == LOST:
        return RaycastHit(False, NAMES[code])
    if code == CLEAR:
        tets = raycast(mesh, a, b).tets
        return RaycastHit(True, NAMES[CLEAR], -1, b.copy(), 1.0, np.array(_NAN3), tets)
    t = float(frac[0])
    face, point, normal = contacts(mesh, a[None], b[None], radius, frac, row)
    tets = raycast(mesh, a, a + t * (b - a)).tets
    return RaycastHit(False, NAMES[HIT], int(face[0]), point[0], t, normal[0], tets)


def line_of_sight_radius(mesh, a, b, radius, *, workers=None):
    """:func:`regn.query.sight.raycast.line_of_sight` for a sphere of ``radius``
    > 0: True where it touches no wall on the way (on ``workers`` threads)."""
    from .raycast import segment_pairs
    a, b = segment_pairs(a, b)
    return sweep_segments(mesh, a, b, as_radius(radius), False, workers)[0] == CLEAR


def raycast_many_radius(mesh, a, b, radius, *, workers=None):
    """:func:`regn.query.sight.raycast.raycast_many` for a sphere of ``radius`` > 0
    (on ``workers`` threads)."""
    from .raycast import hits_report, segment_pairs
    a, b = segment_pairs(a, b)
    radius = as_radius(radius)
    code, frac, row = sweep_segments(mesh, a, b, radius, True, workers)
    out = hits_report(code, a, b)
    hit = np.flatnonzero(code == HIT)
    if len(hit):
        out.t[hit] = frac[hit]
        out.face[hit], out.point[hit], out.normal[hit] = contacts(
            mesh, a[hit], b[hit], radius, frac[hit], row[hit])
    return out
