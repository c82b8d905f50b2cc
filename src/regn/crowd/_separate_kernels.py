"""Compiled separation pass of a crowd step (:mod:`regn.crowd.crowd`): the
positions the agents reach with their new velocities are projected apart,
round after round, until no two spheres overlap (by more than a tolerance).

Each round (:func:`separate_chunk`) reads the positions of the round before
(``src``) through a grid built on them (cells at least as wide as the
largest sum of two radii, so every touching pair is in the 27 cells round
an agent's own) and writes the next ones (``dst``). An agent that overlaps
others is pushed away from each by its share of the overlap (the other's
priority over the sum of both: a half for equal priorities) plus a slack,
the pushes summed (a Jacobi step, so the answer is the same in any chunking
and on any number of threads). Its whole move of the step stays inside its
wall half-spaces and no longer than its safe move (``s.top``): a push that
cannot be kept so is cut back onto the wall planes, else the agent keeps
the position of the round before. Every pair is looked at, not only the
``max_neighbors`` nearest the avoidance step considered.
"""

from __future__ import annotations

import math

from .._jit import kernel
from ._step_kernels import _axis

#: pushes aim this much (of the two radii's sum) beyond touching, so that
#: rounding and later rounds leave no overlap
SLACK = 2e-3
#: rounds of cutting a push back onto violated wall planes
WALL_PASSES = 3


@kernel(borrows=True)
def _push(s, src, i, lo, cell, dims, start, order, over):
    """Agent i's summed push away from the agents it overlaps at ``src``
    (grid lo/cell/dims/start/order over ``src``); over[i] = its largest
    overlap as a fraction of the two radii's sum (0: none)."""
    ax, ay, az = src[i, 0], src[i, 1], src[i, 2]
    ri, pi = s.radius[i], s.priority[i]
    ci = _axis(ax, lo[0], cell, dims[0])
    cj = _axis(ay, lo[1], cell, dims[1])
    ck = _axis(az, lo[2], cell, dims[2])
    dx = dy = dz = 0.0
    worst = 0.0
    for k in range(max(ck - 1, 0), min(ck + 2, dims[2])):
        for j in range(max(cj - 1, 0), min(cj + 2, dims[1])):
            row = (k * dims[1] + j) * dims[0]
            for a in range(max(ci - 1, 0), min(ci + 2, dims[0])):
                c = row + a
                for t in range(start[c], start[c + 1]):
                    o = order[t]
                    if o == i:
                        continue
                    ex, ey, ez = ax - src[o, 0], ay - src[o, 1], az - src[o, 2]
                    rr = ri + s.radius[o]
                    want = rr * (1.0 + SLACK)
                    d2 = ex * ex + ey * ey + ez * ez
                    if not d2 < want * want:
                        continue
                    d = math.sqrt(d2)
                    worst = max(worst, (rr - d) / rr)
                    share = s.priority[o] / (pi + s.priority[o])
                    if d > 0.0:
                        f = (want - d) / d * share
                        dx, dy, dz = dx + f * ex, dy + f * ey, dz + f * ez
                    elif o > i:                      # the same centre: a fixed way apart
                        dx += want * share
                    else:
                        dx -= want * share
    over[i] = worst
    return dx, dy, dz


@kernel(borrows=True)
def _keep_inside(s, i, mx, my, mz):
    """The move (from s.pos[i]) cut back inside agent i's wall planes and
    its safe length s.top[i]; (ok, move)."""
    top = s.top[i]
    ln = math.sqrt(mx * mx + my * my + mz * mz)
    if ln > top:
        f = top / ln
        mx, my, mz = mx * f, my * f, mz * f
    nw = s.wcount[i]
    for _ in range(WALL_PASSES):
        bad = False
        for k in range(nw):
            c = s.wn[i, k, 0] * mx + s.wn[i, k, 1] * my + s.wn[i, k, 2] * mz + s.wgap[i, k]
            if c < 0.0:
                bad = True
                mx, my, mz = mx - c * s.wn[i, k, 0], my - c * s.wn[i, k, 1], \
                    mz - c * s.wn[i, k, 2]
        if not bad:
            break
    ok = mx * mx + my * my + mz * mz <= top * top * (1.0 + 1e-12)
    for k in range(nw):
        if s.wn[i, k, 0] * mx + s.wn[i, k, 1] * my + s.wn[i, k, 2] * mz + s.wgap[i, k] < 0.0:
            ok = False
    return ok, mx, my, mz


@kernel
def separate_chunk(s, src, dst, over, lo, cell, dims, start, order, i0, i1):
    """One round for agents i0 .. i1-1: dst[i] = src[i] pushed apart from
    the agents it overlaps there (see the module docstring); over[i] its
    largest overlap at ``src``."""
    for i in range(i0, i1):
        dx, dy, dz = _push(s, src, i, lo, cell, dims, start, order, over)
        if dx == 0.0 and dy == 0.0 and dz == 0.0:
            dst[i, 0], dst[i, 1], dst[i, 2] = src[i, 0], src[i, 1], src[i, 2]
            continue
        mx = src[i, 0] + dx - s.pos[i, 0]
        my = src[i, 1] + dy - s.pos[i, 1]
        mz = src[i, 2] + dz - s.pos[i, 2]
        ok, mx, my, mz = _keep_inside(s, i, mx, my, mz)
        if ok:
            dst[i, 0], dst[i, 1], dst[i, 2] = s.pos[i, 0] + mx, s.pos[i, 1] + my, \
                s.pos[i, 2] + mz
        else:
            dst[i, 0], dst[i, 1], dst[i, 2] = src[i, 0], src[i, 1], src[i, 2]


@kernel
def worst_overlap(over):
    """The largest entry of ``over`` (0 when empty)."""
    w = 0.0
    for v in over:
        if v > w:
            w = v
    return w
