"""Compiled kernels of the snap's walls (:class:`regn.levels.snap.Walls`):
the level's triangles in the wall hierarchy the wall queries use
(:class:`regn.query.walls.nearest.WallBVH`), descended per point for the
nearest wall within a search distance, and per tetrahedron for its exact
distance to the walls below a limit; the balls beside them, one by one.

A hierarchy, not a grid of cells: a level's tetrahedra range from a
crate's centimetres to kilometres in an open field, and a kilometre
tetrahedron's box covers thousands of cells of a grid fine enough for the
crates (the demo field of rocks: 2 400 cells and 470 triangles' box tests
a tetrahedron). A node is skipped when its box lies as far from the
tetrahedron's box, or as far beyond one of its face planes, as the nearest
wall found so far."""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel, prange
from ..query.walls._nearest_kernels import descend
from ._snap_kernels import _face_planes, _point_tet2, tet_triangle_distance2

#: a node is skipped only when its bound beats the best by this factor
#: more (its box's bound is rounded once more than a triangle's own)
NODE_SLACK = 1.0 + 1e-9
#: tetrahedra a thread takes at a time (its scratch arrays made once)
CHUNK = 64


@kernel(parallel=True)
def nearest_wall_distances(bvh, P, C, R, search):
    """(N,) each point's distance to the nearest triangle of ``bvh`` or ball
    surface (``C``, ``R``; a point inside a ball finds no surface of it)
    nearer than ``search``; inf when none is."""
    n = P.shape[0]
    d = np.full(n, np.inf)
    for p in prange(n):
        px, py, pz = P[p, 0], P[p, 1], P[p, 2]
        stack = np.empty(bvh.depth + 2, dtype=np.int64)
        stack_d = np.empty(bvh.depth + 2, dtype=np.float64)
        best, bk, _, _, _ = descend(bvh.box, bvh.node, bvh.tri, bvh.tbox, bvh.flat, bvh.row,
                                    stack, stack_d, px, py, pz, search * search, -1,
                                    math.nan, math.nan, math.nan)
        if bk >= 0:
            d[p] = math.sqrt(best)
        for b in range(C.shape[0]):
            ux, uy, uz = px - C[b, 0], py - C[b, 1], pz - C[b, 2]
            un = math.sqrt(ux * ux + uy * uy + uz * uz)
            e = un - R[b]
            if un > 0.0 and e >= 0.0 and e * e < best:
                best = e * e
                d[p] = e
    return d


@kernel(borrows=True)
def _box_gap2(box, k, lo, hi):
    """Squared distance between box ``k`` of ``box`` (a node's or a
    triangle's: lo xyz, hi xyz) and the box [``lo``, ``hi``]."""
    s = 0.0
    for ax in range(3):
        g = max(box[k, ax] - hi[ax], lo[ax] - box[k, 3 + ax], 0.0)
        s += g * g
    return s


@kernel(borrows=True)
def _beyond(planes, box, k):
    """How far the whole of node ``k``'s box lies beyond the farthest of
    the tetrahedron's face ``planes`` (outward unit normal, offset); <= 0
    when no plane has it all on its outer side."""
    sep = -np.inf
    for f in range(4):
        v = -planes[f, 3]
        for ax in range(3):
            c = 0.5 * (box[k, ax] + box[k, 3 + ax])
            h = 0.5 * (box[k, 3 + ax] - box[k, ax])
            v += planes[f, ax] * c - abs(planes[f, ax]) * h
        sep = max(sep, v)
    return sep


@kernel(borrows=True)
def _node_bound(box, k, planes, lo, hi, best):
    """A lower bound of the squared distance from the tetrahedron (face
    ``planes``, box [``lo``, ``hi``]) to anything in node ``k``'s box (the
    boxes' gap alone when that rules the node out against ``best``)."""
    bound = _box_gap2(box, k, lo, hi)
    if bound * NODE_SLACK >= best:
        return bound
    sep = _beyond(planes, box, k)
    return max(bound, sep * sep) if sep > 0.0 else bound


@kernel(borrows=True)
def _triangle_may_beat(planes, tri, tbox, t, lo, hi, best):
    """Can triangle ``t`` (of the (K,9) ``tri``, its box ``tbox[t]``) be
    nearer the tetrahedron (face ``planes``, box [``lo``, ``hi``]) than
    ``best`` (squared)? Not when their boxes are that far apart, nor when
    the triangle lies wholly that far beyond one of the face planes."""
    if _box_gap2(tbox, t, lo, hi) >= best:
        return False
    sep = -np.inf
    for f in range(4):
        least = np.inf
        for m in range(3):
            least = min(least, planes[f, 0] * tri[t, 3 * m] + planes[f, 1] * tri[t, 3 * m + 1]
                        + planes[f, 2] * tri[t, 3 * m + 2] - planes[f, 3])
        sep = max(sep, least)
    return not (sep > 0.0 and sep * sep >= best)


@kernel(inline=True)
def _tet_descend(bvh, tp, t, stack, stack_b, tri3, lo, hi, limit):
    """The squared distance from tetrahedron ``tp[t]`` to the nearest
    triangle of ``bvh``, exact below ``limit`` squared (that when none is
    nearer): depth-first over the nodes neither test of the module's
    docstring rules out, each leaf's triangles by :func:`_triangle_may_beat`
    and then exactly."""
    x = tp[t]
    planes = _face_planes(x)
    for ax in range(3):
        lo[ax] = min(min(x[0, ax], x[1, ax]), min(x[2, ax], x[3, ax]))
        hi[ax] = max(max(x[0, ax], x[1, ax]), max(x[2, ax], x[3, ax]))
    best = limit * limit
    stack[0], stack_b[0] = 0, _node_bound(bvh.box, 0, planes, lo, hi, best)
    n = 1
    while n > 0 and best > 0.0:
        n -= 1
        if stack_b[n] * NODE_SLACK >= best:
            continue
        k = stack[n]
        first = bvh.node[k, 0]
        if bvh.node[k, 1] == 0:            # the nearer child pushed last, popped first
            bl = _node_bound(bvh.box, first, planes, lo, hi, best)
            br = _node_bound(bvh.box, first + 1, planes, lo, hi, best)
            near, far, bn, bf = first, first + 1, bl, br
            if br < bl:
                near, far, bn, bf = first + 1, first, br, bl
            if bf * NODE_SLACK < best:
                stack[n], stack_b[n] = far, bf
                n += 1
            if bn * NODE_SLACK < best:
                stack[n], stack_b[n] = near, bn
                n += 1
            continue
        for f in range(first, first + bvh.node[k, 1]):
            if best > 0.0 and _triangle_may_beat(planes, bvh.tri, bvh.tbox, f, lo, hi, best):
                for m in range(9):
                    tri3[m // 3, m % 3] = bvh.tri[f, m]
                best = min(best, tet_triangle_distance2(tp, t, tri3))
    return best


@kernel(parallel=True)
def tet_wall_distances(bvh, tp, C, R, limit):
    """(K,) the distance from each tetrahedron ``tp`` (K,4,3) to the nearest
    triangle of ``bvh`` and ball (``C``, ``R``; a ball's inside counts as
    solid): exact up to rounding below ``limit``, ``limit`` when nothing is
    that near."""
    out = np.full(tp.shape[0], limit)
    n_chunks = (tp.shape[0] + CHUNK - 1) // CHUNK
    for c in prange(n_chunks):
        stack = np.empty(bvh.depth + 2, dtype=np.int64)
        stack_b = np.empty(bvh.depth + 2)
        tri3, lo, hi = np.empty((3, 3)), np.empty(3), np.empty(3)
        for t in range(c * CHUNK, min((c + 1) * CHUNK, tp.shape[0])):
            dist = math.sqrt(_tet_descend(bvh, tp, t, stack, stack_b, tri3, lo, hi, limit))
            x = tp[t]
            for b in range(C.shape[0]):
                e = math.sqrt(_point_tet2(x, C[b, 0], C[b, 1], C[b, 2])) - R[b]
                if e < dist:
                    dist = max(e, 0.0)
            out[t] = dist
    return out
