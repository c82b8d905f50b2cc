"""Points against a closed triangle surface: inside by ray parity.

A point is inside a closed surface when a ray from it crosses the surface an
odd number of times. The ray goes up the z axis; crossings are counted in
the xy projection with a consistent tie-break, so a ray through an edge or a
vertex is counted exactly once on every closed surface.
"""

from __future__ import annotations

import numpy as np

from .distance import PAIR_CHUNK
from .pairs import box_point_pairs


def _orient2(ux, uy, vx, vy, qx, qy):
    return (vx - ux) * (qy - uy) - (vy - uy) * (qx - ux)


def _edge_side(ax, ay, bx, by, qx, qy):
    """Side (+1 / -1) of q w.r.t. directed edge a->b, never 0.

    The edge is evaluated in a canonical direction (lexicographically smaller
    end first) so a shared edge gives exactly opposite answers to its two
    triangles, and a point on the edge is nudged by (e, e^2) so it lies on
    exactly one side (ray parity stays consistent).
    """
    swap = (bx < ax) | ((bx == ax) & (by < ay))
    ux = np.where(swap, bx, ax)
    uy = np.where(swap, by, ay)
    vx = np.where(swap, ax, bx)
    vy = np.where(swap, ay, by)
    s = _orient2(ux, uy, vx, vy, qx, qy)
    dy = vy - uy
    dx = vx - ux
    tie = np.where(dy != 0, -np.sign(dy), np.sign(dx))
    s = np.where(s != 0, np.sign(s), tie)
    return np.where(swap, -s, s)


def _crossed_above(a, b, c, q):
    """For triangles ``abc`` and points ``q``, pair by pair: does the ray up
    the z axis from q cross the triangle?"""
    qx, qy, qz = q[:, 0], q[:, 1], q[:, 2]
    s1 = _edge_side(a[:, 0], a[:, 1], b[:, 0], b[:, 1], qx, qy)
    s2 = _edge_side(b[:, 0], b[:, 1], c[:, 0], c[:, 1], qx, qy)
    s3 = _edge_side(c[:, 0], c[:, 1], a[:, 0], a[:, 1], qx, qy)
    hit = (s1 == s2) & (s2 == s3)
    if not hit.any():
        return hit
    # height of the triangle's plane above q
    area = _orient2(a[:, 0], a[:, 1], b[:, 0], b[:, 1], c[:, 0], c[:, 1])
    hit &= area != 0
    with np.errstate(invalid="ignore", divide="ignore"):
        w0 = _orient2(b[:, 0], b[:, 1], c[:, 0], c[:, 1], qx, qy) / area
        w1 = _orient2(c[:, 0], c[:, 1], a[:, 0], a[:, 1], qx, qy) / area
        w2 = 1.0 - w0 - w1
        z = w0 * a[:, 2] + w1 * b[:, 2] + w2 * c[:, 2]
    return hit & (z > qz)


def points_inside_surface(points, tri_points, tri_lo, tri_hi):
    """(N,) bool: points (N,3) inside the closed surface of triangles
    ``tri_points`` (F,3,3) (bounding boxes ``tri_lo``/``tri_hi``), by the
    parity of crossings of a ray going up the z axis."""
    p = np.asarray(points, np.float64)
    out = np.zeros(len(p), bool)
    if len(tri_points) == 0:
        return out
    vlo = tri_lo.min(axis=0)
    vhi = tri_hi.max(axis=0)
    cand = np.nonzero(np.all((p >= vlo) & (p <= vhi), axis=1))[0]
    if len(cand) == 0:
        return out
    q = p[cand]
    # a triangle can be crossed by the rays of the points below it
    blo = np.column_stack([tri_lo[:, :2], np.full(len(tri_points), vlo[2])])
    crossings = np.zeros(len(q), np.int64)
    for t, i in box_point_pairs(blo, tri_hi, q):
        for s in range(0, len(t), PAIR_CHUNK):
            tt, ii = t[s:s + PAIR_CHUNK], i[s:s + PAIR_CHUNK]
            tp = tri_points[tt]
            hit = _crossed_above(tp[:, 0], tp[:, 1], tp[:, 2], q[ii])
            np.add.at(crossings, ii[hit], 1)
    out[cand] = crossings % 2 == 1
    return out
