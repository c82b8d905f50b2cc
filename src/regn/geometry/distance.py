"""Exact distances and intersection tests between points, segments,
triangles, tetrahedra and balls, all closed sets (touching counts).

Every function works pair by pair on stacks (``(..., 3)`` points, ``(P,4,3)``
tetrahedra, ``(P,3,3)`` triangles) with numpy broadcasting; the
many-against-many tests find their candidate pairs with
:func:`regn.geometry.pairs.aabb_pairs` first and run the exact test over
chunks of :data:`PAIR_CHUNK` pairs.
"""

from __future__ import annotations

import numpy as np

from ..tolerances import PARALLEL_SIN2
from .pairs import aabb_pairs, box_point_pairs
from .tets import FACE_SLOTS, TET_EDGES, points_in_tets, tet_bounds

#: Pairs per vectorised batch of an exact test.
PAIR_CHUNK = 40_000
#: Squared lengths below this are zero-length segments.
_TINY = 1e-300


def _dot(a, b):
    return np.einsum("...i,...i->...", a, b)


def point_triangle_distance(p, a, b, c):
    """Exact distance from points ``p`` to closed triangles ``abc``, pair by
    pair after broadcasting (``(..., 3)`` each; the compiled closest-point
    test of :func:`regn.geometry._closest_kernels.closest_point_on_triangle`)."""
    from ._closest_kernels import point_triangle_distances
    p, a, b, c = np.broadcast_arrays(*(np.asarray(x, np.float64) for x in (p, a, b, c)))
    shape = p.shape[:-1]
    tri = np.stack([a, b, c], axis=-2).reshape(-1, 3, 3)
    return point_triangle_distances(np.ascontiguousarray(p.reshape(-1, 3)),
                                    tri).reshape(shape)


def segment_segment_distance(p1, q1, p2, q2):
    """Exact distance between segments ``[p1, q1]`` and ``[p2, q2]`` (broadcast).

    The clamped closest-parameter method; parallel (squared sine of the
    angle below :data:`~regn.tolerances.PARALLEL_SIN2`) and zero-length
    segments are handled (the parameter of one is fixed and the other
    clamped, then the first is re-solved for the clamped end).
    """
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = _dot(d1, d1)
    e = _dot(d2, d2)
    f = _dot(d2, r)
    c = _dot(d1, r)
    b = _dot(d1, d2)
    a_ok = a > _TINY
    e_ok = e > _TINY
    a_s = np.where(a_ok, a, 1.0)
    e_s = np.where(e_ok, e, 1.0)
    denom = a * e - b * b
    with np.errstate(invalid="ignore", divide="ignore"):
        gen = denom > PARALLEL_SIN2 * a * e
        s = np.where(gen, np.clip((b * f - c * e) / np.where(gen, denom, 1.0), 0, 1), 0.0)
        t = (b * s + f) / e_s
        s = np.where(t < 0, np.clip(-c / a_s, 0, 1),
                     np.where(t > 1, np.clip((b - c) / a_s, 0, 1), s))
        t = np.clip(t, 0, 1)
        # zero-length cases
        s = np.where(~a_ok, 0.0, np.where(~e_ok, np.clip(-c / a_s, 0, 1), s))
        t = np.where(~e_ok, 0.0, np.where(~a_ok, np.clip(f / e_s, 0, 1), t))
    return np.linalg.norm((p1 + s[..., None] * d1) - (p2 + t[..., None] * d2), axis=-1)


def point_tet_distance(p, tet):
    """Exact distance from ``p`` (P,3) to the closed tetrahedra ``tet`` (P,4,3), pairwise."""
    p = np.asarray(p, np.float64)
    tet = np.asarray(tet, np.float64)
    o = tet[:, 0:1, :]                      # work near the tet: less round-off
    q = p - o[:, 0]
    t = tet - o
    d = np.full(len(p), np.inf)
    for f in FACE_SLOTS:
        d = np.minimum(d, point_triangle_distance(q, t[:, f[0]], t[:, f[1]], t[:, f[2]]))
    return np.where(points_in_tets(q, t), 0.0, d)


def tet_triangle_intersect(tet, tri, tol=0.0):
    """Closed tetrahedron/triangle intersection by separating axes, pair by pair.

    ``tet`` (P,4,3), ``tri`` (P,3,3). Axes: the 4 face normals of the tet, the
    triangle's normal, the 18 tet-edge x triangle-edge crosses, and, for the
    flat triangle's degenerate "side faces", normal x each triangle edge and
    each tet edge x normal. Two convex sets are disjoint exactly when one of
    these axes separates them, so the test is exact; ``tol`` > 0 keeps pairs
    whose gap along every axis is at most ``tol`` (conservative).
    """
    tet = np.asarray(tet, np.float64)
    tri = np.asarray(tri, np.float64)
    o = tet[:, 0:1, :]
    t = tet - o
    r = tri - o
    te = t[:, TET_EDGES[:, 1]] - t[:, TET_EDGES[:, 0]]                    # (P,6,3)
    re = r[:, [1, 2, 0]] - r                                                # (P,3,3)
    tn = np.cross(t[:, FACE_SLOTS[:, 1]] - t[:, FACE_SLOTS[:, 0]],
                  t[:, FACE_SLOTS[:, 2]] - t[:, FACE_SLOTS[:, 0]])          # (P,4,3)
    n = np.cross(re[:, 0], r[:, 2] - r[:, 0])[:, None, :]                   # (P,1,3)
    ee = np.cross(te[:, :, None, :], re[:, None, :, :]).reshape(len(t), 18, 3)
    side = np.cross(n, re)                                                  # (P,3,3)
    ten = np.cross(te, n)                                                   # (P,6,3)
    axes = np.concatenate([tn, n, ee, side, ten], axis=1)                   # (P,32,3)
    pt = np.einsum("pad,pvd->pav", axes, t)
    pr = np.einsum("pad,pvd->pav", axes, r)
    gap = np.maximum(pr.min(axis=2) - pt.max(axis=2), pt.min(axis=2) - pr.max(axis=2))
    if tol > 0:
        sep = gap > tol * np.linalg.norm(axes, axis=2)
    else:
        sep = gap > 0
    return ~sep.any(axis=1)


def tet_triangle_distance(tet, tri):
    """Exact distance between closed tetrahedra and triangles, pair by pair.

    Zero when they intersect; otherwise the least of the vertex/face,
    face/vertex and edge/edge distances (where the closest pair of two disjoint
    convex polytopes always lies).
    """
    tet = np.asarray(tet, np.float64)
    tri = np.asarray(tri, np.float64)
    o = tet[:, 0:1, :]
    t = tet - o
    r = tri - o
    d = np.full(len(t), np.inf)
    for k in range(4):
        d = np.minimum(d, point_triangle_distance(t[:, k], r[:, 0], r[:, 1], r[:, 2]))
    for k in range(3):
        for f in FACE_SLOTS:
            d = np.minimum(d, point_triangle_distance(r[:, k], t[:, f[0]], t[:, f[1]],
                                                      t[:, f[2]]))
    for i, j in TET_EDGES:
        for k in range(3):
            d = np.minimum(d, segment_segment_distance(t[:, i], t[:, j], r[:, k],
                                                       r[:, (k + 1) % 3]))
    return np.where(tet_triangle_intersect(tet, tri), 0.0, d)


def tets_ball_distance(tet_points, centres, radii, max_distance=0.0):
    """(T,) distance from each tetrahedron (T,4,3) to the nearest of the
    closed balls ``(centres (S,3), radii (S,))``: exact where it is at most
    ``max_distance``, ``inf`` beyond (0 when a tetrahedron meets a ball)."""
    tp = np.asarray(tet_points, np.float64)
    c = np.asarray(centres, np.float64).reshape(-1, 3)
    r = np.asarray(radii, np.float64).reshape(-1)
    out = np.full(len(tp), np.inf)
    if len(tp) == 0 or len(c) == 0:
        return out
    tlo, thi = tet_bounds(tp)
    for i, j in aabb_pairs(tlo, thi, c - r[:, None], c + r[:, None], pad=max_distance):
        for s in range(0, len(i), PAIR_CHUNK):
            ii, jj = i[s:s + PAIR_CHUNK], j[s:s + PAIR_CHUNK]
            gap = np.maximum(point_tet_distance(c[jj], tp[ii]) - r[jj], 0.0)
            np.minimum.at(out, ii, gap)
    out[out > max_distance] = np.inf
    return out


def tets_intersect_balls(tet_points, centres, radii, tol=0.0):
    """(T,) bool: does each closed tetrahedron meet any of the closed balls
    (within ``tol``)? Exact: the distance from a centre to the tetrahedron's
    closest point (zero inside) is at most its radius (+ ``tol``)."""
    return tets_ball_distance(tet_points, centres, radii, max_distance=tol) <= tol


def points_near_balls(points, centres, radii, d=0.0):
    """(N,) bool: points (N,3) within ``d`` of any of the closed balls
    ``(centres (S,3), radii (S,))`` (inside counts)."""
    p = np.asarray(points, np.float64)
    c = np.asarray(centres, np.float64).reshape(-1, 3)
    r = np.asarray(radii, np.float64).reshape(-1)
    out = np.zeros(len(p), bool)
    for j, i in box_point_pairs(c - r[:, None] - d, c + r[:, None] + d, p):
        todo = ~out[i]                   # points already inside need no test
        j, i = j[todo], i[todo]
        out[i[np.linalg.norm(p[i] - c[j], axis=1) <= r[j] + d]] = True
    return out


def tets_triangles_distance(tet_points, tri_points, tri_lo, tri_hi, pad):
    """(T,) distance from each tetrahedron (T,4,3) to the nearest of the
    triangles ``tri_points`` (F,3,3) whose bounding box (``tri_lo``/``tri_hi``)
    is within ``pad`` of the tetrahedron's: exact where it is at most ``pad``,
    ``inf`` where no triangle's box is that close."""
    out = np.full(len(tet_points), np.inf)
    if len(tet_points) == 0:
        return out
    tlo, thi = tet_bounds(tet_points)
    for i, j in aabb_pairs(tlo, thi, tri_lo, tri_hi, pad=pad):
        for s in range(0, len(i), PAIR_CHUNK):
            ii, jj = i[s:s + PAIR_CHUNK], j[s:s + PAIR_CHUNK]
            np.minimum.at(out, ii, tet_triangle_distance(tet_points[ii], tri_points[jj]))
    return out


def tets_meet_triangles(tet_points, tri_points, tri_lo, tri_hi):
    """(T,) bool: does each closed tetrahedron meet one of the closed
    triangles ``tri_points`` (bounding boxes ``tri_lo``/``tri_hi``)?"""
    out = np.zeros(len(tet_points), bool)
    if len(tet_points) == 0:
        return out
    tlo, thi = tet_bounds(tet_points)
    for i, j in aabb_pairs(tlo, thi, tri_lo, tri_hi):
        for s in range(0, len(i), PAIR_CHUNK):
            ii, jj = i[s:s + PAIR_CHUNK], j[s:s + PAIR_CHUNK]
            out[ii[tet_triangle_intersect(tet_points[ii], tri_points[jj])]] = True
    return out


def points_triangles_distance(points, tri_points, tri_lo, tri_hi, max_distance=np.inf):
    """(N,) exact distance from each point to the nearest of the triangles
    ``tri_points`` (F,3,3) where it is at most ``max_distance``, else inf."""
    p = np.asarray(points, np.float64)
    out = np.full(len(p), np.inf)
    tp = tri_points
    if not np.isfinite(max_distance):
        from ._closest_kernels import nearest_triangle_distances
        return nearest_triangle_distances(np.ascontiguousarray(p),
                                          np.ascontiguousarray(tp, np.float64))
    for t, i in box_point_pairs(tri_lo - max_distance, tri_hi + max_distance, p):
        for s in range(0, len(t), PAIR_CHUNK):
            tt, ii = t[s:s + PAIR_CHUNK], i[s:s + PAIR_CHUNK]
            d = point_triangle_distance(p[ii], tp[tt, 0], tp[tt, 1], tp[tt, 2])
            np.minimum.at(out, ii, d)
    out[out > max_distance] = np.inf
    return out
